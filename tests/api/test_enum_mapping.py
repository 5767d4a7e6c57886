"""Every closed set of the contract is a cpsettle.v1 enum, and each maps to the domain's values.

The conversion tables in ``api/mapping.py`` (domain value -> proto number) must cover every
proto value but the zero (``..._UNSPECIFIED``, "not set"), agree in both directions, and the
domain reader's JSON spelling of a member (``domain/reader.py``: ``json_name``) must be the proto
value's name, which is what protobuf's JSON form writes.
"""

from __future__ import annotations

from enum import StrEnum

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.api import mapping
from cpsettle_service.domain.cards.cards import Suit
from cpsettle_service.domain.cards.hands import HandClass, Wheel
from cpsettle_service.domain.cards.rows import Row
from cpsettle_service.domain.naturals.vocabulary import RowClass
from cpsettle_service.domain.profile.model import (
    CapBasis,
    CapOrder,
    FoulPenalty,
    NaturalTie,
    RakeMode,
    RowTie,
    RoyaltyMode,
    VsFoul,
)
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.domain.reading.reader import json_name
from cpsettle_service.profile_files import load_preset, preset_names

TABLES: dict[str, dict[str, int]] = {
    "Row": mapping.ROW,
    "HandClass": mapping.HAND_CLASS,
    "Suit": mapping.SUIT,
    "RoyaltyMode": mapping.ROYALTY_MODE,
    "FoulPenalty": mapping.FOUL_PENALTY,
    "VsFoul": mapping.VS_FOUL,
    "CapBasis": mapping.CAP_BASIS,
    "CapOrder": mapping.CAP_ORDER,
    "RakeMode": mapping.RAKE_MODE,
    "Wheel": mapping.WHEEL,
    "RowTie": mapping.ROW_TIE,
    "NaturalTie": mapping.NATURAL_TIE,
    "RowClass": mapping.ROW_CLASS,
    "PlayerStatus": mapping.PLAYER_STATUS,
    "FoulReason": mapping.FOUL_REASON,
    "PairKind": mapping.PAIR_KIND,
    "LineItemKind": mapping.LINE_ITEM_KIND,
    "Cap": mapping.CAP,
    "SignatureAlgorithm": mapping.SIGNATURE_ALGORITHM,
}
# The domain enums read from JSON: their JSON names are the proto values' names.
READ_FROM_JSON: dict[str, type[StrEnum]] = {
    "Row": Row,
    "HandClass": HandClass,
    "Suit": Suit,
    "RoyaltyMode": RoyaltyMode,
    "FoulPenalty": FoulPenalty,
    "VsFoul": VsFoul,
    "CapBasis": CapBasis,
    "CapOrder": CapOrder,
    "RakeMode": RakeMode,
    "Wheel": Wheel,
    "RowTie": RowTie,
    "NaturalTie": NaturalTie,
    "RowClass": RowClass,
}


def all_enums() -> dict[str, EnumDescriptor]:
    found: dict[str, EnumDescriptor] = {}
    for module in (profile_pb2, pb):
        found.update(module.DESCRIPTOR.enum_types_by_name)
    return found


def test_every_enum_of_the_contract_has_a_table() -> None:
    assert set(all_enums()) == set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_proto_value_maps_and_round_trips(name: str) -> None:
    enum = all_enums()[name]
    table = TABLES[name]
    prefix = mapping.enum_prefix(enum)
    zero = enum.values_by_number[0]
    assert zero.name == prefix + "UNSPECIFIED"
    assert all(v.name.startswith(prefix) for v in enum.values)
    # every value but the zero is some domain value's, and each domain value has its own
    named = {n for n in table.values() if n}
    assert named == {v.number for v in enum.values if v.number}, name
    assert len(named) == len([n for n in table.values() if n])
    back = {n: value for value, n in table.items()}
    assert all(table[back[n]] == n for n in back)


@pytest.mark.parametrize("name", sorted(READ_FROM_JSON))
def test_the_domains_json_names_are_the_proto_value_names(name: str) -> None:
    enum = all_enums()[name]
    for member in READ_FROM_JSON[name]:
        assert enum.values_by_name[json_name(member)].number == TABLES[name][member]


def test_no_closed_set_left_as_a_string() -> None:
    """The string fields left are ids, cards, ranks in card notation, text and digests, and the
    naturals: an open set, since a house may name its own (RULES.md §16.1)."""
    allowed_suffixes = (
        "_id",
        "id",
        "text",
        "name",
        "digest",
        "version",
        "description",
        "source",
        "ref",
        "value",
        "attestation",
        "problems",
        "explanation",
        "public_key",
        # ISO 4217 codes: a list its agency amends, checked against a table
        "currency",
        "preset",
        "cards",
        "front",
        "middle",
        "back",
        "rank",
        "order",
        "winner",
        "first",
        "second",
        "payer",
        "payee",
        "dead_cards",
        # the audit log's origin (a C2SP checkpoint's) and a leaf hash
        "origin",
        "leaf_hash",
    )
    open_sets = {
        "NaturalEntry.natural",
        "Player.declared_natural",
        "PlayerResult.natural",
        "PlayerResult.declared_natural",
        "EvaluateArrangementResponse.naturals",
        "EvaluateArrangementResponse.playable_naturals",
        # ranks in card notation ("8", "J")
        "NaturalDefinition.ranks_at_least",
        "NaturalDefinition.ranks_at_most",
        "NaturalDefinition.ranks_in",
    }
    strings = [
        f"{m.name}.{f.name}"
        for module in (profile_pb2, pb)
        for m in module.DESCRIPTOR.message_types_by_name.values()
        for f in m.fields
        if f.type == FieldDescriptor.TYPE_STRING
        and not f.name.endswith(allowed_suffixes)
        and f"{m.name}.{f.name}" not in open_sets
    ]
    assert strings == []


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_is_the_proto_json_form(name: str) -> None:
    """A preset written by the domain parses as a RuleProfile and comes back the same."""
    data = profile_to_dict(load_preset(name))
    message = json_format.ParseDict(data, profile_pb2.RuleProfile())
    assert mapping.profile_dict_from_proto(message) == json_format.MessageToDict(message)
    again = mapping.profile_to_proto(load_preset(name))
    assert again == message
