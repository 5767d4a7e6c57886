"""Naturals: special 13-card holdings (RULES.md §8, §14.13).

A natural is a property of the 13 cards, not of the rows. Each natural is one small predicate over
13 cards, registered in ``PREDICATES``. To add a natural: add a ``Natural`` member (with its label
in ``_LABELS``), write a predicate ``def _my_natural(cards) -> bool`` that reads the precomputed
``HandFacts`` of the cards (``facts = hand_facts(cards)``), add one line to ``PREDICATES``, and a
test.

The count rules the predicates implement (``c[r]`` = how many cards of rank ``r`` the hand has,
``n[s]`` = how many cards of suit ``s``; always ``sum(c) == sum(n) == 13``):

========================  ==============================================================
THIRTEEN_SAME_SUIT        ``max(n) == 13`` (such a hand is necessarily also a DRAGON and
                          a TWELVE_SAME_SUIT)
DRAGON                    every ``c[r] == 1`` (all 13 ranks present)
TWELVE_SAME_SUIT          ``max(n) >= 12`` (RULES.md §14.13: *at least* 12)
TRIPS_AND_FIVE_PAIRS      exactly one rank has an odd count, and that count is 3 (see
                          ``_trips_and_five_pairs``)
FOUR_TRIPS                at least four ranks with ``c[r] >= 3`` (with 13 cards: 3,3,3,3,1 or
                          4,3,3,3)
THREE_STRAIGHTS           the rank counts are the sum of a 3-card straight and two 5-card
                          straights (table lookup, see ``_three_straights``)
THREE_FLUSHES             the non-zero suit counts, sorted, are one of (13), (8,5), (10,3),
                          (5,5,3)
SIX_PAIRS                 ``sum(c[r] // 2) == 6`` (equivalently: exactly one rank has an odd
                          count)
THREE_STRAIGHT_FLUSHES    each suit's set of ranks is a disjoint union of straights whose
                          sizes, over all suits, are 3, 5, 5 (table lookup per suit)
THREE_QUADS               exactly three ranks with ``c[r] == 4`` (the 13th card is then
                          necessarily of another rank)
TWELVE_ROYALS             every card is J, Q, K or A
ALL_HIGH                  every card is 8 or higher (ace high)
ALL_LOW                   every card is 8 or lower, the ace counting high (an ace spoils it)
ONE_COLOUR                ``n[h] + n[d] == 13`` or ``n[s] + n[c] == 13``
========================  ==============================================================

Straights (3-card and 5-card) are consecutive ranks; the ace plays high (Q-K-A, T-J-Q-K-A) or low
(A-2-3, A-2-3-4-5). The wheel always counts here, whatever the profile's ``wheel`` setting
(RULES.md §14.13), because the wheel setting only orders straights, it never unmakes one.

Performance: ``naturals_held`` computes the ``HandFacts`` once (one pass over the 13 cards builds a
13-bit rank mask per suit; the rank-count histogram and the packed rank counts follow by bit
arithmetic) and every predicate is then O(1) arithmetic or one dict/set lookup in a table built at
import time. The split naturals never search the 3 + 5 + 5 splits of the cards: three straights
is a lookup of the packed rank counts among the sums of three straights, three straight flushes a
lookup of each suit's rank mask among the disjoint unions of straights of that suit's size.

>>> from cpsettle_service.domain.cards import parse_cards
>>> hand = parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")
>>> sorted(naturals_held(hand))
[<Natural.DRAGON: 'DRAGON'>, <Natural.THREE_STRAIGHTS: 'THREE_STRAIGHTS'>]
>>> Natural.SIX_PAIRS.label
'Six pairs'
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from typing import Callable, Sequence

from .cards import Card, Rank, Suit

__all__ = [
    "Natural",
    "HandFacts",
    "hand_facts",
    "PREDICATES",
    "SPLIT_NATURALS",
    "holds",
    "naturals_held",
    "find_split",
]


class Natural(StrEnum):
    """A natural of the catalogue (RULES.md §8); the value is the name."""

    THIRTEEN_SAME_SUIT = "THIRTEEN_SAME_SUIT"
    DRAGON = "DRAGON"
    TWELVE_SAME_SUIT = "TWELVE_SAME_SUIT"
    TRIPS_AND_FIVE_PAIRS = "TRIPS_AND_FIVE_PAIRS"
    FOUR_TRIPS = "FOUR_TRIPS"
    THREE_STRAIGHTS = "THREE_STRAIGHTS"
    THREE_FLUSHES = "THREE_FLUSHES"
    SIX_PAIRS = "SIX_PAIRS"
    THREE_STRAIGHT_FLUSHES = "THREE_STRAIGHT_FLUSHES"
    THREE_QUADS = "THREE_QUADS"
    TWELVE_ROYALS = "TWELVE_ROYALS"
    ALL_HIGH = "ALL_HIGH"
    ALL_LOW = "ALL_LOW"
    ONE_COLOUR = "ONE_COLOUR"

    @property
    def label(self) -> str:
        """A readable name: 'Dragon', 'Six pairs', 'Three straight flushes' …"""
        return _LABELS[self]


_LABELS: dict[Natural, str] = {
    Natural.THIRTEEN_SAME_SUIT: "Thirteen of the same suit",
    Natural.DRAGON: "Dragon",
    Natural.TWELVE_SAME_SUIT: "Twelve of the same suit",
    Natural.TRIPS_AND_FIVE_PAIRS: "Three of a kind and five pairs",
    Natural.FOUR_TRIPS: "Four threes of a kind",
    Natural.THREE_STRAIGHTS: "Three straights",
    Natural.THREE_FLUSHES: "Three flushes",
    Natural.SIX_PAIRS: "Six pairs",
    Natural.THREE_STRAIGHT_FLUSHES: "Three straight flushes",
    Natural.THREE_QUADS: "Three fours of a kind",
    Natural.TWELVE_ROYALS: "Twelve royals",
    Natural.ALL_HIGH: "All high",
    Natural.ALL_LOW: "All low",
    Natural.ONE_COLOUR: "One colour",
}

# ---------------------------------------------------------------------------------------------
# Rank / suit indexing. Rank index 0..12 = 2..A (so the ace is index 12); suit index 0..3 in
# ``Suit`` order (s h d c). Dict lookups keyed by the StrEnum members use str hashing (fast).

_RANK_INDEX: dict[Rank, int] = {r: i for i, r in enumerate(Rank)}
_SUIT_INDEX: dict[Suit, int] = {s: i for i, s in enumerate(Suit)}
_RANKS: tuple[Rank, ...] = tuple(Rank)
_SUITS: tuple[Suit, ...] = tuple(Suit)
_ACE = 12
_ALL_RANKS_MASK = (1 << 13) - 1
# Bits of the ranks 2..7 and 9..A, and of 2..T.
_BELOW_EIGHT_MASK = sum(1 << _RANK_INDEX[r] for r in _RANKS if r.value_int < 8)
_ABOVE_EIGHT_MASK = sum(1 << _RANK_INDEX[r] for r in _RANKS if r.value_int > 8)
_BELOW_JACK_MASK = sum(1 << _RANK_INDEX[r] for r in _RANKS if r.value_int < 11)
_HEARTS, _DIAMONDS = _SUIT_INDEX[Suit.HEART], _SUIT_INDEX[Suit.DIAMOND]


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
_THREE_STRAIGHTS: dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
for _s3 in STRAIGHTS_3:
    for _i, _lo in enumerate(STRAIGHTS_5):
        for _hi in STRAIGHTS_5[_i:]:
            _THREE_STRAIGHTS.setdefault(_count_key(_s3 + _lo + _hi), (_s3, _lo, _hi))

# For one suit holding ``size`` cards, the rank masks that are a disjoint union of straights
# fitting the 3 + 5 + 5 shape: size 3 -> a 3-straight; 5 -> a 5-straight; 8 -> 3 + 5;
# 10 -> 5 + 5; 13 -> 3 + 5 + 5. Value: the straights, as rank-index tuples (3-card first, then
# 5-card ones lowest first). Any other size cannot be part of three straight flushes.
_SF_BY_SIZE: dict[int, dict[int, tuple[tuple[int, ...], ...]]] = {
    size: {} for size in (3, 5, 8, 10, 13)
}
for _s3 in STRAIGHTS_3:
    _SF_BY_SIZE[3].setdefault(_mask(_s3), (_s3,))
for _i, _lo in enumerate(STRAIGHTS_5):
    _SF_BY_SIZE[5].setdefault(_mask(_lo), (_lo,))
    for _s3 in STRAIGHTS_3:
        if not _mask(_s3) & _mask(_lo):
            _SF_BY_SIZE[8].setdefault(_mask(_s3) | _mask(_lo), (_s3, _lo))
    for _hi in STRAIGHTS_5[_i + 1 :]:
        if _mask(_lo) & _mask(_hi):
            continue
        _SF_BY_SIZE[10].setdefault(_mask(_lo) | _mask(_hi), (_lo, _hi))
        for _s3 in STRAIGHTS_3:
            if not _mask(_s3) & (_mask(_lo) | _mask(_hi)):
                _key = _mask(_s3) | _mask(_lo) | _mask(_hi)
                _SF_BY_SIZE[13].setdefault(_key, (_s3, _lo, _hi))

# The four suit counts, sorted, when the non-zero ones partition into parts 3, 5, 5.
_THREE_FLUSH_SHAPES: frozenset[tuple[int, ...]] = frozenset(
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
_RANK_BIT: dict[Rank, int] = {r: 1 << i for r, i in _RANK_INDEX.items()}


def hand_facts(cards: Sequence[Card]) -> HandFacts:
    """The ``HandFacts`` of 13 distinct cards (returned as is when already computed).

    Raises ``ValueError`` unless ``cards`` are exactly 13 distinct ``Card``s.
    """
    if type(cards) is HandFacts:
        return cards
    facts = HandFacts(cards)
    if len(facts) != 13:
        raise ValueError(f"a natural is a property of 13 cards, got {len(facts)}")
    masks = [0, 0, 0, 0]
    rank_bit = _RANK_BIT
    suit_index = _SUIT_INDEX
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


# ---------------------------------------------------------------------------------------------
# The predicates: one per natural, each over 13 cards.


def _thirteen_same_suit(cards: Sequence[Card]) -> bool:
    """All 13 cards of one suit."""
    return max(hand_facts(cards).suit_counts) == 13


def _dragon(cards: Sequence[Card]) -> bool:
    """One card of each of the 13 ranks."""
    return hand_facts(cards).rank_mask == _ALL_RANKS_MASK


def _twelve_same_suit(cards: Sequence[Card]) -> bool:
    """At least 12 cards of one suit (RULES.md §14.13)."""
    return max(hand_facts(cards).suit_counts) >= 12


def _trips_and_five_pairs(cards: Sequence[Card]) -> bool:
    """A three of a kind, and the other 10 cards form five pairs (a quad counts as two pairs).

    The rule on rank counts: exactly one rank has an odd count, and that count is 3.
    Why: the trips must come from a rank held 3 times (trips taken from a quad would leave a
    single of that rank, which cannot pair — there is no fifth card of a rank); the other ten
    cards pair up exactly when every other rank is held an even number of times (2 or 4). So
    counts like {3,2,2,2,2,2}, {3,4,2,2,2}, {3,4,4,2} hold it; {3,3,…} (two trips: there are
    then at least three odd counts), {4,4,4,1} and {3,2,2,2,2,1,1} do not.
    """
    h = hand_facts(cards).count_histogram
    return h[3] == 1 and h[1] == 0


def _four_trips(cards: Sequence[Card]) -> bool:
    """Four ranks held three or four times (3,3,3,3,1 or 4,3,3,3)."""
    h = hand_facts(cards).count_histogram
    return h[3] + h[4] >= 4


def _three_straights(cards: Sequence[Card]) -> bool:
    """The cards split into a 3-card straight and two 5-card straights (suits irrelevant).

    Only the rank counts matter, so the hand holds it exactly when its packed rank-count vector
    is one of the (at most 660) sums "3-straight + 5-straight + 5-straight", tabulated at import.
    """
    return hand_facts(cards).count_key in _THREE_STRAIGHTS


def _three_flushes(cards: Sequence[Card]) -> bool:
    """The cards split into a 3-card flush and two 5-card flushes.

    Each row is one suit, so the suit counts must partition into parts 3, 5, 5: the non-zero
    counts, sorted, are (13), (10, 3), (8, 5) or (5, 5, 3).
    """
    return tuple(sorted(hand_facts(cards).suit_counts)) in _THREE_FLUSH_SHAPES


def _six_pairs(cards: Sequence[Card]) -> bool:
    """Six pairs and one odd card: ``sum(count // 2) == 6`` over the ranks.

    A quad counts as two pairs and trips as a pair plus a single; with 13 cards this is the same
    as "exactly one rank has an odd count".
    """
    h = hand_facts(cards).count_histogram
    return h[2] + h[3] + 2 * h[4] == 6


def _three_straight_flushes(cards: Sequence[Card]) -> bool:
    """The cards split into a 3-card straight flush and two 5-card straight flushes.

    Each row is one suit, so each suit's cards (a set of ranks) must be a disjoint union of
    straights, and over all suits the straights are one 3-card and two 5-card ones. A suit with
    n cards must therefore be: n=3 a 3-straight, 5 a 5-straight, 8 a 3- plus a 5-straight,
    10 two 5-straights, 13 all three (any other n fails). Counts from {3, 5, 8, 10, 13} that sum
    to 13 always use exactly the parts 3, 5, 5, so the per-suit table lookups decide it.
    """
    facts = hand_facts(cards)
    for n, mask in zip(facts.suit_counts, facts.suit_masks):
        if n and mask not in _SF_BY_SIZE.get(n, ()):
            return False
    return True


def _three_quads(cards: Sequence[Card]) -> bool:
    """Three fours of a kind and one odd card."""
    return hand_facts(cards).count_histogram[4] == 3


def _twelve_royals(cards: Sequence[Card]) -> bool:
    """Every card is a J, Q, K or A."""
    return not hand_facts(cards).rank_mask & _BELOW_JACK_MASK


def _all_high(cards: Sequence[Card]) -> bool:
    """Every card is 8 or higher (the ace is high)."""
    return not hand_facts(cards).rank_mask & _BELOW_EIGHT_MASK


def _all_low(cards: Sequence[Card]) -> bool:
    """Every card is 8 or lower; the ace counts high, so an ace spoils it (RULES.md §14.13)."""
    return not hand_facts(cards).rank_mask & _ABOVE_EIGHT_MASK


def _one_colour(cards: Sequence[Card]) -> bool:
    """All 13 cards red (hearts, diamonds) or all 13 black (spades, clubs)."""
    n = hand_facts(cards).suit_counts
    return n[_HEARTS] + n[_DIAMONDS] in (0, 13)


PREDICATES: dict[Natural, Callable[[Sequence[Card]], bool]] = {
    Natural.THIRTEEN_SAME_SUIT: _thirteen_same_suit,
    Natural.DRAGON: _dragon,
    Natural.TWELVE_SAME_SUIT: _twelve_same_suit,
    Natural.TRIPS_AND_FIVE_PAIRS: _trips_and_five_pairs,
    Natural.FOUR_TRIPS: _four_trips,
    Natural.THREE_STRAIGHTS: _three_straights,
    Natural.THREE_FLUSHES: _three_flushes,
    Natural.SIX_PAIRS: _six_pairs,
    Natural.THREE_STRAIGHT_FLUSHES: _three_straight_flushes,
    Natural.THREE_QUADS: _three_quads,
    Natural.TWELVE_ROYALS: _twelve_royals,
    Natural.ALL_HIGH: _all_high,
    Natural.ALL_LOW: _all_low,
    Natural.ONE_COLOUR: _one_colour,
}
"""One predicate per natural; each takes the 13 cards (or their ``HandFacts``)."""


def holds(natural: Natural | str, cards: Sequence[Card]) -> bool:
    """Whether the 13 cards make ``natural``. ``ValueError`` for an unknown natural or bad cards."""
    try:
        predicate = PREDICATES[Natural(natural)]
    except (ValueError, KeyError):
        raise ValueError(f"unknown natural {natural!r}") from None
    return predicate(hand_facts(cards))


def naturals_held(cards: Sequence[Card]) -> frozenset[Natural]:
    """Every natural of the catalogue the 13 cards make (facts computed once)."""
    facts = hand_facts(cards)
    return frozenset([n for n, predicate in PREDICATES.items() if predicate(facts)])


# ---------------------------------------------------------------------------------------------
# Witness splits for the three split naturals.

Split = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]

SPLIT_NATURALS: frozenset[Natural] = frozenset(
    {Natural.THREE_STRAIGHTS, Natural.THREE_FLUSHES, Natural.THREE_STRAIGHT_FLUSHES}
)


def _by_rank_desc(cards: Sequence[Card]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=lambda c: (-_RANK_INDEX[c.rank], _SUIT_INDEX[c.suit])))


def _split_three_straights(facts: HandFacts) -> Split | None:
    witness = _THREE_STRAIGHTS.get(facts.count_key)
    if witness is None:
        return None
    pool: list[list[Card]] = [[] for _ in range(13)]
    for card in _by_rank_desc(facts):
        pool[_RANK_INDEX[card.rank]].append(card)
    front, middle, back = (tuple(pool[r].pop(0) for r in straight) for straight in witness)
    return front, middle, back


def _split_three_flushes(facts: HandFacts) -> Split | None:
    if not _three_flushes(facts):
        return None
    by_suit = [[c for c in _by_rank_desc(facts) if c.suit is s] for s in _SUITS]
    # Each suit holding n cards gives 5-card rows while it has more than 3 left, then the 3-card
    # row if 3 are left: 13 -> 5 + 5 + 3, 10 -> 5 + 5, 8 -> 5 + 3, 5 -> 5, 3 -> 3.
    fives: list[tuple[Card, ...]] = []
    fronts: list[tuple[Card, ...]] = []
    for group in by_suit:
        while len(group) > 3:
            fives.append(tuple(group[:5]))
            group = group[5:]
        if group:
            fronts.append(tuple(group))
    (front,) = fronts
    middle, back = sorted(fives, key=lambda row: [_RANK_INDEX[c.rank] for c in row])
    return front, middle, back


def _split_three_straight_flushes(facts: HandFacts) -> Split | None:
    if not _three_straight_flushes(facts):
        return None
    card_at = {(_RANK_INDEX[c.rank], _SUIT_INDEX[c.suit]): c for c in facts}
    threes: list[tuple[Card, ...]] = []
    fives: list[tuple[int, tuple[Card, ...]]] = []
    for s, (n, mask) in enumerate(zip(facts.suit_counts, facts.suit_masks)):
        if not n:
            continue
        for straight in _SF_BY_SIZE[n][mask]:
            row = tuple(card_at[r, s] for r in straight)
            if len(row) == 3:
                threes.append(row)
            else:
                fives.append((_STRAIGHT_5_ORDER[straight], row))
    (front,) = threes
    (_, middle), (_, back) = sorted(fives, key=lambda item: item[0])
    return front, middle, back


_STRAIGHT_5_ORDER: dict[tuple[int, ...], int] = {s: i for i, s in enumerate(STRAIGHTS_5)}

_SPLITTERS: dict[Natural, Callable[[HandFacts], Split | None]] = {
    Natural.THREE_STRAIGHTS: _split_three_straights,
    Natural.THREE_FLUSHES: _split_three_flushes,
    Natural.THREE_STRAIGHT_FLUSHES: _split_three_straight_flushes,
}


def find_split(natural: Natural | str, cards: Sequence[Card]) -> Split | None:
    """A (front 3, middle 5, back 5) split of the 13 cards witnessing a split natural.

    For ``THREE_STRAIGHTS`` / ``THREE_FLUSHES`` / ``THREE_STRAIGHT_FLUSHES``: the front is the
    3-card row, the back the higher of the two 5-card rows (the wheel counting lowest); cards in
    each row from the top (the wheel as 5-4-3-2-A). ``None`` when the cards do not make it, or
    for any other natural. ``ValueError`` for an unknown natural or bad cards.
    """
    try:
        natural = Natural(natural)
    except ValueError:
        raise ValueError(f"unknown natural {natural!r}") from None
    facts = hand_facts(cards)
    splitter = _SPLITTERS.get(natural)
    return None if splitter is None else splitter(facts)


del _s3, _i, _lo, _hi, _m, _low, _key
