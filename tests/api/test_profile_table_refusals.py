"""A house's profile tables and cross-field rules refused through the real server (RULES.md
§15: "an inline profile that is inconsistent"; §16 for jokers and house naturals): every
problem of a table, named at its entry and field, with its reason, and with the
machine-readable code of the error's metadata (``profile``, or ``currency`` for a currency
ISO 4217 does not know). The types and ranges of single fields: ``test_profile_refusals.py``."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.domain.naturals.catalogue import Natural
from tests.support.refusals import refused as refusal_of
from tests.support.tables import table

CATALOGUE = ", ".join(n.value for n in Natural)


def refused(
    client: SettlementClient, preset: str, overrides: dict[str, Any]
) -> tuple[list[tuple[str, str]], str]:
    """Every (field, reason) named, in order, and the violation codes of the metadata."""
    return refusal_of(client.settle, table(preset, profileOverrides=overrides))


def test_every_bad_royalty_entry_is_named_at_its_field(client: SettlementClient) -> None:
    at = "profileOverrides.royalties.table"
    found, codes = refused(
        client,
        "ofc",
        {
            "deck": {"jokers": 1},
            "royalties": {
                "table": [
                    {"row": "ROW_FRONT", "units": 3},  # no class
                    "a pair of aces",
                    {"row": "ROW_BACK", "handClass": "HAND_CLASS_PAIR", "rank": "Z", "units": 1},
                    {"row": "ROW_FRONT", "handClass": "HAND_CLASS_FLUSH", "units": 1},
                    {
                        "row": "ROW_BACK",
                        "handClass": "HAND_CLASS_ROYAL_FLUSH",
                        "rank": "A",
                        "units": 1,
                    },
                    {"row": "ROW_BACK", "handClass": "HAND_CLASS_FIVE_OF_A_KIND", "units": 40},
                    {"row": "ROW_MIDDLE", "handClass": "HAND_CLASS_STRAIGHT", "units": 4},
                    {"row": "ROW_MIDDLE", "handClass": "HAND_CLASS_STRAIGHT", "units": 5},
                ]
            },
        },
    )
    # (a string in the table: its fields are named as missing too; left out here)
    assert [(f, r) for f, r in found if not f.startswith(f"{at}[1].")] == [
        (f"{at}[0].handClass", "is required"),
        (f"{at}[1]", "must be an object, got a string"),
        (f"{at}[2].rank", "must be a rank (2-9, T, J, Q, K, A); got 'Z'"),
        (f"{at}[3].handClass", "a FRONT row cannot make FLUSH"),
        (f"{at}[4].rank", "a royal flush has no rank to narrow"),
        (
            f"{at}[5].handClass",
            "five of a kind needs jokers that may duplicate a card "
            "(deck.jokers, deck.jokerDuplicates): no row can make it",
        ),
        (f"{at}[7]", f"duplicates the royalty entry at {at}[6]"),
    ]
    assert codes == "profile"


def test_every_bad_natural_entry_is_named_at_its_field(client: SettlementClient) -> None:
    """A house natural needs a definition; a natural of five of a rank needs jokers that may
    duplicate a card; an entry may hold a null definition (proto3 JSON: none, the
    catalogue's)."""
    at = "profileOverrides.naturals.table"
    found, codes = refused(
        client,
        "shisanshui",
        {
            "deck": {"jokers": 1},
            "naturals": {
                "table": [
                    {"rank": 1, "units": 2},  # which natural?
                    {"natural": "one red", "rank": 1, "units": 2, "definition": {"sameSuit": 9}},
                    {"natural": "ONE_RED", "rank": 1, "units": 2},
                    {"natural": "FIVE_OF_A_KIND", "rank": 9, "units": 50},
                    {"natural": "DRAGON", "rank": 9, "units": -1},
                    {"natural": "DRAGON", "rank": 9, "units": 13, "definition": None},
                    {"natural": "DRAGON", "rank": 8, "units": 13},
                ]
            },
        },
    )
    name_rule = (
        f"must be a catalogue natural ({CATALOGUE}) or a house natural's name: capital "
        "letters, digits and _, at most 40, starting with a letter; got 'one red'"
    )
    assert found == [
        (f"{at}[0].natural", "is required"),
        (f"{at}[1].natural", name_rule[:199] + "…"),  # clipped in the error's detail
        (
            f"{at}[2].natural",
            "'ONE_RED' is not in the catalogue: a house natural needs a definition",
        ),
        (
            f"{at}[3].natural",
            "a rank group of 5 needs 1 joker(s) that may duplicate a card "
            "(deck.jokers, deck.jokerDuplicates): no hand can make it",
        ),
        (f"{at}[4].units", "must be at least 0, got -1"),
        (f"{at}[6]", f"duplicates the natural at {at}[5]"),
    ]
    assert codes == "profile"


def test_a_suit_order_lists_each_suit_once_and_a_currency_is_iso_4217(
    client: SettlementClient,
) -> None:
    at = "profileOverrides"
    assert refused(
        client,
        "western",
        {
            "ranking": {"suitOrder": ["SUIT_SPADE", "SUIT_SPADE", "SUIT_CLUB", "SUIT_DIAMOND"]},
            "money": {"currency": "eur"},
        },
    ) == (
        [
            (
                f"{at}.money.currency",
                'must be three upper-case letters (ISO 4217, e.g. EUR), got "eur"',
            ),
            (f"{at}.ranking.suitOrder", "must list each of the four suits once"),
        ],
        "currency,profile",
    )
    assert refused(
        client,
        "western",
        {
            "ranking": {"suitOrder": ["SUIT_SPADE", "SUIT_HEART", "SUIT_CLUB", "SUIT_STAR"]},
            "money": {"currency": "ABC"},
        },
    ) == (
        [
            (f"{at}.money.currency", 'is not an active ISO 4217 currency code: "ABC"'),
            (
                f"{at}.ranking.suitOrder[3]",
                "got 'SUIT_STAR', which is not one of SUIT_SPADE, "
                "SUIT_HEART, SUIT_DIAMOND, SUIT_CLUB",
            ),
            (f"{at}.ranking.suitOrder", "must list each of the four suits once"),
        ],
        "currency,profile",
    )
    assert refused(
        client,
        "western",
        {
            "ranking": {
                "suitOrder": ["SUIT_SPADE", "SUIT_HEART", "SUIT_CLUB", "SUIT_DIAMOND", "SUIT_SPADE"]
            },
        },
    ) == ([(f"{at}.ranking.suitOrder", "holds 5 entries; at most 4 can differ")], "profile")


def test_fantasyland_thresholds_are_front_hands(client: SettlementClient) -> None:
    at = "profileOverrides.fantasyland"
    assert refused(
        client,
        "ofc",
        {
            "fantasyland": {
                "progressive": [
                    {"handClass": "HAND_CLASS_FLUSH", "cards": 15},
                    {"rank": "Q", "cards": 99},
                    {"handClass": "HAND_CLASS_PAIR", "rank": "Z", "cards": 15},
                ],
                "entry": {"handClass": "HAND_CLASS_STRAIGHT"},
                "stay": {"front": {"handClass": "HAND_CLASS_PAIR", "rank": "1"}},
            }
        },
    ) == (
        [
            (f"{at}.progressive[0].handClass", "a FRONT row cannot make FLUSH"),
            (f"{at}.progressive[1].handClass", "is required"),
            (f"{at}.progressive[1].cards", "must be at most 52, got 99"),
            (f"{at}.progressive[2].rank", "must be a rank (2-9, T, J, Q, K, A); got 'Z'"),
            (f"{at}.stay.front.rank", "must be a rank (2-9, T, J, Q, K, A); got '1'"),
            (f"{at}.entry.handClass", "a FRONT row cannot make STRAIGHT"),
        ],
        "profile",
    )


def test_a_table_longer_than_the_rules_allow_is_refused_before_its_entries_are_read(
    client: SettlementClient,
) -> None:
    """DECISIONS.md decision 23: 324 royalty entries, 42 progressive entries at most."""
    royalty = {"row": "ROW_BACK", "handClass": "HAND_CLASS_FLUSH", "units": 1}
    progressive = {"handClass": "HAND_CLASS_PAIR", "rank": "Q", "cards": 15}
    assert refused(
        client,
        "ofc",
        {
            "royalties": {"table": [royalty] * 325},
            "fantasyland": {"progressive": [progressive] * 43},
        },
    ) == (
        [
            ("profileOverrides.royalties.table", "holds 325 entries; at most 324 can differ"),
            ("profileOverrides.fantasyland.progressive", "holds 43 entries; at most 42 can differ"),
        ],
        "profile",
    )


def test_an_inline_profile_must_be_named(client: SettlementClient) -> None:
    inline = json_format.MessageToDict(client.get_profile("western").profile)
    for unnamed in ({k: v for k, v in inline.items() if k != "name"}, {**inline, "name": ""}):
        request = table("western")
        del request["preset"]
        with pytest.raises(SettlementError) as e:
            client.settle({**request, "profile": unnamed})
        assert [(v.field, v.reason) for v in e.value.violations] == [
            ("profile.name", "is required")
        ]
        assert e.value.metadata["violationCodes"] == "profile"


def test_enums_are_read_by_their_json_names_and_a_nested_problem_is_named_once(
    client: SettlementClient,
) -> None:
    """RULES.md §17: the JSON form writes an enum's proto name (``ROYALTY_MODE_ALWAYS``); only
    ``naturals.equalRank`` (§16.2) also reads the short spelling."""
    at = "profileOverrides"
    modes = (
        "ROYALTY_MODE_NONE, ROYALTY_MODE_ALWAYS, ROYALTY_MODE_ON_WIN_ADDED, "
        "ROYALTY_MODE_ON_WIN_REPLACES"
    )
    assert refused(
        client,
        "western",
        {
            "scoring": {"homeRun": {"multiplier": 0}},
            "royalties": {"mode": "ALWAYS"},
            "ranking": {"rowTie": "PUSH"},
            "naturals": {"equalRank": "COMPARE_CARDS"},
        },
    ) == (
        [
            (f"{at}.scoring.homeRun.multiplier", "must be at least 1, got 0"),
            (f"{at}.royalties.mode", f"got 'ALWAYS', which is not one of {modes}"),
            (
                f"{at}.ranking.rowTie",
                "got 'PUSH', which is not one of ROW_TIE_PUSH, ROW_TIE_SUIT_OF_HIGHEST_CARD",
            ),
        ],
        "profile",
    )
