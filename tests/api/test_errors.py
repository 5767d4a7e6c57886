"""The error model: every error the service sends carries a google.rpc.ErrorInfo whose reason
comes from the interceptor's table and is documented in the contract and the README.

The codes each have their test where the code is provoked (INVALID_ARGUMENT and NOT_FOUND in
test_service, UNAUTHENTICATED in hardening/test_auth, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED
in hardening/test_limits, a stream hand's errors in audit/test_stream); INTERNAL is here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.api import interceptors
from cpsettle_service.api.servicer import SettlementServicer
from tests.conftest import LogStream, ServerHandle, start_server, stop_server
from tests.hardening.support import good_request

ROOT = Path(__file__).resolve().parents[2]
REASONS = {reason for _, _, reason in interceptors.ERROR_CODES} | {
    interceptors.INTERNAL_REASON,
    interceptors.RESULT_TOO_LARGE,
}


@pytest.fixture()
def failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerHandle]:
    """A real server whose profile listing fails with an error the table does not know."""

    def broken(self: Any) -> Any:
        raise RuntimeError("a secret detail that must not leave the server")

    monkeypatch.setattr(SettlementServicer, "list_response", broken)
    handle = start_server(tmp_path / "e.sock")
    yield handle
    stop_server(handle)


def test_an_unexpected_failure_is_internal_with_its_reason(
    failing: ServerHandle, logs: LogStream
) -> None:
    with SettlementClient(failing.address, timeout=5) as client:
        with pytest.raises(SettlementError) as e:
            client.list_profiles()
        assert e.value.code is grpc.StatusCode.INTERNAL
        assert (e.value.reason, e.value.domain) == ("INTERNAL_ERROR", "cpsettle.v1")
        assert e.value.message == "internal error" and e.value.metadata == {}
        assert "secret" not in str(e.value)
        assert client.settle(good_request("after-internal")).settlement.settlement_id
    assert [x for x in logs.events("rpc.failed")], "the failure is logged on the server"


def test_every_reason_is_upper_snake_case_and_documented() -> None:
    proto = (ROOT / "proto/cpsettle/v1/settlement.proto").read_text()
    readme = (ROOT / "README.md").read_text()
    for reason in REASONS:
        assert re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*", reason), reason
        assert f"`{reason}`" in readme, f"README's Errors section lacks {reason}"
        assert reason in proto, f"settlement.proto's comments lack {reason}"
    table = {c.name for _, c, _ in interceptors.ERROR_CODES}
    assert table == {
        "INVALID_ARGUMENT",
        "NOT_FOUND",
        "UNAUTHENTICATED",
        "RESOURCE_EXHAUSTED",
        "DEADLINE_EXCEEDED",
        "UNAVAILABLE",
    }
