"""Jokers and house naturals (RULES.md §16): the engine's worst case, searched for.

    python bench/bench_jokers.py [--seconds 120] [--seed 1] [--out DIR] [--base DIR]
                                 [--base-cap 60] [--tables 300] [--audit-hands 400]

1. The worst case. Starts from random and hand-built section-16 requests (two duplicating
   jokers in one row and in two rows; 32 house naturals using every clause kind, every rows
   clause, mixed classes; hands that make none of them, only the lowest, many) and hill-climbs
   (a card swapped, a joker moved, a natural's definition redrawn, the declaration changed)
   towards the costliest, a third of the time each for EvaluateArrangement, Settle, and Settle
   without jokers (every player detecting among 32 house naturals with mixed rows). The cost is
   the engine's CPU in this process (best of 3, the rows-clause cache emptied first); the worst
   requests found are written to OUT/worst-evaluate.json, OUT/worst-settle.json and
   OUT/worst-settle-no-jokers.json in the contract's JSON form (protobuf's JSON mapping of the
   request with its inline profile: what the CLI sends, what any client can send) for the
   server-side bench (``bench_hostile.py --worst-request``) to replay.
2. The median joker table and hand against a plain one in the same run: random 4-player
   tables under random section-16 profiles with jokers against plain western tables (settle),
   and the same hands evaluated alone (target: at most 2x).
3. ``cpsettle audit --local --workers 1`` tables/s on a joker history against a plain history
   of the same size, in the same run (target: joker at least half of plain). The joker
   history's 12 tables each keep their own house profile, as a house does; a history with a
   new profile every hand is audited too, for its figure (each hand's profile read anew).
4. With ``--base DIR`` (another checkout, say the code before #24): the worst requests timed
   there too, in a subprocess each, stopped after ``--base-cap`` seconds.

Prints figures and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for sub in ("service", "proto", "clients/python", ""):
    sys.path.insert(0, str(ROOT / sub))

from google.protobuf import json_format  # noqa: E402

from cpsettle.v1 import settlement_pb2 as pb  # noqa: E402
from cpsettle_client.client import request_from_json  # noqa: E402
from cpsettle_service.domain.cards.cards import CANONICAL, JOKER, parse_cards  # noqa: E402
from cpsettle_service.domain.naturals import rows as natural_rows  # noqa: E402
from cpsettle_service.domain.naturals.facts import hand_facts  # noqa: E402
from cpsettle_service.domain.profile.model import RuleProfile  # noqa: E402
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict  # noqa: E402
from cpsettle_service.domain.settle import settle  # noqa: E402
from cpsettle_service.domain.settle.evaluation import evaluate_hand  # noqa: E402
from cpsettle_service.domain.settle.jokers import NaturalSearch, allowed_cards  # noqa: E402
from cpsettle_service.domain.settle.table import (  # noqa: E402
    PlayerInput,
    request_from_dict,
    resolve_profile,
)
from cpsettle_service.profile_files import builtin_registry, load_preset  # noqa: E402
from tests.support.joker_cases import random_definition, random_rows  # noqa: E402
from tests.support.random_tables import legal_arrangement, random_table  # noqa: E402

REGISTRY = builtin_registry()
ROW_CLASSES = (None, "STRAIGHT", "FLUSH", "STRAIGHT_FLUSH")
EVERY_ROWS_CLAUSE = [
    (f, m, b)
    for f in ROW_CLASSES
    for m, b in combinations_with_replacement(ROW_CLASSES, 2)
    if f or m or b
]


# --------------------------------------------------------------------------- requests


class Case:
    """One section-16 request under search: a profile (its JSON form), the hand with jokers
    (13 cards in row order), the other players' hands, and what the joker hand declares."""

    def __init__(
        self, profile: dict[str, Any], cards: list[str], others: list[list[str]], declare: str
    ) -> None:
        self.profile = profile
        self.cards = cards
        self.others = others
        self.declare = declare  # "lowest": the lowest natural held; "first"; "" none
        self._built: RuleProfile | None = None

    def built(self) -> RuleProfile:
        if self._built is None:
            self._built = profile_from_dict(self.profile)
        return self._built

    def copy(self) -> Case:
        return Case(
            copy.deepcopy(self.profile),
            list(self.cards),
            [list(o) for o in self.others],
            self.declare,
        )

    def arrangement(self) -> dict[str, list[str]]:
        c = self.cards
        return {"front": c[:3], "middle": c[3:8], "back": c[8:]}

    def evaluate_request(self) -> dict[str, Any]:
        return {"profile": self.profile, "arrangement": self.arrangement()}

    def declared(self) -> str:
        p = self.built()
        names = p.naturals.best_first
        if not self.declare or not names:
            return ""
        if self.declare == "first":
            return names[0]
        if JOKER in self.cards:
            search = NaturalSearch(
                self.cards, allowed_cards(self.cards, p.deck.joker_duplicates), p
            )
            held = [n for n in names if search.holds(n)]
        else:
            facts = hand_facts(parse_cards(self.cards))
            held = [n for n in names if p.naturals.predicates[n](facts)]
        return held[-1] if held else names[-1]

    def settle_request(self) -> dict[str, Any]:
        players: list[dict[str, Any]] = [
            {"playerId": "J", "seat": 1, "arrangement": self.arrangement()}
        ]
        declared = self.declared()
        if declared:
            players[0]["declaredNatural"] = declared
        for i, other in enumerate(self.others):
            players.append(
                {
                    "playerId": f"P{i + 2}",
                    "seat": i + 2,
                    "arrangement": {"front": other[:3], "middle": other[3:8], "back": other[8:]},
                }
            )
        return {"handId": "bench-jokers", "profile": self.profile, "players": players}


