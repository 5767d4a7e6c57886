"""A request whose profile the server has not cached is bulk work, and live Settles go ahead of
it (issue #13); bulk work is fair between callers, and a profile that keeps coming back stays
cached (issue 24, part 4).

Reading a new maximal profile costs milliseconds; 8 clients sending one on every call took a
live Settle's p99 from 2 ms to over 100 ms (``bench/bench_hostile.py``). A profile seen for the
first time is now read and settled in a worker process; one that comes back is read by the
server in a bulk turn (``priority.LiveFirst.bulk_turn``) and cached by frequency (TinyLFU);
while they wait, such calls do not count as live calls, and each caller waits in a queue of its
own, the queues served round robin (``fair.FairGate``).

Deterministic, in process, against the real server and through the project's client: the test
holds every bulk turn itself (as work in progress would), so the cold calls stay queued for as
long as it needs to look.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.api import mapping
from cpsettle_service.api.fair import FairGate
from cpsettle_service.api.priority import LiveFirst
from cpsettle_service.api.profiles import ProfileResolver
from cpsettle_service.api.servicer import LIVE, WORKER
from tests.conftest import ServerHandle, start_server, stop_server
from tests.hardening.hostile import maximal_profile
from tests.hardening.support import good_request
from tests.support.tables import table

TOKENS = {"table-software": "tok-tables-0123456789", "flooder": "tok-flood-0123456789"}


def cold_request(n: int, hand: str = "") -> pb.SettleRequest:
    """A Settle with a new maximal inline profile (``n`` makes it distinct) without jokers:
    once read, its calls are settled on the loop."""
    request = table()
    del request["preset"]
    request["profile"] = maximal_profile(n, jokers=False)
    message = request_from_json(request)
    message.hand_id = hand or f"cold-{n}"
    return message


def bulk_waiting_is(live: LiveFirst, count: int) -> Callable[[], bool]:
    """A condition: ``count`` bulk calls wait for a turn."""
    return lambda: live.bulk_waiting == count


def wait_until(what: str, condition: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never came true: {what}")
        time.sleep(0.002)


def serve(tmp_path: Path, name: str, **overrides: Any) -> ServerHandle:
    tokens = tmp_path / f"{name}.tokens"
    tokens.write_text("".join(f"{caller}: {token}\n" for caller, token in TOKENS.items()))
    overrides.setdefault("engine_workers", 1)
    return start_server(
        tmp_path / f"{name}.sock",
        max_message_bytes=1024 * 1024,
        auth_tokens_file=str(tokens),
        **overrides,
    )


def client(handle: ServerHandle, caller: str = "table-software") -> SettlementClient:
    """A caller's client, without the client's own retries: these tests count each refusal."""
    return SettlementClient(handle.address, timeout=30, token=TOKENS[caller], retry=False)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    handle = serve(tmp_path, "cold")
    try:
        yield handle
    finally:
        stop_server(handle)


class HeldTurns:
    """Every bulk turn of the server (the worker slots and the loop's profile read), taken by
    the test from the server's own loop, as work in progress would hold them."""

    def __init__(self, handle: ServerHandle) -> None:
        self.handle = handle
        servicer = handle.running.servicer
        assert servicer is not None
        self.live: LiveFirst = servicer.live
        self.gates: list[FairGate] = [servicer.engine_turns, self.live.reading]
        self._release: asyncio.Event | None = None
        self._held: list[Future[Any]] = []

    def __enter__(self) -> LiveFirst:
        async def make() -> asyncio.Event:
            return asyncio.Event()

        self._release = self.handle.run(make())
        release = self._release

        async def hold(gate: FairGate) -> None:
            async with gate.turn("the-test"):
                await release.wait()

        for gate in self.gates:
            for _ in range(gate.slots):
                self._held.append(asyncio.run_coroutine_threadsafe(hold(gate), self.handle.loop))
        wait_until("every bulk turn held", lambda: all(g.free == 0 for g in self.gates))
        return self.live

    def __exit__(self, *exc: object) -> None:
        assert self._release is not None
        self.handle.loop.call_soon_threadsafe(self._release.set)
        for held in self._held:
            held.result(10)


def test_a_live_settle_goes_ahead_of_queued_cold_profiles(server: ServerHandle) -> None:
    with client(server) as c, ThreadPoolExecutor(6) as pool:
        c.settle(good_request("warm"))  # the preset's profile: resolved once, cached
        with HeldTurns(server) as live:
            cold: list[Future[Any]] = [pool.submit(c.settle, cold_request(n)) for n in range(3)]
            evaluate = request_from_json(
                {
                    "profile": maximal_profile(3, jokers=False),
                    "arrangement": {
                        "front": ["2c", "2d", "3h"],
                        "middle": ["4c", "4d", "4h", "5s", "6s"],
                        "back": ["As", "Ks", "Qs", "Js", "Ts"],
                    },
                },
                pb.EvaluateArrangementRequest(),
            )
            cold.append(pool.submit(c.evaluate, evaluate))
            cold.append(pool.submit(c.validate_payouts, cold_request(4), dict.fromkeys("ABCD", 0)))
            wait_until("5 cold calls queued for bulk turns", lambda: live.bulk_waiting == 5)
            # queued calls are not live calls: bulk streams and cold calls need not wait for them
            assert live.live == 0

            answer = c.settle(good_request("live"))  # a live table, not queued

            assert answer.settlement.context.hand_id == "live"
            assert live.bulk_waiting == 5 and not any(f.done() for f in cold)
        settled = [f.result(timeout=30) for f in cold]
    assert [s.settlement.context.hand_id for s in settled[:3]] == ["cold-0", "cold-1", "cold-2"]
    assert len(settled[3].rows) == 3  # the evaluation, under the cold profile
    assert settled[4].settlement.context.hand_id == "cold-4" and len(settled[4].players) == 4
    assert live.live == 0 and live.bulk_waiting == 0


def test_a_profile_is_read_by_the_server_when_it_comes_back_then_it_is_live(
    server: ServerHandle,
) -> None:
    """A table that sends its own profile every hand: its first hand is read and settled in a
    worker, its second is read by the server (and cached), and from the third on its calls are
    live calls, even while every bulk turn is taken."""
    servicer = server.running.servicer
    assert servicer is not None
    offload = server.running.offload
    assert offload is not None
    request = cold_request(7)
    choice = mapping.profile_choice("", True, request.profile, False, request.profile_overrides)
    with client(server) as c:
        first = c.settle(request)
        assert offload.calls == 1 and servicer.resolver.lookup(choice) is None
        second = c.settle(request)
        assert offload.calls == 1 and servicer.resolver.lookup(choice) is not None
        assert servicer.route(request)[0] == LIVE
        with HeldTurns(server) as live:
            again = c.settle(cold_request(7))
            assert live.bulk_waiting == 0
    ids = {s.settlement.settlement_id for s in (first, second, again)}
    assert len(ids) == 1  # the worker's settlement is the server's, byte for byte in its ids
    assert first.settlement.settlement_digest == again.settlement.settlement_digest


def test_a_cold_call_that_runs_out_of_time_in_the_queue_leaves_nothing_behind(
    server: ServerHandle,
) -> None:
    """Its deadline passes while it waits: DEADLINE_EXCEEDED, and the counts of live and
    queued calls come back to zero (a leak would hold bulk streams back for good)."""
    with client(server) as c:
        with HeldTurns(server) as live:
            with pytest.raises(SettlementError) as late:
                c.settle(cold_request(8), timeout=0.3)
            assert late.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            wait_until("the expired call left the queue", lambda: live.bulk_waiting == 0)
        wait_until("no call in flight", lambda: live.live == 0)
        assert c.settle(cold_request(8)).settlement.context.hand_id == "cold-8"
    assert live.live == 0 and live.bulk_waiting == 0


def test_waiting_cold_calls_never_take_the_live_budget_and_a_flooder_cannot_keep_others_out(
    tmp_path: Path,
) -> None:
    """At most half of CPSETTLE_MAX_CONCURRENT_RPCS may wait for bulk turns. A caller that has
    them all is refused the next (RESOURCE_EXHAUSTED, retryable); another caller's cold call
    takes the place of the flooder's newest, which is refused; a live Settle still gets in."""
    handle = serve(tmp_path, "small", max_concurrent_rpcs=4)
    try:
        with (
            client(handle, "flooder") as flood,
            client(handle) as tables,
            ThreadPoolExecutor(3) as pool,
            HeldTurns(handle) as live,
        ):
            assert live.bulk_limit == 2
            queued = [pool.submit(flood.settle, cold_request(n)) for n in (10, 11)]
            wait_until("2 cold calls queued", lambda: live.bulk_waiting == 2)
            with pytest.raises(SettlementError) as refused:
                flood.settle(cold_request(12))
            assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "2 of them yours" in refused.value.message
            other = pool.submit(tables.settle, cold_request(13))
            wait_until("the flooder's newest call refused", lambda: queued[1].done())
            with pytest.raises(SettlementError) as displaced:
                queued[1].result()
            assert displaced.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert live.bulk_waiting == 2
            assert tables.settle(good_request("live")).settlement.context.hand_id == "live"
            assert not queued[0].done() and not other.done()
        assert queued[0].result(timeout=30).settlement.context.hand_id == "cold-10"
        assert other.result(timeout=30).settlement.context.hand_id == "cold-13"
    finally:
        stop_server(handle)


def test_callers_take_bulk_turns_round_robin(tmp_path: Path) -> None:
    """One worker: the flooder queues 4 cold calls, then a table queues 1. The table's call is
    served after the flooder's first, not after all four."""
    handle = serve(tmp_path, "rr", engine_workers=1)
    order: list[str] = []
    try:
        with (
            client(handle, "flooder") as flood,
            client(handle) as tables,
            ThreadPoolExecutor(5) as pool,
        ):

            def settle(c: SettlementClient, request: pb.SettleRequest) -> None:
                c.settle(request)
                order.append(request.hand_id)

            with HeldTurns(handle) as live:
                calls = []
                for n in range(4):  # one at a time: the order they queue in is known
                    calls.append(pool.submit(settle, flood, cold_request(20 + n, f"flood-{n}")))
                    wait_until(f"the flooder's call {n} queued", bulk_waiting_is(live, n + 1))
                calls.append(pool.submit(settle, tables, cold_request(30, "table")))
                wait_until("the table's call queued", lambda: live.bulk_waiting == 5)
            for call in calls:
                call.result(timeout=60)
    finally:
        stop_server(handle)
    assert order.index("table") == 1, order
    assert [h for h in order if h != "table"] == [f"flood-{n}" for n in range(4)]


def test_a_profile_resent_every_hand_stays_cached_under_a_flood_of_new_profiles(
    server: ServerHandle,
) -> None:
    """Beside a flood of new maximal profiles, a house profile sent again and again stops
    paying the cold read once the cache has seen it come back: every later call is live. Each
    flood profile is sent twice (first read in a worker, then by the server and offered to its
    cache): 6 of them between two of the house's hands, in a cache of 4 entries. An LRU cache
    would evict the house every time; the cache admits by frequency (TinyLFU), and the house is
    asked for more often than any of them."""
    servicer = server.running.servicer
    assert servicer is not None
    servicer.resolver = resolver = ProfileResolver(servicer.resolver.registry, cache_size=4)
    house = cold_request(999, "house")
    routes = []
    with client(server) as tables, client(server, "flooder") as flood:
        for n in range(120):
            flood.settle(cold_request(1000 + n))  # read in a worker
            flood.settle(cold_request(1000 + n))  # read here, offered to the cache
            if n % 6 == 0:
                routes.append(servicer.route(house)[0])
                tables.settle(house)
        held = len(resolver)
    assert len(routes) == 20 and held <= 4
    # the first hands: a worker, then the server reads it, while the cache learns it is asked
    # for; from then on, never read again
    assert routes[0] == WORKER and set(routes[4:]) == {LIVE}, routes
