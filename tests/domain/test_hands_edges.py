"""Hand evaluation at its edges: the suit tie-break between pairs of the lowest rank, the lenient
inputs ``evaluate_three`` and ``evaluate_five`` accept off the fast path (padded card text, one
string), and the errors an embedding caller reads when a row is not a row."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.cards.hands import evaluate_five, evaluate_row, evaluate_three

from .test_house_rules_settlement import arranged, run

SUIT_TIE_BREAK = {"ranking": {"suitOrderTiebreak": True, "rowTie": "ROW_TIE_SUIT_OF_HIGHEST_CARD"}}


def test_equal_pairs_of_twos_are_broken_by_the_suit_of_a_two() -> None:
    # Pair of twos, ace kicker, on both sides: the highest card is the pair's best two (RULES.md
    # suit order s h c d), not the ace kicker: B's 2s beats A's 2c although A holds the better ace.
    s = run(
        "one-six",
        [
            arranged("A", 1, "2c 2d Ah", "5s 6h 7d 8c 9s", "Qh Qd Qc 3s 3h"),
            arranged("B", 2, "2s 2h Ad", "5h 6d 7c 8s 9h", "Kh Kd Kc 4s 4h"),
        ],
        SUIT_TIE_BREAK,
    )
    front = s.pairs[0].rows[0]
    assert (front.winner, front.tie_break) == ("B", "2c 2s")
    assert front.text == (
        "Front: B's pair of twos, ace kicker, beats A's pair of twos, ace kicker "
        "(equal by rank; highest card 2s against 2c) — B +1"
    )


def test_a_front_given_as_padded_text_or_one_string() -> None:
    assert evaluate_three([" Kh", "Kd ", "Ac"]) == evaluate_three(["Kh", "Kd", "Ac"])
    assert evaluate_three("7s 7h 7d").name == "Three of a kind, sevens"


def test_a_flush_given_as_padded_text_stays_a_flush() -> None:
    royal = evaluate_five(" As|Ks |Qs|Js|Ts".split("|"))
    assert royal.name == "Royal flush" and royal == evaluate_five("As Ks Qs Js Ts".split())
    flush = evaluate_five("Ad Jd 9d 6d 2d")
    assert flush.name == "Ace-high flush"


def test_a_row_of_the_wrong_size_says_how_many_cards_it_got() -> None:
    with pytest.raises(ValueError, match=r"^a 5-card row needs 5 cards, got 4$"):
        evaluate_five(["As", "Kd", "7c", " 2h"])
    with pytest.raises(ValueError, match=r"^a 3-card row needs 3 cards, got 2$"):
        evaluate_three("As Kd")
    with pytest.raises(ValueError, match=r"^expected 5 cards, got 42$"):
        evaluate_five(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^a row has 3 or 5 cards, got 4$"):
        evaluate_row("As Kd 7c 2h")


def test_a_row_holding_a_card_twice_names_each_repeated_card_once() -> None:
    with pytest.raises(ValueError, match=r"^duplicate card\(s\) in one row: As, Ks$"):
        evaluate_five(["As", "As", "Ks", "Ks", "Qs"])
    with pytest.raises(ValueError, match=r"^duplicate card\(s\) in one row: Ah$"):
        evaluate_five(["Ah", "Ah", "Ah", "Ad", "As"])
