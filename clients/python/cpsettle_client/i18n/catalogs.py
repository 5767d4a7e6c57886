"""Where the message catalogs are and which languages they make: gettext catalogs (Babel), one
per language, in this package's ``locale/`` and in every folder of ``$CPSETTLE_LOCALE_DIR``.

A folder holds ``LANG/LC_MESSAGES/messages.mo`` (or ``.po``), LANG a CLDR locale identifier
(``es``, ``zh_Hant``, ``fil``): the layout ``pybabel init`` and ``pybabel compile`` write. A
casino adds a language, or changes our words for one of ours, by putting its catalog in such a
folder and naming the folder in ``CPSETTLE_LOCALE_DIR`` (several: separated like ``PATH``); its
catalogs come before ours, ours fill in what they leave out. Plural rules come from each
catalog's ``Plural-Forms`` header (``pybabel init`` writes CLDR's), number and currency formats
from CLDR through Babel, for any locale it knows.

The ``.mo`` files are compiled from the committed ``.po`` files when the package is built or
installed (the build hook, ``hatch_build.py``'s ``compile_catalogs``: into the wheel, listed in
its integrity manifest, and beside the ``.po`` for an editable install) and by
``scripts/catalogs compile`` (``scripts/bootstrap`` runs it); a ``.po`` without its ``.mo``, or
newer than it, is read as it is, so a catalog dropped in as ``.po`` works too.
"""

from __future__ import annotations

import gettext
import io
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

DOMAIN = "messages"
LOCALE_DIR_ENV = "CPSETTLE_LOCALE_DIR"
DEFAULT = "en"
BUILTIN = ("en", "es", "it", "zh_Hans", "zh_Hant")
"""The languages cpsettle ships: English, Spanish, Italian, Simplified and Traditional Chinese."""

# a gettext Plural-Forms expression we are willing to hand to a browser as code: n, integers,
# arithmetic, comparisons, logic and the conditional operator, nothing else
_PLURAL = re.compile(r"[n0-9\s()!=<>&|?:%+*/-]{1,200}")
_HEADER = re.compile(r"nplurals\s*=\s*(\d+)\s*;\s*plural\s*=\s*(.+?)\s*;?\s*$")


class LanguageProblem(ValueError):
    """A language that cannot be used: unknown to Babel, or without a catalog."""


def builtin_dir() -> Path:
    return Path(str(resources.files(__package__) / "locale"))


def catalog_dirs() -> tuple[Path, ...]:
    """The catalog folders, first wins: ``$CPSETTLE_LOCALE_DIR``'s, then cpsettle's own."""
    extra = [Path(p) for p in os.environ.get(LOCALE_DIR_ENV, "").split(os.pathsep) if p]
    return (*extra, builtin_dir())


def _catalog_files(folder: Path, name: str) -> tuple[Path | None, Path | None]:
    messages = folder / name / "LC_MESSAGES"
    mo, po = messages / f"{DOMAIN}.mo", messages / f"{DOMAIN}.po"
    return (mo if mo.is_file() else None), (po if po.is_file() else None)


