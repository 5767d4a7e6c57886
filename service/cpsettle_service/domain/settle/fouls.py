"""Fouls (RULES.md §4, §7): when an arranged hand fouls and why, and what a fouled hand pays.

``foul_reasons`` is the check itself: the front above the middle (one scale for three and five
cards), or the middle above the back, with the suit tie-break of RULES.md §5 when the profile
plays it (``suit_beats``: the suit of each hand's highest card). ``foul_check`` hands the same
check to the joker resolution. A fouled hand pays the fixed penalty (``fixed_foul``, with the
opponent's royalties when the profile says so) or is scooped (``scooped_penalty``: what a
scooped regular hand pays, RULES.md §14.6).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards.cards import Card, Suit
from ..cards.hands import HandClass, HandRank, highest_card
from ..profile.model import RoyaltyMode, RuleProfile
from .jokers import Fouls
from .results import (
    FRONT_ABOVE_MIDDLE,
    MIDDLE_ABOVE_BACK,
    FoulReason,
    ItemKind,
    foul_text,
    line_item,
)
from .working import PairState, Plan, PlayerState, plan_for

__all__ = [
    "SUITED_CLASSES",
    "fixed_foul",
    "foul_check",
    "foul_reasons",
    "scooped_penalty",
    "suit_beats",
    "suit_rank",
]

SUITED_CLASSES = frozenset(
    {HandClass.STRAIGHT, HandClass.FLUSH, HandClass.STRAIGHT_FLUSH, HandClass.ROYAL_FLUSH}
)
"""The classes whose equal middle and back the suit tie-break decides."""


def foul_reasons(
    cards: Sequence[str], hf: HandRank, hm: HandRank, hb: HandRank, plan: Plan, profile: RuleProfile
) -> tuple[FoulReason, ...]:
    """Why 13 arranged cards (front, middle, back) with these hands foul (RULES.md §4)."""
    reasons: tuple[FoulReason, ...] = ()
    if hf.order_key > hm.order_key:  # hf > hm on the one scale (RULES.md §4)
        reasons += (FRONT_ABOVE_MIDDLE,)
    if hm.strength > hb.strength or (
        plan.suit_tiebreak
        and hm.strength == hb.strength
        and hm.hand_class in SUITED_CLASSES
        and suit_beats(cards[3:8], hm, cards[8:], hb, profile.ranking.suit_order)
    ):
        reasons += (MIDDLE_ABOVE_BACK,)
    return reasons


def foul_check(profile: RuleProfile, plan: Plan | None = None) -> Fouls:
    """The foul check of RULES.md §4 (the suit tie-break included) as the joker resolution takes
    it: whether 13 resolved cards with these hands foul."""
    at = plan or plan_for(profile)
    return lambda cards, hf, hm, hb: bool(foul_reasons(cards, hf, hm, hb, at, profile))


def suit_rank(card: Card, suit_order: Sequence[Suit]) -> int:
    """0 for the best suit."""
    return list(suit_order).index(card.suit)


def suit_beats(
    a_cards: Sequence[str],
    a: HandRank,
    b_cards: Sequence[str],
    b: HandRank,
    order: Sequence[Suit],
) -> bool:
    """Whether hand a's highest card has a better suit than hand b's (equal hands by rank)."""
    return suit_rank(highest_card(a_cards, a, order), order) < suit_rank(
        highest_card(b_cards, b, order), order
    )


def fixed_foul(
    pair: PairState, fouled: PlayerState, other: PlayerState, profile: RuleProfile
) -> int:
    """Units the fouled player pays under FIXED, with line items (from ``other``'s side)."""
    foul = profile.foul
    sign = 1 if other is pair.a else -1
    units = foul.fixed_units
    pair.items.append(
        line_item(
            kind=ItemKind.FOUL_PENALTY,
            units=sign * foul.fixed_units,
            fmt=f"Foul: {fouled.pid}'s hand is fouled ({foul_text(fouled.foul_reasons)}); "
            f"he pays {other.pid} the "
            f"fixed penalty — {other.pid} +{foul.fixed_units}",
            args=(),
        )
    )
    if (
        foul.pays_opponent_royalties
        and profile.royalties.mode is not RoyaltyMode.NONE
        and other.royalty_total
    ):
        units += other.royalty_total
        pair.items.append(
            line_item(
                kind=ItemKind.ROYALTIES,
                units=sign * other.royalty_total,
                fmt=f"Royalties: {fouled.pid} also pays {other.pid}'s royalties of "
                f"{other.royalty_total} — {other.pid} +{other.royalty_total}",
                args=(),
            )
        )
    return units


def scooped_penalty(profile: RuleProfile) -> int:
    """What a scooped regular hand pays, without royalties (RULES.md §14.6)."""
    s = profile.scoring
    units = 3 * s.row_unit + s.scoop_bonus
    if s.majority_bonus_on_scoop:
        units += s.majority_bonus
    return units * s.scoop_multiplier
