"""One player's hand on its own: rows, foul check, royalties, naturals, Fantasyland.

``evaluate_player`` fills a validated player's working state for ``settle``;
``evaluate_hand`` answers the same questions for one hand before the reveal (no opponents).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from .cards import CARD_BY_SPELLING, Card, Suit
from .errors import Collector, ViolationCode
from .hands import HandClass, HandRank, evaluate_five, evaluate_three, highest_card
from .naturals import Natural, holds, naturals_held
from .profile import Naturals, RoyaltyMode, RuleProfile
from .results import (
    FRONT_ABOVE_MIDDLE,
    MIDDLE_ABOVE_BACK,
    REGULAR,
    SURRENDERED,
    EvaluatedRow,
    Fantasyland,
    FoulReason,
    Status,
    evaluated_row,
    fantasyland_result,
)
from .rows import ROWS
from .table import PlayerInput
from .validation import ROW_KEYS, check_cards
from .working import Plan, PlayerState, plan_for

_SUITED_CLASSES = frozenset(
    {HandClass.STRAIGHT, HandClass.FLUSH, HandClass.STRAIGHT_FLUSH, HandClass.ROYAL_FLUSH}
)


def evaluate_player(p: PlayerState, profile: RuleProfile, plan: Plan, errors: Collector,
                    index: int) -> None:
    """A validated player's status, natural, rows and royalties (``index``: for field paths)."""
    inp = p.input
    if p.status is SURRENDERED:
        return
    declared = inp.declared_natural
    detect = plan.detect_naturals
    if not declared and not detect:
        if inp.front is not None:
            evaluate_rows(p, profile, plan)
        else:
            errors.add(
                f"players[{index}].cards",
                "13 loose cards without a declared natural: send an arrangement",
                ViolationCode.NATURAL,
            )
        return
    naturals = profile.naturals
    cards = [CARD_BY_SPELLING[c] for c in p.cards13]
    if declared:
        natural = Natural(declared)
        if holds(natural, cards):
            if naturals.require_declaration:
                p.natural = natural
            else:
                p.natural = best_natural(cards, profile)
            p.status = Status.NATURAL
        else:
            p.status = Status.FOULED
            p.foul_reasons += (FoulReason.FALSE_DECLARATION,)
    elif detect:
        best = best_natural(cards, profile)
        if best is not None:
            p.natural = best
            p.status = Status.NATURAL
        elif not inp.has_arrangement:
            errors.add(
                f"players[{index}].cards",
                "these 13 cards make no natural this profile plays; send an arrangement",
                ViolationCode.NATURAL,
            )
            return
    if p.natural is not None:
        p.natural_entry = naturals.by_natural[p.natural]
    if p.status is Status.NATURAL or inp.front is None:
        return
    evaluate_rows(p, profile, plan)


def evaluate_rows(p: PlayerState, profile: RuleProfile, plan: Plan) -> None:
    """Rows, foul check, royalties and row values of an arranged hand (``p.cards13``)."""
    wheel = plan.wheel
    c = p.cards13
    front, middle, back = c[:3], c[3:8], c[8:]
    hf = evaluate_three(front)
    hm = evaluate_five(middle, wheel)
    hb = evaluate_five(back, wheel)
    if p.status is REGULAR:
        if hf.order_key > hm.order_key:  # hf > hm on the one scale (RULES.md §4)
            p.foul_reasons += (FRONT_ABOVE_MIDDLE,)
        if hm.strength > hb.strength or (
            plan.suit_tiebreak
            and hm.strength == hb.strength
            and hm.hand_class in _SUITED_CLASSES
            and suit_beats(middle, hm, back, hb, profile.ranking.suit_order)
        ):
            p.foul_reasons += (MIDDLE_ABOVE_BACK,)
        if p.foul_reasons:
            p.status = Status.FOULED
    if p.status is REGULAR:
        if plan.royalties_none:
            p.values = plan.plain_values
        else:
            # a row's royalty depends only on the row and the hand: cached per profile
            cf, cm, cb = plan.row_cache
            try:
                r0, r1, r2 = cf[hf.strength], cm[hm.strength], cb[hb.strength]
            except KeyError:
                r0, r1, r2 = _royalties(profile, plan, hf, hm, hb)
            if r0 or r1 or r2:
                r = p.royalties = (r0, r1, r2)
                p.royalty_total = r0 + r1 + r2
                values = plan.values_cache.get(r)
                if values is None:
                    values = plan.values_cache[r] = _row_values(profile, r)
                p.values = values
            else:  # royalties (0, 0, 0) and their total 0 are PlayerState's defaults
                p.values = plan.plain_values
    p.strengths = (hf.strength, hm.strength, hb.strength)
    royalties = p.royalties
    front_row, middle_row, back_row = ROWS
    p.rows = (
        evaluated_row(row=front_row, cards=front, hand=hf, royalty=royalties[0]),
        evaluated_row(row=middle_row, cards=middle, hand=hm, royalty=royalties[1]),
        evaluated_row(row=back_row, cards=back, hand=hb, royalty=royalties[2]),
    )


