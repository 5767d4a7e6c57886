"""The CLI's messages an integrator meets first (issue #27): the version line, one problem
said in the singular, an unknown field named with its path and the nearest field, and a hint
to add --tls when the server's port speaks TLS."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_service.proof.integrity import ENGINE_VERSION, PACKAGE_VERSION
from tests.conftest import EXAMPLES, ServerHandle, stop_server
from tests.hardening.certs import Authority
from tests.hardening.support import start_tcp_server

TABLE = json.loads((EXAMPLES / "tables" / "western.json").read_text())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse's --version exits
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_version_names_the_package_engine_and_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"cpsettle {PACKAGE_VERSION}"
    assert lines[1] == f"engine {ENGINE_VERSION}"
    assert re.fullmatch(r"contract cpsettle\.v1 \(descriptors [0-9a-f]{16}\)", lines[2])
    assert pb.DESCRIPTOR.package == "cpsettle.v1"


def test_one_problem_is_said_in_the_singular(
    capsys: pytest.CaptureFixture[str], server: ServerHandle, tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "settle", write(tmp_path, {**TABLE, "currency": "EURO"}), "--server", server.address
    )
    assert code == 2
    assert "(1 problem)" in err and "problems)" not in err


@pytest.mark.parametrize("where", ["--local", "server"])
def test_unknown_fields_are_named_with_their_path_not_the_parsers_text(
    capsys: pytest.CaptureFixture[str], server: ServerHandle, tmp_path: Path, where: str
) -> None:
    request = json.loads(json.dumps(TABLE))
    request["players"][1]["arrangment"] = request["players"][1].pop("arrangement")
    request["preset_name"] = "western"
    args = ["--local"] if where == "--local" else ["--server", server.address]
    code, _, err = run(capsys, "settle", write(tmp_path, request), *args)
    assert code == 2
    assert err.splitlines()[1:] == [
        "  - players[1].arrangment: unknown field of Player; did you mean 'arrangement'?",
        "  - preset_name: unknown field of SettleRequest; did you mean 'preset'?",
    ]
    assert "Available Fields" not in err and "has no field named" not in err


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    directory = tmp_path_factory.mktemp("pki")
    ca = Authority.create(directory, "cli-test-ca")
    issued = ca.issue(directory, "cpsettle-server", server=True)
    handle = start_tcp_server(tls_cert_file=issued.cert_file, tls_key_file=issued.key_file)
    handle.ca_file = ca.cert_file  # type: ignore[attr-defined]
    yield handle
    stop_server(handle)


def test_a_plaintext_call_to_a_tls_port_hints_at_tls(
    capsys: pytest.CaptureFixture[str], tls_server: ServerHandle, tmp_path: Path
) -> None:
    path = write(tmp_path, TABLE)
    code, _, err = run(capsys, "settle", path, "--server", tls_server.address, "--timeout", "2")
    assert code == 3 and "UNAVAILABLE" in err
    assert f"{tls_server.address} speaks TLS: add --tls" in err
    # with --tls and the CA, the same call settles
    code, _out, err = run(
        capsys,
        "settle",
        path,
        "--server",
        tls_server.address,
        "--tls",
        "--ca-file",
        tls_server.ca_file,  # type: ignore[attr-defined]
    )
    assert code == 0, err


def test_an_unreachable_plaintext_port_gets_no_tls_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "settle", write(tmp_path, TABLE), "--server", "127.0.0.1:1", "--timeout", "1"
    )
    assert code == 3 and "UNAVAILABLE" in err and "--tls" not in err


def test_page_writes_the_settle_page(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "settle.html"
    code, _, err = run(capsys, "page", "-o", str(out), "--service", "https://cpsettle:8080/")
    assert code == 0, err
    text = out.read_text()
    assert 'value="https://cpsettle:8080"' in text
    assert "connect-src https://cpsettle:8080;" in text and "script-src 'sha256-" in text
    code, _, err = run(capsys, "page", "-o", str(out), "--service", "javascript:alert(1)")
    assert code == 2 and "not an http(s) address" in err
