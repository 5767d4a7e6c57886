"""Per-caller bearer tokens: who may call, what the logs say (the caller) and never say (tokens)."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc
from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.security import TokenChecker
from tests.conftest import LogStream, ServerHandle, start_server, stop_server
from tests.hardening.support import good_request

TOKENS = {
    "table-software": "tok-" + secrets.token_urlsafe(24),
    "cashier-desk": "tok-" + secrets.token_urlsafe(24),
}
WRONG = "tok-" + secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    directory = tmp_path_factory.mktemp("auth")
    tokens_file = directory / "tokens"
    tokens_file.write_text(
        "# caller-name: token\n\n" + "".join(f"{name}: {token}\n" for name, token in TOKENS.items())
    )
    handle = start_server(directory / "auth.sock", auth_tokens_file=str(tokens_file))
    yield handle
    stop_server(handle)


def rpc_events(logs: LogStream, hand_id: str) -> list[dict[str, Any]]:
    """The call's canonical log line (written just after the status went out: wait for it): its
    ``rpc`` line, or for a delivered settlement its ``settlement.issued`` line."""
    deadline = time.monotonic() + 5
    while True:
        found = [
            e
            for e in logs.events()
            if e.get("hand_id") == hand_id and e.get("event") in ("rpc", "settlement.issued")
        ]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.005)


def call_raw(
    handle: ServerHandle, metadata: tuple[tuple[str, str], ...] | None, hand_id: str
) -> grpc.RpcError | pb.SettleResponse:
    with grpc.insecure_channel(handle.address) as channel:
        try:
            return pb_grpc.SettlementServiceStub(channel).Settle(
                good_request(hand_id), timeout=5, metadata=metadata
            )
        except grpc.RpcError as e:
            return e


@pytest.mark.parametrize(
    "metadata",
    [
        None,  # no token at all
        (("authorization", f"Bearer {WRONG}"),),  # a token nobody has
        (("authorization", f"Bearer {TOKENS['table-software'][:-1]}"),),  # almost right
        (("authorization", f"Bearer {TOKENS['table-software']}x"),),
        (("authorization", TOKENS["table-software"]),),  # no scheme
        (("authorization", f"Basic {TOKENS['table-software']}"),),  # wrong scheme
        (("authorization", "Bearer "),),  # empty token
        (("x-api-key", TOKENS["table-software"]),),  # wrong header
    ],
    ids=["missing", "unknown", "truncated", "extended", "no-scheme", "basic", "empty", "header"],
)
def test_missing_or_wrong_token_is_unauthenticated(
    auth_server: ServerHandle, logs: LogStream, metadata: tuple[tuple[str, str], ...] | None
) -> None:
    hand_id = f"auth-{uuid.uuid4().hex}"
    outcome = call_raw(auth_server, metadata, hand_id)
    assert isinstance(outcome, grpc.RpcError), "served without a valid token"
    assert outcome.code() is grpc.StatusCode.UNAUTHENTICATED
    error = SettlementError.from_rpc_error(outcome)
    assert (error.reason, error.domain) == ("INVALID_TOKEN", "cpsettle.v1")
    for token in (*TOKENS.values(), WRONG):
        assert token not in (outcome.details() or "") and token not in str(error.metadata)
    (event,) = rpc_events(logs, hand_id)
    assert event["code"] == "UNAUTHENTICATED" and "caller" not in event


@pytest.mark.parametrize("caller", sorted(TOKENS))
def test_a_right_token_is_served_and_logged_by_caller_name(
    auth_server: ServerHandle, logs: LogStream, caller: str
) -> None:
    hand_id = f"auth-{uuid.uuid4().hex}"
    with SettlementClient(auth_server.address, token=TOKENS[caller], timeout=5) as client:
        settlement = client.settle(good_request(hand_id)).settlement
        assert client.list_profiles().profiles  # every service RPC, not only Settle
    assert settlement.context.hand_id == hand_id
    (event,) = rpc_events(logs, hand_id)
    assert event["event"] == "settlement.issued" and event["caller"] == caller


def test_the_bearer_scheme_is_case_insensitive(auth_server: ServerHandle) -> None:
    outcome = call_raw(
        auth_server, (("authorization", f"bearer {TOKENS['cashier-desk']}"),), "auth-lower"
    )
    assert isinstance(outcome, pb.SettleResponse)


def test_health_needs_no_token(auth_server: ServerHandle) -> None:
    with SettlementClient(auth_server.address, timeout=5) as client:
        assert client.health() == "SERVING"
        assert client.health("cpsettle.v1.SettlementService") == "SERVING"
        with pytest.raises(SettlementError) as e:
            client.list_profiles()
        assert e.value.code is grpc.StatusCode.UNAUTHENTICATED
        assert (e.value.reason, e.value.domain) == ("INVALID_TOKEN", "cpsettle.v1")
        assert e.value.metadata == {}


def test_no_token_ever_reaches_the_logs(auth_server: ServerHandle, logs: LogStream) -> None:
    """After every call above (and a few more here), no captured log line holds a token."""
    for token in (TOKENS["table-software"], WRONG):
        call_raw(auth_server, (("authorization", f"Bearer {token}"),), "auth-scan")
    with logs._lock:
        lines = list(logs.lines)
    assert lines
    assert any(json.loads(line).get("caller") == "table-software" for line in lines)
    for token in (*TOKENS.values(), WRONG):
        leaked = [line for line in lines if token in line or token[4:] in line]
        assert not leaked, leaked[:3]


def test_a_token_file_with_a_bad_line_is_refused_without_echoing_it(tmp_path: Path) -> None:
    short = "abc123"
    path = tmp_path / "tokens"
    path.write_text(f"table-software: {TOKENS['table-software']}\ncashier-desk: {short}\n")
    with pytest.raises(ValueError) as e:
        TokenChecker.from_file(str(path))
    assert "line 2" in str(e.value)
    assert short not in str(e.value) and TOKENS["table-software"] not in str(e.value)
