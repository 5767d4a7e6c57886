"""Hostile but size-limited requests (issue #13): the largest profiles the rules allow, and
requests invalid in bulk. Shared by the attack tests and ``bench/bench_hostile.py``."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

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


def maximal_profile(n: int, jokers: bool = True) -> dict[str, Any]:
    """A valid profile holding the most the rules allow, distinct for each ``n``: every royalty
    entry (324, five of a kind included: the deck's jokers may duplicate), every progressive
    threshold (42), every natural, a 2,000-character description. ``jokers=False``: the same
    without the deck's jokers and so without five of a kind (a profile that uses none of
    RULES.md §16's searching extensions: the server settles its calls on the loop)."""
    data = profile_to_dict(load_preset("ofc"))
    data["name"] = f"max-{n:08d}-" + "n" * 50
    data["description"] = f"{n:08d}" + "d" * 1992
    table: list[dict[str, str | int]] = []
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
    data["naturals"]["table"] = [
        {"natural": x.value, "rank": i, "units": 3 + i} for i, x in enumerate(Natural)
    ]
    data["deck"] = {"jokers": 2, "jokerDuplicates": True}  # five of a kind can then occur
    if not jokers:
        del data["deck"]
        data["royalties"]["table"] = [e for e in table if "FIVE" not in str(e["handClass"])]
        data["naturals"]["table"] = [
            e for e in data["naturals"]["table"] if e["natural"] != "FIVE_OF_A_KIND"
        ]
    return data


def bulk_requests() -> dict[str, tuple[str, Message]]:
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


# --------------------------------------------------------------------------- RULES.md §16

# One definition per clause kind, each natural combining a few of them, ``rows`` in a quarter.
_CLAUSES: list[dict[str, Any]] = [
    {
        "rows": {
            "front": "ROW_CLASS_STRAIGHT",
            "middle": "ROW_CLASS_FLUSH",
            "back": "ROW_CLASS_STRAIGHT_FLUSH",
        }
    },
    {"rankGroups": [3, 2, 2, 2, 2], "sameColour": 8},
    {"distinctRanks": 11, "sameColour": 7},
    {"sameSuit": 8, "rows": {"back": "ROW_CLASS_FLUSH", "middle": "ROW_CLASS_STRAIGHT"}},
    {"colourSplit": [11, 2], "ranksAtLeast": "3"},
    {"ranksAtMost": "Q", "rows": {"middle": "ROW_CLASS_STRAIGHT", "back": "ROW_CLASS_STRAIGHT"}},
    {"ranksIn": ["2", "5", "8", "9", "T", "J", "Q", "K", "A"], "distinctRanks": 8},
    {"rankGroups": [5, 2, 2], "sameColour": 6},
]


def worst_section_16_profile(naturals: int = 32, n: int = 0) -> dict[str, Any]:
    """A profile with what makes §16 work search the most: 2 jokers that may duplicate, the
    32 naturals a table may hold, house definitions using every clause kind (``rows``
    included), detection on (no declaration required), ``equalRank: COMPARE_CARDS``. ``n``
    makes it distinct."""
    data = profile_to_dict(load_preset("western"))
    data["name"] = f"worst-16-{n}"
    data["deck"] = {"jokers": 2, "jokerDuplicates": True}
    data["naturals"]["requireDeclaration"] = False
    data["naturals"]["equalRank"] = "NATURAL_TIE_COMPARE_CARDS"
    data["naturals"]["table"] = [
        {
            "natural": f"HOUSE_{i:02d}",
            "rank": 1 + i,
            "units": 3 + i % 5,
            "definition": _CLAUSES[i % len(_CLAUSES)],
        }
        for i in range(naturals)
    ]
    return data


WORST_CARDS = ["Xj", "Xj", "2c", "3d", "5h", "7s", "9c", "Jd", "Kh", "4s", "6c", "8d", "Tc"]


def worst_section_16_requests(n: int = 0, naturals: int = 32) -> dict[str, tuple[str, Message]]:
    """The worst §16 requests this generator makes, by method: an ``EvaluateArrangement`` of 13
    loose cards with both jokers, and a ``Settle`` whose second player declares a house natural
    with both jokers among 13 cards (the first holds an arranged hand)."""
    profile = worst_section_16_profile(naturals, n)
    evaluate = request_from_json(
        {"profile": profile, "cards": WORST_CARDS}, pb.EvaluateArrangementRequest()
    )
    return {
        "EvaluateArrangement": ("EvaluateArrangement", evaluate),
        "Settle": ("Settle", worst_section_16_settle(n, naturals)),
    }


def worst_section_16_settle(n: int = 0, naturals: int = 32) -> pb.SettleRequest:
    """The ``Settle`` of ``worst_section_16_requests``."""
    profile = worst_section_16_profile(naturals, n)
    settle = table(players="AB", handId=f"worst-16-{n}")
    del settle["preset"]
    settle["profile"] = profile
    settle["players"][1] = {
        "playerId": "B",
        "seat": 2,
        "cards": ["Xj", "Xj", "2s", "3s", "5s", "Ts", "Qs", "Ks", "4c", "6c", "7c", "8c", "9c"],
        "declaredNatural": "HOUSE_00",
    }
    return request_from_json(settle)
