"""The hand page in a real browser: every preset's sample table drawn as a person sees it (rows,
cards, winner marks, nets) with a green verdict, and the verdict turning red when one card of the
embedded settlement is changed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.i18n import Language
from tests.conftest import EXAMPLES
from tests.views.conftest import Opened, cli, settle

TABLES = sorted((EXAMPLES / "tables").glob("*.json"))
ENGLISH = Language.get("en")
EMBEDDED = re.compile(
    r'(<script type="application/json" id="cpsettle-settlement">)(.*?)(</script>)', re.DOTALL
)


def make_page(
    tmp_path: Path, table: Path, pem: Path | None, keys: Path | None, name: str = "hand"
) -> tuple[Path, dict[str, Any]]:
    stored = settle(table, pem, tmp_path / f"{name}.json")
    page = tmp_path / f"{name}.html"
    args = ["view", str(tmp_path / f"{name}.json"), "-o", str(page)]
    if keys is not None:
        args += ["--keys", str(keys)]
    code, out = cli(*args)
    assert code == 0 and str(page) in out
    return page, stored["settlement"]


def edit_embedded(page: Path, change: Any) -> None:
    """Change the settlement embedded in a page file, as someone with a text editor could."""
    text = page.read_text(encoding="utf-8")
    head, body, tail = EMBEDDED.search(text).groups()  # type: ignore[union-attr]
    stored = json.loads(body)
    change(stored["settlement"])
    new = json.dumps(stored, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    page.write_text(text.replace(head + body + tail, head + new + tail), encoding="utf-8")


def other_card(card: str) -> str:
    """Another card of the same suit (a full table may hold all 52: a duplicate is fine here)."""
    return ("K" if card[0] == "A" else "A") + card[1:]


def check_what_a_person_sees(page: Any, s: dict[str, Any]) -> None:
    """The players' rows with their cards, and each pair's winner marked, as the settlement says."""
    players = page.locator("article.player")
    assert players.count() == len(s["players"])
    for i, p in enumerate(s["players"]):
        card = players.nth(i)
        assert p["playerId"] in card.locator("h3").inner_text()
        rows = card.locator("tr[data-row]")
        # a natural is settled on its thirteen cards: the settlement (and the page) has no rows
        assert rows.count() == len(p.get("rows", [])) == (0 if p.get("natural") else 3)
        if p.get("natural"):
            assert "Natural" in card.locator(".badges").inner_text()
        for j, row in enumerate(p.get("rows", [])):
            shown = rows.nth(j).locator(".card").evaluate_all("els => els.map(e => e.dataset.card)")
            assert shown == row["cards"]
            # readable without colour: the suit's symbol and its name in words
            words = rows.nth(j).locator(".card .sr").all_inner_texts()
            assert all(re.fullmatch(r"\w+ of (spades|hearts|diamonds|clubs)", w) for w in words)
        # money with its currency, by CLDR's rules (Babel's formatting, the page's own in JS)
        assert card.locator(".net .money").inner_text() == ENGLISH.money(
            int(p.get("netMoney", "0")), s.get("currency", "XXX"), signed=True
        )
    pairs = page.locator("details.pair")
    assert pairs.count() == len(s["pairs"])
    for i, pr in enumerate(s["pairs"]):
        pair = pairs.nth(i)
        for row in pr.get("rows", []):
            tr = pair.locator(f'tr[data-row="{row["row"]}"]')
            winners = tr.locator("td.win")
            if row.get("winner"):
                assert winners.count() == 1
                assert winners.get_attribute("data-side") == row["winner"]
                assert "wins" in winners.inner_text()
            else:
                assert winners.count() == 0
            assert row["text"] in tr.inner_text()
        kinds = pair.locator(".items .item-kind").all_inner_texts()
        assert kinds == [ENGLISH.label(it["kind"]) for it in pr.get("items", [])]


@pytest.mark.parametrize("table", TABLES, ids=[t.stem for t in TABLES])
def test_each_sample_table_is_drawn_and_verified(
    tab: Opened, tmp_path: Path, table: Path, signing: tuple[Path, Path]
) -> None:
    pem, keys = signing
    path, s = make_page(tmp_path, table, pem, keys)
    page = tab.open(path)
    assert tab.verdicts() == ["valid"]
    verdict = page.locator(".verdict")
    assert "VERIFIED" in verdict.inner_text()
    assert "signature valid under key" in verdict.inner_text()
    check_what_a_person_sees(page, s)
    assert tab.requests == [path.as_uri()]  # nothing else fetched
    tab.shot(f"hand-{table.stem}")
    tab.shot(f"hand-{table.stem}-first-screen", full_page=False)  # docs/img/hand-view.png

    # one card changed in the embedded settlement: the page shows the changed card and says RED
    at = next(i for i, p in enumerate(s["players"]) if p.get("rows"))
    first = s["players"][at]["rows"][0]["cards"][0]
    new = other_card(first)

    def change(settlement: dict[str, Any]) -> None:
        settlement["players"][at]["rows"][0]["cards"][0] = new

    edit_embedded(path, change)
    page = tab.open(path)
    assert tab.verdicts() == ["invalid"]
    text = page.locator(".verdict").inner_text()
    assert "NOT VALID" in text and "settlement_digest" in text and "content was changed" in text
    shown = page.locator("article.player").nth(at).locator("tr[data-row] .card").first
    assert shown.get_attribute("data-card") == new  # what is shown is what was checked
    colour = page.locator(".verdict").evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour == "rgb(255, 235, 233)"  # the red panel
    tab.shot(f"hand-{table.stem}-tampered")


def test_without_keys_it_says_the_signature_was_not_checked_then_checks_a_loaded_file(
    tab: Opened, tmp_path: Path, signing: tuple[Path, Path]
) -> None:
    pem, keys = signing
    path, _ = make_page(tmp_path, EXAMPLES / "tables" / "western.json", pem, None)
    page = tab.open(path)
    assert tab.verdicts() == ["unchecked"]
    text = page.locator(".verdict").inner_text()
    assert "SIGNATURE NOT CHECKED" in text and "signature NOT checked: no key set" in text
    assert "content digest recomputed here" in text  # the digests were checked all the same
    page.set_input_files("#key-file", str(keys))  # the published key file, through the picker
    tab.wait_until("document.querySelector('.verdict').dataset.verdict === 'valid'")
    assert "the file keys.json, loaded here" in page.locator(".verdict").inner_text()


def test_a_key_set_without_the_signing_key_and_an_unsigned_settlement_are_red(
    tab: Opened, tmp_path: Path, signing: tuple[Path, Path]
) -> None:
    pem, keys = signing
    other = tmp_path / "other-keys.json"
    key = json.loads(keys.read_text())
    key["keys"][0]["keyId"] = "someone-else"
    other.write_text(json.dumps(key))
    path, _ = make_page(tmp_path, EXAMPLES / "tables" / "one-six.json", pem, other, "other")
    tab.open(path)
    assert tab.verdicts() == ["invalid"]
    assert "not in the key set" in tab.page.locator(".verdict").inner_text()

    path, _ = make_page(tmp_path, EXAMPLES / "tables" / "one-six.json", None, keys, "unsigned")
    tab.open(path)
    assert tab.verdicts() == ["invalid"]
    assert "(the settlement says: Not signed)" in tab.page.locator(".verdict").inner_text()


def test_money_shown_is_the_settlement_s_even_when_edited(
    tab: Opened, tmp_path: Path, signing: tuple[Path, Path]
) -> None:
    """A view, not an engine: an edited net is shown as stored, and the verdict says RED."""
    pem, keys = signing
    path, _ = make_page(tmp_path, EXAMPLES / "tables" / "western.json", pem, keys)

    def change(settlement: dict[str, Any]) -> None:
        settlement["players"][0]["netMoney"] = "999999"
        settlement["players"][0]["playerId"] = "<b id=injected>x</b>"

    edit_embedded(path, change)
    page = tab.open(path)
    assert tab.verdicts() == ["invalid"]
    first = page.locator("article.player").first
    assert first.locator(".net .money").inner_text() == "+999,999\u00a0XXX"  # XXX: no minor unit
    assert "<b id=injected>x</b>" in first.locator("h3").inner_text()  # text, never markup
    assert page.locator("#injected").count() == 0


def test_four_colour_deck_keyboard_zoom_and_print(
    tab: Opened, tmp_path: Path, signing: tuple[Path, Path]
) -> None:
    pem, keys = signing
    path, _ = make_page(tmp_path, EXAMPLES / "tables" / "western.json", pem, keys)
    page = tab.open(path)
    colour = "e => getComputedStyle(e).color"
    diamond = page.locator(".card.suit-d").first
    club = page.locator(".card.suit-c").first
    assert diamond.evaluate(colour) == "rgb(192, 20, 43)"  # red, like hearts
    # keyboard: Tab from the top reaches the skip link, the language, then the four-colour toggle
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "language"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "four-colour"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # a visible focus ring
    page.keyboard.press("Space")
    assert diamond.evaluate(colour) == "rgb(11, 87, 208)"  # blue
    assert club.evaluate(colour) == "rgb(19, 115, 51)"  # green
    tab.shot("hand-western-four-colour", full_page=False)
    # a pair folds and unfolds from the keyboard
    summary = page.locator("details.pair > summary").first
    summary.focus()
    page.keyboard.press("Enter")
    assert page.locator("details.pair").first.get_attribute("open") is None
    page.keyboard.press("Enter")
    assert page.locator("details.pair").first.get_attribute("open") is not None

    # 200 % zoom of the laptop window: half the CSS width; nothing runs off to the side
    page.set_viewport_size({"width": 640, "height": 400})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    tab.shot("hand-western-200-percent")

    page.emulate_media(media="print")
    assert page.locator(".controls").evaluate("e => getComputedStyle(e).display") == "none"
    assert page.locator(".verdict").is_visible()


def test_the_request_s_digest_and_settle_output_html(
    tab: Opened, tmp_path: Path, signing: tuple[Path, Path]
) -> None:
    pem, _ = signing
    table = EXAMPLES / "tables" / "ofc.json"
    settle(table, pem, tmp_path / "s.json")
    page_file = tmp_path / "with-request.html"
    assert cli("view", str(tmp_path / "s.json"), str(table), "-o", str(page_file))[0] == 0
    page = tab.open(page_file)
    assert "matches the settlement's request digest" in page.locator("section.request").inner_text()

    changed = json.loads(table.read_text())
    changed["handId"] = "another-hand"
    other = tmp_path / "other-request.json"
    other.write_text(json.dumps(changed))
    assert cli("view", str(tmp_path / "s.json"), str(other), "-o", str(page_file))[0] == 0
    page = tab.open(page_file)
    assert "does NOT match" in page.locator("section.request").inner_text()

    code, text = cli("settle", str(table), "--local", "--output", "html")
    assert code == 0 and text.startswith("<!doctype html>")
    direct = tmp_path / "direct.html"
    direct.write_text(text, encoding="utf-8")
    page = tab.open(direct)
    assert tab.verdicts() == ["unchecked"]  # unsigned and no keys: said, not hidden
    assert page.locator("article.player").count() == len(json.loads(table.read_text())["players"])


def test_view_refuses_an_unusable_key_set(tmp_path: Path, signing: tuple[Path, Path]) -> None:
    pem, _ = signing
    settle(EXAMPLES / "tables" / "western.json", pem, tmp_path / "s.json")
    bad = tmp_path / "bad-keys.json"
    bad.write_text('{"keys": [{"keyId": "k", "algorithm": "Ed25519", "publicKey": "00"}]}')
    code, _ = cli(
        "view", str(tmp_path / "s.json"), "-o", str(tmp_path / "x.html"), "--keys", str(bad)
    )
    assert code == 2 and not (tmp_path / "x.html").exists()

    dup = tmp_path / "dup.json"
    text = (tmp_path / "s.json").read_text()
    dup.write_text(text.replace('"settlement": {', '"settlement": {"rake": "5", "rake": "0", ', 1))
    code, _ = cli("view", str(dup), "-o", str(tmp_path / "y.html"))
    assert code == 2 and not (tmp_path / "y.html").exists()  # a key named twice: refused
