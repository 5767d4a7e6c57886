"""Live tables come first (issue #13), against a real server process: open SettleStreams never
take the slots of live Settle calls, an idle stream is closed, and on SIGTERM a stream ends at a
batch boundary with what it settled delivered, and ``cpsettle audit --server`` resumes by itself.
"""

from __future__ import annotations

import importlib
import json
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError
from tests.conftest import EXAMPLES, ROOT
from tests.hardening.support import (
    good_request,
    health_status,
    log_events,
    spawn_server,
    spawn_server_to,
    stop_process,
    wait_serving,
)


def idle_feed(stop: threading.Event) -> Iterator[pb.SettleStreamRequest]:
    stop.wait(60)  # sends nothing, never closes its side
    return
    yield  # a generator


def test_idle_streams_without_a_deadline_leave_live_calls_alone(tmp_path: Path) -> None:
    """Before: 64 idle SettleStreams with no deadline held every concurrency slot, and every
    Settle got RESOURCE_EXHAUSTED while readiness said SERVING."""
    log = tmp_path / "server.log"
    sock = tmp_path / "s.sock"
    proc = spawn_server(log, CPSETTLE_UNIX_SOCKET=str(sock), CPSETTLE_STREAM_IDLE_SECONDS="2")
    address = f"unix://{sock}"
    stop = threading.Event()
    try:
        wait_serving(address, proc, log)
        with SettlementClient(address, timeout=10) as client:
            streams = [client.settle_stream(idle_feed(stop)) for _ in range(64)]
            outcomes: queue.Queue[tuple[int, str, float]] = queue.Queue()

            def watch(i: int, stream: Any) -> None:
                try:
                    for _ in stream:
                        pass
                    outcomes.put((i, "OK", time.monotonic()))
                except SettlementError as e:
                    outcomes.put((i, e.code.name, time.monotonic()))

            opened = time.monotonic()
            for i, s in enumerate(streams):
                threading.Thread(target=watch, args=(i, s), daemon=True).start()
            time.sleep(0.3)  # every stream is open (or refused) by now
            for i in range(20):
                reply = client.settle(good_request(f"beside-idle-{i}"))
                assert reply.settlement.context.hand_id == f"beside-idle-{i}"
            assert health_status(address) == "SERVING"

            ends = [outcomes.get(timeout=30) for _ in range(64)]
            codes = [code for _, code, _ in ends]
            # the stream budget (8 by default) took the first; the rest were refused at once
            assert codes.count("OK") == 8, codes
            assert codes.count("RESOURCE_EXHAUSTED") == 56, codes
            # the admitted ones were closed after the idle time (2 s here), not held open
            closed = [at - opened for _, code, at in ends if code == "OK"]
            assert all(1.5 < t < 15 for t in closed), closed
    finally:
        stop.set()
        stop_process(proc)
    ended = [e for e in log_events(log) if e.get("event") == "stream.ended"]
    assert len(ended) == 8 and {e["reason"] for e in ended} == {"idle"}


def write_day(path: Path, hands: int) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:  # examples/ is a script directory, outside what mypy reads: imported by name
        generate_history = importlib.import_module("generate_history")
    finally:
        sys.path.remove(str(EXAMPLES))
    lines: list[str] = generate_history.generate(hands, seed=5, mistakes=0, invalid=0)[0]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_sigterm_ends_a_stream_at_a_batch_boundary_and_the_audit_resumes(tmp_path: Path) -> None:
    """Before: the stream ran out the whole grace period, then failed UNAVAILABLE; the hands
    settled meanwhile were logged but never delivered, and the audit failed."""
    day = tmp_path / "day.jsonl"
    hands = 3000
    write_day(day, hands)
    sock = tmp_path / "s.sock"
    address = f"unix://{sock}"
    env = {"CPSETTLE_UNIX_SOCKET": str(sock), "CPSETTLE_GRACE_SECONDS": "20"}
    first_log = tmp_path / "first.log"
    first = spawn_server(first_log, **env)
    second: subprocess.Popen[bytes] | None = None
    report = tmp_path / "report.json"
    try:
        wait_serving(address, first, first_log)
        audit = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cpsettle_client.cli",
                "audit",
                str(day),
                "--server",
                address,
                "--batch",
                "20",
                "--report",
                str(report),
                "--progress",
                "none",
            ],
            env={
                "PYTHONPATH": ":".join(
                    str(ROOT / d) for d in ("service", "proto", "clients/python")
                )
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # SIGTERM once the audit is well under way
        deadline = time.monotonic() + 60
        while sum(1 for e in log_events(first_log) if e.get("event") == "settlement.issued") < 200:
            assert time.monotonic() < deadline and audit.poll() is None, audit.communicate()
            time.sleep(0.02)
        sigterm = time.monotonic()
        first.send_signal(signal.SIGTERM)
        assert first.wait(30) == 0
        drained = time.monotonic() - sigterm
        assert drained < 10, f"the drain took {drained:.1f} s of a 20 s grace period"
        second_log = tmp_path / "second.log"
        second = spawn_server(second_log, **env)  # the replacement, at the same address
        out, err = audit.communicate(timeout=120)
        assert audit.returncode == 0, (out.decode(), err.decode())
    finally:
        stop_process(first)
        if second is not None:
            stop_process(second)
    summary = json.loads(report.read_text())["summary"]
    assert summary["handsRead"] == hands and summary["handsChecked"] == hands, summary
    assert summary["handsWithDifferences"] == 0 and summary["invalidHands"] == 0, summary
    events = list(log_events(first_log))
    ended = [e for e in events if e.get("event") == "stream.ended"]
    assert [e["reason"] for e in ended] == ["shutdown"]
    # what the first server settled, it delivered: nothing issued without delivery
    assert not [e for e in events if e.get("event") == "settlement.not_delivered"]
    rpc = [e for e in events if e.get("event") == "rpc" and e.get("method") == "SettleStream"]
    assert [e["code"] for e in rpc] == ["OK"], rpc


def test_the_settlement_id_covers_the_engine_digest(tmp_path: Path) -> None:
    """Before: two builds sharing a version number but differing in code (here: one patched
    engine file) gave the same settlementId for the same request."""
    patched = tmp_path / "patched"
    shutil.copytree(
        ROOT / "service", patched / "service", ignore=shutil.ignore_patterns("__pycache__")
    )
    rules = patched / "service" / "cpsettle_service" / "domain" / "settle" / "settlement.py"
    rules.write_text(rules.read_text() + "\n# a patched build, same version number\n")
    ids = []
    for name, folders in (
        ("original", None),
        ("patched", [patched / "service", ROOT / "proto", ROOT / "clients/python"]),
    ):
        sock = tmp_path / f"{name}.sock"
        log = tmp_path / f"{name}.log"
        with open(log, "wb") as out:  # the server keeps its own copy
            proc = spawn_server_to(
                out, tmp_path / f"{name}.err", folders, CPSETTLE_UNIX_SOCKET=str(sock)
            )
        try:
            wait_serving(f"unix://{sock}", proc, tmp_path / f"{name}.err")
            with SettlementClient(f"unix://{sock}") as client:
                s = client.settle(good_request("same-request")).settlement
            ids.append((s.engine_version, s.engine_digest, s.settlement_id))
        finally:
            stop_process(proc)
    (v1, d1, id1), (v2, d2, id2) = ids
    assert v1 == v2 and d1 != d2
    assert id1 != id2
