"""Every alert of deploy/components/prometheus-rules fires in the failure it names: real server
processes put in that failure, scraped by a real Prometheus (tests/ops/prometheus.py) that
evaluates the committed rules; each test waits for its alert to be pending or firing through
Prometheus' own API. Each failure is its own `namespace` label, so the installs alert apart, and
a healthy install beside them must stay quiet.

`for:` durations are not waited out (pending is the expression true in that failure; the
promtool unit tests pin the durations); the burn-rate alerts have none and fire at once.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError, TlsConfig
from tests.conftest import ROOT
from tests.hardening.certs import Authority
from tests.hardening.support import good_request, spawn_server_to, wait_answering
from tests.ops.prometheus import JOB, Prometheus, free_port
from tests.support.fixed_keys import fixed_test_key


class Replica:
    """One server process: gRPC on a unix socket (or TLS on a TCP port), /metrics on a port."""

    def __init__(
        self,
        tmp: Path,
        name: str,
        stdout: Any,
        *,
        key: bool = True,
        pythonpath: list[Path] | None = None,
        **env: str,
    ) -> None:
        self.name = name
        self.metrics_port = free_port()
        self.sock = tmp / f"{name}.sock"
        self.stderr = tmp / f"{name}.stderr"
        settings = dict(
            CPSETTLE_UNIX_SOCKET=str(self.sock),
            CPSETTLE_HOST="127.0.0.1",
            CPSETTLE_METRICS_PORT=str(self.metrics_port),
            CPSETTLE_GRACE_SECONDS="1",
        )
        if key:
            key_file = tmp / f"{name}.key"
            key_file.write_bytes(fixed_test_key(1))
            settings["CPSETTLE_SIGNING_KEY_FILE"] = str(key_file)
        settings.update(env)
        self.address = (
            f"127.0.0.1:{env['CPSETTLE_PORT']}" if "CPSETTLE_PORT" in env else f"unix://{self.sock}"
        )
        if "CPSETTLE_PORT" in env:
            del settings["CPSETTLE_UNIX_SOCKET"]
        # what wait_answering probes: the plaintext health port when the main port is TLS
        self.probe = (
            f"127.0.0.1:{env['CPSETTLE_HEALTH_PORT']}"
            if "CPSETTLE_HEALTH_PORT" in env
            else self.address
        )
        self.proc = spawn_server_to(stdout, self.stderr, pythonpath, **settings)

    @property
    def instance(self) -> str:
        return f"127.0.0.1:{self.metrics_port}"


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    p = Prometheus(tmp_path_factory.mktemp("prometheus"))
    yield p
    p.stop()


@pytest.fixture(scope="module")
def replicas() -> Iterator[list[Replica]]:
    started: list[Replica] = []
    yield started
    # all at once: replicas whose log is stuck take their grace period to give up on it
    for r in started:
        if r.proc.poll() is None:
            r.proc.kill()
    for r in started:
        r.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("replicas")


def start(
    prom: Prometheus,
    replicas: list[Replica],
    tmp: Path,
    namespace: str,
    stdout: Any,
    count: int = 1,
    **kw: Any,
) -> list[Replica]:
    """Start ``count`` replicas of an install, scraped as ``namespace``; once Prometheus has
    scraped each of them (so the calls that follow are a change it sees)."""
    group = [Replica(tmp, f"{namespace}-{i}", stdout, **kw) for i in range(count)]
    replicas.extend(group)
    for r in group:
        wait_answering(r.probe, r.proc, r.stderr)
    prom.scrape(namespace, *(r.metrics_port for r in group))
    prom.wait(
        lambda: len([s for s in prom.query(f'up{{namespace="{namespace}"}} == 1')]) == count,
        30,
        f"{namespace}: Prometheus did not scrape every replica",
    )
    return group


def settle(address: str, count: int, *, tls: TlsConfig | None = None) -> list[SettlementError]:
    """``count`` Settle calls; the errors of those refused."""
    failed = []
    with SettlementClient(address, timeout=10, tls=tls) as c:
        for i in range(count):
            try:
                c.settle(good_request(f"alert-{i}"))
            except SettlementError as e:
                failed.append(e)
    return failed


def settle_until_refused(address: str, limit: int = 400) -> SettlementError:
    with SettlementClient(address, timeout=10) as c:
        for i in range(limit):
            try:
                c.settle(good_request(f"fill-{i}"))
            except SettlementError as e:
                return e
    raise AssertionError(f"{limit} settlements all went out")


def drain(fd: int, stop: threading.Event, pause: float = 0.0) -> threading.Thread:
    """Read a pipe until ``stop`` (``pause`` seconds between reads of 4 KiB: a slow sink)."""

    def run() -> None:
        while not stop.is_set():
            try:
                if not os.read(fd, 4096):
                    return
            except OSError:
                return
            if pause:
                time.sleep(pause)

    thread = threading.Thread(target=run, daemon=True, name="log-reader")
    thread.start()
    return thread


# --------------------------------------------------------------------------- healthy, beside


@pytest.fixture(scope="module")
def healthy(prom: Prometheus, replicas: list[Replica], tmp: Path) -> Replica:
    with open(tmp / "healthy.log", "wb") as log:
        [r] = start(prom, replicas, tmp, "healthy", log)
    assert settle(r.address, 20) == []
    return r


def test_the_audit_log_stuck_on_a_pipe_nobody_reads(
    prom: Prometheus, replicas: list[Replica], tmp: Path, healthy: Replica
) -> None:
    """The failure of issue #30: readiness NOT_SERVING, liveness SERVING, nothing in flight,
    settlements no longer counted; the sink's own metric makes the alert fire."""
    read_end, write_end = os.pipe()
    try:
        [r] = start(prom, replicas, tmp, "stuck-pipe", write_end)
        refused = settle_until_refused(r.address)
        assert refused.reason == "AUDIT_LOG_UNAVAILABLE", refused
        more = settle(r.address, 5)
        assert len(more) == 5 and all(e.code.name == "UNAVAILABLE" for e in more)
        with SettlementClient(r.address, timeout=2) as c:
            assert c.health("cpsettle.v1.SettlementService") == "NOT_SERVING"
            assert c.health("liveness") == "SERVING"
        prom.wait_alert("CpsettleAuditLogStuck", "stuck-pipe", instance=r.instance)
        prom.wait_alert("CpsettleNotReady", "stuck-pipe", instance=r.instance)
        # the calls failed UNAVAILABLE: the error ratio and the availability SLO's budget
        prom.wait_alert("CpsettleErrorRatioHigh", "stuck-pipe")
        prom.wait_alert("CpsettleAvailabilityBudgetBurn", "stuck-pipe")
        prom.wait_alert("CpsettleAvailabilityBudgetBurnSlow", "stuck-pipe")
        # what the alert before #30 needed never happens: nothing is left in flight
        [in_flight] = prom.query('cpsettle_rpcs_in_flight{namespace="stuck-pipe"}')
        assert float(in_flight["value"][1]) == 0
    finally:
        os.close(read_end)
        os.close(write_end)


