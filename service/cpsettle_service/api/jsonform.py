"""A request message from its JSON form (protobuf's JSON mapping), every problem named by path.

``json_format.Parse`` stops at the first problem and says it in the parser's words ('Message
type "cpsettle.v1.SettleRequest" has no field named "hand_idd" at "SettleRequest". Available
Fields(except extensions): ...'). Here the text is read first (UTF-8, JSON, no key named twice
in an object), then every field name is checked against the message's descriptor, so that each
unknown field is named once with its path and the nearest known name (``players[0].arrangment:
unknown field; did you mean 'arrangement'?``), and only then is the value parsed. The service's
JSON routes (``api.connect``) and the CLI read requests through ``read_json_message``.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from ..domain.errors import InvalidInput, Violation, ViolationCode

__all__ = ["json_violations", "parse_json_value", "read_json_message", "unknown_fields"]

_M = TypeVar("_M", bound=Message)
# Messages whose JSON form is not an object of their fields: any keys, or not an object at all.
_OPAQUE = frozenset(
    {
        "google.protobuf.Struct",
        "google.protobuf.Value",
        "google.protobuf.ListValue",
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
        "google.protobuf.FieldMask",
        "google.protobuf.Any",
        "google.protobuf.Empty",
        "google.protobuf.StringValue",
        "google.protobuf.BytesValue",
        "google.protobuf.BoolValue",
        "google.protobuf.Int32Value",
        "google.protobuf.Int64Value",
        "google.protobuf.UInt32Value",
        "google.protobuf.UInt64Value",
        "google.protobuf.FloatValue",
        "google.protobuf.DoubleValue",
    }
)
_MAX_LISTED = 50  # unknown fields named at most; the rest are counted
_FIELD = re.compile(r"(?:Failed to parse )?(?P<name>\w+) field: ")
_AT = re.compile(r'\s+at "?(?P<path>[\w\[\]]+(?:\.[\w\[\]]+)*)"?\.*\s*$')


def _duplicate_checked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def parse_json_value(data: bytes | str) -> Any:
    """The JSON value of ``data``; raises ``ValueError`` (not UTF-8, not JSON, a key twice)."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    return json.loads(text, object_pairs_hook=_duplicate_checked)


def _field_names(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    names: dict[str, FieldDescriptor] = {}
    for field in descriptor.fields:
        names[field.json_name] = field
        names[field.name] = field
    return names


def unknown_fields(value: Any, descriptor: Any, path: str = "") -> list[Violation]:
    """A violation for each key of ``value`` (the JSON form of a ``descriptor`` message, nested
    messages, lists and maps included) that names no field, with its path and the nearest
    known field name when one is close."""
    out: list[Violation] = []
    _walk(value, descriptor, path, out)
    return out


def _walk(value: Any, descriptor: Descriptor, path: str, out: list[Violation]) -> None:
    if descriptor.full_name in _OPAQUE or not isinstance(value, dict):
        return  # a value of the wrong shape is the parser's to name
    names = _field_names(descriptor)
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        field = names.get(key)
        if field is None:
            if len(out) < _MAX_LISTED:
                near = difflib.get_close_matches(
                    key, [f.json_name for f in descriptor.fields], n=1, cutoff=0.6
                )
                hint = f"; did you mean {near[0]!r}?" if near else ""
                out.append(
                    Violation(
                        where,
                        f"unknown field of {descriptor.name}{hint}",
                        ViolationCode.MALFORMED_REQUEST,
                    )
                )
            else:
                out.append(Violation(where, "unknown field", ViolationCode.MALFORMED_REQUEST))
            continue
        if field.message_type is None or item is None:
            continue
        sub = field.message_type
        if sub.GetOptions().map_entry:
            value_field = sub.fields_by_name["value"]
            if value_field.message_type is not None and isinstance(item, dict):
                for map_key, map_value in item.items():
                    _walk(map_value, value_field.message_type, f"{where}[{map_key!r}]", out)
        elif _is_repeated(field):
            if isinstance(item, list):
                for i, element in enumerate(item):
                    _walk(element, sub, f"{where}[{i}]", out)
        else:
            _walk(item, sub, where, out)


def _is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def json_violations(value: Any, message: Message) -> list[Violation]:
    """What keeps ``value`` from being read as ``message``: its unknown fields, or else the
    parser's first objection (with the path it names as the field). Empty: ``message`` now
    holds ``value``."""
    if not isinstance(value, dict):
        return [
            Violation(
                "request",
                f"must be a JSON object (a {message.DESCRIPTOR.name}), got {_kind(value)}",
                ViolationCode.MALFORMED_REQUEST,
            )
        ]
    unknown = unknown_fields(value, message.DESCRIPTOR)
    if unknown:
        return unknown
    try:
        json_format.ParseDict(value, message)
    except json_format.ParseError as e:
        return [_parse_error(str(e), message.DESCRIPTOR.name)]
    return []


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def _parse_error(text: str, root: str) -> Violation:
    """The parser's objection as a violation: the path its 'Failed to parse X field:' chain
    (or its closing 'at Message.path') names, and the rest of its words."""
    parts = []
    while (found := _FIELD.match(text)) is not None:
        parts.append(found.group("name"))
        text = text[found.end() :]
    at = _AT.search(text)
    path = ".".join(parts)
    if at is not None:
        text = text[: at.start()]
        named = at.group("path")
        if named.startswith(root + "."):
            # the message holding the field: the chain's last name is the field itself
            path = named[len(root) + 1 :]
            if parts and not path.endswith(parts[-1]):
                path += "." + parts[-1]
    reason = text.strip().rstrip(".") or "cannot be read"
    return Violation(path or "request", reason, ViolationCode.MALFORMED_REQUEST)


def read_json_message(data: bytes | str, message: _M) -> _M:
    """``message`` filled from the JSON text ``data``; raises ``InvalidInput`` naming every
    problem (``request`` for text that is not JSON, a path for each field)."""
    try:
        value = parse_json_value(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InvalidInput(
            [Violation("request", f"not JSON: {e}", ViolationCode.MALFORMED_REQUEST)]
        ) from None
    problems = json_violations(value, message)
    if problems:
        raise InvalidInput(problems)
    return message
