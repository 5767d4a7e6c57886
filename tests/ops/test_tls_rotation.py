"""Certificates rotated under a running server (the real build_server on 127.0.0.1): the files
are swapped as a Kubernetes Secret volume swaps them (an atomic `..data` symlink), new
connections get the new certificate, open ones keep theirs, and no call fails meanwhile; a key
that does not match its certificate is refused and the served pair kept; the expiry metric
follows what is served. Also: callers must authenticate when CPSETTLE_REQUIRE_CALLER_AUTH says
so, and channelz answers on the admin port when on and is absent when off."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_channelz.v1 import channelz_pb2, channelz_pb2_grpc

from cpsettle_client.client import SettlementClient, SettlementError, TlsConfig
from cpsettle_service.config import Settings
from cpsettle_service.errors import ConfigError
from cpsettle_service.observability import metrics
from tests.conftest import ServerHandle, stop_server
from tests.hardening.certs import Authority
from tests.hardening.support import good_request, start_tcp_server
from tests.ops.prometheus import free_port


def issue(ca: Authority, days: float) -> tuple[bytes, bytes, x509.Certificate]:
    """A server certificate for localhost/127.0.0.1 from ``ca``, valid ``days``: PEM cert, key."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cpsettle")]))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(ca.key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem, cert


class SecretVolume:
    """A directory laid out as the kubelet lays out a Secret volume: tls.crt and tls.key are
    symlinks into ``..data``, itself a symlink to a timestamped folder, swapped in one rename."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()
        self.n = 0

    def publish(self, cert: bytes, key: bytes) -> None:
        self.n += 1
        folder = self.root / f"..2026_{self.n:04d}"
        folder.mkdir()
        (folder / "tls.crt").write_bytes(cert)
        (folder / "tls.key").write_bytes(key)
        tmp_link = self.root / "..data_tmp"
        os.symlink(folder.name, tmp_link)
        os.replace(tmp_link, self.root / "..data")
        for name in ("tls.crt", "tls.key"):
            if not (self.root / name).is_symlink():
                os.symlink(f"..data/{name}", self.root / name)

    def file(self, name: str) -> str:
        return str(self.root / name)


def served_certificate(port: int, ca_file: str) -> x509.Certificate:
    """The certificate a new TLS connection to the port is handed (ALPN h2, as gRPC dials)."""
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["h2"])
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


class Callers:
    """Settle calls from threads until stopped: one client on one connection all along, and
    one new client (a new connection, a new handshake) per call."""

    def __init__(self, address: str, tls: TlsConfig) -> None:
        self.address, self.tls = address, tls
        self.stop = threading.Event()
        self.done = {"kept": 0, "new": 0}
        self.failed: list[SettlementError] = []
        self.threads = [
            threading.Thread(target=self.kept, daemon=True),
            threading.Thread(target=self.new, daemon=True),
        ]
        for t in self.threads:
            t.start()

    def kept(self) -> None:
        with SettlementClient(self.address, tls=self.tls, timeout=10) as c:
            while not self.stop.is_set():
                self.call(c, "kept")

    def new(self) -> None:
        while not self.stop.is_set():
            with SettlementClient(self.address, tls=self.tls, timeout=10) as c:
                self.call(c, "new")

    def call(self, c: SettlementClient, kind: str) -> None:
        try:
            c.settle(good_request(f"rotation-{kind}"))
            self.done[kind] += 1
        except SettlementError as e:
            self.failed.append(e)

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)


@pytest.fixture()
def pki(tmp_path: Path) -> Authority:
    return Authority.create(tmp_path, "rotation-ca")


@pytest.fixture()
def volume(tmp_path: Path) -> SecretVolume:
    return SecretVolume(tmp_path / "tls")


@pytest.fixture()
def server(volume: SecretVolume, pki: Authority) -> Iterator[ServerHandle]:
    cert, key, _ = issue(pki, days=10)
    volume.publish(cert, key)
    handle = start_tcp_server(
        tls_cert_file=volume.file("tls.crt"), tls_key_file=volume.file("tls.key")
    )
    yield handle
    stop_server(handle)


def wait_for(condition: object, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition never met"
        time.sleep(0.05)


def test_a_rotation_under_load_fails_no_call(
    server: ServerHandle, volume: SecretVolume, pki: Authority
) -> None:
    port = server.running.port
    tls = TlsConfig(ca_file=pki.cert_file, server_name="localhost")
    first = served_certificate(port, pki.cert_file)
    assert metrics.TLS_CERT_EXPIRY._value.get() == first.not_valid_after_utc.timestamp()
    callers = Callers(server.address, tls)
    try:
        wait_for(lambda: callers.done["kept"] >= 20 and callers.done["new"] >= 5)
        cert, key, renewed = issue(pki, days=90)
        volume.publish(cert, key)  # cert-manager renewed the Secret: one atomic swap
        # the next new connection gets the renewed certificate: no restart
        wait_for(
            lambda: served_certificate(port, pki.cert_file).serial_number == renewed.serial_number
        )
        assert metrics.TLS_CERT_EXPIRY._value.get() == renewed.not_valid_after_utc.timestamp()
        before = dict(callers.done)
        wait_for(
            lambda: (
                callers.done["kept"] >= before["kept"] + 20
                and callers.done["new"] >= before["new"] + 5
            )
        )
    finally:
        callers.finish()
    assert callers.failed == []
    assert served_certificate(port, pki.cert_file).serial_number == renewed.serial_number


def test_a_key_of_another_certificate_is_refused_and_the_served_pair_kept(
    server: ServerHandle, volume: SecretVolume, pki: Authority
) -> None:
    port = server.running.port
    served = served_certificate(port, pki.cert_file)
    rejected = metrics.TLS_RELOADS.labels("rejected")._value.get()
    cert, _, _ = issue(pki, days=90)
    _, other_key, _ = issue(pki, days=90)
    volume.publish(cert, other_key)  # a half-done rotation: the key is not the certificate's
    assert server.running.certificates is not None
    server.running.certificates.refresh()
    assert metrics.TLS_RELOADS.labels("rejected")._value.get() == rejected + 1
    assert served_certificate(port, pki.cert_file).serial_number == served.serial_number
    with SettlementClient(
        server.address, tls=TlsConfig(ca_file=pki.cert_file, server_name="localhost"), timeout=10
    ) as c:
        assert c.settle(good_request("still-served")).settlement.settlement_id
    assert metrics.TLS_CERT_EXPIRY._value.get() == served.not_valid_after_utc.timestamp()


def test_a_server_that_must_authenticate_callers_needs_a_way_to() -> None:
    with pytest.raises(ConfigError, match="CPSETTLE_REQUIRE_CALLER_AUTH needs"):
        Settings.from_env(
            {
                "CPSETTLE_REQUIRE_CALLER_AUTH": "true",
                "CPSETTLE_TLS_CERT_FILE": "c",
                "CPSETTLE_TLS_KEY_FILE": "k",
            }
        )
    for way in ({"CPSETTLE_TLS_CLIENT_CA_FILE": "ca"}, {"CPSETTLE_AUTH_TOKENS_FILE": "t"}):
        settings = Settings.from_env(
            {
                "CPSETTLE_REQUIRE_CALLER_AUTH": "true",
                "CPSETTLE_TLS_CERT_FILE": "c",
                "CPSETTLE_TLS_KEY_FILE": "k",
                **way,
            }
        )
        assert settings.require_caller_auth


# --------------------------------------------------------------------------- channelz


def channelz_servers(port: int) -> channelz_pb2.GetServersResponse:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = channelz_pb2_grpc.ChannelzStub(channel)
        reply: channelz_pb2.GetServersResponse = stub.GetServers(
            channelz_pb2.GetServersRequest(), timeout=5
        )
        return reply


@pytest.mark.parametrize("on", [True, False])
def test_channelz_on_the_admin_port_only_when_on(on: bool) -> None:
    admin = free_port()
    handle = start_tcp_server(health_port=admin, channelz=on)
    try:
        with SettlementClient(handle.address, timeout=10) as c:
            c.settle(good_request("channelz"))
        if on:
            reply = channelz_servers(admin)
            # the process's servers, the main port's among them, with its calls counted
            assert reply.server and sum(s.data.calls_succeeded for s in reply.server) >= 1
        else:
            with pytest.raises(grpc.RpcError) as e:
                channelz_servers(admin)
            assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
        # never on the main port, whatever the setting
        with pytest.raises(grpc.RpcError) as e:
            channelz_servers(handle.running.port)
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        stop_server(handle)


def test_channelz_needs_the_admin_port() -> None:
    with pytest.raises(ConfigError, match="CPSETTLE_CHANNELZ needs CPSETTLE_HEALTH_PORT"):
        Settings.from_env({"CPSETTLE_CHANNELZ": "true"})
