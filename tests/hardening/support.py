"""Helpers for the hardening tests: servers (in-process and as a real process), a test-only
hold on the real Settle handler, raw protobuf encoding, and process memory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import request_from_json
from cpsettle_service.api.servicer import SettlementServicer
from cpsettle_service.config import Settings
from cpsettle_service.server import build_server
from tests.conftest import ServerHandle
from tests.support.health import health_check
from tests.support.tables import table

ROOT = Path(__file__).resolve().parents[2]
SETTLE = "/cpsettle.v1.SettlementService/Settle"


def good_request(hand_id: str = "test-hand", **extra: Any) -> pb.SettleRequest:
    request = request_from_json(table())
    request.hand_id = hand_id
    for key, value in extra.items():
        setattr(request, key, value)
    return request


# --------------------------------------------------------------------------- in-process, TCP


def start_tcp_server(**overrides: Any) -> ServerHandle:
    """The real ``build_server`` on 127.0.0.1 and a free port, in a loop thread of this process."""
    overrides.setdefault("grace_seconds", 2.0)
    settings = Settings(host="127.0.0.1", port=0, metrics_port=0, **overrides)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="grpc-tcp-loop").start()
    running = asyncio.run_coroutine_threadsafe(build_server(settings), loop).result(30)
    return ServerHandle(f"127.0.0.1:{running.port}", running, loop)


# --------------------------------------------------------------------------- a held Settle


class HeldSettle:
    """Test-only: the real Settle handler, made to wait (in the event loop, without blocking it)
    before it settles. Installed on ``SettlementServicer`` before a server is built, so the call
    takes the production path: grpc's concurrency limiter, the ServiceInterceptor, the tolerant
    deserializer, the servicer and a real settlement; only the wait is added.

    ``mode``: "pass" (no wait), "hold" (until ``release()``; 30 s at most), or a number of
    seconds to sleep.
    """

    def __init__(self) -> None:
        self.mode: str | float = "pass"
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.entered = 0
        self.original = SettlementServicer.Settle

    def release(self) -> None:
        self._released.set()

    def hold(self) -> None:
        self._released.clear()
        self.mode = "hold"

    def wait_entered(self, count: int, seconds: float = 10) -> None:
        deadline = time.monotonic() + seconds
        while self.entered < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"only {self.entered} of {count} calls reached the handler")
            time.sleep(0.002)

    def install(self, monkeypatch: Any) -> None:
        held = self
        original = self.original

        async def Settle(servicer: Any, request: Any, context: Any) -> Any:
            with held._lock:
                held.entered += 1
            mode = held.mode
            if mode == "hold":
                deadline = time.monotonic() + 30
                while not held._released.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.002)
            elif mode != "pass":
                await asyncio.sleep(float(mode))
            return await original(servicer, request, context)

        monkeypatch.setattr(SettlementServicer, "Settle", Settle)


# --------------------------------------------------------------------------- a real process


def spawn_server(log_file: Path, **env: str) -> subprocess.Popen[bytes]:
    """``python -m cpsettle_service.server`` with CPSETTLE_* settings; its JSON logs to a file."""
    environ = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
        CPSETTLE_METRICS_PORT="0",
        CPSETTLE_LOG_FORMAT="json",
        **env,
    )
    out = open(log_file, "wb")  # noqa: SIM115 — the child keeps it; closed by the OS at exit
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "cpsettle_service.server"],
            env=environ,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    finally:
        out.close()


def wait_serving(
    address: str, proc: subprocess.Popen[bytes], log_file: Path, seconds: float = 30
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, log_file.read_text()
        with grpc.insecure_channel(address) as channel:
            try:
                reply = health_check(channel)(health_pb2.HealthCheckRequest(), timeout=0.5)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
        time.sleep(0.05)
    raise AssertionError("server did not become SERVING\n" + log_file.read_text())


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def log_events(log_file: Path) -> Iterator[dict[str, Any]]:
    for line in log_file.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def rss_kib(pid: int) -> int:
    """Resident set size of a process, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def health_status(address: str, service: str = "", timeout: float = 2) -> str:
    with grpc.insecure_channel(address) as channel:
        reply = health_check(channel)(
            health_pb2.HealthCheckRequest(service=service), timeout=timeout
        )
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


# --------------------------------------------------------------------------- raw protobuf


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def length_delimited(field: int, payload: bytes) -> bytes:
    return tag(field, 2) + varint(len(payload)) + payload


# ------------------------------------------------------------------ a real process, any sink


def spawn_server_to(
    stdout: Any, stderr: Path, pythonpath: list[Path] | None = None, **env: str
) -> subprocess.Popen[bytes]:
    """``python -m cpsettle_service.server`` with its audit log (stdout) going to ``stdout``
    (a file descriptor or file: a pipe, /dev/full) and its stderr to a file of its own.
    ``pythonpath``: the folders to import the service from (default: this checkout's)."""
    folders = pythonpath or [ROOT / d for d in ("service", "proto", "clients/python")]
    environ = dict(os.environ, CPSETTLE_METRICS_PORT="0", CPSETTLE_LOG_FORMAT="json")
    environ.update(env, PYTHONPATH=os.pathsep.join(str(f) for f in folders))
    with open(stderr, "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "cpsettle_service.server"],
            env=environ,
            stdout=stdout,
            stderr=err,
        )


def wait_answering(
    address: str, proc: subprocess.Popen[bytes], stderr: Path, seconds: float = 30
) -> None:
    """Until the server at ``address`` answers health checks at all (SERVING or not)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, stderr.read_text()
        try:
            health_status(address, timeout=0.5)
            return
        except grpc.RpcError:
            time.sleep(0.05)
    raise AssertionError("the server never answered\n" + stderr.read_text())


class HealthProbe:
    """Health checks every ``every`` seconds from a thread, each with a deadline of ``limit``
    seconds, on one open channel: records every status seen and every check that failed."""

    def __init__(self, address: str, limit: float = 0.1, every: float = 0.02) -> None:
        self.channel = grpc.insecure_channel(address)
        self.check = health_check(self.channel)
        self.check(health_pb2.HealthCheckRequest(), timeout=5)  # connected before timing
        self.limit, self.every = limit, every
        self.statuses: list[str] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="health-probe")
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                reply = self.check(health_pb2.HealthCheckRequest(), timeout=self.limit)
                self.statuses.append(
                    health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                )
            except grpc.RpcError as e:
                self.failures.append(f"{e.code().name}: {e.details()}")

    def wait_for(self, status: str, seconds: float = 15) -> None:
        deadline = time.monotonic() + seconds
        seen = len(self.statuses)
        while time.monotonic() < deadline:
            if status in self.statuses[seen:]:
                return
            time.sleep(0.01)
        raise AssertionError(f"health never turned {status}; last: {self.statuses[-5:]}")

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)
        self.channel.close()


# --------------------------------------------------------------------------- worker processes


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (from /proc; zombies left out)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def workers_of(server: int) -> list[int]:
    """A server process's worker processes: its fork server's children."""
    return [w for c in children(server) for w in children(c)]


def cpu_ticks(pid: int) -> int:
    """A process's CPU time so far (utime + stime, clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])
