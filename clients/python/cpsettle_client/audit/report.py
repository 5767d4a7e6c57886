"""The report: outcomes merged in line order, as the JSON report and as a readable summary.

The JSON format (``cpsettle.audit/v1``) is described in docs/BULK_AUDIT.md.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from typing import Any

from .outcome import Outcome, Tally

REPORT_FORMAT = "cpsettle.audit/v1"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Report:
    """Outcomes merged in line order, and what to tell a person about them."""

    def __init__(self, source: str, first_line: int, settings: dict[str, Any]) -> None:
        self.source = source
        self.first_line = first_line
        self.settings = settings
        self.total = Outcome(first_line, first_line - 1)
        self.started = time.monotonic()
        self.started_at = _now()
        self.finished_at = ""
        self.elapsed = 0.0
        self.complete = False
        self.stop_reason = ""

    @property
    def last_line(self) -> int:
        return self.total.last_line

    def add(self, outcome: Outcome) -> None:
        """Merge the outcome of the lines right after those already in."""
        self.total.merge(outcome)

    def finish(self, complete: bool, reason: str = "") -> None:
        self.complete = complete
        self.stop_reason = reason
        self.elapsed = time.monotonic() - self.started
        self.finished_at = _now()

    @property
    def findings(self) -> bool:
        return bool(self.total.differences or self.total.invalid)

    def to_dict(self) -> dict[str, Any]:
        t = self.total

        def book(rows: dict[str, Tally]) -> dict[str, Any]:
            return {k: r.to_dict() for k, r in sorted(rows.items())}

        return {
            "format": REPORT_FORMAT,
            "source": self.source,
            **self.settings,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "elapsedSeconds": round(self.elapsed, 3),
            "handsPerSecond": round(t.read / self.elapsed, 1) if self.elapsed > 0 else 0.0,
            "complete": self.complete,
            "stopReason": self.stop_reason or None,
            "firstLine": self.first_line,
            "stoppedAfterLine": t.last_line,
            "summary": {
                "handsRead": t.read,
                "handsChecked": t.checked,
                "handsWithoutRecordedPayouts": t.unchecked,
                "handsWithDifferences": len(t.differences),
                "invalidHands": len(t.invalid),
                "overpaid": t.over,
                "underpaid": t.under,
            },
            "differences": t.differences,
            "invalid": t.invalid,
            "byTable": book(t.tables),
            "byDealer": book(t.dealers),
        }

    def write_json(self, path: str) -> None:
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)

    def summary(self, show: int, report_path: str | None) -> str:
        t = self.total
        rate = t.read / self.elapsed if self.elapsed > 0 else 0.0
        mode = self.settings
        where = mode["mode"] if mode["mode"] == "local" else f"server {mode.get('server')}"
        workers = f"{mode['workers']} worker{'s' if mode['workers'] != 1 else ''}"
        out = [f"cpsettle audit of {self.source} ({where}, {workers})"]
        span = f"lines {self.first_line:,} to {t.last_line:,}"
        if self.complete:
            out.append(f"  complete: {span}, {self.elapsed:.1f} s, {rate:,.0f} hands/s")
        else:
            out.append(f"  INCOMPLETE ({self.stop_reason}): {span} only; resume with "
                       f"--start-line {t.last_line + 1}")
        numbers = [
            ("hands read", t.read), ("hands checked", t.checked),
            ("hands without recorded payouts", t.unchecked),
            ("hands with payout differences", len(t.differences)),
            ("invalid hands", len(t.invalid)),
            ("money overpaid", t.over), ("money underpaid", t.under),
        ]
        out += [f"  {label:<32}{value:>12,}" for label, value in numbers]

        def more(n: int) -> None:
            if n > show:
                where = f"in {report_path}" if report_path else "with --report OUT.json"
                out.append(f"  … and {n - show:,} more (all of them {where})")

        def ids(e: dict[str, Any]) -> str:
            parts = [f"line {e['line']}"] + [
                f"{label} {e[key]}" for label, key in
                (("hand", "handId"), ("table", "tableId"), ("round", "roundId"),
                 ("dealer", "dealerId")) if e.get(key)
            ]
            return "  ".join(parts)

        if t.differences:
            out += ["", f"Payout differences ({len(t.differences):,})"]
            for d in t.differences[:show]:
                out.append(f"  {ids(d)}  [{d['profile']}, unit {d['unitValue']}]")
                out.append(f"      {'player':<12}{'expected':>10}{'paid':>10}{'difference':>12}")
                for p in d["players"]:
                    flag = "" if not p["difference"] else "  <--"
                    out.append(f"      {p['playerId']:<12}{p['expected']:>+10,}{p['paid']:>+10,}"
                               f"{p['difference']:>+12,}{flag}")
                for p in d["players"]:
                    if p.get("explanation"):
                        out.append(f"    why {p['playerId']} nets {p['expected']:+,}:")
                        out += [f"      {line}" for line in p["explanation"]]
            more(len(t.differences))
        if t.invalid:
            out += ["", f"Invalid hands ({len(t.invalid):,})"]
            for e in t.invalid[:show]:
                out.append(f"  {ids(e)}  {e['code']}")
                out += [f"      - {v['field']}: {v['reason']}" for v in e["violations"]]
            more(len(t.invalid))
        for title, rows, what in (("Per table", t.tables, "table"),
                                  ("Per dealer", t.dealers, "dealer")):
            if not rows:
                continue
            width = max(len(what), *(len(k) for k in rows))
            head = (f"  {what:<{width}}{'hands':>9}{'differences':>13}{'invalid':>9}"
                    f"{'overpaid':>11}{'underpaid':>11}")
            out += ["", title, head]
            for key, r in sorted(rows.items()):
                out.append(f"  {key:<{width}}{r.hands:>9,}{r.differences:>13,}{r.invalid:>9,}"
                           f"{r.overpaid:>11,}{r.underpaid:>11,}")
        return "\n".join(out)

