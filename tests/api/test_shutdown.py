"""Graceful shutdown of the real server process: SIGTERM -> NOT_SERVING, drain, exit 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cpsettle_client.client import SettlementClient, SettlementError

ROOT = Path(__file__).resolve().parents[2]


def start(sock: Path, **env: str) -> subprocess.Popen[bytes]:
    environ = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
        CPSETTLE_UNIX_SOCKET=str(sock),
        CPSETTLE_METRICS_PORT="0",
        CPSETTLE_GRACE_SECONDS="3",
        **env,
    )
    return subprocess.Popen([sys.executable, "-m", "cpsettle_service.server"], env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_serving(address: str, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        try:
            with SettlementClient(address, timeout=0.5) as c:
                if c.health() == "SERVING":
                    return
        except SettlementError:
            time.sleep(0.05)
    raise AssertionError("server did not become SERVING")


def test_sigterm_drains_and_exits_zero(tmp_path: Path) -> None:
    sock = tmp_path / "s.sock"
    proc = start(sock)
    address = f"unix://{sock}"
    wait_serving(address, proc)
    proc.send_signal(signal.SIGTERM)
    start_wait = time.monotonic()
    code = proc.wait(timeout=15)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert code == 0, out
    assert time.monotonic() - start_wait < 5
    assert "service.draining" in out and "service.stopped" in out
