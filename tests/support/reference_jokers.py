"""The pre-#24 brute force, kept as the oracle the bounded joker resolution is tested against.

This is ``settle/jokers.py`` (``assignments``, ``best_assignment``, ``resolve_arrangement``,
``resolve_natural``) and the checking half of ``naturals/vocabulary.py`` (``split_rows`` and the
clause predicates it compiles) as they stood at 37507fb, before the engine stopped enumerating
(issue #24), with one correction to the spec: a ``rows`` clause's FLUSH or STRAIGHT_FLUSH row
must hold distinct cards (RULES.md §16.3: a row that holds the same card twice is no flush, nor
straight flush; docs/DECISIONS.md 26). At 37507fb ``split_rows`` counted such a row, held by a
duplicating joker, as a flush. It tries every allowed assignment of cards to the jokers (52 x 52
pairs with two duplicating jokers), for every natural in turn, and searches all 286 x 252 splits
of 13 cards for a mixed ``rows`` clause: minutes for the worst hand, so the tests pick their
hands to keep it to seconds. Only tests import it; it changes only where the spec does, never
with the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import combinations, product

from cpsettle_service.domain.cards.cards import CARD_BY_SPELLING, JOKER, Card, Rank, Suit
from cpsettle_service.domain.cards.hands import (
    HandRank,
    evaluate_five,
    evaluate_three,
    evaluate_with_repeats,
)
from cpsettle_service.domain.cards.rows import ROWS
from cpsettle_service.domain.naturals.facts import (
    RANK_INDEX,
    SF_BY_SIZE,
    SUIT_INDEX,
    THREE_FLUSH_SHAPES,
    THREE_STRAIGHTS_BY_KEY,
    HandFacts,
    multiset_facts,
)
from cpsettle_service.domain.naturals.vocabulary import Definition, RowClass, RowsClause
from cpsettle_service.domain.profile.model import RoyaltyMode, RuleProfile
from cpsettle_service.domain.settle.jokers import Assignment

Fouls = Callable[[Sequence[str], HandRank, HandRank, HandRank], bool]
Predicate = Callable[[HandFacts], bool]

# --------------------------------------------------------------------------- naturals/vocabulary

_RED = (SUIT_INDEX[Suit.HEART], SUIT_INDEX[Suit.DIAMOND])


def _mask_of(keep: Callable[[Rank], bool]) -> int:
    return sum(1 << RANK_INDEX[rank] for rank in Rank if keep(rank))


@lru_cache(maxsize=4096)
def _groups_fit(groups: tuple[int, ...], hosts: tuple[int, ...], two_pairs: bool) -> bool:
    if not groups:
        return True
    g, rest = groups[0], groups[1:]
    for i, h in enumerate(hosts):
        if h < g or (i and hosts[i - 1] == h):
            continue
        others = hosts[:i] + hosts[i + 1 :]
        if _groups_fit(rest, others, two_pairs):
            return True
        if (
            two_pairs
            and g <= 2
            and h >= 4
            and _groups_fit(rest, tuple(sorted((*others, 2))), two_pairs)
        ):
            return True
    return False


def _rank_groups_check(groups: tuple[int, ...], two_pairs: bool) -> Predicate:
    memo: dict[tuple[int, ...], bool] = {}

    def check(facts: HandFacts) -> bool:
        hist = facts.count_histogram
        held = memo.get(hist)
        if held is None:
            hosts = tuple(k for k in range(len(hist) - 1, 0, -1) for _ in range(hist[k]))
            held = memo[hist] = _groups_fit(groups, hosts[::-1], two_pairs)
        return held

    return check


def _is_straight(values: Sequence[int]) -> bool:
    if len(set(values)) != len(values):
        return False
    if max(values) - min(values) == len(values) - 1:
        return True
    low = [-1 if v == 12 else v for v in values]
    return max(low) - min(low) == len(values) - 1


def _row_ok(cls: RowClass | None, row: Sequence[Card]) -> bool:
    if cls is None:
        return True
    if cls is not RowClass.STRAIGHT and len({c.suit for c in row}) != 1:
        return False
    if len(set(row)) != len(row):  # the one correction: a card held twice is no flush
        return False
    return cls is RowClass.FLUSH or _is_straight([RANK_INDEX[c.rank] for c in row])


def split_rows(rows: RowsClause, cards: Sequence[Card]) -> tuple[tuple[Card, ...], ...] | None:
    """A (front, middle, back) split meeting the clause, searched over the 3 + 5 + 5 splits
    (the 5-card rows in either order), or ``None``."""
    cards = tuple(cards)
    for fi in combinations(range(13), 3):
        front = tuple(cards[i] for i in fi)
        if not _row_ok(rows.front, front):
            continue
        rest = [c for i, c in enumerate(cards) if i not in fi]
        for mi in combinations(range(10), 5):
            middle = tuple(rest[i] for i in mi)
            back = tuple(c for i, c in enumerate(rest) if i not in mi)
            if _row_ok(rows.middle, middle) and _row_ok(rows.back, back):
                return front, middle, back
    return None


def _rows_check(rows: RowsClause) -> Predicate:
    classes = {rows.front, rows.middle, rows.back}
    fast: Predicate | None = None
    if classes == {RowClass.STRAIGHT}:

        def fast(facts: HandFacts) -> bool:
            return facts.count_key in THREE_STRAIGHTS_BY_KEY
    elif classes == {RowClass.FLUSH}:

        def fast(facts: HandFacts) -> bool:
            return tuple(sorted(facts.suit_counts)) in THREE_FLUSH_SHAPES
    elif classes == {RowClass.STRAIGHT_FLUSH}:

        def fast(facts: HandFacts) -> bool:
            for n, mask in zip(facts.suit_counts, facts.suit_masks, strict=True):
                if n and mask not in SF_BY_SIZE.get(n, ()):
                    return False
            return True

    def check(facts: HandFacts) -> bool:
        if fast is not None and facts.suit_masks is not None:
            return fast(facts)
        return split_rows(rows, facts) is not None

    return check


def _clauses(d: Definition, quads_as_two_pairs: bool) -> list[Predicate]:
    checks: list[Predicate] = []
    if d.rank_groups:
        checks.append(_rank_groups_check(d.rank_groups, quads_as_two_pairs))
    if d.distinct_ranks is not None:
        n = d.distinct_ranks
        checks.append(lambda f: f.rank_mask.bit_count() >= n)
    if d.same_suit is not None:
        s = d.same_suit
        checks.append(lambda f: max(f.suit_counts) >= s)
    if d.same_colour is not None or d.colour_split is not None:
        a, b = _RED
        if d.same_colour is not None:
            c = d.same_colour
            checks.append(
                lambda f: (
                    max(
                        f.suit_counts[a] + f.suit_counts[b],
                        13 - f.suit_counts[a] - f.suit_counts[b],
                    )
                    >= c
                )
            )
        if d.colour_split is not None:
            sides = frozenset(d.colour_split)
            checks.append(lambda f: f.suit_counts[a] + f.suit_counts[b] in sides)
    outside = 0
    if d.ranks_at_least is not None:
        floor = d.ranks_at_least.value_int
        outside |= _mask_of(lambda rank: rank.value_int < floor)
    if d.ranks_at_most is not None:
        ceiling = d.ranks_at_most.value_int
        outside |= _mask_of(lambda rank: rank.value_int > ceiling)
    if d.ranks_in is not None:
        allowed = d.ranks_in
        outside |= _mask_of(lambda rank: rank not in allowed)
    if outside:
        checks.append(lambda f: not f.rank_mask & outside)
    if d.rows is not None:
        checks.append(_rows_check(d.rows))
    return checks


def compile_definition(d: Definition, quads_as_two_pairs: bool = True) -> Predicate:
    """One predicate over ``HandFacts`` (of distinct cards, or ``multiset_facts``)."""
    checks = _clauses(d, quads_as_two_pairs)

    def all_hold(facts: HandFacts) -> bool:
        return all(check(facts) for check in checks)

    return all_hold


def profile_predicates(profile: RuleProfile) -> dict[str, Predicate]:
    """The profile's naturals compiled by the code above (the profile's own predicates are the
    engine's)."""
    naturals = profile.naturals
    return {
        n: compile_definition(e.effective_definition, naturals.quads_as_two_pairs)
        for n, e in naturals.by_natural.items()
    }


