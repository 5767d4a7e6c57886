"""The client's languages without a browser: the catalogs are complete and current, the labels
are the contract's, money follows CLDR with the currency's ISO 4217 minor units, the CLI speaks
each language (``--lang``, the environment), and a casino adds its own language with a catalog
folder and no code."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog as PoCatalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po, write_po
from google.protobuf.descriptor import Descriptor, EnumDescriptor

import cpsettle_client.i18n as i18n
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_client.i18n import Language, LanguageProblem, labels, money
from cpsettle_service.domain.naturals import Natural
from tests.conftest import EXAMPLES, ROOT

I18N = ROOT / "clients" / "python" / "cpsettle_client" / "i18n"
TRANSLATED = ("es", "it", "zh_Hans", "zh_Hant")  # every message; English: the msgids
FIELD = re.compile(r"\{(\w+)\}")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def clean_languages(monkeypatch: pytest.MonkeyPatch) -> Any:
    """No language from this machine's environment, no casino folder; caches forgotten after."""
    for name in (
        "CPSETTLE_LANG",
        "CPSETTLE_LOCALE_DIR",
        "LANGUAGE",
        "LC_ALL",
        "LC_MESSAGES",
        "LANG",
    ):
        monkeypatch.delenv(name, raising=False)
    i18n.clear_cache()
    yield monkeypatch
    i18n.clear_cache()


def po(lang: str) -> PoCatalog:
    with (I18N / "locale" / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=lang)


def keys(catalog: PoCatalog) -> set[tuple[str | None, str]]:
    return {(m.context, m.id if isinstance(m.id, str) else m.id[0]) for m in catalog if m.id}


# --------------------------------------------------------------------------- the catalogs


def test_the_template_is_what_the_code_asks_for() -> None:
    """messages.pot holds exactly the messages pybabel finds in the code today (run
    ``scripts/catalogs extract`` and ``update`` after changing a message or the contract)."""
    with (I18N / "babel.cfg").open() as f:
        # babel leaves parse_mapping_cfg unannotated
        method_map, options_map = parse_mapping_cfg(f)  # type: ignore[no-untyped-call]
    found = set()
    for _, _, message, _, context in extract_from_dir(
        str(ROOT),
        method_map,
        options_map,
        keywords={
            "_": None,
            "ngettext": (1, 2),
            "pgettext": ((1, "c"), 2),
            "N_": None,
            "marked": (2,),
            "marked_n": (2, 3),
        },
    ):
        found.add((context, message if isinstance(message, str) else message[0]))
    with (I18N / "messages.pot").open("rb") as f:
        template = keys(read_po(f))
    assert found == template


def test_every_language_translates_every_message() -> None:
    with (I18N / "messages.pot").open("rb") as f:
        template = keys(read_po(f))
    for lang in ("en", *TRANSLATED):
        catalog = po(lang)
        assert keys(catalog) == template, lang
        # the plural rule is CLDR's (Babel's table), as pybabel init wrote it
        assert catalog.plural_forms == get_plural(lang).plural_forms, lang
        if lang == "en":
            continue
        for m in catalog:
            if not m.id:
                continue
            assert not m.fuzzy, (lang, m.id)
            forms = m.string if isinstance(m.string, tuple) else (m.string,)
            assert len(forms) == (catalog.num_plurals if isinstance(m.id, tuple) else 1)
            msgid = m.id if isinstance(m.id, str) else m.id[1]
            assert isinstance(msgid, str), msgid
            wanted = set(FIELD.findall(msgid))
            for form in forms:
                assert form and isinstance(form, str), (lang, m.id)
                assert set(FIELD.findall(form)) <= wanted | {"n"}, (lang, m.id, form)
                assert set(FIELD.findall(form)) >= wanted - {"n"}, (lang, m.id, form)


# --------------------------------------------------------------------------- labels


