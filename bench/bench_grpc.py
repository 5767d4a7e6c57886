"""Benchmark: Settle over loopback gRPC against a trivial RPC of the same message sizes.

    python bench/bench_grpc.py [--table examples/tables/western.json] [--calls 4000]
                               [--rounds 5] [--in-flight 8] [--profile-calls 2000]

Starts ``bench/bench_server.py`` (the real server from ``build_server(settings)``, plus the
bench-only ``/bench.Echo/Echo`` whose request is the same SettleRequest bytes and whose response
is the pre-serialized SettleResponse of the same table) as a subprocess on 127.0.0.1, and drives
it from this process (the client) over one grpc.aio channel with ``--in-flight`` calls
outstanding (closed loop), every call with a 10 s deadline. Both methods use identity
serializers on the client, so the client does the same work for each; the difference is the
server's: decoding, validation, settlement, encoding.

Rounds alternate Echo and Settle. Prints, per method: throughput (best and median round),
latency p50 / p99 / max over all rounds, the server process's CPU time per call (utime+stime from
/proc/PID/stat around each round, divided by calls) and the client's; then the ratio
Settle/Echo throughput (target >= 80 %) and Settle p99 (target < 10 ms).

``--profile-calls N`` then times the server's handler chain in this process (deserializer,
ServiceInterceptor wrapper, servicer, serializer; no network) for N calls, and again under
cProfile, printing the top entries. Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cpsettle_service.profile_files import builtin_registry

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _support import (
    ECHO_METHOD,
    ROOT,
    SETTLE_METHOD,
    ServerProcess,
    cpu_seconds,
    machine_line,
    percentile,
    request_bytes,
    start_server,
)

RATIO_TARGET = 0.80
P99_TARGET_MS = 10.0


@dataclass
class Method:
    name: str
    path: str
    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)  # seconds per call, per round
    client_cpu: list[float] = field(default_factory=list)
    errors: int = 0


async def closed_loop(
    call: object, request: bytes, calls: int, in_flight: int, latencies: list[float]
) -> int:
    """``calls`` calls, ``in_flight`` at a time; returns the number of failed calls."""
    import grpc

    per_worker = [
        calls // in_flight + (1 if i < calls % in_flight else 0) for i in range(in_flight)
    ]
    errors = 0

    async def worker(n: int) -> None:
        nonlocal errors
        for _ in range(n):
            t = time.perf_counter()
            try:
                await call(request, timeout=10)  # type: ignore[operator]
            except grpc.RpcError:
                errors += 1
                continue
            latencies.append(time.perf_counter() - t)

    await asyncio.gather(*(worker(n) for n in per_worker))
    return errors


async def measure(server: ServerProcess, request: bytes, args: argparse.Namespace) -> list[Method]:
    import grpc

    from cpsettle.v1 import settlement_pb2 as pb

    methods = [Method("Echo", ECHO_METHOD), Method("Settle", SETTLE_METHOD)]
    async with grpc.aio.insecure_channel(server.address) as channel:
        calls = {m.name: channel.unary_unary(m.path) for m in methods}  # identity serializers
        settle_reply = await calls["Settle"](request, timeout=10)
        echo_reply = await calls["Echo"](request, timeout=10)
        players = len(pb.SettleResponse.FromString(settle_reply).settlement.players)
        print(
            f"request {len(request)} B; Settle response {len(settle_reply)} B "
            f"({players} players); Echo response {len(echo_reply)} B"
        )
        if len(settle_reply) != len(echo_reply):
            print("WARNING: Echo and Settle responses differ in size")
        for m in methods:  # warm-up, not measured
            await closed_loop(calls[m.name], request, args.warmup, args.in_flight, [])
        for _ in range(args.rounds):
            for m in methods:
                lat: list[float] = []
                cpu0, c0, t0 = cpu_seconds(server.pid), time.process_time(), time.perf_counter()
                m.errors += await closed_loop(
                    calls[m.name], request, args.calls, args.in_flight, lat
                )
                elapsed = time.perf_counter() - t0
                cpu1, c1 = cpu_seconds(server.pid), time.process_time()
                m.rates.append(len(lat) / elapsed)
                m.latencies.extend(lat)
                m.server_cpu.append((cpu1 - cpu0) / args.calls)
                m.client_cpu.append((c1 - c0) / args.calls)
    return methods


def report(methods: list[Method], args: argparse.Namespace) -> None:
    print(
        f"\n{args.rounds} rounds x {args.calls:,} calls per method, {args.in_flight} in flight, "
        f"alternating; one grpc.aio channel over 127.0.0.1\n"
    )
    print(
        f"{'method':<8}{'best/s':>9}{'median/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        f"{'server CPU/call':>17}{'client CPU/call':>17}{'errors':>8}"
    )
    for m in methods:
        lat = sorted(m.latencies)
        print(
            f"{m.name:<8}{max(m.rates):>9,.0f}{statistics.median(m.rates):>10,.0f}"
            f"{percentile(lat, 50) * 1e3:>9.2f}{percentile(lat, 99) * 1e3:>9.2f}"
            f"{lat[-1] * 1e3 if lat else float('nan'):>9.2f}"
            f"{statistics.median(m.server_cpu) * 1e3:>14.3f} ms"
            f"{statistics.median(m.client_cpu) * 1e3:>14.3f} ms{m.errors:>8}"
        )
    echo, settle = methods
    best = max(settle.rates) / max(echo.rates)
    med = statistics.median(settle.rates) / statistics.median(echo.rates)
    p99 = percentile(sorted(settle.latencies), 99) * 1e3
    extra = statistics.median(settle.server_cpu) - statistics.median(echo.server_cpu)
    print(
        f"\nSettle/Echo throughput: {best:.0%} (best rounds), {med:.0%} (medians); "
        f"target >= {RATIO_TARGET:.0%}: {'PASS' if med >= RATIO_TARGET else 'FAIL'}"
    )
    print(
        f"Settle p99: {p99:.2f} ms; target < {P99_TARGET_MS:.0f} ms: "
        f"{'PASS' if p99 < P99_TARGET_MS else 'FAIL'}"
    )
    print(
        f"server CPU per call: Settle {statistics.median(settle.server_cpu) * 1e3:.3f} ms, "
        f"Echo {statistics.median(echo.server_cpu) * 1e3:.3f} ms; "
        f"Settle's own work {extra * 1e3:.3f} ms per call"
    )


# --------------------------------------------------------------------------- in-process profile


class _Context:
    """The little of grpc.aio.ServicerContext the interceptor and servicer touch."""

    def time_remaining(self) -> float:
        return 9.9

    def invocation_metadata(self) -> tuple[()]:
        return ()

    async def abort(self, code: object, details: str = "", trailing_metadata: object = ()) -> None:
        raise RuntimeError(f"aborted: {code} {details}")

    def code(self) -> None:
        return None


def profile_handler(request: bytes, calls: int, top: int) -> None:
    import cProfile
    import io
    import pstats

    import grpc

    from cpsettle_service import server as server_module
    from cpsettle_service.api.interceptors import ServiceInterceptor
    from cpsettle_service.api.servicer import ProfileResolver, SettlementServicer, generic_handler
    from cpsettle_service.config import Settings
    from cpsettle_service.observability.logging import configure
    from cpsettle_service.server import HEALTH_SERVICE, REFLECTION_SERVICE

    sink = open("/dev/null", "w")  # noqa: SIM115 — the server's log stream for the whole run
    configure("info", "json", stream=sink)  # the server's log lines per call, to nowhere
    settings = Settings()
    # The servicer as build_server() makes it (with the audit sealer when the build has one).
    make_sealer = getattr(server_module, "make_sealer", None)
    sealer = make_sealer(settings) if make_sealer is not None else None
    servicer = SettlementServicer(ProfileResolver(builtin_registry()), sealer)
    generic = generic_handler(servicer)
    interceptor = ServiceInterceptor(skip_services=(HEALTH_SERVICE, REFLECTION_SERVICE))

    class Details(grpc.HandlerCallDetails):
        method = SETTLE_METHOD
        invocation_metadata = ()

    async def continuation(details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        return generic.service(details)

    async def run(n: int) -> float:
        handler = await interceptor.intercept_service(continuation, Details())
        deserialize, behavior = handler.request_deserializer, handler.unary_unary
        serialize, ctx = handler.response_serializer, _Context()
        t = time.perf_counter()
        for _ in range(n):
            serialize(await behavior(deserialize(request), ctx))
        return time.perf_counter() - t

    class EchoDetails(grpc.HandlerCallDetails):
        method = "/bench.Echo/Echo"
        invocation_metadata = ()

    reply = b"\0" * 6000

    async def echo(request: bytes, context: object) -> bytes:
        return reply

    async def echo_continuation(details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(echo)

    async def run_echo(n: int) -> float:
        handler = await interceptor.intercept_service(echo_continuation, EchoDetails())
        behavior, ctx = handler.unary_unary, _Context()
        t = time.perf_counter()
        for _ in range(n):
            await behavior(request, ctx)
        return time.perf_counter() - t

    loop = asyncio.new_event_loop()
    loop.run_until_complete(run(200))  # warm-up: profile cache, metric children
    loop.run_until_complete(run_echo(200))
    plain = min(loop.run_until_complete(run(calls)) for _ in range(3))
    bare = min(loop.run_until_complete(run_echo(calls)) for _ in range(3))
    print(
        f"\nin-process handler chain (deserialize, interceptor, settle, serialize; no network): "
        f"{plain / calls * 1e3:.3f} ms per call (best of 3 x {calls:,})"
    )
    print(
        f"in-process interceptor around a trivial handler (what Echo pays besides gRPC): "
        f"{bare / calls * 1e3:.3f} ms per call"
    )
    profiler = cProfile.Profile()
    profiler.enable()
    profiled = loop.run_until_complete(run(calls))
    profiler.disable()
    loop.close()
    sink.close()
    print(f"under cProfile: {profiled / calls * 1e3:.3f} ms per call\n")
    for key, title in (("tottime", "own time"), ("cumulative", "cumulative time")):
        buf = io.StringIO()
        stats = pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(key)
        stats.print_stats(top)
        lines = buf.getvalue().splitlines()
        start = next((i for i, s in enumerate(lines) if s.lstrip().startswith("ncalls")), 0)
        print(f"top {top} by {title} ({calls:,} calls):")
        print("\n".join(lines[start : start + top + 1]))
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--table",
        default=str(ROOT / "examples/tables/western.json"),
        help="a 4-player SettleRequest in JSON form",
    )
    parser.add_argument("--calls", type=int, default=4000, help="calls per round per method")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument(
        "--profile-calls",
        type=int,
        default=0,
        help="after the gRPC runs, profile the handler in-process for N calls",
    )
    parser.add_argument("--profile-top", type=int, default=25)
    parser.add_argument("--server-log", default="", help="server stdout to this file")
    args = parser.parse_args()

    table = Path(args.table)
    request = request_bytes(table)
    print(machine_line())
    print(f"table {table.name}; server: bench/bench_server.py (build_server + /bench.Echo/Echo)")
    server = start_server(
        ["bench/bench_server.py", "--echo-request", str(table)],
        log_path=Path(args.server_log) if args.server_log else None,
    )
    try:
        methods = asyncio.run(measure(server, request, args))
    finally:
        code = server.stop()
    report(methods, args)
    print(f"server exit code after SIGTERM: {code}")
    if args.profile_calls:
        profile_handler(request, args.profile_calls, args.profile_top)


if __name__ == "__main__":
    main()
