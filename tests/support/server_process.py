"""The server as a child process, as Kubernetes runs it: for signals, logs and metrics tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cpsettle_client.client import SettlementClient, SettlementError

ROOT = Path(__file__).resolve().parents[2]


def start(sock: Path, log: Path | None = None, **env: str) -> subprocess.Popen[bytes]:
    """Start ``python -m cpsettle_service.server`` on a unix socket; ``env`` adds CPSETTLE_*.

    Its log goes to ``log`` (a file) or to a pipe. Use a file when the test sends many calls:
    a full pipe would block the server.
    """
    environ = dict(os.environ)
    environ.update(
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
        CPSETTLE_UNIX_SOCKET=str(sock),
        CPSETTLE_METRICS_PORT="0",
        CPSETTLE_GRACE_SECONDS="3",
    )
    environ.update(env)
    out = open(log, "wb") if log is not None else subprocess.PIPE  # noqa: SIM115 — child owns it
    return subprocess.Popen(
        [sys.executable, "-m", "cpsettle_service.server"],
        env=environ,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def wait_serving(address: str, proc: subprocess.Popen[Any], seconds: float = 30) -> None:
    """Until the server at ``address`` reports SERVING; fails with its output if it exits."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.communicate()[0]
            out = out.decode() if isinstance(out, bytes) else out
            raise AssertionError(f"server exited {proc.returncode}: {out}")
        try:
            with SettlementClient(address, timeout=0.5) as c:
                if c.health() == "SERVING":
                    return
        except SettlementError:
            time.sleep(0.05)
    raise AssertionError("server did not become SERVING")
