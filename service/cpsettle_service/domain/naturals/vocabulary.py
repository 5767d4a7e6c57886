"""Naturals as data: the clauses a natural's definition is made of (RULES.md §16.1).

A definition is a conjunction of clauses over the 13 cards; a hand makes the natural when every
clause holds. The vocabulary (JSON names as in a profile's ``naturals.table[].definition``):

=====================  ===========================================================================
clause                 holds when
=====================  ===========================================================================
``rankGroups``         disjoint groups of exactly these sizes can be taken from the ranks: a rank
                       held n times fills one group of any size up to n (trips serve as a pair
                       plus a single); with ``quadsAsTwoPairs`` a rank held four or more times may
                       instead fill two groups of 2
``distinctRanks``      at least n different ranks
``sameSuit``           at least n cards of one suit
``sameColour``         at least n cards of one colour (hearts and diamonds red)
``colourSplit``        exactly a cards of one colour and b of the other (``[12, 1]``)
``ranksAtLeast``       every card's rank is at least R (the ace high)
``ranksAtMost``        every card's rank is at most R (the ace high: an ace spoils ``8``)
``ranksIn``            every card's rank is one of these
``rows``               the cards split into a 3-card front and two 5-card rows whose classes are
                       at least these: ``STRAIGHT`` (a straight or straight flush), ``FLUSH`` (a
                       flush or straight flush), ``STRAIGHT_FLUSH``; a row left out is any cards.
                       The two 5-card rows may be taken in either order. Straights here accept
                       the wheel and A-2-3 / Q-K-A (RULES.md §14.13). A row that holds one card
                       twice (a joker duplicating a card of it) is no flush (RULES.md §16.3)
=====================  ===========================================================================

Bounds (a definition outside them is an invalid profile, one violation per problem): at most 13
groups in ``rankGroups``, each of 1 to 6 cards, 13 cards in all (a group of 5 or 6 needs jokers
that may duplicate, 16.3); every count 1 to 13; ``colourSplit`` two numbers summing to 13;
``ranksIn`` at most the 13 ranks, each once; at least one clause.

``compile_definition`` turns a definition into one predicate over ``HandFacts``; the clauses the
14 catalogue naturals use read the precomputed facts in O(1) (the uniform ``rows`` clauses are the
table lookups of ``natural_facts``), so the catalogue costs what the hand-written predicates cost.
Mixed ``rows`` clauses (say a straight front and two flushes), and ``rows`` over cards a joker
repeats, are the bounded constraint search of ``naturals.rows`` (never the 286 x 252 splits).
``definition_parts`` splits a definition by what its clauses read (the rank counts, the suit
counts, the rows), for the joker resolution that decides them for all a joker's cards at once.

>>> d = definition_from_dict({"colourSplit": [12, 1]})
>>> d.colour_split
(12, 1)
>>> definition_to_dict(d)
{'colourSplit': [12, 1]}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, ClassVar

from ..cards.cards import Rank, Suit
from ..errors import Collector, ViolationCode
from ..reading.reader import Reader, describe, read_card_rank
from ..reading.schema import card_rank, choice, integer, part, repeated, write_part
from .facts import (
    RANK_INDEX,
    SF_BY_SIZE,
    SUIT_INDEX,
    THREE_FLUSH_SHAPES,
    THREE_STRAIGHTS_BY_KEY,
    HandFacts,
)
from .rows import Classes, rows_hold, rows_hold_with_repeats

__all__ = [
    "MAX_GROUP",
    "Definition",
    "DefinitionParts",
    "Predicate",
    "RowClass",
    "RowsClause",
    "compile_definition",
    "definition_from_dict",
    "definition_parts",
    "definition_to_dict",
    "groups_fit",
    "read_definition",
]

MAX_GROUP = 6
"""The largest rank group: four cards of a rank and two jokers standing for it."""


class RowClass(StrEnum):
    """The least class a row of a ``rows`` clause must reach (proto ``NaturalRowClass``)."""

    STRAIGHT = "STRAIGHT"
    FLUSH = "FLUSH"
    STRAIGHT_FLUSH = "STRAIGHT_FLUSH"

    @property
    def wire_name(self) -> str:
        """The proto enum value name, which the JSON form writes (``ROW_CLASS_STRAIGHT``)."""
        return "ROW_CLASS_" + self.value


_ROW_CLASS_BY_NAME: dict[str, RowClass] = {}
for _rc in RowClass:
    _ROW_CLASS_BY_NAME[_rc.value] = _rc
    _ROW_CLASS_BY_NAME[_rc.wire_name] = _rc


@dataclass(frozen=True, slots=True)
class RowsClause:
    """The ``rows`` clause (proto ``NaturalRows``): each row's least class, or any cards."""

    proto_message: ClassVar[str] = "NaturalRows"

    front: RowClass | None = choice(RowClass, None, "The 3-card row's least class.", optional=True)
    middle: RowClass | None = choice(
        RowClass,
        None,
        "One 5-card row's least class (the two 5-card rows may be taken in either order).",
        optional=True,
    )
    back: RowClass | None = choice(
        RowClass, None, "The other 5-card row's least class.", optional=True
    )


