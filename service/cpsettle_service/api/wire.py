"""A settlement written straight to protobuf wire bytes: the Settle hot path.

Building the ``Settlement`` message field by field through the protobuf runtime cost about
three quarters of a Settle call's own work (≈ 350 field sets and sub-message wrappers for a
4-player table). Here the same message is written as bytes, in field-number order with proto3's
presence rules, so the result is exactly what ``SerializeToString(deterministic=True)`` gives
for that message (``tests/api/test_wire.py`` checks it byte for byte against a message built
through the runtime, on every golden table and on random ones). What repeats between calls is
written once and kept: each card's field, each hand's class and name, the row labels.

The wire format's writers are ``wireformat``'s; the fields of the seal (10-17: ids, digests, the
time of issue, the signature, the currency) are written by ``proof.seal``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cpsettle.v1 import settlement_pb2 as pb

from ..domain.cards.cards import CANONICAL
from ..domain.cards.rows import ROWS
from ..domain.settle import (
    EvaluatedRow,
    FantasylandResult,
    HeldNatural,
    LineItem,
    PairResult,
    PlayerResult,
    Settlement,
)
from ..proof.log import Receipt
from ..wireformat import (
    SMALL,
    VARINTS,
    enum_field,
    int_field,
    message_field,
    number,
    packed_enum_field,
    repeated_text_field,
    tag,
    text_field,
    varint,
)
from .mapping import (
    CAP,
    FOUL_REASON,
    HAND_CLASS,
    LINE_ITEM_KIND,
    PAIR_KIND,
    PLAYER_STATUS,
    ROW,
)

# --------------------------------------------------------------------------- EvaluatedRow

_E = pb.EvaluatedRow
_ROW_ROW = enum_field(number(_E, "row"), ROW)
_ROW_CARD = text_field(number(_E, "cards"))
_ROW_CLASS = enum_field(number(_E, "hand_class"), HAND_CLASS)
_ROW_HAND_NAME = text_field(number(_E, "name"))
_ROW_ROYALTY = int_field(number(_E, "royalty"))
_ROW_JOKER = text_field(number(_E, "joker_cards"))
_CARD_FIELD: dict[str, bytes] = {c: _ROW_CARD(c) for c in CANONICAL}
# hand -> its class and name fields, keyed by order_key: one int per distinct (category, ranks),
# three-card and five-card hands included, and the name and class follow from those.
_HAND_FIELDS: dict[int, bytes] = {}


def evaluated_row(r: EvaluatedRow) -> bytes:
    """An ``EvaluatedRow`` body (without its tag and length)."""
    cards = _CARD_FIELD
    hand = r.hand
    named = _HAND_FIELDS.get(hand.order_key)
    if named is None:
        named = _HAND_FIELDS[hand.order_key] = _ROW_CLASS[hand.hand_class] + _ROW_HAND_NAME(
            hand.name
        )
    return b"".join(
        (
            _ROW_ROW[r.row],
            b"".join([cards.get(c) or _ROW_CARD(c) for c in r.cards]),
            named,
            _ROW_ROYALTY(r.royalty) if r.royalty else b"",
            b"".join([_ROW_JOKER(c) for c in r.joker_cards]) if r.joker_cards else b"",
        )
    )


# --------------------------------------------------------------------------- PlayerResult

_F = pb.FantasylandResult
_F_QUALIFIES = int_field(number(_F, "qualifies"))
_F_CARDS = int_field(number(_F, "cards"))
_F_TEXT = text_field(number(_F, "text"))
_F_IN_FANTASYLAND = int_field(number(_F, "in_fantasyland"))
_F_ROW = enum_field(number(_F, "row"), ROW)


def fantasyland_result(f: FantasylandResult) -> bytes:
    """A ``FantasylandResult`` body."""
    out = _F_QUALIFIES(f.qualifies) + _F_CARDS(f.cards) + _F_TEXT(f.text)
    if f.in_fantasyland:
        out += _F_IN_FANTASYLAND(1)
    if f.row is not None:
        out += _F_ROW[f.row]
    return out


_P = pb.PlayerResult
_P_ID = text_field(number(_P, "player_id"))
_P_SEAT = int_field(number(_P, "seat"))
_P_STATUS = enum_field(number(_P, "status"), PLAYER_STATUS)
_P_ROW = tag(number(_P, "rows"), 2)
_P_ROYALTY = int_field(number(_P, "royalty_total"))
_P_FOULED = int_field(number(_P, "fouled"))
_P_FOUL_REASONS = packed_enum_field(number(_P, "foul_reasons"), FOUL_REASON)
_P_NATURAL = text_field(number(_P, "natural"))
_P_DECLARED = text_field(number(_P, "declared_natural"))
_P_SURRENDERED = int_field(number(_P, "surrendered"))
_P_STACK = tag(number(_P, "stack"), 0)
_P_NET_UNITS = int_field(number(_P, "net_units"))
_P_MONEY = int_field(number(_P, "money_before_rake"))
_P_RAKE = int_field(number(_P, "rake"))
_P_NET_MONEY = int_field(number(_P, "net_money"))
_P_FANTASYLAND = message_field(number(_P, "fantasyland"))
_P_TEXT = text_field(number(_P, "text"))
_P_NATURAL_JOKER = text_field(number(_P, "natural_joker_cards"))
_P_NATURAL_UNITS = int_field(number(_P, "natural_units"))
_P_NATURAL_RANK = int_field(number(_P, "natural_rank"))


def player_result(p: PlayerResult, rows: list[bytes], natural: HeldNatural | None = None) -> bytes:
    """A ``PlayerResult`` body; ``rows`` are its rows' bodies, length-prefixed; ``natural``
    what its natural's sentences say beyond its name."""
    parts = [_P_ID(p.player_id), _P_SEAT(p.seat), _P_STATUS[p.status]]
    parts += [_P_ROW + r for r in rows]
    parts.append(_P_ROYALTY(p.royalty_total))
    if p.fouled:
        parts.append(_P_FOULED(1))
        parts.append(_P_FOUL_REASONS(p.foul_reasons))
    if p.natural is not None:
        parts.append(_P_NATURAL(p.natural))
    parts.append(_P_DECLARED(p.declared_natural))
    if p.surrendered:
        parts.append(_P_SURRENDERED(1))
    if p.stack is not None:
        parts.append(_P_STACK + varint(p.stack))
    parts += [
        _P_NET_UNITS(p.net_units),
        _P_MONEY(p.money_before_rake),
        _P_RAKE(p.rake),
        _P_NET_MONEY(p.net_money),
    ]
    f = p.fantasyland
    if f is not None:
        parts.append(_P_FANTASYLAND(fantasyland_result(f)))
    parts.append(_P_TEXT(p.text))
    if natural is not None:
        parts += [_P_NATURAL_JOKER(c) for c in natural.joker_cards]
        parts.append(_P_NATURAL_UNITS(natural.units))
        parts.append(_P_NATURAL_RANK(natural.rank))
    return b"".join(parts)


