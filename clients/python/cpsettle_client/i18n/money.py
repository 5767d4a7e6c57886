"""Money and numbers as a person of a language reads them: CLDR's patterns and symbols through
Babel, with the currency's ISO 4217 minor units (the service's own table, RULES.md §10).

A settlement's amounts are integer minor units of its currency (``Settlement.currency``); the
exponent that turns them into the currency's units is ISO 4217's, the one the service states
(``cpsettle_service.domain.profile.currencies``), never CLDR's (which differs for a few
currencies): 300 EUR minor units are 3.00 €, 800 JPY are ¥800, 1234 KWD are 1.234 KWD. A
code with no minor unit (XXX, "no currency involved") is counted in whole units and shown as a
number and its code.

``money_template`` describes the same formatting as data for the pages' script
(views/assets/view.js), which formats in the browser in the language the reader picks; a test
formats a range of amounts both ways and compares them.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from babel import Locale
from babel.numbers import (
    format_decimal,
    get_currency_symbol,
    get_decimal_symbol,
    get_group_symbol,
    get_minus_sign_symbol,
    get_plus_sign_symbol,
)

from cpsettle_service.domain.profile import MINOR_UNITS, NO_CURRENCY

NBSP = "\u00a0"


def minor_digits(currency: str) -> int | None:
    """ISO 4217's minor unit of ``currency`` (None: none defined, or a code we don't know)."""
    return MINOR_UNITS.get(currency)


def _code(currency: str) -> str:
    return currency or NO_CURRENCY


def money(minor: int, currency: str, locale: Locale | str, *, signed: bool = False) -> str:
    """``minor`` units of ``currency`` in ``locale``'s words: ``money(-300, "EUR", "es")`` is
    ``-3,00 €``; with ``signed`` a gain shows its plus sign (``+€3.00``).

    >>> money(123456, "EUR", "en"), money(123456, "EUR", "it"), money(800, "JPY", "zh_Hans")
    ('€1,234.56', '1.234,56\\xa0€', 'JP¥800')
    >>> money(-1234, "KWD", "en"), money(300, "EUR", "en", signed=True), money(5, "XXX", "en")
    ('-KWD1.234', '+€3.00', '5\\xa0XXX')
    """
    locale = Locale.parse(locale)
    code = _code(currency)
    digits = minor_digits(code)
    if signed and minor > 0:
        return _plus(money(-minor, code, locale), locale)
    if digits is None:
        return format_decimal(minor, locale=locale) + NBSP + code
    pattern = copy.copy(locale.currency_formats["standard"])
    pattern.frac_prec = (digits, digits)
    text: str = pattern.apply(
        Decimal(minor).scaleb(-digits), locale, currency=code, currency_digits=False
    )
    return text


def number(value: int, locale: Locale | str, *, signed: bool = False) -> str:
    """A count or a number of units in ``locale``'s digits and grouping (``+1,234``)."""
    locale = Locale.parse(locale)
    if signed and value > 0:
        return _plus(format_decimal(-value, locale=locale), locale)
    text: str = format_decimal(value, locale=locale)
    return text


def _plus(negative: str, locale: Locale) -> str:
    """The negative text with the locale's minus sign turned into its plus sign."""
    return negative.replace(get_minus_sign_symbol(locale), get_plus_sign_symbol(locale), 1)


def _around(text: str, middle: str) -> list[str]:
    at = text.index(middle)
    return [text[:at], text[at + len(middle) :]]


def number_template(locale: Locale | str) -> dict[str, Any]:
    """The locale's number symbols and grouping, for the page's script."""
    locale = Locale.parse(locale)
    pattern = locale.decimal_formats[None]
    return {
        "decimal": get_decimal_symbol(locale),
        "group": get_group_symbol(locale),
        "minus": get_minus_sign_symbol(locale),
        "plus": get_plus_sign_symbol(locale),
        "grouping": list(pattern.grouping),
    }


def money_template(currency: str, locale: Locale | str) -> dict[str, Any]:
    """How ``money`` writes ``currency`` in ``locale``, as data: the minor digits and the text
    before and after the digits for a gain and for a loss (found by formatting one unit)."""
    locale = Locale.parse(locale)
    code = _code(currency)
    digits = minor_digits(code)
    shown = 0 if digits is None else digits
    one = "1" + (get_decimal_symbol(locale) + "0" * shown if shown else "")
    unit = 10**shown
    return {
        "digits": shown,
        "positive": _around(money(unit, code, locale), one),
        "negative": _around(money(-unit, code, locale), one),
        "symbol": get_currency_symbol(code, locale) if digits is not None else code,
    }


__all__ = ["NBSP", "minor_digits", "money", "money_template", "number", "number_template"]