def contract_json(request: dict[str, Any], message: Any) -> dict[str, Any]:
    """A request in the contract's JSON form: its profile written by the domain's writer (the
    enum values' wire names, ``ROW_CLASS_FLUSH``, where the search wrote the short names the
    profile reader also takes), parsed into the request message and written by protobuf's JSON
    mapping, as a client sends it."""
    request = {**request, "profile": profile_to_dict(profile_from_dict(request["profile"]))}
    return json_format.MessageToDict(request_from_json(request, message))


def cpu(fn: Callable[[], object], repeat: int = 3) -> float:
    """The best of ``repeat`` thread CPU times of ``fn`` (seconds), the rows cache emptied."""
    best = float("inf")
    for _ in range(repeat):
        natural_rows.fills.cache_clear()
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def evaluate_cost(case: Case, repeat: int = 3) -> float:
    p = case.built()
    c = tuple(case.cards)
    inp = PlayerInput("player", 0, c[:3], c[3:8], c[8:])
    return cpu(lambda: evaluate_hand(inp, p), repeat)


def settle_cost(case: Case, repeat: int = 3) -> float:
    request = case.settle_request()
    table, _ = request_from_dict(request)
    p = case.built()
    return cpu(lambda: settle(table, p), repeat)


# --------------------------------------------------------------------------- candidates


def base_profile(
    rng: random.Random, naturals: list[dict[str, Any]], jokers: int = 2
) -> dict[str, Any]:
    d = profile_to_dict(load_preset(rng.choice(["western", "eastern", "shisanshui", "ofc"])))
    if jokers:
        d["deck"] = {"jokers": jokers, "jokerDuplicates": True}
    d["naturals"] = {
        "table": naturals,
        "requireDeclaration": False,
        "equalRank": "NATURAL_TIE_COMPARE_CARDS",
        "quadsAsTwoPairs": rng.random() < 0.5,
    }
    d["ranking"] = {**d.get("ranking", {}), "suitOrderTiebreak": True}
    return d


def every_clause_naturals(rng: random.Random, jokers: int = 2) -> list[dict[str, Any]]:
    """32 house naturals: 32 of the 39 rows clauses, each with some other clause kinds."""
    out = []
    for i, classes in enumerate(rng.sample(EVERY_ROWS_CLAUSE, 32)):
        rows = {k: c for k, c in zip(("front", "middle", "back"), classes, strict=True) if c}
        d = random_definition(rng, jokers > 0, 0.0, jokers)
        d["rows"] = rows
        out.append(
            {
                "natural": f"HOUSE_{i}",
                "rank": rng.randrange(0, 40),
                "units": rng.randrange(1, 40),
                "definition": d,
            }
        )
    return out


