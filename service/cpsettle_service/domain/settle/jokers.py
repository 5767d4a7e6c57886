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

Cost: one hand with one joker tries at most 52 cards, with two at most 52 x 52 = 2,704 pairs;
each try is three row look-ups (or one natural check). A table without jokers never comes here.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Callable, Iterable, Iterator, Sequence

from ..cards.cards import CARD_BY_SPELLING, DECK, JOKER, Card, Suit
from ..cards.hands import HandRank, evaluate_five, evaluate_three, evaluate_with_repeats
from ..cards.rows import ROWS
from ..naturals.facts import HandFacts, multiset_facts
from ..profile.model import RoyaltyMode, RuleProfile

__all__ = [
    "Assignment",
    "allowed_cards",
    "assignments",
    "best_assignment",
    "natural_facts_of",
    "rows_of",
    "resolve_arrangement",
    "resolve_natural",
    "sorted_ranks",
]

Fouls = Callable[[Sequence[str], HandRank, HandRank, HandRank], bool]
"""Whether 13 resolved cards (front, middle, back) with these hands foul (the settlement's own
foul check, suit tie-break included)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """A hand with its jokers resolved: ``cards`` the 13 canonical card texts with each joker
    replaced, ``positions`` where the jokers were, ``stands_for`` the card each stands for."""

    cards: tuple[str, ...]
    positions: tuple[int, ...]
    stands_for: tuple[str, ...]

    def in_row(self, start: int, stop: int) -> tuple[str, ...]:
        """The cards the jokers among positions ``start:stop`` stand for, in order."""
        return tuple(c for p, c in zip(self.positions, self.stands_for) if start <= p < stop)


def allowed_cards(table_cards: Iterable[str], duplicates: bool) -> tuple[Card, ...]:
    """The standard cards a joker may stand for, given every card text at the table (players'
    cards and dead cards, canonical; jokers among them are ignored)."""
    if duplicates:
        return DECK
    taken = {CARD_BY_SPELLING[c] for c in table_cards if c != JOKER}
    return tuple(c for c in DECK if c not in taken)


def assignments(cards13: Sequence[str], allowed: Sequence[Card], duplicates: bool
                ) -> Iterator[Assignment]:
    """Every allowed assignment of the hand's jokers (none: the hand as it is)."""
    positions = tuple(i for i, c in enumerate(cards13) if c == JOKER)
    texts = [str(c) for c in allowed]
    base = list(cards13)
    for choice in product(texts, repeat=len(positions)):
        if not duplicates and len(set(choice)) < len(choice):
            continue
        for p, c in zip(positions, choice):
            base[p] = c
        yield Assignment(tuple(base), positions, choice)


def _joker_order(a: Assignment, suit_rank: dict[Suit, int]) -> tuple[int, ...]:
    """Higher is better: each joker's card by rank, then by suit order, first joker first."""
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
    """The assignment with the highest ``score`` (``None`` from ``score``: not eligible), ties
    broken by the jokers' cards; ``None`` when no assignment is eligible."""
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
    """The natural facts of a resolved hand (its cards may repeat when jokers duplicate)."""
    return multiset_facts([CARD_BY_SPELLING[c] for c in a.cards])


def rows_of(cards13: Sequence[str], profile: RuleProfile) -> tuple[HandRank, HandRank, HandRank]:
    """The three hands of 13 resolved cards (rows holding a repeated card evaluated as such)."""
    wheel = profile.ranking.wheel
    if profile.deck.joker_duplicates and len(set(cards13)) < 13:
        cards = [CARD_BY_SPELLING[c] for c in cards13]
        return (evaluate_with_repeats(cards[:3]), evaluate_with_repeats(cards[3:8], wheel),
                evaluate_with_repeats(cards[8:], wheel))
    return (evaluate_three(cards13[:3]), evaluate_five(cards13[3:8], wheel),
            evaluate_five(cards13[8:], wheel))


def resolve_arrangement(cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile,
                        fouls: Fouls) -> Assignment | None:
    """The assignment an arranged hand settles with (module docstring); ``None`` only when
    the jokers have no allowed card."""
    royalties = profile.royalties
    paid = royalties.mode is not RoyaltyMode.NONE

    def score(a: Assignment) -> tuple[int, ...]:
        hf, hm, hb = rows_of(a.cards, profile)
        if fouls(a.cards, hf, hm, hb):
            return (0, 0, hb.strength, hm.strength, hf.strength)
        total = sum(royalties.units(row, h) for row, h in zip(ROWS, (hf, hm, hb))) if paid else 0
        return (1, total, hb.strength, hm.strength, hf.strength)

    return best_assignment(cards13, allowed, profile.deck.joker_duplicates,
                           profile.ranking.suit_order, score)


def sorted_ranks(cards13: Sequence[str]) -> tuple[int, ...]:
    """The 13 ranks from the highest down: what ``equalRank: COMPARE_CARDS`` compares."""
    return tuple(sorted((CARD_BY_SPELLING[c].rank.value_int for c in cards13), reverse=True))


def resolve_natural(cards13: Sequence[str], allowed: Sequence[Card], profile: RuleProfile,
                    naturals: Sequence[str]) -> tuple[str, Assignment] | None:
    """The best of ``naturals`` (names the profile plays) some assignment makes, and the
    assignment kept for it (highest sorted ranks, then the jokers' cards); ``None`` if none.

    Best is the profile's ``naturals.best_first`` order."""
    table = profile.naturals
    wanted = set(naturals)
    predicates = [(n, table.predicates[n]) for n in table.best_first if n in wanted]
    facts_cache: dict[tuple[str, ...], HandFacts] = {}

    def facts(a: Assignment) -> HandFacts:
        f = facts_cache.get(a.cards)
        if f is None:
            f = facts_cache[a.cards] = natural_facts_of(a)
        return f

    for name, predicate in predicates:
        def score(a: Assignment) -> tuple[int, ...] | None:
            return sorted_ranks(a.cards) if predicate(facts(a)) else None

        found = best_assignment(cards13, allowed, profile.deck.joker_duplicates,
                                profile.ranking.suit_order, score)
        if found is not None:
            return name, found
    return None
