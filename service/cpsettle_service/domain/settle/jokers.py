"""Jokers (RULES.md §16.3): what a joker may stand for, and the one assignment a hand settles with.

A table whose profile's deck holds jokers (``deck.jokers`` 1 or 2) may hold that many ``Xj`` in
all. Each hand is resolved on its own, once:

- *Allowed cards.* Without ``deck.jokerDuplicates``, a joker stands for a standard card held by
  no player and not among the dead cards, and the two jokers of one hand for two different
  cards; with it, for any of the 52 cards (so five of a kind can occur).
- *An arranged hand* takes, among all allowed assignments, the one that (1) does not foul,
  (2) gives the highest royalty total under the profile, (3) gives the strongest back, then
  middle, then front; among assignments still equal, the highest card for the first joker
  (front, middle, back; left to right), by rank then by the profile's suit order, then for the
  second. The hand fouls only if every assignment fouls.
- *A natural* holds if some allowed assignment makes it; the assignment kept is the one making
  it whose 13 ranks, sorted from the top, are highest (what ``equalRank: COMPARE_CARDS``
  compares), then the highest card for the first joker as above.

How, without trying every assignment:

*Arranged hands.* The rows are independent but for the foul order (and, without duplicates,
two jokers in two rows standing for different cards). A row's hand with its jokers depends only
on their ranks and on whether they complete a flush, so each row holding a joker is evaluated
once per rank (and once for the card that makes its flush), by summing card codes
(``hands.hand_of_codes``); with both jokers in one row, once per pair of ranks. The fills are
grouped by what the score and the foul check can tell apart: the hand and, for a straight,
flush or straight flush in the middle or back, the suit of its highest card (the only thing the
suit tie-break reads of the cards). Each group keeps its two best joker cards in the tie-break
order (two, for the other row's joker may need the best). The combinations of the rows' groups
are scored as if clean and taken best first: the first that does not foul is the answer (every
fouled score is below every clean one), so the foul check usually runs once; when all foul,
the best fouled score wins.

*Naturals.* The 13 resolved ranks sorted from the top compare as the jokers' highest rank, then
their other rank (the other 11 or 12 cards are the same), so the search runs over the jokers'
ranks from the top and stops at the first choice that works; within it, the first joker's card
by the suit order, then the second's. A definition's clauses read the rank counts
(``rankGroups``, ``distinctRanks``, the rank ranges: decided per choice of the jokers' ranks),
the suit counts (``sameSuit``, ``sameColour``, ``colourSplit``: per choice of their suits) or
the rows; the ``rows`` clause is ``naturals.rows``' constraint search, run once per hand and
clause with the jokers as wildcards, which yields the sets of cards they may stand for. What is
left is integer arithmetic over 52-bit card masks.

Cost, for one hand: an arranged hand with one joker evaluates at most 26 rows (13 ranks, with
and without the flush) and combines at most 65 groups with the fixed rows (13 ranks, each the
flush card and up to four suits of a straight's top card; in practice under 30); two jokers in
two rows evaluate at most 2 x 26 rows and combine at most 65 x 65 groups; two in one row
evaluate at most 91 x 2 hands and look at the at most 16 pairs of cards of each pair of ranks.
The combinations are sorted, then the foul check runs until one is clean. A natural costs one
``naturals.rows`` search per distinct ``rows`` clause of the profile (shared by the naturals
that use it, and skipped for a natural whose rank or suit clauses no choice of the jokers
keeps; at most about 6,000 steps of a few integer operations each), then at most 52 first
cards and 91 choices of the jokers' ranks, each a few integer operations. The worst hand
bench/bench_jokers.py finds (two duplicating jokers, 32 house naturals over every ``rows``
clause) costs a few milliseconds. A table without jokers never comes here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from ..cards.cards import CARD_BY_SPELLING, CARD_INDEX, DECK, JOKER, Card, Suit
from ..cards.hands import (
    CARD_CODES,
    HandClass,
    HandRank,
    Wheel,
    evaluate_five,
    evaluate_three,
    evaluate_with_repeats,
    hand_of_codes,
)
from ..cards.rows import ROWS
from ..naturals.rows import ALL_CARDS, RANK_CARDS, SUIT_CARDS, fills
from ..naturals.vocabulary import DefinitionParts, definition_parts, groups_fit
from ..profile.model import RoyaltyMode, RuleProfile

__all__ = [
    "Assignment",
    "Fouls",
    "NaturalSearch",
    "allowed_cards",
    "assignments",
    "rows_of",
    "resolve_arrangement",
    "resolve_natural",
    "sorted_ranks",
]

Fouls = Callable[[Sequence[str], HandRank, HandRank, HandRank], bool]
"""Whether 13 resolved cards (front, middle, back) with these hands foul (the settlement's own
foul check, suit tie-break included). It may read the cards only through the suit of the
highest card of a middle or back that is a straight, flush or straight flush (the suit
tie-break's ``highest_card``): the resolution calls it with one representative of the cards
that agree on that."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """A hand with its jokers resolved: ``cards`` the 13 canonical card texts with each joker
    replaced, ``positions`` where the jokers were, ``stands_for`` the card each stands for."""

    cards: tuple[str, ...]
    positions: tuple[int, ...]
    stands_for: tuple[str, ...]

    def in_row(self, start: int, stop: int) -> tuple[str, ...]:
        """The cards the jokers among positions ``start:stop`` stand for, in order."""
        return tuple(
            c for p, c in zip(self.positions, self.stands_for, strict=True) if start <= p < stop
        )


def allowed_cards(table_cards: Iterable[str], duplicates: bool) -> tuple[Card, ...]:
    """The standard cards a joker may stand for, given every card text at the table (players'
    cards and dead cards, canonical; jokers among them are ignored)."""
    if duplicates:
        return DECK
    taken = {CARD_INDEX[c] for c in table_cards if c != JOKER}
    return tuple(c for i, c in enumerate(DECK) if i not in taken)


def _mask_of(allowed: Sequence[Card]) -> int:
    """The allowed cards as a 52-bit mask (bit ``Card.index``)."""
    if allowed is DECK:
        return ALL_CARDS
    by_id = _INDEX_BY_ID
    mask = 0
    for c in allowed:
        i = by_id.get(id(c))
        mask |= 1 << (i if i is not None else _INDEX[c])
    return mask


def assignments(
    cards13: Sequence[str], allowed: Sequence[Card], duplicates: bool
) -> Iterator[Assignment]:
    """Every allowed assignment of the hand's jokers (none: the hand as it is), for tests and
    tools that want to look at each; the resolution below never enumerates them."""
    positions = tuple(i for i, c in enumerate(cards13) if c == JOKER)
    texts = [str(c) for c in allowed]
    base = list(cards13)
    for choice in product(texts, repeat=len(positions)):
        if not duplicates and len(set(choice)) < len(choice):
            continue
        for p, c in zip(positions, choice, strict=True):
            base[p] = c
        yield Assignment(tuple(base), positions, choice)


def rows_of(cards13: Sequence[str], profile: RuleProfile) -> tuple[HandRank, HandRank, HandRank]:
    """The three hands of 13 resolved cards (rows holding a repeated card evaluated as such)."""
    wheel = profile.ranking.wheel
    if profile.deck.joker_duplicates and len(set(cards13)) < 13:
        cards = [CARD_BY_SPELLING[c] for c in cards13]
        return (
            evaluate_with_repeats(cards[:3]),
            evaluate_with_repeats(cards[3:8], wheel),
            evaluate_with_repeats(cards[8:], wheel),
        )
    return (
        evaluate_three(cards13[:3]),
        evaluate_five(cards13[3:8], wheel),
        evaluate_five(cards13[8:], wheel),
    )


def sorted_ranks(cards13: Sequence[str]) -> tuple[int, ...]:
    """The 13 ranks from the highest down: what ``equalRank: COMPARE_CARDS`` compares."""
    return tuple(sorted((CARD_BY_SPELLING[c].rank.value_int for c in cards13), reverse=True))


@lru_cache(maxsize=32)
def _card_keys(suit_order: tuple[Suit, ...]) -> tuple[int, ...]:
    """Per ``Card.index``, the tie-break order of a joker's card: higher is better, by rank then
    by the suit order."""
    position = {s: i for i, s in enumerate(suit_order)}
    return tuple(i // 4 * 4 + 3 - position[c.suit] for i, c in enumerate(DECK))


_INDEX: dict[object, int] = {c: i for i, c in enumerate(DECK)}
_INDEX.update((str(c), i) for i, c in enumerate(DECK))
_TEXT: tuple[str, ...] = tuple(str(c) for c in DECK)
_INDEX_BY_ID: dict[int, int] = {id(c): i for i, c in enumerate(DECK)}  # DECK's cards live on


def _resolved(
    cards13: Sequence[str], positions: tuple[int, ...], chosen: Sequence[int]
) -> Assignment:
    texts = tuple(_TEXT[i] for i in chosen)
    cards = list(cards13)
    for p, t in zip(positions, texts, strict=True):
        cards[p] = t
    return Assignment(tuple(cards), positions, texts)


# --------------------------------------------------------------------------- arranged hands

_ROW_SPANS = ((0, 3), (3, 8), (8, 13))
_SUITED = frozenset(
    {HandClass.STRAIGHT, HandClass.FLUSH, HandClass.STRAIGHT_FLUSH, HandClass.ROYAL_FLUSH}
)


class _Group:
    """The fills of one row that the resolution cannot tell apart: the hand, its royalty, one
    representative of the row's cards, and the best two joker choices (card indexes in position
    order), best first."""

    __slots__ = ("cards", "choices", "hand", "royalty")

    def __init__(
        self, hand: HandRank, royalty: int, cards: tuple[str, ...], choice: tuple[int, ...]
    ) -> None:
        self.hand = hand
        self.royalty = royalty
        self.cards = cards
        self.choices = [choice]


def _top_suit(hand: HandRank, row: Sequence[int]) -> int:
    """The suit index of a straight's or flush's highest card (``row``: its card indexes, which
    are distinct)."""
    target = hand.ranks[0]
    if target == 1:
        target = 14
    for i in row:
        if i // 4 + 2 == target:
            return i % 4
    raise AssertionError("a straight or flush holds its top rank")  # pragma: no cover


def _row_groups(
    row: int,
    cards13: Sequence[str],
    by_rank: Sequence[Sequence[int]],
    duplicates: bool,
    wheel: Wheel,
    royalty: Callable[[int, HandRank], int],
) -> list[_Group]:
    """The groups of one row's fills: each allowed card (or unordered pair of cards) for the
    row's jokers, tried best first (``by_rank``: the allowed cards' indexes of each rank, the
    highest rank first, each rank's best suit first), so a group's first choices are its best.
    A fill's hand depends only on the jokers' ranks and on whether it makes a flush, so each is
    evaluated once."""
    start, stop = _ROW_SPANS[row]
    texts = list(cards13[start:stop])
    size = stop - start
    slots = [i for i, t in enumerate(texts) if t == JOKER]
    fixed = [_INDEX[t] for t in texts if t != JOKER]
    base = sum(CARD_CODES[i] for i in fixed)
    held = set(fixed) if duplicates else set()
    # the suit a flush needs (every fixed card's, in a 5-card row), else none
    flush_suit = fixed[0] & 3 if size == 5 and len({i & 3 for i in fixed}) == 1 else -1
    groups: dict[object, _Group] = {}
    hands: dict[tuple[int, ...], HandRank] = {}
    codes = CARD_CODES
    middle_or_back = row > 0

    def hand_of(choice: tuple[int, ...], flush: bool) -> HandRank:
        if len(choice) == 1:
            ranks: tuple[int, ...] = (choice[0] >> 2, flush)
        else:
            a, b = choice[0] >> 2, choice[1] >> 2
            ranks = (a, b, flush) if a <= b else (b, a, flush)
        hand = hands.get(ranks)
        if hand is None:
            total = base + sum(codes[c] for c in choice)
            hand = hands[ranks] = hand_of_codes(total, size, wheel, not flush)
        return hand

    def add(hand: HandRank, choice: tuple[int, ...]) -> None:
        key: object = hand.strength
        if middle_or_back and hand.hand_class in _SUITED:
            key = (hand.strength, _top_suit(hand, fixed + list(choice)))
        group = groups.get(key)
        if group is None:
            row_cards = texts.copy()
            for i, c in zip(slots, choice, strict=True):
                row_cards[i] = _TEXT[c]
            groups[key] = _Group(hand, royalty(row, hand), tuple(row_cards), choice)
        elif len(group.choices) < 2:
            group.choices.append(choice)

    if len(slots) == 1:
        # The cards of one rank make one hand, but for the one that makes a flush; a group's
        # best two are then the rank's first two (each its own group when the suit of a
        # straight's top card tells them apart).
        for cs in by_rank:
            if not cs:
                continue
            flush_card = -1
            plain = cs
            if flush_suit >= 0:
                for c in cs:
                    if c & 3 == flush_suit and c not in held:
                        flush_card = c
                        plain = [x for x in cs if x != c]
            if plain:
                hand = hand_of((plain[0],), False)
                split = middle_or_back and hand.hand_class in _SUITED
                for c in plain if split else plain[:2]:
                    add(hand, (c,))
            if flush_card >= 0:
                add(hand_of((flush_card,), True), (flush_card,))
    else:
        # Both jokers here: by pair of ranks, the first joker the higher card. The pairs of one
        # pair of ranks make one hand but for the one making a flush, so a group's best two
        # are the first two pairs (per first card when a straight's top suit tells them apart).
        def flushes(c: int, d: int) -> bool:
            return (
                flush_suit >= 0
                and c & 3 == flush_suit
                and d & 3 == flush_suit
                and c != d
                and c not in held
                and d not in held
            )

        for i, cs in enumerate(by_rank):
            for j in range(i, len(by_rank)):
                ds = by_rank[j]
                if not cs or not ds:
                    continue
                if i == j:  # one rank: the second joker's card after the first's
                    pairs = [
                        (c, d) for n, c in enumerate(cs) for d in cs[n if duplicates else n + 1 :]
                    ]
                else:
                    pairs = [(c, d) for c in cs for d in ds]
                no_flush = [pair for pair in pairs if not flushes(*pair)]
                if no_flush:
                    hand = hand_of(no_flush[0], False)
                    if middle_or_back and hand.hand_class in _SUITED:
                        for c in cs:
                            for pair in [pair for pair in no_flush if pair[0] == c][:2]:
                                add(hand, pair)
                    else:
                        for pair in no_flush[:2]:
                            add(hand, pair)
                for pair in pairs:
                    if flushes(*pair):
                        add(hand_of(pair, True), pair)
    return list(groups.values())


def _fixed_group(
    row: int, cards13: Sequence[str], wheel: Wheel, royalty: Callable[[int, HandRank], int]
) -> _Group:
    start, stop = _ROW_SPANS[row]
    cards = tuple(cards13[start:stop])
    hand = evaluate_three(cards) if row == 0 else evaluate_five(cards, wheel)
    return _Group(hand, royalty(row, hand), cards, ())


def _choice(
    first: list[tuple[int, ...]], second: list[tuple[int, ...]], duplicates: bool
) -> tuple[int, ...] | None:
    """The best cards for two jokers in two rows, given each row group's best choices;
    ``None`` when they would need the same card and may not."""
    if duplicates or first[0] != second[0]:
        return first[0] + second[0]
    if len(second) > 1:
        return first[0] + second[1]
    if len(first) > 1:
        return first[1] + second[0]
    return None


@lru_cache(maxsize=256)
def _by_rank(allowed: int, keys: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The allowed cards' indexes of each rank, the highest first, best suit first."""
    return tuple(
        tuple(
            sorted((c for c in range(4 * r, 4 * r + 4) if allowed >> c & 1), key=lambda c: -keys[c])
        )
        for r in range(12, -1, -1)
    )


