"""The facts every natural predicate reads (domain/natural_facts.py, RULES.md §8, §16.3): what
``hand_facts`` and ``multiset_facts`` say about 13 cards agrees with counting the cards one by
one, and a hand that is not 13 cards (or not cards) is refused with a message naming what is
wrong."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.cards.cards import DECK, Card, Rank, Suit, parse_cards
from cpsettle_service.domain.naturals.catalogue import Natural, find_split, holds, naturals_held
from cpsettle_service.domain.naturals.facts import (
    HandFacts,
    MultisetFacts,
    hand_facts,
    multiset_facts,
)

from .test_naturals import RANK_SHAPES, SUIT_SHAPES, _hand_from_rank_counts

RANKS = list(Rank)
SUITS = list(Suit)


def counted(cards: Sequence[Card]) -> dict[str, object]:
    """The facts, counted card by card (rank index 0..12 = 2..A, suits in ``Suit`` order)."""
    by_rank = Counter(RANKS.index(c.rank) for c in cards)
    by_suit = Counter(SUITS.index(c.suit) for c in cards)
    times = Counter(by_rank.values())
    return {
        "suit_counts": [by_suit[s] for s in range(4)],
        "rank_mask": sum(1 << r for r in by_rank),
        "rank_counts": tuple(by_rank[r] for r in range(13)),
        # how many ranks are held exactly k times, k >= 1 (the ranks not held are read by nothing)
        "held_k_times": tuple(times[k] for k in range(1, 7)),
    }


def read(facts: HandFacts) -> dict[str, object]:
    held = tuple(facts.count_histogram[1:])
    assert not any(held[6:])  # no rank is held more than six times (four and two jokers)
    hist = (held + (0,) * 6)[:6]
    return {
        "suit_counts": list(facts.suit_counts),
        "rank_mask": facts.rank_mask,
        "rank_counts": facts.rank_counts,
        "held_k_times": hist,
    }


def assert_facts(cards: Sequence[Card]) -> None:
    facts = hand_facts(cards)
    assert read(facts) == counted(cards), [str(c) for c in cards]
    assert facts.suit_masks == [
        sum(1 << RANKS.index(c.rank) for c in cards if c.suit is s) for s in SUITS
    ]
    assert tuple(facts) == tuple(cards)


@pytest.mark.parametrize("shape", RANK_SHAPES, ids=lambda p: "".join(map(str, p)))
def test_the_facts_of_every_rank_shape_are_the_counted_ones(shape: tuple[int, ...]) -> None:
    assert_facts(_hand_from_rank_counts(shape))


def test_the_facts_of_every_suit_shape_are_the_counted_ones() -> None:
    for counts in SUIT_SHAPES:
        assert_facts(
            tuple(Card(RANKS[i], SUITS[j]) for j, k in enumerate(counts) for i in range(k))
        )


@settings(max_examples=150, deadline=None)
@given(st.permutations(DECK).map(lambda p: tuple(p[:13])))
def test_the_facts_of_any_hand_are_the_counted_ones(cards: tuple[Card, ...]) -> None:
    assert_facts(cards)


# A hand whose jokers stand for cards it already holds (deck.jokerDuplicates): the cards repeat.
REPEATS = [
    "As As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th",  # five aces
    "As As As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts",  # six aces
    "2s 2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc",  # a deuce twice, no ace
    "7c 7c 8h 9d Tc Js Qh Kd Ac 8s 9s Ts Js",  # two repeats
    "2h 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh",  # one suit, a repeat
    "Ad Ad Kd Qd Jd Td 9d 8d 7d 6c 5c 4c 3c",
]


@pytest.mark.parametrize("text", REPEATS)
def test_the_facts_of_a_hand_with_repeats_are_the_counted_ones(text: str) -> None:
    cards = parse_cards(text)
    facts = multiset_facts(cards)
    assert isinstance(facts, MultisetFacts) and facts.suit_masks is None
    assert read(facts) == counted(cards)
    assert tuple(facts) == tuple(cards)


def test_distinct_cards_get_the_ordinary_facts_from_multiset_facts() -> None:
    cards = parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")
    facts = multiset_facts(cards)
    assert not isinstance(facts, MultisetFacts)
    assert read(facts) == counted(cards) and facts.suit_masks is not None


# ---------------------------------------------------------------------------------------------
# Refusals: the message says what is wrong (the count, the repeated card, the natural's name).

HAND = parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")


def test_a_hand_of_the_wrong_size_is_refused_with_its_size() -> None:
    with pytest.raises(ValueError, match=r"^a natural is a property of 13 cards, got 12$"):
        naturals_held(HAND[:12])
    with pytest.raises(ValueError, match=r"^a natural is a property of 13 cards, got 14$"):
        multiset_facts(HAND + HAND[:1])


def test_repeated_cards_are_refused_listing_the_cards() -> None:
    cards = HAND[:12] + HAND[:1]
    with pytest.raises(ValueError) as e:
        naturals_held(cards)
    assert str(e.value) == (
        "the 13 cards must be distinct, got 2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc 2s"
    )


def test_what_is_not_a_card_is_refused_naming_the_cards() -> None:
    with pytest.raises(ValueError) as e:
        hand_facts((*HAND[:12], "Ah"))  # type: ignore[arg-type]  # a text: refused
    assert str(e.value).startswith("not a Card among the cards: [") and "'Ah'" in str(e.value)


def test_an_unknown_natural_is_refused_by_its_name() -> None:
    with pytest.raises(ValueError, match=r"^unknown natural 'SEVEN_PAIRS'$"):
        holds("SEVEN_PAIRS", HAND)
    with pytest.raises(ValueError, match=r"^unknown natural 'SEVEN_PAIRS'$"):
        find_split("SEVEN_PAIRS", HAND)
    assert holds(Natural.DRAGON, HAND)
