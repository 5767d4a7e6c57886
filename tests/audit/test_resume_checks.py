"""A tampered ``--resume`` cannot pass: a report says complete only for lines it audited or
carries and checks (audit/checkpoint.py); the rest it lists as not checked, and exits 4."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.audit import checkpoint as checkpoints
from cpsettle_client.audit import command, running
from cpsettle_client.cli import main
from tests.audit.conftest import load_generator, read_report

LINES = 6000
STOP = 1260  # the first run is interrupted after this line
TIMING = ("startedAt", "finishedAt", "elapsedSeconds", "handsPerSecond")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    lines, key = load_generator().generate(LINES, seed=47, mistakes=24, invalid=8)
    path = tmp_path_factory.mktemp("tamper") / "day.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, key


@pytest.fixture(scope="module")
def uninterrupted(
    history: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("whole") / "r.json"
    assert (
        main(["audit", str(history[0]), "--local", "--report", str(out), "--progress", "none"]) == 1
    )
    return read_report(out)


def interrupted_run(path: Path, report: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """An audit stopped (as by Ctrl-C) after line ``STOP``: its checkpoint, read as JSON."""
    audit = running.audit_chunk

    def stopping(prefix: str, first: int, last: int, lines: list[tuple[int, bytes]]) -> Any:
        if first > STOP:
            raise KeyboardInterrupt
        return audit(prefix, first, last, lines)

    with monkeypatch.context() as m:
        m.setattr(running, "audit_chunk", stopping)
        m.setattr(checkpoints, "MIN_INTERVAL", 0.0)  # a segment at every batch
        m.setattr(checkpoints, "COST_SHARE", 0)
        assert (
            main(
                [
                    "audit",
                    str(path),
                    "--local",
                    "--batch",
                    "60",
                    "--report",
                    str(report),
                    "--progress",
                    "none",
                ]
            )
            == command.EXIT_INTERRUPTED
        )
    data: dict[str, Any] = json.loads(Path(f"{report}.checkpoint").read_text())
    assert data["nextLine"] == STOP + 1 and data["segments"][-1]["lastLine"] == STOP
    return data


def resume(path: Path, report: Path) -> tuple[int, dict[str, Any]]:
    code = main(
        ["audit", str(path), "--local", "--report", str(report), "--resume", "--progress", "none"]
    )
    return code, read_report(report)


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in TIMING}


def test_an_honest_resume_gives_the_uninterrupted_report(
    history: tuple[Path, dict[str, Any]],
    uninterrupted: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = tmp_path / "r.json"
    interrupted_run(history[0], report, monkeypatch)
    key = Path(f"{report}.checkpoint.key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text().strip() not in Path(f"{report}.checkpoint").read_text()
    code, resumed = resume(history[0], report)
    assert code == 1
    assert comparable(resumed) == comparable(uninterrupted)
    assert "notChecked" not in resumed
    assert not key.exists() and not Path(f"{report}.checkpoint").exists()


def test_next_line_moved_forward_is_not_checked(
    history: tuple[Path, dict[str, Any]],
    uninterrupted: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's attack: nextLine moved to the end of the history (in the old format, with its
    unkeyed digest recomputed, this gave a complete report with 4,740 lines never settled)."""
    path, key = history
    report = tmp_path / "r.json"
    data = interrupted_run(path, report, monkeypatch)
    data["nextLine"] = LINES + 1
    Path(f"{report}.checkpoint").write_text(json.dumps(data))
    capsys.readouterr()
    code, resumed = resume(path, report)
    assert code == command.EXIT_UNCHECKED == 4
    assert resumed["complete"] is False
    assert [(n["firstLine"], n["lastLine"]) for n in resumed["notChecked"]] == [(STOP + 1, LINES)]
    assert "not checked" in resumed["stopReason"]
    # what it does claim is exactly what was audited: the lines up to STOP
    assert resumed["summary"]["handsRead"] == STOP
    hidden = [m["line"] for m in key["mistakes"] if m["line"] > STOP]
    assert hidden and not [d for d in resumed["differences"] if d["line"] > STOP]
    assert [d for d in uninterrupted["differences"] if d["line"] <= STOP] == resumed["differences"]
    out = capsys.readouterr()
    assert f"lines {STOP + 1:,} to {LINES:,} not checked" in out.out
    assert "not checked" in out.err


def _forge(segment: dict[str, Any], first: int, last: int) -> dict[str, Any]:
    """A segment that claims lines ``first``..``last`` all matched (its MAC made with another
    key: the attacker does not have the audit's)."""
    outcome = dict(
        segment["outcome"],
        first_line=first,
        last_line=last,
        read=last - first + 1,
        checked=last - first + 1,
        unchecked=0,
        differences=[],
        invalid=[],
        over=0,
        under=0,
        settlements={},
    )
    forged = dict(segment, firstLine=first, lastLine=last, outcome=outcome)
    forged["mac"] = checkpoints.segment_mac(
        b"\x00" * 32, "day.jsonl", first, last, segment["linesDigest"], outcome
    )
    return forged


@pytest.mark.parametrize(
    "attack", ["forged segment", "edited segment", "key removed", "segment dropped"]
)
def test_a_segment_that_fails_its_check_is_not_checked(
    history: tuple[Path, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    attack: str,
) -> None:
    path, _ = history
    report = tmp_path / "r.json"
    data = interrupted_run(path, report, monkeypatch)
    segments = data["segments"]
    assert len(segments) > 3
    bad_from = STOP + 1
    if attack == "forged segment":
        segments.append(_forge(segments[-1], STOP + 1, LINES))
        data["nextLine"] = LINES + 1
    elif attack == "edited segment":  # a difference taken out of the second segment
        victim = next(s for s in segments if s["outcome"]["differences"])
        victim["outcome"]["differences"] = []
        bad_from = victim["firstLine"]
    elif attack == "key removed":
        Path(f"{report}.checkpoint.key").unlink()
        bad_from = 1
    else:
        del segments[1]
        bad_from = segments[0]["lastLine"] + 1
    Path(f"{report}.checkpoint").write_text(json.dumps(data))
    code, resumed = resume(path, report)
    assert code == 4 and resumed["complete"] is False
    gap = resumed["notChecked"][0]
    assert (gap["firstLine"], gap["lastLine"]) == (bad_from, data["nextLine"] - 1)
    assert resumed["summary"]["handsRead"] == (bad_from - 1) + (LINES + 1 - data["nextLine"])
