"""Re-auditing at engine speed, per core and across a cluster (issue #28), in one run.

    python bench/bench_reaudit.py [--hands 100000] [--sizes 20000,100000,300000]
                                  [--shard-lines 1000,5000,20000] [--ray-python PY]
                                  [--history FILE] [--skip-cluster] [--full-lines 10000]

On one generated history of the nine presets (examples/generate_history.py, planted mistakes
and invalid lines included), measured in the same run:

1. the engine alone: the hands mapped beforehand, only ``settle`` timed (the baseline); and the
   machine's own ceiling: the engine alone in 1 process, then in 2 at once (their summed rate
   over the same seconds against the one's; best of two turns each): what 2 audit workers
   could gain at most here;
2. ``cpsettle audit FILE --local --workers 1`` and ``--workers 2``, each a whole command in a
   subprocess (start-up included), on the first N lines for every N of ``--sizes``: hands/s,
   CPU per hand, and the 2-worker speed-up; ``--no-quick`` (every hand the full way) on a part;
3. the sharded audit on Dask (``LocalCluster`` of 2 worker processes, in this process): the
   cluster's start-up, then for every shard size the run's wall time against the tasks' own
   time: the scheduler's share, (workers x wall - the tasks' seconds) / (workers x wall);
4. with ``--ray-python`` (an interpreter that has ray), the same shards as Ray tasks
   (``ray.init(num_cpus=2)``): start-up and run, to compare with Dask;
5. what it costs: hands per core-second on each path, and from them the core-hours and the wall
   time on a 10-node x 8-core cluster for 30 million hands (a night) and 11 billion (a year).

Wall-clock figures move with other work on the machine; CPU per hand is the steadier figure.
Prints the CPU count and the load average before and after.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _support import ROOT, SOURCE_DIRS

NIGHT = 30_000_000
YEAR = 11_000_000_000
NODES, CORES = 10, 8


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def generate(path: Path, hands: int) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", ROOT / "examples/generate_history.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen"] = gen
    spec.loader.exec_module(gen)
    lines, key = gen.generate(
        hands, seed=28, mistakes=max(24, hands // 1000), invalid=max(8, hands // 5000)
    )
    assert len(set(key["presets"])) == 9, key["presets"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def interleaved(lines: list[bytes], rounds: int = 3) -> tuple[float, float]:
    """CPU seconds per hand of the engine alone and of the quick check (``QuickChecker.check``:
    read, map, resolve, settle, compare) on the same hands, 1,000 of each in turn, so that the
    machine's other work weighs on both alike: the steadiest ratio of the two."""
    import orjson

    from cpsettle_client.audit import running

    running._init_local({"profile_dir": None, "signing_key_file": None})
    quick, service = running._quick, running._servicer
    assert quick is not None and service is not None
    work = []
    for raw in lines:
        try:
            table, preset, overrides, _ = quick.plain_table(orjson.loads(raw))
            work.append((raw, table, quick._profile(preset, overrides)))
        except Exception:  # not plain: not part of the comparison
            continue
    engine = check = 0.0
    for _ in range(rounds):
        for i in range(0, len(work), 1000):
            part = work[i : i + 1000]
            began = time.process_time()
            for _raw, table, profile in part:
                try:  # noqa: SIM105 — timed per hand: a try costs nothing, suppress() an object
                    service.settle_table(table, profile)
                except Exception:
                    pass
            engine += time.process_time() - began
            began = time.process_time()
            for raw, _table, _profile in part:
                quick.check(raw)
            check += time.process_time() - began
    n = rounds * len(work)
    return engine / n, check / n


