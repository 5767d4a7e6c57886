"""A TypeScript client generated from the .proto files calls a real server over TCP: over gRPC,
over the Connect protocol on the HTTP/JSON port (binary and JSON), with TLS and a bearer token,
and with its retries against a server that refuses the first attempts.

clients/ts/src/contract-check.ts settles a table, validates the settlement's own payouts and a
shifted pair of them, evaluates an arrangement as dealt and a fouled one, and reads the
google.rpc.BadRequest of an invalid request from the grpc-status-details-bin trailer; it asserts
what holds for any table (the hand id echoed, units and money summing to zero, the violations'
field paths) and prints what it saw. Here its answers are checked against the project's Python
client on the same server: the same settlement id, nets and violations, in any language.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError, TlsConfig
from cpsettle_service.proof.times import time_text
from tests.client.test_retry_and_rebalance import AT_CAPACITY, gate
from tests.conftest import ServerHandle, start_server, stop_server
from tests.hardening.certs import Authority
from tests.hardening.support import start_tcp_server
from tests.http.support import free_port
from tests.support.node import build_ts_client

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "examples" / "tables"


@pytest.fixture(scope="module")
def ts_dist() -> Path:
    return build_ts_client()


@pytest.fixture(scope="module")
def tcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """The service on 127.0.0.1 and a free port (Node's HTTP/2 client speaks TCP)."""
    handle = start_server(
        tmp_path_factory.mktemp("ts") / "unused.sock",
        unix_socket="",
        host="127.0.0.1",
        port=0,
        http_port=free_port(),
    )
    handle.address = f"127.0.0.1:{handle.running.port}"
    yield handle
    stop_server(handle)


def invalid_copy(request: dict[str, Any]) -> dict[str, Any]:
    """What contract-check.ts sends as its invalid request: a short front, a card dealt twice."""
    bad: dict[str, Any] = json.loads(json.dumps(request))
    first, second = bad["players"][0]["arrangement"], bad["players"][1]["arrangement"]
    first["front"] = first["front"][:2]
    second["back"][0] = first["back"][0]
    return bad


def contract_check(ts_dist: Path, address: str, path: Path, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(ts_dist / "contract-check.js"), *flags, address, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"contract-check.ts failed:\n{done.stdout}\n{done.stderr}"
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def check_against_python(
    seen: dict[str, Any],
    grpc_address: str,
    path: Path,
    started: float,
    tls: TlsConfig | None = None,
    token: str | None = None,
) -> None:
    """What contract-check.ts saw is what the project's Python client gets from the server."""
    ended = time.time()
    # the Timestamp as the TypeScript client read it: whole milliseconds, during the call, and
    # the same instant as its fixed-width text (docs/AUDIT.md)
    issued = seen["issuedAt"]
    seconds, nanos = int(issued["seconds"]), issued["nanos"]
    assert nanos % 1_000_000 == 0 and int(started) <= seconds <= ended
    assert issued["text"] == time_text(seconds, nanos)
    assert seen["currency"] == "XXX"  # the examples name no currency; the presets neither

    request = json.loads(path.read_text())
    with SettlementClient(grpc_address, timeout=10, tls=tls, token=token) as python:
        settlement = python.settle(request).settlement
        assert seen["handId"] == request["handId"]
        assert seen["settlementId"] == settlement.settlement_id
        assert seen["nets"] == {p.player_id: str(p.net_money) for p in settlement.players}
        assert seen["allMatch"] == [True, False]

        rules = {"preset": request["preset"]}
        dealt = python.evaluate({**rules, "arrangement": request["players"][0]["arrangement"]})
        assert seen["evaluated"]["asDealt"] == {
            "fouled": dealt.fouled,
            "royaltyTotal": dealt.royalty_total,
            "names": [row.name for row in dealt.rows],
        }
        assert seen["evaluated"]["fouled"]["fouled"] is True

        with pytest.raises(SettlementError) as error:
            python.settle(invalid_copy(request))
    assert seen["violations"] == [
        {"field": v.field, "description": v.reason} for v in error.value.violations
    ]
    assert len(seen["violations"]) == 2


@pytest.mark.parametrize("table", ["one-six", "western", "ofc"])
def test_typescript_client_against_a_real_server(
    ts_dist: Path, tcp_server: ServerHandle, table: str
) -> None:
    path = TABLES / f"{table}.json"
    started = time.time()
    seen = contract_check(ts_dist, tcp_server.address, path)
    check_against_python(seen, tcp_server.address, path, started)


@pytest.mark.parametrize("encoding", ["binary", "json"])
def test_typescript_client_over_connect_on_the_http_port(
    ts_dist: Path, tcp_server: ServerHandle, encoding: str
) -> None:
    """The same checks through the Connect protocol (HTTP/1.1) on the HTTP/JSON port: the same
    settlement id, nets and violations as the Python client over gRPC."""
    path = TABLES / "western.json"
    started = time.time()
    http = f"127.0.0.1:{tcp_server.running.http_port}"
    flags = ["--protocol", "connect", *(["--json"] if encoding == "json" else [])]
    seen = contract_check(ts_dist, http, path, *flags)
    check_against_python(seen, tcp_server.address, path, started)


TOKEN = "ts-client-token-0123456789"


@pytest.fixture(scope="module")
def secure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """TLS on both ports and a bearer token required, as the prod overlay serves."""
    directory = tmp_path_factory.mktemp("ts-pki")
    ca = Authority.create(directory, "ts-test-ca")
    issued = ca.issue(directory, "cpsettle-server", server=True)
    tokens = directory / "tokens"
    tokens.write_text(f"table-software: {TOKEN}\n")
    handle = start_tcp_server(
        tls_cert_file=issued.cert_file,
        tls_key_file=issued.key_file,
        auth_tokens_file=str(tokens),
        http_port=free_port(),
    )
    handle.ca_file = ca.cert_file  # type: ignore[attr-defined]
    yield handle
    stop_server(handle)


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
def test_typescript_client_with_tls_and_a_token(
    ts_dist: Path, secure_server: ServerHandle, protocol: str
) -> None:
    path = TABLES / "western.json"
    ca_file = secure_server.ca_file  # type: ignore[attr-defined]
    address = (
        secure_server.address
        if protocol == "grpc"
        else f"127.0.0.1:{secure_server.running.http_port}"
    )
    started = time.time()
    seen = contract_check(
        ts_dist, address, path, "--protocol", protocol, "--ca-file", ca_file, "--token", TOKEN
    )
    check_against_python(
        seen, secure_server.address, path, started, tls=TlsConfig(ca_file=ca_file), token=TOKEN
    )
    # without the token: UNAUTHENTICATED, not a settlement
    done = subprocess.run(
        [
            "node",
            str(ts_dist / "contract-check.js"),
            "--protocol",
            protocol,
            "--ca-file",
            ca_file,
            address,
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "missing bearer token" in done.stderr


def retry_check(ts_dist: Path, address: str, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(ts_dist / "retry-check.js"), *flags, address, str(TABLES / "western.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"retry-check.ts failed:\n{done.stdout}\n{done.stderr}"
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def test_typescript_client_retries_the_first_refusals(
    ts_dist: Path, tcp_server: ServerHandle
) -> None:
    handler, server, address = gate(tcp_server, 2, AT_CAPACITY)
    try:
        seen = retry_check(ts_dist, address)
    finally:
        server.stop(0)
    with SettlementClient(tcp_server.address, timeout=10) as python:
        expected = python.settle(json.loads((TABLES / "western.json").read_text())).settlement
    assert seen["settlementId"] == expected.settlement_id
    assert [(r["attempt"], r["reason"]) for r in seen["retries"]] == [
        (2, "AT_CAPACITY"),
        (3, "AT_CAPACITY"),
    ]
    assert len(handler.attempts) == 3


def test_typescript_client_without_retries_and_past_its_attempts(
    ts_dist: Path, tcp_server: ServerHandle
) -> None:
    for refuse, flags, attempts in ((1, ("--no-retry",), 1), (10, (), 4)):
        handler, server, address = gate(tcp_server, refuse, AT_CAPACITY)
        try:
            seen = retry_check(ts_dist, address, *flags)
        finally:
            server.stop(0)
        assert seen["reason"] == "AT_CAPACITY" and seen["code"] == 8  # resource_exhausted
        assert len(handler.attempts) == attempts
        assert len(seen["retries"]) == attempts - 1
