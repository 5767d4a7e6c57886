"""The only module that knows both the protobuf messages and the domain types.

Requests map to domain inputs by shape only (the domain validates the content); results map to
response messages built in place (no JSON on the hot path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from functools import partial
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from ..domain.cards.cards import Suit
from ..domain.cards.hands import HandClass, Wheel
from ..domain.cards.rows import Row
from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..domain.naturals.vocabulary import RowClass
from ..domain.profile.model import (
    CapBasis,
    CapOrder,
    FoulPenalty,
    NaturalTie,
    RakeMode,
    RowTie,
    RoyaltyMode,
    RuleProfile,
    VsFoul,
)
from ..domain.profile.parse import profile_to_dict
from ..domain.settle import (
    EvaluatedRow,
    FantasylandResult,
    HandEvaluation,
    PairCheck,
    PayoutCheck,
    PayoutReport,
)
from ..domain.settle import money as caps
from ..domain.settle.results import FoulReason, ItemKind, PairKind, Status
from ..domain.settle.table import AuditContext, PlayerInput, ProfileChoice, Table
from ..proof.keys import ALGORITHM
from . import bounds

# --------------------------------------------------------------------------- enums
#
# One table per closed set: the domain's value -> the cpsettle.v1 enum value's number. The proto
# value's name is its enum's prefix (PlayerStatus -> PLAYER_STATUS_) and the domain member's
# name, so each table is built from the descriptor, once, at import; a member without its proto
# value fails the import. tests/api/test_enum_mapping.py checks that every proto value (but the
# zero, UNSPECIFIED) has its domain value and that both directions agree.


def enum_prefix(enum: EnumDescriptor) -> str:
    """``PlayerStatus`` -> ``"PLAYER_STATUS_"``: the prefix of its values' names."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"


def enum_table(enum: EnumDescriptor, names: Mapping[str, str]) -> dict[str, Any]:
    """``names``: domain value -> the proto value's name without the prefix. (The numbers are
    typed ``Any``: each generated enum has a ``ValueType`` of its own.)"""
    prefix = enum_prefix(enum)
    return {value: enum.values_by_name[prefix + name].number for value, name in names.items()}


def members(enum: type[StrEnum]) -> dict[str, str]:
    """A domain enum's members as ``enum_table`` names: each member by its own name."""
    return {m: m.name for m in enum}


def _proto_enum(module: Any, name: str) -> EnumDescriptor:
    enum: EnumDescriptor = module.DESCRIPTOR.enum_types_by_name[name]
    return enum


ROW = enum_table(_proto_enum(profile_pb2, "Row"), members(Row))
HAND_CLASS = enum_table(_proto_enum(profile_pb2, "HandClass"), members(HandClass))
SUIT = enum_table(_proto_enum(profile_pb2, "Suit"), members(Suit))
ROYALTY_MODE = enum_table(_proto_enum(profile_pb2, "RoyaltyMode"), members(RoyaltyMode))
FOUL_PENALTY = enum_table(_proto_enum(profile_pb2, "FoulPenalty"), members(FoulPenalty))
VS_FOUL = enum_table(_proto_enum(profile_pb2, "VsFoul"), members(VsFoul))
CAP_BASIS = enum_table(_proto_enum(profile_pb2, "CapBasis"), members(CapBasis))
CAP_ORDER = enum_table(_proto_enum(profile_pb2, "CapOrder"), members(CapOrder))
RAKE_MODE = enum_table(_proto_enum(profile_pb2, "RakeMode"), members(RakeMode))
WHEEL = enum_table(_proto_enum(profile_pb2, "Wheel"), members(Wheel))
ROW_TIE = enum_table(_proto_enum(profile_pb2, "RowTie"), members(RowTie))
NATURAL_TIE = enum_table(_proto_enum(profile_pb2, "NaturalTie"), members(NaturalTie))
ROW_CLASS = enum_table(_proto_enum(profile_pb2, "RowClass"), members(RowClass))
PLAYER_STATUS = enum_table(_proto_enum(pb, "PlayerStatus"), members(Status))
FOUL_REASON = enum_table(_proto_enum(pb, "FoulReason"), members(FoulReason))
PAIR_KIND = enum_table(_proto_enum(pb, "PairKind"), members(PairKind))
LINE_ITEM_KIND = enum_table(_proto_enum(pb, "LineItemKind"), members(ItemKind))
# The domain's cap is a string ("" when nothing was capped: the zero value).
CAP = {"": 0} | enum_table(
    _proto_enum(pb, "Cap"),
    {
        caps.PAYER_STACK: "PAYER_STACK",
        caps.PAYEE_STACK: "PAYEE_STACK",
        caps.BOTH_STACKS: "BOTH_STACKS",
    },
)
UNSIGNED = "NONE"  # a development replica's settlements carry no signature
SIGNATURE_ALGORITHM = enum_table(
    _proto_enum(pb, "SignatureAlgorithm"),
    {
        UNSIGNED: "NONE",
        ALGORITHM: "ED25519",
    },
)

