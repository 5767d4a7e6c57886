"""A sheet to print: a hand page printed to PDF by chromium (A4, as a person's Ctrl+P does, at
100 %) is one page (every golden case: ``check_sheet``, run by test_golden_views.py), holds
every text a dispute needs (players, nets, each pair's and each row's sentence, the payments,
every digest, the footer that ends the page), and has nothing running past the paper's edge."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from cpsettle_client.i18n import Language
from tests.views.conftest import ARTIFACTS, Opened, choose_language

A4_WIDTH_PX = 794  # 210 mm at 96 px per inch: the print layout's page box


def squeeze(text: str) -> str:
    """Text without whitespace, its ligatures undone (NFKC: "ﬂ" is "fl"): a PDF breaks long lines
    (a digest, a sentence) where it likes and sets "fl" as one glyph."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def printed(tab: Opened, page: Any, name: str) -> tuple[int, str]:
    """The page printed to A4 PDF (the print media's own @page): its page count and text."""
    page.emulate_media(media="print")
    # nothing wider than the paper: every element of the page inside the A4 box
    page.set_viewport_size({"width": A4_WIDTH_PX, "height": 1123})
    overflow = page.evaluate("""() => [...document.querySelectorAll('main *, header *')]
      .filter((e) => e.getClientRects().length)
      .map((e) => [e.tagName, e.className, Math.round(e.getBoundingClientRect().right)])
      .filter(([, , right]) => right > document.documentElement.clientWidth)""")
    assert not overflow, overflow[:5]
    pdf = page.pdf(format="A4", prefer_css_page_size=True, print_background=True)
    page.emulate_media(media="screen")
    page.set_viewport_size({"width": 1280, "height": 800})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"print-{name}.pdf").write_bytes(pdf)
    reader = PdfReader(io.BytesIO(pdf))
    return len(reader.pages), "".join(p.extract_text() for p in reader.pages)


def check_sheet(tab: Opened, page: Any, stem: str, s: dict[str, Any]) -> None:
    """A golden case's page printed: one page, and every text a dispute needs on it (run for
    every golden case by tests/views/test_golden_views.py, on the page it has open)."""
    pages, text = printed(tab, page, stem)
    assert pages == 1, f"{stem} prints on {pages} pages"
    flat = squeeze(text)
    english = Language.get("en")
    cur = s.get("currency", "XXX")
    wanted = ["VERIFIED", english._("Payments, in button order")]
    for p in s["players"]:
        wanted += [p["playerId"], english.money(int(p.get("netMoney", 0)), cur, signed=True)]
        wanted += [r["name"] for r in p.get("rows", [])]
    for pr in s["pairs"]:
        wanted += [
            pr["text"],
            *(r["text"] for r in pr.get("rows", [])),
            *(it["text"] for it in pr.get("items", [])),
        ]
    wanted += list(s.get("text", []))
    wanted += [
        s["settlementDigest"],
        s["requestDigest"],
        s["engineDigest"],
        s["settlementId"],
        s["profile"]["digest"],
    ]
    wanted.append("it decides nothing and sends nothing.")  # the footer: the page's end
    missing = [w for w in wanted if squeeze(w) not in flat]
    assert not missing, missing


@pytest.mark.parametrize(
    "stem",
    [
        "120-ofc-four-players-foul-royalties-fantasyland-qq-jj",
        "224-shisanshui-4p-natural-vs-foul-natural-units",
    ],
)
@pytest.mark.parametrize("code", ["zh_Hant", "es"])
def test_a_sheet_in_another_language(
    module_tab: Opened, golden_pages: dict[str, Any], stem: str, code: str
) -> None:
    path, s, _ = golden_pages[stem]
    page = module_tab.open(path)
    choose_language(module_tab, code)
    pages, text = printed(module_tab, page, f"{stem}-{code}")
    assert pages == 1
    lang = Language.get(code)
    flat = squeeze(text)
    cur = s.get("currency", "XXX")
    for words in [
        lang._("Payments, in button order"),
        lang._("Each pair"),
        *(lang.money(int(p.get("netMoney", 0)), cur, signed=True) for p in s["players"]),
        *(lang.label(it["kind"]) for pr in s["pairs"] for it in pr.get("items", [])),
    ]:
        assert squeeze(words) in flat, words


def test_the_longest_legal_ids_run_off_no_paper(module_tab: Opened, tmp_path: Path) -> None:
    """Ids at their legal maximum (128 characters for the hand's, 64 for a player's) break
    anywhere rather than run past the paper's edge; such a hand may take a second sheet."""
    from tests.conftest import EXAMPLES
    from tests.views.conftest import cli

    table = json.loads((EXAMPLES / "tables" / "western.json").read_text())
    for key, letter in (("handId", "h"), ("tableId", "t"), ("roundId", "r"), ("dealerId", "d")):
        table[key] = letter * 128
    for i, p in enumerate(table["players"]):
        p["playerId"] = "PQRS"[i] * 64
    request = tmp_path / "long.json"
    request.write_text(json.dumps(table))
    code, text = cli("settle", str(request), "--local", "--output", "html")
    assert code == 0
    path = tmp_path / "long.html"
    path.write_text(text, encoding="utf-8")
    page = module_tab.open(path)
    pages, printed_text = printed(module_tab, page, "longest-ids")  # asserts: nothing overflows
    assert pages <= 2
    assert all(squeeze(p["playerId"]) in squeeze(printed_text) for p in table["players"])
