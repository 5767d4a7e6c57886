"""Progress on stderr: a one-line bar on a terminal, a plain line every few seconds elsewhere."""

from __future__ import annotations

import time
from typing import TextIO

from .report import Report

MODES = ("auto", "bar", "lines", "none")


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """A one-line bar on a terminal (rewritten with \\r), plain periodic lines elsewhere."""

    def __init__(self, stream: TextIO, mode: str, total_lines: int | None, first_line: int,
                 interval: float) -> None:
        if mode == "auto":
            isatty = getattr(stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        self.mode = mode
        self.stream = stream
        self.total = (total_lines - first_line + 1) if total_lines is not None else None
        self.first_line = first_line
        self.interval = interval if mode == "lines" else 0.1
        self.started = time.monotonic()
        self.last = self.started
        self.width = 0

    def _numbers(self, report: Report) -> tuple[int, float, str, str]:
        t = report.total
        elapsed = max(time.monotonic() - self.started, 1e-9)
        done_lines = t.last_line - self.first_line + 1
        rate = t.read / elapsed
        if self.total:
            share = min(done_lines / self.total, 1.0)
            left = (self.total - done_lines) * elapsed / done_lines if done_lines > 0 else 0.0
            pct = f"{share * 100:5.1f}%"
            eta = _duration(max(left, 0.0)) if done_lines > 0 else "?"
        else:
            pct, eta = "", "?"
        return done_lines, rate, pct, eta

    def update(self, report: Report, final: bool = False) -> None:
        if self.mode == "none":
            return
        now = time.monotonic()
        if not final and now - self.last < self.interval:
            return
        self.last = now
        t = report.total
        done, rate, pct, eta = self._numbers(report)
        findings = f"{len(t.differences):,} with differences, {len(t.invalid):,} invalid"
        if self.mode == "bar":
            share = min(done / self.total, 1.0) if self.total else 0.0
            filled = int(share * 24)
            bar = "[" + "#" * filled + "." * (24 - filled) + "]" if self.total else ""
            count = f"{done:,}/{self.total:,}" if self.total else f"{done:,}"
            text = (f"{bar} {count} lines {pct}  {rate:,.0f} hands/s  "
                    f"ETA {'0s' if final else eta}  {findings}")
            pad = max(self.width - len(text), 0)
            self.width = len(text)
            self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
        else:
            of = f"/{self.total:,} ({pct.strip()})" if self.total else ""
            tail = ("done" if report.complete else "stopped") if final else f"ETA {eta}"
            self.stream.write(f"cpsettle audit: line {t.last_line:,}{of}, {t.read:,} hands, "
                              f"{rate:,.0f} hands/s, {tail}, {findings}\n")
        self.stream.flush()
