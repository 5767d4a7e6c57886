"""Graceful shutdown of the real server process: SIGTERM -> NOT_SERVING, drain, exit 0."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.support.server_process import start, wait_serving


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