def random_naturals(rng: random.Random, jokers: int = 2) -> list[dict[str, Any]]:
    out = []
    for i in range(32):
        d = random_definition(rng, jokers > 0, rng.choice((0.5, 1.0)), jokers)
        out.append(
            {
                "natural": f"HOUSE_{i}",
                "rank": rng.randrange(0, 40),
                "units": rng.randrange(1, 40),
                "definition": d,
            }
        )
    return out


def deal(
    rng: random.Random, joker_rows: tuple[int, int] | None, suited: bool = False, jokers: int = 2
) -> tuple[list[str], list[list[str]]]:
    """The joker hand (two jokers in these rows, or anywhere; none with ``jokers`` 0) and three
    other hands."""
    deck = list(CANONICAL)
    rng.shuffle(deck)
    if suited:  # most of one suit: straight flushes and flushes come close
        s = rng.choice("shdc")
        deck.sort(key=lambda c: (c[1] != s, rng.random()))
        own = deck[: rng.randrange(7, 12)]
        rest = deck[len(own) :]
        rng.shuffle(rest)
        deck = own + rest
    cards = deck[: 13 - jokers]
    rng.shuffle(cards)
    spans = ((0, 3), (3, 8), (8, 13))
    where: list[int] = []
    if jokers and joker_rows is None:
        where = rng.sample(range(13), 2)
    elif jokers and joker_rows is not None:
        for r in joker_rows:
            free = [i for i in range(*spans[r]) if i not in where]
            where.append(rng.choice(free))
    hand: list[str] = []
    it = iter(cards)
    for i in range(13):
        hand.append(JOKER if i in where else next(it))
    rest = deck[13 - jokers :]
    others = []
    for k in range(3):
        chunk = rest[13 * k : 13 * (k + 1)]
        a = legal_arrangement(chunk, rng)
        others.append(a["front"] + a["middle"] + a["back"])
    return hand, others


def candidates(rng: random.Random, n: int, jokers: int = 2) -> list[Case]:
    out = []
    for i in range(n):
        kind = i % 4
        naturals = every_clause_naturals(rng, jokers) if kind < 2 else random_naturals(rng, jokers)
        joker_rows = ((2, 2), (1, 2), None, (0, 2))[i % 4]
        cards, others = deal(rng, joker_rows, suited=i % 3 == 0, jokers=jokers)
        out.append(
            Case(
                base_profile(rng, naturals, jokers),
                cards,
                others,
                rng.choice(("lowest", "lowest", "first", "")),
            )
        )
    return out


def mutate(case: Case, rng: random.Random) -> Case:
    c = case.copy()
    roll = rng.random()
    if roll < 0.35:  # a standard card of the first hand swapped for one nobody (else another)
        taken = set(c.cards) | {x for o in c.others for x in o}
        free = [x for x in CANONICAL if x not in taken]
        i = rng.choice([i for i, x in enumerate(c.cards) if x != JOKER])
        if free:
            c.cards[i] = rng.choice(free)
        else:
            other = rng.choice(c.others)
            j = rng.randrange(13)
            c.cards[i], other[j] = other[j], c.cards[i]
    elif roll < 0.5 and JOKER in c.cards:  # a joker moved
        i = rng.choice([i for i, x in enumerate(c.cards) if x == JOKER])
        j = rng.randrange(13)
        c.cards[i], c.cards[j] = c.cards[j], c.cards[i]
    elif roll < 0.8:  # a natural redrawn
        table = c.profile["naturals"]["table"]
        k = rng.randrange(len(table))
        jokers = c.profile.get("deck", {}).get("jokers", 0)
        d = random_definition(rng, jokers > 0, 0.7, jokers)
        if rng.random() < 0.5:
            d["rows"] = random_rows(rng)
        table[k]["definition"] = d
    elif roll < 0.9:
        table = c.profile["naturals"]["table"]
        table[rng.randrange(len(table))]["rank"] = rng.randrange(0, 40)
    else:
        c.declare = rng.choice(("lowest", "first", ""))
    c._built = None
    return c


