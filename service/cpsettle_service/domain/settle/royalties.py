"""Royalties (RULES.md §6): each row's royalty under the profile's table, what each row then pays
its winner under the royalty mode, and the royalties line of a pair when royalties are paid
whatever the rows (``ALWAYS``).

A row's royalty depends only on the row and its hand, so it is cached on the profile's plan
(``row_royalties``), as are the row values of each royalty triple (``row_values``).
"""

from __future__ import annotations

from ..cards.hands import HandRank
from ..cards.rows import ROWS
from ..profile.model import RoyaltyMode, RuleProfile
from .results import ItemKind, LineItem, line_item
from .working import PLAN_CACHE_ENTRIES, Plan, PlayerState

__all__ = ["royalties_line", "row_royalties", "row_values"]

_ROYALTIES_FIRST = "Royalties: {0} {1}, {2} {3} — {0} +{4}"
_ROYALTIES_SECOND = "Royalties: {0} {1}, {2} {3} — {2} +{4}"
_ROYALTIES_EVEN = "Royalties: {0} {1}, {2} {3} — even"


def row_royalties(
    profile: RuleProfile, plan: Plan, hf: HandRank, hm: HandRank, hb: HandRank
) -> tuple[int, int, int]:
    """Each row's royalty, read from and added to the plan's per-row caches."""
    out = []
    for cache, row, hand in zip(plan.row_cache, ROWS, (hf, hm, hb), strict=True):
        units = cache.get(hand.strength)
        if units is None:
            units = profile.royalties.units(row, hand)
            if len(cache) < PLAN_CACHE_ENTRIES:
                cache[hand.strength] = units
        out.append(units)
    return out[0], out[1], out[2]


def row_values(profile: RuleProfile, royalties: tuple[int, ...]) -> tuple[int, ...]:
    """What each row pays its winner (RULES.md §6: value_X(row) under the royalty mode)."""
    mode = profile.royalties.mode
    unit = profile.scoring.row_unit
    r0, r1, r2 = royalties
    if mode is RoyaltyMode.ON_WIN_ADDED:
        return (unit + r0, unit + r1, unit + r2)
    if mode is RoyaltyMode.ON_WIN_REPLACES:
        return (max(unit, r0), max(unit, r1), max(unit, r2))
    return (unit, unit, unit)


def royalties_line(a: PlayerState, b: PlayerState) -> LineItem:
    """The pair's royalties line when royalties are paid whatever the rows (``ALWAYS``): the
    difference of the two totals, for the pair's first player ``a``."""
    ra, rb = a.royalty_total, b.royalty_total
    diff = ra - rb
    return line_item(
        kind=ItemKind.ROYALTIES,
        units=diff,
        fmt=(_ROYALTIES_FIRST if diff > 0 else _ROYALTIES_SECOND if diff else _ROYALTIES_EVEN),
        args=(a.pid, ra, b.pid, rb, diff if diff > 0 else -diff),
    )
