"""Benchmark: five-card evaluation from card strings, ours against treys, in one process.

    python bench/bench_eval.py [--hands 200000] [--rounds 7] [--seed 1]

Pre-generates random five-card hands as lists of card strings, then times the loop that calls
the public ``evaluate_five(cards)`` on each, and the same loop through treys's public
evaluate-from-strings (``Evaluator().evaluate([Card.new(s) for s in cards], [])``, the evaluator
built once, outside the timing). Rounds alternate between the two; the best round (least
disturbed by other load on the machine) and the median are printed, with the ratio. Also prints
Card-object and three-card figures and the import time of the module (a fresh interpreter).
Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import cpsettle_service.domain.cards.hands  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "service"))

from cpsettle_service.domain.cards.cards import DECK  # noqa: E402
from cpsettle_service.domain.cards.hands import evaluate_five, evaluate_three  # noqa: E402


def time_loop(fn: Callable[[Sequence[object]], object], hands: list) -> float:
    start = time.perf_counter()
    for h in hands:
        fn(h)
    return time.perf_counter() - start


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>12,.0f} evals/s  ({seconds / n * 1e9:6.0f} ns/eval)"


def import_times() -> tuple[float, float] | None:
    """(table build: hands after cards, whole import) in seconds, from a fresh interpreter."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); t0 = time.perf_counter(); "
        "import cpsettle_service.domain.cards; t1 = time.perf_counter(); "
        "import cpsettle_service.domain.cards.hands; t2 = time.perf_counter(); "
        "print(t2 - t1, t2 - t0)"
    )
    best: tuple[float, float] | None = None
    for _ in range(5):
        try:
            out = subprocess.run(
                [sys.executable, "-c", code, str(ROOT / "service")],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout.split()
        except (subprocess.SubprocessError, OSError):
            return best
        sample = (float(out[0]), float(out[1]))
        best = sample if best is None or sample[0] < best[0] else best
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    deck = [str(c) for c in DECK]
    hands = [rng.sample(deck, 5) for _ in range(args.hands)]
    n = len(hands)

    ours_fn = evaluate_five
    contenders: dict[str, Callable[[Sequence[object]], object]] = {"ours": ours_fn}
    try:
        from treys import Card as TreysCard
        from treys import Evaluator
    except ImportError:
        print("treys is not installed (pip install treys==0.1.8): no comparison")
    else:
        evaluator = Evaluator()
        new = TreysCard.new
        evaluate = evaluator.evaluate

        def treys_from_strings(cards: Sequence[str]) -> int:
            return evaluate([new(s) for s in cards], [])

        contenders["treys"] = treys_from_strings

    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():  # warm-up
        time_loop(fn, hands[:10_000])
    for _ in range(args.rounds):
        for name, fn in contenders.items():
            times[name].append(time_loop(fn, hands))

    cpu = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]}, {cpu} CPUs, load average {load:.2f}")
    print(f"{n:,} random five-card hands as lists of card strings, {args.rounds} rounds\n")
    for name, ts in times.items():
        print(f"{name:>6} best  {rate(n, min(ts))}")
        print(f"{name:>6} median{rate(n, statistics.median(ts))}")
    if "treys" in times:
        best_ratio = min(times["treys"]) / min(times["ours"])
        median_ratio = statistics.median(times["treys"]) / statistics.median(times["ours"])
        print(f"\nratio ours/treys: {best_ratio:.1f}x (best rounds), {median_ratio:.1f}x (medians)")

    card_hands = [[DECK[deck.index(s)] for s in h] for h in hands[:50_000]]
    t = min(time_loop(ours_fn, card_hands) for _ in range(3))
    print(f"\nevaluate_five from Card objects   {rate(len(card_hands), t)}")
    fronts = [h[:3] for h in hands]
    t = min(time_loop(evaluate_three, fronts) for _ in range(3))
    print(f"evaluate_three from card strings  {rate(n, t)}")

    imported = import_times()
    if imported is not None:
        build, whole = imported
        print(
            f"\nimport of hands (tables built) after cards: {build * 1000:.0f} ms; "
            f"cards + hands from cold: {whole * 1000:.0f} ms (best of 5)"
        )


if __name__ == "__main__":
    main()
