"""Random RULES.md §16 profiles and hands with jokers: house naturals of every clause kind (mixed
``rows`` clauses too), every tie and ranking option, dead cards. For the differential tests of
the joker resolution (tests/domain/test_jokers_differential.py) and bench/bench_jokers.py."""

from __future__ import annotations

import random
from typing import Any

from cpsettle_service.domain.cards.cards import CANONICAL, JOKER
from cpsettle_service.domain.naturals.catalogue import Natural
from cpsettle_service.domain.profile.model import RuleProfile
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.profile_files import load_preset

RANK_LETTERS = "23456789TJQKA"
ROW_CLASSES = (None, "STRAIGHT", "FLUSH", "STRAIGHT_FLUSH")
ROYALTY_MODES = (
    "ROYALTY_MODE_ON_WIN_ADDED",
    "ROYALTY_MODE_ON_WIN_REPLACES",
    "ROYALTY_MODE_ALWAYS",
    "ROYALTY_MODE_NONE",
)
SUITS = ("SUIT_SPADE", "SUIT_HEART", "SUIT_DIAMOND", "SUIT_CLUB")
CATALOGUE = [n.value for n in Natural if n is not Natural.FIVE_OF_A_KIND]
SPLIT_NATURALS = ("THREE_STRAIGHTS", "THREE_FLUSHES", "THREE_STRAIGHT_FLUSHES")


def random_rows(rng: random.Random, mixed: bool = True, front: bool = False) -> dict[str, str]:
    """A ``rows`` clause naming at least one row (mixed classes unless ``mixed`` is false; the
    front always named with ``front``, which the brute force searches much faster)."""
    while True:
        if mixed:
            classes = [rng.choice(ROW_CLASSES) for _ in range(3)]
        else:
            one = rng.choice(ROW_CLASSES[1:])
            classes = [one if rng.random() < 0.8 else None for _ in range(3)]
        if front and not classes[0]:
            continue
        if any(classes):
            return {k: c for k, c in zip(("front", "middle", "back"), classes, strict=True) if c}


def random_definition(
    rng: random.Random,
    duplicates: bool,
    rows_share: float = 0.5,
    jokers: int = 2,
    front: bool = False,
) -> dict[str, Any]:
    """One to three clauses of the vocabulary, loose enough that random hands make some."""
    d: dict[str, Any] = {}
    kinds = [
        "rankGroups",
        "distinctRanks",
        "sameSuit",
        "sameColour",
        "colourSplit",
        "ranksAtLeast",
        "ranksAtMost",
        "ranksIn",
    ]
    if rng.random() < rows_share:
        d["rows"] = random_rows(rng, front=front)
    for kind in rng.sample(kinds, rng.choice((0, 1, 1, 2)) if d else rng.choice((1, 2, 3))):
        if kind == "rankGroups":
            biggest = 4 + jokers if duplicates else 4
            groups: list[int] = []
            while sum(groups) < rng.randrange(2, 14):
                g = rng.choice((1, 2, 2, 2, 3, 3, 4, biggest))
                if sum(groups) + g > 13:
                    break
                groups.append(g)
            d[kind] = groups or [2]
        elif kind == "distinctRanks":
            d[kind] = rng.randrange(5, 14)
        elif kind == "sameSuit":
            d[kind] = rng.randrange(3, 9)
        elif kind == "sameColour":
            d[kind] = rng.randrange(7, 12)
        elif kind == "colourSplit":
            a = rng.randrange(0, 14)
            d[kind] = [a, 13 - a]
        elif kind == "ranksAtLeast":
            d[kind] = rng.choice(RANK_LETTERS[:6])
        elif kind == "ranksAtMost":
            d[kind] = rng.choice(RANK_LETTERS[7:])
        else:
            d[kind] = rng.sample(RANK_LETTERS, rng.randrange(8, 14))
    if (
        "ranksAtLeast" in d
        and "ranksAtMost" in d
        and (RANK_LETTERS.index(d["ranksAtLeast"]) > RANK_LETTERS.index(d["ranksAtMost"]))
    ):
        del d["ranksAtMost"]
    return d


def random_profile(
    rng: random.Random,
    *,
    jokers: int,
    duplicates: bool,
    naturals: int = 6,
    rows_share: float = 0.5,
    catalogue_share: float = 0.3,
    base: str = "",
    detect: bool | None = None,
    front: bool = False,
) -> RuleProfile:
    """A profile on a random preset with every §16 option drawn at random (``rows_share`` 0:
    no natural with a ``rows`` clause, the catalogue's three split naturals left out too)."""
    d = profile_to_dict(
        load_preset(
            base
            or rng.choice(["ofc", "eastern", "shisanshui", "one-six", "western", "classic-1-6"])
        )
    )
    d["deck"] = {"jokers": jokers, "jokerDuplicates": duplicates}
    if d["royalties"].get("table") or rng.random() < 0.5:
        if not d["royalties"].get("table"):
            d["royalties"]["table"] = profile_to_dict(load_preset("ofc"))["royalties"]["table"]
        d["royalties"]["mode"] = rng.choice(ROYALTY_MODES)
        if duplicates and rng.random() < 0.5:
            d["royalties"]["table"] = [
                *d["royalties"]["table"],
                {
                    "row": "ROW_BACK",
                    "handClass": "HAND_CLASS_FIVE_OF_A_KIND",
                    "units": rng.choice((0, 5, 50)),
                },
            ]
    suit_order = list(SUITS)
    rng.shuffle(suit_order)
    d["ranking"] = {
        "wheel": rng.choice(("WHEEL_LOWEST", "WHEEL_SECOND_HIGHEST")),
        "suitOrder": suit_order,
        "suitOrderTiebreak": rng.random() < 0.5,
        "rowTie": rng.choice(("ROW_TIE_PUSH", "ROW_TIE_SUIT_OF_HIGHEST_CARD")),
    }
    table: list[dict[str, Any]] = []
    catalogue = CATALOGUE if rows_share else [n for n in CATALOGUE if n not in SPLIT_NATURALS]
    names = rng.sample(catalogue, min(len(catalogue), naturals))
    for i in range(naturals):
        entry: dict[str, Any] = {"rank": rng.randrange(0, 6), "units": rng.randrange(1, 40)}
        if rng.random() < catalogue_share and names:
            entry["natural"] = names.pop()
        else:
            entry["natural"] = f"HOUSE_{i}"
            entry["definition"] = random_definition(rng, duplicates, rows_share, jokers, front)
        table.append(entry)
    if duplicates and rng.random() < 0.3 and len(table) < 32:
        table.append({"natural": "FIVE_OF_A_KIND", "rank": rng.randrange(0, 6), "units": 30})
    d["naturals"] = {
        "table": table,
        "requireDeclaration": (rng.random() < 0.5) if detect is None else not detect,
        "quadsAsTwoPairs": rng.random() < 0.5,
        "equalRank": rng.choice(("NATURAL_TIE_PUSH", "NATURAL_TIE_COMPARE_CARDS")),
    }
    return profile_from_dict(d)


def random_hand(
    rng: random.Random, jokers: int, dead: int = 0
) -> tuple[tuple[str, ...], list[str]]:
    """13 cards dealt from a shuffled deck with ``jokers`` of them made jokers, and ``dead``
    cards of the rest of the deck dead."""
    deck = list(CANONICAL)
    rng.shuffle(deck)
    cards = deck[:13]
    for i in rng.sample(range(13), jokers):
        cards[i] = JOKER
    return tuple(cards), deck[13 : 13 + dead]
