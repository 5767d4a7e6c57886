"""``cpsettle audit`` killed with SIGKILL: its worker processes die with it (and let go of its
stdout), and ``--resume`` goes on from the checkpoint to the same report an uninterrupted run
writes, locally and against a server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client import strict_json
from cpsettle_client.audit import running
from cpsettle_client.audit.outcome import AuditFailure
from cpsettle_client.audit.reading import chunks
from tests.audit.conftest import load_generator
from tests.conftest import ServerHandle
from tests.hardening.cli_process import cli, spawn

# the generated day, this many times over: long enough to be killed in the middle. Checkpoints
# come at most once a second after the first batch, so the run must last several seconds on a
# fast, quiet machine (6 copies, 2,400 lines, took 1.2 s there and ended before its kill).
COPIES = 25
TIMING = ("startedAt", "finishedAt", "elapsedSeconds", "handsPerSecond")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines, _ = load_generator().generate(400, seed=23, mistakes=6, invalid=3)
    path = tmp_path_factory.mktemp("kill") / "day.jsonl"
    path.write_text("\n".join(lines * COPIES) + "\n", encoding="utf-8")
    return path


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, grandchildren, ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def running_pids(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie waiting for its reaper has ended)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def checkpoint_line(path: Path) -> int:
    try:
        return int(strict_json.loads(path.read_text())["nextLine"])
    except (OSError, ValueError, KeyError):
        return 0


def start_and_kill(
    args: list[str], checkpoint: Path, past_line: int
) -> tuple[subprocess.Popen[bytes], set[int]]:
    """Start an audit, SIGKILL it once its checkpoint is past ``past_line``; its descendants."""
    proc = spawn(*args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while checkpoint_line(checkpoint) <= past_line:
        assert proc.poll() is None, "the audit ended before it could be killed"
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.01)
    below = descendants(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    return proc, below


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in TIMING}


def test_sigkill_of_the_audit_ends_its_workers_and_frees_its_stdout(
    history: Path, tmp_path: Path
) -> None:
    report = tmp_path / "r.json"
    proc, below = start_and_kill(
        [
            "audit",
            str(history),
            "--local",
            "--workers",
            "2",
            "--batch",
            "20",
            "--progress",
            "none",
            "--report",
            str(report),
        ],
        tmp_path / "r.json.checkpoint",
        1,
    )
    assert len(below) >= 3, below  # two workers and the fork server (and the resource tracker)
    deadline = time.monotonic() + 5
    while running_pids(below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running_pids(below) == set(), "workers outlived the audit"
    # Nothing holds the audit's stdout any more: a reader of the pipe sees its end.
    assert proc.stdout is not None
    reader = threading.Thread(target=proc.stdout.read, daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "the audit's stdout is still held open"


@pytest.fixture(scope="module")
def uninterrupted(history: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = tmp_path_factory.mktemp("whole") / "whole.json"
    done = cli("audit", str(history), "--local", "--progress", "none", "--report", str(report))
    assert done.returncode == 1, done.stderr
    assert not Path(f"{report}.checkpoint").exists()  # a complete audit leaves none
    data = strict_json.loads(report.read_text())
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("mode", ["local-1", "local-2", "server-2"])
def test_resume_after_sigkill_gives_the_uninterrupted_report(
    history: Path,
    tmp_path: Path,
    uninterrupted: dict[str, Any],
    server: ServerHandle,
    mode: str,
) -> None:
    kind, workers = mode.split("-")
    # The test server takes small messages (64 KiB): ten hands a batch.
    where = (
        ["--local", "--batch", "50"]
        if kind == "local"
        else ["--server", server.address, "--batch", "10"]
    )
    report = tmp_path / "r.json"
    checkpoint = tmp_path / "r.json.checkpoint"
    args = [
        "audit",
        str(history),
        *where,
        "--workers",
        workers,
        "--progress",
        "none",
        "--report",
        str(report),
    ]
    # Past the first write (right after the first batch: the quick check settles a local
    # audit's 10,000 lines in about a second, too soon for the second write, 1 s later).
    past = 50 if kind == "local" else 1
    start_and_kill(args, checkpoint, past)
    assert not report.exists()
    stopped = checkpoint_line(checkpoint)
    assert past < stopped <= 400 * COPIES, stopped

    done = cli(*args, "--resume")
    assert done.returncode == 1, done.stderr
    resumed = strict_json.loads(report.read_text())
    assert not checkpoint.exists()
    assert comparable(resumed) == comparable(uninterrupted) | {
        "mode": kind,
        "workers": int(workers),
        "batch": resumed["batch"],
        **({"server": server.address} if kind == "server" else {}),
    }
    assert resumed["complete"] and resumed["summary"]["handsRead"] == 400 * COPIES
    assert resumed["elapsedSeconds"] > 0


def test_resume_refuses_a_history_changed_since(history: Path, tmp_path: Path) -> None:
    copy = tmp_path / "day.jsonl"
    copy.write_bytes(history.read_bytes())
    report = tmp_path / "r.json"
    args = [
        "audit",
        str(copy),
        "--local",
        "--batch",
        "50",
        "--progress",
        "none",
        "--report",
        str(report),
    ]
    start_and_kill(args, tmp_path / "r.json.checkpoint", 40)
    lines = copy.read_text().splitlines(keepends=True)
    lines[10] = lines[10].replace('"handId":"', '"handId":"X', 1)  # an edit before it
    assert lines[10] != history.read_text().splitlines(keepends=True)[10]
    copy.write_text("".join(lines))
    done = cli(*args, "--resume")
    assert done.returncode == 2
    assert b"not those the checkpoint was made from" in done.stderr
    assert (tmp_path / "r.json.checkpoint").exists()  # kept: the right file can still resume


def test_resume_needs_a_report_and_a_checkpoint(history: Path, tmp_path: Path) -> None:
    done = cli("audit", str(history), "--local", "--resume")
    assert done.returncode == 2 and b"--resume needs --report" in done.stderr
    done = cli("audit", str(history), "--local", "--resume", "--report", str(tmp_path / "r.json"))
    assert done.returncode == 2 and b"no checkpoint at" in done.stderr
    done = cli(
        "audit",
        str(history),
        "--local",
        "--resume",
        "--start-line",
        "5",
        "--report",
        str(tmp_path / "r.json"),
    )
    assert done.returncode == 2 and b"not both" in done.stderr


class EndsAfter:
    """A fake ``settle_stream`` call: answers ``answers`` batches, then ends (status OK) with
    more batches to come, as a server that drains (SIGTERM) does."""

    def __init__(self, requests: Any, answers: int) -> None:
        self.requests = requests
        self.answers = answers

    def __iter__(self) -> Any:
        batches = iter(self.requests)
        for _ in range(self.answers):
            batch = next(batches)
            answer = pb.SettleStreamResponse()
            for item in batch.items:
                answer.results.add(ref=item.ref, all_match=True)
            yield answer

    def cancel(self) -> None:
        pass


def run_against(client: Any) -> list[Any]:
    request = json.dumps({"handId": "h", "preset": "western", "players": []}).encode()
    lines = [(n, request) for n in range(1, 41)]
    runner = running.ServerRunner(client, 1)
    got: list[Any] = []

    def audit() -> None:
        try:
            for outcome in runner.run("day", chunks(lines, 10)):
                got.append(outcome.last_line)
        except AuditFailure as e:
            got.append(e)
        finally:
            runner.close(interrupted=True)

    thread = threading.Thread(target=audit, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "the audit hung on a stream the server had ended"
    return got


def test_a_stream_the_server_ends_early_is_resumed_where_it_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server shutting down ends the stream at a batch boundary: the audit reconnects and
    sends again what was not answered, batch after batch, to the end, every line once."""
    monkeypatch.setattr(running._Stream, "BACKOFF", 0.001)
    calls: list[EndsAfter] = []

    class Client:
        def settle_stream(self, requests: Any) -> EndsAfter:
            calls.append(EndsAfter(requests, 1))
            return calls[-1]

    assert run_against(Client()) == [10, 20, 30, 40]
    assert len(calls) == 4  # one batch per call, three reconnections


