"""The currencies a table may play in follow ISO 4217 List One (published 2026-01-01): what the
agency withdrew is refused, what it added is settled, through a real server and the project's
client; and the minor units of the codes that are not the usual two decimals."""

from __future__ import annotations

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.domain.profile.currencies import MINOR_UNITS
from tests.support.tables import table

WITHDRAWN = {
    "ANG": "Netherlands Antillean guilder, for the Caribbean guilder XCG (2025-03)",
    "BGN": "Bulgarian lev, for the euro (2026-01)",
    "HRK": "Croatian kuna, for the euro (2023-01)",
    "CUC": "Cuban convertible peso (2021)",
    "SLL": "Sierra Leonean leone, for SLE",
    "ZWL": "Zimbabwean dollar, for ZWG (2024-09)",
    "VEF": "Venezuelan bolivar fuerte, for VES (2018)",
    "MRO": "Mauritanian ouguiya, for MRU (2018)",
}
ADDED = ["XAD", "XCG", "ZWG", "SLE", "VED", "VES", "MRU", "STN"]


@pytest.mark.parametrize("code", sorted(WITHDRAWN))
def test_a_withdrawn_currency_is_refused(client: SettlementClient, code: str) -> None:
    with pytest.raises(SettlementError) as e:
        client.settle(table("western", currency=code))
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [(v.field, v.reason) for v in e.value.violations] == [
        ("currency", f'is not an active ISO 4217 currency code: "{code}"')
    ]


@pytest.mark.parametrize("code", ADDED)
def test_a_current_currency_is_settled_and_named(client: SettlementClient, code: str) -> None:
    settlement = client.settle(table("western", currency=code, unitValue=5)).settlement
    assert (settlement.currency, settlement.unit_value) == (code, 5)


def test_minor_units_where_they_are_not_two_decimals() -> None:
    odd = {code: units for code, units in MINOR_UNITS.items() if units != 2}
    assert odd == {
        # no decimals
        "BIF": 0,
        "CLP": 0,
        "DJF": 0,
        "GNF": 0,
        "ISK": 0,
        "JPY": 0,
        "KMF": 0,
        "KRW": 0,
        "PYG": 0,
        "RWF": 0,
        "UGX": 0,
        "UYI": 0,
        "VND": 0,
        "VUV": 0,
        "XAF": 0,
        "XOF": 0,
        "XPF": 0,
        # three: the dinars, the rial omani
        "BHD": 3,
        "IQD": 3,
        "JOD": 3,
        "KWD": 3,
        "LYD": 3,
        "OMR": 3,
        "TND": 3,
        # four: the units of account of Chile and Uruguay
        "CLF": 4,
        "UYW": 4,
        # none: precious metals, bond-market units, the SDR, SUCRE, ADB unit, testing, no currency
        "XAG": None,
        "XAU": None,
        "XBA": None,
        "XBB": None,
        "XBC": None,
        "XBD": None,
        "XDR": None,
        "XPD": None,
        "XPT": None,
        "XSU": None,
        "XTS": None,
        "XUA": None,
        "XXX": None,
    }
    assert len(MINOR_UNITS) == 178


@pytest.mark.parametrize(
    "code, shown",
    [
        ("EURO-AND-DOLLARS", '"EURO-AND-DOLLARS"'),  # 16 characters: shown whole
        ("EURO-AND-DOLLARS!", '"EURO-AND-DOLLARS…"'),  # 17: the first 16 and an ellipsis
        ('E"U\\R', '"E\\"U\\\\R"'),  # quotes and backslashes escaped, as in JSON
    ],
)
def test_a_malformed_code_is_quoted_in_the_reason(
    client: SettlementClient, code: str, shown: str
) -> None:
    with pytest.raises(SettlementError) as e:
        client.settle(table("western", currency=code))
    assert [(v.field, v.reason) for v in e.value.violations] == [
        ("currency", f"must be three upper-case letters (ISO 4217, e.g. EUR), got {shown}")
    ]
