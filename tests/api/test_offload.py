"""Calls settled in a worker process answer exactly what the event loop answers (issue 24,
part 2): the same bytes, ids, log events and metrics, on RULES.md §16 tables (jokers, house
naturals defined as data, both), for Settle, ValidatePayouts and EvaluateArrangement.

Two real servers in this process, each called through our client: one with no engine workers
(everything on the loop, as before), one whose §16 calls go to its worker. Their clocks and
keys are the same, so every byte of a settlement, its time of issue and Ed25519 signature
included, depends on the request alone.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.api.servicer import LIVE, WORKER
from cpsettle_service.config import Settings
from cpsettle_service.observability import metrics
from cpsettle_service.observability.logging import get_logger
from cpsettle_service.proof.keys import generate_pem, signing_key_from_pem
from cpsettle_service.proof.seal import Sealer
from cpsettle_service.server import build_server
from tests.conftest import LogStream, ServerHandle
from tests.support.tables import table

ISSUED_MS = 1_796_126_400_000  # 2026-12-01T12:00:00.000Z
KEY = generate_pem()
# what differs between two log lines of the same event: when and where in the chain
UNSTABLE = {"timestamp", "log", "index"}  # the run's log and each line's place in it


def start(sock: Path, engine_workers: int) -> ServerHandle:
    settings = Settings(
        unix_socket=str(sock), metrics_port=0, grace_seconds=2.0, engine_workers=engine_workers
    )
    sealer = Sealer(
        signing_key_from_pem(KEY),
        log=metrics.CountedAuditLog(get_logger("cpsettle.audit")),
        clock=lambda: ISSUED_MS,
    )
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="grpc-loop").start()
    running = asyncio.run_coroutine_threadsafe(build_server(settings, sealer=sealer), loop).result(
        30
    )
    return ServerHandle(f"unix://{sock}", running, loop)


def stop(handle: ServerHandle) -> None:
    handle.run(handle.running.stop(0))
    handle.loop.call_soon_threadsafe(handle.loop.stop)


def section_16_tables() -> dict[str, dict[str, Any]]:
    """Three §16 tables the engine settles quickly today."""
    joker = table(handId="joker")
    joker["profileOverrides"] = {"deck": {"jokers": 1}}
    joker["players"][0]["arrangement"]["back"][4] = "Xj"
    house = table(players="AB", handId="house")
    house["profileOverrides"] = {
        "naturals": {
            "table": [
                {"natural": "DRAGON", "rank": 1, "units": 13},
                {
                    "natural": "ONE_RED",
                    "rank": 2,
                    "units": 5,
                    "definition": {"colourSplit": [12, 1]},
                },
            ]
        }
    }
    house["players"][1] = {
        "playerId": "B",
        "seat": 2,
        "declaredNatural": "ONE_RED",
        "cards": ["2s", "3s", "5s", "Ts", "Qs", "Ks", "4c", "6c", "7c", "8c", "9c", "Tc", "2h"],
    }
    both = table(handId="both")
    both["profileOverrides"] = {
        "deck": {"jokers": 2},
        "naturals": {
            "equalRank": "COMPARE_CARDS",
            "table": [
                {"natural": "SIX_PAIRS", "rank": 1, "units": 3},
                {"natural": "ALL_BLACK", "rank": 2, "units": 5, "definition": {"sameColour": 13}},
            ],
        },
    }
    both["players"][2]["arrangement"]["front"][0] = "Xj"
    both["players"][3]["arrangement"]["back"][0] = "Xj"
    return {"joker": joker, "house": house, "both": both}


def without_receipt(response: pb.SettleResponse | pb.ValidatePayoutsResponse) -> bytes:
    """The answer's bytes but for its receipt, which names this server run's log (its origin
    is new at every start) and the line's place in it: present, then left out."""
    assert response.receipt.origin and len(response.receipt.leaf_hash) == 64
    response.ClearField("receipt")
    return bytes(response.SerializeToString())


def _settled(client: SettlementClient, request: pb.SettleRequest) -> bytes:
    return without_receipt(client.settle(request))


def _validated(
    client: SettlementClient, request: pb.SettleRequest, proposed: dict[str, int]
) -> bytes:
    return without_receipt(client.validate_payouts(request, proposed))


def _evaluated(client: SettlementClient, request: pb.EvaluateArrangementRequest) -> bytes:
    return client.evaluate(request).SerializeToString()


