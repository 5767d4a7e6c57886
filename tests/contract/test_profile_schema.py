"""The profile's schema is written once (``domain/schema.py``, on the fields of
``domain/profile/``); the proto and the docs are checked against it, so none of the three can
drift from the others:

- every field of ``cpsettle.v1.RuleProfile`` and the messages below it is declared, with the
  same type (the same enum, the same message), in the proto's order, and every declared field is
  in the proto; a scalar with a default is ``optional`` (absent: the default; 0 stays 0);
- the defaults, ranges and list bounds the proto's comments state are the declared ones;
- docs/RULES.md §17 is the table the schema renders.
"""

from __future__ import annotations

import doctest
import re
from enum import StrEnum
from pathlib import Path

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cpsettle.v1 import profile_pb2
from cpsettle_service.domain import profile
from cpsettle_service.domain.profile.model import Money, RuleProfile
from cpsettle_service.domain.reading import schema
from cpsettle_service.domain.reading.reader import json_name
from cpsettle_service.domain.reading.schema import lines, markdown_table, message_name, specs

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto" / "cpsettle" / "v1" / "profile.proto"
RULES = ROOT / "docs" / "RULES.md"

_SCALAR = {
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "string",
}


def _proto_type(f: FieldDescriptor) -> str:
    if f.type == FieldDescriptor.TYPE_ENUM:
        assert f.enum_type is not None
        base = f"enum {f.enum_type.name}"
    elif f.type == FieldDescriptor.TYPE_MESSAGE:
        assert f.message_type is not None
        base = f.message_type.name
    else:
        base = _SCALAR[f.type]
    return f"repeated {base}" if f.is_repeated else base


def _enum_problems(where: str, enum: type[StrEnum], f: FieldDescriptor) -> list[str]:
    assert f.enum_type is not None, where
    proto = {v.name for v in f.enum_type.values if v.number != 0}
    declared = {json_name(m) for m in enum}
    if proto != declared:
        return [
            f"{where}: the proto's values {sorted(proto - declared)} are not declared, the "
            f"declared {sorted(declared - proto)} not in the proto"
        ]
    return []


def problems(desc: Descriptor, cls: type, path: str = "") -> list[str]:
    """Every way the declared fields of ``cls`` (and the parts below) differ from ``desc``."""
    out: list[str] = []
    if desc.name != message_name(cls):
        out.append(
            f"{path or 'the profile'}: the proto's {desc.name} is declared as {message_name(cls)}"
        )
    proto = {f.json_name: f for f in sorted(desc.fields, key=lambda f: f.number)}
    declared = {s.json: s for s in specs(cls)}
    for name in proto.keys() - declared.keys():
        out.append(f"{path}{name}: in {desc.name} but not declared on {cls.__name__}")
    for name in declared.keys() - proto.keys():
        out.append(f"{path}{name}: declared on {cls.__name__} but not in {desc.name}")
    common = [n for n in proto if n in declared]
    if common != [n for n in declared if n in proto]:
        out.append(
            f"{path}: {cls.__name__} declares {list(declared)}, not in the proto's order "
            f"{list(proto)}"
        )
    for name in common:
        f, s, where = proto[name], declared[name], f"{path}{name}"
        if _proto_type(f) != s.proto_type:
            out.append(f"{where}: {_proto_type(f)} in the proto, declared {s.proto_type}")
            continue
        if s.kind == "enum":
            assert s.enum is not None
            out += _enum_problems(where, s.enum, f)
        scalar = s.kind in ("int32", "int64", "bool") and not s.repeated
        if scalar and not s.required and not f.has_presence:
            out.append(f"{where}: has a default ({s.default}) but is not `optional` in the proto")
        if s.part is not None:
            sub = f"{where}[]." if s.repeated else f"{where}."
            assert f.message_type is not None, where
            out += problems(f.message_type, s.part, sub)
    return out


def test_the_schema_is_the_proto_field_for_field() -> None:
    assert problems(profile_pb2.RuleProfile.DESCRIPTOR, RuleProfile) == []


def test_the_comparison_finds_a_missing_field_and_a_wrong_type() -> None:
    """The check above can fail: a proto message against a part it does not match."""
    found = problems(profile_pb2.Deck.DESCRIPTOR, Money)
    assert "the profile: the proto's Deck is declared as Money" in found
    assert "jokers: in Deck but not declared on Money" in found
    assert "unitValue: declared on Money but not in Deck" in found
    found = problems(profile_pb2.Caps.DESCRIPTOR, profile.Caps)
    assert found == []
    found = problems(profile_pb2.Rake.DESCRIPTOR, profile.Caps)
    assert any("mode: declared on Caps" not in p for p in found)
    assert any(p.startswith("mode: in Rake but not declared") for p in found), found


