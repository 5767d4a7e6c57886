"""The report as a page (``cpsettle audit … --html REPORT.html``): the totals, bars per table and
per dealer, each hand with payout differences expandable into the hand view (drawn and
verified in the browser, cpsettle_client.views), and the invalid lines with their violations.

Built from the same dictionary as the JSON report (``Report.to_dict``) and the settlements the
outcomes kept for the hands with differences. Nothing here decides money: the amounts are the
report's; bar lengths are only each row's share of the largest row.
"""

from __future__ import annotations

import base64
import os
from html import escape
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb

from ..views.hand import hand_mount
from ..views.page import Page
from .outcome import HAND_VIEWS
from .report import Report

_SUMMARY = (("handsRead", "hands read"), ("handsChecked", "hands checked"),
            ("handsWithoutRecordedPayouts", "hands without recorded payouts"),
            ("handsWithDifferences", "hands with payout differences"),
            ("invalidHands", "invalid hands"), ("overpaid", "money overpaid (minor units)"),
            ("underpaid", "money underpaid (minor units)"))


def _n(value: int | str) -> str:
    """A count or an amount (the report writes money as int64 strings, like protobuf's JSON)."""
    return f"{int(value):,}"


def _signed(value: int | str) -> str:
    return f"{int(value):+,}"


def _ids(entry: dict[str, Any]) -> str:
    parts = [f"line {entry['line']}"] + [
        f"{label} {entry[key]}" for label, key in (("hand", "handId"), ("table", "tableId"),
                                                   ("round", "roundId"), ("dealer", "dealerId"))
        if entry.get(key)]
    return escape(" · ".join(parts))


def _bar(value: int, largest: int, kind: str) -> str:
    share = 100 * value / largest if largest else 0
    zero = " zero" if not value else ""
    return (f'<span class="bar {kind}{zero}" style="width:{share:.1f}%" aria-hidden="true">'
            "</span>")


def _book(title: str, what: str, rows: dict[str, dict[str, Any]]) -> str:
    if not rows:
        return ""
    largest = max(max(int(r["overpaid"]), int(r["underpaid"])) for r in rows.values())
    body = "".join(
        f"<tr><th scope=row>{escape(name)}</th><td class=num>{_n(r['hands'])}</td>"
        f"<td class=num>{_n(r['handsWithDifferences'])}</td>"
        f"<td class=num>{_n(r['invalidHands'])}</td>"
        f"<td class=num>{_n(r['overpaid'])}</td><td class=bar-cell>"
        f"{_bar(int(r['overpaid']), largest, 'over')}</td>"
        f"<td class=num>{_n(r['underpaid'])}</td><td class=bar-cell>"
        f"{_bar(int(r['underpaid']), largest, 'under')}</td></tr>"
        for name, r in rows.items())
    slug = what.lower()
    return (f'<section class="book" id="by-{slug}"><h2>{escape(title)}</h2><div class=scroll>'
            f"<table><thead><tr><th scope=col>{escape(what)}</th><th scope=col class=num>hands"
            "</th><th scope=col class=num>with differences</th><th scope=col class=num>invalid"
            "</th><th scope=col class=num>overpaid</th><th scope=col>"
            '<span class="sr">overpaid, as a bar</span></th><th scope=col class=num>underpaid'
            '</th><th scope=col><span class="sr">underpaid, as a bar</span></th></tr></thead>'
            f"<tbody>{body}</tbody></table></div></section>")