def engine_alone(lines: list[bytes], rounds: int = 2) -> tuple[float, float]:
    """(hands/s, CPU seconds per hand) of ``settle`` alone on the plain hands of ``lines``."""
    import orjson

    from cpsettle_client.audit import running
    from cpsettle_client.audit.quick import QuickChecker

    running._init_local({"profile_dir": None, "signing_key_file": None})
    assert running._servicer is not None
    quick = QuickChecker(running._servicer)
    work = []
    for raw in lines:
        try:
            table, preset, overrides, _ = quick.plain_table(orjson.loads(raw))
            work.append((table, quick._profile(preset, overrides)))
        except Exception:  # not plain: not part of the baseline
            continue
    settle = running._servicer.settle_table
    best = (0.0, 0.0)
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        for table, profile in work:
            try:  # noqa: SIM105 — timed per hand: a try costs nothing, suppress() an object
                settle(table, profile)
            except Exception:  # an invalid hand costs what it costs
                pass
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if len(work) / wall > best[0]:
            best = (len(work) / wall, cpu / len(work))
    return best


def _engine_for(path: str, count: int, start_at: float, seconds: float) -> float:
    """In a worker process: hands a second ``settle`` does from ``start_at`` (epoch seconds)
    for ``seconds``, cycling over the plain hands of the history's first ``count`` lines."""
    import orjson

    from cpsettle_client.audit import running
    from cpsettle_client.audit.quick import QuickChecker

    running._init_local({"profile_dir": None, "signing_key_file": None})
    assert running._servicer is not None
    quick = QuickChecker(running._servicer)
    work = []
    for raw in Path(path).read_bytes().splitlines()[:count]:
        try:
            table, preset, overrides, _ = quick.plain_table(orjson.loads(raw))
            work.append((table, quick._profile(preset, overrides)))
        except Exception:
            continue
    settle = running._servicer.settle_table
    time.sleep(max(0.0, start_at - time.time()))
    done, end = 0, start_at + seconds
    while time.time() < end:
        for table, profile in work[:500]:
            try:  # noqa: SIM105 — timed per hand: a try costs nothing, suppress() an object
                settle(table, profile)
            except Exception:
                pass
        done += min(500, len(work))
        work = work[500:] + work[:500]
    return done / (time.time() - start_at)


