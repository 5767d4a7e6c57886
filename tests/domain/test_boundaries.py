"""Every threshold met exactly, and missed by the least: the equal case of each ``>=`` / ``>``.

A threshold ``>=`` turned into ``>`` passes every test that only meets thresholds with room to
spare. Here each one is met by exactly its own hand or amount, and missed by the one just below:
Fantasyland entry (QQ in the ofc presets, and a "three of a kind, fives" house threshold met by
555), the progressive entries, the stay condition of each row, every royalty entry by rank in
every preset, caps at exactly the stack, rake at exactly the commission cap, and the table's
range checks.

Tables are written in the documented JSON form of ``SettleRequest`` and settled with the public
``settle()`` / ``evaluate_hand()``; expected values come from the preset data files and the
rules, never from the engine.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.profile import presets
from cpsettle_service.domain.settle import HandEvaluation, Settlement, evaluate_hand, settle
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile
from cpsettle_service.profile_files import builtin_registry

REGISTRY = builtin_registry()
PRESETS = Path(presets.__file__).parent  # the preset data files: the profile JSON form
RANKS = "23456789TJQKA"
SUITS = "shdc"
VALUE = {r: i + 2 for i, r in enumerate(RANKS)}
CLASSES = [
    "HIGH_CARD",
    "PAIR",
    "TWO_PAIR",
    "THREE_OF_A_KIND",
    "STRAIGHT",
    "FLUSH",
    "FULL_HOUSE",
    "FOUR_OF_A_KIND",
    "STRAIGHT_FLUSH",
    "ROYAL_FLUSH",
]


def preset_json(name: str) -> dict[str, Any]:
    """A preset file, its royalty table's rows and classes by their short names (FRONT, PAIR)."""
    data: dict[str, Any] = json.loads((PRESETS / f"{name}.json").read_text("utf-8"))
    royalties = data["royalties"]
    royalties["mode"] = royalties["mode"].removeprefix("ROYALTY_MODE_")
    for e in royalties["table"]:
        e["row"] = e["row"].removeprefix("ROW_")
        e["handClass"] = e["handClass"].removeprefix("HAND_CLASS_")
    return data


def request(players: list[dict[str, Any]], preset: str = "ofc", **extra: Any) -> dict[str, Any]:
    return {"handId": "boundary", "preset": preset, "players": players, **extra}


def player(
    pid: str, seat: int, rows: tuple[list[str], list[str], list[str]], **extra: Any
) -> dict[str, Any]:
    front, middle, back = rows
    return {
        "playerId": pid,
        "seat": seat,
        "arrangement": {"front": front, "middle": middle, "back": back},
        **extra,
    }


def settle_json(req: dict[str, Any]) -> Settlement:
    table, choice = request_from_dict(req)
    return settle(table, resolve_profile(choice, REGISTRY))


def evaluate_json(
    rows: tuple[list[str], list[str], list[str]],
    preset: str = "ofc",
    in_fantasyland: bool = False,
    **extra: Any,
) -> HandEvaluation:
    """One hand evaluated alone (rows, royalties, foul, Fantasyland) under a preset."""
    p = player("P", 1, rows, **({"inFantasyland": True} if in_fantasyland else {}))
    table, choice = request_from_dict(request([p], preset, **extra))
    return evaluate_hand(table.players[0], resolve_profile(choice, REGISTRY))


# --------------------------------------------------------------------------- hands by class


def _cards(ranks: str, suits: str) -> list[str]:
    return [r + s for r, s in zip(ranks, suits, strict=True)]


def _straight_ranks(top: str) -> str:
    if top == "5":
        return "5432A"
    i = RANKS.index(top)
    return RANKS[i - 4 : i + 1][::-1]


def _kickers(exclude: str, n: int, below: str | None = None) -> str:
    """``n`` distinct ranks not in ``exclude`` (below ``below`` if given), never a straight."""
    pool = [r for r in RANKS if r not in exclude and (below is None or VALUE[r] < VALUE[below])]
    for combo in itertools.combinations(pool, n):
        ranks = "".join(combo)
        return ranks[::-1]
    raise ValueError("no kickers")


