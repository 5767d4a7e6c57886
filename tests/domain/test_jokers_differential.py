"""The joker resolution (RULES.md §16.3) against the brute force it replaced
(tests/support/reference_jokers.py, which tries every assignment): on random hands and random
§16 profiles the two keep the same assignment (the cards, where the jokers were, what each stands
for), so the same rows' hands, and the same natural with the same cards.

The profiles draw every option that changes the answer: 1 or 2 jokers, duplicates on and off,
dead cards (holes in the cards a joker may stand for), both wheel settings, a random suit order,
each royalty mode (OFC's table or the preset's), the suit tie-break of the foul check, house
naturals of every clause kind with mixed ``rows`` clauses, and ``quadsAsTwoPairs`` both ways.
The brute force is slow (a natural with a mixed ``rows`` clause searches 72,072 splits for each
of up to 2,704 assignments), so the hands here are picked to keep this file to about a minute
(two duplicating jokers meet house naturals without ``rows`` clauses; fewer cards for two jokers
to stand for); ``test_many_more_hands`` is the larger run (``slow``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from cpsettle_service.domain.cards.cards import Card
from cpsettle_service.domain.profile.model import RuleProfile
from cpsettle_service.domain.settle.evaluation import evaluate_hand
from cpsettle_service.domain.settle.fouls import foul_check
from cpsettle_service.domain.settle.jokers import (
    NaturalSearch,
    allowed_cards,
    resolve_arrangement,
    resolve_natural,
    rows_of,
)
from cpsettle_service.domain.settle.table import PlayerInput

from ..support import reference_jokers as reference
from ..support.joker_cases import random_hand, random_profile


def check_arrangement(
    profile: RuleProfile, cards: tuple[str, ...], allowed: Sequence[Card]
) -> None:
    fouls = foul_check(profile)
    new = resolve_arrangement(cards, allowed, profile, fouls)
    old = reference.resolve_arrangement(cards, allowed, profile, fouls)
    assert new == old, (cards, new, old)
    if new is not None:
        assert old is not None
        assert [h.name for h in rows_of(new.cards, profile)] == [
            h.name for h in reference.rows_of(old.cards, profile)
        ]


def check_naturals(
    profile: RuleProfile, cards: tuple[str, ...], allowed: Sequence[Card], each: bool
) -> None:
    names = profile.naturals.best_first
    new = resolve_natural(cards, allowed, profile, names)
    old = reference.resolve_natural(cards, allowed, profile, names)
    assert new == old, (cards, new, old)
    if each:  # every natural on its own: what EvaluateArrangement lists as playable
        search = NaturalSearch(cards, allowed, profile)
        for name in names:
            held = reference.resolve_natural(cards, allowed, profile, (name,)) is not None
            assert search.holds(name) == held, (cards, name)


def run_hands(
    seed: int,
    count: int,
    *,
    jokers: int,
    duplicates: bool,
    naturals: int,
    rows_share: float,
    dead: tuple[int, ...],
    each: bool = False,
    front: bool = True,
) -> int:
    """Random hands compared both ways; returns how many made some natural (so a run that
    never meets one is noticed)."""
    made = 0
    for i in range(count):
        rng = random.Random(seed * 10_000 + i)
        profile = random_profile(
            rng,
            jokers=jokers,
            duplicates=duplicates,
            naturals=naturals,
            rows_share=rows_share,
            front=front,
        )
        cards, dead_cards = random_hand(rng, jokers, rng.choice(dead))
        allowed = allowed_cards(list(cards) + dead_cards, duplicates)
        check_arrangement(profile, cards, allowed)
        if naturals:
            check_naturals(profile, cards, allowed, each and i % 2 == 0)
            made += (
                resolve_natural(cards, allowed, profile, profile.naturals.best_first) is not None
            )
    return made


@pytest.mark.parametrize("duplicates", [False, True])
def test_one_joker_arranged_and_naturals(duplicates: bool) -> None:
    made = run_hands(
        1 + duplicates,
        30,
        jokers=1,
        duplicates=duplicates,
        naturals=3,
        rows_share=0.4,
        dead=(0, 0, 8, 30),
        each=True,
    )
    assert made >= 4


def test_two_jokers_arranged() -> None:
    for duplicates in (False, True):
        run_hands(
            3 + duplicates,
            40,
            jokers=2,
            duplicates=duplicates,
            naturals=0,
            rows_share=0,
            dead=(0, 10, 30),
        )


def test_two_jokers_naturals_among_few_cards() -> None:
    made = run_hands(
        5, 20, jokers=2, duplicates=False, naturals=3, rows_share=0.4, dead=(28, 32, 36), each=True
    )
    assert made >= 2


def test_two_duplicating_jokers_naturals_without_rows() -> None:
    made = run_hands(6, 6, jokers=2, duplicates=True, naturals=3, rows_share=0.0, dead=(0,))
    assert made >= 1


def test_the_edges_agree_no_joker_and_no_card_left() -> None:
    rng = random.Random(21)
    profile = random_profile(
        rng, jokers=2, duplicates=False, naturals=3, rows_share=0.3, front=True
    )
    plain, _ = random_hand(rng, 0)
    kept = resolve_arrangement(plain, (), profile, foul_check(profile))
    assert kept is not None and kept.cards == plain
    check_arrangement(profile, plain, ())
    cards, _ = random_hand(rng, 2)
    for allowed in ((), allowed_cards(cards, False)[:1]):  # none left, or one for two jokers
        assert resolve_arrangement(cards, allowed, profile, foul_check(profile)) is None
        check_arrangement(profile, cards, allowed)
        assert resolve_natural(cards, allowed, profile, profile.naturals.best_first) is None
        check_naturals(profile, cards, allowed, each=True)


def test_evaluate_hand_lists_the_naturals_the_brute_force_finds() -> None:
    rng = random.Random(8)
    for _ in range(6):
        profile = random_profile(
            rng, jokers=1, duplicates=True, naturals=4, rows_share=0.5, front=True
        )
        cards, _ = random_hand(rng, 1)
        e = evaluate_hand(PlayerInput("p", 0, cards[:3], cards[3:8], cards[8:]), profile)
        allowed = allowed_cards(cards, True)
        assert [n.value for n in e.playable_naturals] == [
            n
            for n in profile.naturals.best_first
            if reference.resolve_natural(cards, allowed, profile, (n,)) is not None
        ]


LARGER_RUNS = [  # seed, hands, jokers, duplicates, naturals, rows share, dead cards, front named
    (11, 150, 1, False, 4, 0.5, (0, 20), True),
    (12, 150, 1, True, 4, 0.5, (0,), True),
    (13, 30, 1, False, 3, 0.5, (0,), False),
    (14, 200, 2, False, 0, 0.0, (0, 20), True),
    (15, 120, 2, True, 0, 0.0, (0,), True),
    (16, 40, 2, False, 4, 0.5, (30, 34), True),
    (17, 30, 2, True, 4, 0.0, (0,), True),
    (18, 3, 2, True, 2, 0.5, (0,), True),
]


@pytest.mark.slow
@pytest.mark.parametrize("run", LARGER_RUNS, ids=lambda r: f"seed{r[0]}")
def test_many_more_hands(
    run: tuple[int, int, int, bool, int, float, tuple[int, ...], bool],
) -> None:
    seed, hands, jokers, duplicates, naturals, rows_share, dead, front = run
    run_hands(
        seed,
        hands,
        jokers=jokers,
        duplicates=duplicates,
        naturals=naturals,
        rows_share=rows_share,
        dead=dead,
        front=front,
    )
