"""The report: outcomes merged in line order, as the JSON report and as a readable summary.

The JSON format (``cpsettle.audit/v1``) is described in docs/BULK_AUDIT.md. Money is totalled
per currency (``byCurrency``): a day whose hands are in more than one currency has no total in
one number (RULES.md §10; docs/DECISIONS.md).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from ..escape import json_text, shown, shown_data
from ..i18n.money import money as shown_money_in
from .outcome import NO_ID, Outcome, Tally, difference_json, money

REPORT_FORMAT = "cpsettle.audit/v1"


def shown_money(minor: int, currency: str) -> str:
    """An amount as the summary shows it: its currency, by CLDR's English rules (€1.00)."""
    return shown_money_in(minor, currency, "en")


def write_atomically(path: str, text: str) -> None:
    """``text`` into ``path`` through a temporary file in the same folder, flushed to disk, and a
    rename: a kill at any moment leaves the old file or the new one, never half of one."""
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def by_currency(differences: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The money of the hands with differences, per currency (RULES.md §10: every amount is in
    minor units of its hand's currency, so only amounts of one currency add up): hands, overpaid
    and underpaid, by ISO 4217 code."""
    out: dict[str, dict[str, int]] = {}
    for d in differences:
        row = out.setdefault(
            str(d.get("currency") or "XXX"),
            {"handsWithDifferences": 0, "overpaid": 0, "underpaid": 0},
        )
        row["handsWithDifferences"] += 1
        row["overpaid"] += int(d["overpaid"])
        row["underpaid"] += int(d["underpaid"])
    return dict(sorted(out.items()))


def _one_currency(rows: dict[str, Any], differences: list[dict[str, Any]], key: str) -> None:
    """A row of ``rows`` whose hands with differences are in more than one currency has no
    total in one number: its ``overpaid`` and ``underpaid`` are null (``byCurrency`` has them)."""
    seen: dict[str, set[str]] = {}
    for d in differences:
        seen.setdefault(str(d.get(key) or NO_ID), set()).add(str(d.get("currency") or "XXX"))
    for name, currencies in seen.items():
        if len(currencies) > 1 and name in rows:
            rows[name].update(overpaid=None, underpaid=None)


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
        self.elapsed_before = 0.0  # the running time of the runs this one resumes
        self.complete = False
        self.stop_reason = ""
        self.checkpointed = False  # a checkpoint beside the report: say --resume
        # (first, last, why): lines a resumed checkpoint claimed but could not show were audited
        self.not_checked: list[tuple[int, int, str]] = []

    @property
    def last_line(self) -> int:
        return self.total.last_line

    def add(self, outcome: Outcome) -> None:
        """Merge the outcome of the lines right after those already in."""
        self.total.merge(outcome)

    def restore(self, outcome: Outcome, started_at: str, elapsed: float) -> None:
        """Go on from an earlier run's outcome (``--resume``): its lines, its time."""
        self.total = outcome
        self.started_at = started_at
        self.elapsed_before = elapsed

    def elapsed_so_far(self) -> float:
        return round(self.elapsed_before + time.monotonic() - self.started, 3)

    def finish(self, complete: bool, reason: str = "") -> None:
        self.complete = complete
        self.stop_reason = reason
        self.elapsed = self.elapsed_so_far()
        self.finished_at = _now()

    @property
    def findings(self) -> bool:
        return bool(self.total.differences or self.total.invalid)

    def to_dict(self) -> dict[str, Any]:
        t = self.total

        def book(rows: dict[str, Tally]) -> dict[str, Any]:
            return {k: r.to_dict() for k, r in sorted(rows.items())}

        currencies = by_currency(t.differences)
        mixed = len(currencies) > 1
        tables, dealers = book(t.tables), book(t.dealers)
        _one_currency(tables, t.differences, "tableId")
        _one_currency(dealers, t.differences, "dealerId")
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
                "overpaid": None if mixed else money(t.over),
                "underpaid": None if mixed else money(t.under),
            },
            **(
                {
                    "notChecked": [
                        {"firstLine": a, "lastLine": b, "reason": why}
                        for a, b, why in self.not_checked
                    ]
                }
                if self.not_checked
                else {}
            ),
            "differences": [difference_json(d) for d in t.differences],
            "invalid": t.invalid,
            "byTable": tables,
            "byDealer": dealers,
            "byCurrency": {
                c: dict(r, overpaid=money(r["overpaid"]), underpaid=money(r["underpaid"]))
                for c, r in currencies.items()
            },
        }

    def write_json(self, path: str) -> None:
        write_atomically(path, json_text(self.to_dict(), indent=1) + "\n")

    def summary(self, show: int, report_path: str | None) -> str:
        """The readable summary. Every text in it that came from outside (the history's ids,
        the server's messages, the file's name) is shown escaped (``escape.shown``)."""
        t = self.total
        rate = t.read / self.elapsed if self.elapsed > 0 else 0.0
        mode = self.settings
        where = {"local": "local", "cluster": f"cluster {mode.get('cluster')}"}.get(
            mode["mode"], f"server {mode.get('server')}"
        )
        workers = f"{mode['workers']} worker{'s' if mode['workers'] != 1 else ''}"
        out = [f"cpsettle audit of {shown(self.source)} ({shown(where)}, {workers})"]
        span = f"lines {self.first_line:,} to {t.last_line:,}"
        if self.complete:
            out.append(f"  complete: {span}, {self.elapsed:.1f} s, {rate:,.0f} hands/s")
        elif self.not_checked:
            out.append(
                f"  INCOMPLETE: lines {self.first_line:,} to {t.last_line:,} except those "
                "below, which were NOT checked"
            )
            out += [
                f"    lines {a:,} to {b:,} not checked: {shown(why)}"
                for a, b, why in self.not_checked
            ]
        else:
            how = f"--start-line {t.last_line + 1}"
            if self.checkpointed:
                how = f"--resume, or {how} for the rest alone"
            out.append(f"  INCOMPLETE ({shown(self.stop_reason)}): {span} only; resume with {how}")
        numbers = [
            ("hands read", t.read),
            ("hands checked", t.checked),
            ("hands without recorded payouts", t.unchecked),
            ("hands with payout differences", len(t.differences)),
            ("invalid hands", len(t.invalid)),
        ]
        out += [f"  {label:<32}{value:>12,}" for label, value in numbers]
        currencies = by_currency(t.differences)
        if not currencies:
            out += [f"  {label:<32}{0:>12,}" for label in ("money overpaid", "money underpaid")]
        for what in ("overpaid", "underpaid"):  # each currency on its own: never added up
            for code, amounts in currencies.items():
                out.append(
                    f"  {f'money {what} ({code})':<32}{shown_money(amounts[what], code):>12}"
                )

        def more(n: int) -> None:
            if n > show:
                where = f"in {shown(report_path)}" if report_path else "with --report OUT.json"
                out.append(f"  … and {n - show:,} more (all of them {where})")

        def ids(e: dict[str, Any]) -> str:
            parts = [f"line {e['line']}"] + [
                f"{label} {e[key]}"
                for label, key in (
                    ("hand", "handId"),
                    ("table", "tableId"),
                    ("round", "roundId"),
                    ("dealer", "dealerId"),
                )
                if e.get(key)
            ]
            return "  ".join(parts)

        if t.differences:
            out += ["", f"Payout differences ({len(t.differences):,})"]
            for d in shown_data(t.differences[:show]):
                out.append(f"  {ids(d)}  [{d['profile']}, unit {d['unitValue']}]")
                out.append(f"      {'player':<12}{'expected':>10}{'paid':>10}{'difference':>12}")
                for p in d["players"]:
                    flag = "" if not p["difference"] else "  <--"
                    out.append(
                        f"      {p['playerId']:<12}{p['expected']:>+10,}{p['paid']:>+10,}"
                        f"{p['difference']:>+12,}{flag}"
                    )
                for p in d["players"]:
                    if p.get("explanation"):
                        out.append(f"    why {p['playerId']} nets {p['expected']:+,}:")
                        out += [f"      {line}" for line in p["explanation"]]
            more(len(t.differences))
        if t.invalid:
            out += ["", f"Invalid hands ({len(t.invalid):,})"]
            for e in shown_data(t.invalid[:show]):
                out.append(f"  {ids(e)}  {e['code']}")
                out += [f"      - {v['field']}: {v['reason']}" for v in e["violations"]]
            more(len(t.invalid))
        for title, rows, what in (
            ("Per table", t.tables, "table"),
            ("Per dealer", t.dealers, "dealer"),
        ):
            if not rows:
                continue
            rows = {shown(k): r for k, r in rows.items()}
            width = max(len(what), *(len(k) for k in rows))
            head = (
                f"  {what:<{width}}{'hands':>9}{'differences':>13}{'invalid':>9}"
                f"{'overpaid':>11}{'underpaid':>11}"
            )
            out += ["", title, head]
            for key, r in sorted(rows.items()):
                out.append(
                    f"  {key:<{width}}{r.hands:>9,}{r.differences:>13,}{r.invalid:>9,}"
                    f"{r.overpaid:>11,}{r.underpaid:>11,}"
                )
        return "\n".join(out)