def test_the_audit_log_on_a_closed_pipe(
    prom: Prometheus, replicas: list[Replica], tmp: Path
) -> None:
    read_end, write_end = os.pipe()
    stop = threading.Event()
    reader = drain(read_end, stop)
    [r] = start(prom, replicas, tmp, "closed-pipe", write_end)
    os.close(write_end)
    assert settle(r.address, 3) == []
    stop.set()
    os.close(read_end)  # the log agent went away: every write is EPIPE from now on
    reader.join(timeout=5)
    failed = settle(r.address, 3)
    assert failed and all(e.reason == "AUDIT_LOG_UNAVAILABLE" for e in failed), failed
    prom.wait_alert("CpsettleAuditLogStuck", "closed-pipe", instance=r.instance)
    prom.wait_alert("CpsettleNotReady", "closed-pipe", instance=r.instance)


def test_the_audit_log_on_a_full_disk(prom: Prometheus, replicas: list[Replica], tmp: Path) -> None:
    with open("/dev/full", "wb") as full:  # every write: ENOSPC
        [r] = start(prom, replicas, tmp, "full-disk", full)
    failed = settle(r.address, 2)
    assert len(failed) == 2 and failed[0].reason == "AUDIT_LOG_UNAVAILABLE", failed
    prom.wait_alert("CpsettleAuditLogStuck", "full-disk", instance=r.instance)
    prom.wait_alert("CpsettleNotReady", "full-disk", instance=r.instance)
    [queued] = prom.query('cpsettle_audit_log_queued_lines{namespace="full-disk"}')
    assert float(queued["value"][1]) >= 1  # the line it keeps retrying


