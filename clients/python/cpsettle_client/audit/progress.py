"""Progress on stderr: a bar on a terminal, a plain line every few seconds elsewhere.

The bar is tqdm's: it measures the terminal on every redraw, trims its line to the width (so it
never wraps, which would leave a line behind on every redraw) and rewrites it in place with a
carriage return. Away from a terminal (a log file, a pipe) the lines are plain text, one per
``--progress-interval`` seconds and a last one at the end, with no control characters.
"""

from __future__ import annotations

import time
from typing import Never, TextIO

from tqdm import tqdm

from .report import Report

MODES = ("auto", "bar", "lines", "none")

# `{postfix}` is ", " + the hands per second and the findings so far (tqdm adds the comma).
_BAR = "{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} lines [{elapsed}<{remaining}{postfix}]"
_NO_TOTAL = "{n_fmt} lines [{elapsed}{postfix}]"  # reading stdin: no total, so no bar or ETA


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """Shows how far the audit is: lines done of the total, hands per second, findings so far.

    ``mode``: ``bar`` (tqdm), ``lines`` (plain text), ``none``, or ``auto`` (a bar when
    ``stream`` is a terminal, lines otherwise). A bar shows from the start (at 0 %): make the
    ``Progress`` once the audit can start, so that an error before it prints on a line of its own.
    """

    def __init__(
        self,
        stream: TextIO,
        mode: str,
        total_lines: int | None,
        first_line: int,
        interval: float,
        read_before: int = 0,
    ) -> None:
        if mode == "auto":
            isatty = getattr(stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        self.mode = mode
        self.stream = stream
        self.total = (total_lines - first_line + 1) if total_lines is not None else None
        self.first_line = first_line
        self.read_before = read_before  # hands an earlier run read (--resume): not in the rate
        self.interval = interval
        self.started = time.monotonic()
        self.last = self.started
        self.bar: tqdm[Never] | None = None
        if mode == "bar":
            self.bar = tqdm(
                total=self.total,
                file=stream,
                dynamic_ncols=True,
                mininterval=0.1,
                leave=True,
                bar_format=_BAR if self.total else _NO_TOTAL,
            )

    def update(self, report: Report, final: bool = False) -> None:
        if self.bar is not None:
            self._bar(self.bar, report, final)
        elif self.mode == "lines":
            self._line(report, final)

    def _done(self, report: Report) -> int:
        return report.total.last_line - self.first_line + 1

    def _rate(self, report: Report) -> float:
        return (report.total.read - self.read_before) / max(time.monotonic() - self.started, 1e-9)

    @staticmethod
    def _findings(report: Report, short: bool = False) -> str:
        t = report.total
        n = len(t.differences)
        differences = ("diff" if n == 1 else "diffs") if short else "with differences"  # 80 columns
        return f"{n:,} {differences}, {len(t.invalid):,} invalid"

    def _bar(self, bar: tqdm[Never], report: Report, final: bool) -> None:
        bar.set_postfix_str(
            f"{self._rate(report):,.0f} hands/s, {self._findings(report, True)}", refresh=False
        )
        bar.update(self._done(report) - bar.n)
        if final:
            bar.close()  # the last state, then a new line

    def _line(self, report: Report, final: bool) -> None:
        now = time.monotonic()
        if not final and now - self.last < self.interval:
            return
        self.last = now
        t = report.total
        done = self._done(report)
        if self.total:
            share = min(done / self.total, 1.0)
            elapsed = now - self.started
            left = (self.total - done) * elapsed / done if done > 0 else 0.0
            eta = _duration(max(left, 0.0)) if done > 0 else "?"
            of = f"/{self.total:,} ({share * 100:.1f}%)"
        else:
            eta, of = "?", ""
        tail = ("done" if report.complete else "stopped") if final else f"ETA {eta}"
        self.stream.write(
            f"cpsettle audit: line {t.last_line:,}{of}, {t.read:,} hands, "
            f"{self._rate(report):,.0f} hands/s, {tail}, {self._findings(report)}\n"
        )
        self.stream.flush()
