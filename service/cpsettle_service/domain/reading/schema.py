"""The profile's schema, written once: each field of a profile part declares, where the part's
dataclass declares it, its type, default, bounds or allowed values and a doc line.

A part is a frozen dataclass named after its ``cpsettle.v1`` message (``Scoring``, ``Caps``, …)
whose fields are made with the helpers below instead of a bare default::

    @dataclass(frozen=True, slots=True)
    class HomeRun:
        min_players: int = integer(4, 2, 4, "The fewest players at the table for a home run.")

Everything else reads that one declaration:

- the dataclass default is the declared default (``HomeRun().min_players == 4``);
- the JSON name is the attribute's name in camelCase (``minPlayers``), as in proto3 JSON;
- ``read_part`` reads a part from its JSON form, each field checked with its bound, and
  ``write_part`` writes the complete JSON form back; ``profile.py`` reads the fields the helpers
  cannot read alone (a table, a threshold: the checks across fields), each bound taken from its
  declaration (``spec``), and a field may declare its own ``write``;
- ``lines(RuleProfile)`` is the flat table (path, proto type, default, bounds, doc): tests check
  it against the ``cpsettle.v1.RuleProfile`` descriptor both ways, and against the field table of
  docs/RULES.md, so neither the proto nor the docs can drift from it.

Adding a field to a part: one line in its dataclass, the proto field, and the docs row the
tests then ask for. A scalar or enum field needs nothing else.

>>> from ..errors import Collector, ViolationCode
>>> @dataclass(frozen=True)
... class Example:
...     size: int = integer(3, 1, 9, "How big.")
>>> errors = Collector()
>>> read_part(Reader(errors, "example", {"size": 12}, ViolationCode.PROFILE), Example)
Example(size=3)
>>> [str(v) for v in errors.violations]
['example.size: must be at most 9, got 12']
>>> write_part(Example(5))
{'size': 5}
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any

from .reader import Reader, json_name, json_prefix, read_wire_enum

__all__ = [
    "Line",
    "Spec",
    "boolean",
    "card_rank",
    "choice",
    "describe_bounds",
    "describe_default",
    "external",
    "field_reader",
    "integer",
    "lines",
    "markdown_table",
    "maximum",
    "message_name",
    "part",
    "read_field",
    "read_part",
    "repeated",
    "required",
    "spec",
    "specs",
    "text",
    "write_json",
    "write_part",
]

Readers = Mapping[str, Callable[[Reader], Any]]


@dataclass(frozen=True, slots=True)
class Spec:
    """One field's declaration. ``kind`` is its proto type: ``int32``, ``int64``, ``bool``,
    ``string``, ``rank`` (a string in card notation: ``"Q"``), ``enum`` (``enum`` is the domain's
    StrEnum) or ``message`` (``part`` is its dataclass; ``proto`` names a message declared
    elsewhere); ``repeated`` for a list, ``maximum`` then bounds its entries."""

    kind: str
    doc: str
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None  # a number's maximum, a string's length, a list's entries
    enum: type[StrEnum] | None = None
    part: type | None = None
    proto: str | None = None
    repeated: bool = False
    required: bool = False  # no default: a table entry must hold it
    omit_default: bool = False  # written only when it differs from its default (RULES.md §16)
    short_prefix: str | None = None  # also read without its enum prefix (``PUSH``)
    write: Callable[[Any], Any] | None = None  # the JSON form, when the kind's is not it
    name: str = ""  # the attribute (filled in by ``specs``)
    json: str = ""  # its JSON name (filled in by ``specs``)

    @property
    def proto_type(self) -> str:
        """``int32``, ``enum RoyaltyMode``, ``repeated RoyaltyEntry``, …: as the proto says."""
        if self.kind == "enum":
            assert self.enum is not None
            base = f"enum {self.enum.__name__}"
        elif self.kind == "message":
            base = self.proto or (message_name(self.part) if self.part else "?")
        elif self.kind == "rank":
            base = "string"
        else:
            base = self.kind
        return f"repeated {base}" if self.repeated else base


def _field(spec: Spec, default: Any = dataclasses.MISSING) -> Any:
    if spec.required or default is dataclasses.MISSING:
        return field(metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})


def integer(
    default: int | None,
    minimum: int,
    maximum: int,
    doc: str,
    *,
    wide: bool = False,
    optional: bool = False,
) -> Any:
    """An integer from ``minimum`` to ``maximum`` (``wide``: int64 on the wire, for money);
    ``default`` ``None``: required, or with ``optional`` unset (a clause not written)."""
    kind = "int64" if wide else "int32"
    if optional:
        return _field(Spec(kind, doc, None, minimum, maximum), None)
    required = default is None  # then the reader takes 0 while it reports the field missing
    return _field(
        Spec(kind, doc, 0 if required else default, minimum, maximum, required=required), default
    )


def boolean(default: bool, doc: str, *, omit_default: bool = False) -> Any:
    return _field(Spec("bool", doc, default, omit_default=omit_default), default)


def text(
    default: str, max_length: int, doc: str, *, required: bool = False, omit_default: bool = False
) -> Any:
    """A string of at most ``max_length`` characters (``required``: ``default`` is only what
    the reader takes when it is missing, the dataclass has none)."""
    return _field(
        Spec(
            "string", doc, default, maximum=max_length, required=required, omit_default=omit_default
        ),
        default,
    )


def choice(
    enum: type[StrEnum],
    default: StrEnum | None,
    doc: str,
    *,
    omit_default: bool = False,
    short_spelling: bool = False,
    optional: bool = False,
) -> Any:
    """A member of ``enum``, written as its JSON name (``json_name``); the zero value or
    absence means the default (``None``: required, or with ``optional`` unset).
    ``short_spelling``: ``PUSH`` is read as ``NATURAL_TIE_PUSH`` too."""
    short = json_prefix(enum) if short_spelling else None
    return _field(
        Spec(
            "enum",
            doc,
            default,
            enum=enum,
            required=default is None and not optional,
            omit_default=omit_default,
            short_prefix=short,
        ),
        default,
    )


def card_rank(doc: str, default: Any = dataclasses.MISSING) -> Any:
    """An optional rank in card notation (``"Q"``); none is left out of the JSON form. Without
    ``default`` the dataclass still takes it positionally (a field with none follows)."""
    return _field(Spec("rank", doc, None), default)


_OWN_DEFAULTS: Any = object()


def part(cls: type, doc: str, default: Any = _OWN_DEFAULTS, *, omit_default: bool = False) -> Any:
    """A nested part; its default (left out: the part with its own defaults; ``None``: none)."""
    default = cls() if default is _OWN_DEFAULTS else default
    return _field(Spec("message", doc, default, part=cls, omit_default=omit_default), default)


def repeated(
    item: type | str,
    maximum: int,
    doc: str,
    default: tuple[Any, ...] | None = (),
    *,
    write: Callable[[Any], Any] | None = None,
    omit_default: bool = False,
) -> Any:
    """A list of at most ``maximum`` parts (``item`` their dataclass), enum members (``item``
    the enum), integers (``int``) or ranks (``"rank"``); ``write``: the list's JSON form, when
    it is not each item's in turn."""
    common: dict[str, Any] = dict(
        maximum=maximum, repeated=True, write=write, omit_default=omit_default
    )
    if item == "rank":
        s = Spec("rank", doc, default, **common)
    elif item is int:
        s = Spec("int32", doc, default, **common)
    elif isinstance(item, type) and issubclass(item, StrEnum):
        s = Spec("enum", doc, default, enum=item, **common)
    else:
        assert isinstance(item, type)
        s = Spec("message", doc, default, part=item, **common)
    return _field(s, default)