def calls(client: SettlementClient) -> list[tuple[str, Callable[[], bytes]]]:
    out: list[tuple[str, Callable[[], bytes]]] = []
    for name, data in section_16_tables().items():
        request = request_from_json(data)
        out.append((f"settle {name}", partial(_settled, client, request)))
        out.append(
            (
                f"validate {name}",
                partial(_validated, client, request, {p["playerId"]: 100 for p in data["players"]}),
            )
        )
        evaluate = pb.EvaluateArrangementRequest(
            profile_overrides=request.profile_overrides,
            preset="western",
            arrangement=request.players[0].arrangement,
        )
        if not request.players[0].HasField("arrangement"):
            evaluate.ClearField("arrangement")
            evaluate.cards.extend(request.players[0].cards)
        out.append((f"evaluate {name}", partial(_evaluated, client, evaluate)))
    return out


def counted() -> dict[str, float]:
    out = {}
    for family in metrics.REGISTRY.collect():
        if family.name.startswith(
            (
                "cpsettle_settlements",
                "cpsettle_naturals",
                "cpsettle_fouls",
                "cpsettle_payout_mismatches",
                "cpsettle_audit_events",
            )
        ):
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                out[sample.name + repr(sorted(sample.labels.items()))] = sample.value
    return out


# one server's answers (by call), log events, and metric changes
Run = tuple[dict[str, bytes], list[dict[str, Any]], dict[str, float]]


@dataclass
class BothPaths:
    """The two servers' runs ("loop", "worker"), how many calls each offloaded, and the
    worker server's routes for the §16 tables and for a plain western table."""

    runs: dict[str, Run] = field(default_factory=dict)
    offloaded: dict[str, int] = field(default_factory=dict)
    routes: list[str] = field(default_factory=list)
    western: str = ""


def run(handle: ServerHandle, logs: LogStream) -> Run:
    before_lines = len(logs.events())
    before = counted()
    with SettlementClient(handle.address, timeout=30) as client:
        answers = {name: call() for name, call in calls(client)}
    events = [
        {k: v for k, v in e.items() if k not in UNSTABLE}
        for e in logs.events()[before_lines:]
        if e.get("event") in ("settlement.issued", "payout.mismatch", "payout.validated")
    ]
    after = counted()
    return (
        answers,
        events,
        {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)},
    )


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory: pytest.TempPathFactory) -> BothPaths:
    from tests.conftest import LOGS

    directory = tmp_path_factory.mktemp("offload")
    out = BothPaths()
    for name, workers in (("loop", -1), ("worker", 1)):
        handle = start(directory / f"{name}.sock", workers)
        try:
            out.runs[name] = run(handle, LOGS)
            offload = handle.running.offload
            out.offloaded[name] = offload.calls if offload is not None else 0
            if offload is not None:
                servicer = handle.running.servicer
                assert servicer is not None
                out.routes = [
                    servicer.route(request_from_json(t))[0] for t in section_16_tables().values()
                ]
                out.western = servicer.route(request_from_json(table()))[0]
        finally:
            stop(handle)
    return out


def test_the_worker_path_was_taken_for_section_16_and_only_for_it(both_paths: BothPaths) -> None:
    assert both_paths.offloaded["loop"] == 0
    assert both_paths.offloaded["worker"] == 9  # 3 tables x Settle, ValidatePayouts, Evaluate
    assert both_paths.routes == [WORKER] * 3
    assert both_paths.western == LIVE


def test_answers_are_byte_for_byte_the_loops(both_paths: BothPaths) -> None:
    loop, worker = both_paths.runs["loop"][0], both_paths.runs["worker"][0]
    assert list(loop) == list(worker)
    for name in loop:
        assert worker[name] == loop[name], name
    settled = pb.SettleResponse.FromString(worker["settle both"]).settlement
    assert settled.signature.value and any(
        row.joker_cards for p in settled.players for row in p.rows
    )


def test_log_events_and_metrics_are_the_loops(both_paths: BothPaths) -> None:
    loop_events, worker_events = both_paths.runs["loop"][1], both_paths.runs["worker"][1]
    assert [e["event"] for e in loop_events].count("settlement.issued") == 6
    assert "payout.mismatch" in [e["event"] for e in loop_events]
    assert worker_events == loop_events
    assert both_paths.runs["worker"][2] == both_paths.runs["loop"][2]
    assert both_paths.runs["loop"][2], "nothing was counted"