def _difference(page: Page, d: dict[str, Any], settlement: str | None) -> str:
    rows = []
    for p in d["players"]:
        flag = '<span class="flag"> \u25c0 differs</span>' if int(p["difference"]) else ""
        rows.append(f"<tr><th scope=row>{escape(p['playerId'])}</th>"
                    f"<td class=num>{_signed(p['expected'])}</td>"
                    f"<td class=num>{_signed(p['paid'])}</td>"
                    f"<td class=num>{_signed(p['difference'])}{flag}</td></tr>")
    why = "".join(
        f"<p>Why {escape(p['playerId'])} nets {_signed(p['expected'])}:</p><ul>"
        + "".join(f"<li>{escape(line)}</li>" for line in p["explanation"]) + "</ul>"
        for p in d["players"] if p.get("explanation"))
    if settlement is None:
        hand = (f"<p>(No hand view: only the first {HAND_VIEWS} hands with differences are "
                "drawn; settle this line and open it with <code>cpsettle view</code>.)</p>")
    else:
        binary = base64.b64decode(settlement)
        stored = json_format.MessageToDict(pb.Settlement.FromString(binary))
        hand = hand_mount(page.embed(f"settlement-line-{d['line']}", {"settlement": stored}))
    return (f'<details class="hand" id="line-{d["line"]}"><summary>{_ids(d)} — '
            f"{escape(str(d['profile']))}, unit {_n(d['unitValue'])}: overpaid "
            f"<strong>{_n(d['overpaid'])}</strong>, underpaid <strong>{_n(d['underpaid'])}"
            "</strong></summary><div class=scroll><table><thead><tr><th scope=col>player</th>"
            "<th scope=col class=num>expected</th><th scope=col class=num>paid</th>"
            "<th scope=col class=num>difference</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table></div>{why}{hand}</details>")


def _invalid(e: dict[str, Any]) -> str:
    problems = "".join(f"<li><code>{escape(v['field'])}</code>: {escape(v['reason'])}</li>"
                       for v in e["violations"])
    return (f'<li id="line-{e["line"]}"><strong>{_ids(e)}</strong> — '
            f"<code>{escape(e['code'])}</code> {escape(e.get('message') or '')}"
            f'<ul class="violations">{problems}</ul></li>')


def html_page(report: Report) -> str:
    """The page of a finished report."""
    r = report.to_dict()
    s = r["summary"]
    page = Page(title=f"Audit of {r['source']}")
    span = f"lines {r['firstLine']:,} to {r['stoppedAfterLine']:,}"
    if r["complete"]:
        status = f"<p>Complete: {span}, {r['elapsedSeconds']} s ({r['mode']})."
    else:
        status = (f'<p class="error">INCOMPLETE ({escape(r["stopReason"] or "")}): {span} '
                  f"only; resume with <code>--start-line {r['stoppedAfterLine'] + 1}</code>.")
    status += f" Started {escape(r['startedAt'])}, finished {escape(r['finishedAt'])}.</p>"
    grid = "".join(f"<div><dt>{escape(label)}</dt><dd>{_n(s[key])}</dd></div>"
                   for key, label in _SUMMARY)
    parts = [status,
             f'<section id="totals"><h2>Totals</h2><dl class="summary-grid">{grid}</dl></section>',
             _book("Per table", "Table", r["byTable"]),
             _book("Per dealer", "Dealer", r["byDealer"])]
    settlements = report.total.settlements
    diffs = r["differences"]
    parts.append(f'<section id="differences"><h2>Hands with payout differences ({len(diffs):,})'
                 "</h2>")
    if diffs:
        parts.append("<p>Open a hand to see its settlement drawn and verified. Amounts in minor "
                     "units; a positive difference is money overpaid to the player.</p>")
    parts += [_difference(page, d, settlements.get(str(d["line"]))) for d in diffs]
    parts.append("</section>")
    invalid = r["invalid"]
    parts.append(f'<section id="invalid"><h2>Invalid lines ({len(invalid):,})</h2>')
    if invalid:
        parts.append("<ul>" + "".join(_invalid(e) for e in invalid) + "</ul>")
    parts.append("</section>")
    page.body = "\n".join(parts)
    return page.render()


def write_html(report: Report, path: str) -> None:
    """Write the page atomically (like the JSON report)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html_page(report))
    os.replace(tmp, path)