def resolve_arrangement(
    cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile, fouls: Fouls
) -> Assignment | None:
    """The assignment an arranged hand settles with (module docstring); ``None`` only when
    the jokers have no allowed card."""
    positions = tuple(i for i, c in enumerate(cards13) if c == JOKER)
    if not positions:
        return Assignment(tuple(cards13), (), ())
    duplicates = profile.deck.joker_duplicates
    keys = _card_keys(tuple(profile.ranking.suit_order))
    by_rank = _by_rank(_mask_of(allowed), keys)
    wheel = profile.ranking.wheel
    royalties = profile.royalties
    paid = royalties.mode is not RoyaltyMode.NONE

    def royalty(row: int, hand: HandRank) -> int:
        return royalties.units(ROWS[row], hand) if paid else 0

    rows_with = sorted({0 if p < 3 else 1 if p < 8 else 2 for p in positions})
    per_row = [
        _row_groups(r, cards13, by_rank, duplicates, wheel, royalty)
        if r in rows_with
        else [_fixed_group(r, cards13, wheel, royalty)]
        for r in range(3)
    ]
    first, last = rows_with[0], rows_with[-1]
    # Every combination's score were it clean, best first: the first that does not foul wins
    # (a fouled score is below every clean one); when all foul, the best fouled score.
    scored: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[_Group, ...]]]
    scored = []
    for groups in product(*per_row):
        if first == last:
            choice = groups[first].choices[0]
        else:
            paired = _choice(groups[first].choices, groups[last].choices, duplicates)
            if paired is None:
                continue
            choice = paired
        gf, gm, gb = groups
        clean: tuple[int, ...] = (
            1,
            gf.royalty + gm.royalty + gb.royalty,
            gb.hand.strength,
            gm.hand.strength,
            gf.hand.strength,
        )
        scored.append((clean, tuple([keys[i] for i in choice]), choice, groups))
    if not scored:
        return None
    scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
    fouled: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None = None
    for clean, joker_key, choice, (gf, gm, gb) in scored:
        if not fouls(gf.cards + gm.cards + gb.cards, gf.hand, gm.hand, gb.hand):
            return _resolved(cards13, positions, choice)
        candidate = ((0, 0) + clean[2:], joker_key, choice)  # noqa: RUF005 — faster
        if fouled is None or candidate[:2] > fouled[:2]:
            fouled = candidate
    assert fouled is not None
    return _resolved(cards13, positions, fouled[2])


