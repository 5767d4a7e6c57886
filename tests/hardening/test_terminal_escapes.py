"""Ids that try to act on the operator's terminal (clear the screen, rewrite the line, print a
fake verdict, turn the line around) reach it escaped, through the real ``cpsettle`` command,
locally and against a real server; JSON outputs stay JSON and still carry the exact ids."""

from __future__ import annotations

import doctest
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client import escape, render, strict_json
from tests.conftest import EXAMPLES, ServerHandle
from tests.hardening.cli_process import cli, raw_controls

# Clear the screen and home the cursor, carriage return, BEL, a C1 CSI (8-bit ESC [) and NEL,
# a right-to-left override, a line separator, a zero-width joiner and a tag character.
ATTACK = "\x1b[2J\x1b[H\r\x07\x9b31m\x85\u202eall payouts verified\u2028\u200d\U000e0041\\x1b"


def hostile_request() -> dict[str, Any]:
    """The engine refuses player ids that are not printable; the context ids go through."""
    request: dict[str, Any] = json.loads((EXAMPLES / "tables" / "one-six.json").read_text())
    for key in ("handId", "tableId", "roundId", "dealerId"):
        request[key] = f"{key}{ATTACK}"
    return request


def where(server: ServerHandle, mode: str) -> list[str]:
    return ["--local"] if mode == "local" else ["--server", server.address]


@pytest.fixture()
def request_file(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(hostile_request()))
    return path


@pytest.mark.parametrize("mode", ["local", "server"])
def test_settle_table_output_shows_hostile_ids_escaped(
    request_file: Path, server: ServerHandle, mode: str
) -> None:
    done = cli("settle", str(request_file), *where(server, mode))
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout + done.stderr) == []
    out = done.stdout.decode()
    shown = escape.shown(ATTACK)
    assert f"hand handId{shown}" in out and f"dealer dealerId{shown}" in out
    assert "\\x1b[2J\\x1b[H\\r\\x07\\x9b31m\\x85\\u202eall payouts verified\\u2028" in out
    assert "\\\\x1b" in out  # a backslash in an id is doubled: the escapes read back exactly


@pytest.mark.parametrize("mode", ["local", "server"])
def test_json_output_carries_the_exact_ids_and_nothing_raw(
    request_file: Path, server: ServerHandle, mode: str
) -> None:
    done = cli("settle", str(request_file), *where(server, mode), "--output", "json")
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout) == []
    settlement = strict_json.loads(done.stdout)["settlement"]
    assert settlement["context"]["handId"] == f"handId{ATTACK}"
    assert settlement["context"]["roundId"] == f"roundId{ATTACK}"


@pytest.mark.parametrize("mode", ["local", "server"])
def test_validate_and_errors_show_hostile_ids_escaped(
    request_file: Path, server: ServerHandle, tmp_path: Path, mode: str
) -> None:
    players = [p["playerId"] for p in hostile_request()["players"]]
    done = cli(
        "validate",
        str(request_file),
        *where(server, mode),
        "--proposed",
        *(f"{p}=5" for p in players),
    )
    assert done.returncode == 1
    assert raw_controls(done.stdout + done.stderr) == []
    assert "MISMATCH" in done.stdout.decode()
    # A proposed payout for a player not at the table: the error quotes the name.
    done = cli(
        "validate",
        str(request_file),
        *where(server, mode),
        "--proposed",
        *(f"{p}=0" for p in players),
        f"X{ATTACK}=0",
    )
    assert done.returncode == 2
    assert raw_controls(done.stdout + done.stderr) == []
    bad = hostile_request()
    bad["players"][0]["arrangement"]["front"][0] = f"Z{ATTACK}"  # not a card: an error names it
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    done = cli("settle", str(path), *where(server, mode))
    assert done.returncode == 2
    assert raw_controls(done.stdout + done.stderr) == []
    assert "is not a card" in done.stderr.decode()


def hostile_history(tmp_path: Path) -> Path:
    lines = []
    request = hostile_request()
    # Recorded payouts of 0 for everyone: a payout difference listed with every id.
    lines.append(
        json.dumps({**request, "recordedPayouts": {p["playerId"]: 0 for p in request["players"]}})
    )
    lines.append(json.dumps({**request, f"field{ATTACK}": 1}))  # unknown field: named in the reason
    lines.append(json.dumps(request)[:200])  # cut short: the ids are salvaged from the text
    path = tmp_path / f"day{ATTACK[:4]}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("mode", ["local", "server"])