def _royalties(profile: RuleProfile, plan: Plan, hf: HandRank, hm: HandRank,
               hb: HandRank) -> tuple[int, int, int]:
    """Each row's royalty, read from and added to the plan's per-row caches."""
    out = []
    for cache, row, hand in zip(plan.row_cache, ROWS, (hf, hm, hb)):
        units = cache.get(hand.strength)
        if units is None:
            units = cache[hand.strength] = profile.royalties.units(row, hand)
        out.append(units)
    return out[0], out[1], out[2]


def _row_values(profile: RuleProfile, royalties: tuple[int, ...]) -> tuple[int, ...]:
    """What each row pays its winner (RULES.md §6: value_X(row) under the royalty mode)."""
    mode = profile.royalties.mode
    unit = profile.scoring.row_unit
    r0, r1, r2 = royalties
    if mode is RoyaltyMode.ON_WIN_ADDED:
        return (unit + r0, unit + r1, unit + r2)
    if mode is RoyaltyMode.ON_WIN_REPLACES:
        return (max(unit, r0), max(unit, r1), max(unit, r2))
    return (unit, unit, unit)


def suit_rank(card: Card, suit_order: Sequence[Suit]) -> int:
    """0 for the best suit."""
    return list(suit_order).index(card.suit)


def suit_beats(
    a_cards: Sequence[str], a: HandRank, b_cards: Sequence[str], b: HandRank,
    order: Sequence[Suit],
) -> bool:
    """Whether hand a's highest card has a better suit than hand b's (equal hands by rank)."""
    return suit_rank(highest_card(a_cards, a, order), order) < suit_rank(
        highest_card(b_cards, b, order), order
    )


def best_natural(cards: Sequence[Card], profile: RuleProfile) -> Natural | None:
    """The best natural the cards make among those the profile plays, or None."""
    by_natural = profile.naturals.by_natural
    held = [n for n in naturals_held(cards) if n in by_natural]
    if not held:
        return None
    catalogue = list(Natural)
    return max(
        held, key=lambda n: (by_natural[n].rank, by_natural[n].units, -catalogue.index(n))
    )


_FL_NOT_QUALIFIED = "{0} does not qualify for Fantasyland ({1} in front)"
_FL_QUALIFIED = "{0} qualifies for Fantasyland with {1} in front — {2} cards"


