"""Naturals: special 13-card holdings (RULES.md §8, §16.1, §14.13).

A natural is a property of the 13 cards, not of the rows. Every natural of the catalogue is
*data*: a definition in the vocabulary of ``natural_vocabulary`` (the same one a house profile
uses for a natural of its own), compiled once at import into a predicate over the precomputed
``HandFacts``. To add a natural to the catalogue: add a ``Natural`` member with its label in
``_LABELS``, its definition in ``BUILTIN_DEFINITIONS``, and a test. A house that only needs it
for itself writes the definition into its profile instead.

=========================  =========================================  ==========================
natural                    definition                                 in counts (``c[r]`` cards
                                                                      of rank r, ``n[s]`` of
                                                                      suit s)
=========================  =========================================  ==========================
THIRTEEN_SAME_SUIT         ``sameSuit: 13``                           ``max(n) == 13``
DRAGON                     ``distinctRanks: 13``                      every ``c[r] == 1``
TWELVE_SAME_SUIT           ``sameSuit: 12`` (§14.13: at least 12)      ``max(n) >= 12``
TRIPS_AND_FIVE_PAIRS       ``rankGroups: [3,2,2,2,2,2]``              one odd count, and it is 3
FOUR_TRIPS                 ``rankGroups: [3,3,3,3]``                  four ``c[r] >= 3``
THREE_STRAIGHTS            ``rows`` all ``STRAIGHT``                  a sum of straights 3+5+5
THREE_FLUSHES              ``rows`` all ``FLUSH``                     suit counts part 3, 5, 5
SIX_PAIRS                  ``rankGroups: [2,2,2,2,2,2]``              ``sum(c[r] // 2) == 6``
THREE_STRAIGHT_FLUSHES     ``rows`` all ``STRAIGHT_FLUSH``            per suit, straights
THREE_QUADS                ``rankGroups: [4,4,4]``                    three ``c[r] == 4``
TWELVE_ROYALS              ``ranksIn: [J,Q,K,A]``
ALL_HIGH                   ``ranksAtLeast: 8``
ALL_LOW                    ``ranksAtMost: 8`` (an ace spoils it)
ONE_COLOUR                 ``sameColour: 13``
ONE_OFF_COLOUR             ``colourSplit: [12, 1]`` (一点红 / 一点黑)
TWO_TRIPS_THREE_PAIRS      ``rankGroups: [3,3,2,2,2]`` (双怪冲三)
FIVE_OF_A_KIND             ``rankGroups: [5]`` (五同: only with jokers that may duplicate)
=========================  =========================================  ==========================

The "in counts" column is what the hand-written predicates of earlier versions computed; the tests
keep them as the reference the data-defined catalogue is checked against. The rank-group naturals
follow ``naturals.quadsAsTwoPairs`` (RULES.md §16.2): by default a four of a kind counts as two
pairs.

Straights (3-card and 5-card) are consecutive ranks; the ace plays high (Q-K-A, T-J-Q-K-A) or low
(A-2-3, A-2-3-4-5). The wheel always counts here, whatever the profile's ``wheel`` setting
(RULES.md §14.13), because the wheel setting only orders straights, it never unmakes one.

Performance: ``naturals_held`` computes the ``HandFacts`` once and every catalogue predicate is
then O(1) arithmetic or one dict/set lookup in a table built at import. The split naturals never
search the 3 + 5 + 5 splits: three straights is a lookup of the packed rank counts among the sums
of three straights, three straight flushes a lookup of each suit's rank mask.

>>> from cpsettle_service.domain.cards import parse_cards
>>> hand = parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")
>>> sorted(naturals_held(hand))
[<Natural.DRAGON: 'DRAGON'>, <Natural.THREE_STRAIGHTS: 'THREE_STRAIGHTS'>]
>>> Natural.SIX_PAIRS.label
'Six pairs'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

from ..cards.cards import Card, Suit
from .facts import RANK_INDEX as _RANK_INDEX
from .facts import SF_BY_SIZE as _SF_BY_SIZE
from .facts import STRAIGHTS_5, HandFacts, hand_facts
from .facts import SUIT_INDEX as _SUIT_INDEX
from .facts import THREE_STRAIGHTS_BY_KEY as _THREE_STRAIGHTS
from .vocabulary import Definition, Predicate, compile_definition, definition_from_dict

__all__ = [
    "Natural",
    "HandFacts",
    "hand_facts",
    "BUILTIN_DEFINITIONS",
    "builtin_definition",
    "PREDICATES",
    "SPLIT_NATURALS",
    "builtin_predicate",
    "holds",
    "naturals_held",
    "find_split",
]


class Natural(StrEnum):
    """A natural of the catalogue (RULES.md §8, §16.1); the value is the name."""

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
    ONE_OFF_COLOUR = "ONE_OFF_COLOUR"
    TWO_TRIPS_THREE_PAIRS = "TWO_TRIPS_THREE_PAIRS"
    FIVE_OF_A_KIND = "FIVE_OF_A_KIND"

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
    Natural.ONE_OFF_COLOUR: "Twelve of one colour and one of the other",
    Natural.TWO_TRIPS_THREE_PAIRS: "Two threes of a kind and three pairs",
    Natural.FIVE_OF_A_KIND: "Five of a kind",
}

_ALL = {"front": "STRAIGHT", "middle": "STRAIGHT", "back": "STRAIGHT"}
BUILTIN_DEFINITIONS: dict[Natural, Definition] = {
    natural: definition_from_dict(data, f"catalogue {natural.value}")
    for natural, data in {
        Natural.THIRTEEN_SAME_SUIT: {"sameSuit": 13},
        Natural.DRAGON: {"distinctRanks": 13},
        Natural.TWELVE_SAME_SUIT: {"sameSuit": 12},
        Natural.TRIPS_AND_FIVE_PAIRS: {"rankGroups": [3, 2, 2, 2, 2, 2]},
        Natural.FOUR_TRIPS: {"rankGroups": [3, 3, 3, 3]},
        Natural.THREE_STRAIGHTS: {"rows": _ALL},
        Natural.THREE_FLUSHES: {"rows": {k: "FLUSH" for k in _ALL}},
        Natural.SIX_PAIRS: {"rankGroups": [2, 2, 2, 2, 2, 2]},
        Natural.THREE_STRAIGHT_FLUSHES: {"rows": {k: "STRAIGHT_FLUSH" for k in _ALL}},
        Natural.THREE_QUADS: {"rankGroups": [4, 4, 4]},
        Natural.TWELVE_ROYALS: {"ranksIn": ["J", "Q", "K", "A"]},
        Natural.ALL_HIGH: {"ranksAtLeast": "8"},
        Natural.ALL_LOW: {"ranksAtMost": "8"},
        Natural.ONE_COLOUR: {"sameColour": 13},
        Natural.ONE_OFF_COLOUR: {"colourSplit": [12, 1]},
        Natural.TWO_TRIPS_THREE_PAIRS: {"rankGroups": [3, 3, 2, 2, 2]},
        Natural.FIVE_OF_A_KIND: {"rankGroups": [5]},
    }.items()
}
"""Every catalogue natural as data, in the vocabulary of ``natural_vocabulary``."""

# The compiled catalogue, for each setting of quadsAsTwoPairs.
_COMPILED: dict[bool, dict[Natural, Predicate]] = {
    two_pairs: {n: compile_definition(d, two_pairs) for n, d in BUILTIN_DEFINITIONS.items()}
    for two_pairs in (True, False)
}


def builtin_definition(name: str) -> Definition | None:
    """The catalogue's definition of the natural called ``name``; ``None`` outside it."""
    return BUILTIN_DEFINITIONS[Natural(name)] if name in Natural.__members__ else None


