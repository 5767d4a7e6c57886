"""Naturals (RULES.md §8, §14.13): every predicate, the split witnesses, and a
cross-check of the split naturals against a brute-force search over all 3 + 5 + 5 splits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import combinations, product

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.cards.cards import DECK, Card, Rank, Suit, parse_cards
from cpsettle_service.domain.naturals.catalogue import (
    PREDICATES,
    SPLIT_NATURALS,
    Natural,
    Split,
    find_split,
    hand_facts,
    holds,
    naturals_held,
)

N = Natural


def h(text: str) -> tuple[Card, ...]:
    cards = parse_cards(text)
    assert len(cards) == 13 and len(set(cards)) == 13, text
    return cards


def found_split(natural: Natural, cards: Sequence[Card]) -> Split:
    split = find_split(natural, cards)
    assert split is not None, [str(c) for c in cards]
    return split


Hands = st.SearchStrategy[tuple[Card, ...]]


# ---------------------------------------------------------------------------------------------
# Reference row checks and the brute-force split search (independent of the module under test).


def ref_is_straight(cards: Sequence[Card]) -> bool:
    values = {c.rank.value_int for c in cards}
    if len(values) != len(cards):
        return False
    for vals in (values, {1 if v == 14 else v for v in values}):
        if max(vals) - min(vals) == len(cards) - 1:
            return True
    return False


def ref_is_flush(cards: Sequence[Card]) -> bool:
    return len({c.suit for c in cards}) == 1


def ref_is_straight_flush(cards: Sequence[Card]) -> bool:
    return ref_is_straight(cards) and ref_is_flush(cards)


ROW_CHECK: dict[Natural, Callable[[Sequence[Card]], bool]] = {
    N.THREE_STRAIGHTS: ref_is_straight,
    N.THREE_FLUSHES: ref_is_flush,
    N.THREE_STRAIGHT_FLUSHES: ref_is_straight_flush,
}


def brute_split(
    cards: Iterable[Card], row_ok: Callable[[Sequence[Card]], bool]
) -> tuple[list[Card], list[Card], list[Card]] | None:
    """Try every split into 3 + 5 + 5 (fronts first, then the 126 middle/back halves)."""
    hand = list(cards)
    for front_idx in combinations(range(13), 3):
        front = [hand[i] for i in front_idx]
        if not row_ok(front):
            continue
        rest = [c for i, c in enumerate(hand) if i not in front_idx]
        first, others = rest[0], rest[1:]
        for more in combinations(range(9), 4):
            middle = [first] + [others[i] for i in more]
            back = [c for i, c in enumerate(others) if i not in more]
            if row_ok(middle) and row_ok(back):
                return front, middle, back
    return None


def assert_valid_split(natural: Natural, cards: Sequence[Card], split: Split | None) -> None:
    assert split is not None
    front, middle, back = split
    assert (len(front), len(middle), len(back)) == (3, 5, 5)
    assert all(isinstance(row, tuple) for row in split)
    assert Counter(front + middle + back) == Counter(cards)
    for row in split:
        assert ROW_CHECK[natural](row), [str(c) for c in row]


# ---------------------------------------------------------------------------------------------
# Catalogue and API shape.


def test_catalogue_complete_and_labelled() -> None:
    assert set(PREDICATES) == set(Natural)
    assert len(Natural) == 17  # the 14 of spec section 8 and the three of 16.1
    for natural in Natural:
        assert natural.value == natural.name
        assert natural.label and natural.label[0].isupper()
    assert len({n.label for n in Natural}) == len(Natural)
    assert N.DRAGON.label == "Dragon"
    assert N.SIX_PAIRS.label == "Six pairs"
    assert N.THREE_STRAIGHT_FLUSHES.label == "Three straight flushes"
    assert {N.THREE_STRAIGHTS, N.THREE_FLUSHES, N.THREE_STRAIGHT_FLUSHES} == SPLIT_NATURALS


# ---------------------------------------------------------------------------------------------
# Every natural: hands that hold it and near misses that do not.

HOLDS = [
    (N.THIRTEEN_SAME_SUIT, "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"),
    (N.THIRTEEN_SAME_SUIT, "2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd Ad"),
    (N.DRAGON, "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"),
    (N.TWELVE_SAME_SUIT, "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh As"),
    (N.TWELVE_SAME_SUIT, "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah"),  # 13 is at least 12
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ks Kh Qs Qh Js Jh Ts Th 9s 9h"),  # 3,2,2,2,2,2
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ks Kh Kd Kc Qs Qh Js Jh Ts Th"),  # 3,4,2,2,2
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ks Kh Kd Kc Qs Qh Qd Qc 2s 2h"),  # 3,4,4,2
    (N.FOUR_TRIPS, "As Ah Ad Ks Kh Kd Qs Qh Qd Js Jh Jd 2c"),  # 3,3,3,3,1
    (N.FOUR_TRIPS, "As Ah Ad Ac Ks Kh Kd Qs Qh Qd Js Jh Jd"),  # 4,3,3,3
    (N.THREE_STRAIGHTS, "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"),
    (N.THREE_STRAIGHTS, "Ah 2c 3d 4s 5h 2d 3s 4c 5d 6h 7c 8s 9d"),  # wheel forced
    (N.THREE_STRAIGHTS, "Qh Ks Ad Ac 2d 3h 4c 5s 5d 6c 7h 8h 9s"),  # Q-K-A front forced
    (N.THREE_STRAIGHTS, "Th Js Qd Tc Jd Qh Kc As Ts Jc Qs Ks Ah"),  # TJQ + TJQKA x2
    (N.THREE_FLUSHES, "2h 7h Kh 3s 5s 9s Js Ks 4c 6c 8c Tc Qc"),  # 3 + 5 + 5
    (N.THREE_FLUSHES, "2h 7h Kh 3s 5s 9s Js Ks 4s 6s 8s Ts Qs"),  # 3 + 10
    (N.THREE_FLUSHES, "2h 7h Kh 3h 5h 9h Jh Ah 4d 6d 8d Td Qd"),  # 8 + 5
    (N.THREE_FLUSHES, "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"),  # 13
    (N.SIX_PAIRS, "As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 9h 2c"),
    (N.SIX_PAIRS, "As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th 2c"),  # quad = two pairs
    (N.SIX_PAIRS, "As Ah Ad Ks Kh Qs Qh Js Jh Ts Th 9s 9h"),  # trips = pair + single
    (N.SIX_PAIRS, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"),  # three quads = six pairs
    (N.THREE_STRAIGHT_FLUSHES, "As 2s 3s 4h 5h 6h 7h 8h 9c Tc Jc Qc Kc"),
    (N.THREE_STRAIGHT_FLUSHES, "Ah 2h 3h 4h 5h 6s 7s 8s 9s Ts Jd Qd Kd"),  # wheel
    (N.THREE_STRAIGHT_FLUSHES, "Qc Kc Ac Ad 2d 3d 4d 5d 6s 7s 8s 9s Ts"),  # Q-K-A front
    (N.THREE_STRAIGHT_FLUSHES, "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"),  # 13 suited
    (N.THREE_QUADS, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"),
    (N.TWELVE_ROYALS, "Js Jh Jd Jc Qs Qh Qd Qc Ks Kh Kd Kc As"),
    (N.ALL_HIGH, "8s 8h 9d 9c Ts Th Jd Jc Qs Qh Kd Kc As"),
    (N.ALL_LOW, "2s 2h 3d 3c 4s 4h 5d 5c 6s 6h 7d 7c 8s"),
    (N.ONE_COLOUR, "2h 3d 4h 5d 6h 7d 8h 9d Th Jd Qh Kd Ah"),
    (N.ONE_COLOUR, "2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs Kc As"),
    (N.ONE_OFF_COLOUR, "2h 3d 4h 5d 6h 7d 8h 9d Th Jd Qh Kd As"),  # one black
    (N.ONE_OFF_COLOUR, "2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs Kc Ad"),  # one red
    (N.TWO_TRIPS_THREE_PAIRS, "As Ah Ad Ks Kh Kd Qs Qh Js Jh Ts Th 9s"),  # 3,3,2,2,2,1
    (N.TWO_TRIPS_THREE_PAIRS, "As Ah Ad Ks Kh Kd Qs Qh Qd Js Jh 2d 2c"),  # 3,3,3,2,2
]

NEAR_MISSES = [
    (N.THIRTEEN_SAME_SUIT, "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks Ah"),
    (N.DRAGON, "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc Ks"),
    (N.TWELVE_SAME_SUIT, "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Ks As"),  # 11 hearts
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ks Kh Qs Qh Js Jh Ts Th 9s 8h"),  # 3,2,2,2,2,1,1
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ks Kh Kd Qs Qh Js Jh Ts Th 9s"),  # two trips
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"),  # 4,4,4,1
    (N.TRIPS_AND_FIVE_PAIRS, "As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th 2c"),  # no trips (4,2,2,2,2,1)
    (N.FOUR_TRIPS, "As Ah Ad Ks Kh Kd Qs Qh Qd Js Jh 2d 2c"),  # 3,3,3,2,2
    (N.FOUR_TRIPS, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"),  # three quads only
    (N.THREE_STRAIGHTS, "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc Ks"),
    (N.THREE_STRAIGHTS, "Ah 2c 3d 4s 5h 2d 3s 4c 5d 6h 7c 8s Td"),
    (N.THREE_FLUSHES, "2h 7h Kh 3s 5s 9s Js Ks 4c 6c 8c Tc Qh"),  # 4 + 5 + 4
    (N.THREE_FLUSHES, "2h 7h Kh 3s 5s 9s Js Ks 4s 6s 8s Ts Qc"),  # 3 + 9 + 1
    (N.THREE_FLUSHES, "2h 7h Kh 3h 5h 9h Jh Kd 4d 6d 8d Td Qs"),  # 7 + 5 + 1
    (N.SIX_PAIRS, "As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 8h 2c"),  # five pairs
    (N.SIX_PAIRS, "As Ah Ad Ks Kh Kd Qs Qh Js Jh Ts Th 9s"),  # 3,3,2,2,2,1: five pairs
    (N.THREE_STRAIGHT_FLUSHES, "As 2s 3s 4h 5h 6h 7h 8h 9c Tc Jc Qc Kd"),
    (N.THREE_STRAIGHT_FLUSHES, "As 2h 3s 4h 5h 6h 7h 8s 9c Tc Jc Qc Kc"),  # straights, not suited
    (N.THREE_QUADS, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd 2s 2c"),
    (N.TWELVE_ROYALS, "Js Jh Jd Jc Qs Qh Qd Qc Ks Kh Kd Kc Ts"),
    (N.ALL_HIGH, "8s 8h 9d 9c Ts Th Jd Jc Qs Qh Kd Kc 7s"),
    (N.ALL_LOW, "2s 2h 3d 3c 4s 4h 5d 5c 6s 6h 7d 7c As"),  # an ace spoils it
    (N.ALL_LOW, "2s 2h 3d 3c 4s 4h 5d 5c 6s 6h 7d 7c 9s"),
    (N.ONE_COLOUR, "2h 3d 4h 5d 6h 7d 8h 9d Th Jd Qh Kd As"),
    (N.ONE_COLOUR, "2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs Kc Ad"),
    (N.ONE_OFF_COLOUR, "2h 3d 4h 5d 6h 7d 8h 9d Th Jd Qh Kd Ah"),  # thirteen red
    (N.ONE_OFF_COLOUR, "2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs Kh Ad"),  # eleven and two
    (N.TWO_TRIPS_THREE_PAIRS, "As Ah Ad Ks Kh Qs Qh Js Jh Ts Th 9s 9h"),  # one trips only
    (N.TWO_TRIPS_THREE_PAIRS, "As Ah Ad Ks Kh Kd Qs Qh Js 9h Ts 8h 9s"),  # 3,3,2,2,1,1,1
    (N.FIVE_OF_A_KIND, "As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"),  # standard cards: never
]


@pytest.mark.parametrize(("natural", "text"), HOLDS, ids=lambda x: str(x)[:20])
def test_holds(natural: Natural, text: str) -> None:
    cards = h(text)
    assert holds(natural, cards)
    assert PREDICATES[natural](cards)
    assert natural in naturals_held(cards)


@pytest.mark.parametrize(("natural", "text"), NEAR_MISSES, ids=lambda x: str(x)[:20])
def test_near_miss(natural: Natural, text: str) -> None:
    cards = h(text)
    assert not holds(natural, cards)
    assert not PREDICATES[natural](cards)
    assert natural not in naturals_held(cards)


def test_every_natural_has_examples_both_ways() -> None:
    # Five of a kind needs a joker that duplicates a card: its examples are in test_jokers.
    assert {n for n, _ in HOLDS} == set(Natural) - {N.FIVE_OF_A_KIND}
    assert {n for n, _ in NEAR_MISSES} == set(Natural)


# ---------------------------------------------------------------------------------------------
# Interplay.


def test_thirteen_same_suit_is_also_dragon_and_twelve_same_suit() -> None:
    held = naturals_held(h("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac"))
    assert held == {
        N.THIRTEEN_SAME_SUIT,
        N.DRAGON,
        N.TWELVE_SAME_SUIT,
        N.THREE_STRAIGHTS,
        N.THREE_FLUSHES,
        N.THREE_STRAIGHT_FLUSHES,
        N.ONE_COLOUR,
    }


def test_plain_dragon() -> None:
    assert naturals_held(h("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")) == {
        N.DRAGON,
        N.THREE_STRAIGHTS,
    }


def test_four_of_a_kind_counts_as_two_pairs() -> None:
    # 4,2,2,2,2,1: six pairs; 3,4,2,2,2: trips and five pairs (and six pairs).
    assert naturals_held(h("As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th 2c")) == {N.SIX_PAIRS}
    # The quad also gives a second three of a kind (with a king left over): two trips and
    # three pairs (spec 16.1: a rank held four times fills a group of 3).
    assert naturals_held(h("As Ah Ad Ks Kh Kd Kc Qs Qh Js Jh Ts Th")) == {
        N.TRIPS_AND_FIVE_PAIRS,
        N.SIX_PAIRS,
        N.ALL_HIGH,
        N.TWO_TRIPS_THREE_PAIRS,
    }


def test_three_quads_is_also_six_pairs_but_not_four_trips() -> None:
    held = naturals_held(h("As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c"))
    assert held == {N.THREE_QUADS, N.SIX_PAIRS}


def test_four_trips_with_a_quad() -> None:
    held = naturals_held(h("As Ah Ad Ac Ks Kh Kd Qs Qh Qd Js Jh Jd"))
    # Two trips and three pairs as well: KKK QQQ + AA AA (the quad as two pairs) + JJ.
    assert held == {N.FOUR_TRIPS, N.TWELVE_ROYALS, N.ALL_HIGH, N.TWO_TRIPS_THREE_PAIRS}


def test_twelve_royals_is_all_high() -> None:
    held = naturals_held(h("Js Jh Jd Jc Qs Qh Qd Qc Ks Kh Kd Kc As"))
    assert {N.TWELVE_ROYALS, N.ALL_HIGH, N.THREE_QUADS} <= held


def test_eights_are_both_high_and_low() -> None:
    assert holds(N.ALL_HIGH, h("8s 8h 8d 8c 9s 9h Td Tc Js Jh Qd Qc Ks"))
    assert holds(N.ALL_LOW, h("8s 8h 8d 8c 2s 2h 3d 3c 4s 4h 5d 5c 6s"))


def test_all_low_is_spoiled_by_an_ace_even_as_a_wheel() -> None:
    # A-2-3-4-5 makes a straight, but for ALL_LOW the ace counts high (RULES.md §14.13).
    cards = h("As 2h 3d 4c 5s 2c 3h 4s 5d 6h 7c 8s 8d")
    assert not holds(N.ALL_LOW, cards)
    low = h("2s 2h 3d 4c 5s 2c 3h 4s 5d 6h 7c 8s 8d")
    assert holds(N.ALL_LOW, low)


def test_three_straights_with_the_wheel() -> None:
    cards = h("Ah 2c 3d 4s 5h 2d 3s 4c 5d 6h 7c 8s 9d")
    split = found_split(N.THREE_STRAIGHTS, cards)
    assert_valid_split(N.THREE_STRAIGHTS, cards, split)
    wheel = {Rank.ACE, Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE}
    assert any({c.rank for c in row} == wheel for row in split[1:])


def test_three_straights_with_q_k_a_front() -> None:
    cards = h("Qh Ks Ad Ac 2d 3h 4c 5s 5d 6c 7h 8h 9s")
    front, middle, back = found_split(N.THREE_STRAIGHTS, cards)
    assert {c.rank for c in front} == {Rank.QUEEN, Rank.KING, Rank.ACE}
    assert_valid_split(N.THREE_STRAIGHTS, cards, (front, middle, back))


def test_three_straights_with_a_2_3_front() -> None:
    cards = h("Ah 2c 3d 5s 6h 7d 8c 9d 9h Tc Jc Qs Kd")
    front, _, _ = found_split(N.THREE_STRAIGHTS, cards)
    assert {c.rank for c in front} == {Rank.ACE, Rank.TWO, Rank.THREE}


def test_three_straights_needs_the_ranks_not_the_suits() -> None:
    # A straight front in three suits; the natural is about ranks only.
    assert holds(N.THREE_STRAIGHTS, h("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"))
    # The 3-card straight does not wrap round: K-A-2 is not a straight.
    assert not holds(N.THREE_STRAIGHTS, h("Kh As 2d 3c 4s 5h 6d 7c 7s 8h 9d Tc Js"))


def test_straight_flush_rows_need_one_suit_each() -> None:
    # Suit counts 3,5,5 and rank counts make three straights, but the rows mix suits.
    cards = h("As 2s 3h 4h 5h 6h 7h 8s 9c Tc Jc Qc Kc")
    assert holds(N.THREE_STRAIGHTS, cards)
    assert not holds(N.THREE_STRAIGHT_FLUSHES, cards)


def test_dragon_is_not_twelve_same_suit_with_eleven() -> None:
    cards = h("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Kh Ad")
    assert holds(N.DRAGON, cards)
    assert not holds(N.TWELVE_SAME_SUIT, cards)
    assert not holds(N.THREE_FLUSHES, cards)


# ---------------------------------------------------------------------------------------------
# find_split.

SPLIT_EXAMPLES = [(n, t) for n, t in HOLDS if n in SPLIT_NATURALS]


@pytest.mark.parametrize(("natural", "text"), SPLIT_EXAMPLES, ids=lambda x: str(x)[:20])
def test_find_split_is_a_witness(natural: Natural, text: str) -> None:
    cards = h(text)
    assert_valid_split(natural, cards, find_split(natural, cards))


@pytest.mark.parametrize(
    ("natural", "text"), [(n, t) for n, t in NEAR_MISSES if n in SPLIT_NATURALS]
)
def test_find_split_none_when_not_held(natural: Natural, text: str) -> None:
    assert find_split(natural, h(text)) is None


def test_find_split_none_for_other_naturals() -> None:
    cards = h("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As")
    for natural in set(Natural) - SPLIT_NATURALS:
        assert find_split(natural, cards) is None
    assert find_split(N.DRAGON, cards) is None


def test_find_split_back_is_the_higher_row() -> None:
    cards = h("As 2s 3s 4h 5h 6h 7h 8h 9c Tc Jc Qc Kc")
    front, middle, back = found_split(N.THREE_STRAIGHT_FLUSHES, cards)
    assert [str(c) for c in front] == ["3s", "2s", "As"]
    assert [str(c) for c in middle] == ["8h", "7h", "6h", "5h", "4h"]
    assert [str(c) for c in back] == ["Kc", "Qc", "Jc", "Tc", "9c"]
    # The wheel is the lowest 5-card straight.
    cards = h("Ah 2h 3h 4h 5h 6s 7s 8s 9s Ts Jd Qd Kd")
    front, middle, back = found_split(N.THREE_STRAIGHT_FLUSHES, cards)
    assert [str(c) for c in middle] == ["5h", "4h", "3h", "2h", "Ah"]
    assert [str(c) for c in front] == ["Kd", "Qd", "Jd"]


# ---------------------------------------------------------------------------------------------
# Exhaustive shape checks for the count-based naturals.


def _partitions(total: int, largest: int) -> Iterator[tuple[int, ...]]:
    if total == 0:
        yield ()
        return
    for part in range(min(total, largest), 0, -1):
        for rest in _partitions(total - part, part):
            yield (part, *rest)


def _hand_from_rank_counts(counts: Sequence[int]) -> tuple[Card, ...]:
    ranks = list(Rank)
    suits = list(Suit)
    return tuple(Card(ranks[i], suits[j]) for i, k in enumerate(counts) for j in range(k))


RANK_SHAPES = [p for p in _partitions(13, 4) if len(p) <= 13]


@pytest.mark.parametrize("shape", RANK_SHAPES, ids=lambda p: "".join(map(str, p)))
def test_rank_count_naturals_against_reference(shape: tuple[int, ...]) -> None:
    """Every rank-count shape (partition of 13 into parts <= 4) against literal readings."""
    cards = _hand_from_rank_counts(shape)
    counts = list(shape)
    trips_and_pairs = any(
        c >= 3 and all((d - (3 if j == i else 0)) % 2 == 0 for j, d in enumerate(counts))
        for i, c in enumerate(counts)
    )
    assert holds(N.TRIPS_AND_FIVE_PAIRS, cards) == trips_and_pairs
    assert holds(N.SIX_PAIRS, cards) == (sum(c // 2 for c in counts) == 6)
    assert holds(N.FOUR_TRIPS, cards) == (sum(1 for c in counts if c >= 3) >= 4)
    assert holds(N.THREE_QUADS, cards) == (sorted(counts) == [1, 4, 4, 4])
    assert holds(N.DRAGON, cards) == (counts == [1] * 13)


def test_trips_and_five_pairs_exact_shapes() -> None:
    def shapes(natural: Natural) -> set[tuple[int, ...]]:
        return {s for s in RANK_SHAPES if holds(natural, _hand_from_rank_counts(s))}

    held = shapes(N.TRIPS_AND_FIVE_PAIRS)
    assert held == {(3, 2, 2, 2, 2, 2), (4, 3, 2, 2, 2), (4, 4, 3, 2)}
    assert shapes(N.FOUR_TRIPS) == {(3, 3, 3, 3, 1), (4, 3, 3, 3)}
    assert shapes(N.THREE_QUADS) == {(4, 4, 4, 1)}


SUIT_SHAPES = [counts for counts in product(range(14), repeat=4) if sum(counts) == 13]


def test_three_flushes_every_suit_count_vector() -> None:
    """All 560 suit-count vectors, against 'assign each row a suit' (4^3 assignments)."""
    ranks = list(Rank)
    suits = list(Suit)
    for counts in SUIT_SHAPES:
        cards = tuple(Card(ranks[i], suits[j]) for j, k in enumerate(counts) for i in range(k))
        expected = any(
            all(
                sum(size for size, s in zip((3, 5, 5), rows, strict=True) if s == j) == counts[j]
                for j in range(4)
            )
            for rows in product(range(4), repeat=3)
        )
        assert holds(N.THREE_FLUSHES, cards) == expected, counts
        if expected:
            assert_valid_split(N.THREE_FLUSHES, cards, find_split(N.THREE_FLUSHES, cards))
        assert holds(N.TWELVE_SAME_SUIT, cards) == (max(counts) >= 12)
        assert holds(N.THIRTEEN_SAME_SUIT, cards) == (max(counts) == 13)
        red = counts[suits.index(Suit.HEART)] + counts[suits.index(Suit.DIAMOND)]
        assert holds(N.ONE_COLOUR, cards) == (red in (0, 13))


# ---------------------------------------------------------------------------------------------
# Input validation and accepted forms.


def test_rejects_wrong_sizes_duplicates_and_non_cards() -> None:
    cards = h("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")
    with pytest.raises(ValueError):
        naturals_held(cards[:12])
    with pytest.raises(ValueError):
        naturals_held(cards + parse_cards("Ah"))
    with pytest.raises(ValueError):
        naturals_held(cards[:12] + cards[:1])
    with pytest.raises(ValueError):
        holds(N.DRAGON, [str(c) for c in cards])  # type: ignore[misc]  # texts: refused
    with pytest.raises(ValueError):
        find_split(N.THREE_STRAIGHTS, (*cards[:12], None))  # type: ignore[arg-type]  # refused
    for fn in PREDICATES.values():
        with pytest.raises(ValueError):
            fn(cards[:12])
    with pytest.raises(ValueError):
        holds("NOT_A_NATURAL", cards)
    with pytest.raises(ValueError):
        find_split("NOT_A_NATURAL", cards)


def test_accepts_any_sequence_and_natural_names() -> None:
    cards = h("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")
    assert holds("DRAGON", list(cards))
    assert naturals_held(list(reversed(cards))) == naturals_held(cards)
    facts = hand_facts(cards)
    assert hand_facts(facts) is facts
    assert facts.rank_counts == (1,) * 13
    # an iterator too, though the signature asks for a sequence
    assert find_split("THREE_STRAIGHTS", iter(cards)) is not None  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Property tests: the split naturals against the brute force over all 3 + 5 + 5 splits.

RANKS = list(Rank)
SUITS = list(Suit)


def _rank_at(value: int) -> Rank:
    return Rank.from_int(value)


def _straight_values(low: int, size: int) -> list[int]:
    return list(range(low, low + size))  # 1 = ace low, 14 = ace high


random_hands: Hands = st.permutations(DECK).map(lambda p: tuple(p[:13]))


@st.composite
def three_straights_hands(draw: st.DrawFn) -> tuple[Card, ...]:
    values = _straight_values(draw(st.integers(1, 12)), 3)
    values += _straight_values(draw(st.integers(1, 10)), 5)
    values += _straight_values(draw(st.integers(1, 10)), 5)
    by_rank = Counter(_rank_at(v) for v in values)
    cards: list[Card] = []
    for rank, k in by_rank.items():
        suits = draw(st.permutations(SUITS))
        cards += [Card(rank, s) for s in suits[:k]]
    return tuple(draw(st.permutations(cards)))


@st.composite
def three_flushes_hands(draw: st.DrawFn) -> tuple[Card, ...]:
    row_suits = [draw(st.sampled_from(SUITS)) for _ in range(3)]
    need: Counter[Suit] = Counter()
    for size, suit in zip((3, 5, 5), row_suits, strict=True):
        need[suit] += size
    cards: list[Card] = []
    for suit, k in need.items():
        ranks = draw(st.permutations(RANKS))
        cards += [Card(r, suit) for r in ranks[:k]]
    return tuple(draw(st.permutations(cards)))


@st.composite
def three_straight_flushes_hands(draw: st.DrawFn) -> tuple[Card, ...]:
    for _ in range(20):
        cards: list[Card] = []
        for size, top_low in ((3, 12), (5, 10), (5, 10)):
            suit = draw(st.sampled_from(SUITS))
            low = draw(st.integers(1, top_low))
            cards += [Card(_rank_at(v), suit) for v in _straight_values(low, size)]
        if len(set(cards)) == 13:
            return tuple(draw(st.permutations(cards)))
    return draw(three_straights_hands())


@st.composite
def mutated(draw: st.DrawFn, base: Hands) -> tuple[Card, ...]:
    """A hand from ``base`` with one or two cards swapped for cards from outside it."""
    cards = list(draw(base))
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, 12))
        outside = [c for c in DECK if c not in cards]
        cards[i] = draw(st.sampled_from(outside))
    return tuple(cards)


def hands_for(builder: Callable[[], Hands]) -> Hands:
    return st.one_of(builder(), mutated(builder()), random_hands)


PROPERTY_SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _cross_check(natural: Natural, cards: tuple[Card, ...]) -> None:
    reference = brute_split(cards, ROW_CHECK[natural])
    event(f"{natural.value} held: {reference is not None}")
    assert holds(natural, cards) == (reference is not None), [str(c) for c in cards]
    split = find_split(natural, cards)
    if reference is None:
        assert split is None
    else:
        assert_valid_split(natural, cards, split)


@PROPERTY_SETTINGS
@given(hands_for(three_straights_hands))
def test_three_straights_matches_brute_force(cards: tuple[Card, ...]) -> None:
    _cross_check(N.THREE_STRAIGHTS, cards)


@PROPERTY_SETTINGS
@given(hands_for(three_flushes_hands))
def test_three_flushes_matches_brute_force(cards: tuple[Card, ...]) -> None:
    _cross_check(N.THREE_FLUSHES, cards)


@PROPERTY_SETTINGS
@given(hands_for(three_straight_flushes_hands))
def test_three_straight_flushes_matches_brute_force(cards: tuple[Card, ...]) -> None:
    _cross_check(N.THREE_STRAIGHT_FLUSHES, cards)


@settings(max_examples=200, deadline=None)
@given(random_hands)
def test_naturals_held_is_the_union_of_predicates(cards: tuple[Card, ...]) -> None:
    held = naturals_held(cards)
    assert held == {n for n in Natural if holds(n, cards)}
    if N.THIRTEEN_SAME_SUIT in held:
        assert {N.DRAGON, N.TWELVE_SAME_SUIT} <= held
    if N.THREE_STRAIGHT_FLUSHES in held:
        assert {N.THREE_STRAIGHTS, N.THREE_FLUSHES} <= held
    if N.TRIPS_AND_FIVE_PAIRS in held or N.THREE_QUADS in held:
        assert N.SIX_PAIRS in held
