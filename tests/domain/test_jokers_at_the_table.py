"""Jokers (RULES.md §16.3) settled at a table under the profile options that change what a joker
stands for: the wheel's place, jokers that may duplicate a card, the suit tie-break between equal
middle and back, and royalties a profile does not pay. Each case is one table through ``settle``
and the rows or natural each player is paid on."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.cards.rows import ROWS
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.domain.settle import Settlement
from cpsettle_service.profile_files import load_preset

from .test_house_rules_settlement import arranged, run

SECOND_HIGHEST = {"ranking": {"wheel": "WHEEL_SECOND_HIGHEST"}}
DUPLICATES_1 = {"deck": {"jokers": 1, "jokerDuplicates": True}}


def rows_of_pair(s: Settlement) -> dict[str, tuple[str, str]]:
    """Row label -> (winner, sentence) of the table's one pair."""
    (pair,) = s.pairs
    return {r.row.value: (r.winner, r.text) for r in pair.rows}


def test_a_joker_hand_keeps_the_wheel_second_highest() -> None:
    # A's joker is in the front; the middle and back are wheels. Under WHEEL_SECOND_HIGHEST a
    # wheel ranks between the king-high and the ace-high straight, so it beats B's six-high
    # straights in both rows (under the default it would lose both).
    s = run(
        "one-six",
        [
            arranged("A", 1, "Xj 9c 7d", "As 2d 3h 4c 5s", "Ah 2c 3s 4d 5h"),
            arranged("B", 2, "Qs Jh 8c", "6h 5c 4h 3d 2s", "6c 5d 4s 3c 2h"),
        ],
        {"deck": {"jokers": 1}, **SECOND_HIGHEST},
    )
    rows = rows_of_pair(s)
    assert rows["MIDDLE"] == (
        "A",
        "Middle: A's straight, five high, beats B's straight, six high — A +1",
    )
    assert rows["BACK"][0] == "A"
    assert s.player("A").net_units == 3 + 3  # three rows and the scoop bonus of one-six


@pytest.mark.parametrize(
    ("row", "a_rows", "b_rows"),
    [
        (
            2,
            ("Ah Ad 7c", "As Ac 9h 9d 8c", "Xj 2d 3h 4c 5s"),
            ("Qs Jh 8d", "Kh Kd 6c 6d 2c", "7h 6s 5c 4s 3d"),
        ),
        (
            1,
            ("Ah Ad 7c", "Xj 2d 3h 4c 5s", "Kh Kd Kc As Ac"),
            ("Qs Jh 8d", "7h 6s 5c 4s 3d", "Ts 9s 8s 7s 2s"),
        ),
    ],
)
def test_a_duplicating_joker_makes_a_wheel_second_highest(
    row: int, a_rows: tuple[str, str, str], b_rows: tuple[str, str, str]
) -> None:
    # A holds all four aces, so the joker can be an ace only by duplicating one (jokerDuplicates):
    # that wheel (ace as the top, second-highest) is stronger than the six-high straight a six
    # would make, and beats B's seven-high straight, in the back or in the middle.
    s = run(
        "one-six",
        [arranged("A", 1, *a_rows), arranged("B", 2, *b_rows)],
        DUPLICATES_1 | SECOND_HIGHEST,
    )
    assert s.player("A").rows[row].joker_cards == ("As",)
    label = ROWS[row].value
    assert rows_of_pair(s)[label] == (
        "A",
        f"{label.capitalize()}: A's straight, five high "
        "(Xj as As), beats B's straight, seven high — A +1",
    )


def test_a_row_beside_a_duplicated_card_keeps_its_flush() -> None:
    # The joker duplicates an ace (A holds all four) for a second-highest wheel in the middle;
    # the back, which repeats no card, is still the ace-high flush it is, above that straight.
    s = run(
        "one-six",
        [
            arranged("A", 1, "Ah Ad Ac", "Xj 2d 3h 4c 5s", "As Ks 9s 8s 3s"),
            arranged("B", 2, "Qh Jh 8d", "7h 6h 5c 4h 3d", "Kd Qd 9d 7d 4d"),
        ],
        DUPLICATES_1 | SECOND_HIGHEST,
    )
    a = s.player("A")
    assert a.status == "REGULAR" and a.rows[1].joker_cards == ("As",)
    assert [r.hand.name for r in a.rows] == [
        "Three of a kind, aces",
        "Straight, five high",
        "Ace-high flush",
    ]
    assert rows_of_pair(s)["BACK"] == (
        "A",
        "Back: A's ace-high flush beats B's king-high flush — A +1",
    )


