"""``cpsettle audit`` over a generated day: exactly the planted mistakes, locally and remotely."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.rpc import code_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.audit import command, reading, running
from cpsettle_client.audit.outcome import Outcome, Tally
from cpsettle_client.audit.progress import Progress
from cpsettle_client.audit.report import Report
from cpsettle_client.cli import build_parser, main
from tests.audit.conftest import HANDS, Day, load_generator, read_report
from tests.conftest import ServerHandle


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def check_against_key(report: dict[str, Any], day: Day, upto: int = HANDS, start: int = 1) -> None:
    in_range = range(start, upto + 1)
    mistakes = {m["line"]: m for m in day.key["mistakes"] if m["line"] in in_range}
    invalid = {m["line"]: m for m in day.key["invalid"] if m["line"] in in_range}
    found = {d["line"]: d for d in report["differences"]}
    assert set(found) == set(mistakes)
    assert {e["line"] for e in report["invalid"]} == set(invalid)
    over = under = 0
    for line, d in found.items():
        m = mistakes[line]
        assert (d["handId"], d["tableId"], d["dealerId"]) == (
            m["handId"],
            m["tableId"],
            m["dealerId"],
        )
        # money is written as protobuf JSON writes int64: strings (README, "Money in JSON")
        assert {p["playerId"]: int(p["expected"]) for p in d["players"]} == m["expected"]
        assert {p["playerId"]: int(p["paid"]) for p in d["players"]} == m["paid"]
        for p in d["players"]:
            assert int(p["difference"]) == int(p["paid"]) - int(p["expected"])
            assert bool(p.get("explanation")) == bool(int(p["difference"]))
        over += int(d["overpaid"])
        under += int(d["underpaid"])
    s = report["summary"]
    assert s["handsWithDifferences"] == len(mistakes)
    assert s["invalidHands"] == len(invalid)
    assert s["handsRead"] == len(in_range)
    assert s["handsChecked"] == len(in_range) - len(invalid)
    assert (int(s["overpaid"]), int(s["underpaid"])) == (over, under)
    for book in ("byTable", "byDealer"):
        rows = report[book].values()
        assert sum(r["hands"] for r in rows) == s["handsChecked"]
        assert sum(r["handsWithDifferences"] for r in rows) == len(mistakes)
        assert sum(r["invalidHands"] for r in rows) == len(invalid)
        assert sum(int(r["overpaid"]) for r in rows) == over
        assert sum(int(r["underpaid"]) for r in rows) == under


def findings(report: dict[str, Any]) -> tuple[Any, ...]:
    return (
        report["summary"],
        report["differences"],
        report["invalid"],
        report["byTable"],
        report["byDealer"],
        report["stoppedAfterLine"],
        report["complete"],
    )


@pytest.fixture(scope="module")
def local_report(day: Day, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("reports") / "local.json"
    code = main(["audit", str(day.path), "--local", "--report", str(out), "--progress", "none"])
    assert code == 1
    return read_report(out)


def test_local_audit_finds_exactly_the_planted_mistakes(
    local_report: dict[str, Any], day: Day
) -> None:
    assert day.key["totals"]["mistakes"] == 14 and len(day.key["invalid"]) == 8
    assert {m["kind"] for m in day.key["mistakes"]} == set(load_generator().MISTAKE_KINDS)
    assert {m["kind"] for m in day.key["invalid"]} == set(load_generator().INVALID_KINDS)
    check_against_key(local_report, day)
    assert local_report["summary"]["overpaid"] == str(day.key["totals"]["overpaid"])
    assert local_report["summary"]["underpaid"] == str(day.key["totals"]["underpaid"])
    assert local_report["complete"] is True
    assert local_report["stoppedAfterLine"] == HANDS


def test_the_report_shape(local_report: dict[str, Any]) -> None:
    r = local_report
    assert r["format"] == "cpsettle.audit/v1"
    assert r["source"] == "day.jsonl" and r["mode"] == "local" and r["workers"] == 1
    for key in ("startedAt", "finishedAt"):
        assert r[key].endswith("Z")
    assert r["elapsedSeconds"] > 0 and r["handsPerSecond"] > 0
    assert r["firstLine"] == 1 and r["stopReason"] is None
    assert set(r["summary"]) == {
        "handsRead",
        "handsChecked",
        "handsWithoutRecordedPayouts",
        "handsWithDifferences",
        "invalidHands",
        "overpaid",
        "underpaid",
    }
    d = r["differences"][0]
    assert set(d) >= {
        "line",
        "ref",
        "handId",
        "tableId",
        "roundId",
        "dealerId",
        "profile",
        "unitValue",
        "overpaid",
        "underpaid",
        "players",
    }
    assert d["ref"] == f"day.jsonl:{d['line']}"
    wrong = [p for p in d["players"] if p["difference"] != "0"]
    assert wrong and all(isinstance(line, str) for p in wrong for line in p["explanation"])
    assert any(" v " in line for p in wrong for line in p["explanation"])  # the pair lines
    e = r["invalid"][0]
    assert set(e) == {
        "line",
        "ref",
        "handId",
        "tableId",
        "roundId",
        "dealerId",
        "code",
        "message",
        "violations",
    }
    assert e["code"] == "INVALID_ARGUMENT" and e["violations"][0]["field"]
    reasons = " ".join(v["reason"] for e in r["invalid"] for v in e["violations"])
    for words in (
        "already used",
        "is not a card",
        "must hold 3 cards",
        "is not JSON",
        "unknown preset",
        "no proposed payout",
        "must be an integer amount",
        "has no field named",
    ):
        assert words in reasons
    # a line cut short still names its hand and table
    cut = next(e for e in r["invalid"] if "is not JSON" in e["message"])
    assert cut["handId"] and cut["tableId"] and cut["dealerId"]
    row = next(iter(r["byTable"].values()))
    assert set(row) == {"hands", "handsWithDifferences", "invalidHands", "overpaid", "underpaid"}


def test_every_tally_field_reaches_the_report_and_adds_up() -> None:
    names = [f.name for f in dataclasses.fields(Tally)]
    tally = Tally(**{name: i + 1 for i, name in enumerate(names)})
    assert sorted(int(v) for v in tally.to_dict().values()) == list(range(1, len(names) + 1))
    tally.add(Tally(**{name: 10 for name in names}))
    assert sorted(int(v) for v in tally.to_dict().values()) == list(range(11, len(names) + 11))


def test_the_readable_summary(capsys: pytest.CaptureFixture[str], day: Day) -> None:
    code, out, err = run(
        capsys, "audit", str(day.path), "--local", "--show", "2", "--progress", "none"
    )
    assert code == 1 and err == ""
    assert "complete: lines 1 to 400" in out
    assert "hands with payout differences" in out and "invalid hands" in out
    assert "Payout differences (14)" in out and "Invalid hands (8)" in out
    assert "… and 12 more (all of them with --report OUT.json)" in out
    assert "why " in out and "expected" in out and "<--" in out
    assert "Per table" in out and "Per dealer" in out


def test_audit_against_the_server_matches_the_local_audit(
    capsys: pytest.CaptureFixture[str],
    day: Day,
    server: ServerHandle,
    tmp_path: Path,
    local_report: dict[str, Any],
) -> None:
    out = tmp_path / "remote.json"
    # The test server's messages are small (64 KiB in, 256 KiB out): ten hands a batch.
    code, _, _ = run(
        capsys,
        "audit",
        str(day.path),
        "--server",
        server.address,
        "--batch",
        "10",
        "--workers",
        "2",
        "--report",
        str(out),
        "--progress",
        "none",
    )
    assert code == 1
    remote = read_report(out)
    check_against_key(remote, day)
    assert remote["mode"] == "server" and remote["server"] == server.address
    assert findings(remote) == findings(local_report)


def test_local_audit_with_worker_processes(
    capsys: pytest.CaptureFixture[str], day: Day, tmp_path: Path, local_report: dict[str, Any]
) -> None:
    out = tmp_path / "workers.json"
    code, _, _ = run(
        capsys,
        "audit",
        str(day.path),
        "--local",
        "--workers",
        "2",
        "--batch",
        "25",
        "--report",
        str(out),
        "--progress",
        "none",
    )
    assert code == 1
    assert findings(read_report(out)) == findings(local_report)


# --------------------------------------------------------------------------- exit codes


def test_a_clean_history_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines, _ = load_generator().generate(30, seed=5, mistakes=0, invalid=0)
    path = tmp_path / "clean.jsonl"
    path.write_text("\n\n".join(lines) + "\n\n")  # blank lines are skipped
    code, out, _ = run(capsys, "audit", str(path), "--local", "--progress", "none")
    assert code == 0
    assert re.search(r"hands checked +30\n", out)
    assert re.search(r"hands with payout differences +0\n", out)


def test_unreadable_input_and_bad_arguments_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, day: Day
) -> None:
    code, _, err = run(capsys, "audit", str(tmp_path / "missing.jsonl"), "--local")
    assert code == 2 and "cannot read" in err
    code, _, err = run(
        capsys,
        "audit",
        str(day.path),
        "--local",
        "--report",
        str(tmp_path / "no" / "such" / "r.json"),
    )
    assert code == 2 and "cannot write the report" in err
    for bad in (["--workers", "0"], ["--batch", "1001"], ["--batch", "x"]):
        with pytest.raises(SystemExit) as e:
            build_parser().parse_args(["audit", str(day.path), "--local", *bad])
        assert e.value.code == 2


def test_an_unreachable_server_exits_3_with_a_partial_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, day: Day
) -> None:
    out = tmp_path / "r.json"
    code, _, err = run(
        capsys,
        "audit",
        str(day.path),
        "--server",
        f"unix://{tmp_path}/nobody.sock",
        "--report",
        str(out),
        "--progress",
        "none",
    )
    assert code == 3 and "UNAVAILABLE" in err
    report = read_report(out)
    assert report["complete"] is False and report["stopReason"].startswith("error:")
    assert report["stoppedAfterLine"] == 0


def test_odd_lines_are_invalid_hands_not_crashes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    western = json.loads((Path(__file__).parents[2] / "examples/tables/western.json").read_text())
    lines = [
        b"\xff\xfe not utf-8",
        b"[1, 2, 3]",
        json.dumps({**western, "recordedPayouts": [1, 2]}).encode(),
        json.dumps({**western, "recordedPayouts": {"A": True}}).encode(),
        json.dumps(western).encode(),  # no payouts recorded: settled, not checked
        json.dumps({**western, "recordedPayouts": {}}).encode(),
        json.dumps({**western, "players": "none"}).encode(),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "r.json"
    code, _, _ = run(
        capsys, "audit", str(path), "--local", "--report", str(out), "--progress", "none"
    )
    report = read_report(out)
    assert code == 1
    assert [e["line"] for e in report["invalid"]] == [1, 2, 3, 4, 7]
    assert report["summary"]["handsWithoutRecordedPayouts"] == 2
    assert report["summary"]["handsChecked"] == 0
    fields = [e["violations"][0]["field"] for e in report["invalid"]]
    assert fields == ["line", "line", "recordedPayouts", "recordedPayouts.A", "request"]


# --------------------------------------------------------------------------- interruption


def test_ctrl_c_leaves_a_valid_partial_report_and_resuming_finishes_it(
    capsys: pytest.CaptureFixture[str],
    day: Day,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = reading.read_lines  # what command reads with (and what is patched back)

    def interrupted(path: str, start_line: int = 1) -> Iterator[tuple[int, bytes]]:
        for number, raw in real(path, start_line):
            if number > 205:
                raise KeyboardInterrupt
            yield number, raw

    monkeypatch.setattr(command, "read_lines", interrupted)
    out = tmp_path / "partial.json"
    code, text, _ = run(
        capsys,
        "audit",
        str(day.path),
        "--local",
        "--batch",
        "20",
        "--report",
        str(out),
        "--progress",
        "none",
    )
    assert code == 130
    partial = read_report(out)
    assert partial["complete"] is False and partial["stopReason"] == "interrupted"
    assert partial["stoppedAfterLine"] == 200  # whole batches only: lines 201-205 are not in it
    check_against_key(partial, day, upto=200)
    assert "INCOMPLETE (interrupted)" in text and "--start-line 201" in text

    monkeypatch.setattr(command, "read_lines", real)
    rest = tmp_path / "rest.json"
    code, _, _ = run(
        capsys,
        "audit",
        str(day.path),
        "--local",
        "--start-line",
        "201",
        "--report",
        str(rest),
        "--progress",
        "none",
    )
    assert code == 1
    second = read_report(rest)
    assert second["firstLine"] == 201 and second["complete"] is True
    check_against_key(second, day, start=201)


def test_ctrl_c_against_the_server(
    capsys: pytest.CaptureFixture[str],
    day: Day,
    tmp_path: Path,
    server: ServerHandle,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = reading.read_lines  # what command reads with (and what is patched back)

    def interrupted(path: str, start_line: int = 1) -> Iterator[tuple[int, bytes]]:
        for number, raw in real(path, start_line):
            if number > 95:
                time.sleep(1.5)  # the answers to the batches sent come in meanwhile
                raise KeyboardInterrupt
            yield number, raw

    monkeypatch.setattr(command, "read_lines", interrupted)
    out = tmp_path / "partial.json"
    code, _, _ = run(
        capsys,
        "audit",
        str(day.path),
        "--server",
        server.address,
        "--batch",
        "10",
        "--report",
        str(out),
        "--progress",
        "none",
    )
    assert code == 130
    partial = read_report(out)
    assert partial["complete"] is False
    last = partial["stoppedAfterLine"]
    assert last <= 90 and last % 10 == 0  # whole batches, none after the interruption
    assert partial["summary"]["handsRead"] == last
    check_against_key(partial, day, upto=last)


# --------------------------------------------------------------------------- progress


def test_plain_progress_lines_when_not_on_a_terminal(
    capsys: pytest.CaptureFixture[str], day: Day
) -> None:
    code, _, err = run(capsys, "audit", str(day.path), "--local", "--progress-interval", "0")
    assert code == 1
    lines = err.splitlines()
    assert "\r" not in err
    assert len(lines) >= HANDS // 100
    assert lines[0].startswith("cpsettle audit: line 100/400 (25.0%), 100 hands, ")
    assert "hands/s, ETA " in lines[0]
    assert lines[-1].endswith(", done, 14 with differences, 8 invalid")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_with_rate_and_eta_on_a_terminal(day: Day) -> None:
    args = build_parser().parse_args(["audit", str(day.path), "--local", "--batch", "50"])
    err, out = Terminal(), io.StringIO()
    bar = Progress(err, "auto", 400, 1, 5.0)
    assert bar.mode == "bar" and bar.bar is not None
    bar.bar.mininterval = 0  # draw on every update
    report = Report("day.jsonl", 1, {"mode": "local", "workers": 1, "batch": 50})
    outcome = Outcome(1, 100)
    outcome.read = 100
    report.add(outcome)
    bar.update(report)
    text = err.getvalue()
    assert text.startswith("\r  0%|")
    last = text.split("\r")[-1]
    assert last.startswith(" 25%|") and "| 100/400 lines [" in last
    assert "<" in last and " hands/s, 0 diffs, 0 invalid]" in last  # ETA, rate, findings
    assert "\n" not in text
    assert command.run(args, stdout=out, stderr=err) == 1
    assert err.getvalue().count("\r") >= 2 and err.getvalue().endswith("\n")


def test_batch_errors_from_the_server_are_retried_hand_by_hand() -> None:
    """A batch refused as a whole (results over the server's limit) is asked again one by one."""

    class FakeClient:
        def __init__(self) -> None:
            self.calls = 0

        def settle_stream(self, batches: Any) -> Iterator[pb.SettleStreamResponse]:
            self.calls += 1
            for b in batches:
                out = pb.SettleStreamResponse()
                if len(b.items) > 1:
                    out.results.add().error.code = code_pb2.RESOURCE_EXHAUSTED
                else:
                    r = out.results.add(ref=b.items[0].ref, all_match=True)
                    r.settlement.context.hand_id = "h"
                yield out

    s = running._Stream.__new__(running._Stream)
    s.client = FakeClient()
    batch = pb.SettleStreamRequest(items=[pb.AuditItem(ref=f"x:{i}") for i in range(3)])
    refused = next(s.client.settle_stream([batch]))
    assert running.is_batch_error(refused)
    answer = s._one_by_one(batch, refused)
    assert [r.ref for r in answer.results] == ["x:0", "x:1", "x:2"]


def test_a_sharded_history_without_the_cluster_extra_says_what_to_install(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "part-0.jsonl").write_text("{}\n")
    monkeypatch.setitem(sys.modules, "fsspec", None)  # as if not installed: import fails
    code, _, err = run(capsys, "audit", str(tmp_path), "--local")
    assert code == 2 and "pip install 'cpsettle[cluster]'" in err
    monkeypatch.undo()
    pytest.importorskip("fsspec")
    monkeypatch.setitem(sys.modules, "distributed", None)  # fsspec there, Dask not
    code, _, err = run(capsys, "audit", str(tmp_path / "part-0.jsonl"), "--cluster", "local")
    assert code == 2 and "the [cluster] extra" in err and "distributed" in err
