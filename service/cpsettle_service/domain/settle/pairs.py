"""One pair of players settled in units (RULES.md §5-9): rows, bonuses, royalties,
fouls, naturals, surrenders, and the scoop and home-run multipliers.

``settle_pair`` is the one entry for a pair; the units are for the pair's first player, who
comes first in settlement order. Money (the stake, caps and rake) is ``caps.py``'s.
"""

from __future__ import annotations

from ..cards.cards import CANONICAL, Rank
from ..cards.hands import highest_card
from ..profile.model import FoulPenalty, NaturalTie, RuleProfile, VsFoul
from .fouls import fixed_foul, scooped_penalty, suit_rank
from .jokers import sorted_ranks
from .results import (
    KIND_ROWS,
    MAJORITY_BONUS,
    NATURAL_BY_CARDS,
    NATURAL_SAME_CARDS,
    REGULAR,
    SCOOP_BONUS,
    ItemKind,
    PairKind,
    Status,
    foul_text,
    line_item,
)
from .royalties import royalties_line
from .working import PairState, Plan, PlayerState

_MAJORITY = "Majority bonus: {0} won {1} rows to {2} — {0} +{3}"
_SCOOP = "Scoop bonus: {0} won all three rows — {0} +{1}"


def _break_ties_by_suit(pair: PairState, plan: Plan) -> tuple[int, ...]:
    """Row strengths with equal rows decided by the suit of each hand's highest card.

    Records the deciding cards on the pair (``row_tie = SUIT_OF_HIGHEST_CARD``).
    """
    a, b = pair.a, pair.b
    suit_order = plan.suit_order
    xs, ys = list(a.strengths), list(b.strengths)
    ties = ["", "", ""]
    for i in (0, 1, 2):
        if xs[i] == ys[i]:
            ra, rb = a.rows[i], b.rows[i]
            ca = highest_card(ra.resolved_cards, ra.hand, suit_order)
            cb = highest_card(rb.resolved_cards, rb.hand, suit_order)
            first_wins = suit_rank(ca, suit_order) < suit_rank(cb, suit_order)
            xs[i], ys[i] = (1, 0) if first_wins else (0, 1)
            ties[i] = f"{CANONICAL[ca.index]} {CANONICAL[cb.index]}"
    pair.tie_breaks = tuple(ties)
    return (*xs, *ys)


_LOSES_EVERY_ROW = (-1, -1, -1)  # as row strengths: below every hand
_WINS_EVERY_ROW = (0, 0, 0)


def _compare_regular(
    pair: PairState,
    a: PlayerState,
    b: PlayerState,
    profile: RuleProfile,
    plan: Plan,
    xs: tuple[int, ...] | None = None,
    ys: tuple[int, ...] = (),
) -> None:
    """Each row compared, then majority and scoop bonuses and royalties (ALWAYS).

    ``xs``/``ys`` stand in for the players' row strengths when one hand is fouled (it loses
    every row). Written as branches: CPython 3.11 specializes a comparison that feeds a jump,
    not one whose bool is used as a number.
    """
    if xs is None:
        x0, x1, x2 = a.strengths
        y0, y1, y2 = b.strengths
        if (x0 == y0 or x1 == y1 or x2 == y2) and plan.row_tie_suit:
            x0, x1, x2, y0, y1, y2 = _break_ties_by_suit(pair, plan)
    else:
        x0, x1, x2 = xs
        y0, y1, y2 = ys
    va, vb = a.values, b.values
    won = lost = 0
    if x0 > y0:
        s0, u0, won = 1, va[0], 1
    elif x0 < y0:
        s0, u0, lost = -1, -vb[0], 1
    else:
        s0 = u0 = 0
    if x1 > y1:
        s1, u1, won = 1, va[1], won + 1
    elif x1 < y1:
        s1, u1, lost = -1, -vb[1], lost + 1
    else:
        s1 = u1 = 0
    if x2 > y2:
        s2, u2, won = 1, va[2], won + 1
    elif x2 < y2:
        s2, u2, lost = -1, -vb[2], lost + 1
    else:
        s2 = u2 = 0
    pair.signs = (s0, s1, s2)
    pair.row_units = (u0, u1, u2)
    pair.kind = KIND_ROWS
    score = u0 + u1 + u2
    items = pair.items
    bonus = plan.majority_bonus
    if bonus:
        if won > lost and (won < 3 or plan.majority_on_scoop):
            score += bonus
            items.append(
                line_item(
                    kind=MAJORITY_BONUS, units=bonus, fmt=_MAJORITY, args=(a.pid, won, lost, bonus)
                )
            )
        elif lost > won and (lost < 3 or plan.majority_on_scoop):
            score -= bonus
            items.append(
                line_item(
                    kind=MAJORITY_BONUS, units=-bonus, fmt=_MAJORITY, args=(b.pid, lost, won, bonus)
                )
            )
    if won == 3:
        pair.scoop_by = a
        bonus = plan.scoop_bonus
        if bonus:
            items.append(line_item(kind=SCOOP_BONUS, units=bonus, fmt=_SCOOP, args=(a.pid, bonus)))
            score += bonus
    elif lost == 3:
        pair.scoop_by = b
        bonus = plan.scoop_bonus
        if bonus:
            items.append(line_item(kind=SCOOP_BONUS, units=-bonus, fmt=_SCOOP, args=(b.pid, bonus)))
            score -= bonus
    if plan.always and (a.royalty_total or b.royalty_total):
        item = royalties_line(a, b)
        score += item.units
        items.append(item)
    pair.units = score