def hand(cls: str, top: str, size: int) -> list[str] | None:
    """A hand of class ``cls`` whose main rank is ``top`` (None where no such hand exists)."""
    v = VALUE[top]
    if size == 3 and cls not in ("HIGH_CARD", "PAIR", "THREE_OF_A_KIND"):
        return None
    if cls == "HIGH_CARD":
        n = size - 1
        lower = [r for r in RANKS if VALUE[r] < v]
        for combo in itertools.combinations(lower, n):
            ranks = top + "".join(combo)[::-1]
            values = sorted({VALUE[r] for r in ranks})
            straight = size == 5 and (
                values[-1] - values[0] == 4 or ranks == "A5432"[:5] or set(ranks) == set("A2345")
            )
            if not straight:
                return _cards(ranks, "shdcs"[:size])
        return None
    if cls == "PAIR":
        return _cards(top * 2 + _kickers(top, size - 2), "shdcs"[:size])
    if cls == "TWO_PAIR":
        if v == 2:
            return None
        low = _kickers(top, 1, below=top)
        return _cards(top * 2 + low * 2 + _kickers(top + low, 1), "shdch")
    if cls == "THREE_OF_A_KIND":
        return _cards(top * 3 + _kickers(top, size - 3), "shdsh"[:size])
    if cls == "STRAIGHT":
        return None if v < 5 else _cards(_straight_ranks(top), "shdcs")
    if cls == "FLUSH":
        if v < 7:
            return None
        lower = [r for r in RANKS if VALUE[r] < v]
        for combo in itertools.combinations(lower, 4):
            ranks = top + "".join(combo)[::-1]
            values = sorted(VALUE[r] for r in ranks)
            if values[-1] - values[0] != 4 and set(ranks) != set("A2345"):
                return _cards(ranks, "hhhhh")
        return None
    if cls == "FULL_HOUSE":
        pair = _kickers(top, 1)
        return _cards(top * 3 + pair * 2, "shdsh")
    if cls == "FOUR_OF_A_KIND":
        return _cards(top * 4 + _kickers(top, 1), "shdcs")
    if cls == "STRAIGHT_FLUSH":
        return None if v < 5 or v == 14 else _cards(_straight_ranks(top), "ddddd")
    if cls == "ROYAL_FLUSH":
        return None if v != 14 else _cards("AKQJT", "ddddd")
    raise ValueError(cls)


def _free(used: set[str], ranks: str) -> list[str] | None:
    """Cards of ``ranks`` (distinct), not yet used, in at least two suits (never a flush)."""
    for suits in itertools.product(SUITS, repeat=len(ranks)):
        cards = [r + s for r, s in zip(ranks, suits, strict=True)]
        if len(set(suits)) > 1 and not used & set(cards):
            return cards
    return None


def _weak_front(used: set[str]) -> list[str]:
    for ranks in ("432", "532", "542", "632", "642", "732", "543", "643", "653", "743"):
        cards = _free(used, ranks)
        if cards is not None:
            return cards
    raise ValueError("no weak front")


def _strong_back(used: set[str]) -> list[str]:
    for top in "AKQJT9876":
        for suit in SUITS:
            cards = [r + suit for r in _straight_ranks(top)]
            if not used & set(cards):
                return cards
    raise ValueError("no straight flush left")


def arrangement(row: int, target: list[str]) -> tuple[list[str], list[str], list[str]]:
    """A legal arrangement with ``target`` in row ``row`` (0 front, 1 middle, 2 back); the other
    rows are a weak front, quads or a weak middle, and a straight flush at the back."""
    used = set(target)
    if row == 0:
        for q in "AKQJT98765432":
            quads = [q + s for s in SUITS]
            if used & set(quads):
                continue
            back = _strong_back(used | set(quads))
            kicker = next(
                c
                for r in "23456789"
                for c in (r + s for s in SUITS)
                if c not in used | set(quads) | set(back)
            )
            return target, [*quads, kicker], back
    front = _weak_front(used)
    used |= set(front)
    if row == 1:
        return front, target, _strong_back(used)
    for ranks in ("75432", "76432", "86432", "87432", "97432", "86543", "87543", "97543"):
        middle = _free(used, ranks)
        if middle is not None:
            return front, middle, target
    raise ValueError("no weak middle")


# --------------------------------------------------------------------------- royalties


def expected_royalty(profile_json: dict[str, Any], row: str, cls: str, top: str) -> int:
    """From the preset's table: the entry for this rank, else the one for the class, else 0;
    a royal flush without an entry of its own pays as a straight flush (clarification 14.4)."""
    if profile_json["royalties"]["mode"] == "NONE":
        return 0
    entries = profile_json["royalties"]["table"]

    def lookup(c: str) -> int | None:
        for e in entries:
            if e["row"] == row and e["handClass"] == c and e.get("rank") == top:
                return int(e["units"])
        for e in entries:
            if e["row"] == row and e["handClass"] == c and e.get("rank") is None:
                return int(e["units"])
        return None

    units = lookup(cls)
    if units is None and cls == "ROYAL_FLUSH":
        units = lookup("STRAIGHT_FLUSH")
    return units or 0