def _read(mo: Path | None, po: Path | None) -> gettext.GNUTranslations:
    """One catalog: its .mo, or its .po compiled here when there is no .mo or the .po is newer
    (a source checkout after an edit, a casino's catalog dropped in as .po)."""
    if mo is not None and (po is None or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    assert po is not None
    with po.open("rb") as f:
        catalog = read_po(f)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def available() -> tuple[str, ...]:
    """Every language with a catalog in some folder (cpsettle's first, in their order)."""
    found = list(BUILTIN)
    for folder in catalog_dirs():
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if entry.name not in found and any(_catalog_files(folder, entry.name)):
                try:
                    Locale.parse(entry.name)
                except (ValueError, UnknownLocaleError):
                    continue  # not a locale (a stray folder): not a language
                found.append(entry.name)
    return tuple(found)


def _candidates(tag: str) -> list[str]:
    """``tag`` (BCP 47 ``zh-TW`` or POSIX ``zh_TW.UTF-8``) and what it falls back to, with the
    script CLDR's likely subtags give it: zh-TW → zh_Hant_TW, zh_Hant, zh_TW, zh."""
    bare = tag.split(".")[0].split("@")[0].replace("-", "_")
    parts = [p for p in bare.split("_") if p]
    if not parts:
        return []
    parts[0] = parts[0].lower()
    out = ["_".join(parts)]
    likely = get_global("likely_subtags")
    full = likely.get("_".join(parts)) or likely.get(parts[0])
    if full:
        lang, *rest = full.split("_")
        script = next((r for r in rest if len(r) == 4), None)
        if lang == parts[0] and script:
            territory = next(
                (
                    p.upper()
                    for p in parts[1:]
                    if len(p) in (2, 3) and p[0].isalnum() and len(p) != 4
                ),
                None,
            )
            has_script = any(len(p) == 4 for p in parts[1:])
            if not has_script:
                if territory:
                    out.append(f"{lang}_{script}_{territory}")
                out.append(f"{lang}_{script}")
    for i in range(len(parts) - 1, 0, -1):
        out.append("_".join(parts[:i]))
    seen: list[str] = []
    for c in out:
        if c not in seen:
            seen.append(c)
    return seen


def resolve(tag: str, languages: tuple[str, ...] | None = None) -> str | None:
    """The catalog language for ``tag`` (``es-MX`` → ``es``, ``zh-TW`` → ``zh_Hant``), or None."""
    have = {code.lower(): code for code in (available() if languages is None else languages)}
    for c in _candidates(tag):
        if c.lower() in have:
            return have[c.lower()]
    return None


@dataclass(frozen=True)
class Catalog:
    """One language's messages (the casino's catalogs before cpsettle's, English last) and its
    plural rule."""

    code: str
    translations: gettext.NullTranslations
    nplurals: int
    plural: str  # the gettext expression, e.g. "(n != 1)"

    @property
    def locale(self) -> Locale:
        return Locale.parse(self.code)

    @property
    def tag(self) -> str:
        """The BCP 47 tag (``zh-Hant``), for ``lang`` attributes."""
        return self.code.replace("_", "-")

    def messages(self) -> dict[str, str | list[str]]:
        """Every translated message, by msgid (``context\\x04msgid`` for a label): a string, or
        the list of plural forms. The casino's win over cpsettle's."""
        out: dict[str, str | list[str]] = {}
        chain: list[gettext.NullTranslations] = []
        t: gettext.NullTranslations | None = self.translations
        while t is not None:
            chain.append(t)
            t = getattr(t, "_fallback", None)
        for t in reversed(chain):
            catalog = getattr(t, "_catalog", {})
            plurals: dict[str, list[str]] = {}
            for key, value in catalog.items():
                if isinstance(key, tuple):
                    msgid, index = key
                    forms = plurals.setdefault(msgid, [])
                    forms.extend([""] * (index + 1 - len(forms)))
                    forms[index] = value
                elif key and value:
                    out[key] = value
            for msgid, forms in plurals.items():
                if all(forms):
                    out[msgid] = forms
        return out


@cache
def catalog(code: str) -> Catalog:
    """The catalog of an available language (``LanguageProblem`` for another)."""
    if code not in available():
        raise LanguageProblem(
            f"no catalog for the language {code!r}; available: " + ", ".join(available())
        )
    chain: list[gettext.GNUTranslations] = []
    for folder in catalog_dirs():
        mo, po = _catalog_files(folder, code)
        if mo or po:
            try:
                chain.append(_read(mo, po))
            except (OSError, ValueError) as e:  # unreadable, or a Plural-Forms gettext refuses
                raise LanguageProblem(
                    f"the {code} catalog in {folder} cannot be read: {e}; its "
                    "Plural-Forms must be a plain gettext expression"
                ) from None
    translations: gettext.NullTranslations = gettext.NullTranslations()
    for t in reversed(chain):
        t.add_fallback(translations)
        translations = t
    nplurals, plural = 2, "(n != 1)"
    if chain:
        header = chain[0].info().get("plural-forms", "")
        m = _HEADER.match(header.strip())
        if m and _PLURAL.fullmatch(m.group(2)):
            nplurals, plural = int(m.group(1)), m.group(2)
        elif header:
            raise LanguageProblem(
                f"the {code} catalog's Plural-Forms header is not a plain "
                f"gettext expression: {header!r}"
            )
    return Catalog(code, translations, nplurals, plural)


def clear_cache() -> None:
    """Forget the loaded catalogs (after $CPSETTLE_LOCALE_DIR changed: tests)."""
    catalog.cache_clear()


__all__ = [
    "BUILTIN",
    "DEFAULT",
    "DOMAIN",
    "LOCALE_DIR_ENV",
    "Catalog",
    "LanguageProblem",
    "available",
    "builtin_dir",
    "catalog",
    "catalog_dirs",
    "clear_cache",
    "resolve",
]
