"""A real Prometheus for the tests: Debian's `prometheus` package (.ci/run installs it when
missing), started on 127.0.0.1 with the alert rules of deploy/components/prometheus-rules,
scraping every second the targets a test adds (file-based discovery, one file per namespace
label), evaluating the rules every second. The test reads alerts and queries through
Prometheus' own HTTP API.

Without the binary the tests that need it skip, unless CPSETTLE_REQUIRE_PROMTOOL=1 (CI), when
they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

RULE = ROOT / "deploy" / "components" / "prometheus-rules" / "prometheusrule.yaml"
JOB = "cpsettle"  # the scrape job the `up` alerts select (the ServiceMonitor's Service name)


def binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CPSETTLE_REQUIRE_PROMTOOL") == "1":
            pytest.fail(f"{name} not found (apt-get install prometheus)")
        pytest.skip(f"{name} not found: apt-get install prometheus (CI installs it)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Prometheus:
    """One Prometheus process; ``stop()`` ends it."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.targets = directory / "targets"
        self.targets.mkdir()
        spec = yaml.safe_load(RULE.read_text(encoding="utf-8"))["spec"]
        (directory / "cpsettle.rules.yaml").write_text(yaml.safe_dump(spec))
        config = {
            "global": {
                "scrape_interval": "1s",
                "scrape_timeout": "900ms",
                "evaluation_interval": "1s",
            },
            "rule_files": ["cpsettle.rules.yaml"],
            "scrape_configs": [
                {
                    "job_name": JOB,
                    "file_sd_configs": [
                        {"files": [str(self.targets / "*.json")], "refresh_interval": "1s"}
                    ],
                }
            ],
        }
        (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = directory / "prometheus.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    binary("prometheus"),
                    f"--config.file={directory / 'prometheus.yml'}",
                    f"--storage.tsdb.path={directory / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--log.level=warn",
                    "--storage.tsdb.retention.time=1h",
                ],
                cwd=directory,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.wait(lambda: self.get("/-/ready") is not None, 60, "Prometheus never became ready")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    # -- targets

    def scrape(self, namespace: str, *ports: int) -> None:
        """Scrape these metrics ports as the replicas of ``namespace`` (replaces the list)."""
        groups = [
            {"targets": [f"127.0.0.1:{p}" for p in ports], "labels": {"namespace": namespace}}
        ]
        tmp = self.targets / f".{namespace}.tmp"
        tmp.write_text(json.dumps(groups))
        tmp.rename(self.targets / f"{namespace}.json")  # one atomic change for the watcher

    # -- the HTTP API

    def get(self, path: str, **params: str) -> Any:
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                body = r.read()
        except OSError:
            return None
        return json.loads(body) if path.startswith("/api/") else body

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = self.get("/api/v1/query", query=expr)
        assert answer is not None and answer["status"] == "success", (expr, answer)
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result

    def alerts(self) -> list[dict[str, Any]]:
        answer = self.get("/api/v1/alerts")
        assert answer is not None and answer["status"] == "success", answer
        alerts: list[dict[str, Any]] = answer["data"]["alerts"]
        return alerts

    def active(self, namespace: str) -> dict[str, dict[str, Any]]:
        """alert name -> the alert, pending or firing, for ``namespace``."""
        return {
            a["labels"]["alertname"]: a
            for a in self.alerts()
            if a["labels"].get("namespace") == namespace
        }

    def wait_alert(
        self, name: str, namespace: str, seconds: float = 60, **labels: str
    ) -> dict[str, Any]:
        """Until alert ``name`` is pending or firing for ``namespace`` (and ``labels``)."""
        found: list[dict[str, Any]] = []

        def there() -> bool:
            found[:] = [
                a
                for a in self.alerts()
                if a["labels"]["alertname"] == name
                and a["labels"].get("namespace") == namespace
                and all(a["labels"].get(k) == v for k, v in labels.items())
                and a["state"] in ("pending", "firing")
            ]
            return bool(found)

        self.wait(
            there,
            seconds,
            lambda: (
                f"{name} never pending for {namespace} {labels}; active: "
                f"{sorted(self.active(namespace))}"
            ),
        )
        return found[0]

    def wait(
        self, condition: Callable[[], bool], seconds: float, why: str | Callable[[], str]
    ) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if self.proc.poll() is not None:
                raise AssertionError("Prometheus exited:\n" + self.log.read_text())
            if time.monotonic() > deadline:
                raise AssertionError(why() if callable(why) else why)
            time.sleep(0.25)