# --------------------------------------------------------------------------- naturals


_RANK_OF_MASK = {m: r for r, m in enumerate(RANK_CARDS)}
_SUIT_OF_MASK = {m: s for s, m in enumerate(SUIT_CARDS)}


class _Seconds:
    """A ``rows`` clause's answer for two jokers (``naturals.rows.fills``) as a function of the
    first joker's card: the cards the other joker may then stand for."""

    __slots__ = ("any", "by_card", "by_rank", "by_suit")

    def __init__(self, found: Iterable[tuple[int, ...]]) -> None:
        self.any = 0
        self.by_rank = [0] * 13
        self.by_suit = [0] * 4
        self.by_card: dict[int, int] = {}
        for x, y in found:
            for a, b in ((x, y), (y, x)):
                if a == ALL_CARDS:
                    self.any |= b
                elif a in _RANK_OF_MASK:
                    self.by_rank[_RANK_OF_MASK[a]] |= b
                elif a in _SUIT_OF_MASK:
                    self.by_suit[_SUIT_OF_MASK[a]] |= b
                else:  # any other set of cards (one card, the cards a flush row lacks)
                    while a:
                        low = a & -a
                        i = low.bit_length() - 1
                        self.by_card[i] = self.by_card.get(i, 0) | b
                        a ^= low

    def of(self, card: int) -> int:
        return (
            self.any | self.by_rank[card >> 2] | self.by_suit[card & 3] | self.by_card.get(card, 0)
        )


