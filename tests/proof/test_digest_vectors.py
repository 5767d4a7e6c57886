"""docs/AUDIT.md, "Reproducing the digests from what you hold", followed to the letter.

The digest vectors (tests/vectors/digests) start from what an auditor holds: a request's JSON,
a profile as ``cpsettle profiles NAME --output json`` prints it or ``GetProfile`` answers it,
a house profile's file, a settlement 0.1.0 issued. Here each is turned into its digest by
functions written from the doc's words alone -- the bytes of a request from its rule and its
appendix's field table (read from the doc), the digest form of a profile from its rules and the
appendix's table of fields and defaults (read from the doc), the v1 id from its formula -- with
``json``, ``struct`` and ``hashlib`` only, never the project's functions. Each rule's words are
quoted next to the function that follows them, and a test checks every quote is in the doc.

Then the vectors are checked against the service as it is: a real server (in this process, on
a unix socket, with the house profiles loaded) answers ``GetProfile`` and the CLI prints exactly
what the vectors hold, and settling each request gives the vectors' digests; the doc's tables
are checked against the ``.proto`` and the profile's schema; and the doc's resolution of
overrides is compared with the service's on a few hundred random overrides.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import random
import re
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient, request_from_json
from tests.conftest import ROOT, ServerHandle, start_server, stop_server

DOC = (ROOT / "docs" / "AUDIT.md").read_text("utf-8")
VECTORS = ROOT / "tests" / "vectors" / "digests"
HOUSE = VECTORS / "house"


def words(text: str) -> str:
    return " ".join(text.split())


def section(title: str) -> str:
    """The doc's section under the heading ``title`` (up to the next heading of any level)."""
    start = DOC.index(title + "\n")
    return re.split(r"\n#{2,3} ", DOC[start + len(title) :], maxsplit=1)[0]


def vector(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / f"{name}.json").read_text("utf-8"))  # type: ignore[no-any-return]


PROFILE_VECTORS = sorted(p.stem for p in VECTORS.glob("profile-*.json"))
REQUEST_VECTORS = sorted(p.stem for p in VECTORS.glob("request-*.json"))

# --------------------------------------------------------------------------- the doc's tables

REQUEST_APPENDIX = section("## Appendix: the fields of a request")
# message -> number -> (JSON name, kind, type)
REQUEST_TABLE: dict[str, dict[int, tuple[str, str, str]]] = {}
for _m, _n, _j, _k, _t in re.findall(
    r"^\| `(\w+)` \| (\d+) \| `(\w+)` \| ([\w ]+) \| ([\w →]*) \|$", REQUEST_APPENDIX, re.MULTILINE
):
    REQUEST_TABLE.setdefault(_m, {})[int(_n)] = (_j, _k.strip(), _t.strip())
# enum -> name -> number: the request's own, and Row and HandClass from the content bytes'
ENUMS: dict[str, dict[str, int]] = {}
for _text in (REQUEST_APPENDIX, section("## Appendix: the fields the content bytes cover")):
    for _e, _v, _name in re.findall(r"^\| (\w+) \| (\d+) \| `(\w+)` \|$", _text, re.MULTILINE):
        ENUMS.setdefault(_e, {})[_name] = int(_v)

PROFILE_APPENDIX = section("## Appendix: the profile's digest form")
# JSON path -> (kind, default, written); default: a JSON text, "its fields'" or "—"
PROFILE_TABLE: dict[str, tuple[str, str, str]] = {
    path: (kind.strip(), default.strip().strip("`"), written.strip())
    for path, kind, default, written in re.findall(
        r"^\| `([\w.\[\]]+)` \| ([\w ]+) \| ([^|]+) \| ([\w ]+) \|$", PROFILE_APPENDIX, re.MULTILINE
    )
}


# --------------------------------------------------------------------------- the request's bytes

QUOTE_VARINT = (
    "`varint(n)`, 0 ≤ n < 2^64: seven bits at a time, least significant group "
    "first; every byte but the last has its high bit (0x80) set."
)
QUOTE_FIELDS = (
    "`encode(message)` = the encodings of its present fields in **ascending field number**"
)


def varint(n: int) -> bytes:
    n %= 1 << 64  # "a negative `v` is written as `v + 2^64`"
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number * 8 + wire)


def delimited(number: int, body: bytes) -> bytes:
    return tag(number, 2) + varint(len(body)) + body


