"""A bad profile or bad overrides, through the real server and our own client: what a casino's
integrator meets first. Every problem comes back at once as an INVALID_ARGUMENT field violation
with its path and a sentence, and the ErrorInfo names the kind (``profile``).

``profileOverrides`` is a ``google.protobuf.Struct``, so anything JSON can hold arrives there:
numbers as doubles (``2.0`` is the integer 2), strings, booleans, null, lists and objects. An
inline ``profile`` is a typed message, so its problems are ranges, lengths and enum numbers.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cpsettle.v1 import profile_pb2
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset
from tests.support.tables import table

OVERRIDES = "profileOverrides"


def refusal(client: SettlementClient, request: Any) -> list[tuple[str, str]]:
    """The (field, reason) pairs of a refused Settle, in order; checks the status says so."""
    with pytest.raises(SettlementError) as refused:
        client.settle(request)
    e = refused.value
    assert e.code is grpc.StatusCode.INVALID_ARGUMENT and e.reason == "INVALID_REQUEST"
    found = [(v.field, v.reason) for v in e.violations]
    assert e.metadata == {"violationCodes": "profile", "violationCount": str(len(found))}
    return found


def overridden(client: SettlementClient, overrides: dict[str, Any]) -> list[tuple[str, str]]:
    return refusal(client, table("western", players="AB", profileOverrides=overrides))


def digest(client: SettlementClient, overrides: dict[str, Any], preset: str = "western") -> str:
    request = table(preset, players="AB", profileOverrides=overrides)
    return client.settle(request).settlement.profile.digest


def test_values_of_the_wrong_type_are_each_named_where_they_are(client: SettlementClient) -> None:
    found = overridden(
        client,
        {
            "name": 7,
            "version": True,
            "scoring": {
                "rowUnit": "two",
                "majorityBonus": True,
                "majorityBonusOnScoop": "yes",
                "scoopMultiplier": 2.5,
                "homeRun": [4],
            },
            "foul": [1],
            "caps": "on",
        },
    )
    assert found == [
        ("profileOverrides.name", "must be a string, got a number"),  # once: no "is required"
        ("profileOverrides.version", "must be a string, got a boolean"),
        ("profileOverrides.scoring.homeRun", "must be an object, got a list"),
        ("profileOverrides.scoring.rowUnit", "must be an integer, got a string"),
        ("profileOverrides.scoring.majorityBonus", "must be an integer, got a boolean"),
        ("profileOverrides.scoring.majorityBonusOnScoop", "must be true or false, got a string"),
        ("profileOverrides.scoring.scoopMultiplier", "must be an integer, got a number"),
        ("profileOverrides.foul", "must be an object, got a list"),
        ("profileOverrides.caps", "must be an object, got a string"),
    ]


def test_lists_objects_and_unknown_keys_in_tables(client: SettlementClient) -> None:
    found = overridden(
        client,
        {
            "royalties": {
                "table": [
                    5,
                    {
                        "row": "ROW_FRONT",
                        "handClass": "HAND_CLASS_PAIR",
                        "rank": "6",
                        "units": 1,
                        "bonus": 1,
                    },
                    {"row": "ROW_FRONT", "handClass": "HAND_CLASS_TWO_PAIRS", "units": 1},
                ]
            },
            "ranking": {"suitOrder": "SUIT_SPADE", "wheel": {"low": True}},
            "fantasyland": {"entry": 3, "stay": {"front": False}, "progressive": {"cards": 15}},
            "naturals": {
                "table": [
                    {
                        "natural": "SIX_PAIRS",
                        "rank": 1,
                        "units": 3,
                        "definition": {"rankGroups": [2, None]},
                    }
                ]
            },
            "surrender": {"units": 3, "allowed": True, "surrenders": 1},
        },
    )
    assert found == [
        ("profileOverrides.royalties.table[0]", "must be an object, got a number"),
        ("profileOverrides.royalties.table[0].row", "is required"),
        ("profileOverrides.royalties.table[0].handClass", "is required"),
        ("profileOverrides.royalties.table[0].units", "is required"),
        ("profileOverrides.royalties.table[1].bonus", "unknown field"),
        # a reason is clipped to 200 characters on the wire
        (
            "profileOverrides.royalties.table[2].handClass",
            "got 'HAND_CLASS_TWO_PAIRS', which is "
            "not one of HAND_CLASS_HIGH_CARD, HAND_CLASS_PAIR, HAND_CLASS_TWO_PAIR, "
            "HAND_CLASS_THREE_OF_A_KIND, HAND_CLASS_STRAIGHT, HAND_CLASS_FLUSH, "
            "HAND_CLASS_FULL_HOUSE, H…",
        ),
        (
            "profileOverrides.naturals.table[0].definition.rankGroups[1]",
            "must be an integer, got null",
        ),
        ("profileOverrides.surrender.surrenders", "unknown field"),
        (
            "profileOverrides.ranking.wheel",
            "got {'low': True}, which is not one of WHEEL_LOWEST, WHEEL_SECOND_HIGHEST",
        ),
        ("profileOverrides.ranking.suitOrder", "must be a list, got a string"),
        ("profileOverrides.fantasyland.entry", "must be an object, got a number"),
        ("profileOverrides.fantasyland.progressive", "must be a list, got an object"),
        ("profileOverrides.fantasyland.stay.front", "must be an object, got a boolean"),
    ]


def test_values_out_of_range_and_names_not_in_a_set(client: SettlementClient) -> None:
    found = overridden(
        client,
        {
            "name": "n" * 65,
            "description": "d" * 2001,
            "scoring": {"rowUnit": "-3", "scoopMultiplier": "101", "scoopBonus": "7"},
            "money": {"currency": "EURO", "unitValue": 0},
            "naturals": {"vsFoul": "NOPE", "equalRank": "SPLIT"},
            "caps": {"basis": "HAND_START"},
        },
    )
    assert found == [
        ("profileOverrides.name", "must be at most 64 characters"),  # once: no "is required"
        ("profileOverrides.description", "must be at most 2000 characters"),
        ("profileOverrides.scoring.rowUnit", "must be at least 0, got -3"),
        ("profileOverrides.scoring.scoopMultiplier", "must be at most 100, got 101"),
        (
            "profileOverrides.naturals.vsFoul",
            "got 'NOPE', which is not one of "
            "VS_FOUL_GREATER_OF_NATURAL_AND_FOUL, VS_FOUL_NATURAL_UNITS",
        ),
        # the spec's short spelling is read for this one, so the full name is what is quoted
        (
            "profileOverrides.naturals.equalRank",
            "got 'NATURAL_TIE_SPLIT', which is not one of "
            "NATURAL_TIE_PUSH, NATURAL_TIE_COMPARE_CARDS",
        ),
        ("profileOverrides.money.unitValue", "must be at least 1, got 0"),
        ("profileOverrides.money.currency", "must be at most 3 characters"),
        (
            "profileOverrides.caps.basis",
            "got 'HAND_START', which is not one of CAP_BASIS_HAND_START, CAP_BASIS_CURRENT_STACK",
        ),
    ]


@pytest.mark.parametrize(
    "text", ["--1", "²", "１２", "X1", "-X1", "1e3", "0x10", " 3", "-", "9" * 641, "9" * 4301]
)
def test_a_string_that_is_not_an_integer_is_refused_not_crashed(
    client: SettlementClient, text: str
) -> None:
    # "²" passes str.isdigit and "--1" does once its minus signs are stripped: each made int()
    # raise and the call fail INTERNAL, as did more digits than int() converts (4300 by default,
    # 640 at the lowest it can be set); "１２" (full-width digits) int() read as 12: JSON's digits
    # are ASCII, so it is refused now
    assert overridden(client, {"scoring": {"rowUnit": text}}) == [
        ("profileOverrides.scoring.rowUnit", "must be an integer, got a string")
    ]


def test_integers_in_text_and_in_doubles_are_read_as_integers(client: SettlementClient) -> None:
    # protobuf's JSON form writes 64-bit integers as strings; a Struct carries numbers as doubles
    want = digest(client, {"scoring": {"rowUnit": 3}, "rake": {"perPlayerFee": 5}})
    assert digest(client, {"scoring": {"rowUnit": "3"}, "rake": {"perPlayerFee": "5"}}) == want
    assert digest(client, {"scoring": {"rowUnit": 3.0}, "rake": {"perPlayerFee": 5.0}}) == want
    assert want != digest(client, {})
    assert overridden(client, {"rake": {"perPlayerFee": "-5"}}) == [
        ("profileOverrides.rake.perPlayerFee", "must be at least 0, got -5")
    ]


@pytest.mark.parametrize(
    ("preset", "field", "value", "default"),
    [
        ("western", "foul.penalty", "FOUL_PENALTY_UNSPECIFIED", "FOUL_PENALTY_SCOOPED"),
        ("western", "foul.penalty", "", "FOUL_PENALTY_SCOOPED"),
        ("eastern", "royalties.mode", "ROYALTY_MODE_UNSPECIFIED", "ROYALTY_MODE_NONE"),
        ("western", "naturals.equalRank", "NATURAL_TIE_UNSPECIFIED", "NATURAL_TIE_PUSH"),
        ("western", "naturals.equalRank", "", "NATURAL_TIE_PUSH"),
    ],
)
def test_an_empty_or_unspecified_enum_means_its_default(
    client: SettlementClient, preset: str, field: str, value: str, default: str
) -> None:
    part, key = field.split(".")
    assert digest(client, {part: {key: value}}, preset) == digest(
        client, {part: {key: default}}, preset
    )
    if profile_to_dict(load_preset(preset))[part].get(key, default) != default:
        # the default takes the preset's value's place
        assert digest(client, {part: {key: value}}, preset) != digest(client, {}, preset)


def test_the_short_spelling_of_a_natural_tie(client: SettlementClient) -> None:
    # RULES.md spells it COMPARE_CARDS; the wire's name is NATURAL_TIE_COMPARE_CARDS
    compare = digest(client, {"naturals": {"equalRank": "COMPARE_CARDS"}})
    assert compare == digest(client, {"naturals": {"equalRank": "NATURAL_TIE_COMPARE_CARDS"}})
    assert compare != digest(client, {"naturals": {"equalRank": "PUSH"}})
    assert digest(client, {"naturals": {"equalRank": "PUSH"}}) == digest(client, {})


def test_null_leaves_a_value_at_its_default(client: SettlementClient) -> None:
    # a Struct's null reads as the field left out: the schema's default, not the preset's
    assert digest(client, {"scoring": {"rowUnit": None, "homeRun": None}}) == digest(
        client, {"scoring": {"rowUnit": 1, "homeRun": {"minPlayers": 4, "multiplier": 1}}}
    )


def test_an_inline_profile_out_of_range(client: SettlementClient) -> None:
    profile = profile_to_dict(load_preset("western"))
    profile["name"] = "house-" + "x" * 60
    profile["scoring"]["rowUnit"] = 1_000_001
    profile["surrender"]["units"] = -2
    profile["rake"]["commissionBps"] = 10_001
    request = request_from_json(table("", players="AB"))
    request.preset = ""
    request.profile.CopyFrom(request_from_json({"profile": profile}).profile)
    request.profile.caps.basis = profile_pb2.CapBasis.ValueType(7)  # a number with no name
    assert refusal(client, request) == [
        ("profile.name", "must be at most 64 characters"),  # once: no "is required"
        ("profile.scoring.rowUnit", "must be at most 1000000, got 1000001"),
        ("profile.surrender.units", "must be at least 0, got -2"),
        (
            "profile.caps.basis",
            "got 7, which is not one of CAP_BASIS_HAND_START, CAP_BASIS_CURRENT_STACK",
        ),
        ("profile.rake.commissionBps", "must be at most 10000, got 10001"),
    ]


def test_values_at_their_bounds_are_accepted(client: SettlementClient) -> None:
    request = table(
        "western",
        players="AB",
        profileOverrides={
            "name": "n" * 64,
            "description": "d" * 2000,
            "scoring": {"rowUnit": 0, "scoopMultiplier": 100, "majorityBonus": "1000000"},
            "rake": {"commissionBps": 10_000, "commissionCap": str(10**12)},
        },
    )
    s = client.settle(request).settlement
    assert s.profile.name == "n" * 64 and s.profile.source == "builtin+overrides"
