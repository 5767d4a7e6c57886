"""One self-contained HTML file: the template filled with the stylesheet, the scripts and the
embedded JSON (settlements, the key set, the languages), with nothing to fetch.

The page's words are in every language cpsettle has a catalog for (cpsettle_client.i18n): the
page embeds each language's messages, the names of the settlement's codes, and CLDR's formats for
the currencies it shows; the page's script draws in the language the reader picks (by default
the browser's, or the one the page was made for with ``--lang``). What Python writes into the
page is written in the page's language and marked (``marked``: ``data-t``, ``data-money``,
``data-number``) so the script can say it again in another.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from babel.core import get_global

from ..i18n import Language, available
from ..i18n import labels as i18n_labels
from ..i18n import money as i18n_money
from ..i18n.catalogs import DEFAULT, catalog

# assets/proof.mjs is a symbolic link to clients/js/proof.mjs, the Node checker's own file (the
# wheel holds its content): one copy of the digest rule, tested by the vectors in both places.
ASSETS = resources.files(__package__) / "assets"
I18N_ID = "cpsettle-i18n"

_EXPORT = re.compile(r"^export (?=const |class |function |async function )", re.MULTILINE)


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


@cache
def proof_script() -> str:
    """clients/js/proof.mjs with its ``export`` keywords taken off, to inline in a page."""
    return _EXPORT.sub("", _asset("proof.mjs"))


@cache
def _parts() -> tuple[Template, str, str]:
    script = proof_script() + "\n" + _asset("sentences.js") + "\n" + _asset("view.js")
    if "</script" in script.lower():  # would end the inline script early
        raise RuntimeError("a view script contains '</script'")
    return Template(_asset("page.html")), _asset("view.css"), script


def script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: every ``<`` escaped as ``\\u003c``
    (the same value for JSON.parse, and no ``</script>`` can end the element early)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


# --------------------------------------------------------------------------- marked words


def shown_arg(lang: Language, value: Any) -> str:
    """An argument of a marked message as shown (the page's script does the same: view.js,
    ``shownArg``): ``{"number": n}``, ``{"money": minor, "currency": code}`` or text."""
    if isinstance(value, dict):
        if "money" in value:
            return lang.money(
                int(value["money"]),
                str(value.get("currency", "")),
                signed=bool(value.get("signed")),
            )
        if "number" in value:
            return lang.number(int(value["number"]), signed=bool(value.get("signed")))
    return str(value)


def _attrs(**data: Any) -> str:
    return "".join(
        f' data-{k}="{html.escape(v if isinstance(v, str) else json.dumps(v))}"'
        for k, v in data.items()
        if v is not None
    )


def marked(
    lang: Language, message: str, /, *, tag: str = "span", cls: str = "", **args: Any
) -> str:
    """``message`` translated into ``lang`` with its ``{fields}`` filled, as an element the
    page's script says again in the reader's language. Escaped: safe for any argument."""
    shown = lang._(message, **{k: shown_arg(lang, v) for k, v in args.items()})
    a = json.dumps(args, ensure_ascii=False, separators=(",", ":")) if args else None
    klass = f' class="{cls}"' if cls else ""
    return f"<{tag}{klass}{_attrs(t=message, a=a)}>{html.escape(shown)}</{tag}>"


def marked_n(
    lang: Language, singular: str, plural: str, n: int, /, *, tag: str = "span", **args: Any
) -> str:
    """The plural form of a message for ``n`` (``{n}`` its number), marked like ``marked``."""
    shown = lang.ngettext(singular, plural, n, **{k: shown_arg(lang, v) for k, v in args.items()})
    a = json.dumps(args, ensure_ascii=False, separators=(",", ":")) if args else None
    return f"<{tag}{_attrs(t=singular, plural=plural, n=str(n), a=a)}>{html.escape(shown)}</{tag}>"


def money_html(lang: Language, minor: int | str, currency: str, *, signed: bool = False) -> str:
    """An amount (minor units of ``currency``) as the page shows it, in any language."""
    code = currency or "XXX"
    return (
        f'<span class="money"{_attrs(money=str(int(minor)), currency=code)}'
        f"{_attrs(signed='true') if signed else ''}>"
        f"{html.escape(lang.money(int(minor), code, signed=signed))}</span>"
    )


def number_html(lang: Language, value: int | str, *, signed: bool = False) -> str:
    return (
        f"<span{_attrs(number=str(int(value)))}{_attrs(signed='true') if signed else ''}>"
        f"{html.escape(lang.number(int(value), signed=signed))}</span>"
    )


# --------------------------------------------------------------------------- languages


def _likely(codes: list[str]) -> dict[str, str]:
    """CLDR's likely subtags for the languages written in a script of their own (zh: zh-TW is
    zh_Hant_TW), so the page's script finds Traditional Chinese for a browser set to zh-TW."""
    bases = {c.split("_")[0] for c in codes if any(len(p) == 4 for p in c.split("_")[1:])}
    table: Any = get_global("likely_subtags")
    return {k: v for k, v in sorted(table.items()) if k.split("_")[0] in bases}