QUOTE_PLAIN = [
    '`string`: present if not `""`: `varint(number·8 + 2)`, `varint(byte length)`, the UTF-8 '
    "bytes;",
    "`int32`, `int64`: present if not 0: `varint(number·8 + 0)`, `varint(v)`, where a negative "
    "`v` is written as `v + 2^64` (ten bytes, for `int32` too);",
    "`bool`: present if true: `varint(number·8 + 0)`, the byte `01`;",
    "`enum`: present if not 0 (the `..._UNSPECIFIED` value): `varint(number·8 + 0)`, "
    "`varint(value)`, the value's number from the enum table below;",
    "`optional int64`: present if the field is *set*, even to 0 (in JSON: the key is there);",
    "`message`: present if set, even when empty (in JSON: the key is there, `{}` included): "
    "`varint(number·8 + 2)`, `varint(length of body)`, body = `encode(sub-message)`;",
    "`repeated string`: every element in order, each written like a string field",
    "`repeated message`: every element in order, each like a message field;",
    "`repeated enum`: packed, present if not empty: `varint(number·8 + 2)`, `varint(length)`, "
    "then every element's `varint(value)` in order.",
]
QUOTE_REQUEST_KINDS = [
    "`optional int32`, `optional bool`, `optional string`: as `optional int64`: present if set, "
    'even to 0, false or `""` (in JSON: the key is there), and written as their plain kind;',
    "`repeated int32`: packed, as `repeated enum` (a negative element in ten bytes);",
    "`double` (in `Value` only): `varint(number·8 + 1)`, then the IEEE 754 binary64 value in "
    "eight bytes, least significant first",
    "`oneof` (the members of `Value`): the member that is set is written even when it holds its "
    "zero value",
    "each written as a `message` field 1 whose body is the key as a `string` field 1 — written "
    "even when it is empty — followed by its value as a `message` field 2 (`Value`).",
    "The entries are in the order of their keys' UTF-8 bytes, compared up to the shorter key's "
    "length; **a key comes before every key it is a prefix of**",
    "`null` is `nullValue` (0), a number is `numberValue` (a double: `2` and `2.0` are both "
    "2.0), a string `stringValue`, `true` and `false` `boolValue`, an object `structValue` "
    "(again a `Struct`), an array `listValue` (a `ListValue`: its elements in order, each a "
    "`Value` in field 1).",
]


def enum_number(enum: str, value: Any) -> int:
    return value if isinstance(value, int) else ENUMS[enum][value]


def map_order(a: bytes, b: bytes) -> int:
    """The doc's order of a ``Struct``'s keys (``cmp``-style)."""
    common = min(len(a), len(b))
    if a[:common] != b[:common]:
        return -1 if a[:common] < b[:common] else 1
    return len(b) - len(a)  # the longer (the one the other is a prefix of) first


def encode_struct(obj: dict[str, Any], order: Any = map_order) -> bytes:
    out = b""
    for k in sorted((k.encode("utf-8") for k in obj), key=functools.cmp_to_key(order)):
        entry = delimited(1, k) + delimited(2, encode_value(obj[k.decode("utf-8")], order))
        out += delimited(1, entry)
    return out


def encode_value(v: Any, order: Any = map_order) -> bytes:
    if v is None:
        return tag(1, 0) + varint(0)
    if isinstance(v, bool):
        return tag(4, 0) + (b"\x01" if v else b"\x00")
    if isinstance(v, (int, float)):
        return tag(2, 1) + struct.pack("<d", float(v))
    if isinstance(v, str):
        return delimited(3, v.encode("utf-8"))
    if isinstance(v, dict):
        return delimited(5, encode_struct(v, order))
    return delimited(6, b"".join(delimited(1, encode_value(x, order)) for x in v))


