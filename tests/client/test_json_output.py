"""Every JSON the CLI writes, on real answers from a real server: every field printed (zeros
and false too: ``allMatch: false``, ``rake: "0"``), and money in one style, protobuf JSON's: a
string of integer minor units (README, "Money in JSON")."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from tests.conftest import EXAMPLES

INT64 = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}
MINOR_UNITS = re.compile(r"-?[0-9]+")
# The audit report is not a protobuf message: its money keys, and every other key that may hold
# a number (counts, line numbers, timing). A number under any other key fails the walk below.
REPORT_MONEY = {"overpaid", "underpaid", "unitValue", "expected", "paid", "difference"}
REPORT_NUMBERS = {
    "hands",
    "handsWithDifferences",
    "invalidHands",
    "handsRead",
    "handsChecked",
    "handsWithoutRecordedPayouts",
    "line",
    "firstLine",
    "stoppedAfterLine",
    "workers",
    "batch",
    "elapsedSeconds",
    "handsPerSecond",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, json.loads(out)


def walk(
    data: Any, descriptor: Descriptor, path: str = "", every_field: bool = True
) -> Iterator[tuple[str, str]]:
    """(path, problem) for every field of ``descriptor`` without presence that ``data`` lacks
    (``every_field``), and every 64-bit integer that is not a string of digits."""
    assert isinstance(data, dict), path
    for field in descriptor.fields:
        where = f"{path}.{field.json_name}"
        if field.json_name not in data:
            if every_field and not field.has_presence:
                yield where, "missing"
            continue
        value = data[field.json_name]
        items = value if isinstance(value, list) else [value]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            continue  # none in the contract's answers today
        if field.type in INT64:
            for item in items:
                if not (isinstance(item, str) and MINOR_UNITS.fullmatch(item)):
                    yield where, f"int64 written as {item!r}"
        elif field.message_type is not None and field.message_type.full_name.startswith(
            "cpsettle."
        ):
            for i, item in enumerate(items):
                yield from walk(item, field.message_type, f"{where}[{i}]", every_field)


def walk_report(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}"
            if key in REPORT_MONEY:
                if not (isinstance(value, str) and MINOR_UNITS.fullmatch(value)):
                    yield where, f"money written as {value!r}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                if key not in REPORT_NUMBERS:
                    yield where, f"a number under a key not known to hold one: {value!r}"
            else:
                yield from walk_report(value, where)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from walk_report(item, f"{path}[{i}]")


def table(name: str) -> str:
    return str(EXAMPLES / "tables" / f"{name}.json")


def test_every_protobuf_json_of_the_cli_has_every_field_and_money_as_strings(
    capsys: pytest.CaptureFixture[str], server: Any
) -> None:
    at = ["--server", server.address, "--output", "json"]
    outputs: list[tuple[str, Any, Descriptor]] = []
    profiles: list[tuple[str, Any]] = []
    for name in ("western", "ofc", "one-six"):
        code, answer = run(capsys, "settle", table(name), *at)
        assert code == 0
        outputs.append((f"settle {name}", answer, pb.SettleResponse.DESCRIPTOR))
    nets = {p["playerId"]: int(p["netMoney"]) for p in answer["settlement"]["players"]}
    first = next(iter(nets))
    wrong = [f"{k}={v + (5 if k == first else 0)}" for k, v in nets.items()]
    code, checked = run(capsys, "validate", table("one-six"), "--proposed", *wrong, *at)
    assert code == 1
    outputs.append(("validate", checked, pb.ValidatePayoutsResponse.DESCRIPTOR))
    code, evaluated = run(
        capsys,
        "evaluate",
        "--preset",
        "ofc",
        "--front",
        "Qs Qh 2c",
        "--middle",
        "8s 8h 8d 7c 7d",
        "--back",
        "9s 9h 9d 6s 6h",
        *at,
    )
    outputs.append(("evaluate", evaluated, pb.EvaluateArrangementResponse.DESCRIPTOR))
    _, listing = run(capsys, "profiles", *at)
    outputs.append(("profiles", listing, pb.ListProfilesResponse.DESCRIPTOR))
    for name in ("western", "eastern"):
        _, profile = run(capsys, "profiles", name, *at)
        profiles.append((f"profiles {name}", profile))
    _, keys = run(capsys, "keys", "show", "--server", server.address)
    outputs.append(("keys show", keys, pb.GetVerificationKeysResponse.DESCRIPTOR))

    problems = [
        (what, where, problem)
        for what, data, descriptor in outputs
        for where, problem in walk(data, descriptor)
    ]
    # a profile is written in the profile files' form, where a rank that does not apply is
    # left out (README, "Money in JSON"): its money is checked, not every field
    problems += [
        (what, where, problem)
        for what, data in profiles
        for where, problem in walk(data, profile_pb2.RuleProfile.DESCRIPTOR, every_field=False)
    ]
    assert problems == []
    assert [p["money"]["unitValue"] for _, p in profiles] == ["100", "100"]
    # the zeros and false that protobuf's printer dropped before
    assert checked["allMatch"] is False
    assert {c["difference"] for c in checked["players"]} == {"0", "5"}
    assert {c["matches"] for c in checked["players"]} == {True, False}
    rakes = {
        p["rake"]
        for _, a, d in outputs
        if d is pb.SettleResponse.DESCRIPTOR
        for p in a["settlement"]["players"]
    }
    assert "0" in rakes


def test_the_audit_report_writes_money_as_the_settlement_does(
    capsys: pytest.CaptureFixture[str], server: Any, tmp_path: Path
) -> None:
    lines = []
    for i, name in enumerate(("western", "one-six", "eastern")):
        request = json.loads(Path(table(name)).read_text())
        code, answer = run(
            capsys, "settle", table(name), "--server", server.address, "--output", "json"
        )
        nets = {p["playerId"]: int(p["netMoney"]) for p in answer["settlement"]["players"]}
        if i == 1:  # a dealer who paid the first player 50 too much
            nets[next(iter(nets))] += 50
        request["recordedPayouts"] = nets
        lines.append(json.dumps(request))
    lines.append('{"handId": "cut short", "players": [')
    history = tmp_path / "day.jsonl"
    history.write_text("\n".join(lines) + "\n")
    report_path = tmp_path / "report.json"
    code = main(
        [
            "audit",
            str(history),
            "--server",
            server.address,
            "--report",
            str(report_path),
            "--progress",
            "none",
        ]
    )
    capsys.readouterr()
    assert code == 1
    report = json.loads(report_path.read_text())
    assert list(walk_report(report)) == []
    assert report["summary"]["overpaid"] == "50" and report["summary"]["underpaid"] == "0"
    [diff] = report["differences"]
    assert {p["difference"] for p in diff["players"]} == {"50", "0"}
    assert isinstance(diff["unitValue"], str) and report["summary"]["invalidHands"] == 1