def _enums_of(message: Descriptor, seen: set[str]) -> set[EnumDescriptor]:
    """Walk the contract here too (not with the code under test): every enum a message holds."""
    out: set[EnumDescriptor] = set()
    if message.full_name in seen:
        return out
    seen.add(message.full_name)
    for field in message.fields:
        if field.enum_type is not None:
            out.add(field.enum_type)
        elif field.message_type is not None and field.message_type.file.package == "cpsettle.v1":
            out |= _enums_of(field.message_type, seen)
    return out


def test_every_code_of_a_settlement_has_a_name_in_every_language() -> None:
    enums = _enums_of(pb.Settlement.DESCRIPTOR, set()) | _enums_of(
        pb.EvaluateArrangementResponse.DESCRIPTOR, set()
    )
    codes = {v.name for e in enums for v in e.values if v.number}
    assert {"CAP_PAYER_STACK", "LINE_ITEM_KIND_SCOOP_BONUS", "ROW_FRONT"} <= codes
    with (I18N / "messages.pot").open("rb") as f:
        contexts = {m.context for m in read_po(f) if m.context}
    assert contexts == codes | {n.value for n in Natural}  # the template has them all
    for lang in ("en", *TRANSLATED):
        table = labels.labels(Language.get(lang).catalog)
        for e in enums:
            assert table[e.values_by_number[0].name] == ""  # *_UNSPECIFIED: nothing to show
        for code in codes | {n.value for n in Natural}:
            name = table[code]
            assert name and code not in name and "_" not in name, (lang, code, name)
        if lang != "en":  # translated, not the English words
            english = labels.labels(Language.get("en").catalog)
            same = {c for c in codes if table[c] == english[c]}
            assert same <= {
                "SIGNATURE_ALGORITHM_ED25519",
                "HAND_CLASS_FULL_HOUSE",
                "HAND_CLASS_FOUR_OF_A_KIND",
                "PLAYER_STATUS_NATURAL",
                "PAIR_KIND_NATURAL",
                "LINE_ITEM_KIND_NATURAL",
            }, (lang, same)
    en = Language.get("en")
    assert en.label("CAP_PAYER_STACK") == "Payer’s stack"  # the English catalog's words
    assert en.label("CAP_UNSPECIFIED") == ""
    assert en.label("SOME_NEW_CODE") == "Some new code"  # a newer server's: its words


# --------------------------------------------------------------------------- money


@pytest.mark.parametrize(
    ("minor", "currency", "lang", "signed", "shown"),
    [
        (123456, "EUR", "en", False, "€1,234.56"),
        (123456, "EUR", "es", False, "1.234,56\u00a0€"),
        (123456, "EUR", "it", False, "1.234,56\u00a0€"),
        (-300, "EUR", "zh_Hans", False, "-€3.00"),
        (300, "EUR", "zh_Hant", True, "+€3.00"),
        (300, "EUR", "es", True, "+3,00\u00a0€"),
        (0, "EUR", "en", True, "€0.00"),
        (800, "JPY", "en", False, "¥800"),
        (800, "JPY", "zh_Hans", False, "JP¥800"),
        (800, "JPY", "es", False, "800\u00a0JPY"),
        (-1234, "KWD", "en", False, "-KWD1.234"),  # ISO 4217: 3 minor digits
        (5, "CLF", "it", False, "0,0005\u00a0CLF"),  # ISO 4217: 4 minor digits
        (1000000, "XXX", "en", True, "+1,000,000\u00a0XXX"),  # no currency: whole units
        (250, "", "en", False, "250\u00a0XXX"),
    ],
)
def test_money_by_cldr_with_iso_minor_units(
    minor: int, currency: str, lang: str, signed: bool, shown: str
) -> None:
    assert money.money(minor, currency, lang, signed=signed) == shown


