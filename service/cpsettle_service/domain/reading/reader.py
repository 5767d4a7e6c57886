"""Strict reading of JSON-shaped input (dicts, lists, scalars) into typed values.

Every problem becomes a ``Violation`` with a field path (``profile.caps.basis``) and the code
the reader was made with (a profile's reader says ``PROFILE``, a request's
``MALFORMED_REQUEST``); reading goes on after a problem so that one pass reports everything.
Unknown keys are problems too.

Closed sets are read in their proto3 JSON spelling: the enum's name in upper snake case, then
the member's name (``RoyaltyMode.ON_WIN_REPLACES`` is ``"ROYALTY_MODE_ON_WIN_REPLACES"``,
``Suit.SPADE`` is ``"SUIT_SPADE"``), the name of the ``cpsettle.v1`` enum value
(``tests/api/test_enum_mapping.py`` holds the two together).
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache
from typing import Any, TypeVar

from ..cards.cards import Rank
from ..errors import Collector, ViolationCode

E = TypeVar("E", bound=StrEnum)
_MISSING: Any = object()
# An integer in text (protobuf's JSON form of a 64-bit field): ASCII digits only, as in JSON
# (``str.isdigit`` also takes "²", which ``int`` refuses), and no more digits than ``int``
# converts however it is set: 640 is the lowest limit ``sys.set_int_max_str_digits`` (or
# PYTHONINTMAXSTRDIGITS) accepts, and far more than any bound of a profile field.
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,640}")


def describe(value: object) -> str:
    """A short description of a JSON value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: object) -> str:
    """A JSON value as a message quotes it: null, true/false, 5 for 5.0, else its repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():  # JSON / protobuf Struct numbers
        return str(int(value))
    return repr(value)


def read_card_rank(
    errors: Collector, path: str, value: object, code: ViolationCode = ViolationCode.PROFILE
) -> Rank | None:
    """A card rank: 2-9, T (or 10), J, Q, K, A in either case; else a violation (then ``None``)."""
    if isinstance(value, str):
        try:
            return Rank("T" if value == "10" else value.upper())
        except ValueError:
            pass
    errors.add(path, f"must be a rank (2-9, T, J, Q, K, A); got {shown(value)}", code)
    return None


class Reader:
    """Reads the fields of one JSON object, recording which keys were used."""

    __slots__ = ("_seen", "code", "data", "errors", "ok", "path")

    def __init__(self, errors: Collector, path: str, data: object, code: ViolationCode) -> None:
        self.errors = errors
        self.path = path
        self.code = code
        self._seen: set[str] = set()
        if isinstance(data, dict):
            self.data: dict[str, Any] = data
            self.ok = True
        else:
            if data is not None:
                errors.add(path, f"must be an object, got {describe(data)}", code)
            self.data = {}
            self.ok = data is None

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def raw(self, key: str, default: Any = None) -> Any:
        self._seen.add(key)
        value = self.data.get(key, default)
        return default if value is None else value

    def integer(
        self, key: str, default: int, *, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        value = self.raw(key, _MISSING)
        if value is _MISSING:
            return default
        # JSON numbers may arrive as floats (2.0) or, from protobuf's JSON form, as strings
        # for 64-bit fields; accept exact integers only.
        if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.errors.add(self.at(key), f"must be an integer, got {describe(value)}", self.code)
            return default
        if minimum is not None and value < minimum:
            self.errors.add(self.at(key), f"must be at least {minimum}, got {value}", self.code)
            return default
        if maximum is not None and value > maximum:
            self.errors.add(self.at(key), f"must be at most {maximum}, got {value}", self.code)
            return default
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key, _MISSING)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            self.errors.add(
                self.at(key), f"must be true or false, got {describe(value)}", self.code
            )
            return default
        return value

    def string(self, key: str, default: str, *, max_length: int = 256) -> str:
        value = self.raw(key, _MISSING)
        if value is _MISSING:
            return default
        if not isinstance(value, str):
            self.errors.add(self.at(key), f"must be a string, got {describe(value)}", self.code)
            return default
        if len(value) > max_length:
            self.errors.add(self.at(key), f"must be at most {max_length} characters", self.code)
            return default
        return value

    def enum(self, key: str, enum: type[E], default: E) -> E:
        """A closed set's member from its JSON name (``json_name``); '' or absent: ``default``."""
        value = self.raw(key, _MISSING)
        if value is _MISSING or value == "" or value == json_prefix(enum) + "UNSPECIFIED":
            return default
        return parse_enum(self.errors, self.at(key), enum, value, default, self.code)

    def obj(self, key: str) -> Reader:
        return Reader(self.errors, self.at(key), self.raw(key), self.code)

    def items(self, key: str) -> list[tuple[str, Any]]:
        """The elements of a list field with their paths (``key[0]``)."""
        value = self.raw(key, _MISSING)
        if value is _MISSING:
            return []
        if not isinstance(value, list):
            self.errors.add(self.at(key), f"must be a list, got {describe(value)}", self.code)
            return []
        return [(f"{self.at(key)}[{i}]", v) for i, v in enumerate(value)]

    def finish(self) -> None:
        """Report every key that no reader asked for."""
        for key in self.data:
            if key not in self._seen:
                self.errors.add(self.at(key), "unknown field", self.code)


@cache  # read for every enum value of a profile: a regex each time was a tenth of reading one
def json_prefix(enum: type[StrEnum]) -> str:
    """The JSON names' prefix of ``enum``: ``RoyaltyMode`` -> ``"ROYALTY_MODE_"``.

    >>> from ..cards.rows import Row
    >>> json_prefix(Row), json_name(Row.FRONT)
    ('ROW_', 'ROW_FRONT')
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.__name__).upper() + "_"


def json_name(member: StrEnum) -> str:
    """A member's JSON name: its enum's prefix and its own name (the proto enum value's name)."""
    return _json_names(type(member))[1][member]


@cache
def _json_names(enum: type[E]) -> tuple[dict[str, E], dict[E, str]]:
    prefix = json_prefix(enum)
    by_name = {prefix + m.name: m for m in enum}
    return by_name, {m: n for n, m in by_name.items()}


def parse_enum(
    errors: Collector, path: str, enum: type[E], value: object, default: E, code: ViolationCode
) -> E:
    """``value``, a JSON name of ``enum``, as its member; otherwise a problem and ``default``."""
    by_name: dict[str, E] = _json_names(enum)[0]
    if isinstance(value, str) and value in by_name:
        return by_name[value]
    allowed = ", ".join(by_name)
    errors.add(path, f"got {value!r}, which is not one of {allowed}", code)
    return default


def read_wire_enum(r: Reader, key: str, enum: type[E], prefix: str, default: E) -> E:
    """An enum field that is a proto enum on the wire: its JSON form is the proto value name
    (``NATURAL_TIE_PUSH``); the short spec spelling (``PUSH``) is read too, and the zero value
    ``…_UNSPECIFIED`` (or absence) means the default."""
    value = r.raw(key)
    if value is None or value == "" or value == prefix + "UNSPECIFIED":
        return default
    if isinstance(value, str) and not value.startswith(prefix):
        value = prefix + value
    return parse_enum(r.errors, r.at(key), enum, value, default, r.code)
