"""Money (RULES.md §10): the settlement order from the button, the stake, stack caps and rake.

A pair's units become money here: ``owed = units x the table's unit value``, cut by the stack
caps in settlement order; the house's rake is taken as a per-player fee before the pairs or as a
commission on winnings after them. Nothing here decides units: that is ``pairs.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..errors import InvalidInput, Violation, ViolationCode
from ..profile.model import MAX_MONEY, CapBasis, CapOrder, Caps, RakeMode, RuleProfile
from .results import KIND_FOUL, PairResult, Status, pair_result
from .working import PairState, PlayerState


def settlement_order(seats: Sequence[int], button_seat: int, order: CapOrder) -> list[int]:
    """Indices into ``seats`` clockwise (rising seat numbers, wrapping) from the first player.

    ``BUTTON_FIRST`` starts at the button, or the first occupied seat clockwise from it;
    ``LEFT_OF_BUTTON_FIRST`` at the first occupied seat strictly after the button.

    >>> settlement_order([1, 2, 3, 4], 3, CapOrder.BUTTON_FIRST)
    [2, 3, 0, 1]
    >>> settlement_order([1, 2, 3, 4], 3, CapOrder.LEFT_OF_BUTTON_FIRST)
    [3, 0, 1, 2]
    >>> settlement_order([0, 5, 9], 6, CapOrder.BUTTON_FIRST)
    [2, 0, 1]
    """
    by_seat = sorted(range(len(seats)), key=seats.__getitem__)
    strict = order is CapOrder.LEFT_OF_BUTTON_FIRST
    start = 0
    for pos, i in enumerate(by_seat):
        if seats[i] > button_seat or (not strict and seats[i] == button_seat):
            start = pos
            break
    else:
        start = 0  # wrap round to the lowest seat
    return by_seat[start:] + by_seat[:start]


PAYER_STACK = "PAYER_STACK"
PAYEE_STACK = "PAYEE_STACK"
BOTH_STACKS = "PAYER_STACK+PAYEE_STACK"


class Ledger(Protocol):
    """Running money of one player during the hand, as the caps read it."""

    stack: int | None  # what he had at the start (less a per-player fee); None = uncapped
    received: int
    paid: int


def cap_payment(owed: int, payer: Ledger, payee: Ledger, caps: Caps) -> tuple[int, str]:
    """How much of ``owed`` (> 0) the payer pays the payee, and which cap cut it ("" if none)."""
    payer_room: int | None = None
    payee_room: int | None = None
    if caps.basis is CapBasis.HAND_START:
        if caps.losses and payer.stack is not None:
            payer_room = payer.stack + payer.received - payer.paid
        if caps.wins and payee.stack is not None:
            payee_room = payee.stack - (payee.received - payee.paid)
    else:
        if caps.losses and payer.stack is not None:
            payer_room = payer.stack + payer.received - payer.paid
        if caps.wins and payee.stack is not None:
            payee_room = payee.stack + payee.received - payee.paid
    paid = owed
    if payer_room is not None:
        payer_room = max(payer_room, 0)
        paid = min(paid, payer_room)
    if payee_room is not None:
        payee_room = max(payee_room, 0)
        paid = min(paid, payee_room)
    if paid == owed:
        return paid, ""
    payer_cut = payer_room == paid
    payee_cut = payee_room == paid
    if payer_cut and payee_cut:
        return paid, BOTH_STACKS
    return paid, PAYER_STACK if payer_cut else PAYEE_STACK


def charge_fees(players: Sequence[PlayerState], profile: RuleProfile) -> None:
    """The per-player fee (``PER_PLAYER`` rake), taken from each stack before the pairs."""
    if profile.rake.mode is not RakeMode.PER_PLAYER:
        return
    fee = profile.rake.per_player_fee
    for p in players:
        stack = p.stack
        p.rake = fee if stack is None else min(fee, stack)
        if stack is not None:
            p.stack = stack - p.rake


def _fouled_id(a: PlayerState, b: PlayerState) -> str:
    return a.pid if a.status is Status.FOULED else b.pid if b.status is Status.FOULED else ""


def pay_pairs(
    pairs: Sequence[PairState], caps: Caps, capped: bool, unit_value: int
) -> list[PairResult]:
    """Each pair's units in money at the table's stake, paid under the caps in order."""
    results: list[PairResult] = []
    for pair in pairs:
        a, b = pair.a, pair.b
        units = pair.units
        a.net_units += units
        b.net_units -= units
        kind = pair.kind
        if units:
            if units > 0:
                payer, payee, owed = b, a, units * unit_value
            else:
                payer, payee, owed = a, b, -units * unit_value
            payer_id, payee_id = payer.pid, payee.pid
            if owed > MAX_MONEY:
                raise InvalidInput(
                    [
                        Violation(
                            "unitValue",
                            f"{payer_id} would owe {payee_id} {abs(units):,} units x "
                            f"{unit_value:,} = {owed:,} minor units, beyond the 64-bit "
                            f"money range; lower the stake or "
                            "the profile's multipliers",
                            ViolationCode.OTHER,
                        )
                    ]
                )
            if not capped:  # paid in full: a player's money is then his net units x stake
                paid, cut = owed, ""
            else:
                if payer.stack is not None or payee.stack is not None:
                    paid, cut = cap_payment(owed, payer, payee, caps)
                else:
                    paid, cut = owed, ""
                payer.paid += paid
                payee.received += paid
        else:
            owed = paid = 0
            payer_id = payee_id = cut = ""
        signs = pair.signs
        results.append(
            pair_result(
                a.pid,
                b.pid,
                kind=kind,
                items=tuple(pair.items),
                units=units,
                owed=owed,
                paid=paid,
                payer=payer_id,
                payee=payee_id,
                cap=cut,
                row_signs=signs,
                row_units=pair.row_units,
                first_rows=a.rows if signs else (),
                second_rows=b.rows if signs else (),
                fouled=_fouled_id(a, b) if kind is KIND_FOUL else "",
                tie_breaks=pair.tie_breaks,
            )
        )
    return results


def net_money(players: Sequence[PlayerState], capped: bool, unit_value: int) -> list[int]:
    """Each player's money won (+) or lost (-) in the pairs, before rake."""
    out = []
    for p in players:
        money = p.received - p.paid if capped else p.net_units * unit_value
        if not -MAX_MONEY <= money <= MAX_MONEY:
            raise InvalidInput(
                [
                    Violation(
                        "unitValue",
                        f"{p.pid}'s net of {money:,} minor units is beyond the 64-bit money range; "
                        "lower the stake or the profile's multipliers",
                        ViolationCode.OTHER,
                    )
                ]
            )
        out.append(money)
    return out


def take_commission(
    players: Sequence[PlayerState], profile: RuleProfile, capped: bool, unit_value: int
) -> None:
    """The commission (``COMMISSION`` rake) on each winner's money, after the pairs."""
    rake = profile.rake
    if rake.mode is not RakeMode.COMMISSION:
        return
    bps, cap = rake.commission_bps, rake.commission_cap
    for p in players:
        m = p.received - p.paid if capped else p.net_units * unit_value
        if m > 0:
            c = m * bps // 10_000
            p.rake = min(c, cap) if cap > 0 else c