def _boundary_cases() -> list[tuple[str, str, str, str]]:
    """(preset, row, class, rank) for every royalty entry: at its rank (or at the lowest rank of
    its class when it names none), one rank below, and the class just below at its highest."""
    cases: set[tuple[str, str, str, str]] = set()
    for path in sorted(PRESETS.glob("*.json")):
        name = path.stem
        data = preset_json(name)
        for e in data["royalties"]["table"]:
            row, cls = e["row"], e["handClass"]
            size = 3 if row == "FRONT" else 5
            tops = [r for r in RANKS if hand(cls, r, size) is not None]
            if not tops:
                continue
            at = e.get("rank") or tops[0]
            cases.add((name, row, cls, at))
            below = RANKS[RANKS.index(at) - 1] if at != "2" else None
            if below and hand(cls, below, size) is not None:
                cases.add((name, row, cls, below))
            if cls == "STRAIGHT_FLUSH":  # a royal flush pays as one unless it has its own entry
                cases.add((name, row, "ROYAL_FLUSH", "A"))
            lower = CLASSES[CLASSES.index(cls) - 1] if cls != "HIGH_CARD" else None
            if lower:
                lower_tops = [r for r in RANKS if hand(lower, r, size) is not None]
                if lower_tops:
                    cases.add((name, row, lower, lower_tops[-1]))
    return sorted(cases)


ROYALTY_CASES = _boundary_cases()
ROW_INDEX = {"FRONT": 0, "MIDDLE": 1, "BACK": 2}


def test_the_royalty_boundaries_cover_every_preset_with_royalties() -> None:
    with_royalties = {
        p.stem for p in PRESETS.glob("*.json") if preset_json(p.stem)["royalties"]["table"]
    }
    assert {c[0] for c in ROYALTY_CASES} == with_royalties
    assert ("ofc", "FRONT", "PAIR", "6") in ROYALTY_CASES  # 66 pays 1 ...
    assert ("ofc", "FRONT", "PAIR", "5") in ROYALTY_CASES  # ... 55 pays nothing
    assert ("ofc", "FRONT", "THREE_OF_A_KIND", "2") in ROYALTY_CASES  # 222, the lowest trips


@pytest.mark.parametrize(
    "preset,row,cls,top", ROYALTY_CASES, ids=["-".join(c) for c in ROYALTY_CASES]
)
def test_royalty_at_and_just_below_each_entry(preset: str, row: str, cls: str, top: str) -> None:
    i = ROW_INDEX[row]
    target = hand(cls, top, 3 if i == 0 else 5)
    assert target is not None
    result = evaluate_json(arrangement(i, target), preset)
    assert not result.fouled, (target, [r.hand.name for r in result.rows])
    got = result.rows[i]
    assert got.hand.hand_class == cls, (target, got.hand.name)
    assert got.royalty == expected_royalty(preset_json(preset), row, cls, top), got.hand.name


def test_ofc_front_pairs_and_trips_every_rank() -> None:
    """The ofc front table rank by rank: 55 nothing, 66 = 1 ... AA = 9, 222 = 10 ... AAA = 22."""
    got = {}
    for r in RANKS:
        for cls in ("PAIR", "THREE_OF_A_KIND"):
            target = hand(cls, r, 3)
            assert target is not None
            got[(cls, r)] = evaluate_json(arrangement(0, target), "ofc").rows[0].royalty
    assert [got[("PAIR", r)] for r in RANKS] == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert [got[("THREE_OF_A_KIND", r)] for r in RANKS] == list(range(10, 23))


# --------------------------------------------------------------------------- Fantasyland


def _fantasyland_cards(front: list[str], preset: str = "ofc", **extra: Any) -> int:
    result = evaluate_json(arrangement(0, front), preset, **extra)
    assert not result.fouled
    return result.fantasyland.cards if result.fantasyland and result.fantasyland.qualifies else 0


@pytest.mark.parametrize("preset", ["ofc", "ofc-descubierto"])
def test_fantasyland_entry_at_exactly_queens(preset: str) -> None:
    assert _fantasyland_cards(["Qs", "Qh", "2c"], preset) == 14  # QQ with the lowest kicker
    assert _fantasyland_cards(["Js", "Jh", "Ac"], preset) == 0  # JJ with the highest
    assert _fantasyland_cards(["As", "Kh", "Qc"], preset) == 0  # the best high card


