"""A real server process with its metrics port and JSON log, for the issue #13 attack tests."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from tests.hardening.support import log_events
from tests.support.server_process import start, wait_serving


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m cpsettle_service.server`` on a unix socket, metrics on a free port."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.metrics_port = free_port()
        sock = tmp_path / "b.sock"
        self.log = tmp_path / "server.log"
        self.proc = start(
            sock,
            self.log,
            CPSETTLE_METRICS_PORT=str(self.metrics_port),
            CPSETTLE_HOST="127.0.0.1",
            CPSETTLE_LOG_FORMAT="json",
            **env,
        )
        self.address = f"unix://{sock}"
        wait_serving(self.address, self.proc)

    def scrape(self) -> dict[str, float]:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def metric(self, name: str, **labels: str) -> float:
        """The sum of a metric's samples with these labels (others any)."""
        total = 0.0
        for key, value in self.scrape().items():
            base, _, rest = key.partition("{")
            if base == name and all(f'{k}="{v}"' in rest for k, v in labels.items()):
                total += value
        return total

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in log_events(self.log) if e.get("event") == name]


def rejected(call: Any, *args: Any) -> grpc.RpcError:
    """The error of a call expected to fail."""
    try:
        call(*args, timeout=30)
    except grpc.RpcError as e:
        return e
    raise AssertionError("the call succeeded")


def bad_request(error: grpc.RpcError) -> error_details_pb2.BadRequest:
    for item in error.trailing_metadata() or ():
        if item.key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(item.value)
            out = error_details_pb2.BadRequest()
            status.details[0].Unpack(out)
            return out
    raise AssertionError("no BadRequest detail")