def languages_data(page: Language, fixed: bool, currencies: set[str]) -> dict[str, Any]:
    """What the page's script needs to speak every available language (see view.js)."""
    codes = list(available())
    languages: dict[str, Any] = {}
    for code in codes:
        cat = catalog(code)
        lang = Language.get(code)
        languages[code] = {
            "code": code,
            "tag": cat.tag,
            "name": lang.name,
            "messages": cat.messages(),
            "labels": i18n_labels.labels(cat),
            "number": i18n_money.number_template(cat.locale),
            "lists": dict(cat.locale.list_patterns["standard"]),
            "money": {
                c: i18n_money.money_template(c, cat.locale) for c in sorted(currencies | {"XXX"})
            },
        }
    return {
        "page": page.code,
        "fixed": fixed,
        "fallback": DEFAULT,
        "languages": languages,
        "likely": _likely(codes),
    }


def plural_rules() -> str:
    """The catalogs' plural rules as the script's ``PLURAL_RULES`` (the expressions are checked
    to be plain arithmetic on n when a catalog is read: i18n/catalogs.py)."""
    rules = ", ".join(
        f"{json.dumps(code)}: (n) => Number({catalog(code).plural})" for code in available()
    )
    return f"const PLURAL_RULES = {{ {rules} }};\n"


# --------------------------------------------------------------------------- the page


@dataclass
class Page:
    """A page under construction: its title (marked HTML), body (HTML text), JSON data by
    element id, the currencies its amounts are in, and its language (``fixed``: the maker
    chose it, so it opens in it; else it opens in the browser's language when it has it)."""

    title: str
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    footer: str = ""
    lang: Language = field(default_factory=lambda: Language.get(DEFAULT))
    fixed: bool = False
    currencies: set[str] = field(default_factory=set)

    def embed(self, element_id: str, value: Any) -> str:
        """Embed ``value`` as JSON under ``element_id``; returns the id."""
        self.data[element_id] = value
        return element_id

    def render(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            generator = f"cpsettle {version('cpsettle')}"
        except PackageNotFoundError:
            generator = "cpsettle"
        lang = self.lang
        template, css, script = _parts()
        data = dict(self.data)
        data[I18N_ID] = languages_data(lang, self.fixed, self.currencies)
        embedded = "\n".join(
            f'<script type="application/json" id="{html.escape(k)}">{script_json(v)}</script>'
            for k, v in data.items()
        )
        plain_title = re.sub(r"<[^>]*>", "", self.title)
        return template.substitute(
            lang=lang.tag,
            generator=generator,
            title=plain_title,
            heading=self.title,
            css=css,
            body=self.body,
            data=embedded,
            script=plural_rules() + script,
            skip=marked(lang, "Skip to the content"),
            language=marked(lang, "Language"),
            deck=marked(lang, "Four-colour deck"),
            keyfile=marked(lang, "Published key file:"),
            noscript=marked(
                lang,
                "This page needs JavaScript to draw and verify the "
                "settlement (it runs in this browser only; nothing is sent "
                "anywhere). The settlement is embedded in the page source as JSON.",
            ),
            footer=self.footer
            or marked(
                lang,
                "Made by {generator}. A view of the data "
                "embedded below; it decides nothing and sends nothing.",
                generator=generator,
            ),
        )


__all__ = [
    "I18N_ID",
    "Page",
    "languages_data",
    "marked",
    "marked_n",
    "money_html",
    "number_html",
    "plural_rules",
    "proof_script",
    "script_json",
    "shown_arg",
]
