"""Every code a settlement carries, walked through the view in every language: each enum value of
every enum field of a ``Settlement`` (found by walking the contract's descriptors here, in the
test), set into a real settlement and drawn, shows the name cpsettle's catalogs give it
(computed in Python from the same descriptors), never its raw name; ``*_UNSPECIFIED`` shows
nothing; a value this client does not know shows as its words. Plus money and numbers: the
page's script formats like Babel, in every language."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.i18n import Language, labels
from cpsettle_client.views.hand import hand_mount
from cpsettle_client.views.page import Page
from tests.views.conftest import GOLDEN, OTHER_LANGUAGES, Opened, choose_language, settle

LANGUAGES = ("en", *OTHER_LANGUAGES)


def enum_paths(
    message: Descriptor, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], Any]]:
    """(JSON path, enum descriptor) of every enum field a message holds, nested ones too."""
    out = []
    for field in message.fields:
        path = (*prefix, field.json_name)
        if field.enum_type is not None:
            out.append((path, field.enum_type))
        elif field.message_type is not None and field.message_type.file.package == "cpsettle.v1":
            out += enum_paths(field.message_type, path)
    return out


PATHS = enum_paths(pb.Settlement.DESCRIPTOR)
# EvaluatedRow.row inside a pair's row repeats the RowResult's own row: the view draws that one;
# FantasylandResult.row (the row that keeps a player there) is a word of the Fantasyland sentence
NOT_DRAWN = {
    ("pairs", "rows", "first", "row"),
    ("pairs", "rows", "second", "row"),
    ("players", "fantasyland", "row"),
}


def set_at(data: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """The object holding the last key of ``path`` (the first element of every list on the
    way), after setting the value there (a repeated enum: a list of one)."""
    holder: Any = data
    for key in path[:-1]:
        holder = holder[key]
        if isinstance(holder, list):
            holder = holder[0]
    assert isinstance(holder, dict)
    repeated = isinstance(holder.get(path[-1]), list) or path[-1].endswith("Reasons")
    holder[path[-1]] = [value] if repeated else value
    return holder


def variant(base: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    s = copy.deepcopy(base)
    holder = set_at(s, path, value)
    if path[-1] == "handClass":
        holder.pop("name", None)  # with no words of its own, the row says its class
    if path == ("players", "foulReasons"):
        s["players"][0]["fouled"] = True  # reasons are shown with the foul
    return s


@pytest.fixture(scope="module")
def walk(
    tmp_path_factory: pytest.TempPathFactory, signing: tuple[Path, Path]
) -> tuple[Path, list[tuple[tuple[str, ...], str]]]:
    """One page with a settlement per (enum field, value), including each *_UNSPECIFIED and
    one value of a newer contract; the cases in page order."""
    pem, _ = signing
    folder = tmp_path_factory.mktemp("labels")
    # a small real settlement (two players: one pair, with a payment), to keep the page light
    request = folder / "r.json"
    case = GOLDEN / "218-shisanshui-2p-scoop-doubles-unitvalue-override.json"
    request.write_text(json.dumps(json.loads(case.read_text())["request"]))
    base = settle(request, pem, folder / "s.json")["settlement"]
    for p in base["players"]:  # one row each, one row and one item in the pair: enough to hold
        p["rows"] = p["rows"][:1]  # every code, and a light page (a view draws what it is given)
    base["pairs"][0]["rows"] = base["pairs"][0]["rows"][:1]
    base["pairs"][0]["items"] = base["pairs"][0]["items"][:1]
    assert base["pairs"][0].get("payer")  # its payment row shows the cap
    page = Page(title="every code")
    cases: list[tuple[tuple[str, ...], str]] = []
    body: list[str] = []
    for path, enum in PATHS:
        if path in NOT_DRAWN:
            continue
        for value in [*(v.name for v in enum.values), f"{labels.prefix(enum)}FROM_A_NEWER_SERVER"]:
            i = len(cases)
            page.embed(f"case-{i}", {"settlement": variant(base, path, value)})
            body.append(f'<div data-case="{i}">{hand_mount(f"case-{i}")}</div>')
            cases.append((path, value))
    page.body = "\n".join(body)
    out = folder / "codes.html"
    out.write_text(page.render(), encoding="utf-8")
    return out, cases


def test_every_enum_field_of_a_settlement_is_drawn() -> None:
    drawn = {path for path, _ in PATHS} - NOT_DRAWN
    assert ("pairs", "cap") in drawn and ("signature", "algorithm") in drawn
    assert len(drawn) >= 9  # status, rows' row and class, reasons, kind, rows', items', cap, …


def test_every_enum_value_in_every_language(
    tab: Opened, walk: tuple[Path, list[tuple[tuple[str, ...], str]]]
) -> None:
    path, cases = walk
    page = tab.open(path)
    for code in LANGUAGES:
        if code != "en":
            choose_language(tab, code)
        lang = Language.get(code)
        table = labels.labels(lang.catalog)
        shown = page.evaluate("""() => [...document.querySelectorAll('[data-case]')].map((c) =>
            [...c.querySelectorAll('[data-code]')].map((e) => [e.dataset.code, e.textContent,
                                                               e.lang]))""")
        assert len(shown) == len(cases)
        for (where, value), codes in zip(cases, shown, strict=True):
            texts = [text.strip() for c, text, _ in codes if c == value]
            assert texts, (code, where, value)  # drawn, and says which code it is
            if value.endswith("_UNSPECIFIED"):
                # nothing, a dash (no cap), or the view's word for it ("no signature")
                absent = ("", "\u2014", lang._("no signature"))
                assert all(t in absent for t in texts), (code, where, texts)
            elif value.endswith("FROM_A_NEWER_SERVER"):
                words = value.replace("_", " ").lower()
                assert all(t.lower() == words for t in texts), (code, where, texts)
            else:
                assert table[value] and value not in table[value]
                assert table[value] in texts, (code, where, value, texts)  # the one set here
                if code != "en":  # each the code's name, or a hand said by name in the language
                    # ("Full de reyes y treses"; English rows say the service's own words)
                    assert all(
                        text.strip() == table[value] or tag == lang.tag
                        for c, text, tag in codes
                        if c == value
                    ), (code, where, codes)
        text = page.evaluate("document.querySelector('main').textContent")
        assert "nspecified" not in text and "UNSPECIFIED" not in text
        assert not any(v in text for _, v in cases if not v.endswith("FROM_A_NEWER_SERVER"))
        if code == "zh_Hant":
            tab.shot("codes-zh-Hant", full_page=False)


AMOUNTS = [
    "0",
    "1",
    "-1",
    "7",
    "99",
    "100",
    "-100",
    "999",
    "1000",
    "-1000",
    "12345",
    "1234567",
    "-987654321",
    "100000000000",
    "9007199254740993",
    "-9223372036854775808",
]
CURRENCIES = ["EUR", "JPY", "KWD", "CLF", "XXX", "CNY", "HKD", "TWD", "PHP", "USD"]


def test_the_page_formats_money_like_babel(tab: Opened, tmp_path: Path) -> None:
    """The page's own formatter (view.js, from the templates cpsettle embeds) against Babel's, for
    every language, currency, amount and sign."""
    page = Page(title="money")
    page.currencies.update(CURRENCIES)
    out = tmp_path / "money.html"
    out.write_text(page.render(), encoding="utf-8")
    p = tab.open(out)
    for code in LANGUAGES:
        if code != "en":
            choose_language(tab, code)
        lang = Language.get(code)
        shown = p.evaluate(f"""() => {json.dumps(CURRENCIES)}.map((c) =>
            {json.dumps(AMOUNTS)}.map((a) => [cpsettleView.money(a, c),
                                               cpsettleView.money(a, c, true)]))""")
        expected = [
            [[lang.money(int(a), c), lang.money(int(a), c, signed=True)] for a in AMOUNTS]
            for c in CURRENCIES
        ]
        assert shown == expected, code
        numbers = p.evaluate(
            f"() => {json.dumps(AMOUNTS)}.map((a) => cpsettleView.number(a, true))"
        )
        assert numbers == [lang.number(int(a), signed=True) for a in AMOUNTS], code