def test_a_server_that_keeps_ending_the_stream_fails_the_audit_instead_of_hanging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reconnections that get no answer are given up after ``RETRIES``: the audit stops with
    what was answered (the checkpoint holds it) rather than waiting for answers that never
    come."""
    monkeypatch.setattr(running._Stream, "BACKOFF", 0.001)
    calls: list[EndsAfter] = []

    class Client:
        def settle_stream(self, requests: Any) -> EndsAfter:
            calls.append(EndsAfter(requests, 1 if not calls else 0))
            return calls[-1]

    got = run_against(Client())
    assert got[0] == 10 and isinstance(got[-1], AuditFailure), got
    assert "ended the stream" in str(got[-1])
    assert len(calls) == 1 + running._Stream.RETRIES


def test_the_checkpoint_is_replaced_whole(history: Path, tmp_path: Path) -> None:
    """Written to a temporary file and renamed: no reader ever sees half of one."""
    report = tmp_path / "r.json"
    checkpoint = tmp_path / "r.json.checkpoint"
    proc = spawn(
        "audit",
        str(history),
        "--local",
        "--batch",
        "20",
        "--progress",
        "none",
        "--report",
        str(report),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen = 0
    try:
        while proc.poll() is None:
            try:
                text = checkpoint.read_text()
            except FileNotFoundError:
                continue
            data = strict_json.loads(text)  # always whole JSON
            assert data["format"] == "cpsettle.audit-checkpoint/v2"
            assert data["segments"][-1]["lastLine"] == data["nextLine"] - 1
            seen += 1
    finally:
        proc.wait(120)
    assert seen > 0 and proc.returncode == 1
    assert not checkpoint.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
