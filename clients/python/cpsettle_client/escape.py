"""Text from outside, made safe to print on an operator's terminal.

Ids, player names, profile names and messages come from whoever wrote the request, the history
line or the stored file, and through the server. A terminal obeys the control characters in
what it prints: ``ESC [2J`` clears the screen, ``\\r`` goes back to overwrite the line, BEL rings,
a C1 control (U+0080-U+009F) starts a sequence on some terminals, U+202E turns the rest of the
line around, U+2028 breaks it. So every human output shows such text through ``shown``, which
writes each character Python does not call printable (``str.isprintable``: controls, format
characters such as the bidi overrides, separators other than the space, surrogates, private and
unassigned code points) as an escape, and a backslash as two, so that the escaped form reads
back unambiguously::

    >>> shown("P1\\x1b[2J\\rall payouts verified\\u202e")
    'P1\\\\x1b[2J\\\\rall payouts verified\\\\u202e'
    >>> shown("张伟")
    '张伟'

``shown_message`` and ``shown_data`` apply it to every string of a protobuf message or of
JSON-shaped data, so a renderer cannot forget a field. JSON outputs go through ``json_text``:
the same JSON, with those characters written as ``\\u`` escapes instead of raw.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    named = _NAMED.get(c)
    if named is not None:
        return named
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def shown(text: str) -> str:
    """``text`` with every character a terminal could act on (and the backslash) escaped."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(c if c.isprintable() and c != "\\" else _escape(c) for c in text)


def shown_data(value: Any) -> Any:
    """JSON-shaped data with every string in it (keys too) through ``shown``."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown_data(k): shown_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_data(v) for v in value]
    return value


def shown_message(message: M) -> M:
    """A copy of ``message`` with every string field, at any depth, through ``shown``."""
    copy = type(message)()
    copy.CopyFrom(message)
    _escape_fields(copy)
    return copy


def _escape_fields(message: Message) -> None:
    for field, value in message.ListFields():
        repeated = field.is_repeated
        if field.type == FieldDescriptor.TYPE_STRING:
            if repeated:
                value[:] = [shown(v) for v in value]
            else:
                setattr(message, field.name, shown(value))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                raise TypeError(f"{field.full_name}: map fields are not escaped yet")
            for sub in value if repeated else [value]:
                _escape_fields(sub)


# json.dumps(ensure_ascii=False) escapes C0 controls, '"' and '\'; anything else outside
# printable ASCII is a candidate. Outside strings JSON holds only ASCII, so a candidate is
# always inside a string, where its \u escape means the same character.
_CANDIDATE = re.compile(r"[^\x20-\x7e\n]")


def _json_escape(m: re.Match[str]) -> str:
    c = m.group()
    if c.isprintable():
        return c
    o = ord(c)
    if o < 0x10000:
        return f"\\u{o:04x}"
    o -= 0x10000
    return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON (readable non-ASCII kept) with nothing a terminal could act on raw."""
    return _CANDIDATE.sub(_json_escape, json.dumps(value, indent=indent, ensure_ascii=False))
