"""One player's hand on its own: rows, foul check, royalties, naturals, Fantasyland
(RULES.md §4, §6, §8, §11, §16.3).

``evaluate_player`` fills a validated player's working state for ``settle``;
``evaluate_hand`` answers the same questions for one hand before the reveal (no opponents).
The rules it applies have rooms of their own: ``jokers`` (what each joker stands for),
``fouls`` (when a hand fouls), ``royalties`` (what each row earns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from ..cards.cards import CARD_BY_SPELLING, JOKER, Card
from ..cards.hands import evaluate_five, evaluate_three
from ..cards.rows import ROWS
from ..errors import Collector, ViolationCode
from ..naturals.catalogue import Natural, naturals_held
from ..naturals.facts import hand_facts
from ..profile.model import HouseNatural, RuleProfile
from .fouls import foul_check, foul_reasons
from .jokers import NaturalSearch, allowed_cards, resolve_arrangement, rows_of
from .results import (
    REGULAR,
    SURRENDERED,
    EvaluatedRow,
    FantasylandResult,
    FoulReason,
    Status,
    evaluated_row,
    fantasyland_result,
    jokers_text,
    natural_label,
)
from .royalties import row_royalties, row_values
from .table import PlayerInput
from .validation import ROW_KEYS, check_cards
from .working import PLAN_CACHE_ENTRIES, Plan, PlayerState, plan_for


def evaluate_player(
    p: PlayerState,
    profile: RuleProfile,
    plan: Plan,
    errors: Collector,
    index: int,
    allowed: Sequence[Card] = (),
) -> None:
    """A validated player's status, natural, rows and royalties (``index``: for field paths;
    ``allowed``: the cards a joker may stand for at this table, RULES.md §16.3)."""
    inp = p.input
    if p.status is SURRENDERED:
        return
    if plan.jokers and JOKER in p.cards13:
        needed = 1 if profile.deck.joker_duplicates else p.cards13.count(JOKER)
        if len(allowed) < needed:
            errors.add(
                f"players[{index}]",
                "no card is left for a joker to stand for: every "
                "standard card is held or dead (RULES.md §16.3)",
                ViolationCode.OTHER,
            )
            return
    declared = inp.declared_natural
    detect = plan.detect_naturals
    if not declared and not detect:
        if inp.front is not None:
            evaluate_rows(p, profile, plan, allowed)
        else:
            errors.add(
                f"players[{index}].cards",
                "13 loose cards without a declared natural: send an arrangement",
                ViolationCode.NATURAL,
            )
        return
    naturals = profile.naturals
    # with jokers: one search for the hand, shared by the naturals it tries (RULES.md §16.3)
    search = (
        NaturalSearch(p.cards13, allowed, profile) if (plan.jokers and JOKER in p.cards13) else None
    )
    if declared:
        if _natural_held(p, profile, (declared,), search) is not None:
            if naturals.require_declaration:
                p.natural = naturals.by_natural[declared].natural
            else:
                p.natural = _natural_held(p, profile, naturals.best_first, search)
            p.status = Status.NATURAL
        else:
            p.status = Status.FOULED
            p.foul_reasons += (FoulReason.FALSE_DECLARATION,)
    elif detect:
        best = _natural_held(p, profile, naturals.best_first, search)
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
        p.natural_phrase = natural_label(p.natural)
        if p.assignment is not None:
            p.natural_phrase += f" ({jokers_text(p.assignment.stands_for)})"
    if p.status is Status.NATURAL or inp.front is None:
        return
    p.assignment = None  # a fouled declaration: the rows resolve the jokers on their own
    evaluate_rows(p, profile, plan, allowed)


def _natural_held(
    p: PlayerState, profile: RuleProfile, names: Sequence[str], search: NaturalSearch | None
) -> Natural | HouseNatural | None:
    """The first of ``names`` (best first) the player's 13 cards make; with jokers
    (``search``), through the assignment the search keeps (recorded on the player)."""
    by_natural = profile.naturals.by_natural
    if search is not None:
        found = search.best(names)
        if found is None:
            return None
        p.assignment = found[1]
        return by_natural[found[0]].natural
    facts = hand_facts([CARD_BY_SPELLING[c] for c in p.cards13])
    predicates = profile.naturals.predicates
    for name in names:
        if predicates[name](facts):
            return by_natural[name].natural
    return None


def evaluate_rows(
    p: PlayerState, profile: RuleProfile, plan: Plan, allowed: Sequence[Card] = ()
) -> None:
    """Rows, foul check, royalties and row values of an arranged hand (``p.cards13``); a hand
    with jokers is resolved first (RULES.md §16.3)."""
    c = p.cards13
    front, middle, back = c[:3], c[3:8], c[8:]
    if plan.jokers and JOKER in c:
        a = p.assignment = resolve_arrangement(c, allowed, profile, foul_check(profile, plan))
        assert a is not None  # evaluate_player checked that a joker has a card to stand for
        c = a.cards
        hf, hm, hb = rows_of(c, profile)
    else:
        wheel = plan.wheel
        hf = evaluate_three(front)
        hm = evaluate_five(middle, wheel)
        hb = evaluate_five(back, wheel)
    # Most hands are plainly in order (front below middle below back): no foul check to call.
    if p.status is REGULAR and (hf.order_key > hm.order_key or hm.strength >= hb.strength):
        p.foul_reasons += foul_reasons(c, hf, hm, hb, plan, profile)
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
                r0, r1, r2 = row_royalties(profile, plan, hf, hm, hb)
            if r0 or r1 or r2:
                r = p.royalties = (r0, r1, r2)
                p.royalty_total = r0 + r1 + r2
                values = plan.values_cache.get(r)
                if values is None:
                    values = row_values(profile, r)
                    if len(plan.values_cache) < PLAN_CACHE_ENTRIES:
                        plan.values_cache[r] = values
                p.values = values
            else:  # royalties (0, 0, 0) and their total 0 are PlayerState's defaults
                p.values = plan.plain_values
    p.strengths = (hf.strength, hm.strength, hb.strength)
    royalties = p.royalties
    front_row, middle_row, back_row = ROWS
    a = p.assignment
    p.rows = (
        evaluated_row(
            row=front_row,
            cards=front,
            hand=hf,
            royalty=royalties[0],
            joker_cards=a.in_row(0, 3) if a else (),
        ),
        evaluated_row(
            row=middle_row,
            cards=middle,
            hand=hm,
            royalty=royalties[1],
            joker_cards=a.in_row(3, 8) if a else (),
        ),
        evaluated_row(
            row=back_row,
            cards=back,
            hand=hb,
            royalty=royalties[2],
            joker_cards=a.in_row(8, 13) if a else (),
        ),
    )


def best_natural(cards: Sequence[Card], profile: RuleProfile) -> Natural | HouseNatural | None:
    """The best natural the cards make among those the profile plays, or None."""
    facts = hand_facts(cards)
    predicates = profile.naturals.predicates
    for name in profile.naturals.best_first:
        if predicates[name](facts):
            return profile.naturals.by_natural[name].natural
    return None


_FL_NOT_QUALIFIED = "{0} does not qualify for Fantasyland ({1} in front)"
_FL_QUALIFIED = "{0} qualifies for Fantasyland with {1} in front — {2} cards"


def fantasyland(p: PlayerState, profile: RuleProfile, plan: Plan) -> FantasylandResult | None:
    """Whether the player plays Fantasyland next hand, and with how many cards."""
    fl = profile.fantasyland
    if not fl.enabled:
        return None
    playing = p.input.in_fantasyland
    if p.status is not REGULAR:
        return fantasyland_result(
            qualifies=False,
            cards=0,
            fmt="{0} does not qualify for Fantasyland ({1} hand)",
            args=(p.pid, p.status.value.lower()),
            in_fantasyland=playing,
            row=None,
        )
    if playing:
        stay = fl.stay
        for i, t in enumerate((stay.front, stay.middle, stay.back)):
            hand = p.rows[i].hand
            if t is not None and t.met_by(hand):
                return fantasyland_result(
                    qualifies=True,
                    cards=fl.stay_cards,
                    fmt="{0} stays in Fantasyland with {1} in the {2} — {3} cards next hand",
                    args=(p.pid, hand.phrase, ROWS[i].value.lower(), fl.stay_cards),
                    in_fantasyland=True,
                    row=ROWS[i],
                )
        return fantasyland_result(
            qualifies=False,
            cards=0,
            fmt="{0} leaves Fantasyland: no stay condition met",
            args=(p.pid,),
            in_fantasyland=True,
            row=None,
        )
    # The entry decision depends on the front only: cached per front strength, with its phrase.
    cache = plan.entry_cache
    hit = cache.get(p.strengths[0])
    if hit is None:
        front = p.rows[0].hand
        cards = 0
        if fl.entry.met_by(front):
            cards = fl.entry_cards
            for entry in fl.progressive:  # strongest threshold first
                if entry.met_by(front):
                    cards = entry.cards
                    break
        hit = (cards, front.phrase)
        if len(cache) < PLAN_CACHE_ENTRIES:
            cache[front.strength] = hit
    cards, phrase = hit
    if not cards:
        return fantasyland_result(
            qualifies=False,
            cards=0,
            fmt=_FL_NOT_QUALIFIED,
            args=(p.pid, phrase),
            in_fantasyland=False,
            row=None,
        )
    return fantasyland_result(
        qualifies=True,
        cards=cards,
        fmt=_FL_QUALIFIED,
        args=(p.pid, phrase, cards),
        in_fantasyland=False,
        row=None,
    )


class HandEvaluation(NamedTuple):
    """One arrangement (or 13 cards) seen on its own, before the reveal."""

    rows: tuple[EvaluatedRow, ...]
    royalty_total: int
    fouled: bool
    foul_reasons: tuple[FoulReason, ...]
    # every catalogue natural the cards make (with jokers: those the profile plays that some
    # assignment makes)
    naturals: tuple[Natural | HouseNatural, ...]
    playable_naturals: tuple[Natural | HouseNatural, ...]  # those the profile plays, best first
    fantasyland: FantasylandResult | None


_ROWS_PROFILE = "_rows_profile"  # where a profile holds it (not a profile field)


def _rows_profile(profile: RuleProfile) -> RuleProfile:
    """The profile an arrangement's rows are judged under before the reveal: no natural detected
    (one settles only when declared). Built once and held on the profile, as its plan is."""
    if profile.naturals.require_declaration:
        return profile
    try:
        rows: RuleProfile = profile.__dict__[_ROWS_PROFILE]
    except KeyError:
        naturals = profile.naturals
        rows = profile.__dict__[_ROWS_PROFILE] = replace(
            profile, naturals=replace(naturals, require_declaration=True, table=())
        )
    return rows


def evaluate_hand(inp: PlayerInput, profile: RuleProfile) -> HandEvaluation:
    """Rows, royalties, foul, naturals and Fantasyland of one hand (no opponents).

    ``inp`` carries an arrangement or 13 loose cards; ``InvalidInput`` names every problem.
    A joker may stand for any card the hand does not hold (no table to take cards away).
    """
    errors = Collector()
    seen: dict[int, str] = {}
    p = PlayerState(
        PlayerInput(
            inp.player_id or "player",
            0,
            inp.front,
            inp.middle,
            inp.back,
            in_fantasyland=inp.in_fantasyland,
        )
    )
    canonical: list[str] = []
    jokers = profile.deck.jokers > 0
    forms = sum((inp.has_arrangement, inp.cards is not None))
    if forms != 1:
        errors.add("arrangement", "send either an arrangement or 13 cards", ViolationCode.OTHER)
    if inp.has_arrangement:
        for key, size in ROW_KEYS:
            cards = getattr(inp, key)
            if cards is None:
                errors.add(f"arrangement.{key}", f"is required ({size} cards)", ViolationCode.OTHER)
            else:
                check_cards(errors, None, f"arrangement.{key}", cards, size, canonical, jokers)
                check_cards(errors, seen, f"arrangement.{key}", cards, None, [], jokers)
    elif inp.cards is not None:
        check_cards(errors, None, "cards", inp.cards, 13, canonical, jokers)
        check_cards(errors, seen, "cards", inp.cards, None, [], jokers)
    held_jokers = canonical.count(JOKER)
    if held_jokers > profile.deck.jokers:
        errors.add(
            "arrangement" if inp.has_arrangement else "cards",
            f"holds {held_jokers} jokers; the profile's deck has {profile.deck.jokers} "
            "(deck.jokers)",
            ViolationCode.DUPLICATE_CARD,
        )
    errors.raise_if_any()
    p.cards13 = tuple(canonical)
    allowed = allowed_cards(p.cards13, profile.deck.joker_duplicates) if held_jokers else ()
    naturals = profile.naturals
    if held_jokers:
        search = NaturalSearch(p.cards13, allowed, profile)
        playable = [n for n in naturals.best_first if search.holds(n)]
        held: list[Natural | HouseNatural] = [naturals.by_natural[n].natural for n in playable]
    else:
        cards = [CARD_BY_SPELLING[c] for c in p.cards13]
        facts = hand_facts(cards)
        found = naturals_held(facts)
        held = [n for n in Natural if n in found]
        playable = [n for n in naturals.best_first if naturals.predicates[n](facts)]
    fl = None
    if inp.has_arrangement:
        # Rows are judged as arranged: a natural is only settled when declared (or detected).
        rows_profile = _rows_profile(profile)
        evaluate_player(p, rows_profile, plan_for(rows_profile), errors, 0, allowed)
        fl = fantasyland(p, profile, plan_for(profile))
    return HandEvaluation(
        rows=p.rows,
        royalty_total=p.royalty_total,
        fouled=p.status is Status.FOULED,
        foul_reasons=tuple(p.foul_reasons),
        naturals=tuple(held),
        playable_naturals=tuple(naturals.by_natural[n].natural for n in playable),
        fantasyland=fl,
    )
