"""Random tables for property tests and benchmarks: real deals from one shuffled deck."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typed against this checkout; the fallback below is for older ones only
    from cpsettle_service.domain.cards import CANONICAL, evaluate_five, evaluate_three
else:
    try:
        from cpsettle_service.domain.cards import CANONICAL, evaluate_five, evaluate_three
    except ImportError:  # a checkout from before the wings (#25), which benches compare against
        from cpsettle_service.domain.cards import CANONICAL
        from cpsettle_service.domain.hands import evaluate_five, evaluate_three

DECK = list(CANONICAL)


def split(cards: list[str]) -> dict[str, list[str]]:
    return {"front": cards[:3], "middle": cards[3:8], "back": cards[8:13]}


def legal_arrangement(
    cards: list[str], rng: random.Random, tries: int = 200
) -> dict[str, list[str]]:
    """A random split of 13 cards whose rows are in order (falls back to a sorted split)."""
    cards = list(cards)
    for _ in range(tries):
        rng.shuffle(cards)
        f, m, b = evaluate_three(cards[:3]), evaluate_five(cards[3:8]), evaluate_five(cards[8:13])
        if m > b:
            cards[3:8], cards[8:13] = cards[8:13], cards[3:8]
            m, b = b, m
        if not f > m:
            return split(cards)
    return split(sorted(cards, key=lambda c: DECK.index(c)))


def random_table(
    rng: random.Random,
    players: int = 4,
    *,
    legal: bool = True,
    preset: str = "western",
    stacks: bool = False,
    surrender_rate: float = 0.0,
) -> dict[str, Any]:
    """A SettleRequest JSON form with ``players`` real hands dealt from one deck."""
    deck = DECK[:]
    rng.shuffle(deck)
    seats = sorted(rng.sample(range(10), players))
    out = []
    for i in range(players):
        cards = deck[13 * i : 13 * (i + 1)]
        p: dict[str, Any] = {"playerId": f"P{i + 1}", "seat": seats[i]}
        if surrender_rate and rng.random() < surrender_rate:
            p["surrender"] = True
        else:
            p["arrangement"] = legal_arrangement(cards, rng) if legal else split(cards)
        if stacks:
            p["stack"] = rng.choice([0, 100, 500, 1000, 2500, 10_000])
        out.append(p)
    return {"preset": preset, "buttonSeat": rng.choice([*seats, rng.randrange(10)]), "players": out}
