"""The report as a page (``cpsettle audit … --html REPORT.html``): the totals, bars per table and
per dealer, each hand with payout differences expandable into the hand view (drawn and
verified in the browser, cpsettle_client.views), and the invalid lines with their violations.

Built from the same dictionary as the JSON report (``Report.to_dict``) and the settlements the
outcomes kept for the hands with differences. Nothing here decides money: the amounts are the
report's, each with its currency and never added across currencies (RULES.md §10); bar lengths
are only each amount's share of the largest of its currency. The page's words are marked
(views/page.py) so it reads in any language cpsettle has a catalog for.
"""

from __future__ import annotations

import base64
import os
from html import escape
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb

from ..i18n import N_, Language
from ..i18n.catalogs import DEFAULT
from ..views.hand import hand_mount
from ..views.page import Page, marked, money_html, number_html
from .outcome import HAND_VIEWS, NO_ID
from .report import Report

COUNTS = (
    ("handsRead", N_("hands read")),
    ("handsChecked", N_("hands checked")),
    ("handsWithoutRecordedPayouts", N_("hands without recorded payouts")),
    ("handsWithDifferences", N_("hands with payout differences")),
    ("invalidHands", N_("invalid hands")),
)


def _n(lang: Language, value: int | str) -> str:
    """A count in the page's language (the page's script says it again in another)."""
    return number_html(lang, value)


def _ids(lang: Language, entry: dict[str, Any]) -> str:
    parts = [marked(lang, "line {line}", line={"number": entry["line"]})] + [
        marked(lang, text, id=str(entry[key]))
        for text, key in (
            (N_("hand {id}"), "handId"),
            (N_("table {id}"), "tableId"),
            (N_("round {id}"), "roundId"),
            (N_("dealer {id}"), "dealerId"),
        )
        if entry.get(key)
    ]
    return " · ".join(parts)


def _bar(value: int, largest: int, kind: str) -> str:
    share = 100 * value / largest if largest else 0
    zero = " zero" if not value else ""
    return f'<span class="bar {kind}{zero}" style="width:{share:.1f}%" aria-hidden="true"></span>'


