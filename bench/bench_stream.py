"""Benchmark: bulk re-audit throughput — SettleStream vs unary Settle, and ``audit --local``.

    python bench/bench_stream.py [--hands 4000] [--batch 100] [--in-flight 8] [--rounds 2]
                                 [--workers N] [--seed 3] [--log-level info]
                                 [--part all|stream|local]
                                 [--stream-workers 0] [--worker-nice 10]

Generates a synthetic day (examples/generate_history.py: every preset, stacks, rake, a few
planted mistakes and invalid lines), then:

1. starts ONE server (``python -m cpsettle_service.server`` on 127.0.0.1, metrics off, default
   settings otherwise: the sealer and its audit log are on, the log goes to /dev/null; its
   SettleStream worker processes from ``--stream-workers`` (default 0 = one per core, as the
   bulk-audit pods run; -1 = none, the server's own default),
   at ``--worker-nice``; server CPU counts the server process and its workers)
   and drives it from this process over loopback, rounds alternating:
   - SettleStream: the day's valid hands in batches of ``--batch``, each hand with its recorded
     payouts (so the server also checks them — more work per hand than a bare Settle), one
     stream, requests pre-built;
   - unary Settle: the same hands, one per call, ``--in-flight`` calls outstanding on one
     grpc.aio channel, requests pre-built, 30 s deadline per call;
   printing hands/s (best and median round), server CPU per hand, and the stream/unary ratio;
2. runs the real command ``cpsettle audit HISTORY --local`` (a subprocess each) with
   ``--workers`` (default: the CPU count) and with 1 worker, printing hands/s as the report
   gives them (line reading, parsing, settling, checking; the process pool's start included)
   and the ratio.

Prints only; asserts nothing. About a minute on 2 idle cores at the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from _support import ROOT, SOURCE_DIRS, cpu_seconds, machine_line, start_server, temp_dir
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient


def load_generator() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "generate_history", ROOT / "examples" / "generate_history.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_history"] = module
    spec.loader.exec_module(module)
    return module


def valid_items(lines: list[str], invalid: set[int]) -> list[pb.AuditItem]:
    """The day's valid hands (not in the key's invalid lines), as AuditItems with payouts."""
    items = []
    for n, line in enumerate(lines, 1):
        if n in invalid:
            continue
        try:
            data = json.loads(line)
            paid = data.pop("recordedPayouts")
            item = pb.AuditItem(ref=f"day:{n}")
            json_format.ParseDict(data, item.request)
            for pid, amount in paid.items():
                item.paid.add(player_id=pid, net_money=int(amount))
        except (ValueError, KeyError, json_format.ParseError):
            continue
        items.append(item)
    return items


def run_stream(address: str, batches: list[pb.SettleStreamRequest]) -> tuple[float, int]:
    with SettlementClient(address) as client:
        start = time.perf_counter()
        hands = 0
        for answer in client.settle_stream(batches, timeout=600):
            hands += len(answer.results)
        return time.perf_counter() - start, hands


async def run_unary(address: str, requests: list[bytes], in_flight: int) -> tuple[float, int]:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            "/cpsettle.v1.SettlementService/Settle",
            request_serializer=lambda b: b,
            response_deserializer=pb.SettleResponse.FromString,
        )
        await call(requests[0], timeout=30)  # connect and warm up outside the timing
        it = iter(requests)
        done = 0

        async def worker() -> None:
            nonlocal done
            for r in it:
                await call(r, timeout=30)
                done += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return time.perf_counter() - start, done


class TreeCpu(threading.Thread):
    """CPU seconds of a process's descendants (the audit's fork server and workers), sampled
    from /proc: they are not reaped by our child, so its rusage does not include them."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.seen: dict[int, float] = {}
        self.done = threading.Event()

    def _scan(self) -> None:
        parent: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(name)
            parent[pid] = int(fields[1])
            cpu[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for pid, seconds in cpu.items():
            p = parent.get(pid)
            while p and p != self.root:
                p = parent.get(p)
            if p == self.root:
                self.seen[pid] = max(self.seen.get(pid, 0.0), seconds)

    def run(self) -> None:
        while not self.done.wait(0.2):
            self._scan()

    def total(self) -> float:
        self.done.set()
        self.join()
        return sum(self.seen.values())


def tree_cpu(root: int) -> float:
    """CPU seconds of a process and its descendants alive now (the server's stream workers
    live as long as the server, so differences between two readings are theirs)."""
    tree = TreeCpu(root)
    tree._scan()
    return cpu_seconds(root) + sum(tree.seen.values())


def local_audit(history: Path, workers: int, batch: int, out: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in SOURCE_DIRS))
    cmd = [
        sys.executable,
        "-m",
        "cpsettle_client.cli",
        "audit",
        str(history),
        "--local",
        "--workers",
        str(workers),
        "--batch",
        str(batch),
        "--progress",
        "none",
        "--report",
        str(out),
    ]
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        cmd, env=env, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    tree = TreeCpu(proc.pid)
    tree.start()
    _, stderr = proc.communicate()
    descendants = tree.total()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"audit failed ({proc.returncode}): {stderr[-2000:]}")
    report = json.loads(out.read_text())
    report["wall"] = wall
    # CPU of the command (rusage) and of its fork server and workers (sampled).
    report["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    report["cpu"] += descendants
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--in-flight", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--log-level", default="info", help="the server's CPSETTLE_LOG_LEVEL")
    ap.add_argument("--stream-workers", default="0", help="the server's CPSETTLE_STREAM_WORKERS")
    ap.add_argument("--worker-nice", default="10", help="the server's CPSETTLE_STREAM_WORKER_NICE")
    ap.add_argument(
        "--part",
        choices=("all", "stream", "local"),
        default="all",
        help="stream: only SettleStream vs unary; local: only the audit --local part",
    )
    args = ap.parse_args()

    print(machine_line())
    t0 = time.perf_counter()
    lines, key = load_generator().generate(
        args.hands,
        seed=args.seed,
        mistakes=max(args.hands // 200, 1),
        invalid=max(args.hands // 1000, 1),
    )
    folder = temp_dir("cpsettle-bench-stream-")
    history = folder / "day.jsonl"
    history.write_text("\n".join(lines) + "\n")
    items = valid_items(lines, {m["line"] for m in key["invalid"]})
    batches = [
        pb.SettleStreamRequest(items=items[i : i + args.batch])
        for i in range(0, len(items), args.batch)
    ]
    unary = [item.request.SerializeToString() for item in items]
    print(
        f"history: {len(lines):,} hands at {len(key['tables'])} tables "
        f"({len(items):,} valid), generated in {time.perf_counter() - t0:.1f} s"
    )

    if args.part != "local":
        run_server_part(args, items, batches, unary)
    if args.part != "stream":
        run_local_part(args, lines, key, history, folder)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


def run_server_part(
    args: argparse.Namespace,
    items: list[pb.AuditItem],
    batches: list[pb.SettleStreamRequest],
    unary: list[bytes],
) -> None:
    server = start_server(
        ["-m", "cpsettle_service.server"],
        env={
            "CPSETTLE_LOG_LEVEL": args.log_level,
            "CPSETTLE_GRACE_SECONDS": "1",
            "CPSETTLE_STREAM_WORKERS": args.stream_workers,
            "CPSETTLE_STREAM_WORKER_NICE": args.worker_nice,
        },
    )
    stream_rates: list[float] = []
    unary_rates: list[float] = []
    stream_cpu: list[float] = []
    unary_cpu: list[float] = []
    stream_busy: list[float] = []
    unary_busy: list[float] = []
    try:
        run_stream(server.address, batches[:1])  # warm up: connection, caches
        for r in range(args.rounds):
            c0 = tree_cpu(server.pid)
            seconds, hands = run_stream(server.address, batches)
            stream_cpu.append((tree_cpu(server.pid) - c0) / hands)
            stream_busy.append((tree_cpu(server.pid) - c0) / seconds)
            stream_rates.append(hands / seconds)
            c0 = tree_cpu(server.pid)
            seconds, calls = asyncio.run(run_unary(server.address, unary, args.in_flight))
            unary_cpu.append((tree_cpu(server.pid) - c0) / calls)
            unary_busy.append((tree_cpu(server.pid) - c0) / seconds)
            unary_rates.append(calls / seconds)
            print(
                f"  round {r + 1}: SettleStream {stream_rates[-1]:8,.0f} hands/s   "
                f"unary Settle ({args.in_flight} in flight) {unary_rates[-1]:8,.0f} hands/s"
            )
    finally:
        server.stop()

    def line(name: str, rates: list[float], cpu: list[float], busy: list[float]) -> None:
        print(
            f"{name:<36} best {max(rates):8,.0f} hands/s  median {statistics.median(rates):8,.0f}"
            f"  server CPU {statistics.median(cpu) * 1e6:6,.0f} µs/hand, "
            f"busy {statistics.median(busy) * 100:3.0f} %"
        )

    print(
        f"\nOne server process on 127.0.0.1, {len(items):,} hands a round, "
        f"log level {args.log_level}:"
    )
    line(f"SettleStream (batches of {args.batch})", stream_rates, stream_cpu, stream_busy)
    line(f"unary Settle ({args.in_flight} in flight)", unary_rates, unary_cpu, unary_busy)
    print(
        f"{'ratio stream / unary':<36} best {max(stream_rates) / max(unary_rates):5.2f}x"
        f"     median {statistics.median(stream_rates) / statistics.median(unary_rates):5.2f}x"
        "   server CPU per hand "
        f"{statistics.median(unary_cpu) / statistics.median(stream_cpu):4.2f}x"
        "   (target >= 3x)"
    )


def run_local_part(
    args: argparse.Namespace, lines: list[str], key: dict[str, Any], history: Path, folder: Path
) -> None:
    print(f"\ncpsettle audit --local over the {len(lines):,}-line history:")
    results = {}
    for workers in sorted({args.workers, 1}, reverse=True):
        report = local_audit(history, workers, args.batch, folder / f"report-{workers}.json")
        results[workers] = report
        s = report["summary"]
        print(
            f"  --workers {workers}: {report['handsPerSecond']:8,.0f} hands/s "
            f"({report['elapsedSeconds']:.1f} s in the audit, {report['wall']:.1f} s wall, "
            f"CPU {report['cpu'] / s['handsRead'] * 1e6:5,.0f} µs/hand); "
            f"{s['handsWithDifferences']} differences, {s['invalidHands']} invalid "
            f"(planted: {len(key['mistakes'])}, {len(key['invalid'])})"
        )
    if args.workers != 1:
        ratio = results[args.workers]["handsPerSecond"] / results[1]["handsPerSecond"]
        print(f"  ratio {args.workers} workers / 1 worker: {ratio:.2f}x")


if __name__ == "__main__":
    main()