class NaturalSearch:
    """The naturals one hand with jokers makes (RULES.md §16.3), sharing between the naturals of
    the profile what depends only on the hand: the counts of its standard cards, what the
    jokers' ranks add to them, and each ``rows`` clause's search."""

    def __init__(
        self, cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile
    ) -> None:
        self.cards13 = tuple(cards13)
        self.profile = profile
        self.positions = tuple(i for i, c in enumerate(cards13) if c == JOKER)
        self.jokers = len(self.positions)
        self.duplicates = profile.deck.joker_duplicates
        keys = self.keys = _card_keys(tuple(profile.ranking.suit_order))
        self.suits = sorted(range(4), key=lambda s: -keys[s])  # the profile's order, best first
        masks = [0, 0, 0, 0]
        counts = [0] * 13
        suit_counts = [0, 0, 0, 0]
        for text in cards13:
            if text != JOKER:
                r, s = divmod(_INDEX[text], 4)
                masks[s] |= 1 << r
                counts[r] += 1
                suit_counts[s] += 1
        self.masks = (masks[0], masks[1], masks[2], masks[3])
        self.suit_counts = suit_counts
        self.allowed = _mask_of(allowed)
        self.rows_known: dict[object, int | _Seconds] = {}
        self.suit_known: dict[tuple[object, tuple[int, ...]], int] = {}
        # The jokers' ranks, best first (as the sorted 13 ranks compare): (a,) or (a, b) with
        # a >= b; for each, its count histogram (an index into ``histograms``) and rank mask.
        self.choices: list[tuple[tuple[int, ...], int, int]] = []
        self.histograms: list[tuple[int, ...]] = []
        base = [0] * 7
        for n in counts:
            base[n] += 1
        seen: dict[tuple[int, ...], int] = {}
        base_mask = sum(1 << r for r in range(13) if counts[r])

        def histogram_of(ranks: tuple[int, ...]) -> int:
            # what adding the jokers' ranks does to the histogram depends on their counts only
            if len(ranks) == 1:
                shape: tuple[int, ...] = (counts[ranks[0]],)
            else:
                ka, kb = counts[ranks[0]], counts[ranks[1]]
                shape = (ka, kb, ranks[0] == ranks[1]) if ka <= kb else (kb, ka, False)
            h = seen.get(shape)
            if h is None:
                hist = base.copy()
                added: dict[int, int] = {}
                for r in ranks:
                    k = counts[r] + added.get(r, 0)
                    hist[k] -= 1
                    hist[k + 1] += 1
                    added[r] = added.get(r, 0) + 1
                h = seen[shape] = len(self.histograms)
                self.histograms.append(tuple(hist))
            return h

        if self.jokers == 1:
            for a in range(12, -1, -1):
                self.choices.append(((a,), histogram_of((a,)), base_mask | 1 << a))
        else:
            for a in range(12, -1, -1):
                for b in range(a, -1, -1):
                    self.choices.append(((a, b), histogram_of((a, b)), base_mask | 1 << a | 1 << b))

    def _rows(self, parts: DefinitionParts) -> int | _Seconds:
        """The ``rows`` clause's answer: one joker, the cards it may stand for; two, a
        ``_Seconds`` (no clause: every card)."""
        if parts.rows is None:
            return ALL_CARDS if self.jokers == 1 else _Seconds([(ALL_CARDS, ALL_CARDS)])
        known = self.rows_known.get(parts.rows)
        if known is None:
            found = fills(parts.rows, self.masks, self.jokers)
            if self.jokers == 1:
                union = 0
                for (x,) in found:
                    union |= x
                known = union
            else:
                known = _Seconds(found)
            self.rows_known[parts.rows] = known
        return known

    def _suit_cards(self, parts: DefinitionParts, *first: int) -> int:
        """The cards whose suit, added to the hand (with ``first``, the other joker's suit),
        keeps the suit clauses."""
        if parts.suits is None:
            return ALL_CARDS
        key = (parts.suits, first)
        known = self.suit_known.get(key)
        if known is None:
            known = self.suit_known[key] = self._suits_of(parts, *first)
        return known

    def _suits_of(self, parts: DefinitionParts, *first: int) -> int:
        assert parts.suits is not None
        out = 0
        for t in range(4):
            counts = self.suit_counts.copy()
            for s in (*first, t):
                counts[s] += 1
            if parts.suits(counts):
                out |= SUIT_CARDS[t]
        return out

    def _ranks_ok(self, parts: DefinitionParts) -> Callable[[int, int], bool]:
        """The rank clauses on (histogram index, rank mask) of a choice of the jokers' ranks."""
        if parts.groups:
            fit = [groups_fit(parts.groups, h, parts.two_pairs) for h in self.histograms]
        else:
            fit = [True] * len(self.histograms)
        outside, distinct = parts.outside, parts.distinct
        return lambda h, mask: fit[h] and not mask & outside and mask.bit_count() >= distinct

    def _possible(self, parts: DefinitionParts, ranks_ok: Callable[[int, int], bool]) -> bool:
        """Whether some choice of the jokers' ranks keeps the rank clauses and some choice of
        their suits the suit clauses, among the allowed cards (each on its own: a necessary
        condition, cheap)."""
        allowed = self.allowed
        if not any(
            all(allowed & RANK_CARDS[r] for r in ranks) and ranks_ok(h, mask)
            for ranks, h, mask in self.choices
        ):
            return False
        if parts.suits is None:
            return True
        if self.jokers == 1:
            return bool(allowed & self._suit_cards(parts))
        return any(
            allowed & SUIT_CARDS[s] and allowed & self._suit_cards(parts, s) for s in range(4)
        )

    def find(self, parts: DefinitionParts) -> tuple[int, ...] | None:
        """The jokers' cards (indexes, in position order) kept for a natural with these clauses,
        or ``None`` when no allowed assignment makes it."""
        allowed = self.allowed
        ranks_ok = self._ranks_ok(parts)
        if parts.rows is not None and not self._possible(parts, ranks_ok):
            return None  # the other clauses alone rule it out: no rows search
        rows = self._rows(parts)
        keys = self.keys
        if isinstance(rows, int):  # one joker
            room = allowed & rows & self._suit_cards(parts)
            for (r,), h, mask in self.choices:
                if room & RANK_CARDS[r] and ranks_ok(h, mask):
                    return (
                        max(
                            (c for c in range(4 * r, 4 * r + 4) if room >> c & 1),
                            key=lambda c: keys[c],
                        ),
                    )
            return None
        duplicates = self.duplicates
        if parts.rows is None and parts.suits is None:  # the ranks decide alone
            for (a, b), h, mask in self.choices:
                if allowed & RANK_CARDS[a] and allowed & RANK_CARDS[b] and ranks_ok(h, mask):
                    c1 = max(
                        (c for c in range(4 * a, 4 * a + 4) if allowed >> c & 1),
                        key=lambda c: keys[c],
                    )
                    room = allowed & RANK_CARDS[b] & (ALL_CARDS if duplicates else ~(1 << c1))
                    if room:
                        return (
                            c1,
                            max(
                                (c for c in range(4 * b, 4 * b + 4) if room >> c & 1),
                                key=lambda c: keys[c],
                            ),
                        )
            return None
        # Two jokers: for each card of the first, the cards the second may stand for.
        suit_cards = [self._suit_cards(parts, s) for s in range(4)]
        seconds: dict[int, int] = {}
        reach = [0] * 13  # per rank of one joker: the cards the other may stand for
        m = allowed
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            room = allowed & rows.of(c) & suit_cards[c & 3]
            if not duplicates:
                room &= ~low
            if room:
                seconds[c] = room
                reach[c >> 2] |= room
        for (a, b), h, mask in self.choices:
            if not (reach[a] & RANK_CARDS[b] or reach[b] & RANK_CARDS[a]):
                continue
            if not ranks_ok(h, mask):
                continue
            for r1, r2 in ((a, b), (b, a)) if a != b else ((a, a),):
                for s in self.suits:
                    c1 = 4 * r1 + s
                    room = seconds.get(c1, 0) & RANK_CARDS[r2]
                    if room:
                        return (
                            c1,
                            max(
                                (c for c in range(4 * r2, 4 * r2 + 4) if room >> c & 1),
                                key=lambda c: keys[c],
                            ),
                        )
        return None

    def parts(self, name: str) -> DefinitionParts:
        return _parts_of(self.profile)[name]

    def holds(self, name: str) -> bool:
        """Whether some allowed assignment makes the natural ``name``."""
        return self.find(self.parts(name)) is not None

    def best(self, names: Iterable[str]) -> tuple[str, Assignment] | None:
        """The best of ``names`` (the profile's ``naturals.best_first`` order) some assignment
        makes, and the assignment kept for it; ``None`` if none."""
        wanted = set(names)
        for name in self.profile.naturals.best_first:
            if name not in wanted:
                continue
            chosen = self.find(self.parts(name))
            if chosen is not None:
                return name, _resolved(self.cards13, self.positions, chosen)
        return None


_PARTS = "_natural_parts"  # where a profile holds its naturals' parts (not a profile field)


def _parts_of(profile: RuleProfile) -> dict[str, DefinitionParts]:
    """Each natural's definition split by what its clauses read, computed once per profile and
    held on the profile itself (as ``working.plan_for`` holds the plan)."""
    try:
        parts: dict[str, DefinitionParts] = profile.__dict__[_PARTS]
    except KeyError:
        naturals = profile.naturals
        parts = profile.__dict__[_PARTS] = {
            name: definition_parts(entry.effective_definition, naturals.quads_as_two_pairs)
            for name, entry in naturals.by_natural.items()
        }
    return parts


def resolve_natural(
    cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile, naturals: Sequence[str]
) -> tuple[str, Assignment] | None:
    """The best of ``naturals`` (names the profile plays) some assignment makes, and the
    assignment kept for it (highest sorted ranks, then the jokers' cards); ``None`` if none.

    Best is the profile's ``naturals.best_first`` order."""
    return NaturalSearch(cards13, allowed, profile).best(naturals)