@pytest.mark.parametrize("preset", ["ofc", "ofc-descubierto"])
def test_fantasyland_progressive_entries_at_exactly_their_hand(preset: str) -> None:
    # progressive QQ 14 / KK 15 / AA 16 / trips 17: each met by exactly its own hand
    assert _fantasyland_cards(["Qs", "Qh", "Ac"], preset) == 14  # QQ, the best QQ: not 15
    assert _fantasyland_cards(["Ks", "Kh", "2c"], preset) == 15
    assert _fantasyland_cards(["Ks", "Kh", "Ac"], preset) == 15
    assert _fantasyland_cards(["As", "Ah", "2c"], preset) == 16
    assert _fantasyland_cards(["As", "Ah", "Kc"], preset) == 16  # AAK: the best pair, not 17
    assert _fantasyland_cards(["2s", "2h", "2c"], preset) == 17  # 222: the lowest trips


def test_a_ranked_house_threshold_is_met_by_exactly_its_rank() -> None:
    """A house Fantasyland entry at "three of a kind, fives": 555 enters, 444 does not."""
    overrides = {
        "fantasyland": {
            "entry": {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "rank": "5"},
            "entryCards": 13,
            "progressive": [],
        }
    }
    assert _fantasyland_cards(["5s", "5h", "5c"], profileOverrides=overrides) == 13
    assert _fantasyland_cards(["4s", "4h", "4c"], profileOverrides=overrides) == 0
    assert _fantasyland_cards(["As", "Ah", "Kc"], profileOverrides=overrides) == 0
    # the same with a progressive step at "three of a kind, nines"
    overrides["fantasyland"]["progressive"] = [
        {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "rank": "9", "cards": 16},
        {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "rank": "5", "cards": 13},
    ]
    assert _fantasyland_cards(["9s", "9h", "9c"], profileOverrides=overrides) == 16
    assert _fantasyland_cards(["8s", "8h", "8c"], profileOverrides=overrides) == 13


def _stays(rows: tuple[list[str], list[str], list[str]], preset: str = "ofc", **extra: Any) -> int:
    result = evaluate_json(rows, preset, in_fantasyland=True, **extra)
    assert not result.fouled, [r.hand.name for r in result.rows]
    fl = result.fantasyland
    assert fl is not None  # an ofc preset plays Fantasyland
    return fl.cards if fl.qualifies else 0


# Stay in the ofc presets: trips in front, or a full house or better in the middle, or quads or
# better at the back; 14 cards. Each row at exactly its threshold (the lowest such hand), and
# at the best hand below it, with the other rows too weak to stay.
WEAK_FRONT = ["5h", "4d", "3c"]


@pytest.mark.parametrize("preset", ["ofc", "ofc-descubierto"])
def test_stay_front_at_exactly_trips(preset: str) -> None:
    straight = ["9s", "Th", "Jd", "Qc", "Kc"]
    assert (
        _stays(
            (["2s", "2h", "2d"], ["3s", "3h", "3d", "Ac", "Kd"], ["8s", "8h", "8d", "7c", "7d"]),
            preset,
        )
        == 14
    )
    assert _stays((["As", "Ah", "Kh"], straight, ["8s", "8h", "8d", "7c", "7d"]), preset) == 0


@pytest.mark.parametrize("preset", ["ofc", "ofc-descubierto"])
def test_stay_middle_at_exactly_a_full_house(preset: str) -> None:
    assert (
        _stays((WEAK_FRONT, ["2s", "2h", "2d", "3s", "3h"], ["As", "Ad", "Ac", "Ks", "Kd"]), preset)
        == 14
    )  # 22233: the lowest FH
    assert (
        _stays((WEAK_FRONT, ["As", "Ks", "Qs", "Js", "9s"], ["Ah", "Kh", "Qh", "Jh", "9h"]), preset)
        == 0
    )  # the best flush, twice


@pytest.mark.parametrize("preset", ["ofc", "ofc-descubierto"])
def test_stay_back_at_exactly_quads(preset: str) -> None:
    assert (
        _stays((WEAK_FRONT, ["As", "Ks", "Qs", "Js", "9s"], ["2s", "2h", "2d", "2c", "3s"]), preset)
        == 14
    )  # 2222: the lowest quads
    assert (
        _stays((WEAK_FRONT, ["Qs", "Js", "9s", "8s", "7s"], ["As", "Ah", "Ad", "Ks", "Kh"]), preset)
        == 0
    )  # AAAKK: the best full house