def encode(message: str, obj: dict[str, Any], order: Any = map_order) -> bytes:
    """A request (or one of its messages) from its JSON, by the doc's rule and table."""
    if message == "Struct":
        return encode_struct(obj, order)
    fields = REQUEST_TABLE[message]
    names = {j for j, _, _ in fields.values()}
    assert set(obj) <= names, f"{message}: {set(obj) - names} not in the table"
    out = b""
    for number in sorted(fields):
        name, kind, typ = fields[number]
        if obj.get(name) is None:
            continue
        v = obj[name]
        optional = kind.startswith("optional ")
        kind = kind.removeprefix("optional ")
        if kind == "string" and (v != "" or optional):
            out += delimited(number, v.encode("utf-8"))
        elif kind in ("int32", "int64") and (int(v) != 0 or optional):
            out += tag(number, 0) + varint(int(v))
        elif kind == "bool" and (v or optional):
            out += tag(number, 0) + (b"\x01" if v else b"\x00")
        elif kind == "enum" and enum_number(typ, v) != 0:
            out += tag(number, 0) + varint(enum_number(typ, v))
        elif kind == "message":
            out += delimited(number, encode(typ, v, order))
        elif kind == "repeated string":
            out += b"".join(delimited(number, x.encode("utf-8")) for x in v)
        elif kind == "repeated message":
            out += b"".join(delimited(number, encode(typ, x, order)) for x in v)
        elif kind in ("repeated enum", "repeated int32") and v:
            values = [enum_number(typ, x) if kind == "repeated enum" else int(x) for x in v]
            out += delimited(number, b"".join(varint(x) for x in values))
    return out


# --------------------------------------------------------------------------- the digest form

QUOTE_CANONICAL = (
    "as canonical JSON: sorted keys, separators `,` and `:`, UTF-8, no escaping of non-ASCII."
)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


QUOTE_INT64 = (
    "the three `int64` fields `money.unitValue`, `rake.perPlayerFee` and "
    '`rake.commissionCap` too (`"unitValue":100`, not `"100"`)'
)
INT64 = (("money", "unitValue"), ("rake", "perPlayerFee"), ("rake", "commissionCap"))
QUOTE_CLI = (
    "prints the digest form, with the three `int64` fields as decimal strings "
    "(protobuf's JSON form): make them numbers, and that is the digest form."
)


def from_cli(text: str) -> dict[str, Any]:
    form: dict[str, Any] = json.loads(text)
    for part, key in INT64:
        form[part][key] = int(form[part][key])
    return form


QUOTE_GET_PROFILE = (
    "the same three strings made numbers, and put back what a printer leaves out because it is "
    'empty: `name`, `version` and `description` as `""`, `royalties.table`, `naturals.table` '
    "and `fantasyland.progressive` as `[]`, each when it is absent. Nothing else"
)


def from_get_profile(answer: dict[str, Any]) -> dict[str, Any]:
    form: dict[str, Any] = copy.deepcopy(answer["profile"])
    for part, key in INT64:
        form[part][key] = int(form[part][key])
    for key in ("name", "version", "description"):
        form.setdefault(key, "")
    form["royalties"].setdefault("table", [])
    form["naturals"].setdefault("table", [])
    form["fantasyland"].setdefault("progressive", [])
    return form


QUOTE_MERGE = (
    "Lay `profileOverrides` on top: where both hold an object, merge them key by "
    "key; anything else the overrides hold (a value, a list, `null`) replaces what "
    "was there."
)


def merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(out[k], v) if k in out else copy.deepcopy(v)
        return out
    return copy.deepcopy(patch)


QUOTE_RESOLVE = [
    'a field that is absent, or `null`, takes its default — an object whose default is "its '
    'fields\'" is built from its fields\' defaults —, and so does an enum given as `""` or as '
    "its `…_UNSPECIFIED` value; `naturals.equalRank` may also be given without its prefix "
    '(`"PUSH"`); an integer may come as `2`, `2.0` (a `Struct` holds doubles) or `"2"`: '
    "write `2`; a rank in either case, or `10` for `T`; an empty `ranking.suitOrder` takes its "
    "default.",
    'the options of RULES.md §16 marked "unless default" are written only when they differ '
    "from their default",
    "a field without a default that is not set (a rank not given, a natural's `definition` and "
    "each clause of it, a threshold of `fantasyland.stay` when `stay` is given without it) is "
    "left out;",
]
QUOTE_ORDER = (
    "`fantasyland.progressive` weakest first (by hand class in the order of the `HandClass` "
    "table, then by rank, `2` lowest and `A` highest, an entry without a rank before those with "
    "one; equal entries keep their order), and in a natural's `definition` `rankGroups` largest "
    "first, `colourSplit` the larger number first, `ranksIn` lowest first (`A` highest)."
)
RANKS = "23456789TJQKA"


def rank(v: str) -> str:
    return "T" if v == "10" else v.upper()


