"""HTTP/JSON beside gRPC: the Connect port answers as the gRPC port does, from the same code.

Every golden table is settled through gRPC, Connect JSON and Connect binary on one server: the
same settlement (but for its time of issue and signature). Every refusal below is refused over
Connect with the same code, message and details (BadRequest, ErrorInfo, ResourceInfo, byte for
byte) as over gRPC. Calls over HTTP pass the same tokens, limits, metrics and logs.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.observability import metrics
from tests.conftest import LogStream, ServerHandle, stop_server
from tests.http.support import (
    JSON,
    PROTO,
    ROOT,
    connect_status,
    from_json,
    grpc_call,
    grpc_status_as_connect,
    start_http_server,
    url,
    without_time_and_signature,
)

CASES = sorted((ROOT / "tests" / "golden" / "cases").glob("*.json"))
TABLE = json.loads((ROOT / "examples" / "tables" / "western.json").read_text())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    handle = start_http_server(tmp_path_factory.mktemp("http") / "grpc.sock")
    yield handle
    stop_server(handle)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def changed(**edits: Any) -> dict[str, Any]:
    request: dict[str, Any] = json.loads(json.dumps(TABLE))
    request.update(edits)
    return request


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_tables_settle_alike_over_grpc_and_both_connect_encodings(
    server: ServerHandle, http: httpx.Client, path: Path
) -> None:
    request = json.loads(path.read_text("utf-8"))["request"]
    message = json_format.ParseDict(request, pb.SettleRequest())
    data, status = grpc_call(server, "Settle", message)
    assert status is None, status
    over_grpc = pb.SettleResponse.FromString(data)

    as_json = http.post(url(server, "Settle"), content=json.dumps(request), headers=JSON)
    assert as_json.status_code == 200, as_json.text
    assert as_json.headers["content-type"] == "application/json"
    over_json = from_json(as_json.content, pb.SettleResponse())

    as_binary = http.post(url(server, "Settle"), content=message.SerializeToString(), headers=PROTO)
    assert as_binary.status_code == 200, as_binary.text
    assert as_binary.headers["content-type"] == "application/proto"
    over_binary = pb.SettleResponse.FromString(as_binary.content)

    expected = without_time_and_signature(over_grpc)
    assert expected.settlement.settlement_id and expected.settlement.players
    assert without_time_and_signature(over_json) == expected
    assert without_time_and_signature(over_binary) == expected


def test_json_answers_carry_every_field_money_as_strings(
    server: ServerHandle, http: httpx.Client
) -> None:
    answer = http.post(url(server, "Settle"), json=TABLE).json()
    players = answer["settlement"]["players"]
    assert {p["playerId"] for p in players} == {"A", "B", "C", "D"}
    # int64 money as protobuf's JSON mapping writes it; zeros and false are written too
    assert all(isinstance(p["netMoney"], str) for p in players)
    assert all("fouled" in p and "rake" in p for p in players)
    assert sum(int(p["netMoney"]) + int(p["rake"]) for p in players) == 0


REFUSALS: list[tuple[str, str, Any]] = [
    (
        "duplicate card",
        "Settle",
        changed(
            players=[
                {
                    **TABLE["players"][0],
                    "arrangement": {
                        **TABLE["players"][0]["arrangement"],
                        "front": ["As", "As", "Kd"],
                    },
                },
                *TABLE["players"][1:],
            ]
        ),
    ),
    (
        "short row and unknown preset",
        "Settle",
        changed(
            preset="westernn",
            players=[
                {
                    **TABLE["players"][0],
                    "arrangement": {**TABLE["players"][0]["arrangement"], "front": ["As", "Kd"]},
                },
                *TABLE["players"][1:],
            ],
        ),
    ),
    ("bad currency", "Settle", changed(currency="EURO")),
    ("one player", "Settle", changed(players=TABLE["players"][:1])),
    ("no players", "Settle", {}),
    (
        "bad evaluate",
        "EvaluateArrangement",
        {"preset": "ofc", "arrangement": {"front": ["Qs", "Qh"], "middle": ["8s"], "back": []}},
    ),
    ("validate without proposals", "ValidatePayouts", {"request": TABLE}),
    ("unknown profile", "GetProfile", {"name": "no-such-house"}),
    ("short nonce", "VerifyIntegrity", {"nonce": "AAE="}),
]


@pytest.mark.parametrize(
    "method,request_json", [(m, r) for _, m, r in REFUSALS], ids=[name for name, _, _ in REFUSALS]
)
def test_refusals_are_the_same_error_over_connect(
    server: ServerHandle, http: httpx.Client, method: str, request_json: Any
) -> None:
    request_class = {
        "Settle": pb.SettleRequest,
        "EvaluateArrangement": pb.EvaluateArrangementRequest,
        "ValidatePayouts": pb.ValidatePayoutsRequest,
        "GetProfile": pb.GetProfileRequest,
        "VerifyIntegrity": pb.VerifyIntegrityRequest,
    }[method]
    message = json_format.ParseDict(request_json, request_class())
    _, status = grpc_call(server, method, message)
    assert status is not None and status.code != 0
    expected = grpc_status_as_connect(status)
    assert [t for t, _ in expected[2]][-1] == "google.rpc.ErrorInfo"

    as_json = http.post(url(server, method), json=request_json)
    as_binary = http.post(url(server, method), content=message.SerializeToString(), headers=PROTO)
    for answer in (as_json, as_binary):
        assert answer.status_code in (400, 404), answer.text
        assert answer.headers["content-type"] == "application/json"  # Connect errors: JSON
        assert connect_status(answer) == expected


def test_json_the_proto_parser_cannot_read_is_invalid_argument_naming_each_field(
    server: ServerHandle, http: httpx.Client
) -> None:
    request = changed(handIdd="x", buttonSeat="two")
    request["players"][0]["arrangment"] = request["players"][0].pop("arrangement")
    answer = http.post(url(server, "Settle"), json=request)
    assert answer.status_code == 400
    code, message, details = connect_status(answer)
    assert code == "invalid_argument"
    bad = error_details_pb2.BadRequest.FromString(details[0][1])
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("players[0].arrangment", "unknown field of Player; did you mean 'arrangement'?"),
        ("handIdd", "unknown field of SettleRequest; did you mean 'handId'?"),
    ]
    info = error_details_pb2.ErrorInfo.FromString(details[1][1])
    assert (info.reason, info.domain, info.metadata["violationCodes"]) == (
        "INVALID_REQUEST",
        "cpsettle.v1",
        "malformed_request",
    )

    for body, says in (
        (b"{", "not JSON"),
        (b'{"handId": "a", "handId": "b"}', "twice"),
        (b"[1, 2]", "must be a JSON object"),
    ):
        answer = http.post(url(server, "Settle"), content=body, headers=JSON)
        assert answer.status_code == 400
        code, message, details = connect_status(answer)
        assert code == "invalid_argument" and says in message, message


def test_bytes_that_are_not_the_message_are_invalid_argument(
    server: ServerHandle, http: httpx.Client
) -> None:
    _, status = grpc_call(server, "Settle", _RawBytes(b"\xff\xff\xff"))
    answer = http.post(url(server, "Settle"), content=b"\xff\xff\xff", headers=PROTO)
    assert answer.status_code == 400
    assert status is not None
    assert connect_status(answer) == grpc_status_as_connect(status)


class _RawBytes:
    """A request whose serialization is the given bytes (for a malformed gRPC call)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def SerializeToString(self) -> bytes:  # protobuf's spelling
        return self.data