# --------------------------------------------------------------------------- the proto's comments

FIELD = re.compile(r"^\s*(?:optional |repeated )?[\w.]+ (\w+) = \d+;")
MESSAGE = re.compile(r"^message (\w+) \{")


def _commented_fields() -> dict[tuple[str, str], str]:
    """(message, field) -> the comment above the field in profile.proto."""
    out: dict[tuple[str, str], str] = {}
    message = ""
    comment: list[str] = []
    for line in PROTO.read_text("utf-8").splitlines():
        stripped = line.strip()
        if m := MESSAGE.match(line):
            message, comment = m.group(1), []
        elif stripped.startswith("//"):
            comment.append(stripped[2:].strip())
        elif m := FIELD.match(line):
            out[(message, m.group(1))] = " ".join(comment)
            comment = []
        else:
            comment = []
    return out


def _snake(json: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), json)


def comment_problems() -> list[str]:
    """Where a proto comment states a default, a range or a list's bound the schema does not."""
    comments = _commented_fields()
    out: list[str] = []
    for line in lines(RuleProfile):
        s = line.spec
        text = comments.get((line.message, _snake(s.json)), "")
        where = f"{line.path} ({line.message}.{_snake(s.json)})"
        default = re.search(r"default (-?\d+|true|false|[A-Z][A-Z0-9_]+)\b", text)
        if default and not s.repeated:
            expected = schema.write_json(s, s.default)
            shown = str(expected).lower() if isinstance(expected, bool) else str(expected)
            if default.group(1) != shown:
                out.append(
                    f"{where}: the comment says default {default.group(1)}, the schema {shown}"
                )
        bounds = re.search(r"\((-?\d+)-(\d+)\b", text)
        if bounds and (int(bounds.group(1)), int(bounds.group(2))) != (s.minimum, s.maximum):
            out.append(
                f"{where}: the comment says {bounds.group(1)}-{bounds.group(2)}, the schema "
                f"{s.minimum}-{s.maximum}"
            )
        most = re.search(r"[Aa]t most (\d+)", text)
        if most and s.repeated and int(most.group(1)) != s.maximum:
            out.append(f"{where}: the comment says at most {most.group(1)}, the schema {s.maximum}")
    return out


def test_the_proto_comments_state_the_declared_defaults_and_bounds() -> None:
    comments = _commented_fields()
    # the parser reads the comments: spot checks of what it found
    assert "(2-4; default 4)" in comments[("HomeRun", "min_players")]
    assert "default ROYALTY_MODE_NONE" in comments[("Royalties", "mode")]
    assert comment_problems() == []


# --------------------------------------------------------------------------- the docs


def _rules_table() -> str:
    text = RULES.read_text("utf-8")
    section = text[text.index("\n## 17. Profile fields") :]
    start = section.index("| field | type |")
    rows = []
    for line in section[start:].splitlines():
        if not line.startswith("|"):
            break
        rows.append(line)
    return "\n".join(rows) + "\n"


def test_the_rules_field_table_is_the_schema() -> None:
    expected = markdown_table(RuleProfile)
    assert _rules_table() == expected, (
        "docs/RULES.md §17 differs from the schema; its table is printed by: python -c "
        "'from cpsettle_service.domain.profile import RuleProfile; from "
        "cpsettle_service.domain.reading.schema import markdown_table; "
        'print(markdown_table(RuleProfile), end="")\''
    )


def test_the_table_has_a_row_for_every_field_with_its_bounds() -> None:
    table = _rules_table()
    assert "| `scoring.homeRun.minPlayers` | int32 | `4` | 2–4 |" in table
    assert "| `royalties.table` | repeated RoyaltyEntry | empty | at most 324 entries |" in table
    assert table.count("\n") == 2 + len(list(lines(RuleProfile)))


# --------------------------------------------------------------------------- the declarations


def test_an_empty_profile_takes_every_declared_default() -> None:
    """The reader's defaults are the declared ones (the dataclass's, the JSON form's)."""
    read = profile.profile_to_dict(profile.profile_from_dict({"name": "x"}))
    for line in lines(RuleProfile):
        s = line.spec
        if (
            "[]" in line.path
            or s.required
            or s.default is None
            or (s.kind == "message" and (not s.repeated))
        ):
            continue
        value: object = read
        for key in line.path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if line.path in profile.EXTENSION_DEFAULTS:  # left out of the JSON form at its default
            assert value is None, line.path
            assert profile.EXTENSION_DEFAULTS[line.path] == schema.write_json(s, s.default)
        else:
            assert value == schema.write_json(s, s.default), line.path


def test_schema_doctests() -> None:
    result = doctest.testmod(schema)
    assert result.attempted and not result.failed
