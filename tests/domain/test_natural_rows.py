"""The ``rows`` clause's constraint search (domain/naturals/rows.py, RULES.md §16.1, §16.3)
against a plain enumeration of the rows the clause names: for every clause, on distinct cards,
on cards a joker repeats, and with one or two jokers as wildcards (every card they may stand
for); and the search's steps stay within the bound its docstring states."""

from __future__ import annotations

import random
from itertools import combinations, combinations_with_replacement, product

import pytest

from cpsettle_service.domain.cards.cards import DECK
from cpsettle_service.domain.naturals.rows import (
    ALL_CARDS,
    fills,
    rows_hold,
    rows_hold_with_repeats,
    search,
)
from cpsettle_service.domain.naturals.vocabulary import RowClass, RowsClause

from ..support.reference_jokers import split_rows

CLASSES = (None, "STRAIGHT", "FLUSH", "STRAIGHT_FLUSH")
CLAUSES = [(f, m, b) for f in CLASSES for m, b in combinations_with_replacement(CLASSES, 2)
           if f or m or b]
STRAIGHTS = {k: [frozenset(12 if v in (1, 14) else v - 2 for v in range(low, low + k))
                 for low in range(1, 16 - k)] for k in (3, 5)}


def plain_split_exists(classes, cards) -> bool:
    """Whether the cards ((rank index, suit index), repeats allowed) make the clause: every way
    to pick a straight or straight flush for each such row, one after the other, from the cards
    left; then whether the flush rows' suits hold enough of what is left."""
    named = [(k, c) for k, c in zip((3, 5, 5), classes, strict=True) if c and c != "FLUSH"]
    flushes = [k for k, c in zip((3, 5, 5), classes, strict=True) if c == "FLUSH"]

    def flushes_fit(pool) -> bool:
        # the flush rows last: any cards of their suits, so only how many each suit holds
        counts = [sum(1 for _, t in pool if t == s) for s in range(4)]
        for suits in product(range(4), repeat=len(flushes)):
            if all(sum(k for k, t in zip(flushes, suits, strict=True) if t == s) <= counts[s]
                   for s in range(4)):
                return True
        return False

    def rows(k, cls, pool):
        for window in STRAIGHTS[k]:
            for s in range(4) if cls == "STRAIGHT_FLUSH" else (None,):
                picks = [[i for i, (r, t) in enumerate(pool) if r == rank and s in (None, t)]
                         for rank in window]
                yield from product(*picks)

    def go(i, pool):
        if i == len(named):
            return flushes_fit(pool)
        k, cls = named[i]
        return any(go(i + 1, [c for j, c in enumerate(pool) if j not in chosen])
                   for chosen in rows(k, cls, pool))

    return go(0, list(cards))


def as_pairs(cards):
    return [divmod(c.index, 4) for c in cards]


def masks_of(pairs):
    masks = [0, 0, 0, 0]
    for r, s in pairs:
        masks[s] |= 1 << r
    return tuple(masks)


def clause_of(classes) -> RowsClause:
    return RowsClause(*(RowClass(c) if c else None for c in classes))


def suit_heavy(rng: random.Random, n: int):
    """n distinct cards, most of one suit (straight flushes and flushes come close)."""
    s = rng.randrange(4)
    own = rng.sample([4 * r + s for r in range(13)], min(n, rng.randrange(6, 12)))
    rest = rng.sample([c for c in range(52) if c not in own], n - len(own))
    return [divmod(c, 4) for c in own + rest]


def some_hands(seed: int, n: int, size: int):
    rng = random.Random(seed)
    for i in range(n):
        if i % 2:
            yield suit_heavy(rng, size)
        else:
            yield [divmod(c, 4) for c in rng.sample(range(52), size)]


# ---------------------------------------------------------------------------------------------
# The plain enumeration is itself checked against the brute force the engine used before.


