"""The audit log never blocks and never lies (issue #13): stdout, the audit log, as a pipe
nobody reads, a closed pipe and a full disk (/dev/full), against a real server process.

Throughout, health checks answer within 100 ms; settlements fail closed with UNAVAILABLE and a
clear message while the log cannot take their events, and readiness says NOT_SERVING; no
settlement reaches a client without its ``settlement.issued`` line; when the sink takes lines
again the replica recovers by itself, and the log it wrote is intact (one tree, no gap).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.proof.logcheck import check_logs
from tests.hardening.support import (
    HealthProbe,
    good_request,
    spawn_server_to,
    stop_process,
    wait_answering,
)


class Settler:
    """Settle calls, one after another, each with its own hand id, through the project's
    client: which were delivered (settlement id) and how the others failed."""

    def __init__(self, address: str) -> None:
        self.client = SettlementClient(address, timeout=5)
        self.delivered: dict[str, str] = {}  # settlement id -> hand id
        self.failed: list[SettlementError] = []
        self.n = 0

    def settle(self, count: int) -> None:
        for _ in range(count):
            self.n += 1
            hand = f"sink-{self.n}"
            try:
                reply = self.client.settle(good_request(hand))
            except SettlementError as e:
                self.failed.append(e)
            else:
                self.delivered[reply.settlement.settlement_id] = hand

    def until_refused(self, limit: int = 400) -> SettlementError:
        """Settle until a call fails (the log cannot take more)."""
        before = len(self.failed)
        for _ in range(limit):
            self.settle(1)
            if len(self.failed) > before:
                return self.failed[-1]
        raise AssertionError(f"{limit} settlements all went out")

    def close(self) -> None:
        self.client.close()


def issued_ids(lines: list[dict[str, Any]]) -> list[str]:
    return [e["settlement_id"] for e in lines if e.get("event") == "settlement.issued"]


def json_lines(data: bytes) -> list[dict[str, Any]]:
    out = []
    for raw in data.splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(raw))
    return out


def assert_refused_cleanly(error: SettlementError) -> None:
    assert error.code.name == "UNAVAILABLE", error
    assert (error.reason, error.domain) == ("AUDIT_LOG_UNAVAILABLE", "cpsettle.v1"), error
    assert "audit log" in str(error), error


@pytest.fixture()
def sock(tmp_path: Path) -> Path:
    return tmp_path / "s.sock"


def start(stdout: Any, tmp_path: Path, sock: Path) -> tuple[subprocess.Popen[bytes], str]:
    proc = spawn_server_to(
        stdout, tmp_path / "stderr.txt", CPSETTLE_UNIX_SOCKET=str(sock), CPSETTLE_GRACE_SECONDS="2"
    )
    address = f"unix://{sock}"
    wait_answering(address, proc, tmp_path / "stderr.txt")
    return proc, address


@pytest.fixture()
def stopper() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
        stop_process(p)


def test_a_log_pipe_nobody_reads(
    tmp_path: Path, sock: Path, stopper: list[subprocess.Popen[bytes]]
) -> None:
    """Before: after ~31 settlements the whole server froze, health checks included."""
    read_end, write_end = os.pipe()
    proc, address = start(write_end, tmp_path, sock)
    stopper.append(proc)
    os.close(write_end)
    probe = HealthProbe(address)
    settler = Settler(address)
    try:
        probe.wait_for("SERVING")
        assert_refused_cleanly(settler.until_refused())  # the pipe (64 KiB) is full
        probe.wait_for("NOT_SERVING")
        settler.settle(5)  # still refused, at once
        assert len(settler.failed) >= 6
        for e in settler.failed:
            assert_refused_cleanly(e)

        # someone reads the pipe again: the replica recovers by itself
        log = bytearray()

        def drain() -> None:
            while chunk := os.read(read_end, 65536):
                log.extend(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        probe.wait_for("SERVING")
        failed_before = len(settler.failed)
        settler.settle(20)
        assert len(settler.failed) == failed_before, settler.failed[failed_before:]
        assert probe.failures == [], probe.failures[:5]
    finally:
        probe.close()
        settler.close()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    reader.join(10)
    os.close(read_end)

    lines = json_lines(bytes(log))
    issued = issued_ids(lines)
    # every settlement delivered has exactly one settlement.issued line
    for sid in settler.delivered:
        assert issued.count(sid) == 1, sid
    # and every other one issued says it was not delivered
    not_delivered = {
        e["settlement_id"] for e in lines if e.get("event") == "settlement.not_delivered"
    }
    assert set(issued) - set(settler.delivered) <= not_delivered
    assert not not_delivered & set(settler.delivered)
    path = tmp_path / "audit.log"
    path.write_bytes(bytes(log))
    report = check_logs([str(path)])
    assert report.intact, [c.problems for c in report.logs]
    assert len(report.logs) == 1


def test_a_log_pipe_closed_by_its_reader(
    tmp_path: Path, sock: Path, stopper: list[subprocess.Popen[bytes]]
) -> None:
    """Before: every Settle failed UNKNOWN with the raw OS error while health said SERVING."""
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert reader.stdin is not None and reader.stdout is not None
    proc, address = start(reader.stdin, tmp_path, sock)
    stopper.append(proc)
    reader.stdin.close()
    probe = HealthProbe(address)
    settler = Settler(address)
    try:
        probe.wait_for("SERVING")
        settler.settle(10)
        assert len(settler.delivered) == 10, settler.failed
        before = dict(settler.delivered)
        time.sleep(0.5)  # the writer thread has written them
        reader.kill()  # the pipe's reader dies: every write now fails (EPIPE)
        reader.wait(5)
        log = reader.stdout.read()
        assert_refused_cleanly(settler.until_refused(50))
        probe.wait_for("NOT_SERVING")
        settler.settle(10)
        assert settler.delivered == before or len(settler.delivered) <= len(before) + 1
        for e in settler.failed:
            assert_refused_cleanly(e)
        assert probe.failures == [], probe.failures[:5]
    finally:
        probe.close()
        settler.close()
    lines = json_lines(log)
    issued = issued_ids(lines)
    # what was delivered before the reader died is in what it read; nothing after it was
    # (a call in flight as it died may have been written just before: then it is in the log)
    for sid in settler.delivered:
        assert issued.count(sid) == 1, sid


def test_a_full_disk(tmp_path: Path, sock: Path, stopper: list[subprocess.Popen[bytes]]) -> None:
    """/dev/full: every write fails ENOSPC. Before: Settle failed UNKNOWN with the raw error and
    health said SERVING."""
    with open("/dev/full", "wb") as full:
        proc, address = start(full, tmp_path, sock)
    stopper.append(proc)
    probe = HealthProbe(address)
    settler = Settler(address)
    try:
        settler.settle(10)
        probe.wait_for("NOT_SERVING")
        assert settler.delivered == {}, "a settlement went out without its event"
        assert len(settler.failed) == 10
        for e in settler.failed:
            assert_refused_cleanly(e)
        assert "No space left on device" in str(settler.failed[-1])
        assert probe.failures == [], probe.failures[:5]
    finally:
        probe.close()
        settler.close()
