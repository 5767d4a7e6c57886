"""Trace context: the caller's W3C ``traceparent`` in every log line of its call, and server spans
exported through OpenTelemetry when an OTLP endpoint is configured.

- Without an exporter (the default) no span is made: a call that carries
  ``traceparent: 00-<trace-id>-<parent-id>-<flags>`` logs ``trace_id`` and ``span_id`` = the
  caller's ids, so its lines are found from the caller's span in the tracing backend. A call
  without one logs neither. Costs one pass over the call's metadata.
- With an exporter (``CPSETTLE_OTEL_ENDPOINT``, the ``otel`` extra installed) each RPC is a SERVER
  span, a child of the caller's span when there is one, and the log lines carry the new span's
  ``trace_id`` and ``span_id``.

>>> parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7')
>>> parse_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16

# OpenTelemetry's conventions for gRPC server spans: these codes are the server's failure; the
# others (INVALID_ARGUMENT, NOT_FOUND, ...) are the caller's and leave the span's status unset.
_SERVER_ERRORS = frozenset(
    ("UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS")
)

_tracer: Any = None  # an OpenTelemetry Tracer once configured
_propagator: Any = None
_provider: Any = None  # its TracerProvider (shutdown exports what is still batched)


def parse_traceparent(value: str) -> tuple[str, str] | None:
    """``(trace_id, parent_span_id)`` of a valid W3C traceparent header, else None."""
    m = _TRACEPARENT.fullmatch(value.strip())
    if m is None:
        return None
    version, trace_id, span_id, _flags, rest = m.groups()
    # Version ff is forbidden; version 00 has exactly four fields; later versions may add more.
    if (
        version == "ff"
        or (version == "00" and rest)
        or trace_id == _ZERO_TRACE
        or span_id == _ZERO_SPAN
    ):
        return None
    return trace_id, span_id


def configure(endpoint: str = "", exporter: Any = None, service_version: str = "") -> bool:
    """Export spans: to the OTLP/gRPC ``endpoint``, or to ``exporter`` (tests: an in-memory one).
    Needs the ``otel`` extra; returns False (and exports nothing) when neither is given."""
    global _tracer, _propagator, _provider
    if not endpoint and exporter is None:
        _tracer = _propagator = _provider = None
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    resource = Resource.create({"service.name": "cpsettle", "service.version": service_version})
    provider = TracerProvider(resource=resource)
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    # The provider is ours, not the process-global one: the service owns no one else's spans.
    _tracer = provider.get_tracer("cpsettle_service")
    _propagator = TraceContextTextMapPropagator()
    _provider = provider
    return True


def shutdown() -> None:
    """Export the spans still batched and stop exporting (at the end of a drain)."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    _tracer = _provider = None


def begin(metadata: Iterable[Any] | None, service: str, method: str) -> tuple[Any, Any, Any]:
    """``(trace_id, span_id, span)`` for a call: ids to log (Ellipsis when there are none, so
    structlog leaves the keys out) and the span to ``finish`` (None without an exporter)."""
    traceparent = tracestate = None
    for key, value in metadata or ():
        if key == "traceparent":
            traceparent = value
        elif key == "tracestate":
            tracestate = value
    if _tracer is None:
        parsed = parse_traceparent(traceparent) if isinstance(traceparent, str) else None
        return (parsed[0], parsed[1], None) if parsed else (..., ..., None)
    from opentelemetry.trace import SpanKind

    carrier = {}
    if isinstance(traceparent, str):
        carrier["traceparent"] = traceparent
        if isinstance(tracestate, str):
            carrier["tracestate"] = tracestate
    span = _tracer.start_span(
        f"{service}/{method}",
        context=_propagator.extract(carrier),
        kind=SpanKind.SERVER,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"), span


def finish(span: Any, code: str) -> None:
    """End the call's span with its gRPC status code (an error status unless OK)."""
    if span is None:
        return
    import grpc
    from opentelemetry.trace import Status, StatusCode

    number = getattr(grpc.StatusCode, code, grpc.StatusCode.UNKNOWN).value[0]
    span.set_attribute("rpc.grpc.status_code", number)
    if code in _SERVER_ERRORS:
        span.set_status(Status(StatusCode.ERROR, code))
    span.end()