def test_audit_summary_shows_hostile_ids_escaped(
    tmp_path: Path, server: ServerHandle, mode: str
) -> None:
    history = hostile_history(tmp_path)
    report = tmp_path / "report.json"
    done = cli(
        "audit", str(history), *where(server, mode), "--progress", "lines", "--report", str(report)
    )
    assert done.returncode == 1, done.stderr
    assert raw_controls(done.stdout + done.stderr) == []
    out = done.stdout.decode()
    shown = escape.shown(ATTACK)
    assert "Payout differences (1)" in out and "Invalid hands (2)" in out
    assert f"hand handId{shown}" in out
    assert f"table tableId{shown}" in out  # salvaged from the cut line too
    assert 'has no field named "field\\x1b[2J\\x1b[H' in out  # (whitespace there is folded)
    assert f"tableId{shown}" in out.split("Per table")[1]
    # The report is JSON with nothing raw, and the ids exactly as written.
    text = report.read_bytes()
    assert raw_controls(text) == []
    data = strict_json.loads(text)
    assert data["differences"][0]["handId"] == f"handId{ATTACK}"


def test_escape_helpers() -> None:
    assert escape.shown("PL1 张伟 ♠") == "PL1 张伟 ♠"
    assert escape.shown("a\\b\nc\td\x1b\x9b\u202e\U000e0041") == (
        "a\\\\b\\nc\\td\\x1b\\x9b\\u202e\\U000e0041"
    )
    assert escape.shown("\ud800") == "\\ud800"  # a lone surrogate would crash the print
    value = {"k\x1b": ["\u202e", "张", "\U000e0041", "\x9b", "\u2028"]}
    text = escape.json_text(value)
    assert raw_controls(text.encode("utf-8", "surrogatepass")) == []
    assert "张" in text and json.loads(text) == value
    assert escape.shown_data(value) == {
        "k\\x1b": ["\\u202e", "张", "\\U000e0041", "\\x9b", "\\u2028"]
    }
    for module in (escape, strict_json):
        assert doctest.testmod(module).failed == 0


def fill_strings(message: Message, text: str) -> None:
    """Every string field of ``message``, at every depth, set to ``text`` (one repeated item)."""
    for field in message.DESCRIPTOR.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            if field.is_repeated:
                getattr(message, field.name).append(text)
            else:
                setattr(message, field.name, text)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            assert field.message_type is not None  # a message field has its type
            if field.message_type.full_name == message.DESCRIPTOR.full_name:
                continue
            sub = (
                getattr(message, field.name).add()
                if field.is_repeated
                else getattr(message, field.name)
            )
            if field.message_type.full_name.startswith("cpsettle."):
                fill_strings(sub, text)


_M = TypeVar("_M", bound=Message)


def _drawn(message: _M, draw: Callable[[_M], str]) -> tuple[Message, Callable[[], str]]:
    """An answer and its renderer, bound to it."""
    return message, lambda: draw(message)


@pytest.mark.parametrize("kind", ["settlement", "payouts", "evaluation", "profiles"])
def test_every_string_of_an_answer_is_escaped_by_the_renderers(kind: str) -> None:
    """Whatever a server (or a future field) puts in an answer, the table output escapes it."""
    message, draw = {
        "settlement": _drawn(pb.Settlement(), render.settlement),
        "payouts": _drawn(pb.ValidatePayoutsResponse(), render.payouts),
        "evaluation": _drawn(pb.EvaluateArrangementResponse(), render.evaluation),
        "profiles": _drawn(pb.ListProfilesResponse(), render.profiles),
    }[kind]
    fill_strings(message, ATTACK)
    text = draw()
    assert raw_controls(text.encode()) == []
    assert escape.shown(ATTACK) in text


def test_verify_shows_a_hostile_stored_settlement_escaped(
    request_file: Path, tmp_path: Path
) -> None:
    done = cli("settle", str(request_file), "--local", "--output", "json")
    assert done.returncode == 0, done.stderr
    stored = strict_json.loads(done.stdout)
    stored["settlement"]["settlementId"] = f"forged{ATTACK}"
    stored["settlement"]["signature"] = {"algorithm": "ED25519", "keyId": f"k{ATTACK}"}
    path = tmp_path / "stored.json"
    path.write_text(json.dumps(stored))
    done = cli("verify", str(path))
    assert done.returncode == 1 and b"FAILED" in done.stdout
    assert raw_controls(done.stdout + done.stderr) == []
    stored["settlement"]["players"] = "not a list" + ATTACK
    path.write_text(json.dumps(stored))
    done = cli("verify", str(path))
    assert done.returncode == 1 and b" - file: " in done.stdout
    assert raw_controls(done.stdout + done.stderr) == []
