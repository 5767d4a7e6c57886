"""Golden files: tables worked out by hand, arithmetic in each file's comment field.

Each case is settled by the engine in process (``settle``) and checked against the hand-worked
expectations: every player's listed fields, every pair in settlement order, the table's rake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpsettle_service.domain.settle import PairResult, Settlement, settle
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile
from cpsettle_service.profile_files import builtin_registry

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))
REGISTRY = builtin_registry()


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def settle_case(case: dict[str, Any]) -> Settlement:
    table, choice = request_from_dict(case["request"])
    return settle(table, resolve_profile(choice, REGISTRY))


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 44, "the four worked examples plus at least 40 hand-worked tables"
    for path in CASES:
        case = load(path)
        assert case["comment"], f"{path.name} must carry its arithmetic"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path: Path) -> None:
    case = load(path)
    result = settle_case(case)
    expected = case["expected"]
    got_players = {p.player_id: p for p in result.players}
    assert set(got_players) == set(expected["players"]), "every player is listed"
    for pid, want in expected["players"].items():
        p = got_players[pid]
        actual = {
            "netUnits": p.net_units,
            "netMoney": p.net_money,
            "rake": p.rake,
            "fouled": p.fouled,
            "natural": p.natural.value if p.natural else None,
            "surrendered": p.surrendered,
            "fantasylandCards": p.fantasyland.cards if p.fantasyland else 0,
            # RULES.md §16.3: what each joker of the rows stands for
            "jokers": [f"Xj as {c}" for r in p.rows for c in r.joker_cards],
        }
        for key, value in want.items():
            assert actual[key] == value, (
                f"{pid}.{key}: expected {value}, engine says {actual[key]}\n"
                + "\n".join(line for pair in result.pairs for line in _pair_lines(pair))
            )
    if "pairs" in expected:
        got = [[pr.first, pr.second, pr.units, pr.money_for_first] for pr in result.pairs]
        assert got == expected["pairs"]
    if "rake" in expected:
        assert result.rake == expected["rake"]
    # the currency the money is counted in: the request's, else the profile's, else XXX
    assert result.currency == expected.get("currency", "XXX")
    assert sum(p.net_money for p in result.players) + result.rake == 0


def _pair_lines(pair: PairResult) -> list[str]:
    return [r.text for r in pair.rows] + [i.text for i in pair.items] + [pair.text]


def _leaves(data: object, prefix: str = "") -> dict[str, str]:
    """Profile JSON leaves by path; lists and hand thresholds count as one value each."""
    if isinstance(data, dict) and "handClass" not in data:
        out: dict[str, str] = {}
        for key, value in data.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: json.dumps(data, sort_keys=True)}


def test_cases_touch_every_preset_and_every_profile_field() -> None:
    from cpsettle_service.domain.profile.parse import EXTENSION_DEFAULTS, profile_to_dict
    from cpsettle_service.profile_files import preset_names

    presets_used = set()
    values: dict[str, set[object]] = {}
    for path in CASES:
        request = load(path)["request"]
        _table, choice = request_from_dict(request)
        if choice.preset:
            presets_used.add(choice.preset)
        profile = resolve_profile(choice, REGISTRY)
        # The extension options are left out of the JSON form at their defaults: fill them in.
        leaves = {f: json.dumps(v, sort_keys=True) for f, v in EXTENSION_DEFAULTS.items()}
        leaves.update(_leaves(profile_to_dict(profile)))
        for field, value in leaves.items():
            values.setdefault(field, set()).add(value)
    assert presets_used == set(preset_names())
    # A field "is touched" when the cases settle under at least two different values of it.
    untouched = sorted(f for f, seen in values.items() if len(seen) < 2 and f not in ("version",))
    assert untouched == []


def test_a_pair_names_its_fouled_player() -> None:
    """``PairResult.fouled``: the fouled player of a FOUL pair (the first when both fouled),
    "" for any other kind; rows only where rows were compared."""

    def pairs(stem: str) -> dict[tuple[str, str], tuple[str, int, int]]:
        s = settle_case(load(next(p for p in CASES if p.stem.startswith(stem))))
        return {
            (pr.first, pr.second): (pr.fouled, len(pr.first_rows), len(pr.second_rows))
            for pr in s.pairs
        }

    # 102: B and A fouled, C did not
    assert pairs("102") == {
        ("B", "C"): ("B", 3, 3),
        ("B", "A"): ("B", 0, 0),
        ("C", "A"): ("A", 3, 3),
    }
    # 204: C fouled, D a natural, A and B surrendered: no pair is settled as a foul
    assert all(v == ("", 0, 0) for v in pairs("204").values())
    assert ("C", "D") in pairs("204")


# case: each player's Fantasyland answer (qualifies, cards, sentence), as the case's comment
# works it out: entry by the front, a stay by any row, none for a fouled hand.
FANTASYLAND = {
    "120": {
        "B": (False, 0, "B does not qualify for Fantasyland (pair of jacks, four kicker in front)"),
        "C": (False, 0, "C does not qualify for Fantasyland (fouled hand)"),
        "D": (False, 0, "D does not qualify for Fantasyland (pair of fives, jack kicker in front)"),
        "A": (
            True,
            14,
            "A qualifies for Fantasyland with pair of queens, two kicker in front — 14 cards",
        ),
    },
    "124": {
        "D": (False, 0, "D does not qualify for Fantasyland (high card, ace in front)"),
        "A": (False, 0, "A does not qualify for Fantasyland (pair of sixes, two kicker in front)"),
        "B": (
            True,
            14,
            "B stays in Fantasyland with full house, eights full of twos in the "
            "middle — 14 cards next hand",
        ),
        "C": (False, 0, "C leaves Fantasyland: no stay condition met"),
    },
    "119": {
        "A": (
            True,
            17,
            "A qualifies for Fantasyland with three of a kind, threes in front — 17 cards",
        ),
        "B": (
            True,
            16,
            "B qualifies for Fantasyland with pair of aces, queen kicker in front — 16 cards",
        ),
        "C": (
            True,
            15,
            "C qualifies for Fantasyland with pair of kings, four kicker in front — 15 cards",
        ),
    },
}


@pytest.mark.parametrize("stem", sorted(FANTASYLAND))
def test_fantasyland_says_who_plays_it_and_why(stem: str) -> None:
    s = settle_case(load(next(p for p in CASES if p.stem.startswith(stem))))
    got = {
        p.player_id: (p.fantasyland.qualifies, p.fantasyland.cards, p.fantasyland.text)
        for p in s.players
        if p.fantasyland is not None
    }
    assert got == FANTASYLAND[stem]
    assert all(type(q) is bool for q, _, _ in got.values())


def test_a_natural_arranged_as_rows_is_settled_without_rows() -> None:
    """A natural is settled on its 13 cards even when they were sent as an arrangement: no
    rows are evaluated for it (the cases below arrange a declared natural)."""
    arranged_naturals = 0
    for path in CASES:
        case = load(path)
        sent = {q["playerId"]: q for q in case["request"]["players"]}
        for p in settle_case(case).players:
            if p.status == "NATURAL" and "arrangement" in sent[p.player_id]:
                assert p.rows == (), (path.stem, p.player_id)
                arranged_naturals += 1
            elif p.status in ("REGULAR", "FOULED") and "arrangement" in sent[p.player_id]:
                assert len(p.rows) == 3, (path.stem, p.player_id)
    assert arranged_naturals >= 2
