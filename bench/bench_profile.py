"""Benchmark: reading and writing a large profile in process, this checkout against another.

    python bench/bench_profile.py [--against DIR] [--profiles 200] [--rounds 5]

Times ``profile_from_dict`` (the reader: every field checked against its declared bound) and
``profile_to_dict`` (the JSON form, which the digest hashes) on ``--profiles`` distinct maximal
valid profiles (``tests/hardening/hostile.py``: 324 royalty entries, 42 progressive thresholds,
every natural), CPU time per profile, best of ``--rounds``. With ``--against DIR`` (another
checkout, e.g. a worktree of the previous main) the same profiles are timed under its sources
too, the two alternating round by round in fresh interpreters, and the ratios are printed.
Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("service", "proto", "clients/python", ".")

# Run in a fresh interpreter with a checkout's sources first on the path: prints one JSON line.
MEASURE = """
import json, sys, time
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
data = json.load(open(sys.argv[1]))
def per_profile(fn, items):
    start = time.process_time()
    for item in items:
        fn(item)
    return (time.process_time() - start) / len(items)
read = per_profile(profile_from_dict, data)
profiles = [profile_from_dict(d) for d in data]
write = per_profile(profile_to_dict, profiles)
print(json.dumps({"read": read, "write": write}))
"""


def measure(checkout: Path, data_file: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(checkout / d) for d in SOURCE_DIRS))
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, data_file],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=str(checkout),
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, default=None, help="another checkout to compare")
    parser.add_argument("--profiles", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    sys.path[:0] = [str(ROOT / d) for d in SOURCE_DIRS]
    from tests.hardening.hostile import maximal_profile

    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    checkouts = {"this checkout": ROOT}
    if args.against is not None:
        checkouts["--against"] = args.against.resolve()
    best: dict[str, dict[str, float]] = {name: {} for name in checkouts}
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump([maximal_profile(n) for n in range(args.profiles)], f)
        f.flush()
        for _ in range(args.rounds):
            for name, checkout in checkouts.items():
                for key, value in measure(checkout, f.name).items():
                    best[name][key] = min(best[name].get(key, value), value)
    print(f"\nCPU per maximal profile, best of {args.rounds} rounds x {args.profiles} profiles:")
    for name, figures in best.items():
        print(
            f"  {name:14}  profile_from_dict {figures['read'] * 1e3:6.3f} ms   "
            f"profile_to_dict {figures['write'] * 1e3:6.3f} ms"
        )
    if args.against is not None:
        mine, other = best["this checkout"], best["--against"]
        print(
            f"  ratio (this / --against): read {mine['read'] / other['read']:.2f}, write "
            f"{mine['write'] / other['write']:.2f}, both "
            f"{(mine['read'] + mine['write']) / (other['read'] + other['write']):.2f}"
        )


if __name__ == "__main__":
    main()
