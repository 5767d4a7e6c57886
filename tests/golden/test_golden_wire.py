"""Golden files through the real path: each case's request JSON parsed as a
``cpsettle.v1.SettleRequest`` (``google.protobuf.json_format``), sent to the in-process server
over its unix socket through the project's own client, and the answer held to the same
hand-worked expectations as the in-process golden test (nets in units and money, rake, fouled,
natural, surrendered, Fantasyland cards, every pair in settlement order, the table's rake).

The in-process test (test_golden.py) reads the requests with ``table.request_from_dict``; the
server reads them with ``api/mapping.py``. A field the production mapping loses (say
``inFantasyland``) is invisible to the first and fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient
from cpsettle_service.profile_files import builtin_registry

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def served(client: SettlementClient, request: dict[str, Any]) -> pb.Settlement:
    message = json_format.ParseDict(request, pb.SettleRequest())  # unknown fields are errors
    return client.settle(message).settlement


def money_for_first(pair: pb.PairResult) -> int:
    """What moved to the pair's first player (negative: the first paid)."""
    if not pair.units:
        return 0
    return pair.paid if pair.payee == pair.first else -pair.paid


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_case_through_the_server(path: Path, client: SettlementClient) -> None:
    case = load(path)
    s = served(client, case["request"])
    expected = case["expected"]
    got = {p.player_id: p for p in s.players}
    assert set(got) == set(expected["players"]), "every player is listed"
    for pid, want in expected["players"].items():
        p = got[pid]
        actual = {
            "netUnits": p.net_units,
            "netMoney": p.net_money,
            "rake": p.rake,
            "fouled": p.fouled,
            "natural": p.natural or None,
            "surrendered": p.surrendered,
            "fantasylandCards": p.fantasyland.cards,
            # RULES.md §16.3: what each joker of the rows stands for
            "jokers": [f"Xj as {c}" for r in p.rows for c in r.joker_cards],
        }
        for key, value in want.items():
            assert actual[key] == value, (
                f"{pid}.{key}: expected {value}, the server says {actual[key]}\n"
                + "\n".join(s.text)
            )
        # the answer agrees with itself: status, flags and the Fantasyland decision
        assert p.fouled == (p.status == pb.PLAYER_STATUS_FOULED)
        assert p.surrendered == (p.status == pb.PLAYER_STATUS_SURRENDERED)
        assert bool(p.natural) == (p.status == pb.PLAYER_STATUS_NATURAL)
        assert p.fantasyland.qualifies == (p.fantasyland.cards > 0)
        assert p.net_money == p.money_before_rake - p.rake
    pairs = [[pr.first, pr.second, pr.units, money_for_first(pr)] for pr in s.pairs]
    assert pairs == expected["pairs"]
    assert s.rake == expected["rake"]
    assert sum(p.net_money for p in s.players) + s.rake == 0
    assert list(s.order) == [pid for pid in _order_from_pairs(expected["pairs"])]


def _order_from_pairs(pairs: list[list[Any]]) -> list[str]:
    """The settlement order as the golden pairs list it: (first, second) in button order."""
    order: list[str] = []
    for first, second, *_ in pairs:
        for pid in (first, second):
            if pid not in order:
                order.append(pid)
    return order


def _items(s: Any) -> list[tuple[str, ...]]:
    return [
        (pr.first, pr.second, pb.PairKind.Name(pr.kind), *(i.text for i in pr.items))
        for pr in s.pairs
    ]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_items_through_the_server_match_the_documented_json_form(
    path: Path, client: SettlementClient
) -> None:
    """Every line item, row and sentence the server writes is the one the engine writes for the
    same table read from its documented JSON form (``table.request_from_dict``)."""
    from cpsettle_service.domain.settle import settle
    from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile

    request = load(path)["request"]
    s = served(client, request)
    table, choice = request_from_dict(request)
    local = settle(table, resolve_profile(choice, builtin_registry()))
    assert _items(s) == [
        (pr.first, pr.second, f"PAIR_KIND_{pr.kind.name}", *(i.text for i in pr.items))
        for pr in local.pairs
    ]
    assert [r.text for pr in s.pairs for r in pr.rows] == [
        r.text for pr in local.pairs for r in pr.rows
    ]
    assert list(s.text) == list(local.text)
    assert [(p.player_id, p.fantasyland.text) for p in s.players] == [
        (p.player_id, p.fantasyland.text if p.fantasyland else "") for p in local.players
    ]
