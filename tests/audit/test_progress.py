"""The real ``cpsettle audit`` process: its bar on an 80-column terminal, plain text elsewhere."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import tty
from pathlib import Path

from tests.audit.conftest import HANDS, Day

CLI = [sys.executable, "-m", "cpsettle_client.cli"]
COLUMNS = 80


def _environment() -> dict[str, str]:
    # The width must come from the terminal itself, not from the environment.
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


def _read_until_closed(fd: int, proc: subprocess.Popen[bytes], seconds: float) -> bytes:
    """Everything written to the terminal, until the process has exited and closed it."""
    out = bytearray()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every end of the terminal's other side is closed
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    else:
        proc.kill()
        raise AssertionError(f"the audit did not finish in {seconds} s")
    return bytes(out)


def test_the_bar_on_an_80_column_terminal_is_one_line_redrawn_in_place(
    day: Day, tmp_path: Path
) -> None:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    tty.setraw(terminal)  # no "\n" -> "\r\n" translation: we read the bytes the audit wrote
    summary = tmp_path / "summary.txt"
    try:
        with summary.open("wb") as stdout:
            proc = subprocess.Popen(
                [*CLI, "audit", str(day.path), "--local", "--batch", "10"],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=terminal,
                env=_environment(),
            )
        os.close(terminal)
        written = _read_until_closed(controller, proc, 120)
    finally:
        os.close(controller)
    assert proc.wait(30) == 1
    text = written.decode()
    assert "Traceback" not in text
    assert "\x1b" not in text  # no cursor movement: a carriage return and the line again
    # One line: each redraw starts with "\r", and the only new line ends the last one.
    assert text.endswith("\n") and text.count("\n") == 1, text
    assert text.startswith("\r")
    draws = text[1:-1].split("\r")
    assert len(draws) >= 2
    too_wide = [d for d in draws if len(d) > COLUMNS]
    assert not too_wide, too_wide
    assert draws[0].lstrip().startswith("0%|")
    assert f"| {HANDS}/{HANDS} lines [" in draws[-1]
    assert draws[-1].rstrip().endswith(" hands/s, 14 diffs, 8 invalid]")
    assert "Payout differences (14)" in summary.read_text()  # the summary went to stdout


def test_away_from_a_terminal_the_output_is_plain_text(day: Day, tmp_path: Path) -> None:
    out = subprocess.run(
        [*CLI, "audit", str(day.path), "--local", "--batch", "50", "--progress-interval", "0"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=_environment(),
        timeout=120,
        check=False,
    )
    assert out.returncode == 1
    stderr, stdout = out.stderr.decode(), out.stdout.decode()
    for text in (stderr, stdout):
        assert "\r" not in text and "\x1b" not in text
        assert not any(c in "█▏▎▍▌▋▊▉" for c in text)  # no bar
    lines = stderr.splitlines()
    assert len(lines) == HANDS // 50 + 1  # one a batch (interval 0), and the last one
    assert all(line.startswith("cpsettle audit: line ") for line in lines)
    assert lines[-1].endswith(", done, 14 with differences, 8 invalid")
    assert "Payout differences (14)" in stdout
