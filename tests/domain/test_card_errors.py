"""What the domain library says about a card it cannot read (``CardError``), for table software
that evaluates hands with it directly: the same instructions the service gives (RULES.md §2)."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.cards.cards import parse_cards
from cpsettle_service.domain.cards.hands import evaluate_five, evaluate_three
from cpsettle_service.domain.errors import CardError

HOW = (
    "is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), suits s h d c "
    "(or ♠ ♥ ♦ ♣), e.g. 'As', 'Td', '2c'"
)


@pytest.mark.parametrize("bad", ["1s", "Ax", "", None])
def test_a_string_that_is_no_card_says_how_to_write_one(bad: object) -> None:
    with pytest.raises(CardError) as refused:
        evaluate_five(["As", "Kd", bad, "7c", "2h"])  # type: ignore[list-item]
    assert str(refused.value) == f"{bad!r} {HOW}"


def test_a_joker_is_named_as_one() -> None:
    with pytest.raises(CardError) as refused:
        evaluate_three(["As", "xj", "7c"])
    assert str(refused.value) == (
        "'xj' is a joker: only a profile whose deck holds jokers (deck.jokers) accepts it, "
        "and it stands for a card only in a hand"
    )


def test_spellings_and_padding() -> None:
    assert [str(c) for c in parse_cards(["10h", " a♠", "KD ", "q♡"])] == ["Th", "As", "Kd", "Qh"]
    with pytest.raises(CardError, match=r"^'A s' is not a card"):
        parse_cards(["A s"])