# --------------------------------------------------------------------------- PairResult

_R = pb.RowResult
_R_ROW = enum_field(number(_R, "row"), ROW)
_R_FIRST = tag(number(_R, "first"), 2)
_R_SECOND = tag(number(_R, "second"), 2)
_R_UNITS = int_field(number(_R, "units"))
_R_TEXT = text_field(number(_R, "text"))
_R_TIE_BREAK = text_field(number(_R, "tie_break_cards"))

_I = pb.LineItem
_I_KIND = enum_field(number(_I, "kind"), LINE_ITEM_KIND)
_I_UNITS = int_field(number(_I, "units"))
_I_TEXT = text_field(number(_I, "text"))
_I_MULTIPLIER = int_field(number(_I, "multiplier"))
_I_COMPARED = message_field(number(_I, "cards_compared"))
_C = pb.CardComparison
_C_CARD = int_field(number(_C, "card"))
_C_FIRST, _C_SECOND = (text_field(number(_C, f)) for f in ("first_rank", "second_rank"))

_Q = pb.PairResult
_Q_KIND = enum_field(number(_Q, "kind"), PAIR_KIND)
_Q_ROWS = message_field(number(_Q, "rows"))
_Q_ITEMS = message_field(number(_Q, "items"))
_Q_UNITS = int_field(number(_Q, "units"))
_Q_OWED = int_field(number(_Q, "owed"))
_Q_PAID = int_field(number(_Q, "paid"))
_Q_CAP = enum_field(number(_Q, "cap"), CAP)
_Q_TEXT = text_field(number(_Q, "text"))
# A player id's fields, in _id_fields order.
_ID_TAGS = tuple(
    tag(n, 2)
    for n in (
        number(_Q, "first"),
        number(_Q, "second"),
        number(_Q, "payer"),
        number(_Q, "payee"),
        number(_R, "winner"),
    )
)


