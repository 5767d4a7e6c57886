"""Load and soak: the highest steady Settle rate of one server process, then a soak at half of it.

    python bench/bench_load.py                                  # search, then a 600 s soak
    python bench/bench_load.py --soak-seconds 60 --rate 100     # CI: no search, a 60 s soak

Starts one real server (``python -m cpsettle_service.server``, production settings from
CPSETTLE_* with defaults, metrics HTTP off, log to /dev/null unless ``--server-log``) on
127.0.0.1 as a subprocess. This process is the client: one grpc.aio channel, open loop at a
target rate (calls are sent on schedule whatever the replies do; at most ``--max-in-flight``
outstanding, more is counted as shed), each call a random legal 4-player table from a pool
(tests/support/random_tables.py) with a ``--deadline``. Latency is measured from each call's
scheduled send time, so a client or server falling behind shows in it.

Search (skipped with ``--rate``): steps of ``--step-seconds`` from ``--start-rate`` up by
x``--growth`` until a rate fails, then ``--refine`` bisections, then a confirmation step at twice
the length. A step holds when it has no errors, nothing shed and p99 < ``--p99-ms`` (50); a rate
fails when its step fails ``1 + --retries`` times in a row (a shared machine stalls sometimes).

Soak at half the found rate (or ``--rate``): ``--warmup-seconds`` at that rate first, then
``--soak-seconds`` while sampling the server's /proc/PID/status (VmRSS, Threads) and
/proc/PID/fd. It passes when: 0 errors and nothing shed; least-squares RSS slope
< ``--rss-slope-mib-min`` (1 MiB/min); Threads and open fds flat (max - min within
``--thread-tolerance`` / ``--fd-tolerance``); and SIGTERM at the end drains and exits 0.
Prints figures; exits 1 if a soak criterion fails (2 if the server cannot start).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _support import (
    SETTLE_METHOD,
    ServerProcess,
    cpu_seconds,
    machine_line,
    percentile,
    random_requests,
    slope_per_minute,
    start_server,
    status,
)

MIB = 1024 * 1024


@dataclass
class Step:
    rate: float
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    shed: int = 0
    sent: int = 0
    send_seconds: float = 0.0
    server_cpu: float = 0.0

    @property
    def ok(self) -> int:
        return len(self.latencies)

    def p(self, q: float) -> float:
        return percentile(sorted(self.latencies), q) * 1e3

    def holds(self, p99_ms: float) -> bool:
        return not self.errors and not self.shed and self.ok > 0 and self.p(99) < p99_ms

    def line(self, p99_ms: float | None = None) -> str:
        lat = sorted(self.latencies)
        verdict = "" if p99_ms is None else ("  holds" if self.holds(p99_ms) else "  FAILS")
        errs = ",".join(f"{k}:{v}" for k, v in self.errors.items()) or "0"
        achieved = self.ok / self.send_seconds if self.send_seconds else 0.0
        cpu = self.server_cpu / self.seconds
        return (
            f"rate {self.rate:>7.1f}/s  {self.seconds:>4.0f}s  sent {self.sent:>7}  "
            f"ok {self.ok:>7}  errors {errs:<6} shed {self.shed:<5} "
            f"achieved {achieved:>7.1f}/s  p50 {self.p(50):>7.2f}  p99 {self.p(99):>7.2f}  "
            f"max {(lat[-1] * 1e3 if lat else float('nan')):>8.2f} ms  "
            f"server CPU {cpu:>4.0%}{verdict}"
        )


class Driver:
    def __init__(self, server: ServerProcess, pool: list[bytes], args: argparse.Namespace) -> None:
        self.server = server
        self.pool = pool
        self.args = args
        self.next = 0

    async def run(self, channel: object, rate: float, seconds: float) -> Step:
        """Open loop: send at ``rate`` for ``seconds``, then wait for the stragglers."""
        import grpc

        call = channel.unary_unary(SETTLE_METHOD)  # type: ignore[attr-defined]
        step = Step(rate, seconds)
        n = max(1, int(rate * seconds))
        deadline, limit = self.args.deadline, self.args.max_in_flight
        pending: set[asyncio.Task[None]] = set()

        async def one(request: bytes, scheduled: float) -> None:
            try:
                await call(request, timeout=deadline)
            except grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                step.errors[getattr(code, "name", "UNKNOWN")] += 1
                return
            step.latencies.append(time.perf_counter() - scheduled)

        cpu0 = cpu_seconds(self.server.pid)
        t0 = time.perf_counter() + 0.005
        interval = 1.0 / rate
        for i in range(n):
            scheduled = t0 + i * interval
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(pending) >= limit:
                step.shed += 1
                continue
            request = self.pool[self.next % len(self.pool)]
            self.next += 1
            task = asyncio.create_task(one(request, scheduled))
            pending.add(task)
            task.add_done_callback(pending.discard)
            step.sent += 1
        step.send_seconds = time.perf_counter() - t0
        if pending:
            await asyncio.wait(set(pending), timeout=deadline + 5)
        step.server_cpu = cpu_seconds(self.server.pid) - cpu0
        return step


async def search(driver: Driver, channel: object, args: argparse.Namespace) -> float:
    """The highest rate that holds (p99 < target, no errors), confirmed once.

    A step that fails is run again (``--retries``) before the rate counts as failed: on a shared
    machine one stall of the server process by another program must not end the search.
    """
    print(
        f"\nsearch: steps of {args.step_seconds:.0f} s, from {args.start_rate:.0f}/s "
        f"x{args.growth}, p99 < {args.p99_ms:.0f} ms, no errors, {args.retries} retry\n"
    )
    steps = 0

    async def holds(rate: float, seconds: float, note: str = "") -> bool:
        nonlocal steps
        for attempt in range(1 + args.retries):
            step = await driver.run(channel, rate, seconds)
            steps += 1
            print(step.line(args.p99_ms) + note + ("  (retry)" if attempt else ""), flush=True)
            if step.holds(args.p99_ms):
                return True
        return False

    lo, hi = 0.0, None
    rate = args.start_rate
    while steps < args.max_steps and rate <= args.max_rate:
        if await holds(rate, args.step_seconds):
            lo = rate
            rate *= args.growth
        else:
            hi = rate
            break
    if hi is not None and lo > 0:
        for _ in range(args.refine):
            if steps >= args.max_steps:
                break
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if await holds(mid, args.step_seconds) else (lo, mid)
    for _ in range(3):  # confirm with a longer step; back off 10 % if it does not hold
        if lo <= 0 or await holds(lo, 2 * args.step_seconds, "  (confirmation)"):
            break
        lo *= 0.9
    return lo


@dataclass
class Sample:
    t: float
    rss: int
    threads: int
    fds: int
    cpu: float


async def sample_while(
    server: ServerProcess, every: float, stop: asyncio.Event, out: list[Sample]
) -> None:
    t0 = time.monotonic()
    while True:
        s = status(server.pid)
        out.append(
            Sample(time.monotonic() - t0, s["rss"], s["threads"], s["fds"], cpu_seconds(server.pid))
        )
        try:
            await asyncio.wait_for(stop.wait(), every)
            s = status(server.pid)
            out.append(
                Sample(
                    time.monotonic() - t0, s["rss"], s["threads"], s["fds"], cpu_seconds(server.pid)
                )
            )
            return
        except TimeoutError:
            continue


async def drive(
    server: ServerProcess, pool: list[bytes], args: argparse.Namespace
) -> tuple[float, float | None, Step, list[Sample]]:
    import grpc

    driver = Driver(server, pool, args)
    async with grpc.aio.insecure_channel(server.address) as channel:
        await driver.run(channel, min(50.0, args.rate or 50.0), 2.0)  # connection, caches
        found: float | None = None
        if args.rate:
            rate = args.rate
        else:
            found = await search(driver, channel, args)
            if found <= 0:
                raise SystemExit("no rate held, not even the start rate")
            rate = found / 2
        print(
            f"\nsoak at {rate:.1f}/s: warm-up {args.warmup_seconds:.0f} s, "
            f"then {args.soak_seconds:.0f} s sampled",
            flush=True,
        )
        if args.warmup_seconds > 0:
            warm = await driver.run(channel, rate, args.warmup_seconds)
            print("warm-up  " + warm.line(), flush=True)
        samples: list[Sample] = []
        stop = asyncio.Event()
        every = args.sample_seconds or max(1.0, min(5.0, args.soak_seconds / 60))
        sampler = asyncio.create_task(sample_while(server, every, stop, samples))
        soak = await driver.run(channel, rate, args.soak_seconds)
        stop.set()
        await sampler
        print("soak     " + soak.line(), flush=True)
    return rate, found, soak, samples


def judge(
    rate: float, soak: Step, samples: list[Sample], exit_code: int, args: argparse.Namespace
) -> bool:
    rss = [(s.t, s.rss / MIB) for s in samples]
    slope = slope_per_minute(rss)
    threads = [s.threads for s in samples]
    fds = [s.fds for s in samples]
    cpu = (samples[-1].cpu - samples[0].cpu) / max(1e-9, samples[-1].t - samples[0].t)
    print(f"\nsoak figures ({len(samples)} samples over {samples[-1].t:.0f} s):")
    print(
        f"  calls ok {soak.ok:,}, errors {sum(soak.errors.values())}, shed {soak.shed}; "
        f"latency p50 {soak.p(50):.2f} ms, p99 {soak.p(99):.2f} ms, p99.9 {soak.p(99.9):.2f} ms"
    )
    print(f"  server CPU {cpu:.0%} of a core; {cpu / rate * 1e3:.3f} ms per call")
    print(
        f"  RSS first {rss[0][1]:.1f} MiB, last {rss[-1][1]:.1f} MiB, "
        f"min {min(v for _, v in rss):.1f}, max {max(v for _, v in rss):.1f}; "
        f"slope {slope:+.3f} MiB/min"
    )
    print(
        f"  threads {min(threads)}..{max(threads)} (slope "
        f"{slope_per_minute([(s.t, s.threads) for s in samples]):+.2f}/min), "
        f"fds {min(fds)}..{max(fds)} "
        f"(slope {slope_per_minute([(s.t, s.fds) for s in samples]):+.2f}/min)"
    )
    checks = [
        ("0 errors, nothing shed", not soak.errors and soak.shed == 0 and soak.ok > 0),
        (
            f"RSS slope {slope:+.3f} < {args.rss_slope_mib_min} MiB/min",
            slope < args.rss_slope_mib_min,
        ),
        (
            f"threads flat (range {max(threads) - min(threads)} <= {args.thread_tolerance})",
            max(threads) - min(threads) <= args.thread_tolerance,
        ),
        (
            f"fds flat (range {max(fds) - min(fds)} <= {args.fd_tolerance})",
            max(fds) - min(fds) <= args.fd_tolerance,
        ),
        (f"SIGTERM: drained, exit code {exit_code}", exit_code == 0),
    ]
    print("\nsoak criteria:")
    for text, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return all(ok for _, ok in checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rate", type=float, default=0.0, help="soak at this rate (calls/s) and skip the search"
    )
    parser.add_argument("--soak-seconds", type=float, default=600.0)
    parser.add_argument("--warmup-seconds", type=float, default=15.0)
    parser.add_argument(
        "--sample-seconds",
        type=float,
        default=0.0,
        help="sampling interval (default: soak/60, between 1 and 5 s)",
    )
    parser.add_argument("--step-seconds", type=float, default=10.0)
    parser.add_argument("--start-rate", type=float, default=100.0)
    parser.add_argument("--growth", type=float, default=1.25)
    parser.add_argument("--refine", type=int, default=3)
    parser.add_argument("--retries", type=int, default=1, help="re-runs of a failing step")
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--max-rate", type=float, default=20_000.0)
    parser.add_argument("--p99-ms", type=float, default=50.0)
    parser.add_argument("--deadline", type=float, default=5.0, help="per-call deadline, s")
    parser.add_argument("--max-in-flight", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=512, help="distinct random tables")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rss-slope-mib-min", type=float, default=1.0)
    parser.add_argument("--thread-tolerance", type=int, default=2)
    parser.add_argument("--fd-tolerance", type=int, default=4)
    parser.add_argument("--server-log", default="", help="server stdout to this file")
    args = parser.parse_args()

    print(machine_line())
    t = time.perf_counter()
    pool = random_requests(args.pool, args.seed)
    print(
        f"{len(pool)} random legal 4-player tables, {statistics.mean(map(len, pool)):.0f} B "
        f"per request on average (built in {time.perf_counter() - t:.1f} s)"
    )
    try:
        server = start_server(
            ["-m", "cpsettle_service.server"],
            log_path=Path(args.server_log) if args.server_log else None,
        )
    except RuntimeError as e:
        print(f"server did not start: {e}", file=sys.stderr)
        sys.exit(2)
    print(f"server pid {server.pid} on {server.address} (python -m cpsettle_service.server)")
    try:
        rate, found, soak, samples = asyncio.run(drive(server, pool, args))
    finally:
        exit_code = server.stop()
    if found is not None:
        print(
            f"\nhighest steady rate (p99 < {args.p99_ms:.0f} ms, no errors): {found:.1f}/s; "
            f"soaked at {rate:.1f}/s"
        )
    ok = judge(rate, soak, samples, exit_code, args)
    print(f"\nsoak {'PASSED' if ok else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