def test_money_never_floats() -> None:
    big = 9_007_199_254_740_993  # past 2^53: a float would round it
    assert money.money(big, "EUR", "en") == "€90,071,992,547,409.93"
    assert money.money(-big, "JPY", "en") == "-¥9,007,199,254,740,993"


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def eur_table(tmp_path: Path) -> Path:
    table = json.loads((EXAMPLES / "tables" / "western.json").read_text())
    table["currency"] = "EUR"
    path = tmp_path / "eur.json"
    path.write_text(json.dumps(table))
    return path


@pytest.mark.parametrize(
    ("lang", "header", "status", "net"),
    [
        ("en", ["Player", "Seat", "Units", "Money", "Rake", "Status"], "Regular", "+€6.00"),
        (
            "es",
            ["Jugador", "Asiento", "Unidades", "Dinero", "Rake", "Estado"],
            "Normal",
            "+6,00\u00a0€",
        ),
        (
            "it",
            ["Giocatore", "Posto", "Unità", "Denaro", "Rake", "Stato"],
            "Regolare",
            "+6,00\u00a0€",
        ),
        ("zh-Hans", ["玩家", "座号", "水数", "金额", "抽水", "状态"], "正常", "+€6.00"),
        ("zh-TW", ["玩家", "座號", "水數", "金額", "抽水", "狀態"], "正常", "+€6.00"),
    ],
)
def test_settle_table_in_each_language(
    capsys: pytest.CaptureFixture[str],
    clean_languages: Any,
    eur_table: Path,
    lang: str,
    header: list[str],
    status: str,
    net: str,
) -> None:
    code, out, _ = run(capsys, "settle", str(eur_table), "--local", "--lang", lang)
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == header[:1])
    assert lines[at].split() == header
    rows = lines[at + 2 : at + 6]
    b = next(r for r in rows if r.startswith("B "))
    assert net in b and b.rstrip().endswith(status)
    # the columns line up in a terminal: every cell ends in the same column as its header's
    # (numbers) or starts where it does (text), counting a Chinese character as two columns
    from cpsettle_client.render import width

    def cells(line: str) -> list[tuple[int, int]]:
        spans, column = [], 0
        for part in re.split(r"(\s{2,})", line):
            if part and not part.isspace():
                spans.append((column, column + width(part)))
            column += width(part)
        return spans

    heads = cells(lines[at])
    for row in rows:
        spans = cells(row)
        assert spans[0][0] == heads[0][0] and spans[-1][0] == heads[-1][0]
        assert [end for _, end in spans[1:5]] == [end for _, end in heads[1:5]], row


def test_language_from_the_environment_and_refused_languages(
    capsys: pytest.CaptureFixture[str], clean_languages: Any, eur_table: Path
) -> None:
    clean_languages.setenv("LANG", "it_IT.UTF-8")
    assert "Giocatore" in run(capsys, "settle", str(eur_table), "--local")[1]
    clean_languages.setenv("LANGUAGE", "de:es")  # gettext's list: the first with a catalog
    assert "Jugador" in run(capsys, "settle", str(eur_table), "--local")[1]
    clean_languages.setenv("CPSETTLE_LANG", "zh-Hant")
    assert "玩家" in run(capsys, "settle", str(eur_table), "--local")[1]
    assert "Player" in run(capsys, "settle", str(eur_table), "--local", "--lang", "en")[1]
    for bad in ("xx", "de"):
        code, out, err = run(capsys, "settle", str(eur_table), "--local", "--lang", bad)
        assert code == 2 and not out
        assert f"no catalog for the language '{bad}'" in err and "es, it, zh_Hans" in err
    clean_languages.setenv("CPSETTLE_LANG", "klingon")
    code, _, err = run(capsys, "settle", str(eur_table), "--local")
    assert code == 2 and "klingon" in err
    clean_languages.delenv("CPSETTLE_LANG")
    clean_languages.setenv("LANGUAGE", "de")
    clean_languages.setenv("LANG", "C.UTF-8")  # nothing we have: English, no error
    assert "Player" in run(capsys, "settle", str(eur_table), "--local")[1]


