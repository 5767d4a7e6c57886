"""An INVALID_ARGUMENT status always reaches the client, however much of the request was wrong.

The status and its BadRequest detail travel in trailers; clients refuse trailers past 8 KiB
(``grpc.max_metadata_size``), so a status that echoed a 200 KB card string, or listed 5,000
violations, arrived as RESOURCE_EXHAUSTED with no detail at all (found by the malformed corpus).
"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.api.interceptors import invalid_argument_status
from cpsettle_service.domain.errors import InvalidInput, Violation, ViolationCode
from tests.support.tables import table


def trailer_bytes(status: grpc.Status) -> int:
    return sum(len(k) + len(v) for k, v in status.trailing_metadata) + len(status.details)


@pytest.mark.parametrize("count,size", [(1, 300_000), (5_000, 40), (40, 5_000)])
def test_the_status_keeps_to_a_budget(count: int, size: int) -> None:
    error = InvalidInput(
        [
            Violation(f"players[{i}].{'f' * size}", "r" * size, ViolationCode.OTHER)
            for i in range(count)
        ]
    )
    status = invalid_argument_status(error)
    assert trailer_bytes(status) < 6 * 1024
    (packed,) = [v for k, v in status.trailing_metadata if k == "grpc-status-details-bin"]
    detail = error_details_pb2.BadRequest()
    status_pb2.Status.FromString(packed).details[0].Unpack(detail)
    assert detail.field_violations
    if count > len(detail.field_violations):
        last = detail.field_violations[-1]
        assert last.field == "request" and "more problems" in last.description
    assert status.details.startswith(f"{count} problem")


def test_a_small_status_is_unchanged() -> None:
    violations = [
        Violation("players[0].seat", "must be 0 or more, got -1", ViolationCode.OTHER),
        Violation("buttonSeat", "must be a seat at the table", ViolationCode.BUTTON_SEAT),
    ]
    status = invalid_argument_status(InvalidInput(violations))
    assert status.details == (
        "2 problems: players[0].seat: must be 0 or more, got -1; "
        "buttonSeat: must be a seat at the table"
    )


@pytest.mark.parametrize("where", ["huge-card", "many-cards", "many-dead-cards"])
def test_over_the_wire_the_client_gets_the_violations(client: SettlementClient, where: str) -> None:
    request = table()
    if where == "huge-card":
        request["players"][0]["arrangement"]["back"][0] = "X" * 50_000
    elif where == "many-cards":
        request["players"][1]["arrangement"]["middle"] = ["2h"] * 3_000
    else:
        request["deadCards"] = [f"Z{i}" for i in range(3_000)]
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.violations
    assert client.health() == "SERVING"
