"""EvaluateArrangement's refusals and its rows under a profile that settles naturals without a
declaration, through the real server and our own client: what domain/evaluation.py's
``evaluate_hand`` names (field, reason and codes) for bad loose cards, a missing row, a card
repeated and jokers past the deck.

Written to kill the mutants the mutation run found alive (docs/MUTATION.md).
"""

from __future__ import annotations

from typing import Any

from cpsettle_client.client import SettlementClient
from tests.support.refusals import refused as refusal_of
from tests.support.tables import ARRANGEMENTS

NOT_A_CARD = (
    "is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), suits s h d c (or ♠ ♥ ♦ ♣)"
)
JOKER_1 = {"deck": {"jokers": 1}}


def refused(client: SettlementClient, request: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:
    return refusal_of(client.evaluate, request)


def cards13(name: str = "B") -> list[str]:
    a = ARRANGEMENTS[name]
    return [*a["front"], *a["middle"], *a["back"]]


def test_bad_loose_cards_are_each_named(client: SettlementClient) -> None:
    cards = cards13()
    loose = [*cards[:10], "Zz", cards[0]]  # 12: one not a card, one repeated
    assert refused(client, {"preset": "western", "cards": loose}) == (
        [
            ("cards", "must hold 13 cards, got 12"),
            ("cards[10]", f"'Zz' {NOT_A_CARD}"),
            ("cards[11]", f"{cards[0]} is already used at cards[0]: one deck per table"),
        ],
        "duplicate_card,malformed_card,row_size",
    )


def test_an_empty_row_and_a_repeated_card_are_named(client: SettlementClient) -> None:
    a = ARRANGEMENTS["B"]
    middle = [a["front"][1], *a["middle"][1:]]
    assert refused(
        client, {"preset": "western", "arrangement": {"front": a["front"], "middle": middle}}
    ) == (
        [
            (
                "arrangement.middle[0]",
                f"{a['front'][1]} is already used at arrangement.front[1]: one deck per table",
            ),
            ("arrangement.back", "must hold 5 cards, got 0"),
        ],
        "duplicate_card,row_size",
    )


def test_jokers_past_the_deck_are_named_where_they_are(client: SettlementClient) -> None:
    a = ARRANGEMENTS["B"]
    front = ["Xj", "Xj", a["front"][2]]
    arranged = {
        "preset": "ofc",
        "profileOverrides": JOKER_1,
        "arrangement": {"front": front, "middle": a["middle"], "back": a["back"]},
    }
    want = "holds 2 jokers; the profile's deck has 1 (deck.jokers)"
    assert refused(client, arranged) == ([("arrangement", want)], "duplicate_card")
    loose = {
        "preset": "ofc",
        "profileOverrides": JOKER_1,
        "cards": [*front, *a["middle"], *a["back"]],
    }
    assert refused(client, loose) == ([("cards", want)], "duplicate_card")


def test_rows_are_judged_as_arranged_where_naturals_need_no_declaration(
    client: SettlementClient,
) -> None:
    """Six pairs arranged as rows (front 2-2-3, middle 3-4-4-5-5, back 6-6-7-7-8): under a
    profile that settles naturals without a declaration, the evaluation still gives the rows
    as arranged (no natural is settled before the reveal), and names the natural as playable."""
    arrangement = {
        "front": ["2s", "2h", "3s"],
        "middle": ["3h", "4s", "4h", "5s", "5h"],
        "back": ["6s", "6h", "7s", "7h", "8s"],
    }
    e = client.evaluate(
        {
            "preset": "western",
            "arrangement": arrangement,
            "profileOverrides": {"naturals": {"requireDeclaration": False}},
        }
    )
    assert [r.name for r in e.rows] == [
        "Pair of twos, three kicker",
        "Two pair, fives and fours",
        "Two pair, sevens and sixes",
    ]
    assert "SIX_PAIRS" in e.naturals and "SIX_PAIRS" in e.playable_naturals
    assert not e.fouled


def test_a_joker_where_the_deck_has_none_is_named(client: SettlementClient) -> None:
    a = ARRANGEMENTS["B"]
    front = ["Xj", *a["front"][1:]]
    assert refused(
        client,
        {
            "preset": "western",
            "arrangement": {"front": front, "middle": a["middle"], "back": a["back"]},
        },
    ) == (
        [
            (
                "arrangement.front[0]",
                "'Xj' is a joker, and this profile's deck holds none (deck.jokers)",
            )
        ],
        "malformed_card",
    )


def test_the_fantasyland_sentence_names_the_hand_as_player(client: SettlementClient) -> None:
    """No player id is sent to EvaluateArrangement: the sentence calls the hand "player"."""
    e = client.evaluate({"preset": "ofc", "arrangement": ARRANGEMENTS["B"]})
    assert e.fantasyland.text == (
        "player qualifies for Fantasyland with pair of kings, two kicker in front — 15 cards"
    )