def machine_ceiling(path: Path, seconds: float = 8.0) -> tuple[float, float]:
    """The engine alone in one process, then in two processes at once over the same seconds,
    twice in turn (1, 2, 1, 2), the best of each: (hands/s of one, the two's sum / one's). What
    two audit workers could gain at most here, whatever the audit's own costs. A process not
    ready at the common start counts its lateness against itself (a lower bound)."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    best = {1: 0.0, 2: 0.0}
    for processes in (1, 2, 1, 2):
        with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
            start_at = time.time() + 6.0  # every process has read its hands by then
            runs = [
                pool.submit(_engine_for, str(path), 20_000, start_at, seconds)
                for _ in range(processes)
            ]
            best[processes] = max(best[processes], sum(r.result() for r in runs))
    return best[1], best[2] / best[1]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def audit(history: Path, *extra: str) -> dict[str, Any]:
    """One ``cpsettle audit`` in a subprocess: wall and CPU (its workers too), and its report."""
    report = history.with_suffix(".report.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in SOURCE_DIRS))
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cpsettle_client.cli",
            "audit",
            str(history),
            *extra,
            "--report",
            str(report),
            "--progress",
            "none",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    data = json.loads(report.read_text())
    return {"wall": wall, "cpu": cpu, "hands": data["summary"]["handsRead"], "report": data}


def two_workers_cpu(path: Path) -> dict[str, float]:
    """``--local --workers 2``'s work run in this process, its CPU counted where it is spent:
    this process (the parent: reading, chunks out, outcomes merged) and the workers (the fork
    server reaped at the end, so theirs is in RUSAGE_CHILDREN)."""
    import multiprocessing.forkserver

    from cpsettle_client.audit.reading import chunks, read_lines
    from cpsettle_client.audit.running import LocalRunner

    def usage(who: int) -> float:
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    me, kids, wall = (
        usage(resource.RUSAGE_SELF),
        usage(resource.RUSAGE_CHILDREN),
        time.perf_counter(),
    )
    runner = LocalRunner(2, {"profile_dir": None, "signing_key_file": None})
    hands = sum(o.read for o in runner.run("h", chunks(read_lines(str(path)), 1000)))
    runner.close(interrupted=False)
    multiprocessing.forkserver._forkserver._stop()  # type: ignore[attr-defined]
    return {
        "hands": hands,
        "wall": time.perf_counter() - wall,
        "parent": usage(resource.RUSAGE_SELF) - me,
        "workers": usage(resource.RUSAGE_CHILDREN) - kids,
    }


def write_shards(lines: list[bytes], folder: Path, size: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for i in range(0, len(lines), size):
        data = b"".join(lines[i : i + size])
        (folder / f"part-{i // size:05d}.jsonl.gz").write_bytes(gzip.compress(data, 1))


def dask_runs(lines: list[bytes], work: Path, sizes: list[int]) -> list[dict[str, Any]]:
    import logging

    from distributed import Client, LocalCluster

    from cpsettle_client.audit.cluster import ShardRunner, list_shards

    began = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    startup = time.perf_counter() - began
    out = []
    try:
        for size in sizes:
            folder = work / f"shards-{size}"
            write_shards(lines, folder, size)
            shards = list_shards(str(folder))
            runner = ShardRunner(
                "local", 2, {"profile_dir": None, "signing_key_file": None}, 100, client=client
            )  # the cluster already up
            began = time.perf_counter()
            hands = sum(o.read for o in runner.run(shards))
            wall = time.perf_counter() - began
            overhead = 1 - runner.task_seconds / (2 * wall)
            out.append(
                {
                    "engine": "dask",
                    "shard": size,
                    "shards": len(shards),
                    "hands": hands,
                    "startup": startup,
                    "wall": wall,
                    "tasks": runner.task_seconds,
                    "cpu": runner.task_cpu,
                    "overhead": overhead,
                }
            )
            startup = 0.0
    finally:
        client.close()
        cluster.close()
    return out


RAY_SCRIPT = r"""
import json, sys, time
import ray
from cpsettle_client.audit.cluster import audit_shard, list_shards
folder = sys.argv[1]
began = time.perf_counter()
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
task = ray.remote(num_cpus=1, max_retries=3)(audit_shard)
ray.get([task.remote(s, {"profile_dir": None, "signing_key_file": None}, 100)
         for s in list_shards(folder)[:2]])  # the workers up and the engine imported
startup = time.perf_counter() - began
shards = list_shards(folder)
began = time.perf_counter()
results = ray.get([task.remote(s, {"profile_dir": None, "signing_key_file": None}, 100)
                   for s in shards])
wall = time.perf_counter() - began
tasks = sum(r.seconds for r in results)
print(json.dumps({"engine": "ray", "shards": len(shards),
                  "hands": sum(r.outcome.read for r in results), "startup": startup,
                  "wall": wall, "tasks": tasks, "cpu": sum(r.cpu for r in results),
                  "overhead": 1 - tasks / (2 * wall)}))
