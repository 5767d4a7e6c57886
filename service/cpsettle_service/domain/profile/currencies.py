"""The currencies a table may play in: ISO 4217's active codes, with their minor units.

A settlement states its currency (``Settlement.currency``) and every money amount in it is in
that currency's **minor units** (``unitValue``, ``netMoney``, rake, stacks): the exponent below
says how many of them make one unit of the currency (JPY 0: 1 yen; USD 2: 100 cents; KWD 3: 1,000
fils). The service converts nothing: a code only labels the money, and an auditor can prove from
the signature which currency was paid.

Source: ISO 4217 List One (current currency and funds codes) as the maintenance agency (SIX
Financial Information) published it on 2026-01-01, codes and minor units alike. Against the
2025-01 table this replaced: withdrawn ANG (for XCG, 2025-03) and BGN (Bulgaria's euro,
2026-01); added XAD (the Arab Monetary Fund's accounting dinar). 178 codes. Python's standard
library has no such list, and a package for it (pycountry carries every ISO 3166, 639 and 4217
table, several MB, and no minor units) would not earn its place. When the agency amends List
One, change the table and its date.
"""

from __future__ import annotations

import re

NO_CURRENCY = "XXX"
"""ISO 4217's code for "no currency involved": the default when neither the request nor the
profile names a currency (units not tied to money)."""

_BY_MINOR_UNIT: dict[int | None, str] = {
    2: (
        "AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN "
        "BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB "
        "EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS "
        "KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN "
        "MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD "
        "SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS "
        "UAH USD USN UYU UZS VED VES WST XAD XCD XCG YER ZAR ZMW ZWG "
    ),
    0: ("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF "),
    3: "BHD IQD JOD KWD LYD OMR TND",
    4: "CLF UYW",
    # funds, precious metals, testing (XTS) and no currency (XXX): no minor unit
    None: ("XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX "),
}

MINOR_UNITS: dict[str, int | None] = {
    code: exponent for exponent, codes in _BY_MINOR_UNIT.items() for code in codes.split()
}
"""Every accepted code and its minor unit (decimal places; None: ISO 4217 defines none)."""

_SHAPE = re.compile(r"[A-Z]{3}")


def currency_problem(code: str) -> str | None:
    """Why ``code`` cannot be a table's currency, or None when it can.

    >>> currency_problem("EUR") is None
    True
    >>> currency_problem("eur")
    'must be three upper-case letters (ISO 4217, e.g. EUR), got "eur"'
    >>> currency_problem("ABC")
    'is not an active ISO 4217 currency code: "ABC"'
    """
    if not _SHAPE.fullmatch(code):
        return f"must be three upper-case letters (ISO 4217, e.g. EUR), got {_quoted(code)}"
    if code not in MINOR_UNITS:
        return f"is not an active ISO 4217 currency code: {_quoted(code)}"
    return None


def _quoted(text: str) -> str:
    shown = text if len(text) <= 16 else text[:16] + "…"
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"') + '"'