def test_two_duplicating_jokers_may_stand_for_the_same_card() -> None:
    # With jokerDuplicates a joker stands for any of the 52 cards, and the second is not kept
    # from the first one's card: both are the best ace, the ace of spades (suit order s h c d).
    s = run(
        "one-six",
        [
            arranged("A", 1, "Qs Jh 8d", "Kh Kd 6c 6d 2c", "Xj Xj Ah Ad Kc"),
            arranged("B", 2, "7h 6s 5c", "Ts 9s 8s 7s 2s", "Qh Qd Qc 3s 3h"),
        ],
        {"deck": {"jokers": 2, "jokerDuplicates": True}},
    )
    assert s.player("A").rows[2].joker_cards == ("As", "As")
    assert "four of a kind, aces (Xj as As, Xj as As)" in rows_of_pair(s)["BACK"][1]


def test_two_duplicating_jokers_make_a_natural_with_the_same_card() -> None:
    d = profile_to_dict(load_preset("shisanshui"))
    table = [*d["naturals"]["table"], {"natural": "FIVE_OF_A_KIND", "rank": 0, "units": 30}]
    a = {
        "playerId": "A",
        "seat": 1,
        "declaredNatural": "FIVE_OF_A_KIND",
        "cards": "As Ah Ad Xj Xj 2s 3h 4d 5c 6s 8h 9d Tc".split(),
    }
    s = run(
        "shisanshui",
        [a, arranged("B", 2, "7h 6h 5h", "Ts Th 8c 7s 2c", "Qh Qd Qc 3s 3c")],
        {"deck": {"jokers": 2, "jokerDuplicates": True}, "naturals": {"table": table}},
    )
    (item,) = s.pairs[0].items
    assert item.text == (
        "Natural: A's five of a kind (Xj as As, Xj as As) wins automatically against B — A +30"
    )


def test_a_joker_resolved_under_the_suit_tie_break_between_equal_middle_and_back() -> None:
    # Middle 9-high straight. A five for the joker makes the back the same straight, which the
    # suit tie-break must judge (9s in the middle over the back's 9h: a foul); a ten makes it
    # higher. The joker is the ten, the hand plays, and its back meets B's full house.
    s = run(
        "one-six",
        [
            arranged("A", 1, "Qs Jh 2d", "5s 6h 7d 8c 9s", "6d 7c 8s 9h Xj"),
            arranged("B", 2, "7h 6s 5c", "Ts Th 8h 7s 2s", "Qh Qd Qc 3s 3h"),
        ],
        {"deck": {"jokers": 1}, "ranking": {"suitOrderTiebreak": True}},
    )
    a = s.player("A")
    assert a.status == "REGULAR" and a.rows[2].joker_cards == ("Tc",)
    assert rows_of_pair(s)["BACK"] == (
        "B",
        "Back: B's full house, queens full of threes, beats "
        "A's straight, ten high (Xj as Tc) — B +1",
    )


def test_unpaid_royalties_do_not_choose_the_joker() -> None:
    # OFC's table pays four aces in the back (10) and nothing for five aces; with royalties not
    # paid (mode NONE, the table kept), the joker simply makes the strongest back: five aces.
    s = run(
        "ofc",
        [
            arranged("A", 1, "2s 3h 4d", "5s 6h 7d 8c 9s", "As Ah Ad Ac Xj"),
            arranged("B", 2, "7h 6s 5c", "Ts Th 8h 7s 2c", "Qh Qd Qc 3s 3c"),
        ],
        DUPLICATES_1 | {"royalties": {"mode": "ROYALTY_MODE_NONE"}},
    )
    back = s.player("A").rows[2]
    assert back.hand.name == "Five of a kind, aces" and back.royalty == 0
