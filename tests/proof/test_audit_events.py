"""The audit log's own events (docs/AUDIT.md, "Audit log events"), field by field, where
nothing else fills a field in for them.

A unary call binds the request's hand, table, round and dealer ids to every log line of the
call, so an event that dropped its own would still show them there; a SettleStream batch is one
call with many hands, so there each event must name its hand itself. Each test starts its own
server, so what the server builds at start (the sealer) is built inside the test.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.api.servicer import ProfileResolver, SettlementServicer
from cpsettle_service.local import LocalService
from cpsettle_service.profile_files import builtin_registry
from cpsettle_service.proof.events import log_not_delivered
from cpsettle_service.proof.keys import signing_key_from_pem
from cpsettle_service.proof.seal import Issued, Sealer
from tests.conftest import EXAMPLES, ServerHandle, start_server, stop_server
from tests.proof.test_known_answers import issued_at_text
from tests.support.fixed_keys import fixed_test_key

KEY_ID = "events-key"
IDS = ("hand_id", "table_id", "round_id", "dealer_id")


def example(name: str, n: int) -> pb.SettleRequest:
    """An example table under ids no other test uses (``ev-hand-{n}``, ``ev-table-{n}``, ...)."""
    request = request_from_json((EXAMPLES / "tables" / f"{name}.json").read_text())
    request.hand_id, request.table_id = f"ev-hand-{n}", f"ev-table-{n}"
    request.round_id, request.dealer_id = f"ev-round-{n}", f"ev-dealer-{n}"
    return request


def nets(request: pb.SettleRequest) -> dict[str, int]:
    """What the service pays, computed in process without logging anything."""
    s = LocalService().settle(request).settlement
    return {p.player_id: p.net_money for p in s.players}


def events(logs: Any, name: str, hand_id: str) -> list[dict[str, Any]]:
    return [e for e in logs.events(name) if e.get("hand_id") == hand_id]


@pytest.fixture()
def signing(tmp_path: Path) -> Iterator[ServerHandle]:
    handle = start_server(
        tmp_path / "events.sock", signing_key=fixed_test_key(2).decode(), signing_key_id=KEY_ID
    )
    yield handle
    stop_server(handle)


def test_each_hand_of_a_stream_is_issued_and_checked_under_its_own_ids(
    signing: ServerHandle, logs: Any
) -> None:
    western, classic = example("western", 1), example("classic-1-6", 2)
    paid_w = nets(western)
    short = next(iter(paid_w))
    paid_w[short] -= 7
    paid_c = nets(classic)
    batch = pb.SettleStreamRequest()
    for ref, request, paid in (("w", western, paid_w), ("c", classic, paid_c)):
        item = batch.items.add(ref=ref, request=request)
        for pid, amount in paid.items():
            item.paid.add(player_id=pid, net_money=amount)
    with SettlementClient(signing.address, timeout=10) as client:
        [response] = list(client.settle_stream(iter([batch])))
    results = {r.ref: r for r in response.results}
    for ref, request in (("w", western), ("c", classic)):
        s = results[ref].settlement
        [e] = events(logs, "settlement.issued", request.hand_id)
        assert {k: e[k] for k in IDS} == {k: getattr(request, k) for k in IDS}
        assert e["settlement_id"] == s.settlement_id
        assert (e["signed"], e["key_id"]) == (True, KEY_ID)
        assert e["naturals"] == {p.player_id: p.natural for p in s.players if p.natural}
        assert base64.b64decode(e["request"]) == request.SerializeToString(deterministic=True)
    assert events(logs, "settlement.issued", "ev-hand-2")[0]["naturals"], "the table has a natural"

    w = results["w"].settlement
    [mismatch] = events(logs, "payout.mismatch", "ev-hand-1")
    assert {k: mismatch[k] for k in IDS} == {k: getattr(western, k) for k in IDS}
    assert mismatch["settlement_id"] == w.settlement_id
    expected = next(p.net_money for p in w.players if p.player_id == short)
    assert mismatch["players"] == [
        {"player_id": short, "expected": expected, "proposed": expected - 7, "difference": -7}
    ]
    assert mismatch["pairs"] == []
    # a stream logs no payout.validated (settlement.issued is there for each hand already)
    assert not events(logs, "payout.validated", "ev-hand-2") and not events(
        logs, "payout.mismatch", "ev-hand-2"
    )


def test_payouts_checked_one_by_one_are_logged_with_the_settlement_and_the_amounts(
    signing: ServerHandle, logs: Any
) -> None:
    """ValidatePayouts: ``payout.validated`` with the number of players checked, or
    ``payout.mismatch`` with each pair that does not match."""
    request = example("two-four", 3)
    with SettlementClient(signing.address, timeout=10) as client:
        s = client.settle(request).settlement
        assert client.validate_payouts(
            request, {p.player_id: p.net_money for p in s.players}
        ).all_match
        [validated] = events(logs, "payout.validated", "ev-hand-3")
        assert {k: validated[k] for k in IDS} == {k: getattr(request, k) for k in IDS}
        assert (validated["settlement_id"], validated["players"]) == (s.settlement_id, 4)
        pr = s.pairs[1]
        good = pr.paid if pr.payee == pr.first else -pr.paid
        report = client.validate_payouts(
            request,
            {p.player_id: p.net_money for p in s.players},
            {(pr.second, pr.first): -good + 3},
        )
    assert not report.all_match
    [mismatch] = events(logs, "payout.mismatch", "ev-hand-3")
    assert mismatch["settlement_id"] == s.settlement_id
    assert mismatch["players"] == []
    assert mismatch["pairs"] == [
        {
            "first": pr.second,
            "second": pr.first,
            "expected": -good,
            "proposed": -good + 3,
            "difference": 3,
        }
    ]


def test_an_unsigned_server_without_the_request_logs_neither(tmp_path: Path, logs: Any) -> None:
    handle = start_server(tmp_path / "plain.sock", audit_include_request=False)
    try:
        with SettlementClient(handle.address, timeout=10) as client:
            s = client.settle(example("western", 4)).settlement
    finally:
        stop_server(handle)
    [e] = events(logs, "settlement.issued", "ev-hand-4")
    assert (e["settlement_id"], e["signed"], e["key_id"]) == (s.settlement_id, False, "")
    # unsigned, but dated all the same
    assert s.HasField("issued_at")
    assert e["issued_at"] == issued_at_text(s.issued_at.seconds, s.issued_at.nanos)
    assert "request" not in e


def test_a_sealer_by_default_logs_the_request_and_publishes_its_key() -> None:
    """Sealer's defaults (what LocalService and embedders get): the request in the event, and
    the signing key's public half in the key set GetVerificationKeys would publish."""
    key = signing_key_from_pem(fixed_test_key(3), "default-key")
    registry = builtin_registry()
    request = example("western", 5)
    with capture_logs() as captured:
        sealer = Sealer(key, log=structlog.get_logger("test"))
        SettlementServicer(ProfileResolver(registry), sealer).settle_response(request)
    [e] = [c for c in captured if c["event"] == "settlement.issued"]
    assert base64.b64decode(e["request"]) == request.SerializeToString(deterministic=True)
    assert (e["hand_id"], e["signed"], e["key_id"]) == ("ev-hand-5", True, "default-key")
    published = sealer.keys.get("default-key")
    assert published is not None and published.raw == key.public.raw
    assert Sealer(None).keys.get("default-key") is None


