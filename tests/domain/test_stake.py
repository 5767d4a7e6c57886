"""The stake is the table's: one profile settles every stake, with one warm plan."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.profile.model import MAX_UNIT_VALUE, RuleProfile
from cpsettle_service.domain.settle import Settlement, settle
from cpsettle_service.domain.settle.table import request_from_dict, resolve_profile
from cpsettle_service.domain.settle.working import plan_for
from cpsettle_service.profile_files import builtin_registry
from tests.support.tables import table

REGISTRY = builtin_registry()


def settled(
    preset: str = "western", unit_value: int | None = None
) -> tuple[Settlement, RuleProfile]:
    request = table(preset) if unit_value is None else table(preset, unitValue=unit_value)
    t, choice = request_from_dict(request)
    profile = resolve_profile(choice, REGISTRY)
    return settle(t, profile), profile


def test_the_table_carries_the_stake_and_the_profile_its_default() -> None:
    default, profile = settled()
    assert profile.money.unit_value == 100  # western's house default
    assert default.unit_value == 100
    for stake in (1, 25, 7_000):
        s, p = settled(unit_value=stake)
        assert p is profile  # the stake did not make a new profile
        assert p.money.unit_value == 100
        assert s.unit_value == stake
        for mine, base in zip(s.pairs, default.pairs, strict=True):
            assert mine.units == base.units
            assert mine.owed == abs(mine.units) * stake
        for player, base_player in zip(s.players, default.players, strict=True):
            assert player.net_units == base_player.net_units
            assert player.net_money == player.net_units * stake  # no caps, no rake in western


def test_one_plan_serves_every_stake() -> None:
    _, profile = settled("ofc")
    plan = plan_for(profile)
    cached = len(plan.row_cache[2])
    assert cached  # ofc pays back-row royalties: the rows above are cached
    for stake in (3, 4, 5):
        assert settled("ofc", unit_value=stake)[1] is profile
    assert plan_for(profile) is plan and len(plan.row_cache[2]) == cached


@pytest.mark.parametrize("stake", [0, -5, MAX_UNIT_VALUE + 1])
def test_a_stake_out_of_range_is_invalid(stake: int) -> None:
    with pytest.raises(InvalidInput) as e:
        settled(unit_value=stake)
    (v,) = e.value.violations
    assert v.field == "unitValue" and f"got {stake}" in v.reason