def test_each_stay_row_counts_on_its_own_under_a_house_profile() -> None:
    """Stay thresholds raised per row by an override: each met exactly, and missed just below."""
    overrides = {
        "fantasyland": {
            "stay": {
                "front": {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "rank": "Q"},
                "middle": {"handClass": "HAND_CLASS_FULL_HOUSE", "rank": "K"},
                "back": {"handClass": "HAND_CLASS_STRAIGHT_FLUSH", "rank": "9"},
            },
            "stayCards": 15,
        }
    }
    # front QQQ stays; JJJ does not (middle and back below their thresholds)
    assert (
        _stays(
            (["Qs", "Qh", "Qd"], ["Qc", "Jc", "9c", "8c", "2c"], ["As", "Ah", "Ad", "Ac", "Kh"]),
            profileOverrides=overrides,
        )
        == 15
    )
    assert (
        _stays(
            (["Js", "Jh", "Jd"], ["Qc", "Jc", "9c", "8c", "2c"], ["As", "Ah", "Ad", "Ac", "Kh"]),
            profileOverrides=overrides,
        )
        == 0
    )
    # middle KKK22 stays; QQQAA does not
    assert (
        _stays(
            (WEAK_FRONT, ["Ks", "Kh", "Kd", "2s", "2h"], ["As", "Ah", "Ad", "Ac", "Kc"]),
            profileOverrides=overrides,
        )
        == 15
    )
    assert (
        _stays(
            (WEAK_FRONT, ["Qs", "Qh", "Qd", "As", "Ah"], ["Ad", "Ac", "Kd", "Kc", "Ks"]),
            profileOverrides=overrides,
        )
        == 0
    )
    # back 9-high straight flush stays; 8-high does not
    assert (
        _stays(
            (WEAK_FRONT, ["As", "Ah", "Kd", "Kc", "Qs"], ["5c", "6c", "7c", "8c", "9c"]),
            profileOverrides=overrides,
        )
        == 15
    )
    assert (
        _stays(
            (WEAK_FRONT, ["As", "Ah", "Kd", "Kc", "Qs"], ["4c", "5c", "6c", "7c", "8c"]),
            profileOverrides=overrides,
        )
        == 0
    )


# --------------------------------------------------------------------------- caps and rake

# Two legal hands: A scoops B in the ofc-free "western" preset (1-6: 3 rows + 3 scoop = 6 units).
WINNER = (["As", "Ad", "2c"], ["Kc", "Kd", "Kh", "2h", "2s"], ["Th", "Jh", "Qh", "Kh", "9h"])
LOSER = (["3h", "4c", "7c"], ["8c", "8d", "9c", "9d", "Tc"], ["Qc", "Qd", "Qs", "Jc", "Jd"])


def _two(**b_extra: Any) -> list[dict[str, Any]]:
    winner = (["As", "Ad", "2c"], ["6h", "6d", "6c", "2h", "2s"], ["Th", "Jh", "Qh", "Kh", "9h"])
    return [player("A", 1, winner), player("B", 2, LOSER, **b_extra)]


def _scoop_units() -> int:
    s = settle_json(request(_two(), "western", unitValue=1))
    return s.player("A").net_units


def test_a_loss_capped_at_exactly_the_stack_is_not_cut() -> None:
    units = _scoop_units()
    assert units > 0
    owed = units * 100
    at = settle_json(request(_two(stack=owed), "western"))
    pair = at.pairs[0]
    assert (pair.owed, pair.paid, pair.cap) == (owed, owed, "")
    below = settle_json(request(_two(stack=owed - 1), "western"))
    pair = below.pairs[0]
    assert (pair.owed, pair.paid, pair.cap) == (owed, owed - 1, "PAYER_STACK")
    assert below.player("B").net_money == -(owed - 1)
    zero = settle_json(request(_two(stack=0), "western"))
    assert (zero.pairs[0].paid, zero.pairs[0].cap) == (0, "PAYER_STACK")


def test_a_win_capped_at_exactly_the_winners_stack_is_not_cut() -> None:
    owed = _scoop_units() * 100
    players = _two()
    players[0]["stack"] = owed
    pair = settle_json(request(players, "western")).pairs[0]
    assert (pair.paid, pair.cap) == (owed, "")
    players[0]["stack"] = owed - 1
    pair = settle_json(request(players, "western")).pairs[0]
    assert (pair.paid, pair.cap) == (owed - 1, "PAYEE_STACK")
    players[1]["stack"] = owed - 1
    pair = settle_json(request(players, "western")).pairs[0]
    assert (pair.paid, pair.cap) == (owed - 1, "PAYER_STACK+PAYEE_STACK")