ray.shutdown()
"""


def ray_run(python: str, folder: Path, size: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in SOURCE_DIRS))
    done = subprocess.run(
        [python, "-c", RAY_SCRIPT, str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"ray run failed: {done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["shard"] = size
    return result


def costs(name: str, per_core_second: float, overhead: float, startup: float) -> None:
    for label, hands in (("a night, 30 million", NIGHT), ("a year, 11 billion", YEAR)):
        core_hours = hands / per_core_second / 3600
        wall = core_hours * 3600 / (NODES * CORES) / (1 - overhead) + startup
        print(
            f"  {name:<24}{label:<22}{core_hours:>12,.1f} core-hours"
            f"{wall / 3600:>10,.2f} h wall on {NODES} x {CORES} cores"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument(
        "--sizes",
        default="20000,100000,300000",
        help="history sizes (first N lines; past the end, the history again) for --workers 1 vs 2",
    )
    ap.add_argument("--shard-lines", default="1000,5000,20000")
    ap.add_argument(
        "--full-lines",
        type=int,
        default=10_000,
        help="lines audited with --no-quick (every hand the full way)",
    )
    ap.add_argument("--ray-python", help="an interpreter with ray installed: also run on Ray")
    ap.add_argument("--history", help="reuse this history instead of generating one")
    ap.add_argument("--skip-cluster", action="store_true")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {load()}")
    work = Path(tempfile.mkdtemp(prefix="bench-reaudit-"))
    try:
        history = Path(args.history) if args.history else work / "day.jsonl"
        if not args.history:
            began = time.perf_counter()
            generate(history, args.hands)
            print(f"generated {args.hands:,} hands in {time.perf_counter() - began:.0f} s")
        lines = history.read_bytes().splitlines(keepends=True)

        rate, engine_cpu = engine_alone(lines[:20_000])
        print(
            f"\nengine alone (settle, the hands mapped beforehand): {rate:,.0f} hands/s, "
            f"{engine_cpu * 1e6:.1f} us CPU a hand"
        )
        eng, chk = interleaved(lines[:20_000])
        print(
            f"interleaved, CPU a hand: engine {eng * 1e6:.1f} us, quick check (read, map, "
            f"settle, compare) {chk * 1e6:.1f} us: the quick check runs at "
            f"{eng / chk:.2f} of the engine's rate"
        )

        one, ceiling = machine_ceiling(history)
        print(
            f"the machine's own ceiling: the engine alone in 1 process {one:,.0f} hands/s, "
            f"in 2 processes at once {ceiling:.2f}x that (what --workers 2 can gain at most)"
        )

        print("\ncpsettle audit --local, whole commands (start-up included)")
        print(
            f"  {'lines':>8}{'workers':>8}{'wall s':>8}{'hands/s':>10}{'CPU us/hand':>13}"
            f"{'vs engine':>10}{'2 vs 1':>8}"
        )
        local: dict[tuple[int, int], dict[str, Any]] = {}
        for size in [int(s) for s in args.sizes.split(",")]:
            part = work / f"first-{size}.jsonl"
            # past the history's end, the history again (hand ids repeat: the audit minds not)
            part.write_bytes(b"".join((lines * -(-size // len(lines)))[:size]))
            for workers in (1, 2):
                r = local[(size, workers)] = audit(part, "--local", "--workers", str(workers))
                speed = r["hands"] / r["wall"]
                ratio = (
                    f"{speed / (local[(size, 1)]['hands'] / local[(size, 1)]['wall']):.2f}x"
                    if workers == 2
                    else ""
                )
                # the workers of --workers 2 are the fork server's children: their CPU is not
                # the audit's to count, so only the 1-worker run's CPU is shown
                cpu = f"{r['cpu'] / r['hands'] * 1e6:.1f}" if workers == 1 else "-"
                print(
                    f"  {size:>8,}{workers:>8}{r['wall']:>8.1f}{speed:>10,.0f}"
                    f"{cpu:>13}{speed / rate:>10.2f}{ratio:>8}",
                    flush=True,
                )
            a, b = local[(size, 1)], local[(size, 2)]
            same = all(
                a["report"][k] == b["report"][k]
                for k in ("summary", "differences", "invalid", "byTable", "byDealer")
            )
            assert same, "the reports of 1 and 2 workers differ"
        part = work / "one.jsonl"
        part.write_bytes(lines[0])
        start = audit(part, "--local", "--workers", "1")
        big = max(size for size, _ in local)
        for workers in (1, 2):
            r = local[(big, workers)]
            print(
                f"  {workers} worker(s), {big:,} lines, start-up of a one-line run taken off: "
                f"{r['hands'] / (r['wall'] - start['wall']):,.0f} hands/s"
            )
        print(f"  (start-up: {start['wall']:.2f} s wall, {start['cpu']:.2f} s CPU)")
        acct = two_workers_cpu(work / f"first-{big}.jsonl")
        per_hand_1 = (one_run := local[(big, 1)])["cpu"] / one_run["hands"]
        total = acct["parent"] + acct["workers"]
        print(
            f"  --workers 2 on {big:,} lines, its CPU where it is spent: parent "
            f"{acct['parent']:.1f} s ({acct['parent'] / total:.0%}), workers (start-up "
            f"included) {acct['workers']:.1f} s; {total / acct['hands'] * 1e6:.1f} us a hand "
            f"against 1 worker's {per_hand_1 * 1e6:.1f}: on two idle cores at most "
            f"{per_hand_1 * acct['hands'] / max(acct['parent'], total / 2):.2f}x"
        )
        part = work / "full.jsonl"
        part.write_bytes(b"".join(lines[: args.full_lines]))
        full = audit(part, "--local", "--workers", "1", "--no-quick")
        print(
            f"  --no-quick (every hand the full way), {args.full_lines:,} lines: "
            f"{full['hands'] / full['wall']:,.0f} hands/s, "
            f"{full['cpu'] / full['hands'] * 1e6:.1f} us CPU a hand"
        )

        one = local[(big, 1)]
        quick_rate = one["hands"] / (one["cpu"] - start["cpu"])
        runs: list[dict[str, Any]] = []
        if not args.skip_cluster:
            print("\nsharded, 2 worker processes: the engines' start-up, then each shard size")
            print(
                f"  {'engine':<7}{'shard':>7}{'shards':>7}{'start s':>8}{'wall s':>8}"
                f"{'hands/s':>9}{'CPU us/hand':>12}{'idle':>7}{'ms/task':>8}"
            )

            def show(r: dict[str, Any]) -> None:
                # idle: the workers' time outside the tasks (the scheduler's turn-arounds, the
                # results' transfer, and the last wave's tail), as a share and per task
                gap = (2 * r["wall"] - r["tasks"]) / r["shards"] * 1000
                print(
                    f"  {r['engine']:<7}{r['shard']:>7,}{r['shards']:>7}{r['startup']:>8.1f}"
                    f"{r['wall']:>8.1f}{r['hands'] / r['wall']:>9,.0f}"
                    f"{r['cpu'] / r['hands'] * 1e6:>12.1f}{r['overhead']:>7.1%}{gap:>8.1f}",
                    flush=True,
                )

            runs = dask_runs(lines, work, [int(s) for s in args.shard_lines.split(",")])
            for r in runs:
                show(r)
            if args.ray_python:
                mid = sorted(r["shard"] for r in runs)[len(runs) // 2]
                ray = ray_run(args.ray_python, work / f"shards-{mid}", mid)
                show(ray)
                runs.append(ray)

        print("\nwhat it costs (hands per core-second from CPU time; 10 nodes x 8 cores)")
        print(
            f"  engine alone: {1 / engine_cpu:,.0f}; quick local audit (start-up off): "
            f"{quick_rate:,.0f}; full way (--no-quick, start-up off): "
            f"{full['hands'] / (full['cpu'] - start['cpu']):,.0f}"
        )
        costs("quick, one process", quick_rate, 0.0, 0.0)
        dask = [r for r in runs if r["engine"] == "dask"]
        if dask:
            best = min(
                (r for r in dask if r["overhead"] < 0.05),
                default=dask[-1],
                key=lambda r: r["shard"],
            )
            per_core = best["hands"] / best["cpu"]
            print(
                f"  dask tasks: {per_core:,.0f} hands per core-second; shard of "
                f"{best['shard']:,} lines: scheduler {best['overhead']:.1%}"
            )
            costs(
                f"dask, shards of {best['shard']:,}",
                per_core,
                max(best["overhead"], 0.0),
                dask[0]["startup"],
            )
        print(f"\nload average after: {load()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