def test_validate_and_evaluate_speak_the_language(
    capsys: pytest.CaptureFixture[str], clean_languages: Any, eur_table: Path
) -> None:
    code, out, _ = run(
        capsys,
        "validate",
        str(eur_table),
        "--local",
        "--lang",
        "es",
        "--proposed",
        "A=-300",
        "B=650",
        "C=-300",
        "D=0",
    )
    assert code == 1
    assert "NO COINCIDE" in out and "Los pagos NO coinciden con la liquidación." in out
    assert "Por qué B debe recibir +6,00\u00a0€:" in out
    code, out, _ = run(
        capsys,
        "evaluate",
        "--preset",
        "ofc",
        "--local",
        "--lang",
        "zh-Hans",
        "--front",
        "Qs Qh 2c",
        "--middle",
        "3c 3d 4h 4s 5c",
        "--back",
        "6s 7s 8s 9s Js",
    )
    assert code == 0
    assert "头道" in out and "倒水：否" in out
    # the hands by name, and Fantasyland's sentence, said from the answer's fields
    assert "一对Q，边牌2" in out and "两对，4和3" in out and "同花，最大J" in out
    assert "玩家以头道一对Q，边牌2进入Fantasyland — 14张牌" in out


def test_the_settlements_sentences_in_two_languages(
    capsys: pytest.CaptureFixture[str], clean_languages: Any, eur_table: Path
) -> None:
    """Every row, line and payment of the table output is said in the reader's language, from
    the settlement's fields; in English it is the signed sentence itself, which the JSON keeps
    whatever the language."""
    code, out, _ = run(
        capsys, "settle", str(eur_table), "--local", "--output", "json", "--lang", "es"
    )
    assert code == 0
    s = json.loads(out)["settlement"]
    signed = [
        line
        for pr in s["pairs"]
        for line in [
            *(r["text"] for r in pr.get("rows", [])),
            *(i["text"] for i in pr.get("items", [])),
            pr["text"],
        ]
    ]
    assert "C owes D 2 units = 200; capped by D's stack: C pays 0" in signed  # still English

    def pair_lines(text: str) -> list[str]:
        return [line[2:] for line in text.splitlines() if line.startswith("  ")]

    english = pair_lines(run(capsys, "settle", str(eur_table), "--local", "--lang", "en")[1])
    assert english == signed
    for lang, said in (
        (
            "es",
            [
                "C debe a D 2 unidades = 2,00\u00a0€; limitado por las fichas de D: "
                "C paga 0,00\u00a0€",
                "Delantera: D (Pareja de jotas, kicker seis) gana a C (Carta alta, as) — D +1",
                "Delantera: C (Carta alta, as) empata con A (Carta alta, as) — sin puntos",
                "Trasera: B (Póker de reinas) gana a C (Full de nueves y cincos) — B +1",
                "Bonificación por ganar 2 de 3: B ganó 3 manos a 0 — B +1",
                "C y A liquidan 0",
            ],
        ),
        (
            "zh-TW",
            [
                "C欠D 2水 = €2.00；受D的籌碼封頂：C支付€0.00",
                "頭道：D（一對J，邊牌6）勝C（烏龍，最大A） — D +1",
                "尾道：C（葫蘆，9帶5）勝D（順子，最大7） — C +1",
                "贏兩道獎勵：D以2道對1道勝出 — D +1",
            ],
        ),
    ):
        lines = pair_lines(run(capsys, "settle", str(eur_table), "--local", "--lang", lang)[1])
        assert len(lines) == len(signed)
        assert not set(lines) & set(signed), lang  # every one of them translated
        for line in said:
            assert line in lines, (lang, line)


# --------------------------------------------------------------------------- a casino's own


