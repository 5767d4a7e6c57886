"""SettleStream through the worker pool (api/pool.py): a real server with its worker processes,
called through our client.

The server's clock is fixed, so that a settlement's every byte (its time of issue and its
Ed25519 signature included) depends on the request alone: a stream answered by the workers
must give exactly the bytes a unary Settle gives.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.config import Settings
from cpsettle_service.observability import metrics
from cpsettle_service.observability.logging import get_logger
from cpsettle_service.proof.keys import generate_pem, signing_key_from_pem
from cpsettle_service.proof.seal import Sealer
from cpsettle_service.proof.times import millis_text
from cpsettle_service.server import build_server
from tests.conftest import EXAMPLES, LogStream, ServerHandle

ISSUED_MS = 1_796_126_400_000  # 2026-12-01T12:00:00.000Z
TABLES = sorted((EXAMPLES / "tables").glob("*.json"))


def start(sock: Path, workers: int = 2) -> ServerHandle:
    settings = Settings(
        unix_socket=str(sock), metrics_port=0, grace_seconds=2.0, stream_workers=workers
    )
    sealer = Sealer(
        signing_key_from_pem(generate_pem()),
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


@pytest.fixture()
def pooled(tmp_path: Path) -> Iterator[ServerHandle]:
    handle = start(tmp_path / "pool.sock")
    yield handle
    stop(handle)


def requests() -> list[pb.SettleRequest]:
    """Every example table, each under a few hand ids (distinct settlements)."""
    out = []
    for n in range(6):
        for path in TABLES:
            data = json.loads(path.read_text())
            data["handId"] = f"{path.stem}-{n}"
            out.append(request_from_json(data))
    return out


def items(reqs: list[pb.SettleRequest], client: SettlementClient) -> list[pb.AuditItem]:
    """AuditItems with recorded payouts, every third one wrong (a payout.mismatch)."""
    out = []
    for n, req in enumerate(reqs):
        item = pb.AuditItem(ref=f"r{n}", request=req)
        for p in client.settle(req).settlement.players:
            item.paid.add(player_id=p.player_id, net_money=p.net_money + (100 if n % 3 == 0 else 0))
        out.append(item)
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose (its parent, the fork server, reaps it)
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_pool_answers_byte_for_byte_what_unary_settle_answers(
    pooled: ServerHandle, logs: LogStream, tmp_path: Path
) -> None:
    reqs = requests()
    with SettlementClient(pooled.address, timeout=30) as client:
        unary = [client.settle(r).settlement.SerializeToString() for r in reqs]
        batch = items(reqs, client)
        before = len(logs.events("settlement.issued"))
        mismatches = len(logs.events("payout.mismatch"))
        answers = list(
            client.settle_stream(
                [pb.SettleStreamRequest(items=batch[i : i + 7]) for i in range(0, len(batch), 7)]
            )
        )
    assert pooled.running.pool is not None and pooled.running.pool.pids(), (
        "the stream was not settled by worker processes"
    )
    results = [r for a in answers for r in a.results]
    assert [r.ref for r in results] == [i.ref for i in batch]
    assert [r.settlement.SerializeToString() for r in results] == unary
    assert [r.all_match for r in results] == [n % 3 != 0 for n in range(len(batch))]
    # One settlement.issued per settlement delivered, written by the server (with its time of
    # issue and key), and the worker's payout.mismatch lines written too.
    issued = logs.events("settlement.issued")[before:]
    assert sorted(e["settlement_id"] for e in issued) == sorted(
        r.settlement.settlement_id for r in results
    )
    assert all(e["issued_at"] == millis_text(ISSUED_MS) and e["signed"] for e in issued)
    assert len(logs.events("payout.mismatch")) - mismatches == len(batch[::3])


def test_server_stop_leaves_no_worker_process(tmp_path: Path) -> None:
    handle = start(tmp_path / "stop.sock")
    try:
        with SettlementClient(handle.address, timeout=30) as client:
            batch = [pb.AuditItem(ref=f"r{n}", request=r) for n, r in enumerate(requests())]
            answers = list(client.settle_stream([pb.SettleStreamRequest(items=batch)]))
        assert len(answers[0].results) == len(batch)
        assert handle.running.pool is not None
        pids = handle.running.pool.pids()
        assert len(pids) == 2
    finally:
        stop(handle)
    assert not [p for p in pids if alive(p)], "worker processes outlived the server"


def test_a_worker_killed_mid_stream_loses_no_settlement_and_gives_no_wrong_one(
    pooled: ServerHandle, logs: LogStream
) -> None:
    reqs = requests() * 8
    with SettlementClient(pooled.address, timeout=60) as client:
        expected = {r.hand_id: client.settle(r).settlement.SerializeToString() for r in reqs}
        batches = [
            pb.SettleStreamRequest(
                items=[
                    pb.AuditItem(ref=f"{n}:{r.hand_id}", request=r)
                    for n, r in enumerate(reqs[i : i + 40], i)
                ]
            )
            for i in range(0, len(reqs), 40)
        ]
        before = len(logs.events("settlement.issued"))
        killed: list[int] = []

        def kill_one() -> None:  # a worker, while the stream is running
            pool = pooled.running.pool
            assert pool is not None
            for _ in range(200):
                pids = pool.pids()
                if pids:
                    time.sleep(0.05)
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_one)
        killer.start()
        answers = list(client.settle_stream(batches))
        killer.join()
    assert killed, "no worker to kill"
    results: list[Any] = []
    for batch, answer in zip(batches, answers, strict=True):
        if len(answer.results) == 1 and not answer.results[0].ref:  # the batch refused whole
            assert answer.results[0].error.code == 13  # INTERNAL: a worker lost twice
            continue
        assert [r.ref for r in answer.results] == [i.ref for i in batch.items]
        results.extend(answer.results)
    assert results, "no batch was settled"
    for r in results:  # never a wrong settlement
        hand_id = r.ref.split(":", 1)[1]
        assert r.settlement.SerializeToString() == expected[hand_id]
    # and every settlement delivered logged as issued exactly once by this stream
    issued = [e["settlement_id"] for e in logs.events("settlement.issued")[before:]]
    assert sorted(issued) == sorted(r.settlement.settlement_id for r in results)


@pytest.mark.parametrize(
    ("cpu_max", "most"),
    [("max 100000", None), ("100000 100000", 1), ("150000 100000", 2), ("50000 100000", 1)],
)
def test_default_size_keeps_to_the_cgroup_cpu_quota(
    tmp_path: Path, cpu_max: str, most: int | None
) -> None:
    from cpsettle_service.api.pool import default_size

    cores = len(os.sched_getaffinity(0))
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max + "\n")
    assert default_size(str(path)) == (cores if most is None else min(cores, most))
    assert default_size(str(tmp_path / "none")) == cores