def test_a_body_past_the_limit_is_message_too_large(
    server: ServerHandle, http: httpx.Client
) -> None:
    limit = server.running.settings.max_message_bytes
    big = changed(handId="h" * (limit + 10))
    answer = http.post(url(server, "Settle"), json=big)
    assert answer.status_code == 429
    code, message, details = connect_status(answer)
    assert code == "resource_exhausted" and str(limit) in message
    info = error_details_pb2.ErrorInfo.FromString(details[-1][1])
    assert info.reason == "MESSAGE_TOO_LARGE"


def test_settle_stream_is_grpc_only(server: ServerHandle, http: httpx.Client) -> None:
    answer = http.post(
        url(server, "SettleStream"),
        content=b"\x00\x00\x00\x00\x00",
        headers={"content-type": "application/connect+proto"},
    )
    assert answer.status_code == 200  # a Connect stream's error is its end-of-stream message
    end = json.loads(answer.content[5:])
    assert end["error"]["code"] == "unimplemented"
    assert "gRPC only" in end["error"]["message"]


def test_http_calls_are_counted_and_logged_as_calls(
    server: ServerHandle, http: httpx.Client, logs: LogStream
) -> None:
    def handled(code: str) -> float:
        return (
            metrics.REGISTRY.get_sample_value(
                "grpc_server_handled_total",
                {
                    "grpc_type": "unary",
                    "grpc_service": "cpsettle.v1.SettlementService",
                    "grpc_method": "Settle",
                    "grpc_code": code,
                },
            )
            or 0.0
        )

    ok, invalid = handled("OK"), handled("INVALID_ARGUMENT")
    hand = "http-counted-hand"
    assert http.post(url(server, "Settle"), json=changed(handId=hand)).status_code == 200
    assert http.post(url(server, "Settle"), json=changed(currency="EURO")).status_code == 400
    assert handled("OK") == ok + 1 and handled("INVALID_ARGUMENT") == invalid + 1
    issued = logs.wait_events("settlement.issued", lambda e: e.get("hand_id") == hand, 1)
    assert len(issued) == 1 and issued[0]["transport"] == "connect"
    assert issued[0]["rpc"] == "Settle" and issued[0]["settlement_id"]