# Naturals are strings on the wire, not an enum: a house may name its own (RULES.md §16.1).


def _unknown_fields(msg: Message, path: str, out: list[Violation]) -> None:
    """Fields the sender set that this schema doesn't know (RULES.md §14.16)."""
    if len(UnknownFieldSet(msg)):
        # only profiles are read this way: the unknown fields are the profile's problem
        out.append(Violation(path, "has fields this service does not know", ViolationCode.PROFILE))
    for desc, value in msg.ListFields():
        if desc.message_type is None or desc.message_type.GetOptions().map_entry:
            continue
        name = f"{path}.{desc.json_name}"
        if desc.is_repeated:
            for i, item in enumerate(value):
                _unknown_fields(item, f"{name}[{i}]", out)
        else:
            _unknown_fields(value, name, out)


def _has_unknown_fields(msg: Message) -> bool:
    """Whether the sender set fields this schema doesn't know, anywhere in ``msg`` (in C: a
    copy's size before and after dropping them)."""
    copy = type(msg)()
    copy.CopyFrom(msg)
    size = copy.ByteSize()
    copy.DiscardUnknownFields()
    return copy.ByteSize() != size


# How each field of a message becomes its proto3 JSON value, per message type: (json name,
# convert) by field number; convert is None for a value that is its own JSON form.
_Converter = Callable[[Any], Any] | None
_JSON_FORMS: dict[str, dict[int, tuple[str, _Converter]] | None] = {}
_INT64 = (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64)
_AS_IS = (
    FieldDescriptor.CPPTYPE_INT32,
    FieldDescriptor.CPPTYPE_UINT32,
    FieldDescriptor.CPPTYPE_BOOL,
)


def _json_form(desc: Descriptor) -> dict[int, tuple[str, _Converter]] | None:
    """``desc``'s field table for ``_to_json``; None when it holds a field this walk does not
    write as json_format would (bytes, floats, maps, well-known types: none in a profile)."""
    if desc.full_name in _JSON_FORMS:
        return _JSON_FORMS[desc.full_name]
    _JSON_FORMS[desc.full_name] = None  # while it is built (a message that holds itself)
    table: dict[int, tuple[str, _Converter]] = {}
    for f in desc.fields:
        convert: _Converter
        inner, enum = f.message_type, f.enum_type
        if inner is not None:
            if (
                inner.GetOptions().map_entry
                or inner.file.name.startswith("google/protobuf/")
                or _json_form(inner) is None
            ):
                return None
            convert = partial(_to_json, inner.full_name)
        elif enum is not None:
            if enum.is_closed or any(v.GetOptions().ListFields() for v in enum.values):
                return None
            names = {v.number: v.name for v in enum.values}
            convert = partial(_enum_name, names)  # an unknown number stays a number
        elif f.cpp_type in _INT64:
            convert = str
        elif f.cpp_type in _AS_IS or f.type == FieldDescriptor.TYPE_STRING:
            convert = None
        else:
            return None
        table[f.number] = (f.json_name, convert)
    _JSON_FORMS[desc.full_name] = table
    return table


def _enum_name(names: dict[int, str], number: int) -> str | int:
    return names.get(number, number)


def _to_json(full_name: str, msg: Message) -> dict[str, Any]:
    table = _JSON_FORMS[full_name]
    assert table is not None
    out: dict[str, Any] = {}
    for f, value in msg.ListFields():
        name, convert = table[f.number]
        if convert is None:
            out[name] = list(value) if f.is_repeated else value
        elif f.is_repeated:
            out[name] = [convert(v) for v in value]
        else:
            out[name] = convert(value)
    return out


def profile_dict_from_proto(msg: profile_pb2.RuleProfile, path: str = "profile") -> dict[str, Any]:
    """The profile's proto3 JSON form, as ``json_format.MessageToDict`` writes it (a direct walk
    of the message: a quarter of the cost of reading a new maximal profile went to the generic
    one); fields this schema doesn't know are violations."""
    if _has_unknown_fields(msg):
        problems: list[Violation] = []
        _unknown_fields(msg, path, problems)
        raise InvalidInput(problems)
    if _json_form(msg.DESCRIPTOR) is None:
        return json_format.MessageToDict(msg)
    return _to_json(msg.DESCRIPTOR.full_name, msg)