def test_audit_events_filtered_out(prom: Prometheus, replicas: list[Replica], tmp: Path) -> None:
    """Settlements go out but their events are filtered by a log level above info."""
    with open(tmp / "level.log", "wb") as log:
        [r] = start(prom, replicas, tmp, "log-level", log, CPSETTLE_LOG_LEVEL="warning")
    # the first settlement makes its profile's series; rate() counts from its first sample,
    # so the hands that follow are the increase (as on a replica that keeps settling)
    assert settle(r.address, 1) == []
    prom.wait(
        lambda: bool(prom.query('cpsettle_settlements_total{namespace="log-level"}')),
        30,
        "the settlements series was never scraped",
    )
    assert settle(r.address, 5) == []
    prom.wait_alert("CpsettleAuditLogStuck", "log-level", instance=r.instance)


def test_a_slow_log_sink_saturates_a_replica(
    prom: Prometheus, replicas: list[Replica], tmp: Path
) -> None:
    """A log agent that reads slowly: each answer waits for its line, calls take hundreds of
    milliseconds and pile up to the concurrency limit (latency alerts, the latency SLO)."""
    read_end, write_end = os.pipe()
    stop, stop_reading = threading.Event(), threading.Event()
    reader = drain(read_end, stop_reading, pause=0.05)
    [r] = start(
        prom,
        replicas,
        tmp,
        "slow-sink",
        write_end,
        CPSETTLE_MAX_CONCURRENT_RPCS="4",
        CPSETTLE_AUDIT_LOG_STALL_SECONDS="10",
    )
    os.close(write_end)
    errors: list[SettlementError] = []

    def load() -> None:
        # the table software's own retry loop below, not the client's (a refusal seen at once)
        with SettlementClient(r.address, timeout=20, retry=False) as c:
            while not stop.is_set():
                try:
                    c.settle(good_request("slow"))
                except SettlementError as e:
                    errors.append(e)
                    time.sleep(0.02)  # AT_CAPACITY: the table software retries shortly

    # more callers than the limit, so the replica stays at it (a client's own time between
    # two calls does not leave a slot free)
    threads = [threading.Thread(target=load, daemon=True) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        prom.wait_alert("CpsettleLatencyP99High", "slow-sink", grpc_method="Settle")
        prom.wait_alert("CpsettleLatencyBudgetBurn", "slow-sink")
        prom.wait_alert("CpsettleLatencyBudgetBurnSlow", "slow-sink")
        prom.wait_alert("CpsettleNearConcurrencyLimit", "slow-sink", instance=r.instance)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        stop_reading.set()
        reader.join(timeout=5)
        os.close(read_end)
    assert not [e for e in errors if e.reason == "AUDIT_LOG_UNAVAILABLE"]  # slow, not stuck
    assert {e.reason for e in errors} <= {"AT_CAPACITY"}, errors


def test_dealer_payouts_that_disagree(prom: Prometheus, replicas: list[Replica], tmp: Path) -> None:
    with open(tmp / "mismatch.log", "wb") as log:
        [r] = start(prom, replicas, tmp, "mismatch", log)
    with SettlementClient(r.address, timeout=10) as c:
        for i in range(5):
            request = good_request(f"mismatch-{i}")
            nets = {p.player_id: p.net_money for p in c.settle(request).settlement.players}
            first = next(iter(nets))
            nets[first] += 100  # the dealer pays one player a unit too much
            assert not c.validate_payouts(request, nets).all_match
    prom.wait_alert("CpsettlePayoutMismatchRate", "mismatch")


def test_replicas_of_two_builds(prom: Prometheus, replicas: list[Replica], tmp: Path) -> None:
    """One replica runs engine code that differs by a line (another build's image)."""
    other = tmp / "other-build"
    shutil.copytree(
        ROOT / "service", other / "service", ignore=shutil.ignore_patterns("__pycache__")
    )
    # any file of the engine (the domain package) will do: the first one found
    hands = next(iter(sorted((other / "service" / "cpsettle_service" / "domain").rglob("*.py"))))
    hands.write_text(hands.read_text() + "\n# another build\n")
    with open(tmp / "build-a.log", "wb") as log:
        a = start(prom, replicas, tmp, "two-builds", log)
    with open(tmp / "build-b.log", "wb") as log:
        b = Replica(
            tmp,
            "two-builds-b",
            log,
            pythonpath=[other / "service", ROOT / "proto", ROOT / "clients" / "python"],
        )
    replicas.append(b)
    wait_answering(b.probe, b.proc, b.stderr)
    prom.scrape("two-builds", a[0].metrics_port, b.metrics_port)
    alert = prom.wait_alert("CpsettleEngineDigestMismatch", "two-builds")
    assert alert["value"] in ("2", "2e+00")


def test_a_replica_without_its_signing_key(
    prom: Prometheus, replicas: list[Replica], tmp: Path
) -> None:
    with open(tmp / "unsigned.log", "wb") as log:
        [r] = start(prom, replicas, tmp, "unsigned", log, key=False)
    prom.wait_alert("CpsettleSigningDisabled", "unsigned", instance=r.instance)


def test_a_replica_gone_then_all(prom: Prometheus, replicas: list[Replica], tmp: Path) -> None:
    with open(tmp / "gone.log", "wb") as log:
        a, b = start(prom, replicas, tmp, "replica-gone", log, count=2)
    a.proc.kill()
    a.proc.wait(timeout=10)
    prom.wait_alert("CpsettleTargetDown", "replica-gone", instance=a.instance, job=JOB)
    assert "CpsettleNoReplicaUp" not in prom.active("replica-gone")  # b is still up
    b.proc.kill()
    b.proc.wait(timeout=10)
    prom.wait_alert("CpsettleNoReplicaUp", "replica-gone")


def test_a_certificate_near_its_expiry(
    prom: Prometheus, replicas: list[Replica], tmp: Path
) -> None:
    """The serving certificate (valid one day) as the replica loaded it."""
    ca = Authority.create(tmp, "alerts-ca")
    cert = ca.issue(tmp, "alerts-server", server=True)
    port = free_port()
    with open(tmp / "cert.log", "wb") as log:
        [r] = start(
            prom,
            replicas,
            tmp,
            "cert-expiry",
            log,
            CPSETTLE_PORT=str(port),
            CPSETTLE_TLS_CERT_FILE=cert.cert_file,
            CPSETTLE_TLS_KEY_FILE=cert.key_file,
            CPSETTLE_HEALTH_PORT=str(free_port()),
        )
    prom.wait_alert("CpsettleCertificateExpiresSoon", "cert-expiry", instance=r.instance)


def test_the_healthy_install_stayed_quiet(prom: Prometheus, healthy: Replica) -> None:
    """Beside every failure above, the healthy install (its replica up all along, settling,
    signed, ready) has no alert pending or firing."""
    assert settle(healthy.address, 5) == []
    time.sleep(2)  # two more evaluations after those calls
    assert prom.active("healthy") == {}
    assert prom.query('cpsettle_ready{namespace="healthy"} == 1')
    assert prom.query('cpsettle_audit_log_stuck{namespace="healthy"} == 0')
