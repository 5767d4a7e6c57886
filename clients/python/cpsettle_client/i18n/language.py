"""One language's catalog with what a renderer needs (words, code names, money, numbers), and
the language a terminal asks for."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from typing import Any

from babel import Locale

from . import labels as _labels
from . import money as _money
from .catalogs import DEFAULT, Catalog, LanguageProblem, available, catalog, resolve

LANG_ENV = "CPSETTLE_LANG"


class Language:
    """One language's catalog with the helpers a renderer needs."""

    def __init__(self, cat: Catalog) -> None:
        self.catalog = cat
        self.code = cat.code
        self.tag = cat.tag
        self.locale: Locale = cat.locale

    @staticmethod
    @cache
    def _of(code: str) -> Language:
        return Language(catalog(code))

    @classmethod
    def get(cls, tag: str) -> Language:
        """The language for ``tag`` (``es``, ``es-MX``, ``zh-TW``, ``zh_Hant``, ``it_IT.UTF-8``);
        ``LanguageProblem`` when no catalog serves it."""
        code = resolve(tag)
        if code is None:
            raise LanguageProblem(
                f"no catalog for the language {tag!r}; available: " + ", ".join(available())
            )
        return cls._of(code)

    @property
    def name(self) -> str:
        """The language's name in itself ("español", "中文 (繁體)")."""
        return str(self.locale.display_name or self.code)

    def _(self, message: str, /, **args: Any) -> str:
        """The translation of ``message``, its ``{name}`` fields filled in from ``args``."""
        text = self.catalog.translations.gettext(message)
        return text.format(**args) if args else text

    def ngettext(self, singular: str, plural: str, n: int, /, **args: Any) -> str:
        """The form for ``n`` (the catalog's plural rule); ``{n}`` is ``n`` in this language's
        digits."""
        text = self.catalog.translations.ngettext(singular, plural, n)
        return text.format(n=self.number(n), **args)

    def pgettext(self, context: str, message: str) -> str:
        return self.catalog.translations.pgettext(context, message)

    def label(self, code: str) -> str:
        """The name of a settlement code (an enum value's name, a natural's name)."""
        return _labels.label(self.catalog, code)

    def money(self, minor: int, currency: str, *, signed: bool = False) -> str:
        return _money.money(minor, currency, self.locale, signed=signed)

    def number(self, value: int, *, signed: bool = False) -> str:
        return _money.number(value, self.locale, signed=signed)


def from_environment(environ: Mapping[str, str] | None = None) -> Language:
    """The language a terminal asks for: ``$CPSETTLE_LANG``, else gettext's order (LANGUAGE,
    LC_ALL, LC_MESSAGES, LANG) — the first with a catalog —, else English. An explicit
    ``$CPSETTLE_LANG`` without a catalog is a ``LanguageProblem``."""
    env = os.environ if environ is None else environ
    if env.get(LANG_ENV):
        return Language.get(env[LANG_ENV])
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        for tag in env.get(name, "").split(":"):
            if tag and tag not in ("C", "POSIX") and not tag.startswith("C."):
                code = resolve(tag)
                if code is not None:
                    return Language._of(code)
    return Language._of(DEFAULT)


def clear_cache() -> None:
    """Forget loaded catalogs (after ``$CPSETTLE_LOCALE_DIR`` changed)."""
    from . import catalogs

    catalogs.clear_cache()
    Language._of.cache_clear()


def N_(message: str) -> str:
    """Marks ``message`` for extraction; translated where it is shown."""
    return message


__all__ = ["LANG_ENV", "Language", "N_", "clear_cache", "from_environment"]