def profile_to_proto(
    profile: RuleProfile, out: profile_pb2.RuleProfile | None = None
) -> profile_pb2.RuleProfile:
    out = out if out is not None else profile_pb2.RuleProfile()
    json_format.ParseDict(profile_to_dict(profile), out)
    return out


class LazyChoice:
    """A request's profile choice: a cache key now, the domain's ProfileChoice only if needed.

    The key is the choice's content (deterministic bytes of an inline profile or overrides), so
    a table that sends the same overrides every hand has its profile resolved once.
    """

    __slots__ = ("key", "_args")

    def __init__(
        self,
        preset: str,
        has_profile: bool,
        profile: profile_pb2.RuleProfile,
        has_overrides: bool,
        overrides: Message,
    ) -> None:
        self.key = (
            preset,
            profile.SerializeToString(deterministic=True) if has_profile else None,
            overrides.SerializeToString(deterministic=True) if has_overrides else None,
        )
        self._args = (has_profile, profile, has_overrides, overrides)

    def build(self) -> ProfileChoice:
        has_profile, profile, has_overrides, overrides = self._args
        try:
            over = json_format.MessageToDict(overrides) if has_overrides else None
        except ValueError as e:  # NaN / Infinity in a Struct number
            raise InvalidInput(
                [
                    Violation(
                        "profileOverrides",
                        f"is not valid JSON: {e}",
                        ViolationCode.PROFILE,
                    )
                ]
            ) from None
        return ProfileChoice(
            preset=self.key[0],
            profile=profile_dict_from_proto(profile) if has_profile else None,
            overrides=over,
        )


def profile_choice(
    preset: str,
    has_profile: bool,
    profile: profile_pb2.RuleProfile,
    has_overrides: bool,
    overrides: Message,
) -> LazyChoice:
    return LazyChoice(preset, has_profile, profile, has_overrides, overrides)


def _player(p: pb.Player) -> PlayerInput:
    # A repeated field read by slicing (a list, in C): tuple() over the field itself iterates
    # it through the sequence protocol, which ends each row on a raised IndexError.
    if p.HasField("arrangement"):
        a = p.arrangement
        front: tuple[str, ...] | None = tuple(a.front[:])
        middle: tuple[str, ...] | None = tuple(a.middle[:])
        back: tuple[str, ...] | None = tuple(a.back[:])
    else:
        front = middle = back = None
    cards = p.cards
    return PlayerInput(
        player_id=p.player_id,
        seat=p.seat,
        front=front,
        middle=middle,
        back=back,
        cards=tuple(cards[:]) if cards else None,
        declared_natural=p.declared_natural,
        surrender=p.surrender,
        stack=p.stack if p.HasField("stack") else None,
        in_fantasyland=p.in_fantasyland,
    )


def _check_known(req: pb.SettleRequest) -> None:
    """Fields this schema does not know are refused, not dropped: a newer client may mean
    something by them that this service would silently ignore (a money path lets nothing in)."""
    problems: list[Violation] = []
    if len(UnknownFieldSet(req)):
        problems.append(
            Violation(
                "request",
                "has fields this service does not know",
                ViolationCode.OTHER,
            )
        )
    for i, p in enumerate(req.players):
        if len(UnknownFieldSet(p)) or len(UnknownFieldSet(p.arrangement)):
            problems.append(
                Violation(
                    f"players[{i}]",
                    "has fields this service does not know",
                    ViolationCode.OTHER,
                )
            )
    if problems:
        raise InvalidInput(problems)


def request_to_domain(
    req: pb.SettleRequest, choice: LazyChoice | None = None
) -> tuple[Table, LazyChoice]:
    """The request's table and its profile choice (``choice``: the one the caller already made
    of this request, so an inline profile is serialized once per call)."""
    bounds.check_settle_request(req)
    _check_known(req)
    table = Table(
        players=tuple([_player(p) for p in req.players]),
        button_seat=req.button_seat if req.HasField("button_seat") else None,
        dead_cards=tuple(req.dead_cards[:]),
        context=AuditContext(req.hand_id, req.table_id, req.round_id, req.dealer_id),
        unit_value=req.unit_value if req.HasField("unit_value") else None,
        currency=req.currency,
    )
    if choice is None:
        choice = request_choice(req)
    return table, choice


def request_choice(req: pb.SettleRequest | pb.EvaluateArrangementRequest) -> LazyChoice:
    """The profile choice a Settle or EvaluateArrangement request makes."""
    return profile_choice(
        req.preset,
        req.HasField("profile"),
        req.profile,
        req.HasField("profile_overrides"),
        req.profile_overrides,
    )


