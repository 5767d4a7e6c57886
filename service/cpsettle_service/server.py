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
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from .api import stream_worker
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
from .observability.logging import chain, configure, get_logger
from .profile_files import builtin_registry, with_directory
from .proof.digests import profile_digest
from .proof.integrity import PACKAGE_VERSION, check_installation
from .proof.keys import load_signing_key, published_keys
from .proof.seal import Sealer
from .security import TokenChecker, server_credentials

VERSION = PACKAGE_VERSION  # one version: the installed package's (pyproject.toml)
LIVENESS = "liveness"
HEALTH_SERVICE = "grpc.health.v1.Health"
REFLECTION_SERVICE = "grpc.reflection.v1alpha.ServerReflection"


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
    # the worker processes of unary calls whose engine work may run long (None: none)
    offload: Offload | None = None

    def watch_audit_log(self) -> None:
        """Readiness follows the audit log: NOT_SERVING while it cannot take events."""
        audit_chain = chain()
        if audit_chain is None:
            return
        loop = asyncio.get_running_loop()
        log = get_logger("cpsettle.server")

        def changed(healthy: bool) -> None:  # from any thread
            def apply() -> None:
                if self.draining:
                    return
                log.warning("audit_log.healthy" if healthy else "audit_log.stuck")
                loop.create_task(self.set_serving(healthy))

            loop.call_soon_threadsafe(apply)

        audit_chain.sink.watch(changed)

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", SERVICE_NAME):
            await self.health.set(name, status)

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
        the stream workers: no worker process outlives the server."""
        await self.server.stop(grace)
        # The health port outlives the drain: liveness keeps answering while calls finish.
        if self.health_server is not None:
            await self.health_server.stop(0)
        if self.pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.pool.close)
        if self.offload is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.offload.close)


def load_registry(settings: Settings) -> ProfileRegistry:
    registry = builtin_registry()
    if settings.profile_dir:
        registry = with_directory(registry, settings.profile_dir)
    return registry


def make_sealer(settings: Settings) -> Sealer:
    """Digests and signatures for every settlement, with the audit log events."""
    key = load_signing_key(settings)
    log = metrics.CountedAuditLog(get_logger("cpsettle.audit"))
    return Sealer(key, log=log, include_request=settings.audit_include_request,
                  keys=published_keys(settings, key))


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
        maximum_concurrent_rpcs=4 * (settings.max_concurrent_rpcs
                                     + settings.max_concurrent_streams) + 64,
    )
    engine = default_size() if settings.engine_workers == 0 else settings.engine_workers
    offload = (Offload(engine, stream_worker.__name__,
                       (settings.profile_dir, sealer.include_request), settings.engine_worker_nice)
               if engine > 0 else None)
    servicer = SettlementServicer(ProfileResolver(registry), sealer,
                                  log_timeout=settings.audit_log_stall_seconds,
                                  live=interceptor.live, offload=offload)
    workers = default_size() if settings.stream_workers == 0 else settings.stream_workers
    pool = (StreamPool(workers, stream_worker.__name__,
                       (settings.profile_dir, sealer.include_request), settings.stream_worker_nice)
            if workers > 0 else None)
    server.add_generic_rpc_handlers(
        (generic_handler(servicer, max_result_bytes=4 * settings.max_message_bytes,
                         max_request_bytes=settings.max_message_bytes,
                         stream_idle_seconds=settings.stream_idle_seconds, pool=pool),)
    )
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
    credentials = server_credentials(settings)
    if credentials is not None:
        port = server.add_secure_port(settings.address, credentials)
    else:
        port = server.add_insecure_port(settings.address)
    if not settings.unix_socket and port == 0:
        raise RuntimeError(f"could not bind {settings.address}")
    await server.start()
    running = Running(server, health_servicer, port, settings, servicer=servicer, pool=pool,
                      offload=offload)
    if settings.health_port:
        running.health_server, running.health_port = await start_health_server(
            settings, health_servicer
        )
    await running.set_serving(True)
    running.watch_audit_log()
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    return running


async def start_health_server(
    settings: Settings, health_servicer: health.aio.HealthServicer
) -> tuple[grpc.aio.Server, int]:
    """A plaintext listener that serves only ``grpc.health.v1`` (the same servicer, so the same
    statuses): the kubelet's native gRPC probes cannot speak TLS, the main port may. Any other
    method on it is UNIMPLEMENTED; settlements never travel in plaintext."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)], maximum_concurrent_rpcs=64)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
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
    if sealer.key is None:
        log.warning(
            "signing.disabled",
            message="NO SIGNING KEY: settlements and audit-log heads are unsigned. Development "
            "only; set CPSETTLE_SIGNING_KEY_FILE (and CPSETTLE_REQUIRE_SIGNING_KEY=true in "
            "production).",
        )
    audit_chain = chain()
    if audit_chain is not None:
        audit_chain.signer = sealer.key
    if settings.otel_endpoint:
        try:
            tracing.configure(settings.otel_endpoint, service_version=VERSION)
        except ImportError as e:
            log.error("tracing.unavailable", reason=f"{e}: install cpsettle[otel]")
            return 2
    if settings.metrics_port:
        await start_metrics_server(settings.host, settings.metrics_port, metrics.REGISTRY)
    metrics.BUILD_INFO.info({"version": VERSION, "engine_version": sealer.engine_version,
                             "engine_digest": sealer.engine_digest})
    metrics.SIGNING_ENABLED.set(1 if sealer.key is not None else 0)
    metrics.MAX_CONCURRENT_RPCS.set(settings.max_concurrent_rpcs)
    running = await build_server(settings, registry, sealer)
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
        health_port=running.health_port or None,
        metrics_port=settings.metrics_port,
        signing_key_id=sealer.key.key_id if sealer.key else None,
        audit_chain=audit_chain.chain_id if audit_chain is not None else None,
        tls=bool(settings.tls_cert_file),
        otel_endpoint=settings.otel_endpoint or None,
        mutual_tls=bool(settings.tls_client_ca_file),
        profiles=[
            {"name": e.profile.name, "version": e.profile.version, "source": e.source,
             "digest": profile_digest(e.profile)}
            for e in registry.entries()
        ],
    )
    while True:  # the audit chain's head signed every interval it moved, until SIGTERM
        try:
            await asyncio.wait_for(stop.wait(), settings.audit_head_seconds)
            break
        except asyncio.TimeoutError:
            if audit_chain is not None:
                audit_chain.sign_head("interval")
    if running.offload is not None:
        warm.cancel()
    log.info("service.draining", grace_seconds=settings.grace_seconds)
    await running.drain()
    log.info("service.stopped")
    if audit_chain is not None:
        audit_chain.sign_head("shutdown")
    return 0


def main() -> None:
    try:
        settings = Settings.from_env()
    except ConfigError as e:
        print(f"cpsettle-server: {e}", file=sys.stderr)
        sys.exit(2)
    configure(settings.log_level, settings.log_format, head_every=settings.audit_head_events,
              background=True, queue_lines=settings.audit_log_queue_lines,
              stall_seconds=settings.audit_log_stall_seconds)
    code = asyncio.run(serve(settings))
    audit_chain = chain()
    if audit_chain is not None:  # the writer thread's last lines, as far as stdout takes them
        audit_chain.sink.flush(settings.grace_seconds)
    sys.exit(code)


if __name__ == "__main__":
    main()