def builtin_predicate(natural: Natural, quads_as_two_pairs: bool = True) -> Predicate:
    """The compiled catalogue predicate of ``natural`` (over ``HandFacts``)."""
    return _COMPILED[quads_as_two_pairs][natural]


def _over_cards(predicate: Predicate) -> Callable[[Sequence[Card]], bool]:
    def over_cards(cards: Sequence[Card]) -> bool:
        return predicate(hand_facts(cards))

    return over_cards


PREDICATES: dict[Natural, Callable[[Sequence[Card]], bool]] = {
    n: _over_cards(p) for n, p in _COMPILED[True].items()
}
"""One predicate per natural (the spec's defaults); each takes the 13 cards or their facts."""

_CATALOGUE_TRUE = tuple(_COMPILED[True].items())


def holds(natural: Natural | str, cards: Sequence[Card]) -> bool:
    """Whether the 13 cards make ``natural``. ``ValueError`` for an unknown natural or bad cards."""
    try:
        predicate = _COMPILED[True][Natural(natural)]
    except (ValueError, KeyError):
        raise ValueError(f"unknown natural {natural!r}") from None
    return predicate(hand_facts(cards))


def naturals_held(cards: Sequence[Card]) -> frozenset[Natural]:
    """Every natural of the catalogue the 13 cards make (facts computed once)."""
    facts = hand_facts(cards)
    return frozenset([n for n, predicate in _CATALOGUE_TRUE if predicate(facts)])


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
    if not _COMPILED[True][Natural.THREE_FLUSHES](facts):
        return None
    by_suit = [[c for c in _by_rank_desc(facts) if c.suit is s] for s in Suit]
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
    if not _COMPILED[True][Natural.THREE_STRAIGHT_FLUSHES](facts):
        return None
    card_at = {(_RANK_INDEX[c.rank], _SUIT_INDEX[c.suit]): c for c in facts}
    threes: list[tuple[Card, ...]] = []
    fives: list[tuple[int, tuple[Card, ...]]] = []
    for s, (n, mask) in enumerate(zip(facts.suit_counts, facts.suit_masks, strict=True)):
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
