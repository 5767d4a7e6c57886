"""10,000 malformed Settle payloads, oversized requests and memory, against the real server
process (``python -m cpsettle_service.server``, as deployed, on a unix socket)."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementError
from tests.hardening.corpus import Corpus
from tests.hardening.support import (
    SETTLE,
    good_request,
    health_status,
    log_events,
    rss_kib,
    spawn_server,
    stop_process,
    wait_serving,
)

LIMIT = 1024 * 1024  # CPSETTLE_MAX_MESSAGE_BYTES of the server under test (the default)
WINDOW = 32  # calls in flight at once


@dataclass
class Proc:
    process: Any
    address: str
    log: Path


@pytest.fixture(scope="module")
def process_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    directory = tmp_path_factory.mktemp("malformed")
    sock, log = directory / "s.sock", directory / "server.log"
    proc = spawn_server(
        log,
        CPSETTLE_UNIX_SOCKET=str(sock),
        CPSETTLE_GRACE_SECONDS="2",
        CPSETTLE_MAX_MESSAGE_BYTES=str(LIMIT),
    )
    address = f"unix://{sock}"
    try:
        wait_serving(address, proc, log)
        yield Proc(proc, address, log)
    finally:
        stop_process(proc)


def raw_settle(channel: grpc.Channel) -> Any:
    return channel.unary_unary(SETTLE, request_serializer=None, response_deserializer=None)


def assert_server_clean(server: Proc) -> list[dict[str, Any]]:
    assert server.process.poll() is None, "the server process died"
    assert health_status(server.address) == "SERVING"
    text = server.log.read_text(errors="replace")
    assert "Traceback" not in text
    events = list(log_events(server.log))
    failed = [e for e in events if e.get("event") == "rpc.failed" or e.get("level") == "error"]
    assert not failed, failed[:3]
    return events


def test_ten_thousand_malformed_payloads_are_each_invalid_argument(process_server: Proc) -> None:
    payloads = list(Corpus().payloads())
    assert len(payloads) == 10_000
    outcomes: list[tuple[str, int, str] | None] = [None] * len(payloads)
    window = threading.BoundedSemaphore(WINDOW)
    finished = threading.Semaphore(0)

    def record(i: int, future: Any) -> None:
        try:
            error = future.exception()
            if error is None:
                outcomes[i] = ("OK", 0, "")
            else:
                e = SettlementError.from_rpc_error(error)
                outcomes[i] = (e.code.name, len(e.violations), e.message[:160])
        except BaseException as e:  # a callback must never lose an outcome
            outcomes[i] = (f"callback error {e!r}", 0, "")
        finally:
            window.release()
            finished.release()

    start = time.monotonic()
    with grpc.insecure_channel(process_server.address) as channel:
        call = raw_settle(channel)
        for i, (_, data) in enumerate(payloads):
            assert window.acquire(timeout=60), "a call hung"
            future = call.future(data, timeout=30)
            future.add_done_callback(lambda f, i=i: record(i, f))
        for _ in payloads:
            assert finished.acquire(timeout=60), "a call hung"
    elapsed = time.monotonic() - start

    codes: collections.Counter[tuple[str, str]] = collections.Counter()
    wrong = []
    for (kind, data), outcome in zip(payloads, outcomes, strict=True):
        assert outcome is not None
        code, violations, message = outcome
        codes[(kind, code)] += 1
        if code != "INVALID_ARGUMENT" or violations < 1:
            wrong.append((kind, len(data), code, violations, message))
    assert not wrong, (
        f"{len(wrong)} of {len(payloads)} not INVALID_ARGUMENT with violations",
        wrong[:10],
        dict(codes),
    )
    print(f"10,000 malformed payloads in {elapsed:.1f} s ({len(payloads) / elapsed:.0f}/s)")

    events = assert_server_clean(process_server)
    server_codes = collections.Counter(e.get("code") for e in events if e.get("event") == "rpc")
    assert server_codes["INVALID_ARGUMENT"] >= len(payloads)
    assert not server_codes.keys() & {"INTERNAL", "UNKNOWN"}, server_codes
    # still settles real hands afterwards
    with grpc.insecure_channel(process_server.address) as channel:
        reply = pb.SettleResponse.FromString(
            raw_settle(channel)(good_request().SerializeToString(), timeout=10)
        )
    assert len(reply.settlement.players) == 4


def padded(size: int) -> bytes:
    """An encoded SettleRequest of exactly ``size`` bytes (a long hand id and nothing else)."""
    n = size - 4
    while len(data := pb.SettleRequest(hand_id="h" * n).SerializeToString()) != size:
        n += size - len(data)
    return data


def code_of(call: Any, data: bytes) -> grpc.StatusCode:
    try:
        call(data, timeout=20)
    except grpc.RpcError as e:
        return e.code()
    return grpc.StatusCode.OK


def test_requests_over_the_size_limit_are_resource_exhausted(process_server: Proc) -> None:
    with grpc.insecure_channel(process_server.address) as channel:
        call = raw_settle(channel)
        # at the limit the request is read (and refused for its content: no table)
        assert code_of(call, padded(LIMIT)) is grpc.StatusCode.INVALID_ARGUMENT
        for size in (LIMIT + 1, LIMIT + 1024, 4 * 1024 * 1024):
            assert code_of(call, padded(size)) is grpc.StatusCode.RESOURCE_EXHAUSTED, size
            assert code_of(call, b"\xff" * size) is grpc.StatusCode.RESOURCE_EXHAUSTED, size
    assert_server_clean(process_server)


def codes_of(call: Any, payloads: list[bytes], parallel: int = 16) -> list[grpc.StatusCode]:
    """Send the payloads, ``parallel`` at a time; the status code of each."""
    codes: list[grpc.StatusCode] = []
    for i in range(0, len(payloads), parallel):
        futures = [call.future(data, timeout=20) for data in payloads[i : i + parallel]]
        for f in futures:
            error = f.exception()
            codes.append(grpc.StatusCode.OK if error is None else error.code())
    return codes


def test_memory_stays_flat_under_repeated_oversized_requests(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """No leak, on a fresh server process: after two warm-up rounds (buffers, HTTP/2 windows
    and allocator arenas reach their high-water mark) three more rounds of the same oversized
    requests, 240 MiB offered, leave RSS where it was. (A leak of even 1/16 of each refused
    request would add 15 MiB; a fresh server sits within a few MiB for 20 rounds and more.)"""
    directory = tmp_path_factory.mktemp("rss")
    sock, log = directory / "s.sock", directory / "server.log"
    proc = spawn_server(log, CPSETTLE_UNIX_SOCKET=str(sock), CPSETTLE_MAX_MESSAGE_BYTES=str(LIMIT))
    server = Proc(proc, f"unix://{sock}", log)
    try:
        wait_serving(server.address, proc, log)
        over, four_mib = padded(LIMIT + 1), padded(4 * 1024 * 1024)
        rss = []
        with grpc.insecure_channel(server.address) as channel:
            call = raw_settle(channel)
            for _ in range(5):  # 32 requests, 80 MiB offered, per round
                codes = codes_of(call, [four_mib, over] * 16)
                assert set(codes) == {grpc.StatusCode.RESOURCE_EXHAUSTED}
                rss.append(rss_kib(proc.pid))
        print(f"server RSS after each round of 32 oversized requests: {rss} KiB")
        assert rss[-1] - rss[1] < 12 * 1024, f"RSS grew from {rss[1]} to {rss[-1]} KiB: {rss}"
        assert_server_clean(server)
    finally:
        stop_process(proc)
