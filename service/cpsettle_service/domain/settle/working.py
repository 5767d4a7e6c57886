"""The working state of one settlement: each player, each pair, and the profile's plan.

``PlayerState`` and ``PairState`` are mutable scratch records filled in by validation,
evaluation, the pairs and the money, then read out into the immutable results. ``Plan`` is the
profile's settings the hot path reads, flattened once per profile and held on it (profiles are
immutable), with the caches that depend only on the profile.

Slots, every one set in ``__init__``: CPython 3.11 specializes reads and writes of slots,
whereas an attribute left to a class-level default is looked up the slow way on each read.
"""

from __future__ import annotations

from ..naturals.catalogue import Natural
from ..profile.model import (
    HouseNatural,
    NaturalEntry,
    NaturalTie,
    RowTie,
    RoyaltyMode,
    RuleProfile,
)
from .jokers import Assignment
from .results import KIND_NONE, REGULAR, EvaluatedRow, FoulReason, LineItem, PairKind, Status
from .table import PlayerInput

NO_ROYALTIES = (0, 0, 0)


class PlayerState:
    """One player while settling."""

    __slots__ = (
        "assignment",
        "cards13",
        "foul_reasons",
        "input",
        "natural",
        "natural_entry",
        "natural_phrase",
        "net_units",
        "paid",
        "pid",
        "rake",
        "received",
        "rows",
        "royalties",
        "royalty_total",
        "stack",
        "status",
        "strengths",
        "values",
    )

    def __init__(self, inp: PlayerInput) -> None:
        self.input = inp
        self.pid = inp.player_id
        self.stack = inp.stack  # the money the caps use (less a per-player fee)
        self.status: Status = REGULAR
        self.rows: tuple[EvaluatedRow, ...] = ()
        self.royalties: tuple[int, ...] = NO_ROYALTIES
        self.royalty_total = 0
        self.foul_reasons: tuple[FoulReason, ...] = ()
        self.natural: Natural | HouseNatural | None = None
        self.natural_entry: NaturalEntry | None = None
        # canonical card strings (front, middle, back, or 13 loose cards); replaced, not mutated
        self.cards13: tuple[str, ...] = ()
        self.received = 0  # money received and paid in the pairs so far (a caps.Ledger)
        self.paid = 0
        self.strengths: tuple[int, ...] = ()
        self.values: tuple[int, ...] = NO_ROYALTIES
        self.net_units = 0
        self.rake = 0
        # a hand with jokers: the cards they stand for (RULES.md §16.3); None without jokers
        self.assignment: Assignment | None = None
        self.natural_phrase = ""  # the natural as it reads in a sentence ("dragon (Xj as As)")


class PairState:
    """One pair while settling; ``units`` are for the first player ``a``."""

    __slots__ = (
        "a",
        "b",
        "items",
        "kind",
        "row_units",
        "scoop_by",
        "signs",
        "tie_breaks",
        "units",
    )

    def __init__(self, a: PlayerState, b: PlayerState) -> None:
        self.a = a
        self.b = b
        self.items: list[LineItem] = []
        self.kind: PairKind = KIND_NONE
        self.signs: tuple[int, ...] = ()
        self.row_units: tuple[int, ...] = ()
        self.tie_breaks: tuple[str, ...] = ()
        self.units = 0
        self.scoop_by: PlayerState | None = None


# The most entries each of a plan's caches keeps; past it a value is computed and not kept.
# A plan lives as long as its profile, and the service keeps inline profiles in a cache: the
# bound keeps a plan under about 400 KB however many distinct hands its profile settles (the
# row caches alone could grow to 3 x 7,462 entries, the royalty triples further still).
PLAN_CACHE_ENTRIES = 256


class Plan:
    """The settings the hot path reads, flattened once per profile, and the caches that
    depend only on the profile. The stake is not here: it is the table's."""

    __slots__ = (
        "always",
        "capped",
        "compare_naturals",
        "detect_naturals",
        "entry_cache",
        "fantasyland",
        "jokers",
        "majority_bonus",
        "majority_on_scoop",
        "multipliers",
        "plain_values",
        "row_cache",
        "row_tie_suit",
        "royalties_none",
        "scoop_bonus",
        "suit_order",
        "suit_tiebreak",
        "values_cache",
        "wheel",
    )

    def __init__(self, profile: RuleProfile) -> None:
        scoring = profile.scoring
        self.majority_bonus = scoring.majority_bonus
        self.majority_on_scoop = scoring.majority_bonus_on_scoop
        self.scoop_bonus = scoring.scoop_bonus
        self.always = profile.royalties.mode is RoyaltyMode.ALWAYS
        self.royalties_none = profile.royalties.mode is RoyaltyMode.NONE
        self.row_tie_suit = profile.ranking.row_tie is RowTie.SUIT_OF_HIGHEST_CARD
        self.suit_order = profile.ranking.suit_order
        self.suit_tiebreak = profile.ranking.suit_order_tiebreak
        self.wheel = profile.ranking.wheel
        self.detect_naturals = bool(
            not profile.naturals.require_declaration and profile.naturals.table
        )
        self.capped = profile.caps.losses or profile.caps.wins
        self.jokers = profile.deck.jokers  # 0: no hand can hold one, nothing to resolve
        self.compare_naturals = profile.naturals.equal_rank is NaturalTie.COMPARE_CARDS
        self.fantasyland = profile.fantasyland.enabled
        self.multipliers = scoring.scoop_multiplier != 1 or scoring.home_run.multiplier != 1
        # front strength -> (Fantasyland cards, 0: none; the front's phrase)
        self.entry_cache: dict[int, tuple[int, str]] = {}
        # the rows' royalties -> what each row pays its winner (few distinct triples)
        self.values_cache: dict[tuple[int, ...], tuple[int, ...]] = {}
        unit = scoring.row_unit
        self.plain_values = (unit, unit, unit)
        # strength -> royalty, per row (front, middle, back); PLAN_CACHE_ENTRIES each
        self.row_cache: tuple[dict[int, int], ...] = ({}, {}, {})


_PLAN = "_settlement_plan"  # the attribute a profile holds its plan in (not a profile field)


def plan_for(profile: RuleProfile) -> Plan:
    """The profile's plan, built on first use and held on the profile itself.

    A ``RuleProfile`` is frozen, so its plan never goes stale; the plan lives exactly as long as
    the profile (no module-level cache, no identity keys). It is stored in the instance's
    ``__dict__`` beside the fields, so equality, hashing, ``replace`` and the profile's JSON
    never see it.
    """
    try:
        plan: Plan = profile.__dict__[_PLAN]
    except KeyError:
        plan = profile.__dict__[_PLAN] = Plan(profile)
    return plan


__all__ = ["NO_ROYALTIES", "PLAN_CACHE_ENTRIES", "PairState", "Plan", "PlayerState", "plan_for"]
