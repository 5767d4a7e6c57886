"""Naturals as data (RULES.md §16.1, §16.2): the catalogue written in the vocabulary agrees with the
hand-written predicates of earlier versions (kept here as the reference), the vocabulary's
clauses against literal readings, and every malformed definition is a violation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.cards.cards import DECK, Card, Rank, Suit, parse_cards
from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.naturals.catalogue import (
    BUILTIN_DEFINITIONS,
    Natural,
    builtin_predicate,
)
from cpsettle_service.domain.naturals.facts import hand_facts, multiset_facts
from cpsettle_service.domain.naturals.vocabulary import (
    compile_definition,
    definition_from_dict,
    definition_to_dict,
)

from ..support.reference_jokers import split_rows
from .test_naturals import RANK_SHAPES, _hand_from_rank_counts

N = Natural

# ---------------------------------------------------------------------------------------------
# The reference: the predicates as they were written by hand before the catalogue became data.


def _counts(cards: Sequence[Card]) -> tuple[Counter[Rank], Counter[Suit]]:
    return Counter(c.rank for c in cards), Counter(c.suit for c in cards)


def _straight(ints: Iterable[int]) -> bool:
    values = list(ints)
    if len(set(values)) != len(values):
        return False
    return any(
        max(v) - min(v) == len(v) - 1 for v in (set(values), {1 if x == 14 else x for x in values})
    )


def _split_exists(hand: Iterable[Card], row_ok: Callable[[list[Card]], bool]) -> bool:
    cards = list(hand)
    for fi in combinations(range(13), 3):
        front = [cards[i] for i in fi]
        if not row_ok(front):
            continue
        rest = [c for i, c in enumerate(cards) if i not in fi]
        for mi in combinations(range(10), 5):
            if row_ok([rest[i] for i in mi]) and row_ok(
                [c for i, c in enumerate(rest) if i not in mi]
            ):
                return True
    return False


def _is_straight(row: Iterable[Card]) -> bool:
    return _straight(c.rank.value_int for c in row)


def _is_flush(row: Iterable[Card]) -> bool:
    return len({c.suit for c in row}) == 1


def reference(natural: Natural, cards: Sequence[Card]) -> bool:
    ranks, suits = _counts(cards)
    c = sorted(ranks.values(), reverse=True)
    red = suits[Suit.HEART] + suits[Suit.DIAMOND]
    checks: dict[Natural, Callable[[], bool]] = {
        N.THIRTEEN_SAME_SUIT: lambda: max(suits.values()) == 13,
        N.DRAGON: lambda: len(ranks) == 13,
        N.TWELVE_SAME_SUIT: lambda: max(suits.values()) >= 12,
        N.TRIPS_AND_FIVE_PAIRS: lambda: [x for x in c if x % 2] == [3],
        N.FOUR_TRIPS: lambda: sum(1 for x in c if x >= 3) >= 4,
        N.THREE_STRAIGHTS: lambda: _split_exists(cards, _is_straight),
        N.THREE_FLUSHES: lambda: _split_exists(cards, _is_flush),
        N.SIX_PAIRS: lambda: sum(x // 2 for x in c) == 6,
        N.THREE_STRAIGHT_FLUSHES: lambda: _split_exists(
            cards, lambda row: _is_straight(row) and _is_flush(row)
        ),
        N.THREE_QUADS: lambda: c[:3] == [4, 4, 4],
        N.TWELVE_ROYALS: lambda: all(r.value_int >= 11 for r in ranks),
        N.ALL_HIGH: lambda: all(r.value_int >= 8 for r in ranks),
        N.ALL_LOW: lambda: all(r.value_int <= 8 for r in ranks),
        N.ONE_COLOUR: lambda: red in (0, 13),
        N.ONE_OFF_COLOUR: lambda: red in (1, 12),
        # Two ranks give trips; three more ranks (of the rest, a quad's spare counting) pairs.
        N.TWO_TRIPS_THREE_PAIRS: lambda: any(
            _pairs_left(c, a, b) >= 3
            for a, b in combinations(range(len(c)), 2)
            if c[a] >= 3 and c[b] >= 3
        ),
        N.FIVE_OF_A_KIND: lambda: c[0] >= 5,
    }
    return checks[natural]()


def _pairs_left(c: list[int], a: int, b: int) -> int:
    """Pairs from the ranks other than the two trips (a quad giving two)."""
    return sum(2 if x == 4 else 1 for j, x in enumerate(c) if j not in (a, b) and x >= 2)


COUNT_NATURALS = [
    n for n in Natural if n not in (N.THREE_STRAIGHTS, N.THREE_FLUSHES, N.THREE_STRAIGHT_FLUSHES)
]


@pytest.mark.parametrize("shape", RANK_SHAPES, ids=lambda p: "".join(map(str, p)))
def test_every_rank_shape_against_the_reference(shape: tuple[int, ...]) -> None:
    cards = _hand_from_rank_counts(shape)
    for natural in COUNT_NATURALS:
        assert builtin_predicate(natural)(hand_facts(cards)) == reference(natural, cards), natural


@settings(max_examples=150, deadline=None)
@given(st.permutations(DECK).map(lambda p: tuple(p[:13])))
def test_data_defined_catalogue_equals_the_reference_on_random_hands(
    cards: tuple[Card, ...],
) -> None:
    facts = hand_facts(cards)
    for natural in Natural:
        assert builtin_predicate(natural)(facts) == reference(natural, cards), natural


# ---------------------------------------------------------------------------------------------
# quadsAsTwoPairs (16.2).


def test_quads_as_two_pairs_off_counts_a_quad_once() -> None:
    quad_and_four_pairs = parse_cards("As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th 2c")
    three_quads = parse_cards("As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc 2c")
    trips_quad_pairs = parse_cards("As Ah Ad Ks Kh Kd Kc Qs Qh Js Jh Ts Th")
    six_pairs_off = builtin_predicate(N.SIX_PAIRS, False)
    assert builtin_predicate(N.SIX_PAIRS, True)(hand_facts(quad_and_four_pairs))
    assert not six_pairs_off(hand_facts(quad_and_four_pairs))  # 1 + 4 pairs
    assert not six_pairs_off(hand_facts(three_quads))  # 3 pairs
    assert not builtin_predicate(N.TRIPS_AND_FIVE_PAIRS, False)(hand_facts(trips_quad_pairs))
    # Trips still count as a pair plus a single (RULES.md §16.1), with the option off too.
    assert six_pairs_off(hand_facts(parse_cards("As Ah Ad Ks Kh Qs Qh Js Jh Ts Th 9s 9h")))
    assert six_pairs_off(hand_facts(parse_cards("As Ah Ks Kh Qs Qh Js Jh Ts Th 9s 9h 2c")))


@pytest.mark.parametrize("shape", RANK_SHAPES, ids=lambda p: "".join(map(str, p)))
def test_six_pairs_without_quads_as_two_pairs_reads_one_group_per_rank(
    shape: tuple[int, ...],
) -> None:
    cards = _hand_from_rank_counts(shape)
    expected = sum(1 for x in shape if x >= 2) >= 6
    assert builtin_predicate(N.SIX_PAIRS, False)(hand_facts(cards)) == expected


# ---------------------------------------------------------------------------------------------
# Clauses a catalogue natural does not use.

SUIT_SHAPES = [c for c in product(range(14), repeat=4) if sum(c) == 13]


def test_same_colour_and_colour_split_on_every_suit_count_vector() -> None:
    same_11 = compile_definition(definition_from_dict({"sameColour": 11}))
    split_10_3 = compile_definition(definition_from_dict({"colourSplit": [3, 10]}))
    for counts in SUIT_SHAPES:
        cards = tuple(
            Card(list(Rank)[i], s) for s, k in zip(Suit, counts, strict=True) for i in range(k)
        )
        red = counts[1] + counts[2]
        assert same_11(hand_facts(cards)) == (max(red, 13 - red) >= 11)
        assert split_10_3(hand_facts(cards)) == (red in (3, 10))


MIXED = {"front": "STRAIGHT", "middle": "FLUSH", "back": "ROW_CLASS_FLUSH"}


@settings(max_examples=60, deadline=None)
@given(st.permutations(DECK).map(lambda p: tuple(p[:13])), st.booleans())
def test_mixed_rows_clause_against_brute_force(cards: tuple[Card, ...], flush_front: bool) -> None:
    rows = dict(MIXED, front="FLUSH") if flush_front else MIXED
    check = compile_definition(definition_from_dict({"rows": rows}))
    want_front = _is_flush if flush_front else _is_straight
    expected = False
    for fi in combinations(range(13), 3):
        front = [cards[i] for i in fi]
        if want_front(front):
            rest = [c for i, c in enumerate(cards) if i not in fi]
            expected = _split_exists_fives(rest)
            if expected:
                break
    assert check(hand_facts(cards)) == expected


def _split_exists_fives(rest: list[Card]) -> bool:
    return any(
        _is_flush([rest[i] for i in mi])
        and _is_flush([c for i, c in enumerate(rest) if i not in mi])
        for mi in combinations(range(10), 5)
    )


def test_mixed_rows_clause_holds_and_its_split_is_a_witness() -> None:
    cards = parse_cards("4s 5h 6d 2h 7h 9h Jh Kh 3c 8c Tc Qc Ac")
    d = definition_from_dict({"rows": MIXED})
    assert compile_definition(d)(hand_facts(cards))
    assert d.rows is not None
    witness = split_rows(d.rows, cards)  # the brute force's
    assert witness is not None
    front, middle, back = witness
    assert _is_straight(front) and _is_flush(middle) and _is_flush(back)
    assert Counter(front + middle + back) == Counter(cards)


def test_ranks_in_and_thresholds() -> None:
    faces = compile_definition(definition_from_dict({"ranksIn": ["k", "Q", "J", "10"]}))
    assert faces(hand_facts(parse_cards("Ts Th Td Tc Js Jh Jd Jc Qs Qh Qd Qc Ks")))
    assert not faces(hand_facts(parse_cards("Ts Th Td Tc Js Jh Jd Jc Qs Qh Qd Qc As")))
    low_tens = compile_definition(definition_from_dict({"ranksAtLeast": "3", "ranksAtMost": "T"}))
    assert low_tens(hand_facts(parse_cards("3s 3h 4d 5c 6s 6h 7d 8c 9s 9h Td Tc 4s")))
    assert not low_tens(hand_facts(parse_cards("2s 3h 4d 5c 6s 6h 7d 8c 9s 9h Td Tc 4s")))


def test_multiset_facts_count_repeats() -> None:
    cards = parse_cards("As As Ah Ad Ac Ks Kh Qs Qh Js Jh Ts Th")  # As twice: a joker
    five = compile_definition(BUILTIN_DEFINITIONS[N.FIVE_OF_A_KIND])
    facts = multiset_facts(cards)
    assert facts.suit_masks is None and facts.count_histogram[5] == 1
    assert five(facts)
    assert compile_definition(BUILTIN_DEFINITIONS[N.SIX_PAIRS])(facts)
    assert not compile_definition(BUILTIN_DEFINITIONS[N.THREE_FLUSHES])(facts)
    assert multiset_facts(parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As")).suit_masks


# ---------------------------------------------------------------------------------------------
# Reading, writing, and the definitions the vocabulary cannot check.


def test_round_trip_of_every_catalogue_definition() -> None:
    for natural, definition in BUILTIN_DEFINITIONS.items():
        assert definition_from_dict(definition_to_dict(definition)) == definition, natural


BAD = [
    ({}, "definition", "at least one clause"),
    ({"sameSuit": 14}, "definition.sameSuit", "at most 13"),
    ({"distinctRanks": 0}, "definition.distinctRanks", "at least 1"),
    ({"rankGroups": [3, 3, 3, 3, 3]}, "definition.rankGroups", "15 cards"),
    ({"rankGroups": [7]}, "definition.rankGroups[0]", "1 to 6"),
    ({"rankGroups": ["2"]}, "definition.rankGroups[0]", "integer"),
    ({"colourSplit": [12, 2]}, "definition.colourSplit", "sum to 13"),
    ({"colourSplit": [13]}, "definition.colourSplit", "sum to 13"),
    ({"ranksAtLeast": "Z"}, "definition.ranksAtLeast", "rank"),
    ({"ranksAtLeast": "Q", "ranksAtMost": "9"}, "definition.ranksAtMost", "no hand"),
    ({"ranksIn": []}, "definition.ranksIn", "at least one"),
    ({"ranksIn": ["A", "a"]}, "definition.ranksIn", "twice"),
    ({"rows": {"front": "FULL_HOUSE"}}, "definition.rows.front", "STRAIGHT"),
    ({"rows": {"side": "FLUSH"}}, "definition.rows.side", "unknown field"),
    ({"rows": {}}, "definition.rows", "at least one row"),
    ({"pairs": 6}, "definition.pairs", "unknown field"),
    ("SIX_PAIRS", "definition", "must be an object"),
]


@pytest.mark.parametrize(("data", "field", "words"), BAD, ids=[str(b[0]) for b in BAD])
def test_a_definition_the_vocabulary_cannot_check_is_a_violation(
    data: object, field: str, words: str
) -> None:
    with pytest.raises(InvalidInput) as e:
        definition_from_dict(data)
    assert any(v.field == field and words in v.reason for v in e.value.violations), (
        e.value.violations
    )
