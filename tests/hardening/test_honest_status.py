"""Honest status codes and labels (issue #13), against a real server process."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from tests.hardening.live import Server, rejected
from tests.hardening.support import stop_process
from tests.support.tables import table

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
SERVICE = "/cpsettle.v1.SettlementService/"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # a 64 KiB message limit, so that refusals for size are cheap to provoke
    s = Server(tmp_path_factory.mktemp("honest"), CPSETTLE_MAX_MESSAGE_BYTES=str(64 * 1024))
    yield s
    stop_process(s.proc)


def series(samples: dict[str, float], name: str) -> int:
    return sum(1 for key in samples if key.partition("{")[0] == name)


def far_proposals(settlement: pb.Settlement) -> dict[str, int]:
    """For each player the int64 extreme on the far side of what he is owed: every difference
    leaves int64 (a player who nets 0 is left out: no int64 proposal overflows for him)."""
    return {
        p.player_id: INT64_MIN if p.net_money > 0 else INT64_MAX
        for p in settlement.players
        if p.net_money
    }


# --------------------------------------------------------------------------- int64 amounts


def test_validate_payouts_near_the_int64_limits_is_invalid_argument(server: Server) -> None:
    with SettlementClient(server.address) as c:
        settlement = c.settle(table()).settlement
        proposals = far_proposals(settlement)
        assert proposals
        with pytest.raises(SettlementError) as e:
            c.validate_payouts(table(), proposals)
        assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
        assert {v.field for v in e.value.violations} == {"proposed"}
        assert "does not fit an int64" in e.value.violations[0].reason
        # the extremes themselves are fine where the difference fits
        report = c.validate_payouts(table(), {p.player_id: p.net_money for p in settlement.players})
        assert report.all_match


def test_paid_near_the_int64_limits_in_a_stream_is_invalid_argument(server: Server) -> None:
    with SettlementClient(server.address) as c:
        request = request_from_json(table())
        settlement = c.settle(request).settlement
        item = pb.AuditItem(ref="far", request=request)
        for pid, amount in far_proposals(settlement).items():
            item.paid.add(player_id=pid, net_money=amount)
        [result] = list(c.settle_stream([pb.SettleStreamRequest(items=[item])], timeout=30))
    error = SettlementError.from_status(result.results[0].error)
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT, error
    assert {v.field for v in error.violations} == {"paid"}


# --------------------------------------------------------------------------- labels


def test_inline_profile_names_make_no_series(server: Server) -> None:
    before = server.scrape()
    base = table()
    del base["preset"]
    with SettlementClient(server.address) as c:
        profile = c.get_profile("western").profile
        for i in range(1_000):
            profile.name = f"client-text-{i}"
            request = request_from_json(base)
            request.profile.CopyFrom(profile)
            c.settle(request)
        # overrides naming the profile do not make a series either
        for i in range(20):
            c.settle(table(profileOverrides={"name": f"override-{i}"}))
    after = server.scrape()
    name = "cpsettle_settlements_total"
    assert series(after, name) - series(before, name) <= 2  # inline, western: at most new
    assert (
        after.get(f'{name}{{profile="inline"}}', 0) - before.get(f'{name}{{profile="inline"}}', 0)
        == 1_000
    )
    assert (
        after[f'{name}{{profile="western"}}'] - before.get(f'{name}{{profile="western"}}', 0) == 20
    )
    assert not any("client-text" in key or "override-" in key for key in after)


def test_the_standard_process_collectors_are_registered(server: Server) -> None:
    samples = server.scrape()
    assert samples["process_resident_memory_bytes"] > 1024 * 1024
    assert "process_cpu_seconds_total" in samples
    assert "process_open_fds" in samples
    assert any(key.startswith("python_info{") for key in samples)


# --------------------------------------------------------------------------- refusals


def test_a_request_refused_for_size_is_counted_and_logged(server: Server) -> None:
    def handled() -> float:
        return server.metric(
            "grpc_server_handled_total", grpc_method="Settle", grpc_code="RESOURCE_EXHAUSTED"
        )

    before = handled()
    logged = len([e for e in server.events("rpc") if e.get("code") == "RESOURCE_EXHAUSTED"])
    with SettlementClient(server.address) as c, pytest.raises(SettlementError) as e:
        c.settle(table(handId="h", tableId="t" * 100_000))
    assert e.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "limit" in e.value.message
    time.sleep(0.2)  # the count follows the status by a moment
    assert handled() - before == 1
    events = [e for e in server.events("rpc") if e.get("code") == "RESOURCE_EXHAUSTED"]
    assert len(events) - logged == 1
    assert events[-1]["method"] == "Settle"


def test_not_found_for_a_long_name_is_not_found(server: Server) -> None:
    with SettlementClient(server.address) as c, pytest.raises(SettlementError) as e:
        c.get_profile("n" * 40_000)
    assert e.value.code is grpc.StatusCode.NOT_FOUND
    assert len(e.value.message) <= 1024


@pytest.mark.parametrize("method", ["ListProfiles", "GetVerificationKeys"])
def test_junk_bytes_to_an_empty_request_are_invalid_argument(server: Server, method: str) -> None:
    junk = os.urandom(500 * 1024 // 8)  # 62.5 KB: within the test server's 64 KiB limit
    parseable_junk = b"\x0a\x05hello" * 1000  # an unknown field 1, well-formed
    with grpc.insecure_channel(server.address) as channel:
        call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(SERVICE + method)
        for data in (junk, parseable_junk):
            assert rejected(call, data).code() is grpc.StatusCode.INVALID_ARGUMENT
        assert call(b"", timeout=10) is not None  # an empty request is still fine


# --------------------------------------------------------------------------- the metrics port


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def test_half_open_metrics_requests_make_no_threads(server: Server) -> None:
    warm = threads(server.proc.pid)
    sockets = []
    try:
        for _ in range(800):
            s = socket.create_connection(("127.0.0.1", server.metrics_port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never ends its head
            sockets.append(s)
        time.sleep(0.5)
        during = threads(server.proc.pid)
        with SettlementClient(server.address) as c:
            assert c.health(timeout=5) == "SERVING"
            c.settle(table(), timeout=10)
    finally:
        for s in sockets:
            s.close()
    assert during - warm <= 4, f"{warm} threads before, {during} with 800 half-open requests"
    assert "process_open_fds" in server.scrape()


# --------------------------------------------------------------------------- cancelled streams


def test_a_cancelled_stream_is_cancelled_never_an_error(server: Server) -> None:
    """Streams cancelled at every moment (before, during and after a batch): each ends as
    CANCELLED in the metrics and the log, and the log holds no error and no traceback."""
    request = request_from_json(table())
    batch = pb.SettleStreamRequest(
        items=[pb.AuditItem(ref=f"r{i}", request=request) for i in range(50)]
    )
    with SettlementClient(server.address) as c:
        for i in range(40):
            gate = threading.Event()

            # the gate bound now: the stream's thread may read it after the loop moved on
            def batches(gate: threading.Event = gate) -> Iterator[pb.SettleStreamRequest]:
                yield batch
                yield batch
                gate.wait(5)

            stream = c.settle_stream(batches(), timeout=30)
            if i % 2:
                next(stream)
            time.sleep((i % 5) * 0.005)
            stream.cancel()
            gate.set()
        assert c.health() == "SERVING"
    time.sleep(1)
    codes = [e["code"] for e in server.events("rpc") if e.get("method") == "SettleStream"]
    assert "INTERNAL" not in codes and codes.count("CANCELLED") >= 20, codes
    assert (
        server.metric("grpc_server_handled_total", grpc_method="SettleStream", grpc_code="INTERNAL")
        == 0
    )
    text = server.log.read_text()
    assert "Task exception was never retrieved" not in text
    assert "Traceback" not in text
    errors = [e for e in server.events("rpc.failed")] + [
        e for e in server.events("stream.item_failed")
    ]
    assert not errors