_SCALARS = frozenset({"int32", "int64", "bool", "string"})


def external(
    proto: str,
    doc: str,
    default: Any = dataclasses.MISSING,
    *,
    write: Callable[[Any], Any] | None = None,
) -> Any:
    """A field its part reads itself: a scalar of kind ``proto`` or a message declared elsewhere
    (``proto`` its name, ``write`` its JSON form); no ``default``: required."""
    kind = proto if proto in _SCALARS else "message"
    required = default is dataclasses.MISSING
    return _field(
        Spec(kind, doc, None if required else default, proto=proto, required=required, write=write),
        default,
    )


_CAMEL = re.compile(r"_([a-z0-9])")


def message_name(cls: type) -> str:
    """The ``cpsettle.v1`` message a part is: its name, or its ``proto_message`` when the
    domain names it otherwise (``Definition`` is ``NaturalDefinition``)."""
    return str(getattr(cls, "proto_message", cls.__name__))


@cache
def specs(cls: type) -> tuple[Spec, ...]:
    """The declared fields of a part, in declaration order (the proto's order too)."""
    out = []
    for f in dataclasses.fields(cls):
        s = f.metadata.get("spec")
        if s is not None:
            out.append(
                dataclasses.replace(
                    s, name=f.name, json=_CAMEL.sub(lambda m: m.group(1).upper(), f.name)
                )
            )
    return tuple(out)


