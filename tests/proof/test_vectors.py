"""The proof test vectors (tests/vectors): each verifies as it says, they set every field of
``Settlement`` between them, and docs/AUDIT.md's field table is the schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.proof import ProofError, load_settlement
from cpsettle_service.proof.digests import content_bytes, settlement_id, sha256_hex
from cpsettle_service.proof.keys import KeySet
from cpsettle_service.proof.verify import verify
from tests.conftest import ROOT

VECTORS = ROOT / "tests" / "vectors"
TIMESTAMP = "google.protobuf.Timestamp"
NAMES = sorted(p.stem for p in VECTORS.glob("*-*.json"))


def check(folder: Path, name: str) -> tuple[list[str], dict[str, Any]]:
    """The failure codes our verifier finds for a vector, and what the vector expects."""
    v = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    keys = KeySet.from_file(folder / "keys.json")
    try:
        s = load_settlement(json.dumps(v["settlement"], ensure_ascii=False).encode())
    except ProofError:
        return ["file"], v["expected"]
    e = v["expected"]
    content = content_bytes(s)
    assert content.hex() == e["contentHex"]
    assert sha256_hex(content) == e["settlementDigest"]
    assert (
        settlement_id(s.request_digest, s.profile.digest, s.engine_version, s.engine_digest)
        == e["settlementId"]
    )
    return sorted(f.what for f in verify(s, keys)), e


def test_there_are_valid_and_tampered_vectors() -> None:
    assert sum(n.startswith("valid-") for n in NAMES) >= 10
    assert sum(not n.startswith("valid-") for n in NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_each_committed_vector_verifies_as_it_says(name: str) -> None:
    failures, expected = check(VECTORS, name)
    assert failures == sorted(expected["failures"])
    assert expected["verdict"] == ("invalid" if failures else "valid")
    assert name.startswith("valid-") == (not failures)


def test_the_generator_still_writes_vectors_that_verify(tmp_path: Path) -> None:
    from tests.vectors import generate

    written = generate.write(tmp_path)
    names = sorted(p.stem for p in written if p.stem != "keys")
    assert names == NAMES
    for name in names:
        failures, expected = check(tmp_path, name)
        assert failures == sorted(expected["failures"]), name


def _fields(desc: Any, seen: set[str]) -> set[tuple[str, str]]:
    out = set()
    for f in desc.fields:
        out.add((desc.name, f.name))
        if f.message_type is not None and f.message_type.full_name == TIMESTAMP:
            continue  # one value (a time), not a message of the contract
        if f.message_type is not None and f.message_type.name not in seen:
            seen.add(f.message_type.name)
            out |= _fields(f.message_type, seen)
    return out


def test_the_valid_vectors_set_every_field_of_a_settlement() -> None:
    """So the encoding rule is tested on every field kind the digest covers (docs/AUDIT.md)."""
    want = _fields(pb.Settlement.DESCRIPTOR, {"Settlement"})
    got: set[tuple[str, str]] = set()
    zero_stack = False

    def walk(m: Any) -> None:
        nonlocal zero_stack
        for f, value in m.ListFields():
            got.add((m.DESCRIPTOR.name, f.name))
            zero_stack |= f.name == "stack" and value == 0
            if f.message_type is not None and f.message_type.full_name != TIMESTAMP:
                for x in value if f.is_repeated else [value]:
                    walk(x)

    for name in NAMES:
        if name.startswith("valid-"):
            v = json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))
            walk(load_settlement(json.dumps(v["settlement"]).encode()))
    assert sorted(want - got) == []
    assert zero_stack  # an `optional` field present with its default value


def test_the_field_table_in_audit_md_is_the_schema() -> None:
    """docs/AUDIT.md's appendix lists every field the digest covers with its number and kind;
    an implementation from the text alone relies on it, so it must be the .proto's."""
    text = (ROOT / "docs" / "AUDIT.md").read_text(encoding="utf-8")
    text = text.split("## Appendix: the fields the content bytes cover", 1)[1].split("\n## ")[0]
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| `(\w+)` \| (\w+(?: \w+)?) \|", text, re.MULTILINE)
    table = {(m, json_name): (int(n), kind) for m, n, json_name, kind in rows}
    kinds = {9: "string", 5: "int32", 3: "int64", 8: "bool", 11: "message", 14: "enum"}
    want = {}
    seen = {"Settlement"}
    todo = [pb.Settlement.DESCRIPTOR]
    while todo:
        desc = todo.pop()
        for f in desc.fields:
            if f.message_type is not None and f.message_type.full_name == TIMESTAMP:
                want[(desc.name, f.json_name)] = (f.number, "timestamp")  # a string in JSON
                continue
            kind = kinds[f.type]
            if f.is_repeated:
                kind = f"repeated {kind}"
            elif f.has_presence and f.message_type is None:
                kind = f"optional {kind}"
            want[(desc.name, f.json_name)] = (f.number, kind)
            if f.message_type is not None and f.message_type.name not in seen:
                seen.add(f.message_type.name)
                todo.append(f.message_type)
    assert table == want
    values = re.findall(r"^\| (\w+) \| (\d+) \| `(\w+)` \|$", text, re.MULTILINE)
    enums = {
        f.enum_type.name: f.enum_type
        for d in _messages(pb.Settlement.DESCRIPTOR)
        for f in d.fields
        if f.enum_type is not None
    }
    assert sorted(values) == sorted(
        (name, str(v.number), v.name) for name, e in enums.items() for v in e.values
    )


def _messages(desc: Any) -> list[Any]:
    """``desc`` and every message type under it."""
    out, todo = [desc], [desc]
    while todo:
        for f in todo.pop().fields:
            if f.message_type is not None and f.message_type not in out:
                out.append(f.message_type)
                todo.append(f.message_type)
    return out
