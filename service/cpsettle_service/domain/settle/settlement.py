"""``settle(table, profile)``: the itemized settlement of one hand (RULES.md §4-11).

Every line carries a sentence a floor supervisor can read. Units are the scoring points; money
is integer minor units at the table's stake. Players' net money plus the table's rake is
exactly zero, checked before a settlement is returned.

The steps live in their own rooms, in the order ``settle`` runs them:

=================  ============================================================
``validation``     every problem of the request named at once (one path)
``jokers``         each joker's card: the one assignment a hand settles with
``evaluation``     each hand: rows, foul (``fouls``), royalties (``royalties``), naturals,
                   Fantasyland
``pairs``          each pair in units: rows, bonuses, fouls, naturals, multipliers
``money``          money: settlement order, the stake, stack caps and rake
``results``        the immutable result types and their sentences
``working``        the mutable per-player and per-pair state, and the profile's plan
``payouts``        checking a dealer's proposed payouts against a settlement
=================  ============================================================
"""

from __future__ import annotations

from itertools import combinations

from ..cards.cards import Card
from ..errors import Collector
from ..profile.model import CapOrder, RuleProfile
from .evaluation import evaluate_player, fantasyland
from .jokers import allowed_cards
from .money import charge_fees, net_money, pay_pairs, settlement_order, take_commission
from .pairs import apply_multipliers, settle_pair
from .results import (
    FOULED,
    NO_NATURALS,
    SURRENDERED,
    HeldNatural,
    PlayerResult,
    Settlement,
    player_result,
    settlement_result,
)
from .table import Table
from .validation import table_cards, validate
from .working import PairState, plan_for

# (seats, button, cap order) -> the settlement order's indexes: few seatings recur at a table
_ORDERS: dict[tuple[tuple[int, ...], int, CapOrder], list[int]] = {}


def settle(table: Table, profile: RuleProfile) -> Settlement:
    """Settle one hand. Raises ``InvalidInput`` (every violation) and never settles partly.

    The stake is the table's ``unit_value``, or the profile's ``money.unitValue`` when the table
    names none.
    """
    plan = plan_for(profile)
    players = validate(table, profile)
    errors = Collector()
    allowed: tuple[Card, ...] = ()
    if plan.jokers:  # what a joker may stand for at this table (RULES.md §16.3)
        allowed = allowed_cards(table_cards(players, table), profile.deck.joker_duplicates)
    for i, p in enumerate(players):
        evaluate_player(p, profile, plan, errors, i, allowed)
    errors.raise_if_any()

    seats = tuple([p.input.seat for p in players])
    button = table.button_seat if table.button_seat is not None else min(seats)
    key = (seats, button, profile.caps.order)
    indexes = _ORDERS.get(key)
    if indexes is None:
        if len(_ORDERS) >= 4096:
            _ORDERS.clear()
        indexes = _ORDERS[key] = settlement_order(seats, button, profile.caps.order)
    order = [players[i] for i in indexes]

    pairs: list[PairState] = []
    for a, b in combinations(order, 2):  # every pair, in settlement order
        pair = PairState(a, b)
        settle_pair(pair, profile, plan)
        pairs.append(pair)
    if plan.multipliers:
        apply_multipliers(pairs, order, profile)

    # Money: per-player fee first, then the pairs in button order under the caps.
    unit_value = table.unit_value if table.unit_value is not None else profile.money.unit_value
    capped = plan.capped
    charge_fees(order, profile)
    pair_results = pay_pairs(pairs, profile.caps, capped, unit_value)
    take_commission(order, profile, capped, unit_value)

    total_rake = 0
    total_net = 0
    player_results: list[PlayerResult] = []
    with_fantasyland = plan.fantasyland
    held: dict[str, HeldNatural] | None = None
    for p, money in zip(order, net_money(order, capped, unit_value), strict=True):
        net = money - p.rake
        total_rake += p.rake
        total_net += net
        status = p.status
        inp = p.input
        if p.natural is not None:  # what its sentences say beyond its name (RULES.md §8, §16.3)
            entry, assignment = p.natural_entry, p.assignment
            assert entry is not None
            if held is None:
                held = {}
            held[p.pid] = HeldNatural(
                rank=entry.rank,
                units=entry.units,
                joker_cards=assignment.stands_for if assignment is not None else (),
            )
        player_results.append(
            player_result(
                p.pid,
                inp.seat,
                status=status,
                rows=p.rows,
                royalty_total=p.royalty_total,
                fouled=status is FOULED,
                foul_reasons=p.foul_reasons,
                natural=p.natural,
                declared_natural=inp.declared_natural,
                surrendered=status is SURRENDERED,
                stack=inp.stack,
                net_units=p.net_units,
                money_before_rake=money,
                rake=p.rake,
                net_money=net,
                fantasyland=fantasyland(p, profile, plan) if with_fantasyland else None,
            )
        )
    if total_net + total_rake != 0:  # pragma: no cover
        raise AssertionError("settlement does not balance: nets plus rake must sum to zero")
    return settlement_result(
        context=table.context,
        profile=profile,
        unit_value=unit_value,
        button_seat=button,
        order=tuple([p.pid for p in order]),
        players=tuple(player_results),
        pairs=tuple(pair_results),
        rake=total_rake,
        currency=table.currency or profile.money.currency,
        naturals=held if held is not None else NO_NATURALS,
    )


__all__ = ["settle"]
