"""The profile side of RULES.md §16: house naturals with definitions, the tie options and
the deck, read from the JSON form and the proto, written back, and rejected with a violation
naming the field when they cannot be checked."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cpsettle_service.api.mapping import profile_dict_from_proto, profile_to_proto
from cpsettle_service.domain.cards.cards import parse_cards
from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.naturals.catalogue import Natural
from cpsettle_service.domain.naturals.facts import hand_facts
from cpsettle_service.domain.profile.model import (
    MAX_NATURAL_ENTRIES,
    Deck,
    HouseNatural,
    NaturalTie,
)
from cpsettle_service.domain.profile.parse import (
    EXTENSION_DEFAULTS,
    profile_from_dict,
    profile_to_dict,
)
from cpsettle_service.profile_files import load_preset, preset_names


def base() -> dict[str, Any]:
    return profile_to_dict(load_preset("shisanshui"))


def with_naturals(**changes: object) -> dict[str, Any]:
    d = base()
    d["naturals"].update(changes)
    return d


ONE_RED = {"natural": "ONE_RED", "rank": 14, "units": 24, "definition": {"colourSplit": [12, 1]}}


def violations(data: object) -> list[tuple[str, str]]:
    with pytest.raises(InvalidInput) as e:
        profile_from_dict(data)
    return [(v.field, v.reason) for v in e.value.violations]


def test_presets_write_no_extension_field() -> None:
    """Their JSON form, and so their digest and every settlement id, is as before."""
    for name in preset_names():
        d = profile_to_dict(load_preset(name))
        assert "deck" not in d
        assert {"quadsAsTwoPairs", "equalRank"}.isdisjoint(d["naturals"])
        assert all("definition" not in e for e in d["naturals"]["table"])


def test_house_natural_reads_compiles_and_round_trips_through_the_proto() -> None:
    d = with_naturals(
        table=base()["naturals"]["table"] + [ONE_RED],
        equalRank="COMPARE_CARDS",
        quadsAsTwoPairs=False,
    )
    d["deck"] = {"jokers": 2, "jokerDuplicates": True}
    p = profile_from_dict(d)
    entry = p.naturals.by_natural["ONE_RED"]
    assert isinstance(entry.natural, HouseNatural) and entry.natural.label == "One red"
    assert p.naturals.equal_rank is NaturalTie.COMPARE_CARDS
    assert not p.naturals.quads_as_two_pairs and p.deck == Deck(2, True)
    one_black = hand_facts(parse_cards("2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs Kc Ad"))
    assert p.naturals.predicates["ONE_RED"](one_black)
    assert not p.naturals.predicates[Natural.SIX_PAIRS](
        hand_facts(parse_cards("As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th 2c"))
    )
    written = profile_to_dict(p)
    assert written["naturals"]["equalRank"] == "NATURAL_TIE_COMPARE_CARDS"
    assert profile_from_dict(written) == p
    assert profile_from_dict(profile_dict_from_proto(profile_to_proto(p))) == p


def test_a_catalogue_natural_redefined_by_the_house() -> None:
    table = [
        {
            "natural": "SIX_PAIRS",
            "rank": 1,
            "units": 3,
            "definition": {"rankGroups": [2, 2, 2, 2, 2, 2], "ranksAtLeast": "9"},
        }
    ]
    p = profile_from_dict(with_naturals(table=table))
    low_pairs = hand_facts(parse_cards("As Ah Ks Kh Qs Qh Js Jh Ts Th 2s 2h 3c"))
    assert not p.naturals.predicates["SIX_PAIRS"](low_pairs)
    assert profile_to_dict(p)["naturals"]["table"][0]["definition"]["ranksAtLeast"] == "9"


def test_extension_defaults_are_what_an_absent_field_means() -> None:
    p = load_preset("western")
    assert p.naturals.quads_as_two_pairs is EXTENSION_DEFAULTS["naturals.quadsAsTwoPairs"]
    assert "NATURAL_TIE_" + p.naturals.equal_rank.value == EXTENSION_DEFAULTS["naturals.equalRank"]
    assert p.deck.jokers == EXTENSION_DEFAULTS["deck.jokers"]
    assert p.deck.joker_duplicates is EXTENSION_DEFAULTS["deck.jokerDuplicates"]
    unspecified = with_naturals(equalRank="NATURAL_TIE_UNSPECIFIED")
    assert profile_from_dict(unspecified).naturals.equal_rank is NaturalTie.PUSH


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"table": [{"natural": "ONE_RED", "rank": 1, "units": 2}]},
            "profile.naturals.table[0].natural",
            "needs a definition",
        ),
        (
            {
                "table": [
                    {"natural": "one red", "rank": 1, "units": 2, "definition": {"sameSuit": 9}}
                ]
            },
            "profile.naturals.table[0].natural",
            "capital letters",
        ),
        (
            {"table": [dict(ONE_RED, definition={"sameSuit": 14})]},
            "profile.naturals.table[0].definition.sameSuit",
            "at most 13",
        ),
        (
            {"table": [dict(ONE_RED, definition={"pairs": 6})]},
            "profile.naturals.table[0].definition.pairs",
            "unknown field",
        ),
        (
            {"table": [dict(ONE_RED, definition={})]},
            "profile.naturals.table[0].definition",
            "at least one clause",
        ),
        (
            {"table": [{"natural": "FIVE_OF_A_KIND", "rank": 9, "units": 50}]},
            "profile.naturals.table[0].natural",
            "may duplicate",
        ),
        (
            {"table": [dict(ONE_RED, definition={"rankGroups": [6, 2]})]},
            "profile.naturals.table[0].definition",
            "2 joker(s)",
        ),
        (
            {"table": [dict(ONE_RED, natural=f"N{i}") for i in range(MAX_NATURAL_ENTRIES + 1)]},
            "profile.naturals.table",
            f"at most {MAX_NATURAL_ENTRIES}",
        ),
        (
            {"equalRank": "HIGHEST_CARD"},
            "profile.naturals.equalRank",
            "NATURAL_TIE_PUSH, NATURAL_TIE_COMPARE_CARDS",
        ),
        ({"quadsAsTwoPairs": "yes"}, "profile.naturals.quadsAsTwoPairs", "true or false"),
    ],
)
def test_what_the_vocabulary_cannot_check_is_a_violation(
    change: dict[str, object], field: str, words: str
) -> None:
    found = violations(with_naturals(**change))
    assert any(f == field and words in reason for f, reason in found), found


def test_deck_bounds() -> None:
    d = base()
    d["deck"] = {"jokers": 3, "jokerDuplicates": 1, "wild": True}
    found = dict(violations(d))
    assert "at most 2" in found["profile.deck.jokers"]
    assert "true or false" in found["profile.deck.jokerDuplicates"]
    assert found["profile.deck.wild"] == "unknown field"


def test_five_of_a_kind_with_duplicating_jokers_is_a_valid_natural() -> None:
    d = with_naturals(table=[{"natural": "FIVE_OF_A_KIND", "rank": 9, "units": 50}])
    d["deck"] = {"jokers": 1, "jokerDuplicates": True}
    assert profile_from_dict(copy.deepcopy(d)).naturals.by_natural["FIVE_OF_A_KIND"].units == 50


def test_a_five_of_a_kind_royalty_needs_duplicating_jokers() -> None:
    d = base()
    d["royalties"]["table"].append(
        {"row": "ROW_BACK", "handClass": "HAND_CLASS_FIVE_OF_A_KIND", "units": 30}
    )
    assert any(
        f == "profile.royalties.table[8].handClass" and "may duplicate" in reason
        for f, reason in violations(copy.deepcopy(d))
    )
    d["deck"] = {"jokers": 1, "jokerDuplicates": True}
    assert profile_from_dict(d).royalties.table[-1].units == 30
