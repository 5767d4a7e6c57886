"""The page's language: the browser's when the page has it (CLDR's likely subtags: zh-TW reads
Traditional Chinese), English otherwise, the maker's when the page was made with ``--lang``; the
reader's choice from the page's own control, which says again in that language what cpsettle
wrote into the page (title, controls, footer, the request's lines) and redraws the settlement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.i18n import Language
from tests.conftest import EXAMPLES
from tests.views.conftest import LAPTOP, Opened, choose_language, cli, settle


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, signing: tuple[Path, Path]) -> dict[str, Path]:
    pem, keys = signing
    folder = tmp_path_factory.mktemp("languages")
    table = EXAMPLES / "tables" / "western.json"
    settle(table, pem, folder / "s.json")
    pages = {}
    for name, extra in (("browser", []), ("italian", ["--lang", "it"])):
        pages[name] = folder / f"{name}.html"
        code, _ = cli(
            "view",
            str(folder / "s.json"),
            str(table),
            "-o",
            str(pages[name]),
            "--keys",
            str(keys),
            *extra,
        )
        assert code == 0
    return pages


def opened_with(browser: Any, locale: str, path: Path) -> tuple[Any, Opened]:
    context = browser.new_context(viewport=LAPTOP, locale=locale)
    tab = Opened(context.new_page())
    tab.open(path)
    return context, tab


def said(tab: Opened) -> dict[str, str]:
    p = tab.page
    return {
        "lang": p.evaluate("document.documentElement.lang"),
        "title": p.title(),
        "h1": p.locator("h1").inner_text(),
        "payments": p.locator(".payments h2").inner_text(),
        "request": p.locator("section.request h2").inner_text(),
        "footer": p.locator("footer").inner_text(),
        "picked": p.eval_on_selector("#language", "e => e.value"),
    }


@pytest.mark.parametrize(
    ("locale", "code"),
    [
        ("en-US", "en"),
        ("es-MX", "es"),
        ("it-IT", "it"),
        ("zh-CN", "zh_Hans"),
        ("zh-TW", "zh_Hant"),
        ("zh-HK", "zh_Hant"),
        ("de-DE", "en"),
    ],
)
def test_the_browser_s_language_is_the_default(
    browser: Any, made: dict[str, Path], locale: str, code: str
) -> None:
    context, tab = opened_with(browser, locale, made["browser"])
    try:
        lang = Language.get(code)
        shown = said(tab)
        assert shown["lang"] == lang.tag and shown["picked"] == code
        assert shown["h1"].startswith(lang._("Settlement"))
        assert shown["title"] == shown["h1"]
        assert shown["payments"] == lang._("Payments, in button order")
        assert shown["request"] == lang._("The request")
        assert shown["footer"].startswith(
            lang._(
                "Made by {generator}. A view of the data "
                "embedded below; it decides nothing and sends "
                "nothing.",
                generator="X",
            ).split("X")[0]
        )
        assert tab.verdicts() == ["valid"]
        if code == "zh_Hant":
            tab.shot("hand-western-zh-Hant", full_page=False)
    finally:
        context.close()


def test_a_page_made_for_a_language_opens_in_it_and_the_reader_can_change_it(
    browser: Any, made: dict[str, Path]
) -> None:
    context, tab = opened_with(browser, "zh-TW", made["italian"])
    try:
        italian = Language.get("it")
        assert said(tab)["lang"] == "it"
        assert tab.page.locator(".payments h2").inner_text() == italian._(
            "Payments, in button order"
        )
        # the control lists every language in its own name
        names = tab.page.eval_on_selector_all("#language option", "els => els.map(e => e.text)")
        assert names == [Language.get(c).name for c in ("en", "es", "it", "zh_Hans", "zh_Hant")]
        choose_language(tab, "es")
        spanish = Language.get("es")
        shown = said(tab)
        assert shown["payments"] == spanish._("Payments, in button order")
        assert shown["request"] == spanish._("The request")
        assert (
            tab.page.locator(".verdict")
            .inner_text()
            .startswith("\u2714 " + spanish._("VERIFIED: digests and signature valid"))
        )
        assert tab.verdicts() == ["valid"]  # redrawn, still verified
        prefix = spanish._("Key set embedded in this page: {keys}", keys="\0").split("\0")[0]
        assert tab.page.locator("#key-status").inner_text().startswith(prefix)
    finally:
        context.close()


def test_a_bad_lang_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    settle(EXAMPLES / "tables" / "western.json", None, tmp_path / "s.json")
    code, _ = cli("view", str(tmp_path / "s.json"), "-o", str(tmp_path / "x.html"), "--lang", "tlh")
    assert code == 2 and not (tmp_path / "x.html").exists()