def _compare_rows(pair: PairState, profile: RuleProfile, plan: Plan) -> None:
    """Rows, majority and scoop bonuses, royalties; ``a`` or ``b`` may be fouled (SCOOPED)."""
    a, b = pair.a, pair.b
    if a.status is Status.FOULED:  # a fouled hand loses every row, to the other's row values
        _compare_regular(pair, a, b, profile, plan, _LOSES_EVERY_ROW, _WINS_EVERY_ROW)
        pair.kind = PairKind.FOUL
    elif b.status is Status.FOULED:
        _compare_regular(pair, a, b, profile, plan, _WINS_EVERY_ROW, _LOSES_EVERY_ROW)
        pair.kind = PairKind.FOUL
    else:
        _compare_regular(pair, a, b, profile, plan)


def settle_pair(pair: PairState, profile: RuleProfile, plan: Plan) -> None:
    """The pair's units (for its first player) and the lines that explain them."""
    a, b = pair.a, pair.b
    sa, sb = a.status, b.status
    if sa is REGULAR and sb is REGULAR:  # the common case, and its only path
        _compare_regular(pair, a, b, profile, plan)
        return
    items = pair.items
    # Surrender first: a surrendered hand is never compared.
    if sa is Status.SURRENDERED or sb is Status.SURRENDERED:
        pair.kind = PairKind.SURRENDER
        if sa is sb:
            items.append(
                line_item(
                    kind=ItemKind.NO_SCORE,
                    units=0,
                    fmt=f"Both {a.pid} and {b.pid} surrendered — 0",
                    args=(),
                )
            )
            return
        s, o = (a, b) if sa is Status.SURRENDERED else (b, a)
        if o.status is Status.FOULED and not profile.surrender.pays_fouled:
            items.append(
                line_item(
                    kind=ItemKind.NO_SCORE,
                    units=0,
                    fmt=f"Surrender: {s.pid} surrendered, but {o.pid}'s fouled hand collects "
                    "nothing — 0",
                    args=(),
                )
            )
            return
        units = profile.surrender.units
        pair.units = units if o is a else -units
        items.append(
            line_item(
                kind=ItemKind.SURRENDER,
                units=pair.units,
                fmt=f"Surrender: {s.pid} surrendered and pays {o.pid} {units} — {o.pid} +{units}",
                args=(),
            )
        )
        return
    if sa is Status.NATURAL or sb is Status.NATURAL:
        pair.kind = PairKind.NATURAL
        _settle_natural(pair, profile)
        return
    if sa is Status.FOULED and sb is Status.FOULED:
        pair.kind = PairKind.FOUL
        items.append(
            line_item(
                kind=ItemKind.NO_SCORE,
                units=0,
                fmt=f"Both {a.pid} and {b.pid} fouled — they settle 0",
                args=(),
            )
        )
        return
    if (sa is Status.FOULED or sb is Status.FOULED) and profile.foul.penalty is FoulPenalty.FIXED:
        pair.kind = PairKind.FOUL
        fouled, other = (a, b) if sa is Status.FOULED else (b, a)
        units = fixed_foul(pair, fouled, other, profile)
        pair.units = units if other is a else -units
        pair.scoop_by = other  # a fouled player counts as scooped (DECISIONS 3)
        return
    _compare_rows(pair, profile, plan)
    if sa is Status.FOULED or sb is Status.FOULED:
        fouled = a if sa is Status.FOULED else b
        items.insert(
            0,
            line_item(
                kind=ItemKind.FOUL_PENALTY,
                units=0,
                fmt=f"Foul: {fouled.pid}'s hand is fouled ({foul_text(fouled.foul_reasons)}), "
                "so it loses every "
                "row",
                args=(),
            ),
        )


