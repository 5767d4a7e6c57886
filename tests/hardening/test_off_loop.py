"""No request holds the event loop, whatever it costs (issue 24, part 2), on a real server
process.

The slowest legal requests this suite can build (``hostile.worst_section_16_requests``: two
jokers that may duplicate, 32 house naturals using every clause kind, ``rows`` included,
detection on and a declared natural, ``equalRank: COMPARE_CARDS``) took the engine minutes of
CPU at 37507fb. They will become fast (the engine's own part of issue 24), so the server here
also runs with ``CPSETTLE_TEST_WORKER_SPIN_SECONDS``: every call (or stream chunk) a worker
takes first spins for that long, in Python, where an interrupt lands as it does in the engine.
The requests stay slow, and the tests honest, however fast the engine gets.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc
from cpsettle_client.client import SettlementClient, SettlementError
from tests.hardening.hostile import worst_section_16_requests, worst_section_16_settle
from tests.hardening.live import free_port
from tests.hardening.support import (
    cpu_ticks,
    good_request,
    log_events,
    spawn_server,
    stop_process,
    wait_serving,
    workers_of,
)
from tests.support.health import health_check

SPIN = "30"  # seconds: longer than any deadline below


class Replica:
    """A server process on a unix socket with its plaintext health port and engine workers."""

    def __init__(self, tmp_path: Path, workers: int) -> None:
        self.log = tmp_path / "server.log"
        sock = tmp_path / "s.sock"
        self.health_port = free_port()
        self.proc = spawn_server(
            self.log,
            CPSETTLE_UNIX_SOCKET=str(sock),
            CPSETTLE_HOST="127.0.0.1",
            CPSETTLE_HEALTH_PORT=str(self.health_port),
            CPSETTLE_ENGINE_WORKERS=str(workers),
            CPSETTLE_TEST_WORKER_SPIN_SECONDS=SPIN,
        )
        self.address = f"unix://{sock}"
        wait_serving(self.address, self.proc, self.log)
        deadline = time.monotonic() + 30  # the fork server and a first worker, started at once
        while not workers_of(self.proc.pid):
            assert time.monotonic() < deadline, "no worker process started"
            time.sleep(0.05)

    def workers(self) -> list[int]:
        return workers_of(self.proc.pid)


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[Replica]:
    r = Replica(tmp_path, workers=2)
    try:
        yield r
    finally:
        stop_process(r.proc)


def test_workers_yield_to_the_server_at_once(replica: Replica) -> None:
    """Every engine worker runs niced and in the idle scheduling class, so the server process
    preempts it the moment it wakes (docs/DECISIONS.md 40); the server itself does not."""
    workers = replica.workers()
    assert workers
    for pid in workers:
        deadline = time.monotonic() + 10  # a worker lowers its priority as it starts
        while os.sched_getscheduler(pid) != os.SCHED_IDLE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE, pid
        server_nice = os.getpriority(os.PRIO_PROCESS, replica.proc.pid)
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, server_nice + 10), pid
    assert os.sched_getscheduler(replica.proc.pid) == os.SCHED_OTHER


def test_health_on_both_ports_and_live_settles_answer_beside_8_clients_of_the_worst(
    replica: Replica,
) -> None:
    requests = worst_section_16_requests()
    stop = threading.Event()
    outcomes: list[str] = []

    def attacker(k: int) -> None:
        with grpc.insecure_channel(replica.address) as channel:
            stub = pb_grpc.SettlementServiceStub(channel)
            while not stop.is_set():
                method, request = requests["Settle" if k % 2 else "EvaluateArrangement"]
                try:
                    getattr(stub, method)(request, timeout=2)
                    outcomes.append("OK")
                except grpc.RpcError as e:
                    outcomes.append(e.code().name)

    attackers = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(8)]
    for t in attackers:
        t.start()
    probes: list[tuple[str, float]] = []
    settles = 0
    main = grpc.insecure_channel(replica.address)
    health = grpc.insecure_channel(f"127.0.0.1:{replica.health_port}")
    try:
        with SettlementClient(replica.address, timeout=5) as client:
            time.sleep(1)  # the workers are busy with the attackers' requests by now
            busy_before = {pid: cpu_ticks(pid) for pid in replica.workers()}
            end = time.monotonic() + 6
            while time.monotonic() < end:
                for name, channel, service in (
                    ("main", main, ""),
                    ("main", main, "liveness"),
                    ("health port", health, ""),
                    ("health port", health, "liveness"),
                ):
                    start = time.monotonic()
                    reply = health_check(channel)(
                        health_pb2.HealthCheckRequest(service=service), timeout=1
                    )
                    assert reply.status == health_pb2.HealthCheckResponse.SERVING
                    probes.append((name, time.monotonic() - start))
                answer = client.settle(good_request(f"live-{settles}"), timeout=2)
                assert answer.settlement.context.hand_id == f"live-{settles}"
                settles += 1
                time.sleep(0.1)
            busy = {
                pid: cpu_ticks(pid) - ticks
                for pid, ticks in busy_before.items()
                if pid in replica.workers()
            }
    finally:
        stop.set()
        for t in attackers:
            t.join(10)
        main.close()
        health.close()
    assert settles >= 20 and len(probes) >= 80
    assert max(seconds for _, seconds in probes) < 1
    # the attack was real: the workers computed all along, the attackers' calls timed out
    assert busy and all(ticks > 50 for ticks in busy.values()), busy  # > 0.5 s of CPU each
    assert outcomes and set(outcomes) <= {"DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED"}, set(outcomes)
    assert "DEADLINE_EXCEEDED" in outcomes


def idle(pid: int, seconds: float = 1.0) -> bool:
    """Whether ``pid`` used (nearly) no CPU for ``seconds``."""
    before = cpu_ticks(pid)
    time.sleep(seconds)
    return cpu_ticks(pid) - before <= 2


def test_a_call_past_its_deadline_or_cancelled_stops_its_worker_which_takes_the_next_call(
    tmp_path: Path,
) -> None:
    r = Replica(tmp_path, workers=1)
    try:
        [worker] = r.workers()
        request = worst_section_16_settle()
        with SettlementClient(r.address) as client:
            start = time.monotonic()
            with pytest.raises(SettlementError) as late:
                client.settle(request, timeout=1)
            assert late.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            assert time.monotonic() - start < 1.5
            time.sleep(0.2)
            # the worker stopped computing at once, and is still the worker (not replaced)
            assert idle(worker) and r.workers() == [worker]

            # the next call gets it at once (it computes), and a client that leaves stops it
            with grpc.insecure_channel(r.address) as channel:
                call: Any = pb_grpc.SettlementServiceStub(channel).Settle.future(
                    request, timeout=20
                )
                time.sleep(0.5)
                assert not idle(worker, 0.5), "the next call did not reach the worker"
                call.cancel()
            time.sleep(0.2)
            assert idle(worker) and r.workers() == [worker]
            # and a plain table was a live call all along
            assert client.settle(good_request("live")).settlement.context.hand_id == "live"
    finally:
        stop_process(r.proc)
    codes = [
        e.get("code")
        for e in log_events(r.log)
        if e.get("event") == "rpc" and e.get("method") == "Settle"
    ]
    assert codes == ["CANCELLED", "CANCELLED"], codes  # the server's view of both calls


def test_a_stream_hand_of_the_worst_kind_leaves_the_loop_too(tmp_path: Path) -> None:
    """SettleStream's hands are settled in the server process by default: a §16 hand among
    them goes to an engine worker, so health and live calls keep answering beside the stream,
    and the stream's deadline stops the worker."""
    r = Replica(tmp_path, workers=1)
    try:
        [worker] = r.workers()
        request = worst_section_16_settle()
        batch = pb.SettleStreamRequest(
            items=[
                pb.AuditItem(ref="plain", request=good_request("plain")),
                pb.AuditItem(ref="worst", request=request),
            ]
        )
        outcome: list[str] = []

        def stream() -> None:
            with SettlementClient(r.address) as c:
                try:
                    list(c.settle_stream(iter([batch]), timeout=3))
                    outcome.append("OK")
                except SettlementError as e:
                    outcome.append(e.code.name)

        thread = threading.Thread(target=stream)
        thread.start()
        time.sleep(0.5)
        with SettlementClient(r.address, timeout=1) as client:
            while thread.is_alive():
                assert client.health() == "SERVING"
                assert client.settle(good_request("live"), timeout=1).settlement.settlement_id
                time.sleep(0.1)
        thread.join()
        assert outcome == ["DEADLINE_EXCEEDED"]
        time.sleep(0.2)
        assert idle(worker) and r.workers() == [worker]
    finally:
        stop_process(r.proc)
