"""Protobuf's wire format, written by hand (https://protobuf.dev/programming-guides/encoding/):
a field is its tag ``(number << 3) | wire type`` as a varint, then a varint for wire type 0 (ints,
bools, enums; negative ints as 64-bit two's complement) or a varint length and the bytes for wire
type 2 (strings, sub-messages, packed repeated fields). Concatenated messages merge, so a
message's fields may be written in pieces. Field numbers always come from the generated
descriptors (``number``), never typed by hand.

``api.wire`` writes a settlement's content with these writers and ``proof.seal`` its proof
fields; each writer is made once per field and called on the hot path.

>>> text_field(1)("As")
b'\\n\\x02As'
>>> int_field(2)(-1) == b"\\x10" + b"\\xff" * 9 + b"\\x01"
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from google.protobuf.message import Message

__all__ = [
    "SMALL",
    "VARINTS",
    "enum_field",
    "int_field",
    "message_field",
    "number",
    "packed_enum_field",
    "repeated_text_field",
    "tag",
    "text_field",
    "varint",
]


def _encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


SMALL = 1 << 14
# Varints of -16383..16383 made once, looked up by value (negative indexes count from the end);
# a hot writer may index it itself for a length below SMALL.
VARINTS: list[bytes] = [_encode_varint(i) for i in range(SMALL)] + [
    _encode_varint(i) for i in range(-SMALL + 1, 0)
]


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint; a negative int as its 64-bit two's complement."""
    if -SMALL < value < SMALL:
        return VARINTS[value]
    return _encode_varint(value)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def number(message: type[Message], field: str) -> int:
    """The number of ``message``'s field ``field``, from the generated descriptor."""
    n: int = message.DESCRIPTOR.fields_by_name[field].number
    return n


def text_field(number: int) -> Callable[[str], bytes]:
    """A writer for string field ``number``: '' (proto3's default) writes nothing."""
    key = tag(number, 2)

    def write(value: str) -> bytes:
        if not value:
            return b""
        data = value.encode()
        n = len(data)
        return key + (VARINTS[n] if n < 16384 else varint(n)) + data

    return write


def int_field(number: int) -> Callable[[int], bytes]:
    """A writer for int32/int64/bool field ``number``: 0 / False writes nothing."""
    key = tag(number, 0)

    def write(value: int) -> bytes:
        if not value:
            return b""
        return key + (VARINTS[value] if -SMALL < value < SMALL else _encode_varint(value))

    return write


def message_field(number: int) -> Callable[[bytes], bytes]:
    """A writer for sub-message field ``number``: always written (the field is present)."""
    key = tag(number, 2)

    def write(body: bytes) -> bytes:
        n = len(body)
        return key + (VARINTS[n] if n < 16384 else varint(n)) + body

    return write


def repeated_text_field(number: int) -> Callable[[Iterable[str]], bytes]:
    """A writer for repeated string field ``number``: every item, '' included."""
    write = text_field(number)
    empty = tag(number, 2) + b"\x00"
    return lambda values: b"".join([write(v) if v else empty for v in values])


def enum_field(number: int, table: Mapping[str, int]) -> dict[str, bytes]:
    """Enum field ``number`` for each domain value of ``table``, written once: the value's
    varint; the zero value writes nothing."""
    key = tag(number, 0)
    return {value: key + varint(n) if n else b"" for value, n in table.items()}


def packed_enum_field(number: int, table: Mapping[str, int]) -> Callable[[Iterable[str]], bytes]:
    """A writer for repeated enum field ``number``: packed, one length and the varints."""
    key = tag(number, 2)
    values = {value: varint(n) for value, n in table.items()}

    def write(items: Iterable[str]) -> bytes:
        data = b"".join([values[v] for v in items])
        return key + varint(len(data)) + data if data else b""

    return write