def children(prefix: str) -> list[str]:
    lead = prefix + "." if prefix else ""
    return [
        p
        for p in PROFILE_TABLE
        if p.startswith(lead) and "." not in p[len(lead) :] and "[" not in p[len(lead) :]
    ]


def default_of(path: str) -> Any:
    _, default, _ = PROFILE_TABLE[path]
    return form(path, {}) if default == "its fields'" else json.loads(default)


def enum_value(kind: str, v: str) -> str | None:
    names = ENUMS[kind.removeprefix("enum ").removeprefix("list of ")]
    if v in names:
        return None if names[v] == 0 else v
    [full] = [n for n in names if n.endswith("_" + v)]  # (naturals.equalRank's short spelling)
    return full


def value(path: str, v: Any) -> Any:
    kind, _, _ = PROFILE_TABLE[path]
    if kind == "integer":
        return int(float(v)) if isinstance(v, float) else int(v)
    if kind == "rank":
        return rank(v)
    if kind == "object":
        return form(path, v)
    if kind == "list of objects":
        return [form(path + "[]", x) for x in v]
    if kind == "list of integers":
        return [int(x) for x in v]
    if kind == "list of ranks":
        return [rank(x) for x in v]
    if kind.startswith("list of "):
        return [enum_value(kind, x) for x in v]
    return v


def ordered(path: str, v: Any) -> Any:
    if path == "fantasyland.progressive":
        hands = ENUMS["HandClass"]
        return sorted(
            v,
            key=lambda e: (hands[e["handClass"]], RANKS.index(e["rank"]) + 1 if "rank" in e else 0),
        )
    if path.endswith(("definition.rankGroups", "definition.colourSplit")):
        return sorted(v, reverse=True)
    if path.endswith("definition.ranksIn"):
        return sorted(v, key=RANKS.index)
    return v


