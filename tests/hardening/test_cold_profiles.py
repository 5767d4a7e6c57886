"""Issue #13: a request whose profile the server has not cached is bulk work, and live Settles go
ahead of it.

Reading a new maximal profile costs milliseconds of the event loop; 8 clients sending one on
every call took a live Settle's p99 from 2 ms to over 100 ms (``bench/bench_hostile.py``). Such
calls now wait for the one bulk slot and for a moment with no live call in flight
(``priority.LiveFirst.bulk_turn``), without counting as live calls meanwhile.

Deterministic, in process, against the real server and through the project's client: the test
holds the bulk slot itself (as a cold resolution in progress would), so the cold calls stay
queued for as long as it needs to look.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.api.priority import LiveFirst
from tests.conftest import ServerHandle, start_server, stop_server
from tests.hardening.hostile import maximal_profile
from tests.hardening.support import good_request
from tests.support.tables import table


def cold_request(n: int) -> pb.SettleRequest:
    """A Settle with a new maximal inline profile (``n`` makes it distinct)."""
    request = table()
    del request["preset"]
    request["profile"] = maximal_profile(n)
    message = request_from_json(request)
    message.hand_id = f"cold-{n}"
    return message


def wait_until(what: str, condition: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never came true: {what}")
        time.sleep(0.002)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    handle = start_server(tmp_path / "cold.sock", max_message_bytes=1024 * 1024)
    try:
        yield handle
    finally:
        stop_server(handle)


class HeldSlot:
    """The server's bulk slot, taken by the test from the server's own loop."""

    def __init__(self, handle: ServerHandle) -> None:
        self.handle = handle
        self.live: LiveFirst = handle.running.servicer.live

    def __enter__(self) -> LiveFirst:
        assert self.handle.run(self.live.bulk_slot.acquire())
        return self.live

    def __exit__(self, *exc: object) -> None:
        self.handle.loop.call_soon_threadsafe(self.live.bulk_slot.release)


def test_a_live_settle_goes_ahead_of_queued_cold_profiles(server: ServerHandle) -> None:
    with SettlementClient(server.address, timeout=30) as client, \
            ThreadPoolExecutor(6) as pool:
        client.settle(good_request("warm"))  # the preset's profile: resolved once, cached
        with HeldSlot(server) as live:
            cold: list[Future[Any]] = [pool.submit(client.settle, cold_request(n))
                                       for n in range(3)]
            evaluate = request_from_json({"profile": maximal_profile(3), "arrangement": {
                "front": ["2c", "2d", "3h"], "middle": ["4c", "4d", "4h", "5s", "6s"],
                "back": ["As", "Ks", "Qs", "Js", "Ts"]}}, pb.EvaluateArrangementRequest())
            cold.append(pool.submit(client.evaluate, evaluate))
            cold.append(pool.submit(client.validate_payouts, cold_request(4),
                                    dict.fromkeys("ABCD", 0)))
            wait_until("5 cold calls queued for the bulk slot", lambda: live.bulk_waiting == 5)
            # queued calls are not live calls: bulk streams and cold calls need not wait for them
            assert live.live == 0

            answer = client.settle(good_request("live"))  # a live table, not queued

            assert answer.settlement.context.hand_id == "live"
            assert live.bulk_waiting == 5 and not any(f.done() for f in cold)
        settled = [f.result(timeout=30) for f in cold]
    assert [s.settlement.context.hand_id for s in settled[:3]] == ["cold-0", "cold-1", "cold-2"]
    assert len(settled[3].rows) == 3  # the evaluation, under the cold profile
    assert settled[4].settlement.context.hand_id == "cold-4" and len(settled[4].players) == 4
    assert live.live == 0 and live.bulk_waiting == 0


def test_a_profile_pays_the_queue_only_on_its_first_call(server: ServerHandle) -> None:
    """A table that sends its own profile every hand is cached after the first: its later calls
    are live calls again, even while the bulk slot is taken."""
    with SettlementClient(server.address, timeout=30) as client:
        first = client.settle(cold_request(7))
        with HeldSlot(server) as live:
            again = client.settle(cold_request(7))
            assert live.bulk_waiting == 0
    assert again.settlement.settlement_id == first.settlement.settlement_id


def test_a_cold_call_that_runs_out_of_time_in_the_queue_leaves_nothing_behind(
        server: ServerHandle) -> None:
    """Its deadline passes while it waits: DEADLINE_EXCEEDED, and the counts of live and
    queued calls come back to zero (a leak would hold bulk streams back for good)."""
    with SettlementClient(server.address, timeout=30) as client:
        with HeldSlot(server) as live:
            with pytest.raises(SettlementError) as late:
                client.settle(cold_request(8), timeout=0.3)
            assert late.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            wait_until("the expired call left the queue", lambda: live.bulk_waiting == 0)
        wait_until("no call in flight", lambda: live.live == 0)
        assert client.settle(cold_request(8)).settlement.context.hand_id == "cold-8"
    assert live.live == 0 and live.bulk_waiting == 0


def test_waiting_cold_calls_never_take_the_live_budget(tmp_path: Path) -> None:
    """At most half of CPSETTLE_MAX_CONCURRENT_RPCS may wait for the bulk slot; the next cold
    call is refused at once (RESOURCE_EXHAUSTED, retryable) and a live Settle still gets in."""
    handle = start_server(tmp_path / "small.sock", max_message_bytes=1024 * 1024,
                          max_concurrent_rpcs=4)
    try:
        with SettlementClient(handle.address, timeout=30) as client, \
                ThreadPoolExecutor(2) as pool, HeldSlot(handle) as live:
            assert live.bulk_limit == 2
            queued = [pool.submit(client.settle, cold_request(n)) for n in (10, 11)]
            wait_until("2 cold calls queued", lambda: live.bulk_waiting == 2)
            with pytest.raises(SettlementError) as refused:
                client.settle(cold_request(12))
            assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "not read yet" in refused.value.message
            assert client.settle(good_request("live")).settlement.context.hand_id == "live"
            assert not any(f.done() for f in queued)
        assert [f.result(timeout=30).settlement.context.hand_id for f in queued] == [
            "cold-10", "cold-11"]
    finally:
        stop_server(handle)
