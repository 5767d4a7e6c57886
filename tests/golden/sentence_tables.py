"""Random tables for the sentence renderers: every preset's random tables (fouls, surrenders,
stacks), and tables under random RULES.md §16 profiles — jokers in rows and in loose cards,
house naturals, naturals of equal rank compared card by card, suit tie-breaks, scoop and home-run
multipliers with royalties that can cancel a scoop, Fantasyland entries and stays."""

from __future__ import annotations

import random
from typing import Any

from cpsettle_service.domain.cards.cards import CANONICAL, JOKER
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset, preset_names
from tests.support.joker_cases import random_definition
from tests.support.random_tables import legal_arrangement, random_table

SUITS = ["SUIT_SPADE", "SUIT_HEART", "SUIT_DIAMOND", "SUIT_CLUB"]
MIRROR = str.maketrans("shdc", "hscd")  # spades <-> hearts, diamonds <-> clubs
ROYALTIES = profile_to_dict(load_preset("ofc"))["royalties"]["table"]


def preset_table(rng: random.Random, preset: str) -> dict[str, Any]:
    """A random table of ``preset`` as the wire tests draw them."""
    request = random_table(
        rng,
        rng.choice([2, 3, 4]),
        legal=rng.random() < 0.7,
        preset=preset,
        stacks=rng.random() < 0.5,
        surrender_rate=0.1 if not preset.startswith("ofc") else 0.0,
    )
    if preset.startswith("ofc"):
        for p in request["players"]:
            p["inFantasyland"] = rng.random() < 0.4
    return request


def house_table(rng: random.Random) -> dict[str, Any]:
    """A random table under a random profile: jokers, house naturals, every tie option."""
    preset = rng.choice(sorted(preset_names()))
    players = rng.choice([2, 3, 4])
    jokers = rng.choice((0, 1, 2))
    duplicates = rng.random() < 0.5
    deck = list(CANONICAL)
    rng.shuffle(deck)
    # a mirrored deal: the second player holds the first's ranks in the other suits, so rows and
    # naturals tie by rank (suit tie-breaks, naturals compared card by card)
    mirrored = rng.random() < 0.25
    if mirrored:
        first = [c for c in deck if c[1] in "sd"][:13]
        second = [c.translate(MIRROR) for c in first]
        deck = first + second + [c for c in deck if c not in first and c not in second]
    hands = [deck[13 * i : 13 * (i + 1)] for i in range(players)]
    spare = deck[13 * players :]  # cards nobody holds: the undealt and those jokers replaced
    for _ in range(jokers):
        hand = rng.choice(hands)
        i = rng.randrange(13)
        if hand[i] != JOKER:
            spare.append(hand[i])
            hand[i] = JOKER
    naturals = []
    for i in range(rng.choice((1, 3, 6))):
        naturals.append(
            {
                "natural": f"HOUSE_{i}",
                "rank": rng.randrange(0, 3),
                "units": rng.randrange(0, 12),
                "definition": random_definition(rng, duplicates, 0.3, max(jokers, 1)),
            }
        )
    if rng.random() < 0.5:
        naturals.append(
            {
                "natural": rng.choice(
                    ["DRAGON", "SIX_PAIRS", "THREE_FLUSHES", "ALL_HIGH", "ONE_COLOUR"]
                ),
                "rank": rng.randrange(0, 3),
                "units": rng.randrange(0, 12),
            }
        )
    detect = rng.random() < 0.6
    seats = sorted(rng.sample(range(10), players))
    out: list[dict[str, Any]] = []
    for i, hand in enumerate(hands):
        p: dict[str, Any] = {"playerId": f"P{i + 1}", "seat": seats[i]}
        roll = rng.random()
        if roll < 0.08:
            p["surrender"] = True
        elif roll < 0.25:
            p["cards"] = hand
            if not detect or rng.random() < 0.5:
                p["declaredNatural"] = rng.choice(naturals)["natural"]
        else:
            # a joker is arranged as a card nobody holds, then put back in its place
            stand_ins = iter(spare)
            plain = [next(stand_ins) if c == JOKER else c for c in hand]
            split = (
                legal_arrangement(plain, rng)
                if rng.random() < 0.8
                else {"front": plain[:3], "middle": plain[3:8], "back": plain[8:]}
            )
            rows = [
                c if c in hand else JOKER
                for c in (*split["front"], *split["middle"], *split["back"])
            ]
            if mirrored and i == 1 and "arrangement" in out[0]:
                rows = [
                    c.translate(MIRROR) if c != JOKER else c
                    for row in out[0]["arrangement"].values()
                    for c in row
                ]
                rows = [c if c in hand else JOKER for c in rows]
            p["arrangement"] = {"front": rows[:3], "middle": rows[3:8], "back": rows[8:]}
        if rng.random() < 0.5:
            p["stack"] = rng.choice([0, 100, 500, 2500])
        p["inFantasyland"] = rng.random() < 0.3
        out.append(p)
    suits = SUITS[:]
    rng.shuffle(suits)
    overrides: dict[str, Any] = {
        "deck": {"jokers": jokers, "jokerDuplicates": duplicates},
        "naturals": {
            "table": naturals,
            "requireDeclaration": not detect,
            "equalRank": rng.choice(("NATURAL_TIE_PUSH", "NATURAL_TIE_COMPARE_CARDS")),
            "vsFoul": rng.choice(("VS_FOUL_NATURAL_UNITS", "VS_FOUL_GREATER_OF_NATURAL_AND_FOUL")),
        },
        "ranking": {
            "rowTie": rng.choice(("ROW_TIE_PUSH", "ROW_TIE_SUIT_OF_HIGHEST_CARD")),
            "suitOrder": suits,
            "wheel": rng.choice(("WHEEL_LOWEST", "WHEEL_SECOND_HIGHEST")),
        },
        "scoring": {
            "scoopMultiplier": rng.choice((1, 2, 3)),
            "homeRun": {"minPlayers": rng.choice((3, 4)), "multiplier": rng.choice((1, 2))},
            "majorityBonus": rng.choice((0, 1)),
            "scoopBonus": rng.choice((0, 3)),
            "majorityBonusOnScoop": rng.random() < 0.5,
        },
        "royalties": {
            "mode": rng.choice(
                ("ROYALTY_MODE_ALWAYS", "ROYALTY_MODE_ON_WIN_ADDED", "ROYALTY_MODE_NONE")
            ),
            "table": ROYALTIES,
        },
        "foul": {
            "penalty": rng.choice(("FOUL_PENALTY_FIXED", "FOUL_PENALTY_SCOOPED")),
            "fixedUnits": rng.choice((0, 3, 6)),
            "paysOpponentRoyalties": rng.random() < 0.5,
        },
        "surrender": {"paysFouled": rng.random() < 0.5},
    }
    if rng.random() < 0.3:
        overrides["rake"] = {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 500}
    return {
        "preset": preset,
        "buttonSeat": rng.choice(seats),
        "players": out,
        "profileOverrides": overrides,
        "unitValue": rng.choice([1, 25, 100]),
        "currency": rng.choice(["EUR", "JPY", "KWD", ""]),
    }
