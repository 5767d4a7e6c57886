"""SettleStream's worker processes killed again and again (issue 24, part 6), on a real server.

Before: the workers shared one result pipe (``ProcessPoolExecutor``); a worker killed while it
wrote its answer left half a message there, and every later batch of every stream hung (or the
stream ended with INTERNAL). docs/BULK_AUDIT.md promises one batch error per batch that lost its
workers, and the stream going on: each worker now has pipes of its own.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient
from tests.hardening.support import (
    good_request,
    log_events,
    spawn_server,
    stop_process,
    wait_serving,
    workers_of,
)

BATCHES = 40
HANDS = 20


def batches(
    answered: threading.Semaphore, halfway: threading.Event
) -> Iterator[pb.SettleStreamRequest]:
    """One batch after the other's answer (grpc reads a request iterator eagerly)."""
    for b in range(BATCHES):
        if b:
            answered.acquire(timeout=60)
        if b == BATCHES // 2:
            halfway.set()  # the killer stops here: the second half must settle whole
            time.sleep(0.5)
        items = []
        for i in range(HANDS):
            request = good_request(f"h{b}-{i}")
            items.append(pb.AuditItem(ref=f"r{b}-{i}", request=request))
        yield pb.SettleStreamRequest(items=items)


def test_killed_workers_cost_one_batch_error_each_and_the_stream_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    sock = tmp_path / "s.sock"
    proc = spawn_server(log, CPSETTLE_UNIX_SOCKET=str(sock), CPSETTLE_STREAM_WORKERS="2")
    address = f"unix://{sock}"
    stop = threading.Event()
    killed: list[int] = []

    def killer() -> None:
        while not stop.is_set():
            for pid in workers_of(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    try:
        wait_serving(address, proc, log)
        thread = threading.Thread(target=killer, daemon=True)
        with SettlementClient(address, timeout=120) as client:
            thread.start()
            answered = threading.Semaphore(0)
            answers = []
            for answer in client.settle_stream(batches(answered, stop)):
                answers.append(answer)
                answered.release()
            stop.set()
            thread.join(10)
            # the server is whole afterwards: a new stream settles every hand
            after = list(
                client.settle_stream(
                    iter(
                        [
                            pb.SettleStreamRequest(
                                items=[pb.AuditItem(ref="after", request=good_request("after"))]
                            )
                        ]
                    )
                )
            )
    finally:
        stop.set()
        stop_process(proc)
    assert killed, "no worker was killed"
    assert len(answers) == BATCHES, "one answer per batch, and the stream went on to the end"
    failed = []
    for b, answer in enumerate(answers):
        refs = [r.ref for r in answer.results]
        if refs == [""]:  # a batch error: one result, empty ref, INTERNAL
            assert answer.results[0].error.code == grpc.StatusCode.INTERNAL.value[0]
            failed.append(b)
        else:
            assert refs == [f"r{b}-{i}" for i in range(HANDS)]
            assert all(
                r.settlement.settlement_id and not r.HasField("error") for r in answer.results
            )
    assert failed, "the kills hit no batch: nothing was shown"
    assert max(failed) < BATCHES // 2 + 2, "batches after the kills stopped must settle"
    assert after[0].results[0].settlement.context.hand_id == "after"
    events = list(log_events(log))
    lost = [e for e in events if e.get("event") == "stream.worker_lost"]
    assert len(lost) == len(failed)
    # nothing of a lost batch was issued: every settlement.issued was delivered
    issued = {e["hand_id"] for e in events if e.get("event") == "settlement.issued"}
    delivered = {r.settlement.context.hand_id for a in answers + after for r in a.results if r.ref}
    assert issued == delivered
    rpc = [e for e in events if e.get("event") == "rpc" and e.get("method") == "SettleStream"]
    assert [e["code"] for e in rpc] == ["OK", "OK"]
