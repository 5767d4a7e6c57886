"""Trace context: the caller's W3C traceparent in every log line of its call (a real server
process's own output), and server spans through OpenTelemetry (an in-memory exporter, the
`otel` extra)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.observability import tracing
from tests.conftest import EXAMPLES, LogStream, start_server, stop_server
from tests.support.server_process import start, wait_serving

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


def example(name: str, hand_id: str) -> dict[str, Any]:
    request: dict[str, Any] = json.loads((EXAMPLES / "tables" / f"{name}.json").read_text())
    request["handId"] = hand_id
    return request


def lines_of(log: Path, hand_id: str) -> list[dict[str, Any]]:
    """Every log line of the server (all JSON) that names the hand."""
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("hand_id") == hand_id]


def test_traceparent_in_every_log_line_of_the_call(tmp_path: Path) -> None:
    sock, log = tmp_path / "t.sock", tmp_path / "t.log"
    proc = start(sock, log, CPSETTLE_LOG_FORMAT="json")
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}", metadata=[("traceparent", TRACEPARENT)]) as c:
            c.settle(example("western", "traced-ok"))
            bad = example("western", "traced-bad")
            bad["players"][0]["arrangement"]["front"][0] = "Zz"
            with pytest.raises(SettlementError):
                c.settle(bad)
        with SettlementClient(f"unix://{sock}") as c:
            c.settle(example("western", "untraced"))
        with SettlementClient(
            f"unix://{sock}", metadata=[("traceparent", "00-not-a-trace-01")]
        ) as c:
            c.settle(example("western", "malformed-trace"))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    ok, bad_lines = lines_of(log, "traced-ok"), lines_of(log, "traced-bad")
    # a delivered settlement's one line is its audit event; the rejection's own line and its
    # rpc line
    assert [e["event"] for e in ok] == ["settlement.issued"]
    assert {e["event"] for e in bad_lines} == {"rpc", "request.invalid"}
    for event in ok + bad_lines:
        assert (event.get("trace_id"), event.get("span_id")) == (TRACE_ID, PARENT_ID), event
    for hand in ("untraced", "malformed-trace"):
        events = lines_of(log, hand)
        assert [e["event"] for e in events] == ["settlement.issued"]
        for event in events:  # nothing left over from the traced calls on the same server
            assert "trace_id" not in event and "span_id" not in event, event


@pytest.mark.parametrize(
    "value, parsed",
    [
        (TRACEPARENT, (TRACE_ID, PARENT_ID)),
        (f"00-{TRACE_ID}-{PARENT_ID}-00", (TRACE_ID, PARENT_ID)),  # not sampled: still the ids
        (f"01-{TRACE_ID}-{PARENT_ID}-01-future", (TRACE_ID, PARENT_ID)),  # later versions extend
        (f"00-{TRACE_ID}-{PARENT_ID}-01-extra", None),  # version 00 has four fields
        (f"ff-{TRACE_ID}-{PARENT_ID}-01", None),
        (f"00-{TRACE_ID.upper()}-{PARENT_ID}-01", None),
        (f"00-{'0' * 32}-{PARENT_ID}-01", None),
        (f"00-{TRACE_ID}-{'0' * 16}-01", None),
        (f"00-{TRACE_ID[:-1]}-{PARENT_ID}-01", None),
        ("", None),
    ],
)
def test_parse_traceparent(value: str, parsed: tuple[str, str] | None) -> None:
    assert tracing.parse_traceparent(value) == parsed


def test_spans_exported_through_opentelemetry(tmp_path: Path, logs: LogStream) -> None:
    memory = pytest.importorskip(
        "opentelemetry.sdk.trace.export.in_memory_span_exporter",
        reason="the otel extra is not installed (pip install -e '.[otel]')",
    )
    from opentelemetry.trace import SpanKind, StatusCode

    exporter = memory.InMemorySpanExporter()
    assert tracing.configure(exporter=exporter, service_version="test")
    handle = start_server(tmp_path / "otel.sock")
    try:
        with SettlementClient(handle.address, metadata=[("traceparent", TRACEPARENT)]) as c:
            c.settle(example("western", "otel-child"))
            bad = example("western", "otel-bad")
            bad["players"][0]["arrangement"]["front"][0] = "Zz"
            with pytest.raises(SettlementError):
                c.settle(bad)
        with SettlementClient(handle.address) as c:
            c.settle(example("western", "otel-root"))
    finally:
        stop_server(handle)
        tracing.configure()  # back to no export for the other tests
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["cpsettle.v1.SettlementService/Settle"] * 3
    child, bad_span, root = spans
    for span in spans:
        assert span.kind is SpanKind.SERVER
        assert span.attributes["rpc.system"] == "grpc"
        assert span.attributes["rpc.method"] == "Settle"
        assert span.resource.attributes["service.name"] == "cpsettle"
    # a child of the caller's span, in the caller's trace
    assert format(child.context.trace_id, "032x") == TRACE_ID
    assert format(child.parent.span_id, "016x") == PARENT_ID
    assert child.attributes["rpc.grpc.status_code"] == 0
    assert child.status.status_code is StatusCode.UNSET
    # the caller's bad input is not the server's error
    assert bad_span.attributes["rpc.grpc.status_code"] == 3
    assert bad_span.status.status_code is StatusCode.UNSET
    # no traceparent: a new trace
    assert root.parent is None and format(root.context.trace_id, "032x") != TRACE_ID
    # the log lines carry the server span's ids
    for span, hand in ((child, "otel-child"), (root, "otel-root")):
        events = [
            e
            for e in logs.events("rpc") + logs.events("settlement.issued")
            if e.get("hand_id") == hand
        ]
        assert len(events) == 1  # the settlement.issued line: no rpc line beside it
        for event in events:
            assert event["trace_id"] == format(span.context.trace_id, "032x")
            assert event["span_id"] == format(span.context.span_id, "016x")
