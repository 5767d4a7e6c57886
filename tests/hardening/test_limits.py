"""The concurrency limit and the server-side deadline cap, on the real server.

Calls are kept in flight with ``HeldSettle``: the production ``build_server`` (grpc.aio's
``maximum_concurrent_rpcs``, the ServiceInterceptor, the tolerant deserializer) serving real
Settle calls whose handler is made to wait, test-only, before it settles.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc
from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.observability import metrics
from tests.conftest import LogStream, ServerHandle, start_server, stop_server
from tests.hardening.support import HeldSettle, good_request
from tests.support.health import health_check


def in_flight() -> float:
    value = metrics.REGISTRY.get_sample_value("cpsettle_rpcs_in_flight")
    assert value is not None
    return value


def wait_in_flight_zero(seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while in_flight() != 0:
        assert time.monotonic() < deadline, f"in-flight gauge stuck at {in_flight()}"
        time.sleep(0.01)


def rpc_events(logs: LogStream, prefix: str) -> list[dict[str, Any]]:
    return [e for e in logs.events("rpc") if str(e.get("hand_id", "")).startswith(prefix)]


def issued_events(logs: LogStream, prefix: str) -> list[dict[str, Any]]:
    return [
        e for e in logs.events("settlement.issued") if str(e.get("hand_id", "")).startswith(prefix)
    ]


@pytest.fixture()
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldSettle]:
    h = HeldSettle()
    h.install(monkeypatch)
    yield h
    h.release()


# --------------------------------------------------------------------------- concurrency


def test_past_the_concurrency_limit_calls_fail_fast_and_accepted_ones_succeed(
    tmp_path: Any, held: HeldSettle, logs: LogStream
) -> None:
    held.hold()
    handle = start_server(tmp_path / "c.sock", max_concurrent_rpcs=2)
    try:
        with grpc.insecure_channel(handle.address) as channel:
            stub = pb_grpc.SettlementServiceStub(channel)
            accepted = [
                stub.Settle.future(good_request(f"limit-ok-{i}"), timeout=20) for i in range(2)
            ]
            held.wait_entered(2)  # both are inside the handler: the server is at its limit

            rejected = []
            for i in range(20):
                start = time.monotonic()
                with pytest.raises(grpc.RpcError) as e:
                    stub.Settle(good_request(f"limit-no-{i}"), timeout=10)
                rejected.append((e.value.code(), time.monotonic() - start))
            assert {code for code, _ in rejected} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
            with (
                SettlementClient(handle.address) as client,
                pytest.raises(SettlementError) as refused,
            ):
                client.settle(good_request("limit-info"), timeout=10)
            assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert (refused.value.reason, refused.value.domain) == ("AT_CAPACITY", "cpsettle.v1")
            assert max(seconds for _, seconds in rejected) < 1, "refused at once, not queued"
            assert held.entered == 2, "a refused call reached the handler"
            assert all(not f.done() for f in accepted)
            # the limit counts the settlement service only: probes are still answered
            check = health_check(channel)
            for service in ("", "cpsettle.v1.SettlementService", "liveness"):
                reply = check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING

            held.release()
            for i, future in enumerate(accepted):
                settlement = future.result(timeout=10).settlement
                assert settlement.context.hand_id == f"limit-ok-{i}"
                assert len(settlement.players) == 4 and settlement.settlement_id

            # with the accepted calls done, the server takes calls again
            held.mode = "pass"
            ok = 0
            for i in range(10):
                try:
                    stub.Settle(good_request(f"limit-after-{i}"), timeout=10)
                    ok += 1
                except grpc.RpcError as e:
                    # only the first may still find both slots taken: the server counts a call
                    # out when its task ends, just after the reply has left
                    assert e.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and i == 0, e
            assert ok >= 9
        deadline = time.monotonic() + 5
        while len(issued_events(logs, "limit-ok-")) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        # the accepted ones delivered their settlements: one settlement.issued line each, and
        # no rpc line (a delivered settlement's line is its audit event)
        assert len(issued_events(logs, "limit-ok-")) == 2
        assert rpc_events(logs, "limit-ok-") == []
        turned_away = rpc_events(logs, "limit-no-")
        assert len(turned_away) == 20
        assert {e["code"] for e in turned_away} == {"RESOURCE_EXHAUSTED"}
    finally:
        held.release()
        stop_server(handle)


def test_open_settle_streams_hold_only_the_stream_budget(tmp_path: Any) -> None:
    """Production code only: two SettleStream calls, left open by their client, fill a stream
    budget of 2; a third stream is refused at once, while unary calls (a budget of their own)
    still settle; the streams still finish every batch correctly."""
    handle = start_server(tmp_path / "s.sock", max_concurrent_rpcs=2, max_concurrent_streams=2)
    try:
        with grpc.insecure_channel(handle.address) as channel:
            stub = pb_grpc.SettlementServiceStub(channel)
            feeds: list[queue.Queue[pb.SettleStreamRequest | None]] = [
                queue.Queue() for _ in range(2)
            ]

            def batches(
                feed: queue.Queue[pb.SettleStreamRequest | None],
            ) -> Iterator[pb.SettleStreamRequest]:
                while (batch := feed.get(timeout=20)) is not None:
                    yield batch

            def batch(ref: str) -> pb.SettleStreamRequest:
                return pb.SettleStreamRequest(
                    items=[pb.AuditItem(ref=ref, request=good_request(ref))]
                )

            streams = [stub.SettleStream(batches(feed), timeout=30) for feed in feeds]
            for i, (feed, stream) in enumerate(zip(feeds, streams, strict=True)):
                feed.put(batch(f"stream-{i}-first"))
                (first,) = next(stream).results  # the stream is accepted and working
                assert first.ref == f"stream-{i}-first"
                assert first.WhichOneof("outcome") == "settlement"

            third = stub.SettleStream(iter([batch("stream-third")]), timeout=10)
            with pytest.raises(grpc.RpcError) as e:
                next(third)
            assert e.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED

            for i in range(10):
                reply = stub.Settle(good_request(f"stream-beside-{i}"), timeout=10)
                assert reply.settlement.context.hand_id == f"stream-beside-{i}"

            for i, (feed, stream) in enumerate(zip(feeds, streams, strict=True)):
                feed.put(batch(f"stream-{i}-second"))
                feed.put(None)
                (second,) = next(stream).results
                assert second.ref == f"stream-{i}-second"
                assert len(second.settlement.players) == 4
                with pytest.raises(StopIteration):
                    next(stream)
                assert stream.code() is grpc.StatusCode.OK
    finally:
        stop_server(handle)


# --------------------------------------------------------------------------- deadlines


@pytest.fixture()
def capped(tmp_path: Any, held: HeldSettle) -> Iterator[ServerHandle]:
    handle = start_server(tmp_path / "d.sock", default_deadline_seconds=0.5)
    yield handle
    held.release()
    stop_server(handle)


def test_a_call_without_a_deadline_is_capped_by_the_server(
    capped: ServerHandle, held: HeldSettle, logs: LogStream
) -> None:
    held.hold()  # the handler would wait 30 s
    with grpc.insecure_channel(capped.address) as channel:
        stub = pb_grpc.SettlementServiceStub(channel)
        start = time.monotonic()
        with pytest.raises(grpc.RpcError) as e:
            stub.Settle(good_request("cap-none"))  # no timeout: no deadline at all
        elapsed = time.monotonic() - start
    assert e.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert "no deadline" in (e.value.details() or "")
    error = SettlementError.from_rpc_error(e.value)  # the server's cap, not the client's deadline
    assert (error.reason, error.domain) == ("SERVER_DEADLINE_CAP", "cpsettle.v1")
    assert 0.45 < elapsed < 3, elapsed
    deadline = time.monotonic() + 5
    while not rpc_events(logs, "cap-none") and time.monotonic() < deadline:
        time.sleep(0.01)
    (event,) = rpc_events(logs, "cap-none")
    assert event["code"] == "DEADLINE_EXCEEDED"
    wait_in_flight_zero()


def test_a_call_with_its_own_deadline_is_not_capped(capped: ServerHandle, held: HeldSettle) -> None:
    held.mode = 1.0  # twice the cap
    with grpc.insecure_channel(capped.address) as channel:
        reply = pb_grpc.SettlementServiceStub(channel).Settle(good_request("cap-own"), timeout=5)
    assert reply.settlement.context.hand_id == "cap-own"


def test_cancelled_and_expired_calls_leave_no_errors_and_no_calls_in_flight(
    capped: ServerHandle, held: HeldSettle, logs: LogStream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    wait_in_flight_zero()
    with logs._lock:
        mark = len(logs.lines)
    batch = 50
    with grpc.insecure_channel(capped.address) as channel:
        stub = pb_grpc.SettlementServiceStub(channel)

        # 1,000 calls cancelled by the client while the server handles them
        held.mode = 5.0
        for b in range(1000 // batch):
            futures = [
                stub.Settle.future(good_request(f"cancel-{b}-{i}"), timeout=10)
                for i in range(batch)
            ]
            held.wait_entered((b + 1) * batch)
            assert in_flight() >= batch
            for f in futures:
                assert f.cancel()
        held.mode = "pass"
        wait_in_flight_zero()

        # 1,000 real Settle calls with a 1 ms deadline: the first half held 20 ms in the
        # handler, so every one of them expires there; the second half not held, so each
        # races its deadline (how many win depends on the machine's speed, not on the code).
        codes: dict[grpc.StatusCode, int] = {}
        for b in range(1000 // batch):
            held.mode = 0.02 if b < 500 // batch else "pass"
            futures = [
                stub.Settle.future(good_request(f"expire-{b}-{i}"), timeout=0.001)
                for i in range(batch)
            ]
            for f in futures:
                error = f.exception(timeout=10)
                assert error is None or isinstance(error, grpc.RpcError), error
                code = grpc.StatusCode.OK if error is None else error.code()
                codes[code] = codes.get(code, 0) + 1
        held.mode = "pass"
        assert set(codes) <= {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.OK}, codes
        assert codes.get(grpc.StatusCode.DEADLINE_EXCEEDED, 0) >= 500, codes  # the held half

    wait_in_flight_zero()
    with logs._lock:
        lines = logs.lines[mark:]
    assert not [line for line in lines if "rpc.failed" in line or "Traceback" in line]
    deadline = time.monotonic() + 5  # each call's log line follows its gauge update
    while len(server_side := rpc_events(logs, "cancel-")) < 1000 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(server_side) == 1000 and {e["code"] for e in server_side} == {"CANCELLED"}
    # grpc's own (stdlib) logger: nothing either, but for one known grpc.aio race. A handler
    # that finishes just as its deadline fires has its response refused by core, and grpc.aio
    # logs that ExecuteBatchError at ERROR unless the *client* had cancelled (it does not
    # check for an expired deadline). Nothing is lost: the client has DEADLINE_EXCEEDED.
    noisy = [
        r
        for r in caplog.records
        if (r.levelno >= logging.ERROR or r.exc_info) and not _deadline_race(r)
    ]
    assert not noisy, [r.getMessage() for r in noisy[:3]]


def _deadline_race(record: logging.LogRecord) -> bool:
    error = record.exc_info[1] if record.exc_info else None
    return (
        record.name == "grpc._cython.cygrpc"
        and type(error).__name__ == "ExecuteBatchError"
        and "/cpsettle.v1.SettlementService/Settle" in record.getMessage()
    )
