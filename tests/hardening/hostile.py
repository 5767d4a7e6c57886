"""Hostile but size-limited requests (issue #13): the largest profiles the rules allow, and
requests invalid in bulk. Shared by the attack tests and ``bench/bench_hostile.py``."""

from __future__ import annotations

from typing import Any

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import request_from_json
from cpsettle_service.domain.cards.hands import HandClass
from cpsettle_service.domain.naturals.catalogue import Natural
from cpsettle_service.domain.profile.model import FRONT_CLASSES
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.domain.reading.reader import json_name
from cpsettle_service.profile_files import load_preset
from tests.support.tables import table

RANKS = "23456789TJQKA"


def maximal_profile(n: int) -> dict[str, Any]:
    """A valid profile holding the most the rules allow, distinct for each ``n``: every royalty
    entry (324, five of a kind included: the deck's jokers may duplicate), every progressive
    threshold (42), every natural, a 2,000-character description."""
    data = profile_to_dict(load_preset("ofc"))
    data["name"] = f"max-{n:08d}-" + "n" * 50
    data["description"] = f"{n:08d}" + "d" * 1992
    table = []
    for row in ("FRONT", "MIDDLE", "BACK"):
        classes = FRONT_CLASSES if row == "FRONT" else set(HandClass)
        for hc in sorted(classes, key=lambda c: c.order):
            entry = {"row": f"ROW_{row}", "handClass": json_name(hc)}
            table.append({**entry, "units": 1 + n % 1000})
            if hc is not HandClass.ROYAL_FLUSH:
                table += [{**entry, "rank": r, "units": 2} for r in RANKS]
    data["royalties"] = {"mode": "ROYALTY_MODE_ON_WIN_ADDED", "table": table}
    progressive = []
    for hc in sorted(FRONT_CLASSES, key=lambda c: c.order):
        progressive.append({"handClass": json_name(hc), "cards": 14})
        progressive += [{"handClass": json_name(hc), "rank": r, "cards": 15} for r in RANKS]
    data["fantasyland"]["progressive"] = progressive
    data["naturals"]["table"] = [{"natural": x.value, "rank": i, "units": 3 + i}
                                 for i, x in enumerate(Natural)]
    data["deck"] = {"jokers": 2, "jokerDuplicates": True}  # five of a kind can then occur
    return data


def bulk_requests() -> dict[str, tuple[str, Any]]:
    """Invalid in bulk, each within the 1 MiB message limit (the issue's four, and one within
    the 128 KiB a valid request may be, refused on its count)."""
    dead = request_from_json(table())
    dead.dead_cards.extend(["Zz"] * 200_000)
    players = request_from_json(table())
    for i in range(12_000):
        players.players.add(player_id=f"p{i}", seat=i + 10)
    row = request_from_json(table())
    row.players[0].arrangement.middle.extend(["Zz"] * 150_000)
    pairs = pb.ValidatePayoutsRequest(request=request_from_json(table()))
    for i in range(60_000):
        pairs.proposed_pairs.add(first="A", second=f"p{i}", money_for_first=1)
    fewer = request_from_json(table())
    fewer.dead_cards.extend(["Zz"] * 20_000)  # within a valid request's 128 KiB: the count
    return {
        "200,000 dead cards": ("Settle", dead),
        "20,000 dead cards": ("Settle", fewer),
        "12,000 players": ("Settle", players),
        "150,000 cards in one row": ("Settle", row),
        "60,000 proposed pairs": ("ValidatePayouts", pairs),
    }
