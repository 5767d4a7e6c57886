"""Readable text for the CLI's table output, in the reader's language (``--lang``).

Every renderer starts from ``shown_message``: each string of the answer (ids, names, sentences
that quote them) is escaped before it is laid out, so nothing in it can act on the terminal.
Headings, labels and the names of the settlement's codes are translated (cpsettle_client.i18n),
money is shown with its currency by CLDR's rules (RULES.md §10: integer minor units of the
settlement's currency), columns are measured in terminal cells (a Chinese character takes two);
the settlement's sentences are said in the reader's language from the settlement's fields
(``i18n.sentences``: a translation only where the fields say the signed English exactly; the
signed English stays in ``--output json`` and is what ``--lang en`` prints).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from .escape import json_text, shown_message
from .i18n import Language, labels, sentences
from .i18n.catalogs import DEFAULT


def _lang(lang: Language | None) -> Language:
    return lang if lang is not None else Language.get(DEFAULT)


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal: East Asian wide and full-width characters take two
    (中文 is 4 columns), combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _pad(text: str, columns: int, right: bool) -> str:
    gap = " " * max(0, columns - width(text))
    return gap + text if right else text + gap


def _table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """A plain table; the columns in ``right`` are numbers, aligned to the right."""
    widths = [
        max(width(h), *(width(r[i]) for r in rows)) if rows else width(h)
        for i, h in enumerate(headers)
    ]
    right = right or set()

    def line(cells: list[str]) -> str:
        return "  ".join(
            _pad(c, w, i in right) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _label(lang: Language, enum: Any, value: int) -> str:
    """An enum value's name in the reader's language (the contract's names: i18n/labels.py);
    a number this client doesn't know stays a number."""
    return lang.label(labels.value_name(enum, value))


def settlement(s: pb.Settlement, lang: Language | None = None) -> str:
    t = _lang(lang)
    s = shown_message(s)
    ctx = s.context
    cur = s.currency or "XXX"
    ids = " · ".join(
        v
        for v in (
            ctx.hand_id and t._("hand {id}", id=ctx.hand_id),
            ctx.table_id and t._("table {id}", id=ctx.table_id),
            ctx.round_id and t._("round {id}", id=ctx.round_id),
            ctx.dealer_id and t._("dealer {id}", id=ctx.dealer_id),
        )
        if v
    )
    head = [
        t._("Settlement") + (f" — {ids}" if ids else ""),
        t._(
            "Profile {name} v{version} · {money} a unit ({currency}) · button seat {seat} · "
            "order {order}",
            name=s.profile.name,
            version=s.profile.version,
            money=t.money(s.unit_value, cur),
            currency=cur,
            seat=s.button_seat,
            order=" → ".join(s.order),
        ),
    ]
    rows = []
    for p in s.players:
        note = _label(t, pb.PlayerStatus, p.status)
        if p.fouled:
            note += " (" + ", ".join(_label(t, pb.FoulReason, r) for r in p.foul_reasons) + ")"
        if p.natural:
            note += f" {t.label(p.natural)}"
        if p.HasField("fantasyland") and p.fantasyland.qualifies:
            note += " · " + t.ngettext(
                "Fantasyland {n} card", "Fantasyland {n} cards", p.fantasyland.cards
            )
        rows.append(
            [
                p.player_id,
                t.number(p.seat),
                t.number(p.net_units, signed=True),
                t.money(p.net_money, cur, signed=True),
                t.money(p.rake, cur),
                note,
            ]
        )
    headers = [t._("Player"), t._("Seat"), t._("Units"), t._("Money"), t._("Rake"), t._("Status")]
    out = [*head, "", _table(headers, rows, right={1, 2, 3, 4})]
    said = sentences.Sentences(s, t)
    for pr in s.pairs:
        out += [
            "",
            t.ngettext(
                "{first} v {second}: {first} {units} unit",
                "{first} v {second}: {first} {units} units",
                abs(pr.units),
                first=pr.first,
                second=pr.second,
                units=t.number(pr.units, signed=True),
            ),
        ]
        out += [f"  {line.text}" for line in said.pair_lines(pr)]
    fantasyland = [
        said.fantasyland(p).text
        for p in s.players
        if p.HasField("fantasyland") and p.fantasyland.text
    ]
    if fantasyland:
        out += ["", *fantasyland]
    if s.rake:
        out += ["", t._("Rake to the house: {money}", money=t.money(s.rake, cur))]
    if s.settlement_id:
        signed = (
            t._("unsigned")
            if s.signature.algorithm
            in (pb.SIGNATURE_ALGORITHM_UNSPECIFIED, pb.SIGNATURE_ALGORITHM_NONE)
            else (t._("signed by key '{key}'", key=s.signature.key_id))
        )
        out += [
            "",
            t._(
                "Settlement id {id} ({signed}, issued {issued})",
                id=s.settlement_id,
                signed=signed,
                issued=_issued(s),
            ),
        ]
    return "\n".join(out)


def _issued(s: pb.Settlement) -> str:
    """The time of issue as the signature covers it (docs/AUDIT.md): fixed-width UTC."""
    from cpsettle_service.errors import TimeProblem
    from cpsettle_service.proof.times import timestamp_text

    try:
        return timestamp_text(s.issued_at, s.HasField("issued_at")) or "(no time)"
    except TimeProblem:
        return s.issued_at.ToJsonString()


def payouts(r: pb.ValidatePayoutsResponse, lang: Language | None = None) -> str:
    t = _lang(lang)
    r = shown_message(r)
    cur = r.settlement.currency or "XXX"
    rows = [
        [
            c.player_id,
            t.money(c.expected, cur, signed=True),
            t.money(c.proposed, cur, signed=True),
            t.money(c.difference, cur, signed=True),
            t._("ok") if c.matches else t._("MISMATCH"),
        ]
        for c in r.players
    ]
    headers = [t._("Player"), t._("Expected"), t._("Proposed"), t._("Difference"), t._("Check")]
    out = [_table(headers, rows, right={1, 2, 3})]
    for q in r.pairs:
        out.append(
            t._(
                "{first} v {second}: expected {expected}, proposed {proposed} — {check}",
                first=q.first,
                second=q.second,
                expected=t.money(q.expected, cur),
                proposed=t.money(q.proposed, cur),
                check=t._("ok")
                if q.matches
                else t._(
                    "MISMATCH ({difference})", difference=t.money(q.difference, cur, signed=True)
                ),
            )
        )
    said = sentences.Sentences(r.settlement, t)
    for c in r.players:
        if not c.matches:
            out += [
                "",
                t._(
                    "Why {player} should get {money}:",
                    player=c.player_id,
                    money=t.money(c.expected, cur, signed=True),
                ),
            ]
            lines = [x.text for x in said.explanation(c.player_id)]
            if t.code == sentences.SIGNED or len(lines) != len(c.explanation):
                lines = list(c.explanation)  # the service's own lines, in its English
            out += [f"  {line}" for line in lines]
    out += [
        "",
        t._("All payouts match.") if r.all_match else t._("Payouts do NOT match the settlement."),
    ]
    return "\n".join(out)


def evaluation(e: pb.EvaluateArrangementResponse, lang: Language | None = None) -> str:
    t = _lang(lang)
    e = shown_message(e)
    out = [t._("Profile {name} v{version}", name=e.profile.name, version=e.profile.version)]
    names = [_label(t, profile_pb2.Row, r.row) for r in e.rows]
    column = max((width(n) for n in names), default=0)
    say = sentences.Say(t, "")
    for r, row in zip(e.rows, names, strict=True):
        royalty = " " + t._("(royalty {units})", units=t.number(r.royalty)) if r.royalty else ""
        shown = r.name if t.code == sentences.SIGNED else _hand_name(t, say, r)
        out.append(f"  {_pad(row, column, False)} {' '.join(r.cards):<15} {shown}{royalty}")
    if e.rows:
        reasons = ", ".join(_label(t, pb.FoulReason, r) for r in e.foul_reasons)
        out.append("  " + t._("Fouled: {reasons}", reasons=reasons if e.fouled else t._("no")))
        out.append("  " + t._("Royalties: {units}", units=t.number(e.royalty_total)))
    out.append(
        "  "
        + t._(
            "Naturals in these cards: {naturals}",
            naturals=", ".join(t.label(n) for n in e.naturals) or t._("none"),
        )
    )
    if e.playable_naturals:
        out.append(
            "  "
            + t._(
                "Playable under this profile: {naturals}",
                naturals=", ".join(t.label(n) for n in e.playable_naturals),
            )
        )
    if e.HasField("fantasyland"):
        out.append(f"  {sentences.evaluation_fantasyland(e, t).text}")
    return "\n".join(out)


def _hand_name(t: Language, say: sentences.Say, r: pb.EvaluatedRow) -> str:
    """A row's hand in the reader's words (its class's name when its cards say nothing we
    know)."""
    try:
        return sentences.hand_name(say, r)
    except (KeyError, IndexError):
        return _label(t, profile_pb2.HandClass, r.hand_class)


def profiles(r: pb.ListProfilesResponse, lang: Language | None = None) -> str:
    t = _lang(lang)
    r = shown_message(r)
    rows = [[p.name, p.version, p.source, p.digest[:12]] for p in r.profiles]
    return _table([t._("Profile"), t._("Version"), t._("Source"), t._("Digest")], rows)


_INT64 = frozenset(
    (
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
    )
)


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
                    value[key] = (
                        str(item)
                        if entry.type in _INT64
                        else int64_as_strings(item, entry.message_type)
                        if entry.message_type is not None
                        else item
                    )
        elif field.type in _INT64:
            data[field.json_name] = (
                [str(v) for v in value] if isinstance(value, list) else str(value)
            )
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
