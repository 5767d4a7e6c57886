"""Hand-picked legal tables for service and client tests (cards checked distinct by a test)."""

from __future__ import annotations

import copy
from typing import Any

# Four legal, non-fouled arrangements using all 52 cards.
ARRANGEMENTS: dict[str, dict[str, list[str]]] = {
    # front pair of aces < middle two pair < back 9-high... (J-high flush in spades)
    "A": {
        "front": ["As", "Ad", "2c"],
        "middle": ["3c", "3d", "4h", "4s", "5c"],
        "back": ["6s", "7s", "8s", "9s", "Js"],
    },
    # front pair of kings < middle sixes full of twos < back king-high straight flush
    "B": {
        "front": ["Kc", "Kd", "2d"],
        "middle": ["6h", "6d", "6c", "2h", "2s"],
        "back": ["Th", "Jh", "Qh", "Kh", "9h"],
    },
    # front seven high < middle nines and eights < back queens full of jacks
    "C": {
        "front": ["3h", "4c", "7c"],
        "middle": ["8c", "8d", "9c", "9d", "Tc"],
        "back": ["Qc", "Qd", "Qs", "Jc", "Jd"],
    },
    # front pair of aces < middle tens and sevens < back three fives
    "D": {
        "front": ["Ac", "Ah", "3s"],
        "middle": ["7d", "7h", "Td", "Ts", "4d"],
        "back": ["5d", "5h", "5s", "8h", "Ks"],
    },
}


def table(preset: str = "western", players: str = "ABCD", **extra: Any) -> dict[str, Any]:
    """A SettleRequest in its JSON form, seats 1.. in the order given."""
    request: dict[str, Any] = {
        "handId": "test-hand",
        "tableId": "test-table",
        "roundId": "r1",
        "dealerId": "dealer-7",
        "preset": preset,
        "players": [
            {"playerId": pid, "seat": i + 1, "arrangement": copy.deepcopy(ARRANGEMENTS[pid])}
            for i, pid in enumerate(players)
        ],
    }
    request.update(extra)
    return request


# Every kind of line item the golden cases produce (tests/golden, tests/views check they do; rows
# are RowResults, never items: LINE_ITEM_KIND_ROW is the contract's, unused).
GOLDEN_LINE_ITEM_KINDS = frozenset(
    {
        "LINE_ITEM_KIND_MAJORITY_BONUS",
        "LINE_ITEM_KIND_SCOOP_BONUS",
        "LINE_ITEM_KIND_NO_SCORE",
        "LINE_ITEM_KIND_ROYALTIES",
        "LINE_ITEM_KIND_FOUL_PENALTY",
        "LINE_ITEM_KIND_NATURAL",
        "LINE_ITEM_KIND_SURRENDER",
        "LINE_ITEM_KIND_SCOOP_MULTIPLIER",
        "LINE_ITEM_KIND_HOME_RUN_MULTIPLIER",
    }
)