def _row(r: EvaluatedRow, out: pb.EvaluatedRow) -> None:
    out.row = ROW[r.row]
    out.cards.extend(r.cards)
    h = r.hand
    out.hand_class = HAND_CLASS[h.hand_class]
    out.name = h.name
    out.royalty = r.royalty
    out.joker_cards.extend(r.joker_cards)


def _fantasyland(f: FantasylandResult, out: pb.FantasylandResult) -> None:
    out.qualifies = f.qualifies
    out.cards = f.cards
    out.text = f.text
    out.in_fantasyland = f.in_fantasyland
    if f.row is not None:
        out.row = ROW[f.row]


def nets_from_proto(items: Any, path: str, problems: list[Violation]) -> dict[str, int]:
    """``ProposedPayout`` messages as player -> net money; a player named twice is a problem."""
    bounds.check_proposals(items, path)
    nets: dict[str, int] = {}
    for i, p in enumerate(items):
        if p.player_id in nets:
            problems.append(
                Violation(
                    f"{path}[{i}].playerId",
                    f"{p.player_id!r} is given twice",
                    ViolationCode.OTHER,
                )
            )
        nets[p.player_id] = p.net_money
    return nets


def payouts_from_proto(
    req: pb.ValidatePayoutsRequest,
) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    bounds.check_pairs(req.proposed_pairs)
    problems: list[Violation] = []
    proposed = nets_from_proto(req.proposed, "proposed", problems)
    pairs: dict[tuple[str, str], int] = {}
    for i, p in enumerate(req.proposed_pairs):
        key = (p.first, p.second)
        if key in pairs or (p.second, p.first) in pairs:
            problems.append(
                Violation(
                    f"proposedPairs[{i}]",
                    "this pair is proposed twice",
                    ViolationCode.OTHER,
                )
            )
        pairs[key] = p.money_for_first
    if problems:
        raise InvalidInput(problems)
    return proposed, pairs


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def check_differences(report: PayoutReport, path: str) -> PayoutReport:
    """``report``, unless a proposal is so far from the expected amount that the difference
    leaves int64 (the API's money type): the caller's mistake, not ours, so INVALID_ARGUMENT,
    never INTERNAL. Checked before the settlement is sealed, so such a call issues nothing."""
    checks: tuple[PayoutCheck | PairCheck, ...] = (*report.players, *report.pairs)
    problems = [
        Violation(
            path,
            f"proposes {c.proposed} where {c.expected} is expected: the difference "
            "does not fit an int64 amount",
            ViolationCode.OTHER,
        )
        for c in checks
        if not INT64_MIN <= c.difference <= INT64_MAX
    ]
    if problems:
        raise InvalidInput(problems)
    return report


def player_checks_to_proto(checks: Iterable[PayoutCheck], out: Any) -> None:
    """Each player's payout check appended to ``out`` (a repeated ``PayoutCheck`` field)."""
    for c in checks:
        out.add(
            player_id=c.player_id,
            expected=c.expected,
            proposed=c.proposed,
            difference=c.difference,
            matches=c.matches,
            explanation=c.explanation,
        )


def payout_report_to_proto(report: PayoutReport, out: pb.ValidatePayoutsResponse) -> None:
    out.all_match = report.all_match
    player_checks_to_proto(report.players, out.players)
    for c in report.pairs:
        out.pairs.add(
            first=c.first,
            second=c.second,
            expected=c.expected,
            proposed=c.proposed,
            difference=c.difference,
            matches=c.matches,
            explanation=c.explanation,
        )


def evaluate_input(req: pb.EvaluateArrangementRequest) -> PlayerInput:
    if req.HasField("arrangement"):
        a = req.arrangement
        return PlayerInput(
            "player",
            0,
            tuple(a.front),
            tuple(a.middle),
            tuple(a.back),
            in_fantasyland=req.in_fantasyland,
        )
    return PlayerInput(
        "player",
        0,
        cards=tuple(req.cards) if req.cards else None,
        in_fantasyland=req.in_fantasyland,
    )


def evaluation_to_proto(e: HandEvaluation, out: pb.EvaluateArrangementResponse) -> None:
    for r in e.rows:
        _row(r, out.rows.add())
    out.royalty_total = e.royalty_total
    out.fouled = e.fouled
    out.foul_reasons.extend([FOUL_REASON[r] for r in e.foul_reasons])
    out.naturals.extend([n.value for n in e.naturals])
    out.playable_naturals.extend([n.value for n in e.playable_naturals])
    if e.fantasyland is not None:
        _fantasyland(e.fantasyland, out.fantasyland)