@dataclass(frozen=True, slots=True)
class Definition:
    """A natural's definition: every clause that is set must hold (``None`` / ``()`` = unset).
    Its fields are declared in the profile's schema (``schema.py``); ``read_definition`` reads
    them with the checks across clauses."""

    proto_message: ClassVar[str] = "NaturalDefinition"

    rank_groups: tuple[int, ...] = repeated(
        int,
        13,
        "Disjoint groups of equal ranks of these sizes, e.g. [3, 3, 2, 2, 2]; each 1 to "
        f"{MAX_GROUP}, at most 13 cards in all.",
        omit_default=True,
    )
    distinct_ranks: int | None = integer(
        None, 1, 13, "At least this many different ranks.", optional=True
    )
    same_suit: int | None = integer(
        None, 1, 13, "At least this many cards of one suit.", optional=True
    )
    same_colour: int | None = integer(
        None,
        1,
        13,
        "At least this many cards of one colour (hearts and diamonds are red).",
        optional=True,
    )
    colour_split: tuple[int, int] | None = repeated(
        int, 2, "Exactly a cards of one colour and b of the other, a + b = 13: [12, 1].", None
    )
    ranks_at_least: Rank | None = card_rank(
        "Every card's rank is at least this one (the ace high).", None
    )
    ranks_at_most: Rank | None = card_rank(
        "Every card's rank is at most this one (the ace high).", None
    )
    ranks_in: tuple[Rank, ...] | None = repeated(
        "rank", 13, "Every card's rank is one of these.", None
    )
    rows: RowsClause | None = part(
        RowsClause, "A 3 + 5 + 5 split with rows of at least these classes.", None
    )

    @property
    def largest_group(self) -> int:
        return max(self.rank_groups, default=0)


Predicate = Callable[[HandFacts], bool]

# --------------------------------------------------------------------------- reading / writing

_COUNT_CLAUSES = (
    ("distinctRanks", "distinct_ranks"),
    ("sameSuit", "same_suit"),
    ("sameColour", "same_colour"),
)


def _ints(
    errors: Collector, r: Reader, key: str, problem: Callable[[int], str | None] = lambda _: None
) -> tuple[list[int], bool]:
    """A list's integers, each other entry named, each integer ``problem`` finds fault with
    named too (and kept); and whether every entry was an integer."""
    out: list[int] = []
    ok = True
    for path, value in r.items(key):
        if isinstance(value, float) and value.is_integer():  # JSON / protobuf Struct numbers
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            errors.add(path, f"must be an integer, got {describe(value)}", ViolationCode.PROFILE)
            ok = False
            continue
        said = problem(value)
        if said:
            errors.add(path, said, ViolationCode.PROFILE)
        out.append(value)
    return out, ok


