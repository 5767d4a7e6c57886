"""Traces on, end to end: a real server process with CPSETTLE_OTEL_ENDPOINT exports its spans over
OTLP/gRPC to a receiver in the test (a TraceService built from the opentelemetry-proto package,
as a collector is), and the span of a call is the child of the caller's `traceparent`."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from cpsettle_client.client import SettlementClient
from tests.hardening.support import good_request
from tests.support.server_process import start, wait_serving

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace receiver that keeps what it is sent."""

    def __init__(self) -> None:
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.lock = threading.Lock()

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            self.requests.append(request)
        return trace_service_pb2.ExportTraceServiceResponse()

    def spans(self) -> list[tuple[dict[str, str], trace_pb2.Span]]:
        """(resource attributes, span) of everything received."""
        out = []
        with self.lock:
            for request in self.requests:
                for rs in request.resource_spans:
                    resource = {a.key: a.value.string_value for a in rs.resource.attributes}
                    out += [(resource, span) for ss in rs.scope_spans for span in ss.spans]
        return out


@pytest.fixture()
def collector() -> Iterator[tuple[Collector, int]]:
    receiver = Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    # the exporter package's generated grpc module carries no annotations
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(  # type: ignore[no-untyped-call]
        receiver, server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield receiver, port
    server.stop(0)


def test_spans_reach_the_collector_with_the_callers_trace(
    collector: tuple[Collector, int], tmp_path: Path
) -> None:
    receiver, port = collector
    sock, log = tmp_path / "o.sock", tmp_path / "o.log"
    proc = start(
        sock,
        log,
        CPSETTLE_LOG_FORMAT="json",
        CPSETTLE_OTEL_ENDPOINT=f"http://127.0.0.1:{port}",
        # the SDK's batch processor: export after 0.2 s instead of 5 s
        OTEL_BSP_SCHEDULE_DELAY="200",
    )
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(
            f"unix://{sock}",
            timeout=10,
            metadata=[("traceparent", f"00-{TRACE_ID}-{PARENT_ID}-01")],
        ) as c:
            settlement = c.settle(good_request("otlp-hand")).settlement
        deadline = time.monotonic() + 20
        while not [s for _, s in receiver.spans() if s.name.endswith("/Settle")]:
            assert time.monotonic() < deadline, "no Settle span reached the collector"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    [(resource, span)] = [(r, s) for r, s in receiver.spans() if s.name.endswith("/Settle")]
    assert span.name == "cpsettle.v1.SettlementService/Settle"
    assert span.trace_id.hex() == TRACE_ID
    assert span.parent_span_id.hex() == PARENT_ID
    assert span.kind == trace_pb2.Span.SPAN_KIND_SERVER
    attributes = {a.key: a.value for a in span.attributes}
    assert attributes["rpc.grpc.status_code"].int_value == 0
    assert resource["service.name"] == "cpsettle"
    # the audit event of the call names the same trace, and the exported span
    [issued] = [
        e
        for e in map(json.loads, log.read_text().splitlines())
        if e.get("event") == "settlement.issued"
        and e.get("settlement_id") == settlement.settlement_id
    ]
    assert issued["trace_id"] == TRACE_ID and issued["span_id"] == span.span_id.hex()


def test_no_endpoint_no_export(collector: tuple[Collector, int], tmp_path: Path) -> None:
    """The same image without the setting: nothing is exported (and nothing tried)."""
    receiver, _port = collector
    sock, log = tmp_path / "n.sock", tmp_path / "n.log"
    proc = start(sock, log, CPSETTLE_LOG_FORMAT="json", OTEL_BSP_SCHEDULE_DELAY="200")
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(
            f"unix://{sock}",
            timeout=10,
            metadata=[("traceparent", f"00-{TRACE_ID}-{PARENT_ID}-01")],
        ) as c:
            c.settle(good_request("no-otlp"))
        time.sleep(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    assert receiver.spans() == []
    started = [
        e
        for e in map(json.loads, log.read_text().splitlines())
        if e.get("event") == "service.started"
    ]
    assert started and started[0]["otel_endpoint"] is None
