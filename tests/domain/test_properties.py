"""Hypothesis properties of settlement: balance, symmetry, card order, fouls, caps."""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.settle import Settlement, Status, settle
from cpsettle_service.domain.settle.table import ProfileChoice, request_from_dict, resolve_profile
from cpsettle_service.profile_files import builtin_registry, preset_names
from tests.support.random_tables import random_table

REGISTRY = builtin_registry()
PRESETS = list(preset_names())
SURRENDER_PRESETS = {"western", "eastern"}

overrides = st.fixed_dictionaries(
    {},
    optional={
        "caps": st.fixed_dictionaries(
            {
                "losses": st.booleans(),
                "wins": st.booleans(),
                "basis": st.sampled_from(["CAP_BASIS_HAND_START", "CAP_BASIS_CURRENT_STACK"]),
                "order": st.sampled_from(
                    ["CAP_ORDER_BUTTON_FIRST", "CAP_ORDER_LEFT_OF_BUTTON_FIRST"]
                ),
            }
        ),
        "rake": st.one_of(
            st.fixed_dictionaries(
                {"mode": st.just("RAKE_MODE_PER_PLAYER"), "perPlayerFee": st.integers(0, 300)}
            ),
            st.fixed_dictionaries(
                {
                    "mode": st.just("RAKE_MODE_COMMISSION"),
                    "commissionBps": st.integers(0, 10_000),
                    "commissionCap": st.integers(0, 1000),
                }
            ),
        ),
        "ranking": st.fixed_dictionaries(
            {
                "rowTie": st.sampled_from(["ROW_TIE_PUSH", "ROW_TIE_SUIT_OF_HIGHEST_CARD"]),
                "suitOrderTiebreak": st.booleans(),
            }
        ),
    },
)


@st.composite
def tables(draw: Any, stacks: bool | None = None) -> dict[str, Any]:
    preset = draw(st.sampled_from(PRESETS))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    request = random_table(
        rng,
        players=draw(st.integers(2, 4)),
        legal=draw(st.booleans()),
        preset=preset,
        stacks=draw(st.booleans()) if stacks is None else stacks,
        surrender_rate=0.2 if preset in SURRENDER_PRESETS else 0.0,
    )
    request["unitValue"] = draw(st.sampled_from([1, 25, 100, 500]))
    over = draw(overrides)
    if over:
        request["profileOverrides"] = over
    return request


def run(request: dict[str, Any]) -> Settlement:
    table, choice = request_from_dict(request)
    return settle(table, resolve_profile(choice, REGISTRY))


def by_id(s: Settlement) -> dict[str, Any]:
    return {p.player_id: (p.net_units, p.net_money, p.rake, p.status, p.fouled) for p in s.players}


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(tables())
def test_nets_plus_rake_sum_to_zero(request: dict[str, Any]) -> None:
    s = run(request)
    assert sum(p.net_money for p in s.players) + s.rake == 0
    assert sum(p.net_units for p in s.players) == 0
    assert s.rake == sum(p.rake for p in s.players) >= 0


@FAST
@given(tables(), st.randoms())
def test_renaming_players_permutes_results_only(request: dict[str, Any], rnd: Any) -> None:
    before = run(request)
    renamed = copy.deepcopy(request)
    ids = [p["playerId"] for p in renamed["players"]]
    new_ids = [f"name-{rnd.randrange(10**9)}-{i}" for i in range(len(ids))]
    mapping = dict(zip(ids, new_ids, strict=True))
    for p in renamed["players"]:
        p["playerId"] = mapping[p["playerId"]]
    rnd.shuffle(renamed["players"])  # the order of the list never matters either
    after = run(renamed)
    assert {mapping[k]: v for k, v in by_id(before).items()} == by_id(after)
    assert [mapping[i] for i in before.order] == list(after.order)
    assert [(mapping[p.first], mapping[p.second], p.units, p.paid) for p in before.pairs] == [
        (p.first, p.second, p.units, p.paid) for p in after.pairs
    ]


@FAST
@given(tables(stacks=False), st.randoms())
def test_reseating_without_stacks_changes_nothing(request: dict[str, Any], rnd: Any) -> None:
    request = copy.deepcopy(request)
    request.get("profileOverrides", {}).pop("rake", None)  # commission is per player anyway
    before = run(request)
    moved = copy.deepcopy(request)
    seats = rnd.sample(range(20, 40), len(moved["players"]))
    for p, seat in zip(moved["players"], seats, strict=True):
        p["seat"] = seat
    moved["buttonSeat"] = rnd.choice(seats)
    after = run(moved)
    assert by_id(before) == by_id(after)


@FAST
@given(tables(), st.randoms())
def test_card_order_inside_a_row_never_matters(request: dict[str, Any], rnd: Any) -> None:
    before = run(request)
    shuffled = copy.deepcopy(request)
    for p in shuffled["players"]:
        for row in p.get("arrangement", {}).values():
            rnd.shuffle(row)
    after = run(shuffled)
    assert by_id(before) == by_id(after)
    assert [(p.units, p.paid) for p in before.pairs] == [(p.units, p.paid) for p in after.pairs]


@FAST
@given(tables())
def test_a_fouled_hand_never_collects_from_a_regular_hand(request: dict[str, Any]) -> None:
    s = run(request)
    status = {p.player_id: p.status for p in s.players}
    for pair in s.pairs:
        a, b = status[pair.first], status[pair.second]
        if a is Status.FOULED and b is Status.REGULAR:
            assert pair.units <= 0 and pair.money_for_first <= 0
        if b is Status.FOULED and a is Status.REGULAR:
            assert pair.units >= 0 and pair.money_for_first >= 0


@FAST
@given(tables(stacks=True))
def test_caps_bound_every_net(request: dict[str, Any]) -> None:
    table, choice = request_from_dict(request)
    profile = resolve_profile(choice, REGISTRY)
    s = settle(table, profile)
    caps = profile.caps
    for p in s.players:
        if p.stack is None:
            continue
        fee = p.rake if profile.rake.mode.value == "PER_PLAYER" else 0
        room = p.stack - fee
        if caps.losses:
            assert p.money_before_rake >= -room
        if caps.wins and caps.basis.value == "HAND_START":
            assert p.money_before_rake <= room


@FAST
@given(tables(stacks=False))
def test_caps_change_nothing_when_every_stack_is_large(request: dict[str, Any]) -> None:
    request = copy.deepcopy(request)
    over = request.setdefault("profileOverrides", {})
    over.pop("rake", None)
    over["caps"] = {"losses": False, "wins": False}
    uncapped = run(request)
    over["caps"] = {"losses": True, "wins": True}
    for p in request["players"]:
        p["stack"] = 10**12
    capped = run(request)
    assert by_id(uncapped) == by_id(capped)
    assert all(p.cap == "" for p in capped.pairs)


def test_profile_choice_is_required() -> None:
    import pytest

    from cpsettle_service.domain.errors import InvalidInput

    with pytest.raises(InvalidInput) as e:
        resolve_profile(ProfileChoice(), REGISTRY)
    assert e.value.violations[0].field == "preset"
