"""What the natural predicates read: the facts of 13 cards, computed once, and the tables of
straight splits built at import (RULES.md §8).

``hand_facts`` builds the facts of 13 distinct standard cards in one pass (a 13-bit rank mask
per suit; the rank-count histogram and the packed rank counts follow by bit arithmetic).
``multiset_facts`` builds the same facts for 13 cards that may repeat a card (a hand whose jokers
stand for cards already at the table, RULES.md §16.3); only the count facts are then meaningful, and
the row checks search the splits instead of reading the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from ..cards.cards import Card, Rank, Suit

__all__ = [
    "HandFacts",
    "hand_facts",
    "multiset_facts",
    "MultisetFacts",
    "STRAIGHTS_3",
    "STRAIGHTS_5",
    "THREE_STRAIGHTS_BY_KEY",
    "SF_BY_SIZE",
    "THREE_FLUSH_SHAPES",
    "RANK_INDEX",
    "SUIT_INDEX",
]

# ---------------------------------------------------------------------------------------------
# Rank / suit indexing. Rank index 0..12 = 2..A (so the ace is index 12); suit index 0..3 in
# ``Suit`` order (s h d c). Dict lookups keyed by the StrEnum members use str hashing (fast).

RANK_INDEX: dict[Rank, int] = {r: i for i, r in enumerate(Rank)}
SUIT_INDEX: dict[Suit, int] = {s: i for i, s in enumerate(Suit)}
_ACE = 12


def _straight(low_value: int, size: int) -> tuple[int, ...]:
    """Rank indices of the straight of ``size`` cards from ``low_value`` up, top card first.

    ``low_value`` 1 is the ace playing low (A-2-3, the wheel A-2-3-4-5).
    """
    values = range(low_value + size - 1, low_value - 1, -1)
    return tuple(_ACE if v in (1, 14) else v - 2 for v in values)


# 3-card straights A-2-3 … Q-K-A (12), 5-card straights A-2-3-4-5 … T-J-Q-K-A (10), lowest first.
STRAIGHTS_3: tuple[tuple[int, ...], ...] = tuple(_straight(v, 3) for v in range(1, 13))
STRAIGHTS_5: tuple[tuple[int, ...], ...] = tuple(_straight(v, 5) for v in range(1, 11))


def _mask(ranks: tuple[int, ...]) -> int:
    m = 0
    for r in ranks:
        m |= 1 << r
    return m


# Rank counts packed in an int, 3 bits per rank (counts 0..4 fit): key = sum(c[r] << 3*r).
def _count_key(ranks: Sequence[int]) -> int:
    k = 0
    for r in ranks:
        k += 1 << (3 * r)
    return k


# Every rank-count vector that splits into a 3-card straight and two 5-card straights -> one
# witness (front, middle, back) of rank-index tuples; the back is the higher 5-card straight.
# 12 * 55 = 660 combinations, fewer distinct keys.
THREE_STRAIGHTS_BY_KEY: dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
for _s3 in STRAIGHTS_3:
    for _i, _lo in enumerate(STRAIGHTS_5):
        for _hi in STRAIGHTS_5[_i:]:
            THREE_STRAIGHTS_BY_KEY.setdefault(_count_key(_s3 + _lo + _hi), (_s3, _lo, _hi))

# For one suit holding ``size`` cards, the rank masks that are a disjoint union of straights
# fitting the 3 + 5 + 5 shape: size 3 -> a 3-straight; 5 -> a 5-straight; 8 -> 3 + 5;
# 10 -> 5 + 5; 13 -> 3 + 5 + 5. Value: the straights, as rank-index tuples (3-card first, then
# 5-card ones lowest first). Any other size cannot be part of three straight flushes.
SF_BY_SIZE: dict[int, dict[int, tuple[tuple[int, ...], ...]]] = {
    size: {} for size in (3, 5, 8, 10, 13)
}
for _s3 in STRAIGHTS_3:
    SF_BY_SIZE[3].setdefault(_mask(_s3), (_s3,))
for _i, _lo in enumerate(STRAIGHTS_5):
    SF_BY_SIZE[5].setdefault(_mask(_lo), (_lo,))
    for _s3 in STRAIGHTS_3:
        if not _mask(_s3) & _mask(_lo):
            SF_BY_SIZE[8].setdefault(_mask(_s3) | _mask(_lo), (_s3, _lo))
    for _hi in STRAIGHTS_5[_i + 1 :]:
        if _mask(_lo) & _mask(_hi):
            continue
        SF_BY_SIZE[10].setdefault(_mask(_lo) | _mask(_hi), (_lo, _hi))
        for _s3 in STRAIGHTS_3:
            if not _mask(_s3) & (_mask(_lo) | _mask(_hi)):
                _key = _mask(_s3) | _mask(_lo) | _mask(_hi)
                SF_BY_SIZE[13].setdefault(_key, (_s3, _lo, _hi))

# The four suit counts, sorted, when the non-zero ones partition into parts 3, 5, 5.
THREE_FLUSH_SHAPES: frozenset[tuple[int, ...]] = frozenset(
    {(0, 0, 0, 13), (0, 0, 3, 10), (0, 0, 5, 8), (0, 3, 5, 5)}
)


# ---------------------------------------------------------------------------------------------
# Facts computed once per hand.


class HandFacts(tuple[Card, ...]):
    """The 13 cards (it *is* the tuple of the cards) plus the counts the predicates read.

    - ``suit_masks``: 4 ints in ``Suit`` order (s h d c); bit ``r`` is set when the suit holds
      rank index ``r`` (0..12 = 2..A).
    - ``suit_counts``: 4 ints, cards per suit, ``Suit`` order.
    - ``rank_mask``: bit ``r`` set when any card has rank index ``r``.
    - ``count_histogram``: 5 ints, ``count_histogram[k]`` = how many ranks are held exactly
      ``k`` times (``sum == 13`` ranks, ``sum(k * h[k]) == 13`` cards).
    - ``count_key``: the rank counts packed 3 bits per rank (``sum(c[r] << 3 * r)``).
    - ``rank_counts`` (computed on first use): 13 ints, cards per rank index.
    """

    suit_masks: list[int]
    suit_counts: list[int]
    rank_mask: int
    count_histogram: tuple[int, int, int, int, int]
    count_key: int

    @cached_property
    def rank_counts(self) -> tuple[int, ...]:
        return tuple((self.count_key >> (3 * r)) & 7 for r in range(13))


# _SPREAD[mask] = the 13-bit rank mask spread to 3 bits per rank (a count of 1 per rank held).
_SPREAD: list[int] = [0] * (1 << 13)
for _m in range(1, 1 << 13):
    _low = _m & -_m
    _SPREAD[_m] = _SPREAD[_m ^ _low] + (1 << (3 * (_low.bit_length() - 1)))
_RANK_BIT: dict[Rank, int] = {r: 1 << i for r, i in RANK_INDEX.items()}


def hand_facts(cards: Sequence[Card]) -> HandFacts:
    """The ``HandFacts`` of 13 distinct cards (returned as is when already computed, also the
    ``multiset_facts`` of a hand with repeats).

    Raises ``ValueError`` unless ``cards`` are exactly 13 distinct ``Card``s.
    """
    if isinstance(cards, HandFacts):
        return cards
    facts = HandFacts(cards)
    if len(facts) != 13:
        raise ValueError(f"a natural is a property of 13 cards, got {len(facts)}")
    masks = [0, 0, 0, 0]
    rank_bit = _RANK_BIT
    suit_index = SUIT_INDEX
    try:
        for card in facts:
            masks[suit_index[card.suit]] |= rank_bit[card.rank]
    except (AttributeError, KeyError, TypeError):
        raise ValueError(f"not a Card among the cards: {list(facts)!r}") from None
    a, b, c, d = masks
    suit_counts = [a.bit_count(), b.bit_count(), c.bit_count(), d.bit_count()]
    if suit_counts[0] + suit_counts[1] + suit_counts[2] + suit_counts[3] != 13:
        raise ValueError("the 13 cards must be distinct, got " + " ".join(map(str, facts)))
    # Ranks held at least k times, as masks: at least k of the four suit masks have the bit.
    ab, cd = a & b, c & d
    at_least_1 = a | b | c | d
    at_least_2 = ab | cd | ((a | b) & (c | d))
    at_least_3 = (ab & (c | d)) | (cd & (a | b))
    at_least_4 = ab & cd
    n1, n2, n3, n4 = (
        at_least_1.bit_count(),
        at_least_2.bit_count(),
        at_least_3.bit_count(),
        at_least_4.bit_count(),
    )
    facts.suit_masks = masks
    facts.suit_counts = suit_counts
    facts.rank_mask = at_least_1
    facts.count_histogram = (13 - n1, n1 - n2, n2 - n3, n3 - n4, n4)
    spread = _SPREAD
    facts.count_key = spread[a] + spread[b] + spread[c] + spread[d]
    return facts


class MultisetFacts(HandFacts):
    """The count facts of 13 cards that may repeat a card (jokers standing for duplicates).

    ``suit_masks`` is ``None``: a mask cannot say that a card is held twice, so the row checks
    search the splits. ``count_histogram`` runs to 6 (four cards of a rank plus two jokers).
    """


def multiset_facts(cards: Sequence[Card]) -> HandFacts:
    """The facts of 13 standard cards, repeats allowed: ``hand_facts`` when they are distinct."""
    cards = tuple(cards)
    if len(set(cards)) == len(cards):
        return hand_facts(cards)
    if len(cards) != 13:
        raise ValueError(f"a natural is a property of 13 cards, got {len(cards)}")
    facts = MultisetFacts(cards)
    rank_counts = [0] * 13
    suit_counts = [0, 0, 0, 0]
    for card in cards:
        rank_counts[RANK_INDEX[card.rank]] += 1
        suit_counts[SUIT_INDEX[card.suit]] += 1
    histogram = [0] * 7
    for count in rank_counts:
        histogram[count] += 1
    facts.suit_masks = None  # type: ignore[assignment]
    facts.suit_counts = suit_counts
    facts.rank_mask = sum(1 << r for r, count in enumerate(rank_counts) if count)
    facts.count_histogram = tuple(histogram)  # type: ignore[assignment]
    facts.count_key = sum(count << (3 * r) for r, count in enumerate(rank_counts))
    return facts


del _s3, _i, _lo, _hi, _m, _low, _key
