"""TLS and mutual TLS on the real server (127.0.0.1, a free port), with throwaway certificates."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cpsettle_client.client import SettlementClient, SettlementError, TlsConfig
from tests.conftest import LogStream, ServerHandle, stop_server
from tests.hardening.certs import Authority, Issued
from tests.hardening.support import good_request, start_tcp_server


class Pki:
    def __init__(self, directory: Path) -> None:
        self.ca = Authority.create(directory, "cpsettle-test-ca")
        self.other_ca = Authority.create(directory, "someone-else-ca")
        self.server = self.ca.issue(directory, "cpsettle-server", server=True)
        self.client = self.ca.issue(directory, "table-software", server=False)
        self.stranger = self.other_ca.issue(directory, "table-software-elsewhere", server=False)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_server(pki: Pki) -> Iterator[ServerHandle]:
    handle = start_tcp_server(tls_cert_file=pki.server.cert_file, tls_key_file=pki.server.key_file)
    yield handle
    stop_server(handle)


@pytest.fixture(scope="module")
def mtls_server(pki: Pki) -> Iterator[ServerHandle]:
    handle = start_tcp_server(
        tls_cert_file=pki.server.cert_file,
        tls_key_file=pki.server.key_file,
        tls_client_ca_file=pki.ca.cert_file,
    )
    yield handle
    stop_server(handle)


def settle(address: str, tls: TlsConfig | None, hand_id: str = "tls-hand") -> str:
    with SettlementClient(address, tls=tls, timeout=5) as client:
        settlement = client.settle(good_request(hand_id)).settlement
        assert client.health() == "SERVING"
    assert len(settlement.players) == 4 and settlement.context.hand_id == hand_id
    return settlement.settlement_id


def refused(address: str, tls: TlsConfig | None, logs: LogStream) -> SettlementError:
    """A call that must fail at the transport: UNAVAILABLE, fast, and no handler ever ran."""
    hand_id = f"refused-{uuid.uuid4().hex}"
    start = time.monotonic()
    with (
        SettlementClient(address, tls=tls, timeout=5) as client,
        pytest.raises(SettlementError) as e,
    ):
        client.settle(good_request(hand_id))
    assert e.value.code is grpc.StatusCode.UNAVAILABLE, e.value
    assert time.monotonic() - start < 4, "refused at the handshake, not by the deadline"
    assert not [ev for ev in logs.events() if ev.get("hand_id") == hand_id]
    return e.value


# --------------------------------------------------------------------------- server TLS


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_tls_serves_a_client_trusting_the_ca(tls_server: ServerHandle, pki: Pki, host: str) -> None:
    settle(f"{host}:{tls_server.running.port}", TlsConfig(ca_file=pki.ca.cert_file))


def test_tls_refuses_a_plaintext_client(tls_server: ServerHandle, logs: LogStream) -> None:
    refused(tls_server.address, None, logs)


def test_tls_client_refuses_a_server_from_an_untrusted_ca(
    tls_server: ServerHandle, pki: Pki, logs: LogStream
) -> None:
    refused(tls_server.address, TlsConfig(ca_file=pki.other_ca.cert_file), logs)


def test_tls_client_checks_the_server_name(
    tls_server: ServerHandle, pki: Pki, logs: LogStream
) -> None:
    refused(
        tls_server.address,
        TlsConfig(ca_file=pki.ca.cert_file, server_name="not-cpsettle.example"),
        logs,
    )


# --------------------------------------------------------------------------- mutual TLS


def test_mtls_serves_a_client_with_a_certificate_from_the_client_ca(
    mtls_server: ServerHandle, pki: Pki
) -> None:
    tls = TlsConfig(
        ca_file=pki.ca.cert_file, cert_file=pki.client.cert_file, key_file=pki.client.key_file
    )
    settle(mtls_server.address, tls)


def test_mtls_refuses_a_client_without_a_certificate(
    mtls_server: ServerHandle, pki: Pki, logs: LogStream
) -> None:
    refused(mtls_server.address, TlsConfig(ca_file=pki.ca.cert_file), logs)


def test_mtls_refuses_a_certificate_from_another_ca(
    mtls_server: ServerHandle, pki: Pki, logs: LogStream
) -> None:
    stranger: Issued = pki.stranger
    tls = TlsConfig(
        ca_file=pki.ca.cert_file, cert_file=stranger.cert_file, key_file=stranger.key_file
    )
    refused(mtls_server.address, tls, logs)


def test_mtls_refuses_a_server_certificate_used_as_a_client_certificate(
    mtls_server: ServerHandle, pki: Pki, logs: LogStream
) -> None:
    """Same CA, but the certificate is for serverAuth only: not a client identity."""
    tls = TlsConfig(
        ca_file=pki.ca.cert_file, cert_file=pki.server.cert_file, key_file=pki.server.key_file
    )
    refused(mtls_server.address, tls, logs)


def test_mtls_refuses_plaintext(mtls_server: ServerHandle, logs: LogStream) -> None:
    refused(mtls_server.address, None, logs)
