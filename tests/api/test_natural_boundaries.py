"""Naturals at their boundaries, through the real server and our own client (RULES.md §8, §16):
EvaluateArrangement's naturals for 13 loose cards that make a natural exactly, or fall one card
short of it, with jokers that may stand for a card the hand already holds (§16.3: the hand is
then a multiset, and its counts must still be its own), and for house naturals written in the
vocabulary of §16.1 at the bounds of each clause.
"""

from __future__ import annotations

from typing import Any

import pytest

from cpsettle_client.client import SettlementClient

# A joker that may duplicate a card (deck.jokerDuplicates): the resolver tries all 52 cards,
# a card the hand holds among them.
DUPLICATING = {"jokers": 1, "jokerDuplicates": True}
SUIT_AND_COLOUR = [
    {"natural": n, "rank": 10 - i, "units": 5}
    for i, n in enumerate(
        ["TWELVE_SAME_SUIT", "ONE_COLOUR", "ONE_OFF_COLOUR", "ALL_HIGH", "ALL_LOW"]
    )
]


def naturals(
    client: SettlementClient,
    cards: str,
    table: list[dict[str, Any]],
    deck: dict[str, Any] | None = None,
    preset: str = "shisanshui",
) -> list[str]:
    overrides: dict[str, Any] = {"naturals": {"table": table}}
    if deck:
        overrides["deck"] = deck
    e = client.evaluate({"preset": preset, "cards": cards.split(), "profileOverrides": overrides})
    return list(e.playable_naturals)


@pytest.mark.parametrize("suit", "shdc")
def test_ten_of_a_suit_and_a_duplicating_joker_are_not_twelve_of_it(
    client: SettlementClient, suit: str
) -> None:
    """Ten cards of a suit, two of the other colour, a joker: at best eleven of the suit (and
    neither one colour nor twelve and one); with one more card of the suit, twelve of it and
    one of the other colour."""
    other = {"s": "h", "h": "s", "d": "c", "c": "d"}[suit]
    ten = " ".join(r + suit for r in "AKQJT98765")
    assert naturals(client, f"{ten} 2{other} 3{other} Xj", SUIT_AND_COLOUR, DUPLICATING) == []
    eleven = f"{ten} 4{suit} 3{other} Xj"
    assert naturals(client, eleven, SUIT_AND_COLOUR, DUPLICATING) == [
        "TWELVE_SAME_SUIT",
        "ONE_OFF_COLOUR",
    ]


def test_a_seven_spoils_all_high_even_with_a_duplicating_joker(client: SettlementClient) -> None:
    high = "As Ah Ks Kh Qs Qh Js Jh Ts Th 9s"
    assert naturals(client, f"{high} 7c Xj", SUIT_AND_COLOUR, DUPLICATING) == []
    assert naturals(client, f"{high} 8c Xj", SUIT_AND_COLOUR, DUPLICATING) == ["ALL_HIGH"]


def test_an_ace_spoils_all_low_even_with_a_duplicating_joker(client: SettlementClient) -> None:
    low = "2s 2h 3s 3h 4s 4h 5s 5h 6s 6h 7s"
    assert naturals(client, f"{low} Ac Xj", SUIT_AND_COLOUR, DUPLICATING) == []
    assert naturals(client, f"{low} 8c Xj", SUIT_AND_COLOUR, DUPLICATING) == ["ALL_LOW"]


# ---------------------------------------------------------------------------------------------
# House naturals (RULES.md §16.1), each written in the vocabulary and played alone.


def house(name: str, definition: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"natural": name, "rank": 1, "units": 4, "definition": definition}]


# Three odd cards of spades and diamonds, five hearts, five clubs: the two flushes are the
# hearts and the clubs, so the odd three are the front.
HEARTS, CLUBS = "4h 6h 8h Th Qh", "5c 7c 9c Jc Kc"
STRAIGHT_FRONT = house(
    "STRAIGHT_FRONT", {"rows": {"front": "STRAIGHT", "middle": "FLUSH", "back": "ROW_CLASS_FLUSH"}}
)


@pytest.mark.parametrize(
    ("front", "held"),
    [
        ("As 2d 3s", True),  # the ace low
        ("Qs Kd As", True),  # the ace high
        ("2s 3d 4s", True),
        ("Ks Ad 2s", False),  # no wrap round the ace
        ("2s 3d 5s", False),  # one rank apart too far
        ("2s 4d 6s", False),
        ("5s 5d 6s", False),  # a pair is not a straight
    ],
)
def test_a_straight_front_under_two_flushes(
    client: SettlementClient, front: str, held: bool
) -> None:
    want = ["STRAIGHT_FRONT"] if held else []
    assert naturals(client, f"{HEARTS} {CLUBS} {front}", STRAIGHT_FRONT) == want


FLUSH_FRONT = house(
    "FLUSH_FRONT", {"rows": {"front": "FLUSH", "middle": "STRAIGHT", "back": "STRAIGHT"}}
)


@pytest.mark.parametrize(
    ("fives", "held"),
    [
        ("Ac 2d 3c 4s 5d Ts Jd Qc Kc As", True),  # the wheel and the broadway
        ("9c Td Jc Qs Kd 4s 5d 6c 7c 8s", True),
        ("Jc Qd Ks Ac 2d 3c 4d 5s 6c 8d", False),  # J-Q-K-A-2 wraps; nothing else splits
        ("9c Td Jc Qs Ad 4s 5d 6c 7c 8s", False),  # one card short of the upper straight
    ],
)
def test_two_straights_under_a_flush_front(
    client: SettlementClient, fives: str, held: bool
) -> None:
    want = ["FLUSH_FRONT"] if held else []
    assert naturals(client, f"7h 9h Kh {fives}", FLUSH_FRONT) == want


