"""The settlement built through the protobuf runtime, field by field: the reference that
``cpsettle_service.api.wire`` (which writes the same message as bytes) is checked against.

This was the service's own mapping before the wire writer replaced it on the hot path; it stays
here, in the tests only, as an independent second writing of the same message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.domain.settle import EvaluatedRow, FantasylandResult, Settlement

if TYPE_CHECKING:  # the generic wrapper of the generated enums exists in the stubs only
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

_V = TypeVar("_V", bound=int)


def _enum(enum: _EnumTypeWrapper[_V], member: str) -> _V:
    """The number of ``cpsettle.v1`` enum ``enum``'s value ``member``, by its name."""
    name = enum.DESCRIPTOR.name
    prefix = "".join("_" + c if c.isupper() and i else c for i, c in enumerate(name)).upper()
    return enum.Value(f"{prefix}_{member}")


def _row(r: EvaluatedRow, out: pb.EvaluatedRow) -> None:
    out.row = _enum(profile_pb2.Row, r.row.name)
    out.cards.extend(r.cards)
    out.hand_class = _enum(profile_pb2.HandClass, r.hand.hand_class.name)
    out.name = r.hand.name
    out.royalty = r.royalty
    out.joker_cards.extend(r.joker_cards)


def _fantasyland(f: FantasylandResult, out: pb.FantasylandResult) -> None:
    out.qualifies = f.qualifies
    out.cards = f.cards
    out.text = f.text
    out.in_fantasyland = f.in_fantasyland
    if f.row is not None:
        out.row = _enum(profile_pb2.Row, f.row.name)


def settlement_to_proto(
    s: Settlement, out: pb.Settlement, profile_digest: str = "", profile_source: str = ""
) -> pb.Settlement:
    """Fill ``out`` with the settlement's content (fields 1-9 of ``Settlement``)."""
    c = s.context
    ctx = out.context
    ctx.hand_id = c.hand_id
    ctx.table_id = c.table_id
    ctx.round_id = c.round_id
    ctx.dealer_id = c.dealer_id
    out.profile.name = s.profile.name
    out.profile.version = s.profile.version
    out.profile.digest = profile_digest
    out.profile.source = profile_source
    out.unit_value = s.unit_value
    out.button_seat = s.button_seat
    out.order.extend(s.order)
    built: dict[int, pb.EvaluatedRow] = {}
    for p in s.players:
        pp = out.players.add()
        pp.player_id = p.player_id
        pp.seat = p.seat
        pp.status = _enum(pb.PlayerStatus, p.status.name)
        for r in p.rows:
            msg = pp.rows.add()
            _row(r, msg)
            built[id(r)] = msg
        pp.royalty_total = p.royalty_total
        pp.fouled = p.fouled
        if p.foul_reasons:
            pp.foul_reasons.extend([_enum(pb.FoulReason, r.name) for r in p.foul_reasons])
        if p.natural is not None:
            pp.natural = p.natural
        if p.declared_natural:
            pp.declared_natural = p.declared_natural
        pp.surrendered = p.surrendered
        if p.stack is not None:
            pp.stack = p.stack
        pp.net_units = p.net_units
        pp.money_before_rake = p.money_before_rake
        pp.rake = p.rake
        pp.net_money = p.net_money
        if p.fantasyland is not None:
            _fantasyland(p.fantasyland, pp.fantasyland)
        pp.text = p.text
        held = s.naturals.get(p.player_id)
        if held is not None:
            pp.natural_joker_cards.extend(held.joker_cards)
            pp.natural_units = held.units
            pp.natural_rank = held.rank
    for pr in s.pairs:
        q = out.pairs.add()
        q.first = pr.first
        q.second = pr.second
        q.kind = _enum(pb.PairKind, pr.kind.name)
        for rr in pr.rows:
            rm = q.rows.add()
            rm.row = _enum(profile_pb2.Row, rr.row.name)
            if rr.first is not None:
                rm.first.CopyFrom(built[id(rr.first)])
            if rr.second is not None:
                rm.second.CopyFrom(built[id(rr.second)])
            rm.winner = rr.winner
            rm.units = rr.units
            rm.text = rr.text
            if rr.tie_break:
                rm.tie_break_cards.extend(rr.tie_break.split())
        for item in pr.items:
            li = q.items.add()
            li.kind = _enum(pb.LineItemKind, item.kind.name)
            li.units = item.units
            li.text = item.text
            li.multiplier = item.multiplier
            compared = item.cards_compared
            if compared is not None:
                (
                    li.cards_compared.card,
                    li.cards_compared.first_rank,
                    li.cards_compared.second_rank,
                ) = compared
                li.cards_compared.SetInParent()
        q.units = pr.units
        q.owed = pr.owed
        q.paid = pr.paid
        q.payer = pr.payer
        q.payee = pr.payee
        if pr.cap:  # "" is no cap; "PAYER_STACK+PAYEE_STACK" is both
            q.cap = _enum(pb.Cap, "BOTH_STACKS" if "+" in pr.cap else pr.cap)
        q.text = pr.text
    out.rake = s.rake
    out.text.extend(s.text)
    out.currency = s.currency
    return out
