"""House naturals' definitions (RULES.md §16.1) as a casino sends them in a profile, through the
real server and our own client: a clause sent as null is a clause left out, whichever it is,
and every definition the vocabulary cannot check is refused naming each problem, with the
profile's violation code."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError

DRAGON = "2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"
CLAUSES = ["rankGroups", "distinctRanks", "sameSuit", "sameColour", "colourSplit",
           "ranksAtLeast", "ranksAtMost", "ranksIn", "rows"]


def evaluate(client: SettlementClient, table: list[dict[str, Any]], cards: str = DRAGON):
    return client.evaluate({"preset": "shisanshui", "cards": cards.split(),
                            "profileOverrides": {"naturals": {"table": table}}})


def entry(definition: dict[str, Any], name: str = "HOUSE") -> dict[str, Any]:
    return {"natural": name, "rank": 1, "units": 4, "definition": definition}


@pytest.mark.parametrize("null", CLAUSES)
def test_a_clause_sent_as_null_is_left_out(client: SettlementClient, null: str) -> None:
    """Thirteen ranks, with one other clause null: read as the one clause (not "unknown field")."""
    kept = "sameSuit" if null == "distinctRanks" else "distinctRanks"
    definition = {kept: 13 if kept == "distinctRanks" else 1, null: None}
    assert list(evaluate(client, [entry(definition)]).playable_naturals) == ["HOUSE"]
