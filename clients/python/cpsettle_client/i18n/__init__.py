"""The client's own words in the reader's language: gettext catalogs under Babel, CLDR's plural
rules, numbers and currencies (docs/VIEWS.md, "Languages"; the terms: docs/GLOSSARY.md).

What the client renders itself is translated: the CLI's tables (``--lang``), the views' labels
and headings, the names of the settlement's codes (``labels``: enum values from the contract's
descriptors, the catalogue's naturals) and every amount (``money``: CLDR's formats, ISO 4217's
minor units). The settlement's SENTENCES are the service's, signed, in English; a sentence is
drawn through ``sentences.render``, the one place a translated sentence per line item kind will
be plugged in.

>>> es = Language.get("es")
>>> es._("Player"), es.label("CAP_PAYER_STACK"), es.money(-300, "EUR")
('Jugador', 'Fichas del pagador', '-3,00\\xa0€')
>>> Language.get("zh-TW").code, Language.get("zh_TW.UTF-8").code
('zh_Hant', 'zh_Hant')

Rooms: ``catalogs`` (where catalogs are, which languages they make, a casino's own folder),
``language`` (one language's helpers, the terminal's language), ``labels`` (codes to names, and
the extraction of their messages), ``money`` (amounts and numbers), ``sentences`` (the
settlement's sentences, per kind).
"""

from .catalogs import (
    BUILTIN,
    DEFAULT,
    LOCALE_DIR_ENV,
    Catalog,
    LanguageProblem,
    available,
    catalog_dirs,
    resolve,
)
from .language import LANG_ENV, N_, Language, clear_cache, from_environment

__all__ = [
    "BUILTIN",
    "DEFAULT",
    "LANG_ENV",
    "LOCALE_DIR_ENV",
    "Catalog",
    "Language",
    "LanguageProblem",
    "N_",
    "available",
    "catalog_dirs",
    "clear_cache",
    "from_environment",
    "resolve",
]
