"""House naturals' definitions (RULES.md §16.1) as a casino sends them in a profile, through the
real server and our own client: a clause sent as null is a clause left out, whichever it is,
and every definition the vocabulary cannot check is refused naming each problem, with the
profile's violation code."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError

DRAGON = "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"
CLAUSES = [
    "rankGroups",
    "distinctRanks",
    "sameSuit",
    "sameColour",
    "colourSplit",
    "ranksAtLeast",
    "ranksAtMost",
    "ranksIn",
    "rows",
]


def evaluate(
    client: SettlementClient, table: list[dict[str, Any]], cards: str = DRAGON
) -> pb.EvaluateArrangementResponse:
    return client.evaluate(
        {
            "preset": "shisanshui",
            "cards": cards.split(),
            "profileOverrides": {"naturals": {"table": table}},
        }
    )


def entry(definition: dict[str, Any], name: str = "HOUSE") -> dict[str, Any]:
    return {"natural": name, "rank": 1, "units": 4, "definition": definition}


@pytest.mark.parametrize("null", CLAUSES)
def test_a_clause_sent_as_null_is_left_out(client: SettlementClient, null: str) -> None:
    """Thirteen ranks, with one other clause null: read as the one clause (not "unknown field")."""
    kept = "sameSuit" if null == "distinctRanks" else "distinctRanks"
    definition = {kept: 13 if kept == "distinctRanks" else 1, null: None}
    assert list(evaluate(client, [entry(definition)]).playable_naturals) == ["HOUSE"]


RANK = "must be a rank (2-9, T, J, Q, K, A); got "
# Each definition with what the server names for it, under profileOverrides.naturals.table[i].
REFUSED: list[tuple[dict[str, Any], list[tuple[str, str]]]] = [
    (
        {"rankGroups": [1] * 14},
        [
            ("definition.rankGroups", "may list at most 13 groups"),
            ("definition.rankGroups", "the groups need 14 cards; a hand has 13"),
        ],
    ),
    (
        {"rankGroups": [4, 4, 4, 2]},
        [("definition.rankGroups", "the groups need 14 cards; a hand has 13")],
    ),
    (
        {"rankGroups": [0, 7]},
        [
            ("definition.rankGroups[0]", "a group has 1 to 6 cards, got 0"),
            ("definition.rankGroups[1]", "a group has 1 to 6 cards, got 7"),
        ],
    ),
    ({"rankGroups": [2, "2"]}, [("definition.rankGroups[1]", "must be an integer, got a string")]),
    (
        {"colourSplit": ["12", 1]},
        [("definition.colourSplit[0]", "must be an integer, got a string")],
    ),
    (
        {"colourSplit": [14, -1]},
        [("definition.colourSplit", "must be two numbers of cards that sum to 13, got [14, -1]")],
    ),
    (
        {"colourSplit": [6, 6]},
        [("definition.colourSplit", "must be two numbers of cards that sum to 13, got [6, 6]")],
    ),
    (
        {"sameSuit": 14, "sameColour": 0, "distinctRanks": 1.5},
        [
            ("definition.distinctRanks", "must be an integer, got a number"),
            ("definition.sameSuit", "must be at most 13, got 14"),
            ("definition.sameColour", "must be at least 1, got 0"),
        ],
    ),
    (
        {"ranksAtLeast": "Z", "ranksAtMost": "1"},
        [("definition.ranksAtLeast", RANK + "'Z'"), ("definition.ranksAtMost", RANK + "'1'")],
    ),
    (
        {"ranksAtLeast": "q", "ranksAtMost": "10"},
        [("definition.ranksAtMost", "is below ranksAtLeast (Q): no hand can make it")],
    ),
    ({"ranksIn": ["A", "1", "a"]}, [("definition.ranksIn[1]", RANK + "'1'")]),
    ({"ranksIn": ["A", "a"]}, [("definition.ranksIn", "lists a rank twice")]),
    ({"ranksIn": []}, [("definition.ranksIn", "must list at least one rank")]),
    (
        {"rows": {"front": "FULL_HOUSE", "back": "FLUSH", "side": "FLUSH"}},
        [
            (
                "definition.rows.front",
                "must be one of STRAIGHT, FLUSH, STRAIGHT_FLUSH; got 'FULL_HOUSE'",
            ),
            ("definition.rows.side", "unknown field"),
        ],
    ),
    # a row of a class outside the vocabulary is all there is to say (not "name a row" too)
    (
        {"rows": {"front": "FULL_HOUSE"}},
        [
            (
                "definition.rows.front",
                "must be one of STRAIGHT, FLUSH, STRAIGHT_FLUSH; got 'FULL_HOUSE'",
            )
        ],
    ),
    ({"rows": "FLUSH"}, [("definition.rows", "must be an object, got a string")]),
    (
        {"rows": {"middle": "ROW_CLASS_UNSPECIFIED", "back": ""}},
        [("definition.rows", "must name the class of at least one row")],
    ),
    ({"pairs": 6}, [("definition.pairs", "unknown field")]),
    (
        {},
        [
            (
                "definition",
                "must hold at least one clause (rankGroups, distinctRanks, sameSuit, "
                "sameColour, colourSplit, ranksAtLeast, ranksAtMost, ranksIn, rows)",
            )
        ],
    ),
]


# Lists whose entries are each judged, whatever the others are (a reply names 30 problems at
# most, so these are a second table).
EVERY_ENTRY: list[tuple[dict[str, Any], list[tuple[str, str]]]] = [
    # the string does not hide the 0 and the 7
    (
        {"rankGroups": [0, 7, "2"]},
        [
            ("definition.rankGroups[0]", "a group has 1 to 6 cards, got 0"),
            ("definition.rankGroups[1]", "a group has 1 to 6 cards, got 7"),
            ("definition.rankGroups[2]", "must be an integer, got a string"),
        ],
    ),
    # fourteen entries are too many, whatever they are
    (
        {"rankGroups": [1] * 13 + ["1"]},
        [
            ("definition.rankGroups[13]", "must be an integer, got a string"),
            ("definition.rankGroups", "may list at most 13 groups"),
        ],
    ),
    (
        {"colourSplit": ["6", 7.5]},
        [
            ("definition.colourSplit[0]", "must be an integer, got a string"),
            ("definition.colourSplit[1]", "must be an integer, got a number"),
        ],
    ),
    ({"rankGroups": "4 4 4 1"}, [("definition.rankGroups", "must be a list, got a string")]),
    # JSON's null and booleans are quoted as JSON writes them, a number as written
    (
        {"ranksIn": [None, True, False, 5]},
        [
            ("definition.ranksIn[0]", RANK + "null"),
            ("definition.ranksIn[1]", RANK + "true"),
            ("definition.ranksIn[2]", RANK + "false"),
            ("definition.ranksIn[3]", RANK + "5"),
        ],
    ),
]


@pytest.mark.parametrize("cases", [REFUSED, EVERY_ENTRY], ids=["definitions", "list-entries"])
def test_every_definition_the_vocabulary_cannot_check_is_named(
    client: SettlementClient, cases: list[tuple[dict[str, Any], list[tuple[str, str]]]]
) -> None:
    table = [entry(definition, f"HOUSE_{i}") for i, (definition, _) in enumerate(cases)]
    with pytest.raises(SettlementError) as e:
        evaluate(client, table)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    want = [
        (f"profileOverrides.naturals.table[{i}].{field}", reason)
        for i, (_, named) in enumerate(cases)
        for field, reason in named
    ]
    assert [(v.field, v.reason) for v in e.value.violations] == want
    assert e.value.metadata["violationCodes"] == "profile"


def test_a_definition_at_its_bounds_is_read(client: SettlementClient) -> None:
    """Thirteen groups of one card, all of one colour written as [0, 13], every rank from 2 to
    the ace, the lowest rank equal to the highest: each is read (the dragon makes all but one
    colour and the tens)."""
    table = [
        entry({"rankGroups": [1] * 13}, "SINGLES"),
        entry({"colourSplit": [0, 13]}, "ONE_COLOUR_SPLIT"),
        entry({"ranksAtLeast": "2", "ranksAtMost": "A", "sameSuit": 4}, "ANY_RANK"),
        # not below: read (though four tens are all the tens 13 cards can hold)
        entry({"ranksAtLeast": "T", "ranksAtMost": "T"}, "ONLY_TENS"),
    ]
    assert list(evaluate(client, table).playable_naturals) == ["SINGLES", "ANY_RANK"]
    spades = "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"
    assert list(evaluate(client, table, spades).playable_naturals) == [
        "SINGLES",
        "ONE_COLOUR_SPLIT",
        "ANY_RANK",
    ]