# --------------------------------------------------------------------------- jokers


def assignments(
    cards13: Sequence[str], allowed: Sequence[Card], duplicates: bool
) -> Iterator[Assignment]:
    """Every allowed assignment of the hand's jokers (none: the hand as it is)."""
    positions = tuple(i for i, c in enumerate(cards13) if c == JOKER)
    texts = [str(c) for c in allowed]
    base = list(cards13)
    for choice in product(texts, repeat=len(positions)):
        if not duplicates and len(set(choice)) < len(choice):
            continue
        for p, c in zip(positions, choice, strict=True):
            base[p] = c
        yield Assignment(tuple(base), positions, choice)


def _joker_order(a: Assignment, suit_rank: dict[Suit, int]) -> tuple[int, ...]:
    out: list[int] = []
    for text in a.stands_for:
        card = CARD_BY_SPELLING[text]
        out += (card.rank.value_int, -suit_rank[card.suit])
    return tuple(out)


def best_assignment(
    cards13: Sequence[str],
    allowed: Sequence[Card],
    duplicates: bool,
    suit_order: Sequence[Suit],
    score: Callable[[Assignment], tuple[int, ...] | None],
) -> Assignment | None:
    suit_rank = {s: i for i, s in enumerate(suit_order)}
    best: Assignment | None = None
    best_key: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    for a in assignments(cards13, allowed, duplicates):
        s = score(a)
        if s is None:
            continue
        key = (s, _joker_order(a, suit_rank))
        if best_key is None or key > best_key:
            best, best_key = a, key
    return best


