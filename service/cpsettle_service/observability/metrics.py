"""Every Prometheus metric of the service, in one place.

Names carry base units and ``_total`` on counters; labels are low-cardinality only (never a
player, table, hand or request id).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

REGISTRY = CollectorRegistry(auto_describe=True)

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
    "Hands settled, by profile name.",
    ["profile"],
    registry=REGISTRY,
)
FOULS = Counter("cpsettle_fouls_total", "Fouled hands settled.", registry=REGISTRY)
NATURALS = Counter(
    "cpsettle_naturals_total", "Naturals settled, by kind.", ["natural"], registry=REGISTRY
)
SURRENDERS = Counter("cpsettle_surrenders_total", "Surrendered hands settled.", registry=REGISTRY)
CAPS_APPLIED = Counter(
    "cpsettle_caps_applied_total", "Pair payments cut by a stack cap, by cap.", ["cap"],
    registry=REGISTRY,
)
PAYOUT_MISMATCHES = Counter(
    "cpsettle_payout_mismatches_total",
    "Dealer payout proposals that did not match the settlement.",
    registry=REGISTRY,
)
VALIDATION_ERRORS = Counter(
    "cpsettle_validation_errors_total",
    "Field violations in rejected requests, by reason class.",
    ["reason"],
    registry=REGISTRY,
)
BUILD_INFO = Info("cpsettle_build", "Version and engine digest of the running service.",
                  registry=REGISTRY)
