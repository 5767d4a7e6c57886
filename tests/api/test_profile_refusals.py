"""A bad profile or bad overrides, through the real server and our own client: what a casino's
integrator meets first. Every problem comes back at once as an INVALID_ARGUMENT field violation
with its path and a sentence, and the ErrorInfo names the kind (``profile``).

``profileOverrides`` is a ``google.protobuf.Struct``, so anything JSON can hold arrives there:
numbers as doubles (``2.0`` is the integer 2), strings, booleans, null, lists and objects. An
inline ``profile`` is a typed message, so its problems are ranges, lengths and enum numbers.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from tests.support.tables import table

OVERRIDES = "profileOverrides"


def refusal(client: SettlementClient, request: Any) -> list[tuple[str, str]]:
    """The (field, reason) pairs of a refused Settle, in order; checks the status says so."""
    with pytest.raises(SettlementError) as refused:
        client.settle(request)
    e = refused.value
    assert e.code is grpc.StatusCode.INVALID_ARGUMENT and e.reason == "INVALID_REQUEST"
    found = [(v.field, v.reason) for v in e.violations]
    assert e.metadata == {"violationCodes": "profile", "violationCount": str(len(found))}
    return found


def overridden(client: SettlementClient, overrides: dict[str, Any]) -> list[tuple[str, str]]:
    return refusal(client, table("western", players="AB", profileOverrides=overrides))


@pytest.mark.parametrize("text", ["--1", "²", "１２", "X1", "-X1", "1e3", "0x10", " 3", "-",
                                  "9" * 4301])
def test_a_string_that_is_not_an_integer_is_refused_not_crashed(
    client: SettlementClient, text: str
) -> None:
    # "²" and "１２" pass str.isdigit, "--1" passes once its minus signs are stripped: each made
    # int() raise and the call fail INTERNAL; so did more digits than int() converts
    assert overridden(client, {"scoring": {"rowUnit": text}}) == [
        ("profileOverrides.scoring.rowUnit", "must be an integer, got a string")]
