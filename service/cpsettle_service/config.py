"""Service settings, read once from the environment into one frozen object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from .errors import ConfigError

# Settings renamed: an old name set is refused, never silently ignored.
RENAMED = {
    "CPSETTLE_AUDIT_HEAD_SECONDS": "CPSETTLE_AUDIT_CHECKPOINT_SECONDS",
    "CPSETTLE_AUDIT_HEAD_EVENTS": "CPSETTLE_AUDIT_CHECKPOINT_EVENTS",
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting, its environment variable ``CPSETTLE_<NAME>`` and its default."""

    host: str = "127.0.0.1"
    port: int = 50051
    unix_socket: str = ""  # serve on unix://PATH instead of host:port when set
    metrics_port: int = 9464  # 0 = no metrics HTTP endpoint
    # A second, plaintext port that serves only grpc.health.v1 (for the kubelet's gRPC probes,
    # which cannot speak TLS); 0 = none, health is answered on the main port only.
    health_port: int = 0
    # HTTP/JSON beside gRPC: the Connect protocol on a port of its own (api/connect); 0 = off.
    http_port: int = 0
    # Origins whose web pages may call the HTTP port from a browser (CORS), comma-separated,
    # exactly as browsers send them ("https://tables.example.com"; "*" for any); "" = none.
    http_cors_origins: str = ""
    # gRPC connections end after this long (a GOAWAY; clients reconnect, through the Service to
    # any replica), so a scale-out reaches clients already connected; 0 = never.
    max_connection_age_seconds: float = 300.0
    # ... and calls still running on an aged connection get this long to finish (a SettleStream
    # longer than that is ended; `cpsettle audit --server` reconnects and continues).
    max_connection_age_grace_seconds: float = 600.0
    # The server pings a connection idle this long, and closes it if no answer comes within the
    # timeout: half-open connections (a node gone, a NAT dropped) do not linger.
    keepalive_time_seconds: float = 60.0
    keepalive_timeout_seconds: float = 20.0
    max_concurrent_rpcs: int = 64  # unary calls in flight (Settle, ValidatePayouts, ...)
    max_concurrent_streams: int = 8  # SettleStreams open, a budget of their own
    stream_idle_seconds: float = 60.0  # a stream that sends no batch for this long is closed
    # worker processes that settle SettleStream's hands: -1 = none (the server process settles
    # them itself, on one core, yielding to live calls: the default, for pods that serve live
    # tables), 0 = one per core (within the cgroup CPU quota: the bulk-audit Deployment), N = N.
    # Off by default because workers compete with live calls for the CPU: beside one bulk stream
    # a live Settle's p99 grew 2.4-2.6x with them, 1.5x without (bench/bench_bulk_yield.py).
    stream_workers: int = -1
    stream_worker_nice: int = 10  # the workers' niceness above the server's: live calls first
    # worker processes for unary calls whose engine work may run long (a profile using RULES.md
    # §16's jokers or naturals defined as data, a profile the server has not read yet), so that
    # no request holds the event loop: 0 = one per core (within the cgroup CPU quota), N = N,
    # -1 = none (all of it on the loop, as before). Started with the server, in the background.
    engine_workers: int = 0
    engine_worker_nice: int = 10  # their niceness above the server's: live calls first
    max_message_bytes: int = 1024 * 1024
    log_level: str = "info"
    log_format: str = "auto"  # auto | json | console
    grace_seconds: float = 20.0
    default_deadline_seconds: float = 10.0  # server-side cap for calls without a deadline
    reflection: bool = False
    profile_dir: str = ""
    signing_key_file: str = ""  # the Ed25519 private key, PEM (a mounted Secret)
    signing_key: str = ""  # the PEM text itself: development only, refused when required
    signing_key_id: str = ""  # "" = the key's fingerprint (keys.py)
    require_signing_key: bool = False
    verification_keys_file: str = ""  # retired public keys, published beside the signing key
    # the audit log's signed checkpoint this often (if lines came since the last) ...
    audit_checkpoint_seconds: float = 1.0
    audit_checkpoint_events: int = 1000  # ... and after this many lines (docs/AUDIT.md)
    audit_log_origin: str = "cpsettle.audit"  # the log's origin: this + "/" + a random id
    # the witnesses' URL prefixes (comma-separated) that each checkpoint goes to ("" = none)
    witness_url: str = ""
    witness_timeout_seconds: float = 2.0  # one add-checkpoint call, at most
    require_manifest: bool = False  # refuse to start without an intact build manifest
    audit_include_request: bool = True
    audit_log_queue_lines: int = 2048  # log lines waiting for a slow sink, at most
    audit_log_stall_seconds: float = 0.5  # a sink this slow to take a line fails settlements
    tls_cert_file: str = ""
    tls_key_file: str = ""
    tls_client_ca_file: str = ""
    auth_tokens_file: str = ""
    # Refuse to start unless callers must authenticate: client certificates
    # (CPSETTLE_TLS_CLIENT_CA_FILE) or bearer tokens (CPSETTLE_AUTH_TOKENS_FILE). The prod
    # overlay sets it, with mutual TLS as its default.
    require_caller_auth: bool = False
    # grpc's channelz service (connections, sockets, calls per channel) on the plaintext
    # admin port (CPSETTLE_HEALTH_PORT), for debugging stuck connections: off by default.
    channelz: bool = False
    # OTLP/gRPC collector address (e.g. http://otel-collector:4317): spans are exported when set
    # (needs the `otel` extra). Empty = no spans.
    otel_endpoint: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        problems: list[str] = []
        for old, new in RENAMED.items():
            if old in env:
                problems.append(
                    f"{old} is now {new} (the audit log's checkpoints replaced its "
                    "signed heads: docs/AUDIT.md)"
                )
        for f in fields(cls):
            var = f"CPSETTLE_{f.name.upper()}"
            if var not in env:
                continue
            raw = env[var].strip()
            default = f.default
            try:
                if isinstance(default, bool):
                    low = raw.lower()
                    if low not in _TRUE | _FALSE:
                        raise ValueError("expected true or false")
                    values[f.name] = low in _TRUE
                elif isinstance(default, int):
                    values[f.name] = int(raw)
                elif isinstance(default, float):
                    values[f.name] = float(raw)
                else:
                    values[f.name] = raw
            except ValueError as e:
                problems.append(f"{var}={raw!r}: {e}")
        settings = cls(**values)  # type: ignore[arg-type]  # values are typed per field above
        problems.extend(settings._problems())
        if problems:
            raise ConfigError("; ".join(problems))
        return settings

    def _problems(self) -> list[str]:
        out = []
        if not 0 <= self.port <= 65535:
            out.append(f"CPSETTLE_PORT must be 0-65535, got {self.port}")
        if not 0 <= self.metrics_port <= 65535:
            out.append(f"CPSETTLE_METRICS_PORT must be 0-65535, got {self.metrics_port}")
        if not 0 <= self.health_port <= 65535:
            out.append(f"CPSETTLE_HEALTH_PORT must be 0-65535, got {self.health_port}")
        elif self.health_port and self.health_port in (self.port, self.metrics_port):
            out.append(
                "CPSETTLE_HEALTH_PORT must differ from CPSETTLE_PORT and CPSETTLE_METRICS_PORT"
            )
        if not 0 <= self.http_port <= 65535:
            out.append(f"CPSETTLE_HTTP_PORT must be 0-65535, got {self.http_port}")
        elif self.http_port and self.http_port in (self.port, self.metrics_port, self.health_port):
            out.append(
                "CPSETTLE_HTTP_PORT must differ from CPSETTLE_PORT, "
                "CPSETTLE_METRICS_PORT and CPSETTLE_HEALTH_PORT"
            )
        for origin in self.cors_origins:
            if origin != "*" and not origin.startswith(("http://", "https://")):
                out.append(
                    f"CPSETTLE_HTTP_CORS_ORIGINS: {origin!r} is not an origin "
                    "(scheme://host[:port], or *)"
                )
        if self.max_connection_age_seconds < 0 or self.max_connection_age_grace_seconds < 0:
            out.append(
                "CPSETTLE_MAX_CONNECTION_AGE_SECONDS and "
                "CPSETTLE_MAX_CONNECTION_AGE_GRACE_SECONDS must be 0 or more"
            )
        if self.keepalive_time_seconds < 1 or self.keepalive_timeout_seconds < 1:
            out.append(
                "CPSETTLE_KEEPALIVE_TIME_SECONDS and CPSETTLE_KEEPALIVE_TIMEOUT_SECONDS "
                "must be at least 1"
            )
        if self.max_concurrent_rpcs < 1:
            out.append("CPSETTLE_MAX_CONCURRENT_RPCS must be at least 1")
        if self.max_concurrent_streams < 1:
            out.append("CPSETTLE_MAX_CONCURRENT_STREAMS must be at least 1")
        if self.stream_workers < -1:
            out.append("CPSETTLE_STREAM_WORKERS must be -1 (none), 0 (one per core) or more")
        if self.engine_workers < -1:
            out.append("CPSETTLE_ENGINE_WORKERS must be -1 (none), 0 (one per core) or more")
        if not 0 <= self.engine_worker_nice <= 19:
            out.append("CPSETTLE_ENGINE_WORKER_NICE must be 0-19")
        if not 0 <= self.stream_worker_nice <= 19:
            out.append("CPSETTLE_STREAM_WORKER_NICE must be 0-19")
        if self.stream_idle_seconds <= 0:
            out.append("CPSETTLE_STREAM_IDLE_SECONDS must be more than 0")
        if self.audit_log_queue_lines < 16:
            out.append("CPSETTLE_AUDIT_LOG_QUEUE_LINES must be at least 16")
        if self.audit_log_stall_seconds <= 0:
            out.append("CPSETTLE_AUDIT_LOG_STALL_SECONDS must be more than 0")
        if self.max_message_bytes < 1024:
            out.append("CPSETTLE_MAX_MESSAGE_BYTES must be at least 1024")
        if self.grace_seconds < 0:
            out.append("CPSETTLE_GRACE_SECONDS must be 0 or more")
        if self.default_deadline_seconds <= 0:
            out.append("CPSETTLE_DEFAULT_DEADLINE_SECONDS must be more than 0")
        if self.audit_checkpoint_seconds <= 0:
            out.append("CPSETTLE_AUDIT_CHECKPOINT_SECONDS must be more than 0")
        if self.audit_checkpoint_events < 1:
            out.append("CPSETTLE_AUDIT_CHECKPOINT_EVENTS must be at least 1")
        if not self.audit_log_origin or any(c.isspace() or c == "+" for c in self.audit_log_origin):
            out.append("CPSETTLE_AUDIT_LOG_ORIGIN must be non-empty, without spaces or '+'")
        if self.witness_timeout_seconds <= 0:
            out.append("CPSETTLE_WITNESS_TIMEOUT_SECONDS must be more than 0")
        for url in self.witness_urls:
            if not url.startswith(("http://", "https://")):
                out.append(f"CPSETTLE_WITNESS_URL: {url!r} is not an http(s) URL")
        if self.log_format not in ("auto", "json", "console"):
            out.append("CPSETTLE_LOG_FORMAT must be auto, json or console")
        if self.log_level.lower() not in ("debug", "info", "warning", "error", "critical"):
            out.append("CPSETTLE_LOG_LEVEL must be debug, info, warning, error or critical")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            out.append("CPSETTLE_TLS_CERT_FILE and CPSETTLE_TLS_KEY_FILE go together")
        if self.tls_client_ca_file and not self.tls_cert_file:
            out.append("CPSETTLE_TLS_CLIENT_CA_FILE needs CPSETTLE_TLS_CERT_FILE")
        if self.require_caller_auth and not (self.tls_client_ca_file or self.auth_tokens_file):
            out.append(
                "CPSETTLE_REQUIRE_CALLER_AUTH needs CPSETTLE_TLS_CLIENT_CA_FILE (mutual "
                "TLS) or CPSETTLE_AUTH_TOKENS_FILE (bearer tokens)"
            )
        if self.channelz and not self.health_port:
            out.append(
                "CPSETTLE_CHANNELZ needs CPSETTLE_HEALTH_PORT (channelz is served on "
                "that admin port only)"
            )
        return out

    @property
    def witness_urls(self) -> list[str]:
        return [u.strip().rstrip("/") for u in self.witness_url.split(",") if u.strip()]

    @property
    def cors_origins(self) -> tuple[str, ...]:
        """The allowed origins of ``http_cors_origins``, each without a trailing slash."""
        return tuple(o.strip().rstrip("/") for o in self.http_cors_origins.split(",") if o.strip())

    @property
    def address(self) -> str:
        if self.unix_socket:
            return f"unix://{self.unix_socket}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"
