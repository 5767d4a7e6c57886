"""Graceful shutdown under load: NOT_SERVING at once, every accepted call completes, exit 0."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc
from tests.conftest import stop_server
from tests.hardening.support import (
    HeldSettle,
    good_request,
    log_events,
    spawn_server,
    start_tcp_server,
    stop_process,
    wait_serving,
)
from tests.support.health import health_check, health_watch

GRACE = 5.0
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class HealthWatch:
    """A health Watch stream read in a thread; ends itself once it sees NOT_SERVING (an open
    watch is an RPC in flight, which would hold the drain for the whole grace period)."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.call = health_watch(self.channel)(
            health_pb2.HealthCheckRequest(service=""), timeout=30
        )
        self.seen: list[tuple[float, int]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for reply in self.call:
                self.seen.append((time.monotonic(), reply.status))
                if reply.status == NOT_SERVING:
                    self.call.cancel()
                    return
        except grpc.RpcError:
            pass

    def wait_for(self, status: int, seconds: float) -> float:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for at, s in list(self.seen):
                if s == status:
                    return at
            time.sleep(0.002)
        raise AssertionError(f"health never turned {status}; saw {self.seen}")

    def close(self) -> None:
        self.call.cancel()
        self.thread.join(timeout=5)
        self.channel.close()


class Load:
    """Settle calls sent continuously, ``window`` in flight, each with its own hand id."""

    def __init__(self, address: str, window: int = 8, limit: int = 50_000) -> None:
        self.address = address
        self.window = threading.BoundedSemaphore(window)
        self.size = window
        self.limit = limit
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.sent: dict[str, float] = {}
        self.done: dict[str, tuple[str, float, str]] = {}  # hand id -> (code, when, echoed id)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def ok_count(self) -> int:
        with self.lock:
            return sum(1 for code, _, _ in self.done.values() if code == "OK")

    def _record(self, hand_id: str, future: grpc.Future[pb.SettleResponse]) -> None:
        try:
            error = future.exception()
            if error is None:
                outcome = ("OK", time.monotonic(), future.result().settlement.context.hand_id)
            elif isinstance(error, grpc.RpcError):  # what a failed call's future holds
                outcome = (error.code().name, time.monotonic(), error.details() or "")
            else:
                outcome = (f"not an RpcError: {error!r}", time.monotonic(), "")
        except BaseException as e:  # never lose an outcome
            outcome = (f"callback error {e!r}", time.monotonic(), "")
        with self.lock:
            self.done[hand_id] = outcome
        self.window.release()

    def _run(self) -> None:
        template = good_request()
        with grpc.insecure_channel(self.address) as channel:
            stub = pb_grpc.SettlementServiceStub(channel)
            for n in range(self.limit):
                if self.stop.is_set() or not self.window.acquire(timeout=15):
                    break
                request = pb.SettleRequest()
                request.CopyFrom(template)
                request.hand_id = hand_id = f"load-{n}"
                with self.lock:
                    self.sent[hand_id] = time.monotonic()
                future = stub.Settle.future(request, timeout=10)
                future.add_done_callback(partial(self._record, hand_id))
            for _ in range(self.size):  # every call answered before the channel closes
                self.window.acquire(timeout=15)

    def wait_ok(self, count: int, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while self.ok_count() < count:
            assert time.monotonic() < deadline, f"only {self.ok_count()} calls succeeded"
            time.sleep(0.01)


@dataclass
class Shutdown:
    """What one SIGTERM under steady load looked like, from both sides."""

    code: int
    signalled: float
    not_serving_at: float
    exited: float
    load: Load
    events: list[dict[str, Any]]
    log_text: str

    @property
    def handled(self) -> dict[str, str]:
        """Calls the server accepted (its handler ran and logged them): hand id -> code. A
        delivered settlement's line is its settlement.issued (OK); every other call's, and a
        failed one's, its rpc line."""
        out: dict[str, str] = {}
        for e in self.events:
            if str(e.get("hand_id", "")).startswith("load-"):
                if e.get("event") == "settlement.issued":
                    out.setdefault(e["hand_id"], "OK")
                elif e.get("event") == "rpc":
                    out[e["hand_id"]] = e["code"]
        return out


@pytest.fixture(scope="module")
def shutdown(tmp_path_factory: pytest.TempPathFactory) -> Shutdown:
    directory = tmp_path_factory.mktemp("sigterm")
    sock, log = directory / "s.sock", directory / "server.log"
    proc = spawn_server(log, CPSETTLE_UNIX_SOCKET=str(sock), CPSETTLE_GRACE_SECONDS=str(GRACE))
    address = f"unix://{sock}"
    try:
        wait_serving(address, proc, log)
        watch = HealthWatch(address)
        watch.wait_for(health_pb2.HealthCheckResponse.SERVING, 5)
        load = Load(address)
        load.thread.start()
        load.wait_ok(300)  # steady state

        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        not_serving_at = watch.wait_for(NOT_SERVING, 5)
        code = proc.wait(timeout=GRACE + 10)
        exited = time.monotonic()
        time.sleep(0.2)  # the load keeps knocking on a closed door for a moment
        load.stop.set()
        load.thread.join(timeout=30)
        watch.close()
    finally:
        stop_process(proc)
    return Shutdown(
        code,
        signalled,
        not_serving_at,
        exited,
        load,
        list(log_events(log)),
        log.read_text(errors="replace"),
    )


def test_sigterm_under_steady_load(shutdown: Shutdown) -> None:
    s = shutdown
    assert s.code == 0, s.log_text[-3000:]
    assert s.not_serving_at - s.signalled < 1.0, "health must turn NOT_SERVING promptly"
    assert s.exited - s.signalled < GRACE, f"exit took {s.exited - s.signalled:.2f} s"
    names = [e.get("event") for e in s.events]
    assert "service.draining" in names and "service.stopped" in names
    assert "Traceback" not in s.log_text

    load, handled = s.load, s.handled
    assert load.done.keys() == load.sent.keys(), "every call got an answer"
    codes = Counter(code for code, _, _ in load.done.values())
    assert codes["UNAVAILABLE"] > 0, "the load ran past the server's end"
    # accepted = the handler ran: every one succeeded, on both sides, with its own settlement
    assert set(handled.values()) == {"OK"}, Counter(handled.values())
    for hand_id in handled:
        client_code, _, echoed = load.done[hand_id]
        assert client_code == "OK" and echoed == hand_id, (hand_id, client_code)
    assert {h for h, (c, _, _) in load.done.items() if c == "OK"} == handled.keys()
    # not accepted = never processed: UNAVAILABLE, or CANCELLED for the few calls grpc core
    # had received but not yet handed to the application when stop() began (next test)
    turned_away = {h: c for h, (c, _, _) in load.done.items() if h not in handled}
    assert set(turned_away.values()) <= {"UNAVAILABLE", "CANCELLED"}, codes
    # some calls were in flight when the signal came, and they completed
    straddling = [
        h for h, (c, at, _) in load.done.items() if c == "OK" and load.sent[h] < s.signalled < at
    ]
    assert straddling, "no call was in flight at SIGTERM"
    print(
        f"{dict(codes)}; {len(straddling)} accepted calls in flight at SIGTERM completed; "
        f"NOT_SERVING after {1000 * (s.not_serving_at - s.signalled):.0f} ms, "
        f"exit 0 after {s.exited - s.signalled:.2f} s"
    )


@pytest.mark.xfail(
    reason=(
        "grpc core answers CANCELLED (not UNAVAILABLE) for calls it had received but not yet "
        "matched to the application when Server.stop() begins (grpc/grpc#41785, fix proposed in "
        "grpc/grpc#41786); under load grpc.aio (one request_call at a time) has several such "
        "calls. "
        "They are never processed (the test above checks it), but a client cannot tell that from "
        "CANCELLED. Passes (XPASS) once grpc is fixed: then make it strict."
    )
)
def test_no_call_is_cancelled_by_the_shutdown(shutdown: Shutdown) -> None:
    cancelled = [h for h, (c, _, _) in shutdown.load.done.items() if c == "CANCELLED"]
    assert not cancelled, f"{len(cancelled)} calls answered CANCELLED"


def test_drain_completes_held_calls_and_refuses_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process, deterministic: three calls held inside the handler when the drain starts."""
    held = HeldSettle()
    held.install(monkeypatch)
    held.hold()
    handle = start_tcp_server(grace_seconds=GRACE)
    watch = HealthWatch(handle.address)
    try:
        watch.wait_for(health_pb2.HealthCheckResponse.SERVING, 5)
        with grpc.insecure_channel(handle.address) as channel:
            stub = pb_grpc.SettlementServiceStub(channel)
            accepted = [stub.Settle.future(good_request(f"held-{i}"), timeout=20) for i in range(3)]
            held.wait_entered(3)

            started = time.monotonic()
            drain = asyncio.run_coroutine_threadsafe(handle.running.drain(), handle.loop)
            assert watch.wait_for(NOT_SERVING, 2) - started < 1.0

            with grpc.insecure_channel(handle.address) as fresh:  # new calls are turned away
                check = health_check(fresh)
                deadline = time.monotonic() + 3
                while True:  # NOT_SERVING comes first, then the server stops taking calls
                    try:
                        check(health_pb2.HealthCheckRequest(), timeout=2)
                    except grpc.RpcError as e:
                        assert e.code() is grpc.StatusCode.UNAVAILABLE
                        break
                    assert time.monotonic() < deadline, "still accepting after the drain began"
                    time.sleep(0.005)
                with pytest.raises(grpc.RpcError) as late:
                    pb_grpc.SettlementServiceStub(fresh).Settle(good_request("late"), timeout=2)
                assert late.value.code() is grpc.StatusCode.UNAVAILABLE
            assert held.entered == 3 and not drain.done()

            held.release()
            for i, future in enumerate(accepted):
                assert future.result(timeout=5).settlement.context.hand_id == f"held-{i}"
            drain.result(timeout=GRACE)
            assert time.monotonic() - started < GRACE, "drained before the grace period ran out"
    finally:
        held.release()
        watch.close()
        stop_server(handle)
