"""The audit report page in a real browser: the synthetic day's totals, the bars per table and
per dealer, each hand with differences opening into the hand view (verified), the invalid lines
with their violations, on a 13-inch laptop, at 200 % zoom, and printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.i18n import Language
from tests.audit.conftest import load_generator
from tests.views.conftest import ARTIFACTS, Opened, choose_language, cli


@pytest.fixture(scope="module")
def audited(
    tmp_path_factory: pytest.TempPathFactory, signing: tuple[Path, Path]
) -> tuple[Path, dict[str, Any]]:
    pem, _ = signing
    folder = tmp_path_factory.mktemp("day")
    lines, _ = load_generator().generate(160, seed=18, mistakes=6, invalid=4)
    history = folder / "day.jsonl"
    history.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = folder / "report.html"
    code, out = cli(
        "audit",
        str(history),
        "--local",
        "--signing-key-file",
        str(pem),
        "--progress",
        "none",
        "--report",
        str(folder / "report.json"),
        "--html",
        str(page),
    )
    assert code == 1, out  # the planted mistakes are findings
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["differences"] and report["invalid"]
    return page, report


def number(text: str) -> int:
    return int(text.replace(",", "").replace("\u2212", "-"))


def test_the_day_at_a_glance(tab: Opened, audited: tuple[Path, dict[str, Any]]) -> None:
    path, report = audited
    page = tab.open(path)
    counts = {
        el.get_attribute("data-count"): number(el.locator("dd").inner_text())
        for el in page.locator("#totals [data-count]").all()
    }
    s = report["summary"]
    assert counts == {
        k: s[k]
        for k in (
            "handsRead",
            "handsChecked",
            "handsWithoutRecordedPayouts",
            "handsWithDifferences",
            "invalidHands",
        )
    }
    # money per currency (this day is all XXX, no currency involved: whole units and the code)
    money = {
        (el.get_attribute("data-currency-total"), el.get_attribute("data-what")): el.locator(
            "dd"
        ).inner_text()
        for el in page.locator("#totals [data-what]").all()
    }
    english = Language.get("en")
    assert money == {
        ("XXX", what): english.money(int(s[what]), "XXX") for what in ("overpaid", "underpaid")
    }
    for book, rows in (("#by-table", report["byTable"]), ("#by-dealer", report["byDealer"])):
        names = page.locator(f"{book} tbody th").all_inner_texts()
        assert names == list(rows)
        widest = max(max(int(r["overpaid"]), int(r["underpaid"])) for r in rows.values())
        for name, r in rows.items():
            bar = page.locator(f"{book} tbody tr", has_text=name).first.locator(".bar.over")
            width = bar.evaluate("e => e.getBoundingClientRect().width")
            cell = bar.evaluate("e => e.parentElement.getBoundingClientRect().width")
            assert width <= cell
            if int(r["overpaid"]) == widest:
                assert width > 0.9 * (cell - 2 * 9.6)  # the longest bar nearly fills its cell
    # usable on a 13-inch laptop: nothing runs off to the side
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    tab.shot("report-top", full_page=False)


def test_each_difference_opens_into_the_verified_hand(
    tab: Opened, audited: tuple[Path, dict[str, Any]], signing: tuple[Path, Path]
) -> None:
    path, report = audited
    page = tab.open(path)
    hands = page.locator("details.hand")
    assert hands.count() == len(report["differences"])
    first = report["differences"][0]
    hand = page.locator(f"#line-{first['line']}")
    assert hand.get_attribute("open") is None
    assert not hand.locator(".verdict").is_visible()
    hand.locator("> summary").focus()
    page.keyboard.press("Enter")  # opened from the keyboard
    assert hand.get_attribute("open") is not None
    assert hand.locator(".verdict").is_visible()
    differing = [p["playerId"] for p in first["players"] if int(p["difference"])]
    assert differing and all(
        f"{p}" in hand.locator("tr", has_text="differs").inner_text() for p in differing[:1]
    )
    shown = hand.locator("article.player h3").all_inner_texts()
    assert sorted(t.split()[0] for t in shown) == sorted(p["playerId"] for p in first["players"])
    # no keys embedded: every hand says its signature was not checked, until the key file is
    # loaded; then every hand is verified
    assert set(tab.verdicts()) == {"unchecked"}
    _, keys = signing
    page.set_input_files("#key-file", str(keys))
    tab.wait_until(
        "[...document.querySelectorAll('.verdict')].every(v => v.dataset.verdict === 'valid')"
    )
    assert len(tab.verdicts()) == len(report["differences"])
    hand.screenshot(path=str(ARTIFACTS / "report-hand.png"))


def test_invalid_lines_with_their_violations(
    tab: Opened, audited: tuple[Path, dict[str, Any]]
) -> None:
    path, report = audited
    page = tab.open(path)
    for e in report["invalid"]:
        item = page.locator(f"#invalid li#line-{e['line']}")
        assert e["code"] in item.inner_text()
        problems = item.locator(".violations li").all_inner_texts()
        assert len(problems) == len(e["violations"])
        for v, shown in zip(e["violations"], problems, strict=True):
            assert v["field"] in shown and v["reason"] in shown


def test_zoomed_and_printed(tab: Opened, audited: tuple[Path, dict[str, Any]]) -> None:
    path, report = audited
    page = tab.open(path)
    page.set_viewport_size({"width": 640, "height": 400})  # the laptop window at 200 %
    page.locator("details.hand > summary").first.click()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    tab.shot("report-200-percent", full_page=False)
    page.set_viewport_size({"width": 1280, "height": 800})

    page.emulate_media(media="print")
    assert page.locator(".controls").evaluate("e => getComputedStyle(e).display") == "none"
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    closed = page.locator("details:not([open])").count()
    assert closed == 0  # every hand prints unfolded
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.pdf(path=str(ARTIFACTS / "report.pdf"), format="A4")
    assert (ARTIFACTS / "report.pdf").stat().st_size > 10_000
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.locator("details.hand:not([open])").count() == len(report["differences"]) - 1


# --------------------------------------------------------------------------- several currencies

CURRENCY_OF_TABLE = ("EUR", "JPY", "KWD")  # tables in turn: cents, yen, fils


def in_currencies(lines: list[str]) -> list[str]:
    """The day's lines with each table in a currency of its own (a currency only labels the
    money: the recorded payouts stay right)."""
    out = []
    for line in lines:
        try:
            hand = json.loads(line)
        except ValueError:
            out.append(line)  # a line cut short stays as it is
            continue
        if isinstance(hand, dict) and hand.get("tableId"):
            number = int("".join(c for c in hand["tableId"] if c.isdigit()) or 0)
            hand["currency"] = CURRENCY_OF_TABLE[number % len(CURRENCY_OF_TABLE)]
        out.append(json.dumps(hand))
    return out


@pytest.fixture(scope="module")
def mixed(
    tmp_path_factory: pytest.TempPathFactory, signing: tuple[Path, Path]
) -> tuple[Path, dict[str, Any], str]:
    pem, _ = signing
    folder = tmp_path_factory.mktemp("mixed")
    lines, _ = load_generator().generate(120, seed=29, mistakes=9, invalid=2)
    history = folder / "day.jsonl"
    history.write_text("\n".join(in_currencies(lines)) + "\n", encoding="utf-8")
    page = folder / "report.html"
    code, out = cli(
        "audit",
        str(history),
        "--local",
        "--signing-key-file",
        str(pem),
        "--progress",
        "none",
        "--report",
        str(folder / "report.json"),
        "--html",
        str(page),
    )
    assert code == 1, out
    return page, json.loads((folder / "report.json").read_text(encoding="utf-8")), out


def test_money_of_several_currencies_is_never_added_up(
    tab: Opened, mixed: tuple[Path, dict[str, Any], str]
) -> None:
    path, report, summary = mixed
    per: dict[str, dict[str, int]] = {}
    for d in report["differences"]:
        row = per.setdefault(d["currency"], {"overpaid": 0, "underpaid": 0})
        row["overpaid"] += int(d["overpaid"])
        row["underpaid"] += int(d["underpaid"])
    assert len(per) >= 2, per  # the day's mistakes fell in more than one currency
    # the JSON report: per currency, and no one number for them all
    assert {
        c: {k: int(v) for k, v in r.items() if k != "handsWithDifferences"}
        for c, r in report["byCurrency"].items()
    } == per
    assert report["summary"]["overpaid"] is None and report["summary"]["underpaid"] is None
    english = Language.get("en")
    # the readable summary: one line per currency, each with its own money
    for code, r in per.items():
        for what in ("overpaid", "underpaid"):
            amount = re.escape(english.money(r[what], code))
            assert re.search(rf"money {what} \({code}\)\s+{amount}", summary), (code, what)
    # the page: each currency's total in its own words and digits, in any language
    page = tab.open(path)
    for lang in ("en", "es", "zh_Hant"):
        if lang != "en":
            choose_language(tab, lang)
        words = Language.get(lang)
        for code, r in per.items():
            for what in ("overpaid", "underpaid"):
                cell = page.locator(f'#totals [data-currency-total="{code}"][data-what="{what}"]')
                assert cell.locator("dd").inner_text() == words.money(r[what], code)
        totals = page.locator("#totals").inner_text()
        mixed_sum = sum(r["overpaid"] for r in per.values())
        assert words.number(mixed_sum) not in totals  # 100 EUR cents and 800 yen: never "900"
    tab.shot("report-currencies-zh-Hant", full_page=False)
