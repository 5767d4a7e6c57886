"""A realistic synthetic day of hand history for ``cpsettle audit``, with an answer key.

    python examples/generate_history.py OUT.jsonl [--key KEY.json] [--hands 2000] [--seed 7]
                                        [--mistakes 24] [--invalid 8] [--tables 12]

Deterministic for a seed. Twelve tables by default, every preset at least once, at stakes from
25 to 1000 minor units a point, two of them with a house rake laid over the preset and one
two-four table with stack caps switched on. Each table keeps its players (who come and go),
their stacks (buy-ins of 8-60 points, rebuys when short, the settled results of every hand), a
moving button, and dealers who rotate between tables in downs of 20-35 hands. Players arrange
their 13 cards sensibly, now and then foul, surrender where the rules allow it, declare the
naturals they hold, and in OFC enter and stay in Fantasyland (dealt 14-17 cards, the extras are
the hand's dead cards).

Every line is a SettleRequest JSON plus ``recordedPayouts`` (docs/BULK_AUDIT.md). The recorded
payouts of a correct hand are the true settlement (the engine, in process). Then the planted
dealer mistakes (a wrong amount, an overpaid winner, an under-collected loser, two players'
payouts swapped, one pair paid the wrong way round, a forgotten surrender, a stack cap ignored,
royalties missed, the rake not taken) change the recorded payouts of a few hands, and a few
lines are made invalid (a card used twice, a mistyped card, four cards in a front row, a line
cut short, an unknown field, an unknown preset, a player missing from the payouts, an amount
that is not a number). The answer key lists exactly those lines.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cpsettle_service.profile_files import builtin_registry

ROOT = Path(__file__).resolve().parents[1]
try:
    import cpsettle_service.domain.settle.settlement  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "service"))

from cpsettle_service.domain.cards.cards import CANONICAL, parse_cards  # noqa: E402
from cpsettle_service.domain.cards.hands import evaluate_five, evaluate_three  # noqa: E402
from cpsettle_service.domain.naturals.catalogue import naturals_held  # noqa: E402
from cpsettle_service.domain.profile.model import RuleProfile  # noqa: E402
from cpsettle_service.domain.settle import ItemKind, PairKind, Settlement, settle  # noqa: E402
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile  # noqa: E402

RECORDED_FIELD = "recordedPayouts"
DATE = "2026-11-29"

# (preset, unit value, players per hand, profile overrides): the day's tables, in order.
TABLES: tuple[tuple[str, int, tuple[int, ...], dict[str, Any] | None], ...] = (
    ("western", 100, (4, 4, 4, 3), None),
    ("eastern", 50, (4, 4, 4, 3), None),
    ("shisanshui", 200, (4, 4, 4, 3), None),
    ("classic-1-6", 100, (4, 4, 3), None),
    ("one-six", 25, (4, 4, 3, 2), None),
    ("one-two", 500, (4, 3, 2), None),
    ("two-four", 100, (4, 4, 3), {"caps": {"losses": True, "wins": True}}),
    ("ofc", 100, (3, 3, 2), None),
    ("ofc-descubierto", 200, (2, 3), None),
    (
        "western",
        1000,
        (4, 4, 3),
        {"rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 500, "commissionCap": 2500}},
    ),
    ("eastern", 100, (4, 4, 3), {"rake": {"mode": "RAKE_MODE_PER_PLAYER", "perPlayerFee": 25}}),
    ("shisanshui", 50, (4, 4, 4), None),
)

MISTAKE_KINDS = (
    "wrong-amount",
    "overpaid-winner",
    "undercollected-loser",
    "swapped-players",
    "pair-paid-backwards",
    "forgotten-surrender",
    "ignored-cap",
    "missed-royalties",
    "rake-not-taken",
)
INVALID_KINDS = (
    "duplicate-card",
    "mistyped-card",
    "four-card-front",
    "truncated-line",
    "unknown-field",
    "unknown-preset",
    "missing-payout",
    "amount-not-a-number",
)

DECK = list(CANONICAL)


# --------------------------------------------------------------------------- dealing


def _rows(cards: list[str]) -> dict[str, list[str]]:
    return {"front": cards[:3], "middle": cards[3:8], "back": cards[8:13]}


def sensible_arrangement(
    cards: list[str], rng: random.Random, tries: int = 12
) -> dict[str, list[str]]:
    """The strongest of a few random legal splits (what a casual player would set)."""
    cards = list(cards)
    best: tuple[int, list[str]] | None = None
    for _ in range(tries * 10):
        rng.shuffle(cards)
        f, m, b = evaluate_three(cards[:3]), evaluate_five(cards[3:8]), evaluate_five(cards[8:13])
        if m > b:
            cards[3:8], cards[8:13] = cards[8:13], cards[3:8]
            m, b = b, m
        if f > m:
            continue
        score = 4 * b.category + 2 * m.category + f.category + 3 * f.ranks[0]
        if best is None or score > best[0]:
            best = (score, list(cards))
        tries -= 1
        if tries <= 0:
            break
    if best is None:  # rows in deck order: weakest front, strongest back
        ordered = sorted(cards, key=DECK.index)
        return _rows(ordered)
    return _rows(best[1])


@dataclass
class Seat:
    player: str
    stack: int
    fantasyland_cards: int = 0  # OFC: cards dealt next hand when in Fantasyland


@dataclass
class TableState:
    table_id: str
    preset: str
    unit: int
    sizes: tuple[int, ...]
    overrides: dict[str, Any] | None
    profile: RuleProfile
    seats: dict[int, Seat] = field(default_factory=dict)
    hands: int = 0
    button: int = 0
    dealer: str = ""
    down_left: int = 0
    down: int = 0


class Day:
    def __init__(self, seed: int, tables: int) -> None:
        self.rng = random.Random(seed)
        self.registry = builtin_registry()
        self.next_player = 10_400
        self.dealers = [f"D{n:02d}" for n in range(1, 9)]
        self.next_dealer = 0
        self.tables: list[TableState] = []
        for i in range(tables):
            preset, unit, sizes, overrides = TABLES[i % len(TABLES)]
            profile = self.registry.get(preset)
            assert profile is not None, preset
            t = TableState(f"T{i + 1:02d}", preset, unit, sizes, overrides, profile)
            self.tables.append(t)

    def _new_player(self, t: TableState) -> Seat:
        self.next_player += self.rng.randrange(1, 40)
        return Seat(f"PL{self.next_player}", self.rng.randrange(8, 61) * t.unit)

    def _rotate_dealer(self, t: TableState) -> None:
        if t.down_left <= 0:
            t.dealer = self.dealers[self.next_dealer % len(self.dealers)]
            self.next_dealer += 1
            t.down_left = self.rng.randrange(20, 36)
            t.down += 1
        t.down_left -= 1

    def _seat_players(self, t: TableState) -> list[int]:
        size = self.rng.choice(t.sizes)
        max_seats = 3 if t.preset.startswith("ofc") else 6
        while len(t.seats) > size:  # someone gets up
            del t.seats[self.rng.choice(sorted(t.seats))]
        if t.seats and self.rng.random() < 0.04:
            del t.seats[self.rng.choice(sorted(t.seats))]
        while len(t.seats) < size:
            free = [s for s in range(1, max_seats + 1) if s not in t.seats]
            t.seats[self.rng.choice(free)] = self._new_player(t)
        for seat in t.seats.values():  # rebuy when short
            if seat.stack < 3 * t.unit:
                seat.stack = self.rng.randrange(8, 61) * t.unit
        seats = sorted(t.seats)
        later = [s for s in seats if s > t.button]
        t.button = later[0] if later else seats[0]
        return seats

    def _player(
        self, t: TableState, seat_no: int, cards: list[str], dead: list[str]
    ) -> dict[str, Any]:
        seat = t.seats[seat_no]
        p: dict[str, Any] = {"playerId": seat.player, "seat": seat_no}
        rng = self.rng
        profile = t.profile
        if seat.fantasyland_cards:
            p["inFantasyland"] = True
            rng.shuffle(cards)
            dead.extend(cards[13:])
            cards = cards[:13]
        playable = [
            n for n in naturals_held(parse_cards(cards)) if n in profile.naturals.by_natural
        ]
        if playable and rng.random() < 0.9:
            best = max(playable, key=lambda n: profile.naturals.by_natural[n].rank)
            p["cards"] = sorted(cards, key=DECK.index)
            p["declaredNatural"] = best.value
        elif profile.surrender.allowed and rng.random() < 0.06:
            p["surrender"] = True
        elif rng.random() < 0.03:
            rng.shuffle(cards)
            p["arrangement"] = _rows(cards)  # set in a hurry: often a foul
        else:
            p["arrangement"] = sensible_arrangement(cards, rng)
        p["stack"] = seat.stack
        return p

    def next_hand(self) -> tuple[TableState, dict[str, Any]]:
        rng = self.rng
        t = rng.choice(self.tables)
        self._rotate_dealer(t)
        seats = self._seat_players(t)
        t.hands += 1
        deck = DECK[:]
        rng.shuffle(deck)
        dead: list[str] = []
        players = []
        for seat_no in seats:
            n = t.seats[seat_no].fantasyland_cards or 13
            cards, deck = deck[:n], deck[n:]
            players.append(self._player(t, seat_no, cards, dead))
        request: dict[str, Any] = {
            "handId": f"{DATE}-{t.table_id}-{t.hands:05d}",
            "tableId": t.table_id,
            "roundId": f"{t.table_id}/down-{t.down:03d}",
            "dealerId": t.dealer,
            "preset": t.preset,
        }
        if t.overrides:
            request["profileOverrides"] = copy.deepcopy(t.overrides)
        request["unitValue"] = t.unit
        request["buttonSeat"] = t.button
        request["players"] = players
        if dead:
            request["deadCards"] = dead
        return t, request

    def settle(self, request: dict[str, Any]) -> Settlement:
        table, choice = request_from_dict(request)
        return settle(table, resolve_profile(choice, self.registry))

    def after(self, t: TableState, s: Settlement) -> None:
        """Stacks and Fantasyland move on with the settled result."""
        by_id = {seat.player: seat for seat in t.seats.values()}
        for p in s.players:
            seat = by_id[p.player_id]
            seat.stack += p.net_money
            seat.fantasyland_cards = (
                p.fantasyland.cards if p.fantasyland is not None and p.fantasyland.qualifies else 0
            )


# --------------------------------------------------------------------------- mistakes


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in patch.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _nets(s: Settlement) -> dict[str, int]:
    return {p.player_id: p.net_money for p in s.players}


def _with_overrides(day: Day, request: dict[str, Any], patch: dict[str, Any]) -> dict[str, int]:
    changed = dict(request)
    changed["profileOverrides"] = _merge(request.get("profileOverrides") or {}, patch)
    return _nets(day.settle(changed))


def plant_mistake(
    kind: str, day: Day, hand: dict[str, Any], rng: random.Random
) -> dict[str, int] | None:
    """The payouts a dealer who made this mistake would record, or None if it can't happen."""
    request, s = hand["request"], hand["settlement"]
    true = _nets(s)
    paid = dict(true)
    unit = s.unit_value
    ids = list(true)
    winners = [p for p in ids if true[p] > 0]
    losers = [p for p in ids if true[p] < 0]
    raked = s.rake > 0
    if kind == "wrong-amount":  # moved a few units too many from one player to another
        if not winners or not losers:
            return None
        k = rng.randrange(1, 4) * unit
        w, lo = rng.choice(winners), rng.choice(losers)
        paid[w] += k
        paid[lo] -= k
    elif kind == "overpaid-winner":
        if not winners:
            return None
        paid[rng.choice(winners)] += rng.randrange(1, 4) * unit
    elif kind == "undercollected-loser":
        if not losers:
            return None
        lo = rng.choice(losers)
        paid[lo] += min(rng.randrange(1, 4) * unit, -true[lo])
    elif kind == "swapped-players":
        pairs = [(a, b) for a in ids for b in ids if a < b and true[a] != true[b]]
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        paid[a], paid[b] = true[b], true[a]
    elif kind == "pair-paid-backwards":
        moved = [pr for pr in s.pairs if pr.paid > 0]
        if not moved or raked:
            return None
        pr = rng.choice(moved)
        paid[pr.payer] += 2 * pr.paid
        paid[pr.payee] -= 2 * pr.paid
    elif kind == "forgotten-surrender":
        pairs = [pr for pr in s.pairs if pr.kind is PairKind.SURRENDER and pr.paid > 0]
        if not pairs or raked:
            return None
        who = s.players[[p.surrendered for p in s.players].index(True)].player_id
        for pr in pairs:
            if who in (pr.payer, pr.payee):
                paid[pr.payer] += pr.paid
                paid[pr.payee] -= pr.paid
    elif kind == "ignored-cap":
        if not any(pr.cap for pr in s.pairs):
            return None
        paid = _with_overrides(day, request, {"caps": {"losses": False, "wins": False}})
    elif kind == "missed-royalties":
        if not any(i.kind is ItemKind.ROYALTIES and i.units for pr in s.pairs for i in pr.items):
            return None
        paid = _with_overrides(day, request, {"royalties": {"mode": "ROYALTY_MODE_NONE"}})
    elif kind == "rake-not-taken":
        if not raked:
            return None
        paid = {p.player_id: p.money_before_rake for p in s.players}
    else:
        raise ValueError(kind)
    return paid if paid != true else None


