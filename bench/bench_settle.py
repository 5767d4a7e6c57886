"""Settling 4-player tables in process, per preset, on one core.

Prints tables settled per second for each preset and, as the same-process baseline, how many
tables per second treys's public API manages just to *evaluate* the 12 rows of a table from
strings (no settlement at all). Target: >= 20,000 tables/s per preset.

    python bench/bench_settle.py [--tables 2000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cpsettle_service.profile_files import builtin_registry

ROOT = Path(__file__).resolve().parents[1]
for sub in ("service", "proto", "clients/python", ""):
    sys.path.insert(0, str(ROOT / sub))

from cpsettle_service.domain.settle import settle  # noqa: E402
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile  # noqa: E402
from tests.support.random_tables import random_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    registry = builtin_registry()
    rng = random.Random(args.seed)

    # Every workload is timed once per round, the rounds interleaved (treys, then each preset,
    # then again): on a shared machine a busy spell then costs one sample of each workload
    # instead of all the samples of one preset. Each figure is its best round.
    workloads: dict[str, tuple[Callable[[list], None], list]] = {}
    try:
        from treys import Card, Evaluator

        evaluator = Evaluator()
        rows = []
        for _ in range(args.tables):
            req = random_table(rng, 4)
            rows.append([r for p in req["players"] for r in p["arrangement"].values()])

        def treys_tables(tables: list) -> None:
            new = Card.new
            ev = evaluator.evaluate
            for table_rows in tables:
                for row in table_rows:
                    if len(row) == 5:
                        ev([new(c) for c in row], [])
                    else:  # treys evaluates 5-7 cards; a front is padded by no-op cost
                        [new(c) for c in row]

        workloads["treys"] = (treys_tables, rows)
    except ImportError:
        pass

    for name in registry.names():
        tables = []
        profile = None
        for _ in range(args.tables):
            table, choice = request_from_dict(random_table(rng, 4, preset=name))
            tables.append(table)
            profile = profile or resolve_profile(choice, registry)

        def run(items: list, profile=profile) -> None:
            for t in items:
                settle(t, profile)

        workloads[name] = (run, tables)

    best = {name: float("inf") for name in workloads}
    for _ in range(args.rounds):
        for name, (fn, items) in workloads.items():
            start = time.process_time()
            fn(items)
            best[name] = min(best[name], time.process_time() - start)
    rates = {name: args.tables / best[name] for name in workloads}

    baseline = rates.pop("treys", None)
    if baseline is not None:
        print(
            f"baseline: treys evaluating a table's 12 rows from strings: {baseline:,.0f} tables/s"
        )
    else:
        print("baseline: treys not installed (pip install treys) — absolute figures only")
    print(f"{args.rounds} interleaved rounds of {args.tables:,} tables per workload; best round")
    print(f"{'preset':<16} {'tables/s':>10} {'us/table':>9} {'vs treys':>9} target 20,000")
    for name, rate in rates.items():
        ratio = f"{rate / baseline:8.2f}x" if baseline else "      -"
        print(f"{name:<16} {rate:>10,.0f} {1e6 / rate:>9.1f} {ratio}")
    worst = min(rates.values())
    print(
        f"slowest preset: {worst:,.0f} tables/s ({'meets' if worst >= 20_000 else 'BELOW'} "
        "the 20,000 target)"
    )


if __name__ == "__main__":
    main()
