"""Button order, stack caps and rake (RULES.md §10)."""

from __future__ import annotations

from typing import Protocol, Sequence

from .profile import CapBasis, CapOrder, Caps

_LEFT_OF_BUTTON_FIRST = CapOrder.LEFT_OF_BUTTON_FIRST


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
    strict = order is _LEFT_OF_BUTTON_FIRST
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