def _id_fields(pid: str) -> tuple[bytes, ...]:
    """A player id as PairResult.first, .second, .payer, .payee and RowResult.winner."""
    data = pid.encode()
    body = varint(len(data)) + data
    return tuple([t + body for t in _ID_TAGS])


_NO_ID = (b"",) * 5


# A line item's whole field, kept by the item (its kind, units, sentence format and arguments:
# strings and ints, so no two different sentences share a key): a table's items repeat from
# hand to hand (the same players, the same bonus for a majority), so most are written once.
# Emptied when full, so it stays bounded.
_ITEM_FIELDS: dict[LineItem, bytes] = {}
_ITEM_FIELDS_KEPT = 1 << 14


def _item_field(item: LineItem) -> bytes:
    field = _ITEM_FIELDS.get(item)
    if field is None:
        body = _I_KIND[item.kind] + _I_UNITS(item.units) + _I_TEXT(item.text)
        body += _I_MULTIPLIER(item.multiplier)
        compared = item.cards_compared
        if compared is not None:
            card, first, second = compared
            body += _I_COMPARED(_C_CARD(card) + _C_FIRST(first) + _C_SECOND(second))
        field = _Q_ITEMS(body)
        if len(_ITEM_FIELDS) >= _ITEM_FIELDS_KEPT:
            _ITEM_FIELDS.clear()
        _ITEM_FIELDS[item] = field
    return field


def pair_result(
    pr: PairResult,
    rows: dict[str, tuple[tuple[bytes, ...], tuple[bytes, ...]]],
    ids: dict[str, tuple[bytes, ...]],
) -> bytes:
    """A ``PairResult`` body. ``rows``: each player's row bodies as RowResult.first and as
    RowResult.second fields; ``ids``: each player id's ``_id_fields``."""
    a, b = pr.first, pr.second
    ia, ib = ids[a], ids[b]
    parts = [ia[0], ib[1], _Q_KIND[pr.kind]]
    fr, sr = pr.first_rows, pr.second_rows
    first_fields = rows[a][0] if fr else None
    second_fields = rows[b][1] if sr else None
    units = pr.row_units
    texts = pr.row_texts
    ties = pr.tie_breaks
    for i, sign in enumerate(pr.row_signs):
        row = ROWS[i]
        u = units[i]
        if sign > 0:
            win_field = ia[4]
        elif sign < 0:
            win_field = ib[4]
        else:
            win_field = b""
        body = b"".join(
            (
                _R_ROW[row],
                first_fields[i] if first_fields else b"",
                second_fields[i] if second_fields else b"",
                win_field,
                _R_UNITS(u),
                _R_TEXT(texts[i]),
                b"".join([_R_TIE_BREAK(c) for c in ties[i].split()]) if ties and ties[i] else b"",
            )
        )
        parts.append(_Q_ROWS(body))
    parts += [_ITEM_FIELDS.get(item) or _item_field(item) for item in pr.items]
    parts += [
        _Q_UNITS(pr.units),
        _Q_OWED(pr.owed),
        _Q_PAID(pr.paid),
        ids.get(pr.payer, _NO_ID)[2],
        ids.get(pr.payee, _NO_ID)[3],
        _Q_CAP[pr.cap],
        _Q_TEXT(pr.text),
    ]
    return b"".join(parts)


# --------------------------------------------------------------------------- Settlement