@pytest.mark.parametrize("classes", CLAUSES[::4], ids=str)
def test_the_plain_enumeration_agrees_with_the_old_split_search(classes) -> None:
    rng = random.Random(str(classes))
    for _ in range(3):
        cards = rng.sample(DECK, 13)
        if rng.random() < 0.5:  # a card held twice (a joker duplicating it)
            cards[rng.randrange(13)] = rng.choice(cards)
        old = split_rows(clause_of(classes), cards) is not None
        assert plain_split_exists(classes, as_pairs(cards)) == old


# ---------------------------------------------------------------------------------------------
# The search against the plain enumeration.


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_distinct_cards(classes) -> None:
    for pairs in some_hands(len(str(classes)), 16, 13):
        assert rows_hold(classes, masks_of(pairs)) == plain_split_exists(classes, pairs), pairs


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_cards_a_joker_repeats(classes) -> None:
    rng = random.Random(7 + len(str(classes)))
    for pairs in some_hands(3 + len(str(classes)), 8, 13):
        pairs[rng.randrange(13)] = rng.choice(pairs)
        if rng.random() < 0.5:
            pairs[rng.randrange(13)] = rng.choice(pairs)
        cards = [DECK[4 * r + s] for r, s in pairs]
        assert rows_hold_with_repeats(classes, cards) == plain_split_exists(classes, pairs)


def member(found, chosen) -> bool:
    """Whether the holes standing for ``chosen`` (card indexes) fit one tuple of ``found``."""
    bits = [1 << c for c in chosen]
    return any(all(b & t for b, t in zip(order, tup, strict=True))
               for tup in found for order in {tuple(bits), tuple(reversed(bits))})


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_one_joker_every_card(classes) -> None:
    for pairs in some_hands(11 + len(str(classes)), 3, 12):
        found = fills(classes, masks_of(pairs), 1)
        for c in range(52):
            assert member(found, (c,)) == plain_split_exists(classes, [*pairs, divmod(c, 4)]), (
                pairs, c)


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_two_jokers(classes) -> None:
    rng = random.Random(len(str(classes)))
    for pairs in some_hands(21 + len(str(classes)), 3, 11):
        found = fills(classes, masks_of(pairs), 2)
        held = [4 * r + s for r, s in pairs]
        tried = {(a, b) for a, b in combinations(rng.sample(range(52), 9), 2)}
        tried |= {(c, c) for c in rng.sample(range(52), 3)}  # both the same card
        tried |= {(rng.choice(held), rng.randrange(52)) for _ in range(4)}  # a held card again
        for a, b in tried:
            want = plain_split_exists(classes, [*pairs, divmod(a, 4), divmod(b, 4)])
            assert member(found, (a, b)) == want, (pairs, a, b)


def test_jokers_left_over_stand_for_anything() -> None:
    # A front straight already in the cards: the holes fill the rows left out.
    pairs = as_pairs(DECK[i] for i in (0, 5, 10, 20, 25, 30, 35, 40, 44, 48, 51))
    assert plain_split_exists(("STRAIGHT", None, None), pairs)
    assert fills(("STRAIGHT", None, None), masks_of(pairs), 2) == {(ALL_CARDS, ALL_CARDS)}


def test_wrong_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="13 cards and at most 2 holes"):
        search(("STRAIGHT", None, None), (1, 0, 0, 0), 2)
    with pytest.raises(ValueError, match="13 cards and at most 2 holes"):
        search(("STRAIGHT", None, None), (0x3FF, 0, 0, 0), 3)


# ---------------------------------------------------------------------------------------------
# The bound.

STEP_BOUND = 6000  # naturals/rows.py's docstring: "at most about 6,000 steps"


def test_the_steps_stay_within_the_bound_on_the_hands_that_cost_most() -> None:
    worst = {}
    for holes in (0, 1, 2):
        for pairs in some_hands(99 + holes, 60, 13 - holes):
            masks = masks_of(pairs)
            for classes in CLAUSES:
                steps = search(classes, masks, holes)[1]
                if steps > worst.get(classes, (0,))[0]:
                    worst[classes] = (steps, holes)
    most = max(steps for steps, _ in worst.values())
    assert 50 < most <= STEP_BOUND
