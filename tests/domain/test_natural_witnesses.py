"""The rows that witness a split natural (``naturals.find_split``, RULES.md §8) as a view shows
them: front 3 cards, the lower 5-card row in the middle and the higher at the back, each row
from its top card down; and the catalogue's definitions looked up by name (§16.1)."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.cards.cards import parse_cards
from cpsettle_service.domain.naturals.catalogue import (
    BUILTIN_DEFINITIONS,
    Natural,
    builtin_definition,
    find_split,
)


def rows(natural: Natural, text: str) -> list[str]:
    split = find_split(natural, parse_cards(text))
    assert split is not None
    return [" ".join(map(str, row)) for row in split]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # three suits: each row from the top; the spades' ace makes theirs the back
        (
            "2h 5h 9h 3c 6c 8c Jc Kc 4s 7s Ts Qs As",
            ["9h 5h 2h", "Kc Jc 8c 6c 3c", "As Qs Ts 7s 4s"],
        ),
        # eight spades: their top five are a 5-card row, their lowest three the front
        (
            "As Ks Qs Js Ts 9s 8s 7s 2h 3h 4h 5h 6h",
            ["9s 8s 7s", "6h 5h 4h 3h 2h", "As Ks Qs Js Ts"],
        ),
        # thirteen of a suit: the top five at the back, the next five in the middle
        (
            "2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd Ad",
            ["4d 3d 2d", "9d 8d 7d 6d 5d", "Ad Kd Qd Jd Td"],
        ),
    ],
)
def test_three_flushes_are_shown_from_the_top(text: str, want: list[str]) -> None:
    assert rows(Natural.THREE_FLUSHES, text) == want


def test_catalogue_definitions_by_name() -> None:
    for natural in Natural:
        assert builtin_definition(natural.value) is BUILTIN_DEFINITIONS[natural]
    # a house natural's name is not in the catalogue: it has no built-in definition
    assert builtin_definition("ONE_RED") is None