def search_worst(
    rng: random.Random, seconds: float, cost: Callable[[Case], float], label: str, jokers: int = 2
) -> tuple[Case, float, int]:
    """Random and hand-built candidates, then hill-climbing from the costliest few."""
    deadline = time.monotonic() + seconds
    pool: list[tuple[float, Case]] = []
    tried = 0
    for case in candidates(rng, 24, jokers):
        try:
            pool.append((cost(case), case))
        except Exception as e:  # a mutation may build an invalid profile: skip it
            print(f"  ({label}: skipped a candidate: {str(e)[:80]})")
        tried += 1
        if time.monotonic() > deadline:
            break
    pool.sort(key=lambda x: -x[0])
    pool = pool[:6]
    while time.monotonic() < deadline:
        i = min(int(rng.expovariate(1.0)), len(pool) - 1)
        child = mutate(pool[i][1], rng)
        try:
            c = cost(child)
        except Exception:
            continue
        tried += 1
        if c > pool[-1][0]:
            pool[-1] = (c, child)
            pool.sort(key=lambda x: -x[0])
    best_cost, best = pool[0]
    return best, best_cost, tried


# --------------------------------------------------------------------------- the median


def joker_table(rng: random.Random, house: dict[str, Any] | None = None) -> dict[str, Any]:
    """A random 4-player table under a random section-16 profile with jokers, or under the
    profile (``preset`` and ``profileOverrides``) of ``house``, a table this made before."""
    if house is not None:
        request = random_table(rng, 4, preset=house["preset"])
        request["profileOverrides"] = house["profileOverrides"]
        jokers = house["profileOverrides"]["deck"]["jokers"]
    else:
        request = random_table(rng, 4, preset=rng.choice(["western", "eastern", "shisanshui"]))
        jokers = rng.choice((1, 2))
        duplicates = rng.random() < 0.5
        naturals = []
        for i in range(8):
            naturals.append(
                {
                    "natural": f"HOUSE_{i}",
                    "rank": rng.randrange(0, 10),
                    "units": rng.randrange(1, 20),
                    "definition": random_definition(rng, duplicates, 0.5, jokers),
                }
            )
        request["profileOverrides"] = {
            "deck": {"jokers": jokers, "jokerDuplicates": duplicates},
            "naturals": {
                "table": naturals,
                "requireDeclaration": rng.random() < 0.5,
                "equalRank": "NATURAL_TIE_COMPARE_CARDS",
            },
        }
    players = request["players"]
    for _ in range(jokers):
        p = rng.choice(players)
        row = rng.choice(("front", "middle", "back"))
        cards = p["arrangement"][row]
        i = rng.randrange(len(cards))
        if cards[i] != JOKER:
            cards[i] = JOKER
    return request


