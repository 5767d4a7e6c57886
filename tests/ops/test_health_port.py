"""TLS on the gRPC port with a plaintext, health-only port for the kubelet's probes
(CPSETTLE_HEALTH_PORT), as the prod overlay runs it: a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, TlsConfig
from cpsettle_service.api.servicer import SERVICE_NAME
from cpsettle_service.config import Settings
from cpsettle_service.errors import ConfigError
from cpsettle_service.server import build_server
from tests.conftest import LogStream, ServerHandle
from tests.deploy.test_manifests import REPO, build_variant, container, env
from tests.hardening.certs import Authority, Issued
from tests.hardening.support import good_request, start_tcp_server
from tests.ops.test_observability import free_port
from tests.support.fixed_keys import fixed_test_key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Authority, Issued]:
    directory = tmp_path_factory.mktemp("pki-health")
    ca = Authority.create(directory, "cpsettle-test-ca")
    return ca, ca.issue(directory, "cpsettle-server", server=True)


@pytest.fixture(scope="module")
def tls_with_health(pki: tuple[Authority, Issued]) -> Iterator[ServerHandle]:
    _, server_cert = pki
    handle = start_tcp_server(
        tls_cert_file=server_cert.cert_file,
        tls_key_file=server_cert.key_file,
        health_port=free_port(),
    )
    yield handle
    handle.run(handle.running.drain())
    handle.loop.call_soon_threadsafe(handle.loop.stop)


def health_address(handle: ServerHandle) -> str:
    return f"127.0.0.1:{handle.running.health_port}"


def test_the_main_port_serves_tls_only(
    tls_with_health: ServerHandle, pki: tuple[Authority, Issued], logs: LogStream
) -> None:
    ca, _ = pki
    with SettlementClient(
        tls_with_health.address, tls=TlsConfig(ca_file=ca.cert_file), timeout=5
    ) as c:
        assert c.settle(good_request("tls-health-ok")).settlement.context.hand_id == "tls-health-ok"
    with SettlementClient(tls_with_health.address, timeout=3) as plain:
        with pytest.raises(SettlementError) as e:
            plain.settle(good_request("tls-health-plaintext"))
        assert e.value.code is grpc.StatusCode.UNAVAILABLE
        with pytest.raises(SettlementError):
            plain.health()
    assert not [ev for ev in logs.events() if ev.get("hand_id") == "tls-health-plaintext"]


def test_the_health_port_answers_every_probe_in_plaintext(tls_with_health: ServerHandle) -> None:
    port = tls_with_health.running.health_port
    assert port and port != tls_with_health.running.port
    with SettlementClient(health_address(tls_with_health), timeout=3) as c:
        # the three names the Deployment's probes ask for
        assert c.health("") == "SERVING"
        assert c.health(SERVICE_NAME) == "SERVING"
        assert c.health("liveness") == "SERVING"


def test_the_health_port_serves_nothing_else(tls_with_health: ServerHandle) -> None:
    with SettlementClient(health_address(tls_with_health), timeout=3) as c:
        for call in (lambda: c.settle(good_request("on-the-health-port")), c.list_profiles):
            with pytest.raises(SettlementError) as e:
                call()
            assert e.value.code is grpc.StatusCode.UNIMPLEMENTED


def test_the_health_port_speaks_no_tls(
    tls_with_health: ServerHandle, pki: tuple[Authority, Issued]
) -> None:
    ca, _ = pki
    with SettlementClient(
        health_address(tls_with_health), tls=TlsConfig(ca_file=ca.cert_file), timeout=3
    ) as c:
        with pytest.raises(SettlementError) as e:
            c.health()
        assert e.value.code is grpc.StatusCode.UNAVAILABLE


def test_readiness_drops_on_the_health_port_while_draining(
    pki: tuple[Authority, Issued], tmp_path: Path
) -> None:
    """The probes read the same health servicer: a draining pod leaves the endpoints, and
    liveness still answers until the drain is over."""
    _, server_cert = pki
    handle = start_tcp_server(
        tls_cert_file=server_cert.cert_file,
        tls_key_file=server_cert.key_file,
        health_port=free_port(),
    )
    try:
        handle.run(handle.running.set_serving(False))
        with SettlementClient(health_address(handle), timeout=3) as c:
            assert c.health(SERVICE_NAME) == "NOT_SERVING"
            assert c.health("liveness") == "SERVING"
    finally:
        handle.run(handle.running.drain())
        handle.loop.call_soon_threadsafe(handle.loop.stop)
    with SettlementClient(health_address(handle), timeout=1) as c:
        with pytest.raises(SettlementError) as e:
            c.health("liveness")
        assert e.value.code is grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    "env, problem",
    [
        ({"CPSETTLE_HEALTH_PORT": "50051"}, "must differ"),
        ({"CPSETTLE_HEALTH_PORT": "9464"}, "must differ"),
        ({"CPSETTLE_HEALTH_PORT": "70000"}, "0-65535"),
    ],
)
def test_a_health_port_that_cannot_work_is_refused(env: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        Settings.from_env(env)
    assert Settings.from_env({"CPSETTLE_HEALTH_PORT": "8081"}).health_port == 8081


def test_the_prod_overlay_environment_serves_tls_and_its_probes_answer(
    pki: tuple[Authority, Issued], tmp_path: Path
) -> None:
    """The prod overlay's own container environment and probes (from the manifests), run by the
    real server with throwaway certificates in place of the Secret and free ports: the gRPC
    port refuses plaintext, each probe's service answers SERVING on the probes' port."""
    ca, server_cert = pki
    docs = build_variant("prod")
    environment = env(docs)
    assert environment["CPSETTLE_TLS_CERT_FILE"] and environment["CPSETTLE_TLS_KEY_FILE"]
    settings = Settings.from_env(environment)
    probes = {
        kind: container(docs)[kind]["grpc"]
        for kind in ("startupProbe", "readinessProbe", "livenessProbe")
    }
    assert {p["port"] for p in probes.values()} == {settings.health_port}
    key_file = tmp_path / "signing.pem"  # in place of the mounted Secrets
    key_file.write_bytes(fixed_test_key(1))
    key_file.chmod(0o600)  # as the Secret is mounted: no other user reads it
    settings = dataclasses.replace(
        settings,
        host="127.0.0.1",
        port=0,
        health_port=free_port(),
        metrics_port=0,
        tls_cert_file=server_cert.cert_file,
        tls_key_file=server_cert.key_file,
        tls_client_ca_file=ca.cert_file,  # the overlay's ca.crt: callers need a certificate
        signing_key_file=str(key_file),
        profile_dir=str(REPO / "deploy" / "base" / "profiles"),
    )
    assert settings.require_caller_auth
    caller = ca.issue(tmp_path, "table-software", server=False)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="prod-env-loop").start()
    running = asyncio.run_coroutine_threadsafe(build_server(settings), loop).result(30)
    handle = ServerHandle(f"127.0.0.1:{running.port}", running, loop)
    try:
        with SettlementClient(health_address(handle), timeout=3) as probe:
            for kind, grpc_probe in probes.items():
                assert probe.health(grpc_probe.get("service", "")) == "SERVING", kind
        with SettlementClient(handle.address, timeout=3) as plain:
            with pytest.raises(SettlementError) as e:
                plain.health()
            assert e.value.code is grpc.StatusCode.UNAVAILABLE
        with SettlementClient(
            handle.address, tls=TlsConfig(ca_file=ca.cert_file), timeout=5
        ) as anonymous:  # TLS without a client certificate
            with pytest.raises(SettlementError) as e:
                anonymous.settle(good_request("prod-env-anonymous"))
            assert e.value.code is grpc.StatusCode.UNAVAILABLE
        tls = TlsConfig(ca_file=ca.cert_file, cert_file=caller.cert_file, key_file=caller.key_file)
        with SettlementClient(handle.address, tls=tls, timeout=5) as c:
            request = good_request("prod-env-hand")
            request.preset = "house-western-500"
            settlement = c.settle(request).settlement
            assert settlement.unit_value == 500 and settlement.signature.algorithm == (
                pb.SIGNATURE_ALGORITHM_ED25519
            )
    finally:
        handle.run(handle.running.drain())
        handle.loop.call_soon_threadsafe(handle.loop.stop)
