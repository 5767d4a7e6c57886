"""SettleStream: one result per hand, in order; per-hand and per-batch errors; flow control."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.api import stream
from cpsettle_service.api.servicer import ProfileResolver, SettlementServicer
from cpsettle_service.profile_files import builtin_registry
from tests.conftest import EXAMPLES, ServerHandle, start_server, stop_server

METHOD = "/cpsettle.v1.SettlementService/SettleStream"


def example(name: str) -> dict[str, Any]:
    data = json.loads((EXAMPLES / "tables" / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


def request(name: str) -> pb.SettleRequest:
    return request_from_json(example(name))


def nets(client: SettlementClient, name: str) -> dict[str, int]:
    s = client.settle(request(name)).settlement
    return {p.player_id: p.net_money for p in s.players}


def err(result: pb.AuditResult) -> SettlementError:
    """A hand's error, read as the client reads a call's (its google.rpc.Status)."""
    assert result.WhichOneof("outcome") == "error"
    return SettlementError.from_status(result.error)


def item(ref: str, req: pb.SettleRequest, paid: dict[str, int] | None = None) -> pb.AuditItem:
    out = pb.AuditItem(ref=ref, request=req)
    for pid, amount in (paid or {}).items():
        out.paid.add(player_id=pid, net_money=amount)
    return out


def test_results_come_back_in_order_with_per_hand_errors(client: SettlementClient) -> None:
    good = nets(client, "western")
    wrong = dict(good)
    first = next(iter(wrong))
    wrong[first] += 100
    missing = dict(good)
    missing.pop(first)
    dup = example("western")
    dup["players"][1]["arrangement"]["front"][0] = dup["players"][0]["arrangement"]["front"][0]
    batch1 = pb.SettleStreamRequest(
        items=[
            item("a", request("western"), good),
            item("b", request_from_json(dup), good),
            item("c", request("western"), wrong),
            item("d", request("western"), missing),
            item("e", request("eastern")),
            item("f", request("ofc")),
        ]
    )
    twice = pb.AuditItem(ref="g", request=request("western"))
    for pid, amount in [*list(good.items()), (first, 5)]:
        twice.paid.add(player_id=pid, net_money=amount)
    batch2 = pb.SettleStreamRequest(items=[twice, item("h", request("shisanshui"))])

    answers = list(client.settle_stream([batch1, pb.SettleStreamRequest(), batch2]))

    assert len(answers) == 3
    r = answers[0].results
    assert [x.ref for x in r] == ["a", "b", "c", "d", "e", "f"]
    assert [x.WhichOneof("outcome") for x in r] == [
        "settlement",
        "error",
        "settlement",
        "error",
        "settlement",
        "settlement",
    ]
    assert r[0].all_match and [c.player_id for c in r[0].checks] == list(good)
    e1 = err(r[1])
    assert e1.code is grpc.StatusCode.INVALID_ARGUMENT
    assert (e1.reason, e1.domain) == ("INVALID_REQUEST", "cpsettle.v1")
    assert e1.metadata == {"violationCodes": "duplicate_card", "violationCount": "1"}
    assert any("already used" in v.reason for v in e1.violations)
    assert not r[2].all_match
    bad = [c for c in r[2].checks if not c.matches]
    assert [(c.player_id, c.expected, c.proposed, c.difference) for c in bad] == [
        (first, good[first], good[first] + 100, 100)
    ]
    assert bad[0].explanation  # the line items behind the expected amount
    e3 = err(r[3])
    assert e3.code is grpc.StatusCode.INVALID_ARGUMENT and e3.reason == "INVALID_REQUEST"
    assert "no proposed payout" in e3.message and not r[3].checks
    assert r[4].all_match and not r[4].checks  # nothing recorded: settled, nothing to check
    assert r[4].settlement.context.hand_id == "example-eastern"
    assert list(answers[1].results) == []
    assert [x.ref for x in answers[2].results] == ["g", "h"]
    assert err(answers[2].results[0]).violations[0].field == "paid[4].playerId"
    assert answers[2].results[1].settlement.profile.name == "shisanshui"


def test_stream_settlements_are_the_unary_settlements(client: SettlementClient) -> None:
    names = ["western", "eastern", "ofc", "classic-1-6"]
    batch = pb.SettleStreamRequest(items=[item(n, request(n)) for n in names])
    [answer] = list(client.settle_stream([batch]))
    for name, result in zip(names, answer.results, strict=True):
        unary = client.settle(request(name)).settlement
        streamed = result.settlement
        for s in (unary, streamed):  # the time of issue (and the signature over it) differ
            s.ClearField("issued_at")
            s.ClearField("signature")
        assert streamed == unary, name


def test_malformed_and_oversized_batches_are_answered_and_the_stream_goes_on(
    server: ServerHandle,
) -> None:
    too_many = pb.SettleStreamRequest(
        items=[pb.AuditItem() for _ in range(stream.MAX_ITEMS_PER_BATCH + 1)]
    )
    good = pb.SettleStreamRequest(items=[item("ok", request("western"))])
    messages = [b"\xff\xff\xff garbage", too_many.SerializeToString(), good.SerializeToString()]
    with grpc.insecure_channel(server.address) as channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=lambda b: b,
            response_deserializer=pb.SettleStreamResponse.FromString,
        )
        answers = list(call(iter(messages), timeout=30))
    assert len(answers) == 3
    for answer, words in (
        (answers[0], "not a valid cpsettle.v1.SettleStreamRequest"),
        (answers[1], "at most 1000 hands, got 1001"),
    ):
        [only] = answer.results
        e = err(only)
        assert only.ref == "" and e.code is grpc.StatusCode.INVALID_ARGUMENT
        assert e.reason == "INVALID_REQUEST" and words in e.message
    assert answers[2].results[0].ref == "ok"
    assert answers[2].results[0].WhichOneof("outcome") == "settlement"


def test_results_too_big_for_one_message_are_a_batch_error() -> None:
    servicer = SettlementServicer(ProfileResolver(builtin_registry()))
    batch = pb.SettleStreamRequest(items=[item(str(i), request("western")) for i in range(4)])
    whole = stream.settle_batch(servicer, batch)
    assert len(whole.results) == 4
    limited = stream.settle_batch(servicer, batch, max_result_bytes=whole.ByteSize() - 1)
    [only] = limited.results
    e = err(only)
    assert only.ref == "" and e.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (e.reason, e.domain) == ("RESULT_TOO_LARGE", "cpsettle.v1")
    assert e.metadata == {"maxResultBytes": str(whole.ByteSize() - 1)}
    assert "send fewer hands per batch" in e.message
    assert stream.settle_batch(servicer, batch, max_result_bytes=whole.ByteSize()) == whole


def test_a_stream_failure_is_a_settlement_error(tmp_path: Path) -> None:
    with (
        SettlementClient(f"unix://{tmp_path}/nobody.sock") as c,
        pytest.raises(SettlementError) as e,
    ):
        list(c.settle_stream([pb.SettleStreamRequest()]))
    assert e.value.code == grpc.StatusCode.UNAVAILABLE


# --------------------------------------------------------------------------- flow control


def test_a_slow_reader_holds_the_server_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server reads batch n+1 only once result n went to the transport: with a reader that
    sleeps, the batches consumed by the server run ahead of the results read by at most what
    the HTTP/2 windows hold (a few MB), never the whole input."""
    consumed = 0
    original = stream.settle_stream

    async def counting(
        servicer: Any, requests: AsyncIterator[Any], context: Any, **kw: Any
    ) -> AsyncIterator[bytes | pb.SettleStreamResponse]:
        async def counted() -> AsyncIterator[Any]:
            nonlocal consumed
            async for b in requests:
                consumed += 1
                yield b

        async for r in original(servicer, counted(), context, **kw):
            yield r

    monkeypatch.setattr(stream, "settle_stream", counting)
    handle = start_server(tmp_path / "s.sock", max_message_bytes=1024 * 1024)
    try:
        per_batch, batches = 40, 60
        batch = pb.SettleStreamRequest(
            items=[item(str(i), request("western")) for i in range(per_batch)]
        )

        def requests() -> Iterator[pb.SettleStreamRequest]:
            for _ in range(batches):
                yield batch

        ahead: list[int] = []
        size = 0
        held_at = 0
        with SettlementClient(handle.address) as c:
            for read, answer in enumerate(c.settle_stream(requests(), timeout=120), 1):
                size = answer.ByteSize()
                if read == 1:  # dawdle until the server stops making progress
                    last, still_since, deadline = -1, time.monotonic(), time.monotonic() + 20
                    while time.monotonic() < deadline:
                        if consumed != last:
                            last, still_since = consumed, time.monotonic()
                        elif time.monotonic() - still_since > 0.5:
                            break
                        time.sleep(0.05)
                    held_at = consumed
                ahead.append(consumed - read)
        bound = 2 + (8 * 1024 * 1024) // size  # grpc's HTTP/2 windows hold about 4 MB
        print(
            f"result {size} bytes; server held at {held_at} of {batches} batches; "
            f"most ahead {max(ahead)}"
        )
        assert size > 150_000
        assert len(ahead) == batches
        assert held_at < batches, "the server ran through the whole input"
        assert max(ahead) <= bound, (ahead, size)
    finally:
        stop_server(handle)
