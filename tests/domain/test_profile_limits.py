"""Every number a profile can set, at exactly its documented minimum and maximum (accepted) and
one beyond each (refused, with a violation naming the field): the equal case of each range
check, through the documented JSON form (``profileOverrides`` of a request)."""

from __future__ import annotations

from typing import Any

import pytest

from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.profile.model import MAX_UNIT_VALUE, RuleProfile
from cpsettle_service.domain.profile.parse import EXTENSION_DEFAULTS, profile_to_dict
from cpsettle_service.domain.reading.schema import lines
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile
from cpsettle_service.profile_files import builtin_registry

REGISTRY = builtin_registry()

# (path in the profile JSON form, minimum, maximum)
LIMITS = [
    ("scoring.homeRun.minPlayers", 2, 4),
    ("scoring.homeRun.multiplier", 1, 100),
    ("scoring.rowUnit", 0, 1_000_000),
    ("scoring.majorityBonus", 0, 1_000_000),
    ("scoring.scoopBonus", 0, 1_000_000),
    ("scoring.scoopMultiplier", 1, 100),
    ("fantasyland.entryCards", 13, 52),
    ("fantasyland.stayCards", 13, 52),
    ("foul.fixedUnits", 0, 1_000_000),
    ("surrender.units", 0, 1_000_000),
    ("money.unitValue", 1, MAX_UNIT_VALUE),
    ("rake.perPlayerFee", 0, 10**12),
    ("rake.commissionBps", 0, 10_000),
    ("rake.commissionCap", 0, 10**12),
    ("deck.jokers", 0, 2),
]


def _nested(path: str, value: Any) -> dict[str, Any]:
    *outer, last = path.split(".")
    out: dict[str, Any] = {last: value}
    for key in reversed(outer):
        out = {key: out}
    return out


def _resolve(overrides: dict[str, Any]) -> RuleProfile:
    _table, choice = request_from_dict(
        {"preset": "western", "profileOverrides": overrides, "players": []}
    )
    return resolve_profile(choice, REGISTRY)


def _read(profile_json: dict[str, Any], path: str) -> Any:
    if path in EXTENSION_DEFAULTS and path.split(".")[0] not in profile_json:
        return EXTENSION_DEFAULTS[path]  # left out of the JSON form at its default
    for key in path.split("."):
        profile_json = profile_json[key]
    return profile_json


def test_the_limits_are_every_declared_range() -> None:
    """LIMITS is written out here on purpose (a second, independent statement of the ranges);
    it must name every integer the profile declares outside its tables, with the same range."""
    declared = {
        (line.path, line.spec.minimum, line.spec.maximum)
        for line in lines(RuleProfile)
        if line.spec.kind in ("int32", "int64") and "[]" not in line.path
    }
    assert set(LIMITS) == declared


@pytest.mark.parametrize("path,low,high", LIMITS, ids=[p for p, _, _ in LIMITS])
def test_each_limit_is_inclusive_and_one_beyond_is_refused(path: str, low: int, high: int) -> None:
    for value in (low, high):
        assert _read(profile_to_dict(_resolve(_nested(path, value))), path) == value
    for value in (low - 1, high + 1):
        with pytest.raises(InvalidInput) as e:
            _resolve(_nested(path, value))
        fields = [v.field for v in e.value.violations]
        assert any(f.endswith(path.split(".")[-1]) for f in fields), fields


def test_a_progressive_entry_counts_cards_within_the_same_limits() -> None:
    def entry(cards: int) -> dict[str, Any]:
        return {
            "fantasyland": {
                "progressive": [{"handClass": "HAND_CLASS_PAIR", "rank": "Q", "cards": cards}]
            }
        }

    for cards in (13, 52):
        p = profile_to_dict(_resolve(entry(cards)))
        assert p["fantasyland"]["progressive"][0]["cards"] == cards
    for cards in (12, 53):
        with pytest.raises(InvalidInput):
            _resolve(entry(cards))


@pytest.mark.parametrize(
    "spelling,rank", [("10", "T"), ("T", "T"), ("t", "T"), ("q", "Q"), ("A", "A"), ("2", "2")]
)
def test_threshold_ranks_accept_each_spelling(spelling: str, rank: str) -> None:
    p = profile_to_dict(
        _resolve({"fantasyland": {"entry": {"handClass": "HAND_CLASS_PAIR", "rank": spelling}}})
    )
    assert p["fantasyland"]["entry"] == {"handClass": "HAND_CLASS_PAIR", "rank": rank}


@pytest.mark.parametrize(
    "entry,field,reason",
    [
        ({"handClass": "HAND_CLASS_PAIR", "rank": "1"}, "fantasyland.entry.rank", "must be a rank"),
        ({"handClass": "HAND_CLASS_PAIR", "rank": "Z"}, "fantasyland.entry.rank", "must be a rank"),
    ],
)
def test_a_bad_threshold_names_its_field(entry: dict[str, Any], field: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve({"fantasyland": {"entry": entry}})
    found = {v.field: v.reason for v in e.value.violations}
    assert any(f.endswith(field) and reason in r for f, r in found.items()), found


def test_an_inline_threshold_without_a_class_names_the_class() -> None:
    """Overrides merge into a preset (which has a class); an inline profile must say it."""
    ofc = REGISTRY.get("ofc")
    assert ofc is not None
    inline = profile_to_dict(ofc)
    inline["fantasyland"]["entry"] = {"rank": "Q"}
    _table, choice = request_from_dict({"profile": inline, "players": []})
    with pytest.raises(InvalidInput) as e:
        resolve_profile(choice, REGISTRY)
    found = {v.field: v.reason for v in e.value.violations}
    assert any(
        f.endswith("fantasyland.entry.handClass") and r == "is required" for f, r in found.items()
    ), found