def test_cors_is_off_unless_an_origin_is_allowed(
    server: ServerHandle, http: httpx.Client, tmp_path: Path
) -> None:
    preflight = {
        "origin": "https://tables.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version",
    }
    # the module's server allows no origin: no CORS header on any answer
    answer = http.options(url(server, "Settle"), headers=preflight)
    assert "access-control-allow-origin" not in answer.headers
    answer = http.post(url(server, "Settle"), json=TABLE, headers={"origin": preflight["origin"]})
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers

    allowed = start_http_server(
        tmp_path / "cors.sock", http_cors_origins="https://tables.example.com, https://b.example"
    )
    try:
        answer = http.options(url(allowed, "Settle"), headers=preflight)
        assert answer.status_code == 204
        assert answer.headers["access-control-allow-origin"] == "https://tables.example.com"
        assert "POST" in answer.headers["access-control-allow-methods"]
        assert {"content-type", "connect-protocol-version", "authorization"} <= {
            h.strip() for h in answer.headers["access-control-allow-headers"].split(",")
        }
        answer = http.post(
            url(allowed, "Settle"), json=TABLE, headers={"origin": "https://tables.example.com"}
        )
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == "https://tables.example.com"
        assert "grpc-status-details-bin" in answer.headers["access-control-expose-headers"]
        other = http.options(
            url(allowed, "Settle"), headers={**preflight, "origin": "https://evil.example"}
        )
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
    finally:
        stop_server(allowed)


@pytest.mark.skipif(
    shutil.which("curl") is None and os.environ.get("CI") != "true",
    reason="curl is not installed (.ci/run installs it)",
)
def test_curl_as_the_readme_shows(server: ServerHandle, tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    done = subprocess.run(
        [
            "curl",
            "-sS",
            "-H",
            "Content-Type: application/json",
            "-d",
            f"@{table}",
            url(server, "Settle"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["settlement"]["context"]["handId"] == TABLE["handId"]
    nets = {p["playerId"]: int(p["netMoney"]) for p in answer["settlement"]["players"]}
    assert sum(nets.values()) == 0 and set(nets) == {"A", "B", "C", "D"}


@pytest.mark.parametrize(
    "env,says",
    [
        ({"CPSETTLE_HTTP_PORT": "70000"}, "CPSETTLE_HTTP_PORT must be 0-65535"),
        ({"CPSETTLE_HTTP_PORT": "9464"}, "CPSETTLE_HTTP_PORT must differ"),
        ({"CPSETTLE_HTTP_CORS_ORIGINS": "tables.example.com"}, "is not an origin"),
        ({"CPSETTLE_MAX_CONNECTION_AGE_SECONDS": "-1"}, "must be 0 or more"),
        ({"CPSETTLE_KEEPALIVE_TIME_SECONDS": "0"}, "must be at least 1"),
    ],
)
def test_settings_of_the_http_port_and_connections_are_checked(
    env: dict[str, str], says: str
) -> None:
    from cpsettle_service.config import Settings
    from cpsettle_service.errors import ConfigError

    with pytest.raises(ConfigError, match=says):
        Settings.from_env(env)
    good = Settings.from_env(
        {"CPSETTLE_HTTP_PORT": "8080", "CPSETTLE_HTTP_CORS_ORIGINS": "https://a.example/, *"}
    )
    assert good.http_port == 8080 and good.cors_origins == ("https://a.example", "*")


def test_https_with_the_grpc_ports_certificates_read_again_when_renewed(tmp_path: Path) -> None:
    import shutil as files

    from tests.hardening.certs import Authority

    ca = Authority.create(tmp_path, "http-ca")
    first = ca.issue(tmp_path, "server-1", server=True)
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    files.copyfile(first.cert_file, cert)
    files.copyfile(first.key_file, key)
    handle = start_http_server(
        tmp_path / "tls.sock", tls_cert_file=str(cert), tls_key_file=str(key)
    )
    try:
        https = url(handle, "Settle", scheme="https")
        with httpx.Client(verify=trust(ca.cert_file), timeout=10) as client:
            assert client.post(https, json=TABLE).status_code == 200
        with httpx.Client(timeout=10) as plain, pytest.raises(httpx.HTTPError):
            plain.post(url(handle, "Settle"), json=TABLE)  # plaintext to an HTTPS port

        renewed = Authority.create(tmp_path, "renewed-ca")
        second = renewed.issue(tmp_path, "server-2", server=True)
        files.copyfile(second.key_file, key)  # half renewed: a key of another certificate
        assert handle.run(_reload(handle)) is False
        files.copyfile(second.cert_file, cert)
        assert handle.run(_reload(handle)) is True
        with httpx.Client(verify=trust(renewed.cert_file), timeout=10) as client:
            assert client.post(https, json=TABLE).status_code == 200
        with (
            httpx.Client(verify=trust(ca.cert_file), timeout=10) as old,
            pytest.raises(httpx.ConnectError),
        ):
            old.post(https, json=TABLE)
    finally:
        stop_server(handle)


def trust(ca_file: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file)


async def _reload(handle: ServerHandle) -> bool:
    assert handle.running.http is not None
    return handle.running.http.reload_tls()