def _write_catalog(folder: Path, lang: str, messages: dict[Any, str], compiled: bool) -> None:
    catalog = PoCatalog(locale=lang)
    for key, text in messages.items():
        context, msgid = key if isinstance(key, tuple) else (None, key)
        catalog.add(msgid, text, context=context)
    where = folder / lang / "LC_MESSAGES"
    where.mkdir(parents=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog)
    (where / "messages.po").write_bytes(buffer.getvalue())
    if compiled:
        from babel.messages.mofile import write_mo

        with (where / "messages.mo").open("wb") as f:
            write_mo(f, catalog)


def test_a_casino_adds_a_language_with_a_catalog_folder(
    capsys: pytest.CaptureFixture[str], clean_languages: Any, eur_table: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "casino-catalogs"
    # Filipino, as a .po only (read as it is), and its own word for one of Spanish's
    _write_catalog(
        folder, "fil", {"Player": "Manlalaro", ("ROW_FRONT", "Front"): "Harap"}, compiled=False
    )
    _write_catalog(folder, "es", {"Player": "Apostador"}, compiled=True)
    clean_languages.setenv("CPSETTLE_LOCALE_DIR", str(folder))
    i18n.clear_cache()
    assert i18n.available() == ("en", "es", "it", "zh_Hans", "zh_Hant", "fil")
    code, out, _ = run(capsys, "settle", str(eur_table), "--local", "--lang", "fil-PH")
    assert code == 0
    assert "Manlalaro" in out and "Seat" in out  # the rest falls back to English
    assert "+€6.00" in out  # Filipino money by CLDR, though no one wrote it down
    fil = Language.get("fil")
    assert fil.label("ROW_FRONT") == "Harap" and fil.label("ROW_BACK") == "Back"
    code, out, _ = run(capsys, "settle", str(eur_table), "--local", "--lang", "es")
    assert "Apostador" in out and "Asiento" in out  # the casino's word first, ours after
    # a page made now offers Filipino too
    code, page = run(capsys, "settle", str(eur_table), "--local", "--output", "html")[:2]
    embedded = re.search(r'id="cpsettle-i18n">(.*?)</script>', page, re.S)
    assert embedded is not None, "the page embeds its catalogs"
    data = json.loads(embedded.group(1))
    assert list(data["languages"]) == ["en", "es", "it", "zh_Hans", "zh_Hant", "fil"]
    assert data["languages"]["fil"]["messages"]["Player"] == "Manlalaro"
    assert '"fil": (n) => Number((n != 1))' in page  # its plural rule, CLDR's


def test_a_catalog_whose_plural_rule_is_not_arithmetic_is_refused(
    clean_languages: Any, tmp_path: Path
) -> None:
    """The plural rule becomes code in the page's script: only n, numbers and operators."""
    folder = tmp_path / "bad"
    _write_catalog(folder, "fil", {"Player": "Manlalaro"}, compiled=False)
    path = folder / "fil" / "LC_MESSAGES" / "messages.po"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        re.sub(r"plural=[^\\]*", "plural=alert(document.cookie);", text), encoding="utf-8"
    )
    clean_languages.setenv("CPSETTLE_LOCALE_DIR", str(folder))
    i18n.clear_cache()
    with pytest.raises(LanguageProblem, match="plain gettext expression"):
        Language.get("fil")


def test_a_po_newer_than_its_mo_is_read(clean_languages: Any, tmp_path: Path) -> None:
    import os

    folder = tmp_path / "c"
    _write_catalog(folder, "fil", {"Player": "Luma"}, compiled=True)
    path = folder / "fil" / "LC_MESSAGES" / "messages.po"
    path.write_text(path.read_text(encoding="utf-8").replace('"Luma"', '"Bago"'), encoding="utf-8")
    mo = path.with_suffix(".mo")
    os.utime(mo, (mo.stat().st_mtime - 10, mo.stat().st_mtime - 10))
    clean_languages.setenv("CPSETTLE_LOCALE_DIR", str(folder))
    i18n.clear_cache()
    assert Language.get("fil")._("Player") == "Bago"