def _group_problem(g: int) -> str | None:
    return None if 1 <= g <= MAX_GROUP else f"a group has 1 to {MAX_GROUP} cards, got {g}"


def read_definition(errors: Collector, path: str, data: object) -> Definition | None:
    """A definition from its JSON form; every problem is added to ``errors`` (then ``None``)."""
    before = len(errors.violations)
    r = Reader(errors, path, data, ViolationCode.PROFILE)
    groups, _ = _ints(errors, r, "rankGroups", _group_problem)  # each entry judged
    listed = r.raw("rankGroups")
    if isinstance(listed, list) and len(listed) > 13:
        errors.add(r.at("rankGroups"), "may list at most 13 groups", ViolationCode.PROFILE)
    if sum(groups) > 13:
        errors.add(
            r.at("rankGroups"),
            f"the groups need {sum(groups)} cards; a hand has 13",
            ViolationCode.PROFILE,
        )
    # A clause sent as null is left out (``raw`` marks it read, so it is no "unknown field").
    counts = {
        attr: r.integer(key, 0, minimum=1, maximum=13) if r.has(key) else r.raw(key)
        for key, attr in _COUNT_CLAUSES
    }
    split: tuple[int, int] | None = None
    if r.has("colourSplit"):
        values, all_numbers = _ints(errors, r, "colourSplit")
        if all_numbers:
            if len(values) != 2 or sum(values) != 13 or min(values) < 0:
                errors.add(
                    r.at("colourSplit"),
                    f"must be two numbers of cards that sum to 13, got {values}",
                    ViolationCode.PROFILE,
                )
            else:
                split = (max(values), min(values))
    else:
        r.raw("colourSplit")
    at_least = (
        read_card_rank(errors, r.at("ranksAtLeast"), r.raw("ranksAtLeast"))
        if r.has("ranksAtLeast")
        else r.raw("ranksAtLeast")
    )
    at_most = (
        read_card_rank(errors, r.at("ranksAtMost"), r.raw("ranksAtMost"))
        if r.has("ranksAtMost")
        else r.raw("ranksAtMost")
    )
    if at_least and at_most and at_least.value_int > at_most.value_int:
        errors.add(
            r.at("ranksAtMost"),
            f"is below ranksAtLeast ({at_least.value}): no hand can make it",
            ViolationCode.PROFILE,
        )
    ranks_in: tuple[Rank, ...] | None = None
    if r.has("ranksIn"):
        ranks = [read_card_rank(errors, p, v) for p, v in r.items("ranksIn")]
        if ranks and None not in ranks:
            if len(set(ranks)) != len(ranks):
                errors.add(r.at("ranksIn"), "lists a rank twice", ViolationCode.PROFILE)
            ranks_in = tuple(sorted({x for x in ranks if x}, key=lambda x: x.value_int))
        elif not ranks:
            errors.add(r.at("ranksIn"), "must list at least one rank", ViolationCode.PROFILE)
    else:
        r.raw("ranksIn")
    rows: RowsClause | None = None
    if r.has("rows"):
        rows_before = len(errors.violations)
        rr = r.obj("rows")
        classes: dict[str, RowClass | None] = {}
        for key in ("front", "middle", "back"):
            value = rr.raw(key)
            if value is None or value == "" or value == "ROW_CLASS_UNSPECIFIED":
                classes[key] = None
            elif isinstance(value, str) and value in _ROW_CLASS_BY_NAME:
                classes[key] = _ROW_CLASS_BY_NAME[value]
            else:
                allowed = ", ".join(m.value for m in RowClass)
                errors.add(
                    rr.at(key), f"must be one of {allowed}; got {value!r}", ViolationCode.PROFILE
                )
                classes[key] = None
        rr.finish()
        rows = RowsClause(**classes)
        if rows == RowsClause() and len(errors.violations) == rows_before:  # (else said)
            errors.add(
                r.at("rows"), "must name the class of at least one row", ViolationCode.PROFILE
            )
    else:
        r.raw("rows")
    r.finish()
    definition = Definition(
        rank_groups=tuple(sorted(groups, reverse=True)),
        colour_split=split,
        ranks_at_least=at_least or None,
        ranks_at_most=at_most or None,
        ranks_in=ranks_in,
        rows=rows,
        **counts,
    )
    if r.ok and definition == Definition() and len(errors.violations) == before:
        errors.add(
            path,
            "must hold at least one clause (rankGroups, distinctRanks, sameSuit, "
            "sameColour, colourSplit, ranksAtLeast, ranksAtMost, ranksIn, rows)",
            ViolationCode.PROFILE,
        )
    return definition if len(errors.violations) == before else None


