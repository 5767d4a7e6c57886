"""Every Prometheus metric of the service, in one place.

Names carry base units and ``_total`` on counters; labels are low-cardinality only (never a
player, table, hand or request id).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)

REGISTRY = CollectorRegistry(auto_describe=True)
# The standard process_* (memory, CPU, open files) and python_info series, as every Prometheus
# client exports them: what an operator's memory and CPU alerts are written against.
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

STARTED = Counter(
    "grpc_server_started_total",
    "RPCs started on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
    registry=REGISTRY,
)
HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
    registry=REGISTRY,
)
HANDLING = Histogram(
    "grpc_server_handling_seconds",
    "Time to handle an RPC on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
IN_FLIGHT = Gauge(
    "cpsettle_rpcs_in_flight",
    "RPCs being handled right now.",
    registry=REGISTRY,
)
SETTLEMENTS = Counter(
    "cpsettle_settlements_total",
    "Hands settled, by profile: a registry profile's name, or inline (never client text).",
    ["profile"],
    registry=REGISTRY,
)
FOULS = Counter("cpsettle_fouls_total", "Fouled hands settled.", registry=REGISTRY)
NATURALS = Counter(
    "cpsettle_naturals_total", "Naturals settled, by kind.", ["natural"], registry=REGISTRY
)
SURRENDERS = Counter("cpsettle_surrenders_total", "Surrendered hands settled.", registry=REGISTRY)
CAPS_APPLIED = Counter(
    "cpsettle_caps_applied_total",
    "Pair payments cut by a stack cap, by cap.",
    ["cap"],
    registry=REGISTRY,
)
PAYOUT_MISMATCHES = Counter(
    "cpsettle_payout_mismatches_total",
    "Dealer payout proposals that did not match the settlement.",
    registry=REGISTRY,
)
VALIDATION_ERRORS = Counter(
    "cpsettle_validation_errors_total",
    "Requests rejected as invalid input, by the code of their first violation.",
    ["reason"],
    registry=REGISTRY,
)
BUILD_INFO = Info(
    "cpsettle_build", "Version and engine digest of the running service.", registry=REGISTRY
)
# Streams live for as long as the caller keeps them open (a day's re-audit: minutes), far past
# the unary buckets above: their own histogram, so neither fills the other's +Inf.
STREAM_HANDLING = Histogram(
    "cpsettle_stream_duration_seconds",
    "Time from the start to the end of a streaming RPC.",
    ["grpc_type", "grpc_service", "grpc_method"],
    buckets=(0.01, 0.05, 0.25, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0),
    registry=REGISTRY,
)
MAX_CONCURRENT_RPCS = Gauge(
    "cpsettle_max_concurrent_rpcs",
    "This replica's limit of settlement calls in flight (CPSETTLE_MAX_CONCURRENT_RPCS).",
    registry=REGISTRY,
)
SIGNING_ENABLED = Gauge(
    "cpsettle_signing_enabled",
    "1 when settlements are signed with a key, 0 when they are issued unsigned.",
    registry=REGISTRY,
)
AUDIT_EVENTS = Counter(
    "cpsettle_audit_events_total",
    "Audit log events written (settlement.issued, payout.validated, payout.mismatch).",
    ["event"],
    registry=REGISTRY,
)
AUDIT_LAST_WRITE = Gauge(
    "cpsettle_audit_last_write_timestamp_seconds",
    "Unix time of the last audit log event written.",
    registry=REGISTRY,
)
# One series per witness of CPSETTLE_WITNESS_URL, labelled by the URL's host, port and path
# (proof/feed.py witness_label: the operator's setting, never a client value); none without one.
WITNESS_UP = Gauge(
    "cpsettle_witness_up",
    "1 while the witness took this replica's last checkpoint, 0 while it cannot be reached or "
    "refuses it (checkpoints wait meanwhile, and go when it is back), by witness.",
    ["witness"],
    registry=REGISTRY,
)
WITNESS_PENDING_LINES = Gauge(
    "cpsettle_witness_pending_lines",
    "Audit log lines this replica wrote that no checkpoint cosigned by the witness covers yet, "
    "by witness.",
    ["witness"],
    registry=REGISTRY,
)
WITNESS_LAST_COSIGNED = Gauge(
    "cpsettle_witness_last_cosigned_timestamp_seconds",
    "Unix time the witness last cosigned one of this replica's checkpoints, by witness (0: not "
    "yet).",
    ["witness"],
    registry=REGISTRY,
)


_ROOT = logging.getLogger()


class CountedAuditLog:
    """The audit logger, counting each event once its line is written (the write is
    synchronous: when ``info`` returns, the line is out). Events the log level filters out are
    not counted. Everything else is the wrapped logger's."""

    __slots__ = ("_log", "_counters")

    def __init__(self, log: Any) -> None:
        self._log = log
        self._counters: dict[str, Any] = {}

    def info(self, event: str, **kw: Any) -> None:
        self._log.info(event, **kw)
        self._written(event, logging.INFO)

    def warning(self, event: str, **kw: Any) -> None:
        self._log.warning(event, **kw)
        self._written(event, logging.WARNING)

    def append(self, event: str, **kw: Any) -> Any:
        """``info``, handing back the line's receipt (proof/log.py) when the audit log took
        it (None: no audit log, or the level filters it out)."""
        from .logging import audit_append

        receipt = audit_append(event, "info", kw)
        self._written(event, logging.INFO)
        return receipt

    def _written(self, event: str, level: int) -> None:
        # observability.logging.configure gives structlog and the root logger the same level;
        # the root logger's check is cached (asking structlog's lazy proxy binds a logger).
        if not _ROOT.isEnabledFor(level):
            return
        counter = self._counters.get(event)
        if counter is None:
            counter = self._counters[event] = AUDIT_EVENTS.labels(event)
        counter.inc()
        AUDIT_LAST_WRITE.set(time.time())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._log, name)