_S = pb.Settlement
_S_CONTEXT = message_field(number(_S, "context"))
_S_PROFILE = message_field(number(_S, "profile"))
_S_UNIT_VALUE = int_field(number(_S, "unit_value"))
_S_BUTTON = int_field(number(_S, "button_seat"))
_S_ORDER = repeated_text_field(number(_S, "order"))
_S_PLAYER = message_field(number(_S, "players"))
_S_PAIR = message_field(number(_S, "pairs"))
_S_RAKE = int_field(number(_S, "rake"))
_S_TEXT = repeated_text_field(number(_S, "text"))
_C_HAND, _C_TABLE, _C_ROUND, _C_DEALER = (
    text_field(number(pb.AuditContext, f)) for f in ("hand_id", "table_id", "round_id", "dealer_id")
)
_PR_NAME, _PR_VERSION, _PR_DIGEST, _PR_SOURCE = (
    text_field(number(pb.ProfileRef, f)) for f in ("name", "version", "digest", "source")
)


def settlement_body(s: Settlement, profile_digest: str, profile_source: str) -> bytes:
    """Fields 1-9 of ``Settlement`` (the content; fields 10-17 are the sealer's)."""
    c = s.context
    parts = [
        _S_CONTEXT(
            _C_HAND(c.hand_id)
            + _C_TABLE(c.table_id)
            + _C_ROUND(c.round_id)
            + _C_DEALER(c.dealer_id)
        ),
        _S_PROFILE(
            _PR_NAME(s.profile.name)
            + _PR_VERSION(s.profile.version)
            + _PR_DIGEST(profile_digest)
            + _PR_SOURCE(profile_source)
        ),
        _S_UNIT_VALUE(s.unit_value),
        _S_BUTTON(s.button_seat),
        _S_ORDER(s.order),
    ]
    rows: dict[str, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {}
    ids = {p.player_id: _id_fields(p.player_id) for p in s.players}
    for p in s.players:
        prefixed = []
        for r in p.rows:
            body = evaluated_row(r)
            n = len(body)
            prefixed.append((VARINTS[n] if n < SMALL else varint(n)) + body)
        rows[p.player_id] = (
            tuple([_R_FIRST + x for x in prefixed]),
            tuple([_R_SECOND + x for x in prefixed]),
        )
        parts.append(
            _S_PLAYER(
                player_result(
                    p, prefixed, s.naturals.get(p.player_id) if p.natural is not None else None
                )
            )
        )
    for pr in s.pairs:
        parts.append(_S_PAIR(pair_result(pr, rows, ids)))
    parts.append(_S_RAKE(s.rake))
    parts.append(_S_TEXT(s.text))
    return b"".join(parts)


_SETTLE_RESPONSE = message_field(number(pb.SettleResponse, "settlement"))
_SETTLE_RECEIPT = message_field(number(pb.SettleResponse, "receipt"))
_L = pb.LogReceipt
_L_ORIGIN = text_field(number(_L, "origin"))
_L_INDEX = int_field(number(_L, "index"))
_L_LEAF_HASH = text_field(number(_L, "leaf_hash"))


def receipt(r: Receipt) -> bytes:
    """A ``LogReceipt``'s bytes (its fields in number order, as the runtime writes them)."""
    return _L_ORIGIN(r.origin) + _L_INDEX(r.index) + _L_LEAF_HASH(r.leaf_hash.hex())


def receipt_to_proto(r: Receipt, out: pb.LogReceipt) -> None:
    out.origin, out.index, out.leaf_hash = r.origin, r.index, r.leaf_hash.hex()


def settle_response(settlement: bytes, log_receipt: Receipt | None = None) -> bytes:
    """A ``SettleResponse`` holding the settlement's bytes and, when it was logged, its
    receipt."""
    out = _SETTLE_RESPONSE(settlement)
    if log_receipt is not None:
        out += _SETTLE_RECEIPT(receipt(log_receipt))
    return out


def passthrough(serialize: Callable[[Any], bytes]) -> Callable[[object], bytes]:
    """A response serializer that sends bytes as they are and serializes messages."""

    def write(response: object) -> bytes:
        return response if type(response) is bytes else serialize(response)

    return write