def definition_from_dict(data: object, path: str = "definition") -> Definition:
    """A definition from its JSON form; ``InvalidInput`` naming every problem."""
    errors = Collector()
    definition = read_definition(errors, path, data)
    errors.raise_if_any()
    assert definition is not None
    return definition


def definition_to_dict(d: Definition) -> dict[str, Any]:
    """The JSON form (only the clauses that are set: ``schema.write_part``);
    ``definition_from_dict`` reads it back."""
    return write_part(d)


# --------------------------------------------------------------------------- checking

_RED = (SUIT_INDEX[Suit.HEART], SUIT_INDEX[Suit.DIAMOND])
_ALL_RANKS = (1 << 13) - 1


def _mask_of(keep: Callable[[Rank], bool]) -> int:
    return sum(1 << RANK_INDEX[rank] for rank in Rank if keep(rank))


@lru_cache(maxsize=4096)
def _groups_fit(groups: tuple[int, ...], hosts: tuple[int, ...], two_pairs: bool) -> bool:
    """Whether the groups (largest first) fit the hosts (rank counts, sorted) one group a host,
    or two groups of 2 in a host of four or more cards when ``two_pairs``."""
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
            and _groups_fit(rest, tuple(sorted([*others, 2])), two_pairs)
        ):
            return True
    return False


@lru_cache(maxsize=4096)
def groups_fit(groups: tuple[int, ...], histogram: tuple[int, ...], two_pairs: bool) -> bool:
    """The ``rankGroups`` clause (groups largest first) on a hand whose ``histogram[k]`` ranks
    are held exactly k times (``HandFacts.count_histogram``)."""
    hosts = tuple(k for k in range(len(histogram) - 1, 0, -1) for _ in range(histogram[k]))
    return _groups_fit(groups, hosts[::-1], two_pairs)


def _rank_groups_check(groups: tuple[int, ...], two_pairs: bool) -> Predicate:
    memo: dict[tuple[int, ...], bool] = {}

    def check(facts: HandFacts) -> bool:
        hist = facts.count_histogram
        held = memo.get(hist)
        if held is None:
            held = memo[hist] = groups_fit(groups, hist, two_pairs)
        return held

    return check


def _row_classes(rows: RowsClause) -> Classes:
    return (rows.front, rows.middle, rows.back)


def _rows_check(rows: RowsClause) -> Predicate:
    kinds = {rows.front, rows.middle, rows.back}
    classes = _row_classes(rows)
    fast: Predicate | None = None
    if kinds == {RowClass.STRAIGHT}:

        def fast(facts: HandFacts) -> bool:
            return facts.count_key in THREE_STRAIGHTS_BY_KEY
    elif kinds == {RowClass.FLUSH}:

        def fast(facts: HandFacts) -> bool:
            return tuple(sorted(facts.suit_counts)) in THREE_FLUSH_SHAPES
    elif kinds == {RowClass.STRAIGHT_FLUSH}:

        def fast(facts: HandFacts) -> bool:
            for n, mask in zip(facts.suit_counts, facts.suit_masks, strict=True):
                if n and mask not in SF_BY_SIZE.get(n, ()):
                    return False
            return True

    def check(facts: HandFacts) -> bool:
        masks = facts.suit_masks
        if masks is None:  # a card held twice (a joker duplicating it): no table holds it
            return rows_hold_with_repeats(classes, facts)
        if fast is not None:
            return fast(facts)
        return rows_hold(classes, masks)

    return check


