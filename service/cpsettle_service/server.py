"""``build_server()``, ``serve()`` and graceful shutdown.

On SIGTERM: health turns NOT_SERVING at once, calls already accepted finish within the grace
period (SettleStreams end at their next batch boundary, every batch answered delivered), then the
process exits 0.

Readiness also turns NOT_SERVING while the audit log cannot take events (its sink blocked or
failing: settlements fail closed meanwhile), and back to SERVING when the sink takes them again.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import Gauge

from .api import stream_worker
from .api.connect.app import connect_app, intercepted_handlers
from .api.connect.listener import HttpListener, start_http
from .api.interceptors import ServiceInterceptor
from .api.offload import Offload
from .api.pool import StreamPool, default_size
from .api.profiles import ProfileResolver
from .api.servicer import SERVICE_NAME, SettlementServicer, generic_handler
from .config import Settings
from .domain.errors import InvalidInput
from .domain.profile.registry import ProfileRegistry
from .errors import ConfigError, KeyProblem
from .observability import metrics, tracing
from .observability.exposition import start_metrics_server
from .observability.logging import audit_log, configure, get_logger
from .profile_files import builtin_registry, with_directory
from .proof.digests import profile_digest
from .proof.feed import FeedState, WitnessFeed, witness_label
from .proof.integrity import PACKAGE_VERSION, check_installation
from .proof.keys import key_file_exposed, load_signing_key, published_keys
from .proof.log import Log
from .proof.seal import Sealer
from .security import CertificateFiles, CertificateProblem, TokenChecker, server_credentials

VERSION = PACKAGE_VERSION  # one version: the installed package's (pyproject.toml)
LIVENESS = "liveness"
HEALTH_SERVICE = "grpc.health.v1.Health"
REFLECTION_SERVICE = "grpc.reflection.v1alpha.ServerReflection"
TLS_REFRESH_SECONDS = 10.0  # how often the certificate files are looked at without a handshake


@dataclass
class Running:
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    port: int
    settings: Settings
    # The plaintext health-only listener (CPSETTLE_HEALTH_PORT), when configured.
    health_server: grpc.aio.Server | None = None
    health_port: int = 0
    servicer: SettlementServicer | None = None
    draining: bool = False
    # SettleStream's worker processes (None: streams settle in this process)
    pool: StreamPool | None = None
    # The TLS files, read again when they change (None: plaintext)
    certificates: CertificateFiles | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # readiness flips in flight, held until done (the loop keeps only a weak reference)
    flips: set[asyncio.Task[None]] = field(default_factory=set)
    # the worker processes of unary calls whose engine work may run long (None: none)
    offload: Offload | None = None
    # The HTTP/JSON port (CPSETTLE_HTTP_PORT, api/connect), when configured.
    http: HttpListener | None = None

    @property
    def http_port(self) -> int:
        return self.http.port if self.http is not None else 0

    def watch_audit_log(self) -> None:
        """Readiness follows the audit log: NOT_SERVING while it cannot take events."""
        log_ = audit_log()
        if log_ is None:
            return
        metrics.watch_audit_sink(log_.sink.state)
        loop = asyncio.get_running_loop()
        log = get_logger("cpsettle.server")

        def changed(healthy: bool) -> None:  # from any thread
            def apply() -> None:
                if self.draining:
                    return
                log.warning("audit_log.healthy" if healthy else "audit_log.stuck")
                flip = loop.create_task(self.set_serving(healthy))
                self.flips.add(flip)
                flip.add_done_callback(self.flips.discard)

            loop.call_soon_threadsafe(apply)

        log_.sink.watch(changed)

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", SERVICE_NAME):
            await self.health.set(name, status)
        metrics.READY.set(1 if serving else 0)

    async def refresh_certificates(self) -> None:
        """Look at the TLS files every few seconds, so a renewal shows in the expiry metric
        (and is ready for the next handshake) even while no new connection comes."""
        assert self.certificates is not None
        while True:
            await asyncio.sleep(TLS_REFRESH_SECONDS)
            self.certificates.refresh()
            if self.http is not None:  # the HTTP port's handshakes take the new files too
                self.http.reload_tls()

    async def drain(self) -> None:
        """Stop taking calls, let accepted ones finish within the grace period (streams end at
        their next batch boundary)."""
        self.draining = True
        await self.set_serving(False)
        if self.servicer is not None:
            self.servicer.draining.set()
        await self.stop(self.settings.grace_seconds)

    async def stop(self, grace: float | None) -> None:
        """Stop the server (calls in flight get ``grace`` seconds), then the health port and
        the stream workers: no worker process outlives the server. The HTTP port drains beside
        the gRPC one."""
        for task in self.tasks:
            task.cancel()
        if self.http is not None:
            await asyncio.gather(self.server.stop(grace), self.http.stop(grace))
        else:
            await self.server.stop(grace)
        # The health port outlives the drain: liveness keeps answering while calls finish.
        if self.health_server is not None:
            await self.health_server.stop(0)
        if self.pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.pool.close)
        if self.offload is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.offload.close)


def service_methods() -> list[tuple[str, str]]:
    """(method, grpc_type) of every RPC of the settlement service, as the metrics name them."""
    from cpsettle.v1 import settlement_pb2

    service = settlement_pb2.DESCRIPTOR.services_by_name["SettlementService"]
    return [
        (m.name, "bidi_stream" if m.client_streaming or m.server_streaming else "unary")
        for m in service.methods
    ]


def load_registry(settings: Settings) -> ProfileRegistry:
    registry = builtin_registry()
    if settings.profile_dir:
        registry = with_directory(registry, settings.profile_dir)
    return registry


def make_sealer(settings: Settings) -> Sealer:
    """Digests and signatures for every settlement, with the audit log events."""
    key = load_signing_key(settings)
    log = metrics.CountedAuditLog(get_logger("cpsettle.audit"))
    return Sealer(
        key,
        log=log,
        include_request=settings.audit_include_request,
        keys=published_keys(settings, key),
    )


async def build_server(
    settings: Settings, registry: ProfileRegistry | None = None, sealer: Sealer | None = None
) -> Running:
    """Create, bind and start the server (health SERVING once it listens)."""
    registry = registry if registry is not None else load_registry(settings)
    sealer = sealer if sealer is not None else make_sealer(settings)
    options = [
        # grpc reads up to twice the limit, so that the handlers see (and the interceptor
        # counts and logs) requests past CPSETTLE_MAX_MESSAGE_BYTES and refuse them; beyond
        # twice, grpc refuses a request unseen, as before (at 4x, 32 requests of 4 MiB in
        # flight left the process 20 MiB larger: tests/hardening/test_malformed.py).
        ("grpc.max_receive_message_length", 2 * settings.max_message_bytes),
        ("grpc.max_send_message_length", 4 * settings.max_message_bytes),
        ("grpc.so_reuseport", 0),
        *connection_options(settings),
    ]
    tokens = (
        TokenChecker.from_file(settings.auth_tokens_file) if settings.auth_tokens_file else None
    )
    interceptor = ServiceInterceptor(
        skip_services=(HEALTH_SERVICE, REFLECTION_SERVICE),
        tokens=tokens,
        deadline_cap=settings.default_deadline_seconds,
        max_in_flight=settings.max_concurrent_rpcs,
        max_streams=settings.max_concurrent_streams,
    )
    server = grpc.aio.server(
        interceptors=[interceptor],
        options=options,
        # a backstop well above the service's own limit (the interceptor's), so that health
        # checks still get through when the settlement service is at capacity
        maximum_concurrent_rpcs=4 * (settings.max_concurrent_rpcs + settings.max_concurrent_streams)
        + 64,
    )
    engine = default_size() if settings.engine_workers == 0 else settings.engine_workers
    offload = (
        Offload(
            engine,
            stream_worker.__name__,
            (settings.profile_dir, sealer.include_request),
            settings.engine_worker_nice,
        )
        if engine > 0
        else None
    )
    servicer = SettlementServicer(
        ProfileResolver(registry),
        sealer,
        log_timeout=settings.audit_log_stall_seconds,
        live=interceptor.live,
        offload=offload,
    )
    workers = default_size() if settings.stream_workers == 0 else settings.stream_workers
    pool = (
        StreamPool(
            workers,
            stream_worker.__name__,
            (settings.profile_dir, sealer.include_request),
            settings.stream_worker_nice,
        )
        if workers > 0
        else None
    )
    handler = generic_handler(
        servicer,
        max_result_bytes=4 * settings.max_message_bytes,
        max_request_bytes=settings.max_message_bytes,
        stream_idle_seconds=settings.stream_idle_seconds,
        pool=pool,
    )
    server.add_generic_rpc_handlers((handler,))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if settings.reflection:
        from grpc_reflection.v1alpha import reflection

        from cpsettle.v1 import settlement_pb2

        names = (
            settlement_pb2.DESCRIPTOR.services_by_name["SettlementService"].full_name,
            HEALTH_SERVICE,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, server)
    certificates = None
    if settings.tls_cert_file:
        log = get_logger("cpsettle.server")
        certificates = CertificateFiles.from_settings(
            settings, lambda result, detail: log.warning(f"tls.{result}", detail=detail)
        )
    credentials = server_credentials(settings, certificates)
    if credentials is not None:
        port = server.add_secure_port(settings.address, credentials)
    else:
        port = server.add_insecure_port(settings.address)
    if not settings.unix_socket and port == 0:
        raise RuntimeError(f"could not bind {settings.address}")
    await server.start()
    running = Running(
        server,
        health_servicer,
        port,
        settings,
        servicer=servicer,
        pool=pool,
        certificates=certificates,
        offload=offload,
    )
    if certificates is not None:
        running.tasks.append(asyncio.create_task(running.refresh_certificates()))
    if settings.http_port:
        running.http = await start_connect(settings, interceptor, handler)
    if settings.health_port:
        running.health_server, running.health_port = await start_health_server(
            settings, health_servicer
        )
    await running.set_serving(True)
    running.watch_audit_log()
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    return running


def connection_options(settings: Settings) -> list[tuple[str, int]]:
    """The gRPC port's connection age and keepalive (README, "Rebalancing and retries")."""
    options = [
        ("grpc.keepalive_time_ms", int(settings.keepalive_time_seconds * 1000)),
        ("grpc.keepalive_timeout_ms", int(settings.keepalive_timeout_seconds * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        # clients may ping an idle connection every 10 s (the client's default keepalive is
        # off; one that turns it on is not sent away for "too many pings")
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ]
    if settings.max_connection_age_seconds > 0:
        options += [
            ("grpc.max_connection_age_ms", int(settings.max_connection_age_seconds * 1000)),
            (
                "grpc.max_connection_age_grace_ms",
                int(settings.max_connection_age_grace_seconds * 1000),
            ),
        ]
    return options


async def start_connect(
    settings: Settings, interceptor: ServiceInterceptor, handler: grpc.GenericRpcHandler
) -> HttpListener:
    """The HTTP/JSON port: Connect over the very handlers the gRPC server runs (the
    interceptor's wrappers), so both ports share the servicer, the limits and the error table."""
    handlers = await intercepted_handlers(interceptor, handler)
    app = connect_app(
        handlers, max_message_bytes=settings.max_message_bytes, cors_origins=settings.cors_origins
    )
    return await start_http(app, settings)


async def start_health_server(
    settings: Settings, health_servicer: health.aio.HealthServicer
) -> tuple[grpc.aio.Server, int]:
    """A plaintext listener that serves only ``grpc.health.v1`` (the same servicer, so the same
    statuses): the kubelet's native gRPC probes cannot speak TLS, the main port may. Any other
    method on it is UNIMPLEMENTED; settlements never travel in plaintext. With
    ``CPSETTLE_CHANNELZ`` it is also the admin port of grpc's channelz service (the process's
    channels, servers and sockets, the main port's included), reached by port-forward only."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)], maximum_concurrent_rpcs=64)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if settings.channelz:
        from grpc_channelz.v1 import channelz

        channelz.add_channelz_servicer(server)
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    port = server.add_insecure_port(f"{host}:{settings.health_port}")
    if port == 0:
        raise RuntimeError(f"could not bind the health port {host}:{settings.health_port}")
    await server.start()
    return server, port


async def serve(settings: Settings) -> int:
    log = get_logger("cpsettle.server")
    report = check_installation()
    if not report.intact or (report.development and settings.require_manifest):
        problems = list(report.problems) or ["no build manifest (development install)"]
        log.error("integrity.failed", problems=problems, manifest_digest=report.manifest_digest)
        return 3
    try:
        registry = load_registry(settings)
    except InvalidInput as e:
        log.error("profiles.invalid", problems=[str(v) for v in e.violations])
        return 2
    try:
        sealer = make_sealer(settings)
    except (KeyProblem, OSError) as e:
        log.error("signing.key_unusable", reason=str(e))
        return 2
    exposed = key_file_exposed(settings)
    if exposed and sealer.key is not None:
        log.warning("signing.key_exposed", message="THE SIGNING KEY FILE IS EXPOSED: " + exposed)
    if sealer.key is None:
        log.warning(
            "signing.disabled",
            message="NO SIGNING KEY: settlements and audit-log checkpoints are unsigned. "
            "Development only; set CPSETTLE_SIGNING_KEY_FILE (and "
            "CPSETTLE_REQUIRE_SIGNING_KEY=true in production).",
        )
    audit = audit_log()
    feeds: list[WitnessFeed] = []
    if audit is not None:
        audit.set_signer(sealer.key)
        feeds = start_feeds(settings, audit)
        # The run's first line: its log's checkpoint of size 0, which registers the log with
        # the witness before anything else is written (a run cannot be withheld).
        audit.checkpoint("start")
    if settings.otel_endpoint:
        try:
            tracing.configure(settings.otel_endpoint, service_version=VERSION)
        except ImportError as e:
            log.error("tracing.unavailable", reason=f"{e}: install cpsettle[otel]")
            return 2
    if settings.metrics_port:
        await start_metrics_server(settings.host, settings.metrics_port, metrics.REGISTRY)
    metrics.BUILD_INFO.info(
        {
            "version": VERSION,
            "engine_version": sealer.engine_version,
            "engine_digest": sealer.engine_digest,
        }
    )
    metrics.SIGNING_ENABLED.set(1 if sealer.key is not None else 0)
    metrics.MAX_CONCURRENT_RPCS.set(settings.max_concurrent_rpcs)
    metrics.prime(SERVICE_NAME, service_methods())
    try:
        running = await build_server(settings, registry, sealer)
    except CertificateProblem as e:
        log.error("tls.unusable", reason=str(e))
        return 2
    if running.offload is not None:  # the fork server and a first worker, in the background
        warm = asyncio.get_running_loop().create_task(running.offload.workers.prestart())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "service.started",
        version=VERSION,
        engine_version=sealer.engine_version,
        engine_digest=sealer.engine_digest,
        manifest_digest=report.manifest_digest,
        files_checked=report.files_checked,
        address=settings.address,
        port=running.port,
        http_port=running.http_port or None,
        cors_origins=list(settings.cors_origins) or None,
        health_port=running.health_port or None,
        metrics_port=settings.metrics_port,
        signing_key_id=sealer.key.key_id if sealer.key else None,
        audit_log=audit.origin if audit is not None else None,
        witnesses=settings.witness_urls or None,
        tls=bool(settings.tls_cert_file),
        otel_endpoint=settings.otel_endpoint or None,
        mutual_tls=bool(settings.tls_client_ca_file),
        caller_tokens=bool(settings.auth_tokens_file),
        tls_expires=running.certificates.not_after if running.certificates else None,
        channelz=settings.channelz,
        profiles=[
            {
                "name": e.profile.name,
                "version": e.profile.version,
                "source": e.source,
                "digest": profile_digest(e.profile),
            }
            for e in registry.entries()
        ],
    )
    while True:  # the audit log's checkpoint every interval it moved, until SIGTERM
        try:
            await asyncio.wait_for(stop.wait(), settings.audit_checkpoint_seconds)
            break
        except TimeoutError:
            if audit is not None:
                audit.checkpoint("interval")
    if running.offload is not None:
        warm.cancel()
    log.info("service.draining", grace_seconds=settings.grace_seconds)
    await running.drain()
    tracing.shutdown()  # the spans still batched go out before the process ends
    log.info("service.stopped")
    if audit is not None:
        audit.checkpoint("shutdown")
        loop = asyncio.get_running_loop()
        for feed in feeds:  # the last checkpoint to the witness, within the grace period
            if not await loop.run_in_executor(None, feed.close, settings.grace_seconds):
                log.warning(
                    "witness.not_cosigned", witness=feed.url, pending_lines=feed.pending_lines
                )
    return 0


def start_feeds(settings: Settings, audit: Log) -> list[WitnessFeed]:
    """One witness feed per ``CPSETTLE_WITNESS_URL``, its state in the metrics (labelled by
    witness) and, on each change, in a log line (``witness.unreachable``,
    ``witness.reachable``)."""
    log = get_logger("cpsettle.witness")
    feeds = []
    for url in settings.witness_urls:
        was_up = [True]
        up, cosigned = (
            m.labels(witness=witness_label(url))
            for m in (metrics.WITNESS_UP, metrics.WITNESS_LAST_COSIGNED)
        )
        up.set(0)

        def changed(
            state: FeedState,
            url: str = url,
            was_up: list[bool] = was_up,
            up: Gauge = up,
            cosigned: Gauge = cosigned,
        ) -> None:
            # from the feed's thread
            up.set(1 if state.up else 0)
            if state.cosigned_at:
                cosigned.set(state.cosigned_at)
            if not state.up:
                log.warning(
                    "witness.unreachable",
                    witness=url,
                    reason=state.why,
                    pending_lines=state.pending_lines,
                )
            elif not was_up[0]:
                log.info("witness.reachable", witness=url)
            was_up[0] = state.up

        feed = WitnessFeed(url, settings.witness_timeout_seconds, changed)

        def pending(feed: WitnessFeed = feed) -> float:  # read at each scrape
            return feed.pending_lines

        metrics.WITNESS_PENDING_LINES.labels(witness=witness_label(url)).set_function(pending)
        audit.add_feed(feed)
        feeds.append(feed)
    return feeds


def main() -> None:
    try:
        settings = Settings.from_env()
    except ConfigError as e:
        print(f"cpsettle-server: {e}", file=sys.stderr)
        sys.exit(2)
    configure(
        settings.log_level,
        settings.log_format,
        checkpoint_every=settings.audit_checkpoint_events,
        background=True,
        queue_lines=settings.audit_log_queue_lines,
        stall_seconds=settings.audit_log_stall_seconds,
        origin_prefix=settings.audit_log_origin,
    )
    code = asyncio.run(serve(settings))
    audit = audit_log()
    if audit is not None:  # the writer thread's last lines, as far as stdout takes them
        audit.sink.flush(settings.grace_seconds)
    sys.exit(code)


if __name__ == "__main__":
    main()
