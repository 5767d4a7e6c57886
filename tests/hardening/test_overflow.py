"""Absurd but well-formed amounts: money that does not fit the int64 fields of a settlement.

Found by the hardening corpus: these ended INTERNAL ("Value out of range" while the response
was built). The domain now bounds the request's ``unitValue`` like the profile's and refuses a
hand whose amounts leave the 64-bit money range, so both are INVALID_ARGUMENT naming the field.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from tests.support.tables import table


def rejected(client: SettlementClient, request: dict[str, Any]) -> SettlementError:
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    return e.value


def test_a_request_unit_value_too_big_for_int64_money_is_invalid_argument(
    client: SettlementClient,
) -> None:
    error = rejected(client, table(unitValue=2**62))
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert any(v.field == "unitValue" for v in error.violations)


def test_a_profile_at_its_documented_maxima_does_not_end_internal(
    client: SettlementClient,
) -> None:
    request = table(
        profileOverrides={
            "money": {"unitValue": 10**12},  # the documented maximum
            "scoring": {"rowUnit": 10**6, "scoopMultiplier": 100},  # documented maxima
        }
    )
    try:
        client.settle(request)
    except SettlementError as e:
        assert e.code is grpc.StatusCode.INVALID_ARGUMENT and e.violations