def without_jokers(request: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The same table with each joker replaced by a card nobody holds (the profile kept)."""
    out = copy.deepcopy(request)
    held = {c for p in out["players"] for row in p["arrangement"].values() for c in row}
    free = [c for c in CANONICAL if c not in held]
    rng.shuffle(free)
    for p in out["players"]:
        for row in p["arrangement"].values():
            for i, c in enumerate(row):
                if c == JOKER:
                    row[i] = free.pop()
    return out


def median_part(rng: random.Random, tables: int) -> None:
    plain = [random_table(rng, 4, preset="western") for _ in range(tables)]
    jokers = [joker_table(rng) for _ in range(tables)]
    same = [without_jokers(r, rng) for r in jokers]

    def built(requests: list[dict[str, Any]]) -> list[tuple[Any, RuleProfile]]:
        out = []
        for r in requests:
            table, choice = request_from_dict(r)
            out.append((table, resolve_profile(choice, REGISTRY)))
        return out

    settle_times: dict[str, list[float]] = {"plain": [], "joker": [], "same": []}
    hand_times: dict[str, list[float]] = {"plain": [], "joker": [], "same": []}
    for name, requests in (("plain", plain), ("joker", jokers), ("same", same)):
        for n, (table, profile) in enumerate(built(requests)):
            settle(table, profile)  # warm the profile's plan, as a server's profile cache does
            settle_times[name].append(cpu(partial(settle, table, profile)))
            for i, p in enumerate(table.players):
                # a joker hand, or the same hand with its jokers replaced
                if name != "plain" and not any(
                    JOKER in row for row in jokers[n]["players"][i]["arrangement"].values()
                ):
                    continue
                inp = PlayerInput("p", 0, p.front, p.middle, p.back)
                hand_times[name].append(cpu(partial(evaluate_hand, inp, profile)))
    print(
        f"\nThe median table and hand ({tables} random 4-player tables each; jokers: random "
        "section-16 profiles, 1 or 2 jokers, 8 house naturals; 'no jokers': the same tables "
        "and profiles with each joker replaced by a card nobody holds):"
    )
    for label, times in (
        ("Settle, per table", settle_times),
        ("EvaluateArrangement, per hand", hand_times),
    ):
        mp = statistics.median(times["plain"])
        mj = statistics.median(times["joker"])
        ms = statistics.median(times["same"])
        print(
            f"  {label:<30} plain western {mp * 1e3:6.3f} ms   with jokers {mj * 1e3:6.3f} ms"
            f" ({mj / mp:4.2f}x; target <= 2x)   no jokers {ms * 1e3:6.3f} ms (jokers "
            f"{mj / ms:4.2f}x that)   worst with jokers {max(times['joker']) * 1e3:6.2f} ms"
        )


# --------------------------------------------------------------------------- audit --local


def history(rng: random.Random, hands: int, jokers: bool, new_profiles: bool = False) -> list[str]:
    """A recorded history of ``hands`` hands at 12 tables: plain preset tables, or tables with
    jokers under section-16 profiles, each table keeping its own house profile (or, with
    ``new_profiles``, a new profile every hand)."""
    houses = [joker_table(rng) for _ in range(12 if jokers and not new_profiles else 0)]
    lines = []
    for i in range(hands):
        request = (
            joker_table(rng, None if new_profiles else houses[i % 12])
            if jokers
            else random_table(rng, 4, preset=rng.choice(["western", "eastern", "shisanshui"]))
        )
        request["handId"] = f"h{i}"
        request["tableId"] = f"t{i % 12}"
        table, choice = request_from_dict(request)
        s = settle(table, resolve_profile(choice, REGISTRY))
        request["recordedPayouts"] = {p.player_id: p.net_money for p in s.players}
        lines.append(json.dumps(request))
    return lines


def audit_rate(path: Path, out: Path) -> float:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
    )
    cmd = [
        sys.executable,
        "-m",
        "cpsettle_client.cli",
        "audit",
        str(path),
        "--local",
        "--workers",
        "1",
        "--progress",
        "none",
        "--report",
        str(out),
    ]
    proc = subprocess.run(cmd, env=env, cwd=str(ROOT), capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"audit failed ({proc.returncode}): {proc.stderr[-2000:]}")
    report = json.loads(out.read_text())
    return float(report["handsPerSecond"])


def audit_part(rng: random.Random, hands: int, folder: Path) -> None:
    print(f"\ncpsettle audit --local --workers 1, {hands} hands each (same run):")
    rates = {}
    for name, with_jokers, new_profiles in (
        ("plain", False, False),
        ("joker", True, False),
        ("new", True, True),
    ):
        path = folder / f"{name}.jsonl"
        path.write_text("\n".join(history(rng, hands, with_jokers, new_profiles)) + "\n")
        rates[name] = audit_rate(path, folder / f"{name}-report.json")
    print(
        f"  plain history {rates['plain']:8,.0f} tables/s   joker history "
        f"{rates['joker']:8,.0f} tables/s   joker/plain {rates['joker'] / rates['plain']:4.2f}"
        " (target >= 0.5; 12 tables, each keeping its house profile)"
    )
    print(
        f"  joker history with a new profile every hand {rates['new']:8,.0f} tables/s "
        f"({rates['new'] / rates['plain']:4.2f} of plain: each hand's profile read anew)"
    )


# --------------------------------------------------------------------------- another checkout

_REPLAY = r"""
import json, sys, time
sys.path[:0] = [sys.argv[1] + "/service", sys.argv[1] + "/proto", sys.argv[1]]
try:  # the domain in wings (#25)
    from cpsettle_service.domain.settle import settle
    from cpsettle_service.domain.settle.evaluation import evaluate_hand
    from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile, PlayerInput
    from cpsettle_service.profile_files import builtin_registry
    registry = builtin_registry()
except ImportError:  # a checkout from before
    from cpsettle_service.domain.profile import ProfileRegistry
    from cpsettle_service.domain.table import request_from_dict, resolve_profile, PlayerInput
    from cpsettle_service.domain.settlement import settle
    from cpsettle_service.domain.evaluation import evaluate_hand
    registry = ProfileRegistry.builtin()
req = json.load(open(sys.argv[3]))
if sys.argv[2] == "settle":
    table, choice = request_from_dict(req)
    profile = resolve_profile(choice, registry)
    run = lambda: settle(table, profile)
else:
    table, choice = request_from_dict({"profile": req["profile"], "players": []})
    profile = resolve_profile(choice, registry)
    a = req["arrangement"]
    inp = PlayerInput("player", 0, tuple(a["front"]), tuple(a["middle"]), tuple(a["back"]))
    run = lambda: evaluate_hand(inp, profile)
t0 = time.thread_time(); run(); print(time.thread_time() - t0)
"""


def replay(source: Path, kind: str, request: Path, cap: float) -> str:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _REPLAY, str(source), kind, str(request)],
            capture_output=True,
            text=True,
            timeout=cap,
        )
    except subprocess.TimeoutExpired:
        return f"more than {cap:.0f} s (stopped)"
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip().splitlines()[-1][:100]}"
    return f"{float(proc.stdout.strip()) * 1e3:,.1f} ms"


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120, help="the worst-case search's time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="where the worst requests go")
    ap.add_argument("--base", type=Path, default=None, help="another checkout to replay them on")
    ap.add_argument("--base-cap", type=float, default=60)
    ap.add_argument("--tables", type=int, default=300)
    ap.add_argument("--audit-hands", type=int, default=400)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = args.out or Path(tempfile.mkdtemp(prefix="cpsettle-bench-jokers-"))
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}"
    )

    print(
        f"\nThe worst case, searched for {args.seconds:.0f} s (engine CPU in this process, "
        "best of 3):"
    )
    worst = {}
    searches = (
        ("evaluate", evaluate_cost, 2, "EvaluateArrangement"),
        ("settle", settle_cost, 2, "Settle"),
        ("settle-no-jokers", settle_cost, 0, "Settle, no jokers"),
    )
    for kind, cost, jokers, name in searches:
        case, _, tried = search_worst(rng, args.seconds / len(searches), cost, kind, jokers)
        measured = min(cost(case, 5) for _ in range(2))
        request = contract_json(
            *(
                (case.evaluate_request(), pb.EvaluateArrangementRequest())
                if kind == "evaluate"
                else (case.settle_request(), pb.SettleRequest())
            )
        )
        path = out / f"worst-{kind}.json"
        path.write_text(json.dumps(request, indent=1) + "\n")
        worst[kind] = path
        print(
            f"  {name:<20} worst found {measured * 1e3:6.2f} ms  ({tried} requests tried; "
            f"{len(json.dumps(request)):,} bytes: {path})"
        )
    if args.base is not None:
        print(f"\nThe same requests on {args.base} (capped at {args.base_cap:.0f} s), and here:")
        for kind, path in worst.items():
            how = "evaluate" if kind == "evaluate" else "settle"
            print(
                f"  {kind:<17} there {replay(args.base, how, path, args.base_cap):>28}   "
                f"here {replay(ROOT, how, path, args.base_cap):>12}"
            )

    median_part(rng, args.tables)
    if args.audit_hands:
        audit_part(rng, args.audit_hands, out)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
