"""A natural's ``rows`` clause (RULES.md §16.1) decided by a small constraint search, with up to
two jokers as wildcards (RULES.md §16.3).

A ``rows`` clause asks that the 13 cards split into a 3-card front and two 5-card rows of at
least the given classes (a row left out takes any cards; the two 5-card rows in either order).
Each row the clause names is a *pattern* of slots the cards must fill:

- ``STRAIGHT`` of k cards: a window of k consecutive ranks (A-2-3 … Q-K-A, A-2-3-4-5 …
  T-J-Q-K-A), one slot per rank, any suit (so a straight flush too);
- ``FLUSH`` of k cards: k slots of one suit, any ranks, each card once (a row that holds the
  same card twice is no flush, RULES.md §16.3);
- ``STRAIGHT_FLUSH`` of k cards: the k cards of a window in one suit, one slot each.

The cards make the clause exactly when, for some choice of patterns, every slot gets a card of
its own: the cards left over fill the rows the clause leaves out. A joker is a *hole*: it fills
any one slot and then stands for any card that slot accepts (a card of its rank, of its suit, or
the one card), or for any card at all when it is left over; in a flush row, only for a card the
row does not hold already (a joker that duplicates a card makes no flush with it; straights and
straight flushes hold one card of each rank anyway).

``fills(classes, masks, holes)`` answers for a set of standard cards (four 13-bit rank masks, one
per suit in ``Suit`` order) and 0, 1 or 2 holes with every tuple of card sets (52-bit masks, bit
``4 * rank index + suit index``; ``ALL_CARDS`` for a hole left over) such that the clause holds
whenever the holes stand for one card of each set, in some order; together the tuples cover
every choice of the holes' cards that makes the clause (and no other).

The search takes the most constrained rows first:

1. straight-flush patterns (a card present always serves there best: a hole filling its slot
   instead could only stand for that card, while the card's other use accepts at least it);
2. the suits of the flush rows (each suit must hold its rows' cards but for the holes);
3. the windows of the straight rows (every choice, from a table built at import: 12 or 10 for
   one row, 120 for a 3- and a 5-card row, 55 for two 5-card rows). Whether the straight and
   flush slots left can all be filled is Hall's condition on cards against rank slots and suit
   slots: for every set S of the flush suits, ``flush slots of S - cards of S + Σ_r max(0, d_r -
   cards of rank r outside S)`` is at most the holes (``d_r`` the straight slots of rank r).
   Each term is a few bit operations. What the straight and flush rows give is remembered by
   what it depends on (the cards left; only their rank counts without a flush row, only their
   suit counts without a straight row).

The holes' cards follow from the same terms: with ``n`` holes needed, a hole may fill a slot
whose removal lowers every term that reaches ``n`` (a rank slot: any card of that rank; a flush
slot: a card of that suit, below); the holes not needed are left over. A clause whose three rows
are all straights, or all flushes, is decided on the rank counts, or the suit counts, alone (the
tables of ``naturals.facts``): one lookup per choice of the holes' ranks or suits.

A flush slot's hole and the cards left: when its suit has two flush rows, it stands for any
card of the suit (the same card held, if the split put it in the hole's row, trades places with
a card of the other row); when the suit has one, for a card of the suit the cards left lack. A
card c they hold is then never lost: keeping c out of the row costs each term over a set with
that suit one more unless rank c is still wanted by the straight slots beyond the cards outside
the set, exactly what the hole saves instead in a straight slot of rank c; so where the hole may
stand for c in the flush row, it may in that straight slot (or, with no such slot, it is not
needed and left over). Two holes in the flush rows of one suit stand for two different cards
(split by a bit of the rank index where they differ: four pairs of sets), or also for one card
the cards left lack when the suit has two rows; one card held three times needs three rows, a
case of the all-flush clause only. The same rules bound the all-flush clause's suit counts.

Cost: a straight-flush pattern is followed only when all but the holes left of its cards are
present (with 11 cards, at most 33 patterns of 3 cards and 18 of 5 qualify); the straight and
flush rows after them are decided at most once per distinct set of what they depend on, over at
most 4 x 4 flush suits and 120 choices of windows, each a Hall check of at most four terms. So a
clause takes at most about 6,000 steps of a few integer operations; the most
``tests/domain/test_natural_rows.py`` counts on its hands is about 1,200 (a front and middle
straight and a back straight flush, two holes). All straights or all flushes: at most 91 table
lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..cards.cards import Card
from .facts import (
    RANK_INDEX,
    STRAIGHTS_3,
    STRAIGHTS_5,
    SUIT_INDEX,
    THREE_FLUSH_SHAPES,
    THREE_STRAIGHTS_BY_KEY,
)

__all__ = [
    "ALL_CARDS",
    "RANK_CARDS",
    "SUIT_CARDS",
    "STRAIGHT",
    "FLUSH",
    "STRAIGHT_FLUSH",
    "Classes",
    "fills",
    "rows_hold",
    "rows_hold_with_repeats",
    "search",
]

STRAIGHT = "STRAIGHT"
FLUSH = "FLUSH"
STRAIGHT_FLUSH = "STRAIGHT_FLUSH"
Classes = tuple[str | None, str | None, str | None]
"""A clause's least classes for the front, middle and back (``None``: any cards); the values of
``naturals.vocabulary.RowClass`` are these strings."""

ALL_CARDS = (1 << 52) - 1
"""Every standard card, as a 52-bit mask: bit ``4 * rank index + suit index`` (``Card.index``)."""

RANK_CARDS: tuple[int, ...] = tuple(0xF << (4 * r) for r in range(13))
"""The four cards of each rank index (0..12 = 2..A)."""

SUIT_CARDS: tuple[int, ...] = tuple(sum(1 << (4 * r + s) for r in range(13)) for s in range(4))
"""The 13 cards of each suit index (``Suit`` order: s h d c)."""


def _window(ranks: tuple[int, ...]) -> int:
    m = 0
    for r in ranks:
        m |= 1 << r
    return m


_WINDOWS: dict[int, tuple[int, ...]] = {
    3: tuple(_window(s) for s in STRAIGHTS_3),
    5: tuple(_window(s) for s in STRAIGHTS_5),
}
# Straight-flush patterns of each size: (suit index, window), suit-major.
_SF_PATTERNS: dict[int, tuple[tuple[int, int], ...]] = {
    k: tuple((s, w) for s in range(4) for w in windows) for k, windows in _WINDOWS.items()
}


class _Saturated(Exception):
    """The holes may all be left over: nothing the search could still find would add a card."""


def _at_least(masks: Sequence[int]) -> tuple[int, int, int]:
    """The ranks held at least once, twice and three times among these suit masks."""
    l1 = l2 = l3 = 0
    for x in masks:
        l3 |= l2 & x
        l2 |= l1 & x
        l1 |= x
    return l1, l2, l3


class _Hall:
    """Hall's condition for the straight slots (``d1``, ``d2``, ``d3``: the ranks wanted at
    least once, twice, three times) and the flush slots, against the cards left.

    A *unit* is one slot a hole may take, as a bit: bit r (< 13) a straight slot of rank r, bit
    13 + i a slot of the i-th flush suit."""

    __slots__ = ("holes", "masks", "rows", "suits", "terms")

    def __init__(
        self,
        masks: Sequence[int],
        suits: list[int],
        demand: list[int],
        holes: int,
        straights: bool = True,
        rows: Sequence[int] = (),
    ) -> None:
        self.suits = suits
        self.holes = holes
        self.masks = masks
        self.rows = rows  # how many flush rows each of ``suits`` has (1 or 2)
        # One term per set of flush suits (bit i: suits[i]): its constant part (flush slots
        # less cards of those suits), the ranks held once, twice, three times outside those
        # suits (not needed without straight rows), and the set's units (bits 13 + i).
        self.terms: list[tuple[int, int, int, int, int]] = []
        for subset in range(1 << len(suits)):
            const = 0
            outside = [0, 1, 2, 3]
            for i, f in enumerate(suits):
                if subset >> i & 1:
                    const += demand[i] - masks[f].bit_count()
                    outside.remove(f)
            l1, l2, l3 = _at_least([masks[s] for s in outside]) if straights else (0, 0, 0)
            self.terms.append((const, l1, l2, l3, subset << 13))

    def needed(self, d1: int, d2: int, d3: int) -> int:
        """The holes these slots need: the largest term (at least 0)."""
        most = 0
        for const, l1, l2, l3, _ in self.terms:
            v = const + (d1 & ~l1).bit_count() + (d2 & ~l2).bit_count() + (d3 & ~l3).bit_count()
            if v > most:
                most = v
        return most

    def fill(self, demands: Sequence[tuple[int, int, int]]) -> set[tuple[int, ...]]:
        """Every tuple of card sets the holes may stand for (pairs in increasing order), over
        these choices of straight slots; ``_Saturated`` when the holes may all be left over.

        A hole may fill a slot whose removal lowers every term at the maximum: with one hole
        needed, any such slot (the other hole, if any, left over); with two, any two slots
        whose removal together brings every term to 0 (the first lowering every term at 2;
        the same rank twice only while it is still wanted beyond the cards outside the term's
        suits; a flush suit's slot twice always). Collected as unit bits first, cards last."""
        h = self.holes
        terms = self.terms
        singles = 0  # units a lone needed hole may take
        pairs: dict[int, int] = {}  # unit -> the units (>= it) the second hole may then take
        for d1, d2, d3 in demands:
            # each term's value, the units whose removal lowers it (first) and those whose
            # second removal lowers it again (again)
            values: list[tuple[int, int, int]] = []
            need = 0
            for const, l1, l2, l3, suit_units in terms:
                a, b, c = d1 & ~l1, d2 & ~l2, d3 & ~l3
                v = const + a.bit_count() + b.bit_count() + c.bit_count()
                if v > 0:
                    if v > h:
                        break
                    values.append((v, a | b | c | suit_units, (d2 & ~l1) | (d3 & ~l2) | suit_units))
                    if v > need:
                        need = v
            else:
                if need == 0:
                    raise _Saturated
                if need == 1:
                    units = ~0
                    for _, first, _ in values:
                        units &= first
                    singles |= units
                    continue
                firsts = ~0
                for v, first, _ in values:
                    if v == 2:
                        firsts &= first
                while firsts:
                    u = firsts & -firsts
                    firsts ^= u
                    others = again_too = ~0
                    for v, first, again in values:
                        if v - (1 if first & u else 0) == 1:
                            others &= first
                            again_too &= again
                    got = (others & ~(2 * u - 1)) | (u if again_too & u else 0)
                    if got:
                        pairs[u] = pairs.get(u, 0) | got
        # A hole in the one flush row of a suit stands for a card the cards left lack (with
        # the card itself there, the row would hold it twice; a card they hold is reached
        # through its rank's straight slot when the search allows it at all: module docstring).
        # Two holes in the flush rows of one suit stand for two cards, or for one the cards
        # left lack when there are two such rows.
        cards = _UNIT_CARDS
        same: dict[int, list[tuple[int, int]]] = {}
        used = singles
        for u, got in pairs.items():
            used |= u | got
        if used >> 13:
            cards = dict(_UNIT_CARDS)
            for i, f in enumerate(self.suits):
                unit = 1 << (13 + i)
                if not used & unit:
                    continue
                held = _suit_cards(self.masks[f], f)
                lacked = SUIT_CARDS[f] & ~held
                if self.rows[i] == 1:
                    cards[unit] = lacked
                    same[unit] = _distinct_pairs(lacked)
                else:
                    cards[unit] = SUIT_CARDS[f]
                    same[unit] = _distinct_pairs(held) + (
                        [(lacked, SUIT_CARDS[f])] if lacked else []
                    )
        out: set[tuple[int, ...]] = set()
        for u in _bits(singles):
            if cards[u]:
                out.add(tuple(sorted((cards[u],) + (ALL_CARDS,) * (h - 1))))
        for u, got in pairs.items():
            cu = cards[u]
            for w in _bits(got):
                if w == u and u in same:
                    out.update(same[u])
                    continue
                cw = cards[w]
                if cu and cw:
                    out.add((cu, cw) if cu <= cw else (cw, cu))
        return out


_UNIT_CARDS = {1 << r: RANK_CARDS[r] for r in range(13)}

# The cards whose rank index has bit j set, j = 0..3: two cards of one suit differ in rank, so in
# one of these bits.
_RANK_BIT_CARDS = tuple(sum(RANK_CARDS[r] for r in range(13) if r >> j & 1) for j in range(4))


def _suit_cards(rank_mask: int, suit: int) -> int:
    """The cards of one suit with these ranks, as a 52-bit mask."""
    out = 0
    while rank_mask:
        low = rank_mask & -rank_mask
        out |= 1 << (4 * (low.bit_length() - 1) + suit)
        rank_mask ^= low
    return out


def _distinct_pairs(cards: int) -> list[tuple[int, int]]:
    """Pairs of card sets that together hold every pair of two different cards of ``cards``
    (cards of one suit) and no pair of one card twice: split by each bit of the rank index."""
    out = []
    for bit in _RANK_BIT_CARDS:
        low, high = cards & ~bit, cards & bit
        if low and high:
            out.append((low, high) if low <= high else (high, low))
    return out


def _bits(mask: int) -> list[int]:
    """The set bits of a unit mask (bits 0..14), each as a mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


class _Search:
    """One ``fills`` call: the clause's rows by kind (sizes, equal ones adjacent), the holes,
    the patterns still possible, and the tuples found."""

    __slots__ = (
        "demands",
        "flush",
        "found",
        "holes",
        "known",
        "sf_patterns",
        "sf",
        "steps",
        "straight",
    )

    def __init__(
        self,
        sf: tuple[int, ...],
        flush: tuple[int, ...],
        straight: tuple[int, ...],
        masks: Sequence[int],
        holes: int,
    ) -> None:
        self.sf = sf
        self.flush = flush
        self.straight = straight
        self.holes = holes
        self.found: set[tuple[int, ...]] = set()
        self.steps = 0
        # Only patterns the cards could fill with all the holes (the cards only get fewer).
        self.sf_patterns = {
            k: [(s, w) for s, w in _SF_PATTERNS[k] if (w & ~masks[s]).bit_count() <= holes]
            for k in set(sf)
        }
        self.demands = _DEMANDS[straight]
        # The straight and flush rows' answers by what they depend on: the cards left (only
        # their ranks when no row is a flush) and the holes left.
        self.known: dict[tuple[int, ...], list[tuple[int, ...]]] = {}

    # 1. straight flushes: each pattern's present cards taken, its missing cards are holes
    def sf_step(self, i: int, last: int, masks: list[int], h: int, cards: tuple[int, ...]) -> None:
        if i == len(self.sf):
            found = self.found
            for extra in self.rest(masks, h):
                t = tuple(sorted(cards + extra)) if cards else extra
                found.add(t)
                if not t or t[0] == ALL_CARDS:  # every hole left over: nothing can add to it
                    raise _Saturated
            return
        k = self.sf[i]
        patterns = self.sf_patterns[k]
        start = last if i and self.sf[i - 1] == k else 0  # two rows of one size: unordered
        for j in range(start, len(patterns)):
            self.steps += 1
            s, w = patterns[j]
            m = masks[s]
            missing = w & ~m
            n = missing.bit_count()
            if n > h:
                continue
            rest = masks.copy()
            rest[s] = m & ~w
            added = cards
            while missing:
                low = missing & -missing
                added += (1 << (4 * (low.bit_length() - 1) + s),)
                missing ^= low
            self.sf_step(i + 1, j, rest, h - n, added)

    def rest(self, masks: list[int], h: int) -> list[tuple[int, ...]]:
        """The straight and flush rows on the cards left, with ``h`` holes: the tuples of
        ``h`` card sets (remembered)."""
        if not self.straight and not h:  # flush rows only: how many cards each suit holds
            key: tuple[int, ...] = (*(m.bit_count() for m in masks), h)
        elif self.flush:  # (with holes, which cards: a flush row's hole lacks its own card)
            key = (*masks, h)
        else:  # straight rows only: how many cards each rank holds
            key = (*_at_least(masks), h)
        known = self.known.get(key)
        if known is None:
            out: set[tuple[int, ...]] = set()
            try:
                self.flush_step(0, 0, masks, h, (), out)
            except _Saturated:
                out = {(ALL_CARDS,) * h}
            known = self.known[key] = list(out)
        return known

    # 2. the flush rows' suits
    def flush_step(
        self,
        i: int,
        last: int,
        masks: list[int],
        h: int,
        suits: tuple[int, ...],
        out: set[tuple[int, ...]],
    ) -> None:
        if i == len(self.flush):
            flush_suits = sorted(set(suits))
            demand = [
                sum(k for k, s in zip(self.flush, suits, strict=True) if s == f)
                for f in flush_suits
            ]
            hall = _Hall(
                masks,
                flush_suits,
                demand,
                h,
                bool(self.straight),
                [suits.count(f) for f in flush_suits],
            )
            if hall.needed(0, 0, 0) <= h:
                self.windows(hall, out)
            return
        k = self.flush[i]
        start = last if i and self.flush[i - 1] == k else 0
        for s in range(start, 4):
            self.steps += 1
            wanted = k + sum(self.flush[j] for j in range(i) if suits[j] == s)
            if wanted <= masks[s].bit_count() + h:
                self.flush_step(i + 1, s, masks, h, suits + (s,), out)  # noqa: RUF005 — faster

    # 3. the straight rows' windows, under Hall's condition
    def windows(self, hall: _Hall, out: set[tuple[int, ...]]) -> None:
        h = hall.holes
        self.steps += len(self.demands)
        if len(hall.terms) == 1:  # no flush row: one term, the ranks missing
            ((const, l1, l2, l3, _),) = hall.terms
            fits = [
                d
                for d in self.demands
                if const
                + (d[0] & ~l1).bit_count()
                + (d[1] & ~l2).bit_count()
                + (d[2] & ~l3).bit_count()
                <= h
            ]
        else:
            fits = self.demands
        out |= hall.fill(fits)


def _demands(sizes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Every choice of a window for each straight row (rows of one size unordered), as the
    ranks wanted at least once, twice and three times; each distinct choice once."""
    out: dict[tuple[int, int, int], None] = {}

    def walk(i: int, last: int, d1: int, d2: int, d3: int) -> None:
        if i == len(sizes):
            out[(d1, d2, d3)] = None
            return
        k = sizes[i]
        start = last if i and sizes[i - 1] == k else 0
        windows = _WINDOWS[k]
        for j in range(start, len(windows)):
            w = windows[j]
            walk(i + 1, j, d1 | w, d2 | (d1 & w), d3 | (d2 & w))

    walk(0, 0, 0, 0, 0)
    return list(out)


# The straight rows a clause may name besides others (three straights is a table lookup):
# none, one of 3 or 5 cards (12, 10 choices), 3 + 5 (120), 5 + 5 (55).
_DEMANDS: dict[tuple[int, ...], list[tuple[int, int, int]]] = {
    sizes: _demands(sizes) for sizes in ((), (3,), (5,), (3, 5), (5, 5), (3, 5, 5))
}


def _rank_key(masks: Sequence[int]) -> int:
    """The rank counts packed 3 bits a rank (``HandFacts.count_key``)."""
    key = 0
    for r in range(13):
        bit = 1 << r
        key += sum(1 for m in masks if m & bit) << (3 * r)
    return key


def _all_straights(masks: Sequence[int], holes: int) -> set[tuple[int, ...]]:
    key = _rank_key(masks)
    table = THREE_STRAIGHTS_BY_KEY
    if holes == 0:
        return {()} if key in table else set()
    if holes == 1:
        return {(RANK_CARDS[r],) for r in range(13) if key + (1 << 3 * r) in table}
    return {
        (RANK_CARDS[a], RANK_CARDS[b])
        for a in range(13)
        for b in range(a, 13)
        if key + (1 << 3 * a) + (1 << 3 * b) in table
    }


# How many rows of a 3 + 5 + 5 split into three flushes a suit holding this many cards fills.
_FLUSH_ROWS = {3: 1, 5: 1, 8: 2, 10: 2, 13: 3}


def _all_flushes(masks: Sequence[int], holes: int) -> set[tuple[int, ...]]:
    """Three flushes: a question of the suit counts, but for the holes' cards. A hole in a suit
    that fills one row stands for a card of it the cards lack; two holes in one suit stand for
    two cards, or, when the suit fills two rows, for one card the cards lack (the same card
    three times needs three rows)."""
    counts = [m.bit_count() for m in masks]

    def shaped(*extra: int) -> bool:
        c = counts.copy()
        for s in extra:
            c[s] += 1
        return tuple(sorted(c)) in THREE_FLUSH_SHAPES

    if holes == 0:
        return {()} if shaped() else set()

    def one(s: int, extra: int) -> int:  # the cards one hole of suit s may stand for
        if _FLUSH_ROWS[counts[s] + extra] >= 2:
            return SUIT_CARDS[s]
        return SUIT_CARDS[s] & ~_suit_cards(masks[s], s)

    out: set[tuple[int, ...]] = set()
    if holes == 1:
        for s in range(4):
            if shaped(s) and one(s, 1):
                out.add((one(s, 1),))
        return out
    for s in range(4):
        for t in range(s + 1, 4):
            if shaped(s, t):
                a, b = one(s, 1), one(t, 1)
                if a and b:
                    out.add((a, b) if a <= b else (b, a))
        if shaped(s, s):
            held = _suit_cards(masks[s], s)
            lacked = SUIT_CARDS[s] & ~held
            rows = _FLUSH_ROWS[counts[s] + 2]
            if rows == 1:
                out.update(_distinct_pairs(lacked))
            elif rows == 2:
                out.update(_distinct_pairs(held))
                if lacked:
                    out.add((lacked, SUIT_CARDS[s]))
            else:
                out.add((SUIT_CARDS[s], SUIT_CARDS[s]))
    return out


@lru_cache(maxsize=64)
def _spec(classes: Classes) -> tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A clause by kind: "straights" or "flushes" when its three rows are all that, else
    "search", with the sizes of its straight-flush, flush and straight rows."""
    named = [(size, c) for size, c in zip((3, 5, 5), classes, strict=True) if c is not None]
    kinds = {c for _, c in named}
    if len(named) == 3 and kinds == {STRAIGHT}:
        return "straights", (), (), ()
    if len(named) == 3 and kinds == {FLUSH}:
        return "flushes", (), (), ()

    def sizes(kind: str) -> tuple[int, ...]:
        return tuple(size for size, c in named if c == kind)

    return "search", sizes(STRAIGHT_FLUSH), sizes(FLUSH), sizes(STRAIGHT)


def search(
    classes: Classes, masks: Sequence[int], holes: int
) -> tuple[frozenset[tuple[int, ...]], int]:
    """``fills``, uncached, with the number of search steps it took (for the tests)."""
    cards = sum(m.bit_count() for m in masks)
    if not 0 <= holes <= 2 or cards + holes != 13:
        raise ValueError(
            f"a rows clause needs 13 cards and at most 2 holes, got {cards} cards and {holes} holes"
        )
    how, sf, flush, straight = _spec(classes)
    if how == "straights":
        return frozenset(_all_straights(masks, holes)), 1
    if how == "flushes":
        return frozenset(_all_flushes(masks, holes)), 1
    s = _Search(sf, flush, straight, masks, holes)
    try:
        s.sf_step(0, 0, list(masks), holes, ())
    except _Saturated:
        return frozenset({(ALL_CARDS,) * holes}), s.steps
    return frozenset(s.found), s.steps


@lru_cache(maxsize=1024)
def fills(
    classes: Classes, masks: tuple[int, int, int, int], holes: int
) -> frozenset[tuple[int, ...]]:
    """Every tuple of card sets the holes may stand for so that the cards make the clause (the
    module's docstring); empty when no choice of the holes' cards makes it. ``holes`` is 0, 1
    or 2, and the masks hold 13 cards less the holes."""
    return search(classes, masks, holes)[0]


def rows_hold(classes: Classes, masks: Sequence[int]) -> bool:
    """Whether 13 distinct cards (four suit masks) make the clause."""
    return bool(fills(classes, (masks[0], masks[1], masks[2], masks[3]), 0))


def rows_hold_with_repeats(classes: Classes, cards: Sequence[Card]) -> bool:
    """Whether 13 cards that may hold a card twice or three times (jokers that duplicate a card,
    at most two) make the clause: the repeats are holes that stand for their own cards."""
    masks = [0, 0, 0, 0]
    repeats: list[int] = []
    for card in cards:
        r, s = RANK_INDEX[card.rank], SUIT_INDEX[card.suit]
        if masks[s] >> r & 1:
            repeats.append(1 << (4 * r + s))
        else:
            masks[s] |= 1 << r
    found = fills(classes, (masks[0], masks[1], masks[2], masks[3]), len(repeats))
    if len(repeats) == 1:
        return any(repeats[0] & t[0] for t in found)
    if len(repeats) == 2:
        a, b = repeats
        return any((a & x and b & y) or (a & y and b & x) for x, y in found)
    return bool(found)