def _book(
    lang: Language,
    title: str,
    what: str,
    slug: str,
    rows: dict[str, dict[str, Any]],
    key: str,
    differences: list[dict[str, Any]],
) -> str:
    """Per table or per dealer: the counts, and the money over- and underpaid per currency
    (a row's amounts, one line per currency; each bar is its amount's share of the largest
    amount of its currency)."""
    if not rows:
        return ""
    money: dict[str, dict[str, dict[str, int]]] = {}  # row -> currency -> over/under
    for d in differences:
        per = money.setdefault(str(d.get(key) or NO_ID), {}).setdefault(
            str(d.get("currency") or "XXX"), {"overpaid": 0, "underpaid": 0}
        )
        per["overpaid"] += int(d["overpaid"])
        per["underpaid"] += int(d["underpaid"])
    largest: dict[str, int] = {}
    for per_row in money.values():
        for code, m in per_row.items():
            largest[code] = max(largest.get(code, 0), m["overpaid"], m["underpaid"])

    def cells(name: str, what: str) -> tuple[str, str]:
        per_row = money.get(name) or {}
        if not per_row:
            return (
                f"<td class=num>{_n(lang, 0)}</td>",
                f"<td class=bar-cell>{_bar(0, 0, what)}</td>",
            )
        amounts = "<br>".join(
            money_html(lang, m[what + "paid"], code) for code, m in per_row.items()
        )
        bars = "".join(_bar(m[what + "paid"], largest[code], what) for code, m in per_row.items())
        return f"<td class=num>{amounts}</td>", f"<td class=bar-cell>{bars}</td>"

    body = []
    for name, r in rows.items():
        over, over_bar = cells(name, "over")
        under, under_bar = cells(name, "under")
        body.append(
            f"<tr><th scope=row>{escape(name)}</th><td class=num>{_n(lang, r['hands'])}"
            f"</td><td class=num>{_n(lang, r['handsWithDifferences'])}</td>"
            f"<td class=num>{_n(lang, r['invalidHands'])}</td>"
            f"{over}{over_bar}{under}{under_bar}</tr>"
        )
    return (
        f'<section class="book" id="by-{slug}"><h2>{title}</h2><div class=scroll>'
        f"<table><thead><tr><th scope=col>{what}</th><th scope=col class=num>"
        + marked(lang, "hands")
        + "</th><th scope=col class=num>"
        + marked(lang, "with differences")
        + "</th><th scope=col class=num>"
        + marked(lang, "invalid")
        + "</th><th scope=col class=num>"
        + marked(lang, "overpaid")
        + '</th><th scope=col><span class="sr">'
        + marked(lang, "overpaid, as a bar")
        + "</span></th><th scope=col class=num>"
        + marked(lang, "underpaid")
        + '</th><th scope=col><span class="sr">'
        + marked(lang, "underpaid, as a bar")
        + "</span></th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _difference(page: Page, d: dict[str, Any], settlement: str | None) -> str:
    lang = page.lang
    code = str(d.get("currency") or "XXX")
    page.currencies.add(code)
    rows = []
    for p in d["players"]:
        flag = (
            '<span class="flag"> \u25c0 ' + marked(lang, "differs") + "</span>"
            if int(p["difference"])
            else ""
        )
        rows.append(
            f"<tr><th scope=row>{escape(p['playerId'])}</th>"
            f"<td class=num>{money_html(lang, p['expected'], code, signed=True)}</td>"
            f"<td class=num>{money_html(lang, p['paid'], code, signed=True)}</td>"
            f"<td class=num>{money_html(lang, p['difference'], code, signed=True)}"
            f"{flag}</td></tr>"
        )
    why = "".join(
        "<p>"
        + marked(
            lang,
            "Why {player} nets {money}:",
            player=str(p["playerId"]),
            money={"money": str(p["expected"]), "currency": code, "signed": True},
        )
        + "</p><ul>"
        + "".join(f'<li lang="en">{escape(line)}</li>' for line in p["explanation"])
        + "</ul>"
        for p in d["players"]
        if p.get("explanation")
    )
    if settlement is None:
        hand = (
            "<p>"
            + marked(
                lang,
                "(No hand view: only the first {count} hands with "
                "differences are drawn; settle this line and open it with "
                "cpsettle view.)",
                count={"number": HAND_VIEWS},
            )
            + "</p>"
        )
    else:
        binary = base64.b64decode(settlement)
        stored = json_format.MessageToDict(pb.Settlement.FromString(binary))
        hand = hand_mount(page.embed(f"settlement-line-{d['line']}", {"settlement": stored}))
    summary = marked(
        lang,
        "{profile}, unit {unit}: overpaid {overpaid}, underpaid {underpaid}",
        profile=str(d["profile"]),
        unit={"money": str(d["unitValue"]), "currency": code},
        overpaid={"money": str(d["overpaid"]), "currency": code},
        underpaid={"money": str(d["underpaid"]), "currency": code},
    )
    return (
        f'<details class="hand" id="line-{d["line"]}"><summary>{_ids(lang, d)} — '
        f"{summary}</summary><div class=scroll><table><thead><tr><th scope=col>"
        + marked(lang, "player")
        + "</th><th scope=col class=num>"
        + marked(lang, "expected")
        + "</th><th scope=col class=num>"
        + marked(lang, "paid")
        + "</th><th scope=col class=num>"
        + marked(lang, "difference")
        + "</th></tr></thead><tbody>"
        f"{''.join(rows)}</tbody></table></div>{why}{hand}</details>"
    )


def _invalid(lang: Language, e: dict[str, Any]) -> str:
    problems = "".join(
        f'<li><code>{escape(v["field"])}</code>: <span lang="en">{escape(v["reason"])}</span></li>'
        for v in e["violations"]
    )
    return (
        f'<li id="line-{e["line"]}"><strong>{_ids(lang, e)}</strong> — '
        f'<code>{escape(e["code"])}</code> <span lang="en">{escape(e.get("message") or "")}'
        f'</span><ul class="violations">{problems}</ul></li>'
    )


def _money_totals(lang: Language, currencies: dict[str, dict[str, Any]]) -> str:
    """Money over- and underpaid, one figure per currency (never added across currencies)."""
    if not currencies:
        currencies = {"XXX": {"overpaid": 0, "underpaid": 0}}
    out = []
    for what, text in (("overpaid", N_("money overpaid")), ("underpaid", N_("money underpaid"))):
        for code, r in currencies.items():
            out.append(
                f'<div data-currency-total="{escape(code)}" data-what="{what}"><dt>'
                + marked(lang, text)
                + f" ({escape(code)})</dt><dd>"
                + money_html(lang, r[what], code)
                + "</dd></div>"
            )
    return "".join(out)


def html_page(report: Report, lang: Language | None = None) -> str:
    """The page of a finished report (``lang``: the language it opens in; None: the
    browser's)."""
    r = report.to_dict()
    s = r["summary"]
    page = Page(title="", lang=lang or Language.get(DEFAULT), fixed=lang is not None)
    t = page.lang
    page.title = marked(t, "Audit of {source}", source=str(r["source"]))
    span = marked(
        t,
        "lines {first} to {last}",
        first={"number": r["firstLine"]},
        last={"number": r["stoppedAfterLine"]},
    )
    if r["complete"]:
        status = (
            "<p>"
            + marked(t, "Complete:")
            + f" {span}, "
            + marked(
                t, "{seconds} s ({mode}).", seconds=str(r["elapsedSeconds"]), mode=str(r["mode"])
            )
        )
    else:
        status = (
            '<p class="error">'
            + marked(t, "INCOMPLETE ({reason}):", reason=str(r["stopReason"] or ""))
            + f" {span} "
            + marked(
                t, "only; resume with --start-line {line}.", line=str(r["stoppedAfterLine"] + 1)
            )
        )
    status += (
        " "
        + marked(
            t,
            "Started {started}, finished {finished}.",
            started=str(r["startedAt"]),
            finished=str(r["finishedAt"]),
        )
        + "</p>"
    )
    currencies = r["byCurrency"]
    page.currencies.update(currencies)
    grid = "".join(
        f'<div data-count="{key}"><dt>{marked(t, label)}</dt><dd>{_n(t, s[key])}</dd></div>'
        for key, label in COUNTS
    ) + _money_totals(t, currencies)
    diffs = r["differences"]
    parts = [
        status,
        '<section id="totals"><h2>' + marked(t, "Totals") + "</h2>"
        f'<dl class="summary-grid">{grid}</dl></section>',
        _book(
            t, marked(t, "Per table"), marked(t, "Table"), "table", r["byTable"], "tableId", diffs
        ),
        _book(
            t,
            marked(t, "Per dealer"),
            marked(t, "Dealer"),
            "dealer",
            r["byDealer"],
            "dealerId",
            diffs,
        ),
    ]
    settlements = report.total.settlements
    parts.append(
        '<section id="differences"><h2>'
        + marked(t, "Hands with payout differences ({count})", count={"number": len(diffs)})
        + "</h2>"
    )
    if diffs:
        parts.append(
            "<p>"
            + marked(
                t,
                "Open a hand to see its settlement drawn and verified. "
                "A positive difference is money overpaid to the player.",
            )
            + "</p>"
        )
    parts += [_difference(page, d, settlements.get(str(d["line"]))) for d in diffs]
    parts.append("</section>")
    invalid = r["invalid"]
    parts.append(
        '<section id="invalid"><h2>'
        + marked(t, "Invalid lines ({count})", count={"number": len(invalid)})
        + "</h2>"
    )
    if invalid:
        parts.append("<ul>" + "".join(_invalid(t, e) for e in invalid) + "</ul>")
    parts.append("</section>")
    page.body = "\n".join(parts)
    return page.render()


def write_html(report: Report, path: str, lang: Language | None = None) -> None:
    """Write the page atomically (like the JSON report)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html_page(report, lang))
    os.replace(tmp, path)