def _settle_natural(pair: PairState, profile: RuleProfile) -> None:
    a, b = pair.a, pair.b
    items = pair.items
    if a.status is Status.NATURAL and b.status is Status.NATURAL:
        ea, eb = a.natural_entry, b.natural_entry
        assert ea is not None and eb is not None
        if ea.rank == eb.rank:
            by_cards = 0
            if profile.naturals.equal_rank is NaturalTie.COMPARE_CARDS:
                ra, rb = _natural_ranks(a), _natural_ranks(b)
                by_cards = (ra > rb) - (ra < rb)
            if not by_cards:
                if profile.naturals.equal_rank is NaturalTie.COMPARE_CARDS:
                    items.append(
                        line_item(
                            kind=ItemKind.NO_SCORE,
                            units=0,
                            fmt=NATURAL_SAME_CARDS,
                            args=(a.pid, a.natural_phrase, b.pid, b.natural_phrase),
                        )
                    )
                    return
                items.append(
                    line_item(
                        kind=ItemKind.NO_SCORE,
                        units=0,
                        fmt=f"Natural: {a.pid}'s {a.natural_phrase} and {b.pid}'s "
                        f"{b.natural_phrase} rank equal — 0",
                        args=(),
                    )
                )
                return
            # RULES.md §16.2: equal naturals compared card by card from the top, by rank.
            winner, loser = (a, b) if by_cards > 0 else (b, a)
            e = winner.natural_entry
            assert e is not None
            pair.units = e.units if winner is a else -e.units
            rw, rl = _natural_ranks(winner), _natural_ranks(loser)
            card = next(i for i, (x, y) in enumerate(zip(rw, rl, strict=True)) if x != y)
            items.append(
                line_item(
                    kind=ItemKind.NATURAL,
                    units=pair.units,
                    fmt=NATURAL_BY_CARDS,
                    args=(
                        winner.pid,
                        winner.natural_phrase,
                        loser.pid,
                        loser.natural_phrase,
                        card + 1,
                        Rank.from_int(rw[card]),
                        Rank.from_int(rl[card]),
                        e.units,
                        winner is a,
                    ),
                )
            )
            return
        winner, loser, e = (a, b, ea) if ea.rank > eb.rank else (b, a, eb)
        pair.units = e.units if winner is a else -e.units
        items.append(
            line_item(
                kind=ItemKind.NATURAL,
                units=pair.units,
                fmt=f"Natural: {winner.pid}'s {winner.natural_phrase} outranks {loser.pid}'s "
                f"{loser.natural_phrase} — {winner.pid} +{e.units}",
                args=(),
            )
        )
        return
    n, o = (a, b) if a.status is Status.NATURAL else (b, a)
    entry = n.natural_entry
    assert entry is not None
    units = entry.units
    if o.status is Status.FOULED:
        if profile.foul.penalty is FoulPenalty.FIXED:
            penalty = profile.foul.fixed_units
        else:
            penalty = scooped_penalty(profile)
        if profile.naturals.vs_foul is VsFoul.GREATER_OF_NATURAL_AND_FOUL and penalty > units:
            units = penalty
            why = f"the foul penalty of {penalty}, more than the natural's {entry.units}"
        else:
            why = f"the natural's {entry.units}"
        text = (
            f"Natural: {n.pid}'s {n.natural_phrase} against {o.pid}'s fouled hand "
            f"({foul_text(o.foul_reasons)}); {o.pid} pays {why} — {n.pid} +{units}"
        )
    else:
        text = (
            f"Natural: {n.pid}'s {n.natural_phrase} wins automatically against "
            f"{o.pid} — {n.pid} +{units}"
        )
    pair.units = units if n is a else -units
    items.append(line_item(kind=ItemKind.NATURAL, units=pair.units, fmt=text, args=()))


def _natural_ranks(p: PlayerState) -> tuple[int, ...]:
    """The natural's 13 ranks from the top (with jokers: as the kept assignment resolves them)."""
    return sorted_ranks(p.assignment.cards if p.assignment is not None else p.cards13)


def apply_multipliers(
    pairs: list[PairState], players: list[PlayerState], profile: RuleProfile
) -> None:
    """The scoop and home-run multipliers, each with its line (RULES.md §7)."""
    scoring = profile.scoring
    if scoring.scoop_multiplier != 1:
        for pair in pairs:
            if pair.scoop_by is not None and pair.units:
                before = pair.units
                pair.units *= scoring.scoop_multiplier
                pair.items.append(
                    line_item(
                        kind=ItemKind.SCOOP_MULTIPLIER,
                        units=pair.units - before,
                        fmt="Scoop ×{0}: {1} scooped — +{2} becomes +{3} for {1}",
                        args=(
                            scoring.scoop_multiplier,
                            pair.scoop_by.pid,
                            abs(before),
                            abs(pair.units),
                        ),
                    )
                )
    hr = scoring.home_run
    if hr.multiplier == 1 or len(players) < hr.min_players:
        return
    # A home run: a regular hand that scooped every one of its pairs. A player is in
    # len(players) - 1 pairs, and only his own pairs can name him, so counting is enough; at
    # most one player can have scooped everyone.
    scoops: dict[PlayerState, int] = {}
    for pair in pairs:
        by = pair.scoop_by
        if by is not None:
            scoops[by] = scoops.get(by, 0) + 1
    everyone = len(players) - 1
    for h, count in scoops.items():
        if count == everyone and h.status is REGULAR:
            for pair in pairs:
                if pair.a is not h and pair.b is not h:
                    continue
                before = pair.units
                pair.units *= hr.multiplier
                pair.items.append(
                    line_item(
                        kind=ItemKind.HOME_RUN_MULTIPLIER,
                        units=pair.units - before,
                        fmt="Home run ×{0}: {1} scooped every opponent — +{2} becomes +{3} for {1}",
                        args=(hr.multiplier, h.pid, abs(before), abs(pair.units)),
                    )
                )