def make_invalid(kind: str, hand: dict[str, Any], rng: random.Random) -> str | None:
    """The line as a careless logger or a typo would have written it, or None if it can't."""
    request = copy.deepcopy(hand["request"])
    recorded = dict(hand["recorded"])
    arranged = [p for p in request["players"] if "arrangement" in p]
    if kind == "duplicate-card":
        holders = [p for p in request["players"] if "arrangement" in p or "cards" in p]
        if len(holders) < 2 or "arrangement" not in holders[1]:
            return None
        first = holders[0]
        card = (first["arrangement"]["back"] if "arrangement" in first else first["cards"])[0]
        holders[1]["arrangement"]["middle"][2] = card
    elif kind == "mistyped-card":
        if not arranged:
            return None
        row = rng.choice(arranged)["arrangement"]["back"]
        row[1] = row[1][0] + {"s": "x", "h": "j", "d": "f", "c": "v"}[row[1][1]]
    elif kind == "four-card-front":
        if not arranged:
            return None
        a = rng.choice(arranged)["arrangement"]
        a["front"].append(a["middle"].pop())
    elif kind == "unknown-field":
        request["stake"] = request.pop("unitValue")
    elif kind == "unknown-preset":
        request["preset"] = {"western": "westren", "eastern": "easten"}.get(
            request["preset"], request["preset"] + "s"
        )
    elif kind == "missing-payout":
        recorded.pop(rng.choice(sorted(recorded)))
    elif kind == "amount-not-a-number":
        pid = rng.choice(sorted(recorded))
        recorded[pid] = f"{recorded[pid] / 100:.2f}"  # currency units, not minor units
    elif kind != "truncated-line":
        raise ValueError(kind)
    request[RECORDED_FIELD] = recorded
    line = json.dumps(request, separators=(",", ":"))
    if kind == "truncated-line":
        line = line[: rng.randrange(len(line) // 3, 2 * len(line) // 3)]
    return line


# --------------------------------------------------------------------------- the day


def generate(
    hands: int = 2000, seed: int = 7, mistakes: int = 24, invalid: int = 8, tables: int = 12
) -> tuple[list[str], dict[str, Any]]:
    """(JSON lines, answer key). Line numbers in the key are 1-based."""
    if mistakes + invalid > hands:
        raise ValueError("more mistakes and invalid hands than hands")
    day = Day(seed, tables)
    history: list[dict[str, Any]] = []
    for _ in range(hands):
        t, request = day.next_hand()
        s = day.settle(request)
        day.after(t, s)
        history.append({"request": request, "settlement": s, "recorded": _nets(s)})

    rng = random.Random(seed * 7919 + 1)
    order = list(range(hands))
    rng.shuffle(order)
    used: set[int] = set()
    key_mistakes: list[dict[str, Any]] = []
    key_invalid: list[dict[str, Any]] = []
    lines: dict[int, str] = {}

    def place(kinds: tuple[str, ...], count: int, make: Any, out: list[dict[str, Any]]) -> None:
        remaining = [k for k in kinds]
        tried: set[tuple[str, int]] = set()
        i = 0
        while len(out) < count and remaining:
            kind = remaining[i % len(remaining)]
            for idx in order:
                if idx in used or (kind, idx) in tried:
                    continue
                tried.add((kind, idx))
                if make(kind, idx, out):
                    used.add(idx)
                    i += 1
                    break
            else:
                remaining.remove(kind)  # no hand of the day allows it

    def make_mistake(kind: str, idx: int, out: list[dict[str, Any]]) -> bool:
        hand = history[idx]
        paid = plant_mistake(kind, day, hand, rng)
        if paid is None:
            return False
        hand["recorded"] = paid
        true = _nets(hand["settlement"])
        r = hand["request"]
        out.append(
            {
                "line": idx + 1,
                "kind": kind,
                "handId": r["handId"],
                "tableId": r["tableId"],
                "dealerId": r["dealerId"],
                "expected": true,
                "paid": paid,
            }
        )
        return True

    def make_bad(kind: str, idx: int, out: list[dict[str, Any]]) -> bool:
        hand = history[idx]
        line = make_invalid(kind, hand, rng)
        if line is None:
            return False
        lines[idx] = line
        r = hand["request"]
        out.append(
            {
                "line": idx + 1,
                "kind": kind,
                "handId": r["handId"],
                "tableId": r["tableId"],
                "dealerId": r["dealerId"],
            }
        )
        return True

    place(INVALID_KINDS, invalid, make_bad, key_invalid)
    place(MISTAKE_KINDS, mistakes, make_mistake, key_mistakes)
    key_mistakes.sort(key=lambda m: m["line"])
    key_invalid.sort(key=lambda m: m["line"])

    out = []
    for idx, hand in enumerate(history):
        if idx in lines:
            out.append(lines[idx])
        else:
            record = dict(hand["request"])
            record[RECORDED_FIELD] = hand["recorded"]
            out.append(json.dumps(record, separators=(",", ":")))

    over = under = 0
    for m in key_mistakes:
        for pid, amount in m["paid"].items():
            d = amount - m["expected"][pid]
            over += max(d, 0)
            under += max(-d, 0)
    presets = sorted({t.preset for t in day.tables})
    key = {
        "generator": "examples/generate_history.py",
        "seed": seed,
        "hands": hands,
        "tables": [
            {
                "tableId": t.table_id,
                "preset": t.preset,
                "unitValue": t.unit,
                "profileOverrides": t.overrides,
                "hands": t.hands,
            }
            for t in day.tables
        ],
        "presets": presets,
        "mistakes": key_mistakes,
        "invalid": key_invalid,
        "totals": {
            "mistakes": len(key_mistakes),
            "invalid": len(key_invalid),
            "overpaid": over,
            "underpaid": under,
        },
    }
    return out, key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the history to write (JSON lines)")
    parser.add_argument("--key", help="answer key JSON (default: OUT with .key.json)")
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mistakes", type=int, default=24)
    parser.add_argument("--invalid", type=int, default=8)
    parser.add_argument("--tables", type=int, default=len(TABLES))
    args = parser.parse_args(argv)
    lines, key = generate(args.hands, args.seed, args.mistakes, args.invalid, args.tables)
    out = Path(args.out)
    key_path = Path(args.key) if args.key else out.with_suffix(".key.json")
    key["history"] = out.name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    key_path.write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")
    print(
        f"{out}: {len(lines)} hands at {len(key['tables'])} tables; "
        f"{len(key['mistakes'])} planted mistakes, {len(key['invalid'])} invalid lines "
        f"(answer key {key_path})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
