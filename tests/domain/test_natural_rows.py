"""The ``rows`` clause's constraint search (domain/naturals/rows.py, RULES.md §16.1, §16.3)
against a plain enumeration of the rows the clause names: for every clause, on distinct cards,
on cards a joker repeats, and with one or two jokers as wildcards (every card they may stand
for); a row that holds one card twice is no flush, pinned on hands where only a repeat could
make one; and the search's steps stay within the bound its docstring states."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import combinations, combinations_with_replacement, product

import pytest

from cpsettle_service.domain.cards.cards import DECK, JOKER, Card, parse_card
from cpsettle_service.domain.naturals.rows import (
    ALL_CARDS,
    Classes,
    fills,
    rows_hold,
    rows_hold_with_repeats,
    search,
)
from cpsettle_service.domain.naturals.vocabulary import RowClass, RowsClause
from cpsettle_service.domain.profile.model import RuleProfile
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.domain.settle.evaluation import evaluate_hand
from cpsettle_service.domain.settle.jokers import allowed_cards, resolve_natural
from cpsettle_service.domain.settle.table import PlayerInput
from cpsettle_service.profile_files import load_preset

from ..support import reference_jokers as reference
from ..support.reference_jokers import split_rows

Pair = tuple[int, int]  # (rank index, suit index)
Masks = tuple[int, int, int, int]  # a rank bit set per suit

CLASSES = (None, "STRAIGHT", "FLUSH", "STRAIGHT_FLUSH")
CLAUSES: list[Classes] = [
    (f, m, b) for f in CLASSES for m, b in combinations_with_replacement(CLASSES, 2) if f or m or b
]
STRAIGHTS = {
    k: [
        frozenset(12 if v in (1, 14) else v - 2 for v in range(low, low + k))
        for low in range(1, 16 - k)
    ]
    for k in (3, 5)
}


def plain_split_exists(classes: Classes, cards: Iterable[Pair]) -> bool:
    """Whether the cards ((rank index, suit index), repeats allowed) make the clause: every way
    to pick a straight or straight flush for each such row, one after the other, from the cards
    left; then whether the flush rows' suits hold enough distinct cards of what is left (a row
    holding one card twice is no flush, RULES.md §16.3)."""
    named = [(k, c) for k, c in zip((3, 5, 5), classes, strict=True) if c and c != "FLUSH"]
    flushes = [k for k, c in zip((3, 5, 5), classes, strict=True) if c == "FLUSH"]

    def flushes_fit(pool: list[Pair]) -> bool:
        # The flush rows last: any distinct cards of their suits. Rows of one suit can each
        # take distinct cards exactly when every set J of them asks for at most what the cards
        # can give J, each card once per row of J: sum of min(copies, |J|) (max-flow, min-cut).
        copies = Counter(pool)
        for suits in product(range(4), repeat=len(flushes)):
            fit = True
            for s in set(suits):
                sizes = [k for k, t in zip(flushes, suits, strict=True) if t == s]
                held = [n for (_, t), n in copies.items() if t == s]
                for n_rows in range(1, len(sizes) + 1):
                    for rows in combinations(sizes, n_rows):
                        if sum(rows) > sum(min(n, n_rows) for n in held):
                            fit = False
            if fit:
                return True
        return False

    def rows(k: int, cls: str, pool: list[Pair]) -> Iterator[tuple[int, ...]]:
        for window in STRAIGHTS[k]:
            for s in range(4) if cls == "STRAIGHT_FLUSH" else (None,):
                picks = [
                    [i for i, (r, t) in enumerate(pool) if r == rank and s in (None, t)]
                    for rank in window
                ]
                yield from product(*picks)

    def go(i: int, pool: list[Pair]) -> bool:
        if i == len(named):
            return flushes_fit(pool)
        k, cls = named[i]
        return any(
            go(i + 1, [c for j, c in enumerate(pool) if j not in chosen])
            for chosen in rows(k, cls, pool)
        )

    return go(0, list(cards))


def as_pairs(cards: Iterable[Card]) -> list[Pair]:
    return [divmod(c.index, 4) for c in cards]


def masks_of(pairs: Iterable[Pair]) -> Masks:
    masks = [0, 0, 0, 0]
    for r, s in pairs:
        masks[s] |= 1 << r
    return masks[0], masks[1], masks[2], masks[3]


def clause_of(classes: Classes) -> RowsClause:
    return RowsClause(*(RowClass(c) if c else None for c in classes))


def suit_heavy(rng: random.Random, n: int) -> list[Pair]:
    """n distinct cards, most of one suit (straight flushes and flushes come close)."""
    s = rng.randrange(4)
    own = rng.sample([4 * r + s for r in range(13)], min(n, rng.randrange(6, 12)))
    rest = rng.sample([c for c in range(52) if c not in own], n - len(own))
    return [divmod(c, 4) for c in own + rest]


def some_hands(seed: int, n: int, size: int) -> Iterator[list[Pair]]:
    rng = random.Random(seed)
    for i in range(n):
        if i % 2:
            yield suit_heavy(rng, size)
        else:
            yield [divmod(c, 4) for c in rng.sample(range(52), size)]


# ---------------------------------------------------------------------------------------------
# The plain enumeration is itself checked against the oracle's brute force over the splits.


@pytest.mark.parametrize("classes", CLAUSES[::4], ids=str)
def test_the_plain_enumeration_agrees_with_the_oracles_split_search(classes: Classes) -> None:
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
def test_distinct_cards(classes: Classes) -> None:
    for pairs in some_hands(len(str(classes)), 16, 13):
        assert rows_hold(classes, masks_of(pairs)) == plain_split_exists(classes, pairs), pairs


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_cards_a_joker_repeats(classes: Classes) -> None:
    rng = random.Random(7 + len(str(classes)))
    for pairs in some_hands(3 + len(str(classes)), 8, 13):
        pairs[rng.randrange(13)] = rng.choice(pairs)
        if rng.random() < 0.5:
            pairs[rng.randrange(13)] = rng.choice(pairs)
        cards = [DECK[4 * r + s] for r, s in pairs]
        assert rows_hold_with_repeats(classes, cards) == plain_split_exists(classes, pairs)


def member(found: Iterable[tuple[int, ...]], chosen: tuple[int, ...]) -> bool:
    """Whether the holes standing for ``chosen`` (card indexes) fit one tuple of ``found``."""
    bits = [1 << c for c in chosen]
    return any(
        all(b & t for b, t in zip(order, tup, strict=True))
        for tup in found
        for order in {tuple(bits), tuple(reversed(bits))}
    )


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_one_joker_every_card(classes: Classes) -> None:
    for pairs in some_hands(11 + len(str(classes)), 3, 12):
        found = fills(classes, masks_of(pairs), 1)
        for c in range(52):
            assert member(found, (c,)) == plain_split_exists(classes, [*pairs, divmod(c, 4)]), (
                pairs,
                c,
            )


@pytest.mark.parametrize("classes", CLAUSES, ids=str)
def test_two_jokers(classes: Classes) -> None:
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
    worst: dict[Classes, tuple[int, int]] = {}
    for holes in (0, 1, 2):
        for pairs in some_hands(99 + holes, 60, 13 - holes):
            masks = masks_of(pairs)
            for classes in CLAUSES:
                steps = search(classes, masks, holes)[1]
                if steps > worst.get(classes, (0, 0))[0]:
                    worst[classes] = (steps, holes)
    most = max(steps for steps, _ in worst.values())
    assert 50 < most <= STEP_BOUND


# ---------------------------------------------------------------------------------------------
# The corner of RULES.md §16.3: a row that holds the same card twice is no flush, in a ``rows``
# clause too. With every rank in {A, K, Q, J} a suit has four cards, so a flush of five needs a
# joker that repeats one of them; with T allowed too, the joker can be the card the row lacks.

ROYAL_HAND = "As Ks Qs Js Ah Kh Qh Jh Ad Kd Qd Jd"  # four of each suit but clubs


def cards_of(text: str) -> list[Card]:
    return [DECK[c] for c in card_indexes(text)]


def card_indexes(text: str) -> list[int]:
    return [DECK.index(parse_card(t)) for t in text.split()]


def test_a_flush_row_only_a_repeated_card_completes_is_no_flush() -> None:
    back_flush = (None, None, "FLUSH")
    assert not rows_hold_with_repeats(back_flush, cards_of(ROYAL_HAND + " As"))
    assert rows_hold(back_flush, masks_of(as_pairs(cards_of(ROYAL_HAND + " Ts"))))
    found = fills(back_flush, masks_of(as_pairs(cards_of(ROYAL_HAND))), 1)
    for held in card_indexes(ROYAL_HAND):
        assert not member(found, (held,)), DECK[held]
    for lacked in card_indexes("Ts 2s Th 9d"):  # a card the row lacks, of a suit held four times
        assert member(found, (lacked,)), DECK[lacked]
    assert not member(found, (DECK.index(parse_card("Ac")),))  # one club: no flush
    # Two jokers for the row's fifth card and the front: a repeat in the flush, or both the same
    # card the row lacks, is no flush; two different cards the row lacks are.
    front_and_back = ("FLUSH", None, "FLUSH")
    eleven = cards_of("As Ks Qs Ah Kh Qh Jh Ad Kd Qd Jd")
    found = fills(front_and_back, masks_of(as_pairs(eleven)), 2)
    js, ts, jc, tc = card_indexes("Js Ts Jc Tc")
    assert member(found, (js, ts)) and member(found, (js, DECK.index(parse_card("2h"))))
    assert not member(found, (js, js)) and not member(found, (jc, jc))
    assert member(found, (jc, tc)) == plain_split_exists(
        front_and_back, as_pairs([*eleven, DECK[jc], DECK[tc]])
    )
    for a, b in [(js, js), (jc, jc), (js, ts), (jc, tc), (js, DECK.index(parse_card("Kd")))]:
        assert member(found, (a, b)) == plain_split_exists(
            front_and_back, as_pairs([*eleven, DECK[a], DECK[b]])
        ), (DECK[a], DECK[b])


def test_a_repeated_card_in_a_suit_of_two_flush_rows_goes_to_the_other_row() -> None:
    # Nine spades 2..T and a joker repeating one: two flushes of five, each of distinct cards.
    two_flushes = (None, "FLUSH", "FLUSH")
    spades = "2s 3s 4s 5s 6s 7s 8s 9s Ts 2h 3h 4h"
    assert rows_hold_with_repeats(two_flushes, cards_of(spades + " 7s"))
    found = fills(two_flushes, masks_of(as_pairs(cards_of(spades))), 1)
    assert all(member(found, (i,)) for i in card_indexes(spades)[:9])
    # The same card three times needs three rows: two jokers repeating one spade do not fit.
    ten = cards_of("2s 3s 4s 5s 6s 7s 8s 9s 2h 3h 4h")
    found = fills(two_flushes, masks_of(as_pairs(ten)), 2)
    nine, two = card_indexes("9s 2s")
    assert not member(found, (nine, nine))
    assert member(found, (nine, two)) and member(found, (DECK.index(parse_card("Ts")),) * 2)


def royal_profile(jokers: int, *ranks: str) -> RuleProfile:
    d = profile_to_dict(load_preset("one-six"))
    d["deck"] = {"jokers": jokers, "jokerDuplicates": True}
    d["naturals"]["table"] = [
        {
            "natural": "ROYAL_FLUSH_BACK",
            "rank": 0,
            "units": 10,
            "definition": {"rows": {"back": "FLUSH"}, "ranksIn": list(ranks)},
        }
    ]
    return profile_from_dict(d)


@pytest.mark.parametrize("jokers", [1, 2])
def test_a_natural_a_repeated_card_alone_would_make_is_not_held(jokers: int) -> None:
    cards = tuple(ROYAL_HAND.split()[jokers - 1 :]) + (JOKER,) * jokers
    for ranks, held in ((("A", "K", "Q", "J"), None), (("A", "K", "Q", "J", "T"), "Ts")):
        profile = royal_profile(jokers, *ranks)
        allowed = allowed_cards(cards, True)
        found = resolve_natural(cards, allowed, profile, ["ROYAL_FLUSH_BACK"])
        if jokers == 1:  # (two duplicating jokers: minutes for the brute force)
            assert found == reference.resolve_natural(cards, allowed, profile, ["ROYAL_FLUSH_BACK"])
        if held is None:
            assert found is None, found
        else:
            assert found is not None and held in found[1].stands_for, found
        e = evaluate_hand(PlayerInput("p", 0, cards[:3], cards[3:8], cards[8:]), profile)
        assert [n.value for n in e.playable_naturals] == (
            [] if held is None else ["ROYAL_FLUSH_BACK"]
        )