def test_a_batch_too_large_to_send_is_logged_not_delivered_hand_by_hand(
    tmp_path: Path, logs: Any
) -> None:
    """Each hand of a SettleStream batch whose answer exceeds the send limit (4 x the message
    limit) was sealed and logged as issued: each gets a ``settlement.not_delivered`` naming its
    settlement and hand, so the log reconciles with what the caller received (nothing)."""
    handle = start_server(tmp_path / "small.sock", max_message_bytes=8 * 1024)
    batch = pb.SettleStreamRequest()
    for n in range(12):
        batch.items.add(ref=str(n), request=example("western", 100 + n))
    assert batch.ByteSize() < 8 * 1024
    try:
        with SettlementClient(handle.address, timeout=10) as client:
            [response] = list(client.settle_stream(iter([batch])))
    finally:
        stop_server(handle)
    [result] = response.results
    assert result.WhichOneof("outcome") == "error" and result.ref == ""
    for n in range(12):
        [issued] = events(logs, "settlement.issued", f"ev-hand-{100 + n}")
        [lost] = events(logs, "settlement.not_delivered", f"ev-hand-{100 + n}")
        assert lost["settlement_id"] == issued["settlement_id"]
        assert lost["reason"] == "result_too_large" and "detail" not in lost


def test_not_delivered_lines_carry_a_detail_only_when_one_is_given() -> None:
    """``settlement.not_delivered``: one line per settlement, its hand id clipped to the
    longest a request may send (128 characters), ``detail`` only when there is one."""
    with capture_logs() as captured:
        sealer = Sealer(None, log=structlog.get_logger("test"))
        sealer.not_delivered([Issued("id-1", "h" * 200), Issued("id-2", "h2")], "cancelled")
        sealer.not_delivered([Issued("id-3", "h3")], "audit_log_unavailable", "disk full")
        log_not_delivered(structlog.get_logger("test"), [Issued("id-4", "h4")], "cancelled")
    lines = [
        (c["settlement_id"], c["hand_id"], c["reason"], c.get("detail", "-"))
        for c in captured
        if c["event"] == "settlement.not_delivered"
    ]
    assert lines == [
        ("id-1", "h" * 128, "cancelled", "-"),
        ("id-2", "h2", "cancelled", "-"),
        ("id-3", "h3", "audit_log_unavailable", "disk full"),
        ("id-4", "h4", "cancelled", "-"),
    ]