# ---- readiness, the audit log's sink, the serving certificate (docs/RUNBOOK.md): what the
# alerts need to see a replica that answers probes but takes no settlements.
READY = Gauge(
    "cpsettle_ready",
    "1 while readiness is SERVING (the replica takes settlement calls), 0 while NOT_SERVING "
    "(starting, draining, or its audit log stuck).",
    registry=REGISTRY,
)
AUDIT_LOG_STUCK = Gauge(
    "cpsettle_audit_log_stuck",
    "1 while the audit log's sink takes no lines (a pipe nobody reads, a closed pipe, a full "
    "disk): settlements fail UNAVAILABLE and readiness is NOT_SERVING.",
    registry=REGISTRY,
)
AUDIT_LOG_QUEUED = Gauge(
    "cpsettle_audit_log_queued_lines",
    "Log lines waiting for the audit log's sink (at most CPSETTLE_AUDIT_LOG_QUEUE_LINES).",
    registry=REGISTRY,
)
TLS_CERT_EXPIRY = Gauge(
    "cpsettle_tls_certificate_expiry_timestamp_seconds",
    "Unix time at which the serving certificate (CPSETTLE_TLS_CERT_FILE, as last loaded) expires.",
    registry=REGISTRY,
)
TLS_RELOADS = Counter(
    "cpsettle_tls_reloads_total",
    "Certificate files read again after a change on disk: result=loaded (new connections get "
    "them) or rejected (unreadable, or the key does not match the certificate: the previous "
    "ones stay).",
    ["result"],
    registry=REGISTRY,
)


def watch_audit_sink(state: Any) -> None:
    """Read the sink's ``state() -> (stuck, queued)`` at each scrape (no cost per line)."""
    AUDIT_LOG_STUCK.set_function(lambda: float(state()[0]))
    AUDIT_LOG_QUEUED.set_function(lambda: float(state()[1]))


def prime(service: str, methods: list[tuple[str, str]]) -> None:
    """Create every method's call series at zero before the first call: ``rate()`` sees no
    increase in a series' first sample, so the first failures of a code a process has not had
    yet (a stuck audit log's UNAVAILABLE) would not count in the error ratios and SLOs at all.
    ``methods``: (name, grpc_type) pairs; unary ones get the unary histogram, streams theirs."""
    import grpc

    for name, kind in methods:
        STARTED.labels(kind, service, name)
        (HANDLING if kind == "unary" else STREAM_HANDLING).labels(kind, service, name)
        for code in grpc.StatusCode:
            HANDLED.labels(kind, service, name, code.name)