def natural_facts_of(a: Assignment) -> HandFacts:
    return multiset_facts([CARD_BY_SPELLING[c] for c in a.cards])


def rows_of(cards13: Sequence[str], profile: RuleProfile) -> tuple[HandRank, HandRank, HandRank]:
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


def resolve_arrangement(
    cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile, fouls: Fouls
) -> Assignment | None:
    royalties = profile.royalties
    paid = royalties.mode is not RoyaltyMode.NONE

    def score(a: Assignment) -> tuple[int, ...]:
        hf, hm, hb = rows_of(a.cards, profile)
        if fouls(a.cards, hf, hm, hb):
            return (0, 0, hb.strength, hm.strength, hf.strength)
        rows = zip(ROWS, (hf, hm, hb), strict=True)
        total = sum(royalties.units(row, h) for row, h in rows) if paid else 0
        return (1, total, hb.strength, hm.strength, hf.strength)

    return best_assignment(
        cards13, allowed, profile.deck.joker_duplicates, profile.ranking.suit_order, score
    )


def sorted_ranks(cards13: Iterable[str]) -> tuple[int, ...]:
    return tuple(sorted((CARD_BY_SPELLING[c].rank.value_int for c in cards13), reverse=True))


def resolve_natural(
    cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile, naturals: Sequence[str]
) -> tuple[str, Assignment] | None:
    """The best of ``naturals`` some assignment makes, and the assignment kept for it."""
    table = profile.naturals
    compiled = profile_predicates(profile)
    wanted = set(naturals)
    predicates = [(n, compiled[n]) for n in table.best_first if n in wanted]
    facts_cache: dict[tuple[str, ...], HandFacts] = {}

    def facts(a: Assignment) -> HandFacts:
        f = facts_cache.get(a.cards)
        if f is None:
            f = facts_cache[a.cards] = natural_facts_of(a)
        return f

    for name, predicate in predicates:

        def score(a: Assignment, predicate: Predicate = predicate) -> tuple[int, ...] | None:
            return sorted_ranks(a.cards) if predicate(facts(a)) else None

        found = best_assignment(
            cards13, allowed, profile.deck.joker_duplicates, profile.ranking.suit_order, score
        )
        if found is not None:
            return name, found
    return None
