"""Readable text for the CLI's table output.

Every renderer starts from ``shown_message``: each string of the answer (ids, names, sentences
that quote them) is escaped before it is laid out, so nothing in it can act on the terminal.
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from .escape import json_text, shown_message


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    right = {i for i, h in enumerate(headers) if h in ("Units", "Money", "Rake", "Seat",
                                                        "Expected", "Proposed", "Difference")}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _label(enum: Any, value: int) -> str:
    """An enum value's name without its enum's prefix (PLAYER_STATUS_FOULED -> FOULED); a
    number this client doesn't know stays a number."""
    try:
        name: str = enum.Name(value)
    except ValueError:
        return str(value)
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.DESCRIPTOR.name).upper() + "_"
    return name.removeprefix(prefix)


def settlement(s: pb.Settlement) -> str:
    s = shown_message(s)
    ctx = s.context
    ids = " · ".join(f"{k} {v}" for k, v in (("hand", ctx.hand_id), ("table", ctx.table_id),
                                             ("round", ctx.round_id), ("dealer", ctx.dealer_id))
                     if v)
    head = [
        f"Settlement{(' — ' + ids) if ids else ''}",
        f"Profile {s.profile.name} v{s.profile.version} · unit value {s.unit_value} "
        f"({s.currency or 'XXX'} minor units) · "
        f"button seat {s.button_seat} · order {' → '.join(s.order)}",
    ]
    rows = []
    for p in s.players:
        note = _label(pb.PlayerStatus, p.status)
        if p.fouled:
            note += " (" + ", ".join(_label(pb.FoulReason, r) for r in p.foul_reasons) + ")"
        if p.natural:
            note += f" {p.natural}"
        if p.HasField("fantasyland") and p.fantasyland.qualifies:
            note += f" · Fantasyland {p.fantasyland.cards} cards"
        rows.append([p.player_id, str(p.seat), _signed(p.net_units), _signed(p.net_money),
                     str(p.rake), note])
    out = head + ["", _table(["Player", "Seat", "Units", "Money", "Rake", "Status"], rows)]
    for pr in s.pairs:
        out += ["", f"{pr.first} v {pr.second}: {pr.first} {_signed(pr.units)} units"]
        out += [f"  {r.text}" for r in pr.rows]
        out += [f"  {i.text}" for i in pr.items]
        out.append(f"  {pr.text}")
    if s.rake:
        out += ["", f"Rake to the house: {s.rake}"]
    if s.settlement_id:
        signed = "unsigned" if s.signature.algorithm in (
            pb.SIGNATURE_ALGORITHM_UNSPECIFIED, pb.SIGNATURE_ALGORITHM_NONE) else (
            f"signed by key '{s.signature.key_id}'")
        out += ["", f"Settlement id {s.settlement_id} ({signed}, issued {_issued(s)})"]
    return "\n".join(out)


def _issued(s: pb.Settlement) -> str:
    """The time of issue as the signature covers it (docs/AUDIT.md): fixed-width UTC."""
    from cpsettle_service.errors import TimeProblem
    from cpsettle_service.proof.times import timestamp_text

    try:
        return timestamp_text(s.issued_at, s.HasField("issued_at")) or "(no time)"
    except TimeProblem:
        return s.issued_at.ToJsonString()


def payouts(r: pb.ValidatePayoutsResponse) -> str:
    r = shown_message(r)
    rows = [[c.player_id, str(c.expected), str(c.proposed), _signed(c.difference),
             "ok" if c.matches else "MISMATCH"] for c in r.players]
    out = [_table(["Player", "Expected", "Proposed", "Difference", "Check"], rows)]
    for q in r.pairs:
        out.append(f"{q.first} v {q.second}: expected {q.expected}, proposed {q.proposed} — "
                   + ("ok" if q.matches else f"MISMATCH ({_signed(q.difference)})"))
    for c in r.players:
        if not c.matches:
            out += ["", f"Why {c.player_id} should get {c.expected}:"]
            out += [f"  {line}" for line in c.explanation]
    out += ["", "All payouts match." if r.all_match else "Payouts do NOT match the settlement."]
    return "\n".join(out)


def evaluation(e: pb.EvaluateArrangementResponse) -> str:
    e = shown_message(e)
    out = [f"Profile {e.profile.name} v{e.profile.version}"]
    for r in e.rows:
        royalty = f" (royalty {r.royalty})" if r.royalty else ""
        row = _label(profile_pb2.Row, r.row).capitalize()
        out.append(f"  {row:<6} {' '.join(r.cards):<15} {r.name}{royalty}")
    if e.rows:
        reasons = ", ".join(_label(pb.FoulReason, r) for r in e.foul_reasons)
        out.append("  Fouled: " + (reasons if e.fouled else "no"))
        out.append(f"  Royalties: {e.royalty_total}")
    out.append("  Naturals in these cards: " + (", ".join(e.naturals) or "none"))
    if e.playable_naturals:
        out.append("  Playable under this profile: " + ", ".join(e.playable_naturals))
    if e.HasField("fantasyland"):
        out.append(f"  {e.fantasyland.text}")
    return "\n".join(out)


def profiles(r: pb.ListProfilesResponse) -> str:
    r = shown_message(r)
    rows = [[p.name, p.version, p.source, p.digest[:12]] for p in r.profiles]
    return _table(["Profile", "Version", "Source", "Digest"], rows)


_INT64 = frozenset((FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64,
                    FieldDescriptor.TYPE_SFIXED64, FieldDescriptor.TYPE_UINT64,
                    FieldDescriptor.TYPE_FIXED64))


def int64_as_strings(data: Any, descriptor: Descriptor) -> Any:
    """``data`` (the JSON form of a ``descriptor`` message, written by other code than
    protobuf's printer) with its 64-bit integers as strings, as protobuf's JSON writes them:
    the one money style of the CLI's outputs (README, "Money in JSON")."""
    if not isinstance(data, dict):
        return data
    for field in descriptor.fields:
        if field.json_name not in data:
            continue
        value = data[field.json_name]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entry = field.message_type.fields_by_name["value"]
            if isinstance(value, dict):
                for key, item in value.items():
                    value[key] = (str(item) if entry.type in _INT64 else
                                  int64_as_strings(item, entry.message_type)
                                  if entry.message_type is not None else item)
        elif field.type in _INT64:
            data[field.json_name] = ([str(v) for v in value] if isinstance(value, list)
                                     else str(value))
        elif field.message_type is not None:
            for item in value if isinstance(value, list) else [value]:
                int64_as_strings(item, field.message_type)
    return data


def profile_json(p: profile_pb2.RuleProfile) -> str:
    """A profile in exactly the JSON form the request's ``profile`` field accepts: every field,
    defaults filled in (the engine's own writer), 64-bit money as strings (protobuf's JSON)."""
    from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict

    data = profile_to_dict(profile_from_dict(json_format.MessageToDict(p)))
    return json_text(int64_as_strings(data, profile_pb2.RuleProfile.DESCRIPTOR))


def profile(r: pb.GetProfileResponse) -> str:
    s = shown_message(r.summary)
    head = [f"{s.name} v{s.version} ({s.source}) digest {s.digest}", s.description, ""]
    return "\n".join(head) + profile_json(r.profile)