THREE_QUADS_BY_HOUSE = house("QUADS", {"rankGroups": [4, 4, 4]})
DRAGON_BY_GROUPS = house("THIRTEEN_SINGLES", {"rankGroups": [1] * 13})


def test_rank_groups_of_four_need_three_ranks_held_four_times(client: SettlementClient) -> None:
    assert naturals(client, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c", THREE_QUADS_BY_HOUSE) == [
        "QUADS"
    ]
    assert naturals(client, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd 2c 2d", THREE_QUADS_BY_HOUSE) == []


def test_thirteen_groups_of_one_need_thirteen_ranks(client: SettlementClient) -> None:
    dragon = "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"
    assert naturals(client, dragon, DRAGON_BY_GROUPS) == ["THIRTEEN_SINGLES"]
    six_pairs = "2s 2h 3d 3c 4s 4h 5d 5c 6s 6h 7d 7c As"
    assert naturals(client, six_pairs, DRAGON_BY_GROUPS) == []
    twelve_ranks = "2s 2h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"
    assert naturals(client, twelve_ranks, DRAGON_BY_GROUPS) == []


def rows_of(cls: str) -> list[dict[str, Any]]:
    return house("ROWS_" + cls, {"rows": {"front": cls, "middle": cls, "back": cls}})


@pytest.mark.parametrize(
    ("cls", "cards", "held"),
    [
        ("STRAIGHT", "As 2d 3c 4h 5s 6d 7c 8h 9s Td Jc Qh Ks", True),
        ("STRAIGHT", "As 2d 3c 4h 5s 6d 7c 8h 9s Td Jc Qh 2h", False),
        ("FLUSH", "2h 5h 9h 3c 6c 8c Jc Kc 4s 7s Ts Qs As", True),
        ("FLUSH", "2h 5h 3c 6c 8c Jc Kc 4s 7s Ts Qs As 9d", False),
        ("STRAIGHT_FLUSH", "As 2s 3s 4h 5h 6h 7h 8h 9c Tc Jc Qc Kc", True),
        ("STRAIGHT_FLUSH", "As 2s 3s 4h 5h 6h 7h 8h 9c Tc Jc Qc Kd", False),
    ],
)
def test_a_house_natural_of_three_rows_of_one_class(
    client: SettlementClient, cls: str, cards: str, held: bool
) -> None:
    table = rows_of(cls)
    want = [table[0]["natural"]] if held else []
    assert naturals(client, cards, table) == want
    # A joker in place of the last card, which may stand for a card the hand holds: it makes
    # the natural where the card did (the resolver tries the repeats too, and they must not
    # make it where the card did not).
    joker = cards.rsplit(" ", 1)[0] + " Xj"
    assert naturals(client, joker, table, DUPLICATING) == [table[0]["natural"]]


def test_a_row_left_out_is_any_cards(client: SettlementClient) -> None:
    """Only the front is named (the other rows unspecified, as proto's JSON writes them): any 13
    cards holding a 3-card straight flush make it."""
    table = house(
        "SF_FRONT",
        {"rows": {"front": "STRAIGHT_FLUSH", "middle": "", "back": "ROW_CLASS_UNSPECIFIED"}},
    )
    rest = "Ah Kd Qc Js 9h 8d 7c 6s 5h 4d"
    assert naturals(client, f"{rest} 2s 3s 4s", table) == ["SF_FRONT"]
    assert naturals(client, f"{rest} 2s 3s 4c", table) == []


@pytest.mark.parametrize(
    ("cards", "held"),
    [
        ("2s 3h 4d 5c 6s 7h 8d 9c 9s 8h 7d 6c 5s", True),
        ("2s 3h 4d 5c 6s 7h 8d 9c 9s 8h 7d 6c Ts", False),  # a ten is one rank too high
    ],
)
def test_ranks_at_most_a_nine(client: SettlementClient, cards: str, held: bool) -> None:
    table = house("NINE_OR_LOWER", {"ranksAtMost": "9"})
    assert naturals(client, cards, table) == (["NINE_OR_LOWER"] if held else [])


@pytest.mark.parametrize(
    ("cards", "held"),
    [
        ("2s 2h 2d 2c 4s 4h 4d 4c 6s 6h 6d 6c 8s", True),
        ("2s 2h 2d 2c 4s 4h 4d 4c 6s 6h 6d 6c Ts", False),  # a ten is listed, but above eight
        ("2s 2h 2d 2c 4s 4h 4d 4c 6s 6h 6d 6c 7s", False),  # at most eight, but not listed
    ],
)
def test_ranks_listed_and_at_most_an_eight(
    client: SettlementClient, cards: str, held: bool
) -> None:
    table = house("EVEN_LOW", {"ranksIn": ["2", "4", "6", "8", "T", "Q"], "ranksAtMost": "8"})
    assert naturals(client, cards, table) == (["EVEN_LOW"] if held else [])


@pytest.mark.parametrize(
    ("cards", "held"),
    [
        ("As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 9h 8c", True),
        ("As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 9h 7c", False),  # six pairs, one card below eight
        ("As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 8h 8c", True),
        ("As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 8h Kc", False),  # all high, five pairs and trips
    ],
)
def test_six_high_pairs_need_both_clauses(client: SettlementClient, cards: str, held: bool) -> None:
    table = house("HIGH_PAIRS", {"rankGroups": [2, 2, 2, 2, 2, 2], "ranksAtLeast": "8"})
    assert naturals(client, cards, table) == (["HIGH_PAIRS"] if held else [])