@cache
def spec(cls: type, name: str) -> Spec:
    """The declaration of ``cls``'s field ``name``."""
    for s in specs(cls):
        if s.name == name:
            return s
    raise KeyError(f"{cls.__name__}.{name}")


def maximum(cls: type, name: str) -> int:
    """The declared maximum of ``cls``'s field ``name`` (a number's, a string's length, a
    list's entries)."""
    bound = spec(cls, name).maximum
    if bound is None:
        raise KeyError(f"{cls.__name__}.{name} declares no maximum")
    return bound


# --------------------------------------------------------------------------- reading


def read_field(r: Reader, s: Spec) -> Any:
    """One scalar, enum or part field of the object ``r`` reads, checked with its bound."""
    return field_reader(s)(r)


def field_reader(s: Spec) -> Callable[[Reader], Any]:
    """``read_field`` for one field, worked out once (for a field read in a loop). A closure:
    a partial with keywords costs half as much again per call."""
    key, default, kind = s.json, s.default, s.kind
    if kind == "int32" or kind == "int64":
        lo, hi = s.minimum, s.maximum
        return lambda r: r.integer(key, default, minimum=lo, maximum=hi)
    if kind == "bool":
        return lambda r: r.boolean(key, default)
    if kind == "enum" and not s.repeated:
        enum, prefix = s.enum, s.short_prefix
        assert enum is not None
        if prefix is not None:
            return lambda r: read_wire_enum(r, key, enum, prefix, default)
        return lambda r: r.enum(key, enum, default)
    if kind == "string":
        length = s.maximum or 256
        return lambda r: r.string(key, default, max_length=length)
    if kind == "message" and s.part is not None and not s.repeated:
        cls = s.part
        return lambda r: read_part(r.obj(key), cls)
    raise TypeError(f"{s.name} needs its part's own reader")


@cache
def required(cls: type) -> tuple[str, ...]:
    """The JSON names of the fields ``cls`` declares required (a table entry must hold them)."""
    return tuple(s.json for s in specs(cls) if s.required)


@cache
def _read_plan(cls: type) -> tuple[tuple[Spec, Callable[[Reader], Any] | None], ...]:
    return tuple(
        (s, None if s.repeated or (s.part is None and s.kind == "message") else field_reader(s))
        for s in specs(cls)
    )


def read_part(r: Reader, cls: type, readers: Readers | None = None) -> Any:
    """A part from the object ``r`` reads: its nested parts first (the order its problems have
    always been listed in), then its other fields in declaration order, ``readers[name]``
    reading a field the helpers cannot; then its unknown keys."""
    readers = readers or {}
    values: dict[str, Any] = {}
    plan = _read_plan(cls)
    for s, read in plan:
        if s.kind == "message" and s.name not in readers:
            assert read is not None, f"{cls.__name__}.{s.name} needs a reader"
            values[s.name] = read(r)
    for s, read in plan:
        if s.name in readers:
            values[s.name] = readers[s.name](r)
        elif s.kind != "message":
            assert read is not None, f"{cls.__name__}.{s.name} needs a reader"
            values[s.name] = read(r)
    r.finish()
    return cls(**values)


# --------------------------------------------------------------------------- writing


def write_part(value: Any) -> dict[str, Any]:
    """A part's complete JSON form in declaration order. ``None`` is left out, and so is a
    field declared ``omit_default`` at its default."""
    return _part_writer(value.__class__)(value)


