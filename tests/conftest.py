"""Make the source tree importable when the package is not installed (development runs)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("service", "clients/python", "proto"):
    path = str(ROOT / sub)
    if path not in sys.path:
        sys.path.insert(0, path)


# --------------------------------------------------------------------------- a real server
# (imports after the path setup above, so a checkout without an install works too)

import asyncio  # noqa: E402
import threading  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from cpsettle_client.client import SettlementClient  # noqa: E402
from cpsettle_service.config import Settings  # noqa: E402
from cpsettle_service.server import Running, build_server  # noqa: E402

EXAMPLES = ROOT / "examples"


class LogStream:
    """Where the in-process servers' structlog lines go (not the test's stdout)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            self.lines.extend(line for line in text.splitlines() if line)

    def flush(self) -> None:
        pass

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The JSON lines written so far whose event is ``name`` (every one without it)."""
        import json

        with self._lock:
            lines = list(self.lines)
        out = []
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if name is None or event.get("event") == name:
                out.append(event)
        return out

    def wait_events(
        self, name: str | None, where: Any, count: int, timeout: float = 5.0
    ) -> list[dict[str, Any]]:
        """The events named ``name`` that ``where`` accepts, once there are ``count`` of them
        (or ``timeout`` seconds have passed: then what there is, for the test to judge).

        A call's ``rpc`` line is written when the server has finished with the call, which can
        be just after the client has its answer: a test reading it must wait for it.
        """
        import time

        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.events(name) if where(e)]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.01)


LOGS = LogStream()


@pytest.fixture(scope="session", autouse=True)
def _server_logs_to_a_stream() -> None:
    from cpsettle_service.observability.logging import configure

    configure("info", "json", stream=LOGS)


@pytest.fixture()
def logs() -> LogStream:
    return LOGS


@dataclass
class ServerHandle:
    address: str
    running: Running
    loop: asyncio.AbstractEventLoop

    def run(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


def start_server(sock: Path, **overrides: Any) -> ServerHandle:
    values: dict[str, Any] = {
        "unix_socket": str(sock),
        "metrics_port": 0,
        "grace_seconds": 2.0,
        "max_message_bytes": 64 * 1024,
    }
    values.update(overrides)
    settings = Settings(**values)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="grpc-loop").start()
    running = asyncio.run_coroutine_threadsafe(build_server(settings), loop).result(30)
    return ServerHandle(f"unix://{sock}", running, loop)


def stop_server(handle: ServerHandle) -> None:
    handle.run(handle.running.stop(0))
    handle.loop.call_soon_threadsafe(handle.loop.stop)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    handle = start_server(tmp_path_factory.mktemp("grpc") / "cpsettle.sock")
    yield handle
    stop_server(handle)


@pytest.fixture()
def client(server: ServerHandle) -> Iterator[SettlementClient]:
    with SettlementClient(server.address, timeout=10) as c:
        yield c
