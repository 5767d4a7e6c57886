"""CPU instructions per settled table, per preset, counted by callgrind: the steady figure.

Timings on a shared machine move by tens of percent between runs; the instruction count of the
same work does not (with the hash seed fixed and address randomization off). Each preset runs
twice under ``valgrind --tool=callgrind``: both runs build the same random legal 4-player tables
and settle all of them once (warming the per-profile caches, as the best round of
``bench_settle.py`` is warm), then one run settles the first N tables again and the other does
not; the difference divided by N is the instructions of one warm settlement.

    python bench/bench_settle_instructions.py [--tables 400] [--presets western ofc ...]

Needs valgrind and setarch (util-linux). Not a target by itself: ``bench_settle.py`` measures the
20,000 tables/s; this tells whether a change to the engine made it cheaper.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cpsettle_service.profile_files import builtin_registry

ROOT = Path(__file__).resolve().parents[1]
TABLES = 2000
SEED = 7


def inner(count: int, preset: str) -> None:
    for sub in ("service", "proto", "clients/python", ""):
        sys.path.insert(0, str(ROOT / sub))
    import random

    from cpsettle_service.domain.settle import settle
    from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile
    from tests.support.random_tables import random_table

    registry = builtin_registry()
    rng = random.Random(SEED)
    tables = []
    profile = None
    for _ in range(TABLES):
        table, choice = request_from_dict(random_table(rng, 4, preset=preset))
        tables.append(table)
        profile = profile or resolve_profile(choice, registry)
    for t in tables:  # warm-up: in both runs
        settle(t, profile)
    for t in tables[:count]:  # counted: only in the run with count > 0
        settle(t, profile)


def instructions(count: int, preset: str) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [
        "setarch",
        platform.machine(),
        "-R",
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--inner",
        str(count),
        preset,
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    match = re.search(r"Collected : (\d+)", out)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out[-2000:]}")
    return int(match.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=400, help="tables counted (of the 2,000)")
    ap.add_argument("--presets", nargs="*", default=None)
    ap.add_argument("--inner", nargs=2, metavar=("COUNT", "PRESET"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        inner(int(args.inner[0]), args.inner[1])
        return
    presets = args.presets or [
        p.stem for p in sorted((ROOT / "service/cpsettle_service/domain/presets").glob("*.json"))
    ]
    jobs = [(n, p) for p in presets for n in (args.tables, 0)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = dict(zip(jobs, pool.map(lambda job: instructions(*job), jobs), strict=True))
    print(f"callgrind, {args.tables} warm 4-player tables per preset, PYTHONHASHSEED=0, no ASLR")
    print(f"{'preset':<16} {'instructions/table':>18}")
    for p in presets:
        per_table = (counts[(args.tables, p)] - counts[(0, p)]) / args.tables
        print(f"{p:<16} {per_table:>18,.0f}")


if __name__ == "__main__":
    main()
