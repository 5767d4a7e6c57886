"""Exhaustive census: every five-card and every three-card hand, counted by class."""

from __future__ import annotations

from collections import Counter
from functools import partial
from itertools import combinations, pairwise

import pytest

from cpsettle_service.domain.cards.cards import DECK
from cpsettle_service.domain.cards.hands import (
    HandClass,
    HandRank,
    Wheel,
    evaluate_five,
    evaluate_three,
)

DECK_STRINGS = [str(c) for c in DECK]

FIVE_CARD_COUNTS = {
    HandClass.HIGH_CARD: 1_302_540,
    HandClass.PAIR: 1_098_240,
    HandClass.TWO_PAIR: 123_552,
    HandClass.THREE_OF_A_KIND: 54_912,
    HandClass.STRAIGHT: 10_200,
    HandClass.FLUSH: 5_108,
    HandClass.FULL_HOUSE: 3_744,
    HandClass.FOUR_OF_A_KIND: 624,
    HandClass.STRAIGHT_FLUSH: 36,
    HandClass.ROYAL_FLUSH: 4,
}
# Distinct hands by rank (the 7,462 classes of five-card poker).
FIVE_CARD_DISTINCT = {
    HandClass.HIGH_CARD: 1_277,
    HandClass.PAIR: 2_860,
    HandClass.TWO_PAIR: 858,
    HandClass.THREE_OF_A_KIND: 858,
    HandClass.STRAIGHT: 10,
    HandClass.FLUSH: 1_277,
    HandClass.FULL_HOUSE: 156,
    HandClass.FOUR_OF_A_KIND: 156,
    HandClass.STRAIGHT_FLUSH: 9,
    HandClass.ROYAL_FLUSH: 1,
}
THREE_CARD_COUNTS = {
    HandClass.HIGH_CARD: 18_304,
    HandClass.PAIR: 3_744,
    HandClass.THREE_OF_A_KIND: 52,
}


def _check_consistent(hands: list[HandRank], size: int) -> None:
    """Strength is dense from 1 and orders exactly like (category, ranks)."""
    by_strength = sorted(hands, key=lambda h: h.strength)
    assert [h.strength for h in by_strength] == list(range(1, len(hands) + 1))
    for lower, higher in pairwise(by_strength):
        assert lower < higher
        assert (lower.category, lower.ranks) < (higher.category, higher.ranks)
    for h in hands:
        assert h.size == size
        assert h.category == h.hand_class.order
        assert h.name and h.name[0].isupper()


@pytest.fixture(scope="module")
def five_card_census() -> dict[Wheel, Counter[HandRank]]:
    census: dict[Wheel, Counter[HandRank]] = {}
    for wheel in Wheel:
        evaluate = partial(evaluate_five, wheel=wheel)
        census[wheel] = Counter(map(evaluate, combinations(DECK_STRINGS, 5)))
    return census


@pytest.mark.slow
@pytest.mark.parametrize("wheel", list(Wheel))
def test_every_five_card_hand(
    five_card_census: dict[Wheel, Counter[HandRank]], wheel: Wheel
) -> None:
    counts = five_card_census[wheel]
    assert sum(counts.values()) == 2_598_960
    by_class: Counter[HandClass] = Counter()
    distinct: Counter[HandClass] = Counter()
    for hand, n in counts.items():
        by_class[hand.hand_class] += n
        distinct[hand.hand_class] += 1
    assert dict(by_class) == FIVE_CARD_COUNTS
    assert dict(distinct) == FIVE_CARD_DISTINCT
    # 7,462 distinct (category, ranks) keys (Counter keys compare on those) and strengths.
    assert len(counts) == 7_462
    assert len({(h.category, h.ranks) for h in counts}) == 7_462
    assert len({h.strength for h in counts}) == 7_462
    assert len({h.name for h in counts if h.hand_class is HandClass.FULL_HOUSE}) == 156
    _check_consistent(list(counts), 5)


@pytest.mark.slow
def test_the_wheel_setting_moves_only_the_wheel(
    five_card_census: dict[Wheel, Counter[HandRank]],
) -> None:
    lowest = {(h.category, h.ranks): h for h in five_card_census[Wheel.LOWEST]}
    second = {(h.category, h.ranks): h for h in five_card_census[Wheel.SECOND_HIGHEST]}
    straights = {HandClass.STRAIGHT, HandClass.STRAIGHT_FLUSH}
    moved = {key for key, h in lowest.items() if h.hand_class in straights}
    assert len(moved) == 19
    assert set(lowest) - moved == set(second) - {
        key for key, h in second.items() if h.hand_class in straights
    }
    for key, low in lowest.items():
        if key not in moved:
            # Identical outside straights: the very same shared object, same strength.
            assert second[key] is low
    assert lowest[(4, (5, 4, 3, 2, 1))].strength == lowest[(4, (6, 5, 4, 3, 2))].strength - 1
    assert (
        second[(4, (13, 12, 11, 10, 9))].strength + 1
        == second[(4, (14, 5, 4, 3, 2))].strength
        == second[(4, (14, 13, 12, 11, 10))].strength - 1
    )
    assert (
        second[(8, (13, 12, 11, 10, 9))].strength + 1
        == second[(8, (14, 5, 4, 3, 2))].strength
        == second[(9, (14, 13, 12, 11, 10))].strength - 1
    )


def test_every_three_card_hand() -> None:
    counts = Counter(map(evaluate_three, combinations(DECK_STRINGS, 3)))
    assert sum(counts.values()) == 22_100
    by_class: Counter[HandClass] = Counter()
    for hand, n in counts.items():
        by_class[hand.hand_class] += n
    assert dict(by_class) == THREE_CARD_COUNTS
    assert len(counts) == 455
    assert len({h.strength for h in counts}) == 455
    _check_consistent(list(counts), 3)
    # Card objects give the very same shared objects.
    for cards in combinations(DECK[::3], 3):
        assert evaluate_three(cards) is evaluate_three([str(c) for c in cards])
