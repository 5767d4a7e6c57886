"""Shared by the gRPC benchmarks: a server subprocess, /proc readings, percentiles."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("service", "proto", "clients/python")
for _sub in (*SOURCE_DIRS, ""):
    _p = str(ROOT / _sub) if _sub else str(ROOT)
    if _p not in sys.path:
        sys.path.insert(0, _p)

CLK_TCK = os.sysconf("SC_CLK_TCK")
SETTLE_METHOD = "/cpsettle.v1.SettlementService/Settle"
ECHO_METHOD = "/bench.Echo/Echo"


# --------------------------------------------------------------------------- /proc


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def status(pid: int) -> dict[str, int]:
    """VmRSS (bytes) and Threads from /proc/PID/status, and the number of open fds."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "VmRSS":
                out["rss"] = int(value.split()[0]) * 1024
            elif key == "Threads":
                out["threads"] = int(value)
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def slope_per_minute(samples: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) samples, in value units per minute."""
    n = len(samples)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in samples) / n
    mv = sum(v for _, v in samples) / n
    den = sum((t - mt) ** 2 for t, _ in samples)
    if den == 0:
        return 0.0
    return sum((t - mt) * (v - mv) for t, v in samples) / den * 60.0


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted sequence (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def machine_line() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import grpc

    return (
        f"Python {sys.version.split()[0]}, grpcio {grpc.__version__}, {os.cpu_count()} CPUs, "
        f"load average {load:.2f}"
    )


# --------------------------------------------------------------------------- a server process


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    address: str
    log_path: Path | None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (graceful drain), then SIGKILL if it is still there after ``timeout``."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def log_tail(self, n: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text("utf-8", "replace").splitlines()[-n:])


def start_server(
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    wait_seconds: float = 30.0,
) -> ServerProcess:
    """Start a server on 127.0.0.1:<free port> and wait until health says SERVING.

    ``argv`` follows the interpreter (e.g. ``["-m", "cpsettle_service.server"]``). Settings come
    from CPSETTLE_* variables like a deployment; metrics HTTP is off. Server stdout (the log)
    goes to ``log_path`` or /dev/null, so a full pipe can never block the server.
    """
    port = free_port()
    environ = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in SOURCE_DIRS),
        CPSETTLE_HOST="127.0.0.1",
        CPSETTLE_PORT=str(port),
        CPSETTLE_METRICS_PORT="0",
        CPSETTLE_LOG_FORMAT="json",
    )
    environ.update(env or {})
    # the child keeps its own copy of the log file: ours closes once it has started
    with open(log_path, "wb") if log_path else nullcontext(subprocess.DEVNULL) as out:
        proc = subprocess.Popen(
            [sys.executable, *argv],
            env=environ,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
        )
    server = ServerProcess(proc, f"127.0.0.1:{port}", log_path)
    try:
        wait_serving(server, wait_seconds)
    except BaseException:
        server.stop(5)
        raise
    return server


def wait_serving(server: ServerProcess, seconds: float) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited with {server.proc.returncode}:\n{server.log_tail()}")
        try:
            with grpc.insecure_channel(server.address) as ch:
                reply = health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=0.5
                )
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server did not become SERVING within {seconds} s")


# --------------------------------------------------------------------------- requests


def request_bytes(path: Path) -> bytes:
    """A SettleRequest's wire bytes from its JSON form (examples/tables/*.json)."""
    from cpsettle_client.client import request_from_json

    return request_from_json(json.loads(path.read_text("utf-8"))).SerializeToString()


def random_requests(n: int, seed: int, players: int = 4) -> list[bytes]:
    """Wire bytes of ``n`` random legal tables (tests/support/random_tables.py)."""
    import random

    from cpsettle_client.client import request_from_json
    from tests.support.random_tables import random_table

    rng = random.Random(seed)
    out = []
    for i in range(n):
        table = random_table(rng, players)
        table["handId"] = f"bench-{seed}-{i}"
        out.append(request_from_json(table).SerializeToString())
    return out


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