def _suits_check(d: Definition) -> Callable[[Sequence[int]], bool] | None:
    """The clauses that read the suit counts (``Suit`` order), as one check; ``None``: none."""
    if d.same_suit is None and d.same_colour is None and d.colour_split is None:
        return None
    at_least = d.same_suit or 0
    colour = d.same_colour or 0
    sides = frozenset(d.colour_split) if d.colour_split is not None else None
    a, b = _RED

    def check(counts: Sequence[int]) -> bool:
        if max(counts) < at_least:
            return False
        red = counts[a] + counts[b]
        if max(red, 13 - red) < colour:
            return False
        return sides is None or red in sides

    return check


def _outside(d: Definition) -> int:
    """The ranks no card may have (``ranksAtLeast``, ``ranksAtMost``, ``ranksIn``)."""
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
    return outside


@dataclass(frozen=True, slots=True)
class DefinitionParts:
    """A definition split by what its clauses read. The rank clauses: ``groups``
    (``rankGroups``, largest first; ``()``: none), at least ``distinct`` ranks (0: no clause),
    no rank in ``outside``; the suit clauses as one check over the suit counts (``None``: none);
    the rows clause's classes (``None``: none)."""

    groups: tuple[int, ...]
    two_pairs: bool
    distinct: int
    outside: int
    suits: Callable[[Sequence[int]], bool] | None
    rows: Classes | None

    def ranks_hold(self, histogram: tuple[int, ...], rank_mask: int) -> bool:
        """Whether the rank clauses hold for a hand with this count histogram and rank mask."""
        if rank_mask & self.outside or rank_mask.bit_count() < self.distinct:
            return False
        return not self.groups or groups_fit(self.groups, histogram, self.two_pairs)


@lru_cache(maxsize=1024)
def definition_parts(d: Definition, quads_as_two_pairs: bool = True) -> DefinitionParts:
    """``d`` split by what its clauses read (the same clauses ``compile_definition`` checks)."""
    return DefinitionParts(
        groups=d.rank_groups,
        two_pairs=quads_as_two_pairs,
        distinct=d.distinct_ranks or 0,
        outside=_outside(d),
        suits=_suits_check(d),
        rows=_row_classes(d.rows) if d.rows is not None else None,
    )


def _clauses(d: Definition, quads_as_two_pairs: bool) -> list[Predicate]:
    checks: list[Predicate] = []
    if d.rank_groups:
        checks.append(_rank_groups_check(d.rank_groups, quads_as_two_pairs))
    if d.distinct_ranks is not None:
        n = d.distinct_ranks
        checks.append(lambda f: f.rank_mask.bit_count() >= n)
    suits = _suits_check(d)
    if suits is not None:
        checks.append(lambda f: suits(f.suit_counts))
    outside = _outside(d)
    if outside:  # (0 when every rank is allowed: the clause always holds)
        checks.append(lambda f: not f.rank_mask & outside)
    if d.rows is not None:
        checks.append(_rows_check(d.rows))
    return checks


def compile_definition(d: Definition, quads_as_two_pairs: bool = True) -> Predicate:
    """One predicate over ``HandFacts`` (of distinct cards, or ``multiset_facts``)."""
    checks = _clauses(d, quads_as_two_pairs)
    if len(checks) == 1:
        return checks[0]

    def all_hold(facts: HandFacts) -> bool:
        for check in checks:  # noqa: SIM110 — per hand: a loop, not all() over a generator
            if not check(facts):
                return False
        return True

    return all_hold


del _rc
