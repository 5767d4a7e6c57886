"""The pictures of docs/VIEWS.md: run by scripts/screenshots (see there)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP = {"width": 1280, "height": 800}


def cpsettle(*args: str) -> str:
    from cpsettle_client.cli import main

    out = StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    if code not in (0, 1):
        sys.exit(f"cpsettle {' '.join(args)}: exit {code}")
    return out.getvalue()


def signing_key(folder: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = folder / "key.pem"
    pem.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    keys = folder / "keys.json"
    keys.write_text(cpsettle("keys", "show", "--local", "--signing-key-file", str(pem)))
    return pem, keys


def hand_page(folder: Path, pem: Path, keys: Path) -> Path:
    """The sample western table, played for euros, signed; with its request and the key set."""
    table = json.loads((ROOT / "examples" / "tables" / "western.json").read_text())
    table["currency"] = "EUR"
    request = folder / "western-eur.json"
    request.write_text(json.dumps(table))
    settlement = folder / "settlement.json"
    settlement.write_text(
        cpsettle(
            "settle", str(request), "--local", "--output", "json", "--signing-key-file", str(pem)
        )
    )
    page = folder / "hand.html"
    cpsettle("view", str(settlement), str(request), "-o", str(page), "--keys", str(keys))
    return page


def report_page(folder: Path, pem: Path) -> Path:
    """The synthetic day (examples/generate_history.py), its tables in euros and yen."""
    sys.path.insert(0, str(ROOT / "examples"))
    import generate_history

    lines, _ = generate_history.generate(160, seed=18, mistakes=6, invalid=3)
    out = []
    for line in lines:
        try:
            hand = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(hand, dict) and hand.get("tableId"):
            digits = "".join(c for c in hand["tableId"] if c.isdigit()) or "0"
            hand["currency"] = ("EUR", "JPY")[int(digits) % 2]
        out.append(json.dumps(hand))
    history = folder / "day.jsonl"
    history.write_text("\n".join(out) + "\n")
    page = folder / "report.html"
    cpsettle(
        "audit",
        str(history),
        "--local",
        "--signing-key-file",
        str(pem),
        "--progress",
        "none",
        "--html",
        str(page),
    )
    return page


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = (
        os.environ.get("CPSETTLE_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if chromium is None:
        sys.exit("no chromium: apt-get install chromium (or set CPSETTLE_CHROMIUM)")
    fonts = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout
    if not fonts.strip():
        sys.exit("no font with Chinese characters: apt-get install fonts-wqy-zenhei")
    IMG.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pem, keys = signing_key(folder)
        hand, report = hand_page(folder, pem, keys), report_page(folder, pem)
        shots = [
            (hand, "en-GB", "hand-view.png", None),
            (hand, "es-ES", "hand-view-es.png", None),
            (hand, "zh-TW", "hand-view-zh-Hant.png", None),
            (report, "es-ES", "report-es.png", "details.hand"),
            (report, "zh-TW", "report-zh-Hant.png", "details.hand"),
        ]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
            for page_file, locale, name, open_first in shots:
                context = browser.new_context(viewport=LAPTOP, locale=locale)
                page = context.new_page()
                page.goto(page_file.as_uri())
                page.wait_for_selector("body[data-ready=true]", timeout=30_000)
                if open_first:  # the first hand with differences, opened: its hand view too
                    page.locator(f"{open_first} > summary").first.click()
                    page.locator(f"{open_first}").first.scroll_into_view_if_needed()
                    page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(IMG / name), full_page=False)
                print(f"wrote docs/img/{name} ({locale})")
                context.close()
            browser.close()


if __name__ == "__main__":
    main()