def _commission(bps: int, cap: int, unit_value: int) -> tuple[int, int]:
    """(the winner's rake, his money before rake) under a commission."""
    overrides = {
        "rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": bps, "commissionCap": cap}
    }
    s = settle_json(request(_two(), "western", unitValue=unit_value, profileOverrides=overrides))
    a = s.player("A")
    assert s.player("B").rake == 0  # the loser pays no commission
    assert a.net_money == a.money_before_rake - a.rake
    return a.rake, a.money_before_rake


def test_commission_at_exactly_its_cap() -> None:
    units = _scoop_units()
    won = units * 100
    bps = 500  # 5 %
    commission = won * bps // 10_000
    assert commission * 10_000 == won * bps, "pick a stake where the commission is whole"
    assert _commission(bps, commission, 100) == (commission, won)  # exactly the cap
    assert _commission(bps, commission - 1, 100) == (commission - 1, won)  # cut by one
    assert _commission(bps, commission + 1, 100) == (commission, won)  # under the cap
    assert _commission(bps, 0, 100) == (commission, won)  # 0: no cap


def test_commission_rounds_down_to_the_minor_unit() -> None:
    units = _scoop_units()
    # unit value 1: won = units minor units; 1 bps of that is below one minor unit
    assert _commission(1, 0, 1) == (0, units)
    won = units * 10_000
    assert _commission(1, 0, 10_000) == (won // 10_000, won)
    assert _commission(9_999, 0, 1) == (units * 9_999 // 10_000, units)


def test_commission_capped_at_exactly_one_minor_unit() -> None:
    units = _scoop_units()
    assert units * 100 * 500 // 10_000 > 1
    assert _commission(500, 1, 100) == (1, units * 100)


def test_a_commission_on_exactly_one_minor_unit_won() -> None:
    """A 100 % commission (the most a profile allows) on a win cut to 1 by the loser's stack."""
    overrides = {"rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 10_000}}
    s = settle_json(request(_two(stack=1), "western", unitValue=1, profileOverrides=overrides))
    a = s.player("A")
    assert (a.money_before_rake, a.rake, a.net_money) == (1, 1, 0)


def test_a_commission_without_caps_is_taken_from_units_times_the_stake() -> None:
    """Caps off: the winner's money is his net units x the unit value (nothing is tracked as
    received), and the commission is a whole number of minor units of it."""
    overrides = {
        "rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 500},
        "caps": {"losses": False, "wins": False},
    }
    units = _scoop_units()
    s = settle_json(request(_two(), "western", unitValue=100, profileOverrides=overrides))
    a = s.player("A")
    assert (a.money_before_rake, a.rake) == (units * 100, units * 100 * 500 // 10_000)
    assert type(a.rake) is int and type(a.net_money) is int


def test_per_player_fee_at_exactly_the_stack() -> None:
    overrides = {
        "rake": {"mode": "RAKE_MODE_PER_PLAYER", "perPlayerFee": 50},
        "caps": {"losses": False, "wins": False},
    }
    s = settle_json(request(_two(stack=50), "western", profileOverrides=overrides))
    assert s.player("B").rake == 50
    s = settle_json(request(_two(stack=49), "western", profileOverrides=overrides))
    assert s.player("B").rake == 49
    assert s.rake == 50 + 49


# --------------------------------------------------------------------------- table limits


def _violations(req: dict[str, Any]) -> list[str]:
    try:
        settle_json(req)
    except InvalidInput as e:
        return [v.field for v in e.violations]
    return []


def test_player_count_limits() -> None:
    deck = [r + s for r in RANKS for s in SUITS]
    hands = [(deck[i : i + 3], deck[i + 3 : i + 8], deck[i + 8 : i + 13]) for i in range(0, 52, 13)]

    def players(n: int) -> list[dict[str, Any]]:
        return [player(f"p{i}", i + 1, hands[i]) for i in range(n)]

    assert _violations(request(players(2), "western")) == []
    assert _violations(request(players(4), "western")) == []
    assert _violations(request(players(1), "western")) != []
    five = [*players(4), {"playerId": "p5", "seat": 5, "surrender": True}]
    assert _violations(request(five, "western")) != []


def test_unit_value_limits() -> None:
    from cpsettle_service.domain.profile.model import MAX_UNIT_VALUE

    assert _violations(request(_two(), "western", unitValue=1)) == []
    assert _violations(request(_two(), "western", unitValue=MAX_UNIT_VALUE)) == []
    assert _violations(request(_two(), "western", unitValue=0)) == ["unitValue"]
    assert _violations(request(_two(), "western", unitValue=MAX_UNIT_VALUE + 1)) == ["unitValue"]


def test_seat_stack_and_button_at_zero_are_legal() -> None:
    players = _two(stack=0)
    players[0]["seat"] = 0
    assert _violations(request(players, "western", buttonSeat=0)) == []
    players[1]["stack"] = -1
    assert _violations(request(players, "western")) != []
    players = _two()
    players[0]["seat"] = -1
    assert _violations(request(players, "western")) != []
    assert _violations(request(_two(), "western", buttonSeat=-1)) != []


def test_player_id_length_limit() -> None:
    players = _two()
    players[0]["playerId"] = "x" * 64
    assert _violations(request(players, "western")) == []
    players[0]["playerId"] = "x" * 65
    assert _violations(request(players, "western")) != []


def test_boundaries_here_do_not_share_state() -> None:
    """The helpers copy what they are given (a case must not leak into the next)."""
    a = _two()
    b = copy.deepcopy(a)
    settle_json(request(a, "western"))
    assert a == b


# --------------------------------------------------------------------------- caps by basis

# LOSER < MIDDLE_HAND < STRONG row by row (pairs 2s < 3s; two pair < trips < quads; full house <
# quads < straight flush), 39 distinct cards.
MIDDLE_HAND = (["2d", "2s", "5c"], ["5h", "5d", "5s", "6c", "4h"], ["Kc", "Kd", "Ks", "Kh", "2h"])
STRONG = (["3c", "3d", "4d"], ["As", "Ah", "Ad", "Ac", "2c"], ["6s", "7s", "8s", "9s", "Ts"])


def _three(
    stacks: dict[str, int | None], basis: str, losses: bool, wins: bool
) -> dict[tuple[str, str], tuple[int, str]]:
    """Weak A (seat 1) < middling B (seat 2) < strong C (seat 3), button 1: the pairs are
    settled (A,B), (A,C), (B,C), so B first receives from A, then pays C. Each pair is a sweep
    of 4 units in western (3 rows + 1); unit value 100: 400 a pair."""
    players = [player("A", 1, LOSER), player("B", 2, MIDDLE_HAND), player("C", 3, STRONG)]
    for p in players:
        if stacks.get(p["playerId"]) is not None:
            p["stack"] = stacks[p["playerId"]]
    overrides = {"caps": {"basis": f"CAP_BASIS_{basis}", "losses": losses, "wins": wins}}
    s = settle_json(request(players, "western", buttonSeat=1, profileOverrides=overrides))
    assert [(pr.first, pr.second, pr.units) for pr in s.pairs] == [
        ("A", "B", -4),
        ("A", "C", -4),
        ("B", "C", -4),
    ], "the hands must sweep in order"
    return {(pr.first, pr.second): (pr.paid, pr.cap) for pr in s.pairs}


def test_the_three_hands_are_what_the_cap_tests_need() -> None:
    assert _three({}, "HAND_START", True, True) == {
        ("A", "B"): (400, ""),
        ("A", "C"): (400, ""),
        ("B", "C"): (400, ""),
    }


@pytest.mark.parametrize("basis", ["HAND_START", "CURRENT_STACK"])
def test_a_loser_may_pay_out_of_what_he_won_earlier_in_the_hand(basis: str) -> None:
    # B starts with 100, receives 400 from A, then owes C 400: room 100 + 400 - 0 = 500.
    paid = _three({"B": 100}, basis, True, False)
    assert paid[("B", "C")] == (400, "")
    # with 0 he can still pay out of the 400 he won, exactly: 0 + 400 = 400
    assert _three({"B": 0}, basis, True, False)[("B", "C")] == (400, "")


@pytest.mark.parametrize("basis", ["HAND_START", "CURRENT_STACK"])
def test_caps_apply_only_to_the_sides_the_profile_caps(basis: str) -> None:
    # losses capped, wins not: a short payer is cut, a short payee is paid in full
    assert _three({"A": 100}, basis, True, False)[("A", "B")] == (100, "PAYER_STACK")
    assert _three({"B": 100}, basis, True, False)[("A", "B")] == (400, "")
    # wins capped, losses not: the other way round
    assert _three({"A": 100}, basis, False, True)[("A", "B")] == (400, "")
    assert _three({"B": 100}, basis, False, True)[("A", "B")] == (100, "PAYEE_STACK")


def test_a_winners_cap_by_basis() -> None:
    """C starts with 500 and wins 400 from A, then 400 from B. At the hand's start basis he may
    win at most his starting stack in all (500: 100 more after A); on the current stack he may
    win up to what he holds now (500 + 400)."""
    hand_start = _three({"C": 500}, "HAND_START", False, True)
    assert hand_start[("A", "C")] == (400, "")
    assert hand_start[("B", "C")] == (100, "PAYEE_STACK")
    current = _three({"C": 500}, "CURRENT_STACK", False, True)
    assert current[("B", "C")] == (400, "")


@pytest.mark.parametrize("basis", ["HAND_START", "CURRENT_STACK"])
def test_a_loser_pays_later_pairs_out_of_what_is_left(basis: str) -> None:
    # A starts with 500, pays B 400 in full, then owes C 400 with 500 - 400 = 100 left.
    assert _three({"A": 500}, basis, True, False) == {
        ("A", "B"): (400, ""),
        ("A", "C"): (100, "PAYER_STACK"),
        ("B", "C"): (400, ""),
    }


# --------------------------------------------------------------------------- the money range

# 2**63 - 1 = 7 * 7 * 73 * 127 * 337 * 92737 * 649657. A western scoop of three rows of 10**6,
# a scoop bonus of 124326 and the majority bonus of 1 is 3,124,327 units, x7 (scoop
# multiplier) = 21,870,289 = 7 * 73 * 127 * 337 units; at a unit value of
# (2**63 - 1) / 21,870,289 = 421,730,688,463 (= 7 * 92737 * 649657) it is exactly 2**63 - 1.
MAX_MONEY = 2**63 - 1
EDGE_SCORING = {"scoring": {"rowUnit": 10**6, "scoopBonus": 124326, "scoopMultiplier": 7}}
EDGE_UNITS = 21_870_289
EDGE_VALUE = 421_730_688_463


def _refused(req: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises(InvalidInput) as e:
        settle_json(req)
    return [(v.field, v.reason, v.code.value) for v in e.value.violations]


def test_a_pair_owing_exactly_the_largest_amount_is_paid() -> None:
    assert EDGE_UNITS * EDGE_VALUE == MAX_MONEY
    s = settle_json(request(_two(), "western", unitValue=EDGE_VALUE, profileOverrides=EDGE_SCORING))
    pair = s.pairs[0]
    assert (pair.units, pair.owed, pair.paid) == (EDGE_UNITS, MAX_MONEY, MAX_MONEY)
    assert [p.net_money for p in s.players] == [MAX_MONEY, -MAX_MONEY]


def test_a_pair_owing_past_the_largest_amount_is_refused_by_name() -> None:
    owed = EDGE_UNITS * (EDGE_VALUE + 1)
    assert _refused(
        request(_two(), "western", unitValue=EDGE_VALUE + 1, profileOverrides=EDGE_SCORING)
    ) == [
        (
            "unitValue",
            f"B would owe A 21,870,289 units x 421,730,688,464 = {owed:,} minor units,"
            " beyond the 64-bit money range; lower the stake or the profile's multipliers",
            "other",
        )
    ]


def test_a_net_past_the_largest_amount_is_refused_by_name() -> None:
    """Three sweeps of 2**63 - 1 each: every pair fits, but A owes two of them and C wins two,
    both past the range; the first such player in settlement order (A) is named."""
    players = [player("A", 1, LOSER), player("B", 2, MIDDLE_HAND), player("C", 3, STRONG)]
    assert _refused(
        request(
            players, "western", buttonSeat=1, unitValue=EDGE_VALUE, profileOverrides=EDGE_SCORING
        )
    ) == [
        (
            "unitValue",
            f"A's net of {-2 * MAX_MONEY:,} minor units is beyond the 64-bit money "
            "range; lower the stake or the profile's multipliers",
            "other",
        )
    ]


def test_players_listed_out_of_seat_order_settle_in_seat_order() -> None:
    base = [player("A", 1, LOSER), player("B", 2, MIDDLE_HAND)]
    shuffled = [player("B", 2, MIDDLE_HAND), player("A", 1, LOSER)]
    for players in (base, shuffled):
        s = settle_json(request(players, "western", buttonSeat=1))
        assert list(s.order) == ["A", "B"]
        assert [(pr.first, pr.second) for pr in s.pairs] == [("A", "B")]
    three = [player("C", 9, STRONG), player("A", 1, LOSER), player("B", 5, MIDDLE_HAND)]
    assert list(settle_json(request(three, "western", buttonSeat=5)).order) == ["B", "C", "A"]