def fantasyland(p: PlayerState, profile: RuleProfile, plan: Plan) -> Fantasyland | None:
    """Whether the player plays Fantasyland next hand, and with how many cards."""
    fl = profile.fantasyland
    if not fl.enabled:
        return None
    if p.status is not REGULAR:
        return fantasyland_result(qualifies=False, cards=0,
                           fmt="{0} does not qualify for Fantasyland ({1} hand)",
                           args=(p.pid, p.status.value.lower()))
    if p.input.in_fantasyland:
        stay = fl.stay
        for i, t in enumerate((stay.front, stay.middle, stay.back)):
            hand = p.rows[i].hand
            if t is not None and t.met_by(hand):
                return fantasyland_result(
                    qualifies=True, cards=fl.stay_cards,
                    fmt="{0} stays in Fantasyland with {1} in the {2} — {3} cards next hand",
                    args=(p.pid, hand.phrase, ROWS[i].value.lower(), fl.stay_cards))
        return fantasyland_result(qualifies=False, cards=0,
                           fmt="{0} leaves Fantasyland: no stay condition met", args=(p.pid,))
    # The entry decision depends on the front only: cached per front strength, with its phrase.
    cache = plan.entry_cache
    hit = cache.get(p.strengths[0])
    if hit is None:
        front = p.rows[0].hand
        cards = 0
        if fl.entry.met_by(front):
            cards = fl.entry_cards
            for entry in fl.progressive:  # strongest threshold first
                if entry.threshold.met_by(front):
                    cards = entry.cards
                    break
        hit = cache[front.strength] = (cards, front.phrase)
    cards, phrase = hit
    if not cards:
        return fantasyland_result(qualifies=False, cards=0, fmt=_FL_NOT_QUALIFIED,
                                  args=(p.pid, phrase))
    return fantasyland_result(qualifies=True, cards=cards, fmt=_FL_QUALIFIED,
                       args=(p.pid, phrase, cards))


class HandEvaluation(NamedTuple):
    """One arrangement (or 13 cards) seen on its own, before the reveal."""

    rows: tuple[EvaluatedRow, ...]
    royalty_total: int
    fouled: bool
    foul_reasons: tuple[FoulReason, ...]
    naturals: tuple[Natural, ...]  # every catalogue natural the cards make
    playable_naturals: tuple[Natural, ...]  # those the profile plays, best first
    fantasyland: Fantasyland | None


def evaluate_hand(inp: PlayerInput, profile: RuleProfile) -> HandEvaluation:
    """Rows, royalties, foul, naturals and Fantasyland of one hand (no opponents).

    ``inp`` carries an arrangement or 13 loose cards; ``InvalidInput`` names every problem.
    """
    errors = Collector()
    seen: dict[int, str] = {}
    p = PlayerState(PlayerInput(inp.player_id or "player", 0, inp.front, inp.middle, inp.back,
                                in_fantasyland=inp.in_fantasyland))
    canonical: list[str] = []
    forms = sum((inp.has_arrangement, inp.cards is not None))
    if forms != 1:
        errors.add("arrangement", "send either an arrangement or 13 cards", ViolationCode.OTHER)
    if inp.has_arrangement:
        for key, size in ROW_KEYS:
            cards = getattr(inp, key)
            if cards is None:
                errors.add(f"arrangement.{key}", f"is required ({size} cards)",
                           ViolationCode.OTHER)
            else:
                check_cards(errors, None, f"arrangement.{key}", cards, size, canonical)
                check_cards(errors, seen, f"arrangement.{key}", cards, None, [])
    elif inp.cards is not None:
        check_cards(errors, None, "cards", inp.cards, 13, canonical)
        check_cards(errors, seen, "cards", inp.cards, None, [])
    errors.raise_if_any()
    p.cards13 = tuple(canonical)
    held = naturals_held([CARD_BY_SPELLING[c] for c in p.cards13])
    by_natural = profile.naturals.by_natural
    catalogue = list(Natural)
    playable = sorted(
        (n for n in held if n in by_natural),
        key=lambda n: (-by_natural[n].rank, -by_natural[n].units, catalogue.index(n)),
    )
    fl = None
    if inp.has_arrangement:
        # Rows are judged as arranged: a natural is only settled when declared (or detected).
        if not profile.naturals.require_declaration:
            rows_profile = replace(profile, naturals=Naturals(True, profile.naturals.vs_foul, ()))
        else:
            rows_profile = profile
        evaluate_player(p, rows_profile, plan_for(rows_profile), errors, 0)
        fl = fantasyland(p, profile, plan_for(profile))
    return HandEvaluation(
        rows=p.rows,
        royalty_total=p.royalty_total,
        fouled=p.status is Status.FOULED,
        foul_reasons=tuple(p.foul_reasons),
        naturals=tuple(n for n in catalogue if n in held),
        playable_naturals=tuple(playable),
        fantasyland=fl,
    )
