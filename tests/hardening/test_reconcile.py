"""The audit log reconciles one to one with what clients received (issue #13), against a real
server process: a mixed workload of settlements, calls past their deadline, rejected
ValidatePayouts, oversized stream batches and cancelled streams. Then every settlement a client
received has exactly one ``settlement.issued`` line, every other ``settlement.issued`` has its
``settlement.not_delivered`` line, and a rejected call issued nothing.

Before: 1,110 ``settlement.issued`` lines of a red-team run described settlements never
delivered, with nothing in the log to say so.
"""

from __future__ import annotations

import signal
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import BatchResultStream, SettlementClient, SettlementError
from tests.hardening.support import (
    good_request,
    log_events,
    spawn_server,
    stop_process,
    wait_serving,
)


def item(ref: str) -> pb.AuditItem:
    return pb.AuditItem(ref=ref, request=good_request(ref))


def settled_ids(result: pb.SettleStreamResponse) -> list[str]:
    return [
        r.settlement.settlement_id
        for r in result.results
        if r.WhichOneof("outcome") == "settlement"
    ]


def test_every_issued_settlement_was_delivered_or_says_why_not(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    sock = tmp_path / "s.sock"
    # A small message limit (4 KiB in, 16 KiB out), so a batch of 12 hands is one whose
    # results are too big to send.
    proc = spawn_server(
        log,
        CPSETTLE_UNIX_SOCKET=str(sock),
        CPSETTLE_MAX_MESSAGE_BYTES="4096",
        CPSETTLE_GRACE_SECONDS="3",
    )
    address = f"unix://{sock}"
    received: list[str] = []
    rejected_hands: list[str] = []
    try:
        wait_serving(address, proc, log)
        with SettlementClient(address, timeout=10) as client:
            for i in range(20):  # delivered
                received.append(client.settle(good_request(f"ok-{i}")).settlement.settlement_id)
            for i in range(30):  # deadlines: some settled too late to be delivered
                try:
                    reply = client.settle(good_request(f"late-{i}"), timeout=0.0005 * (i % 10))
                    received.append(reply.settlement.settlement_id)
                except SettlementError as e:
                    assert e.code is grpc.StatusCode.DEADLINE_EXCEEDED, e
            request = good_request("paid-ok")
            nets = {p.player_id: p.net_money for p in client.settle(request).settlement.players}
            received.append(client.settle(request).settlement.settlement_id)  # same id again
            checked = client.validate_payouts(request, nets)
            assert checked.all_match
            received.append(checked.settlement.settlement_id)
            for i in range(10):  # rejected after settling (an unknown player): issue nothing
                hand = f"paid-bad-{i}"
                rejected_hands.append(hand)
                with pytest.raises(SettlementError) as err:
                    client.validate_payouts(good_request(hand), {**nets, "stranger": 0})
                assert err.value.code is grpc.StatusCode.INVALID_ARGUMENT

            # a stream: an oversized batch (answered with a batch error), then one that fits
            batches = [
                pb.SettleStreamRequest(items=[item(f"big-{j}") for j in range(12)]),
                pb.SettleStreamRequest(items=[item("small-0"), item("small-1")]),
            ]
            big, small = list(client.settle_stream(batches, timeout=30))
            assert len(big.results) == 1
            refused = SettlementError.from_status(big.results[0].error)
            assert (refused.code, refused.reason) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "RESULT_TOO_LARGE",
            )
            received += settled_ids(small)
            assert len(settled_ids(small)) == 2

            # cancelled streams: the client cancels right after sending a batch, while the
            # server settles it
            for n in range(3):
                first_read = threading.Event()
                calls: list[BatchResultStream] = []

                def feed(
                    n: int = n,
                    first_read: threading.Event = first_read,
                    calls: list[BatchResultStream] = calls,
                ) -> Iterator[pb.SettleStreamRequest]:
                    yield pb.SettleStreamRequest(items=[item(f"cancel-{n}-first")])
                    first_read.wait(10)
                    yield pb.SettleStreamRequest(items=[item(f"cancel-{n}-{j}") for j in range(2)])
                    calls[0].cancel()

                stream = client.settle_stream(feed(), timeout=30)
                calls.append(stream)
                received += settled_ids(next(stream))
                first_read.set()
                for result in stream:  # what came before the cancel (the client ends quietly)
                    received += settled_ids(result)

            # a stream past its deadline, several batches in
            def slow_feed() -> Iterator[pb.SettleStreamRequest]:
                for b in range(40):
                    yield pb.SettleStreamRequest(
                        items=[item(f"deadline-{b}-{j}") for j in range(2)]
                    )

            try:
                for result in client.settle_stream(slow_feed(), timeout=0.15):
                    received += settled_ids(result)
            except SettlementError as e:
                assert e.code is grpc.StatusCode.DEADLINE_EXCEEDED, e
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(20) == 0
        finally:
            stop_process(proc)

    events = list(log_events(log))
    issued = Counter(e["settlement_id"] for e in events if e.get("event") == "settlement.issued")
    not_delivered = Counter(
        e["settlement_id"] for e in events if e.get("event") == "settlement.not_delivered"
    )
    got = set(received)
    maybe = {
        e["settlement_id"]
        for e in events
        if e.get("event") == "settlement.not_delivered" and e["reason"] == "cancelled_while_sending"
    }  # the client may have it: it says so
    # the request of "paid-ok" was settled twice (same id) and checked once: each call issued
    assert issued[checked.settlement.settlement_id] == 3
    for sid in got - {checked.settlement.settlement_id}:
        assert issued[sid] == 1, sid
        assert sid not in not_delivered or sid in maybe, sid
    undelivered = set(issued) - got
    assert undelivered, "the workload left nothing undelivered: it tests nothing"
    hands = {
        e["settlement_id"]: e["hand_id"] for e in events if e.get("event") == "settlement.issued"
    }
    odd = undelivered ^ (set(not_delivered) - (maybe & got))
    assert not odd, sorted(hands.get(sid, sid) for sid in odd)
    for sid, count in not_delivered.items():
        assert count == issued[sid], sid  # one not-delivered line per issued line
    issued_hands = {e["hand_id"] for e in events if e.get("event") == "settlement.issued"}
    assert not issued_hands & set(rejected_hands)
    reasons = Counter(e["reason"] for e in events if e.get("event") == "settlement.not_delivered")
    assert reasons["result_too_large"] == 12, reasons  # the oversized batch, no more