def form(prefix: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The digest form of the object at ``prefix`` ("" for the profile), by the appendix."""
    out: dict[str, Any] = {}
    for path in children(prefix):
        kind, default, written = PROFILE_TABLE[path]
        v = obj.get(path.rsplit(".", 1)[-1])
        if isinstance(v, str) and kind.startswith("enum "):
            v = None if v == "" else enum_value(kind, v)
        if path == "ranking.suitOrder" and v == []:
            v = None
        if v is None:
            if default == "—":
                continue
            v = default_of(path)
        else:
            v = ordered(path, value(path, v))
        if written == "unless default" and v == default_of(path):
            continue
        out[path.rsplit(".", 1)[-1]] = v
    return out


def resolve(base: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    return form("", merge(base, overrides) if overrides is not None else base)


# --------------------------------------------------------------------------- the v1 id

QUOTE_V1 = (
    'SHA-256 of the UTF-8 text `"cpsettle-settlement-id/v1\\n" + requestDigest + '
    '"\\n" + profile.digest + "\\n" + engineVersion`: the prefix says `v1`, and '
    "there is no fourth line"
)


def v1_id(s: dict[str, Any]) -> tuple[str, str]:
    text = (
        "cpsettle-settlement-id/v1\n"
        + s["requestDigest"]
        + "\n"
        + s["profile"]["digest"]
        + "\n"
        + s["engineVersion"]
    )
    return text, sha256_hex(text)


# --------------------------------------------------------------------------- the tests

QUOTES = [
    QUOTE_VARINT,
    QUOTE_FIELDS,
    *QUOTE_PLAIN,
    *QUOTE_REQUEST_KINDS,
    QUOTE_CANONICAL,
    QUOTE_INT64,
    QUOTE_CLI,
    QUOTE_GET_PROFILE,
    QUOTE_MERGE,
    *QUOTE_RESOLVE,
    QUOTE_ORDER,
    QUOTE_V1,
]


def test_each_rule_here_is_the_one_the_doc_states() -> None:
    doc = words(DOC)
    missing = [q for q in QUOTES if words(q) not in doc]
    assert missing == [], "docs/AUDIT.md changed a rule: change its function here too"


def test_the_vectors_are_there() -> None:
    assert len(PROFILE_VECTORS) >= 3 and len(REQUEST_VECTORS) >= 3
    assert (VECTORS / "id-v1-0.1.0.json").exists()
    assert len(PROFILE_TABLE) > 80 and len(REQUEST_TABLE) > 20 and len(ENUMS) > 14


@pytest.mark.parametrize("name", REQUEST_VECTORS)
def test_a_request_vector_from_the_doc_alone(name: str) -> None:
    v = vector(name)
    data = encode("SettleRequest", v["holds"]["request"])
    assert data.hex() == v["expected"]["bytesHex"]
    assert sha256_hex(data) == v["expected"]["requestDigest"]


def test_the_map_order_is_the_doc_s_not_plain_sorting() -> None:
    """The overrides' keys include prefixes of their neighbours: sorted plainly (as the C++
    and pure-Python runtimes do), the bytes and the digest differ."""
    v = vector("request-overrides")
    request = v["holds"]["request"]
    plain = encode("SettleRequest", request, order=lambda a, b: (a > b) - (a < b))
    assert plain.hex() != v["expected"]["bytesHex"]
    assert sorted(plain) == sorted(bytes.fromhex(v["expected"]["bytesHex"]))  # same bytes
    assert encode("SettleRequest", request).hex() == v["expected"]["bytesHex"]


@pytest.mark.parametrize("name", PROFILE_VECTORS)
def test_a_profile_vector_from_the_doc_alone(name: str) -> None:
    """From each thing the vector holds to the same digest form and digest."""
    v = vector(name)
    holds, want = v["holds"], v["expected"]
    base = [from_cli(holds["cli"]), from_get_profile(holds["getProfile"])]
    assert canonical(base[0]) == canonical(base[1])
    if "file" in holds:  # the operator's file, resolved as an inline profile
        base.append(resolve(holds["file"], None))
        assert canonical(base[2]) == canonical(base[0])
    assert sha256_hex(canonical(base[0])) == holds["getProfile"]["summary"]["digest"]
    if "request" in holds:
        assert holds["request"]["preset"] == holds["getProfile"]["summary"]["name"]
        got = [resolve(b, holds["request"]["profileOverrides"]) for b in base]
    else:
        got = base
    for g in got:
        assert canonical(g) == want["digestForm"]
    assert sha256_hex(want["digestForm"]) == want["profileDigest"]


def test_the_v1_id_of_a_settlement_0_1_0_issued() -> None:
    v = vector("id-v1-0.1.0")
    s = v["holds"]["settlement"]
    text, sid = v1_id(s)
    assert (text, sid) == (v["expected"]["idText"], v["expected"]["settlementId"])
    assert sid == s["settlementId"]
    assert s["players"][0]["status"] == "REGULAR"  # 0.1.0's strings
    assert sha256_hex(bytes.fromhex(v["expected"]["contentHex"])) == s["settlementDigest"]


# -- the doc's tables against the .proto and the schema


def test_the_request_table_is_the_proto() -> None:
    from google.protobuf.descriptor import FieldDescriptor as F

    kinds = {
        F.TYPE_STRING: "string",
        F.TYPE_INT32: "int32",
        F.TYPE_INT64: "int64",
        F.TYPE_BOOL: "bool",
        F.TYPE_MESSAGE: "message",
        F.TYPE_ENUM: "enum",
        F.TYPE_DOUBLE: "double",
    }
    want: dict[str, dict[int, tuple[str, str, str]]] = {}
    enums: dict[str, dict[str, int]] = {}
    todo = [pb.SettleRequest.DESCRIPTOR]
    while todo:
        d = todo.pop()
        if d.name in want:
            continue
        want[d.name] = {}
        for f in d.fields:
            mt = f.message_type
            if mt is not None and mt.GetOptions().map_entry:
                want[d.name][f.number] = (f.json_name, "map", "string → Value")
                values = mt.fields_by_name["value"].message_type
                assert values is not None  # a Struct's map holds Value messages
                todo.append(values)
                continue
            kind = kinds[f.type]
            if f.is_repeated:
                kind = f"repeated {kind}"
            elif f.containing_oneof is not None and not f.containing_oneof.name.startswith("_"):
                kind = f"oneof {kind}"
            elif f.has_presence and mt is None:
                kind = f"optional {kind}"
            typ = mt.name if mt else (f.enum_type.name if f.enum_type else "")
            want[d.name][f.number] = (f.json_name, kind, typ)
            if mt is not None:
                todo.append(mt)
            if f.enum_type is not None:
                enums[f.enum_type.name] = {v.name: v.number for v in f.enum_type.values}
    assert want == REQUEST_TABLE
    assert {k: ENUMS[k] for k in enums} == enums


def test_the_profile_table_is_the_schema() -> None:
    from cpsettle_service.domain.profile import RuleProfile
    from cpsettle_service.domain.reading.schema import lines, specs, write_json

    def kind(s: Any) -> str:
        base = {
            "int32": "integer",
            "int64": "integer",
            "bool": "boolean",
            "string": "string",
            "rank": "rank",
            "message": "object",
        }.get(s.kind, "")
        if s.kind == "enum":
            base = s.enum.__name__
        if s.repeated:
            return {
                "object": "list of objects",
                "integer": "list of integers",
                "rank": "list of ranks",
            }.get(base, f"list of {base}")
        return f"enum {base}" if s.kind == "enum" else base

    want = {}
    for line in lines(RuleProfile):
        s = line.spec
        if s.required:
            default, written = "—", "required"
        elif s.default is None:
            default, written = "—", "if set"
        else:
            default = canonical(write_json(s, s.default))
            if (
                s.kind == "message"
                and not s.repeated
                and all(
                    x.default is not None and getattr(s.default, x.name) == x.default
                    for x in specs(s.default.__class__)
                )
            ):
                default = "its fields'"
            written = "unless default" if s.omit_default else "always"
        want[line.path] = (kind(s), default, written)
    # The reader's own, which the doc states: ``stay`` given holds only the rows given (its
    # rows' schema defaults are the defaults of ``stay`` as a whole).
    stay = {k: json.loads(want[f"fantasyland.stay.{k}"][1]) for k in ("front", "middle", "back")}
    want["fantasyland.stay"] = ("object", canonical(stay), "always")
    for k in stay:
        want[f"fantasyland.stay.{k}"] = ("object", "—", "if set")
    got = {
        p: (k, d if d in ("—", "its fields'") else canonical(json.loads(d)), w)
        for p, (k, d, w) in PROFILE_TABLE.items()
    }
    assert got == want


# -- the vectors against the service as it is


@pytest.fixture(scope="module")
def house_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    handle = start_server(tmp_path_factory.mktemp("digests") / "d.sock", profile_dir=str(HOUSE))
    yield handle
    stop_server(handle)


QUOTE_PRESET_FILE = (
    "A preset's data file "
    "(`service/cpsettle_service/domain/profile/presets/NAME.json`) is the "
    "digest form already."
)


def test_a_preset_file_is_its_digest_form(house_server: ServerHandle) -> None:
    assert words(QUOTE_PRESET_FILE) in words(DOC)
    files = sorted(
        (ROOT / "service" / "cpsettle_service" / "domain" / "profile" / "presets").glob("*.json")
    )
    assert len(files) >= 9
    with SettlementClient(house_server.address, timeout=10) as c:
        for f in files:
            text = canonical(json.loads(f.read_text("utf-8")))
            assert sha256_hex(text) == c.get_profile(f.stem).summary.digest, f.stem


from tests.vectors.digests.generate import where_held  # noqa: E402


def test_the_vectors_are_what_the_service_and_the_cli_give(
    house_server: ServerHandle, capsys: pytest.CaptureFixture[str], logs: Any
) -> None:
    with SettlementClient(house_server.address, timeout=10) as c:
        for name in PROFILE_VECTORS:
            v = vector(name)
            profile = v["holds"]["getProfile"]["summary"]["name"]
            answer = c.get_profile(profile)
            assert where_held(json_format.MessageToDict(answer)) == v["holds"]["getProfile"], name
            capsys.readouterr()
            assert (
                main(["profiles", profile, "--output", "json", "--server", house_server.address])
                == 0
            )
            assert capsys.readouterr().out == v["holds"]["cli"], name
            if "request" in v["holds"]:
                s = c.settle(request_from_json(v["holds"]["request"])).settlement
                assert s.profile.digest == v["expected"]["profileDigest"], name
        for name in REQUEST_VECTORS:
            v = vector(name)
            s = c.settle(request_from_json(v["holds"]["request"])).settlement
            assert s.request_digest == v["expected"]["requestDigest"], name
            events = [
                e for e in logs.events("settlement.issued") if e["settlement_id"] == s.settlement_id
            ]  # (settled twice: one id)
            assert events and {base64.b64decode(e["request"]).hex() for e in events} == {
                v["expected"]["bytesHex"]
            }
            if "profile" in v["holds"]["request"]:  # an inline profile: the doc resolves it too
                want = resolve(
                    v["holds"]["request"]["profile"], v["holds"]["request"].get("profileOverrides")
                )
                assert s.profile.digest == sha256_hex(canonical(want)), name


def test_the_committed_vectors_are_what_the_generator_writes() -> None:
    from tests.vectors.digests.generate import build

    for name, v in build().items():
        assert vector(name) == v, f"{name}: run python tests/vectors/digests/generate.py"


# -- the doc's resolution against the service's, on random overrides

CHOICES: dict[str, list[Any]] = {
    "scoring.rowUnit": [1, 2.0, "3"],
    "scoring.majorityBonusOnScoop": [True, False, None],
    "scoring.homeRun": [{}, {"multiplier": 2}, None],
    "royalties.mode": ["ROYALTY_MODE_UNSPECIFIED", "ROYALTY_MODE_ALWAYS", ""],
    "royalties.table": [
        [],
        [
            {"row": "ROW_BACK", "handClass": "HAND_CLASS_FLUSH", "units": 2.0},
            {"row": "ROW_FRONT", "handClass": "HAND_CLASS_PAIR", "rank": "10", "units": "1"},
        ],
    ],
    "naturals.quadsAsTwoPairs": [True, False, None],
    "naturals.equalRank": ["PUSH", "COMPARE_CARDS", "NATURAL_TIE_PUSH", "", None],
    "naturals.table": [
        [
            {"natural": "SIX_PAIRS", "rank": 1, "units": 3},
            {
                "natural": "HOUSE_ONE",
                "rank": 2,
                "units": 5,
                "definition": {
                    "rankGroups": [2, 3],
                    "ranksIn": ["k", "2", "10", "a", "j", "q"],
                    "colourSplit": [3, 10],
                    "rows": {"front": "", "back": "ROW_CLASS_FLUSH"},
                },
            },
        ]
    ],
    "money.currency": ["XXX", "EUR", None],
    "money.unitValue": ["7", 7.0],
    "rake.commissionCap": ["12", 12],
    "ranking.suitOrder": [[], ["SUIT_CLUB", "SUIT_DIAMOND", "SUIT_HEART", "SUIT_SPADE"]],
    "fantasyland.entry": [
        {"handClass": "HAND_CLASS_PAIR"},
        {"handClass": "HAND_CLASS_PAIR", "rank": "j"},
        None,
    ],
    "fantasyland.progressive": [
        [],
        [
            {"handClass": "HAND_CLASS_PAIR", "rank": "k", "cards": 15},
            {"handClass": "HAND_CLASS_THREE_OF_A_KIND"},
            {"handClass": "HAND_CLASS_PAIR", "cards": 16},
        ],
    ],
    "fantasyland.stay": [{}, {"middle": {"handClass": "HAND_CLASS_FLUSH", "rank": "q"}}, None],
    "deck": [{"jokers": 0}, {"jokers": 1}, {"jokers": 2, "jokerDuplicates": False}, None],
}


def test_the_doc_resolves_random_overrides_as_the_service_does() -> None:
    from cpsettle_service.domain.errors import InvalidInput
    from cpsettle_service.domain.profile.parse import apply_overrides, profile_to_dict
    from cpsettle_service.profile_files import builtin_registry, with_directory

    registry = with_directory(builtin_registry(), str(HOUSE))
    rng = random.Random(26)
    compared = 0
    for _ in range(300):
        name = rng.choice(
            ["western", "ofc", "shisanshui", "house-jokers-16", "house-western-stakes"]
        )
        overrides: dict[str, Any] = {}
        for path in rng.sample(sorted(CHOICES), rng.randint(1, 6)):
            part, key = path.split(".", 1) if "." in path else (path, "")
            choice = copy.deepcopy(rng.choice(CHOICES[path]))
            if key:
                overrides.setdefault(part, {})[key] = choice
            else:
                overrides[part] = choice
        profile = registry.get(name)
        assert profile is not None
        try:
            service = canonical(profile_to_dict(apply_overrides(profile, overrides)))
        except InvalidInput:
            continue  # (a combination the service refuses settles nothing)
        doc = canonical(resolve(json.loads(canonical(profile_to_dict(profile))), overrides))
        assert doc == service, (name, overrides)
        compared += 1
    assert compared > 150
