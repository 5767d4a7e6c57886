"""A real browser for the view tests: Debian's chromium driven by Playwright (the PyPI package,
never a browser download: it launches /usr/bin/chromium). Pages are made by the real CLI and
settled by the real engine; screenshots go to tmp/artifacts/views (or $CPSETTLE_ARTIFACTS).

Without a browser the tests skip with the reason, except in CI (CI=true), where they fail:
.ci/run installs chromium itself.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.fixed_keys import fixed_test_key

# The launch flags that work in a container as root, offline.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP = {"width": 1280, "height": 800}  # a 13-inch laptop's browser window
ARTIFACTS = Path(os.environ.get("CPSETTLE_ARTIFACTS") or ROOT / "tmp" / "artifacts") / "views"


def chromium_path() -> str | None:
    return (
        os.environ.get("CPSETTLE_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} — in CI the browser tests must run (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    exe = chromium_path()
    if exe is None:
        _unavailable("no chromium installed (apt-get install chromium); see README, 'Views'")
    with sync_playwright() as p:
        # launch() gives the browser a fresh profile (user data dir) of its own each time
        b = p.chromium.launch(executable_path=exe, args=FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class Opened:
    """A page opened from a file, with every request and script error it made recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: Path) -> Any:
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=20_000)
        assert not self.errors, self.errors
        return self.page

    def wait_until(self, expression: str, seconds: float = 15.0) -> None:
        """Poll ``expression`` until true. (``page.wait_for_function`` evaluates its argument
        as a string, which the page's Content-Security-Policy rightly forbids.)"""
        deadline = time.monotonic() + seconds
        while not self.page.evaluate(expression):
            assert time.monotonic() < deadline, f"still false after {seconds} s: {expression}"
            self.page.wait_for_timeout(50)

    def verdicts(self) -> list[str]:
        return list(
            self.page.locator(".verdict").evaluate_all("els => els.map(e => e.dataset.verdict)")
        )

    def shot(self, name: str, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def tab(browser: Any) -> Iterator[Opened]:
    context = browser.new_context(viewport=LAPTOP)
    try:
        yield Opened(context.new_page())
    finally:
        context.close()


@pytest.fixture(scope="module")
def module_tab(browser: Any) -> Iterator[Opened]:
    """One tab for a module's many pages (a new browser context costs more than a page)."""
    context = browser.new_context(viewport=LAPTOP)
    try:
        yield Opened(context.new_page())
    finally:
        context.close()


def cli(*args: str) -> tuple[int, str]:
    """Run the real ``cpsettle`` command in this process: (exit code, standard output)."""
    from cpsettle_client.cli import main

    out = StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="session")
def signing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fixed TEST signing key (PEM) and its published key set (keys.json)."""
    folder = tmp_path_factory.mktemp("keys")
    pem = folder / "key.pem"
    pem.write_bytes(fixed_test_key(1))
    code, out = cli("keys", "show", "--local", "--signing-key-file", str(pem))
    assert code == 0
    keys = folder / "keys.json"
    keys.write_text(out, encoding="utf-8")
    assert json.loads(out)["keys"][0]["algorithm"] == "SIGNATURE_ALGORITHM_ED25519"
    return pem, keys


def settle(table: Path, pem: Path | None, out: Path) -> dict[str, Any]:
    """Settle a table with the engine in process (signed when ``pem``); the stored JSON."""
    args = ["settle", str(table), "--local", "--output", "json"]
    if pem is not None:
        args += ["--signing-key-file", str(pem)]
    code, text = cli(*args)
    assert code == 0
    out.write_text(text, encoding="utf-8")
    stored: dict[str, Any] = json.loads(text)
    return stored


# --------------------------------------------------------------------------- languages and cases

GOLDEN = ROOT / "tests" / "golden" / "cases"
CASES = sorted(GOLDEN.glob("*.json"))
OTHER_LANGUAGES = ("es", "it", "zh_Hans", "zh_Hant")


def choose_language(tab: Opened, code: str) -> None:
    """Pick a language with the page's own control, as a reader does; wait for the redraw."""
    tab.page.select_option("#language", code)
    tab.wait_until(f"document.documentElement.lang === {json.dumps(code.replace('_', '-'))}")


@pytest.fixture(scope="session")
def golden_pages(
    tmp_path_factory: pytest.TempPathFactory, signing: tuple[Path, Path]
) -> dict[str, tuple[Path, dict[str, Any], dict[str, Any]]]:
    """Every golden case settled (signed) by the engine in process and made into a hand page
    with its request by the real ``cpsettle view`` (keys embedded): stem -> (page, the stored
    settlement, the case)."""
    pem, keys = signing
    folder = tmp_path_factory.mktemp("golden-pages")
    out: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]] = {}
    for path in CASES:
        case = json.loads(path.read_text(encoding="utf-8"))
        request = folder / f"{path.stem}.request.json"
        request.write_text(json.dumps(case["request"]), encoding="utf-8")
        stored = settle(request, pem, folder / f"{path.stem}.json")
        page = folder / f"{path.stem}.html"
        code, _ = cli(
            "view",
            str(folder / f"{path.stem}.json"),
            str(request),
            "-o",
            str(page),
            "--keys",
            str(keys),
        )
        assert code == 0
        out[path.stem] = (page, stored["settlement"], case)
    return out