@cache
def _part_writer(cls: type) -> Callable[[Any], dict[str, Any]]:
    """``write_part`` for ``cls``, worked out once: its values fetched at once, a writer only
    where the JSON form differs from the value (a large profile writes its table entries
    hundreds of times; this keeps profile_to_dict near a hand-written one's speed)."""
    fields = specs(cls)
    names = [s.name for s in fields]
    get = (
        operator.attrgetter(*names)
        if len(names) > 1
        else (lambda v, name=names[0]: (getattr(v, name),))
    )
    plan = tuple((s.json, s.omit_default, s.default, _writer(s)) for s in fields)

    def write(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for v, (key, omit, default, w) in zip(get(value), plan, strict=True):
            if v is None or (omit and v == default):
                continue
            out[key] = v if w is None else w(v)
        return out

    return write


def write_json(s: Spec, value: Any) -> Any:
    """One field's value in its JSON form (its default's, say)."""
    write = _writer(s)
    return value if write is None else write(value)


def _writer(s: Spec) -> Callable[[Any], Any] | None:
    if s.write is not None:
        return s.write
    write = _value_writer(s)
    if s.repeated:
        return (lambda items: [write(x) for x in items]) if write else list
    return write


def _value_writer(s: Spec) -> Callable[[Any], Any] | None:
    kind = s.kind
    if kind == "enum":
        assert s.enum is not None
        return {m: json_name(m) for m in s.enum}.__getitem__
    if kind == "message":
        return write_part if s.part is None else _part_writer(s.part)
    if kind == "rank":
        return operator.attrgetter("value")
    if kind == "string":
        return str
    return None


# --------------------------------------------------------------------------- the flat table


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the flat table: a field by its JSON path (``scoring.homeRun.minPlayers``;
    a list's items ``royalties.table[].units``), the message holding it and its declaration."""

    path: str
    message: str
    spec: Spec


def lines(cls: type, prefix: str = "") -> Iterator[Line]:
    """Every declared field of ``cls`` and of the parts below it, depth first."""
    for s in specs(cls):
        path = f"{prefix}{s.json}"
        yield Line(path, message_name(cls), s)
        if s.part is not None:
            yield from lines(s.part, f"{path}[]." if s.repeated else f"{path}.")


# --------------------------------------------------------------------------- the docs' table


def _short(member: Any) -> str:
    return f"`{member.name}`"


def describe_default(s: Spec) -> str:
    """A field's default as docs/RULES.md writes it (enum members by their short name)."""
    d = s.default
    if s.required:
        return "required"
    if d is None:
        return "none"
    if s.kind == "enum":
        return ", ".join(_short(m) for m in d) if s.repeated else _short(d)
    if s.repeated:
        return "empty"
    if s.kind == "message":
        if not write_part(d) or all(
            x.default is not None and getattr(d, x.name) == x.default for x in specs(d.__class__)
        ):
            return "its fields' defaults"
        values = (getattr(d, x.name) for x in specs(d.__class__))
        return " ".join(
            f"`{v.name if x.kind == 'enum' else v.value}`"
            for x, v in zip(specs(d.__class__), values, strict=True)
            if v is not None
        )
    if s.kind == "string":
        return f'`"{d}"`'
    if s.kind == "bool":
        return f"`{str(d).lower()}`"
    return f"`{d}`"


def describe_bounds(s: Spec) -> str:
    """What a field may hold, beyond its type: a range, a length, the enum's members."""
    if s.kind in ("int32", "int64") and s.minimum is not None:
        return f"{s.minimum:,}–{s.maximum:,}"
    if s.kind == "enum" and s.enum is not None:
        members = " ".join(m.name for m in s.enum)
        return f"{members}; at most {s.maximum}" if s.repeated else members
    if s.kind == "rank":
        return "2-9, T, J, Q, K, A"
    if s.maximum is not None:
        return f"at most {s.maximum:,} {'entries' if s.repeated else 'characters'}"
    return ""


def markdown_table(cls: type) -> str:
    """The field table of docs/RULES.md §17: one row per declared field, depth first."""
    out = ["| field | type | default | bounds | meaning |", "|---|---|---|---|---|"]
    for line in lines(cls):
        s = line.spec
        cells = (
            f"`{line.path}`",
            s.proto_type,
            describe_default(s),
            describe_bounds(s),
            s.doc.replace("|", "\\|"),
        )
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
