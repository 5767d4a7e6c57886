"""docs/RUNBOOK.md's commands, run: every log pipeline against the log lines of two real server
processes (two "pods"), through a stand-in `kubectl` that prints them as `kubectl logs -l ...
--prefix` does, and only when called that way (every replica, every line); every PromQL query
against a real Prometheus scraping a real server labelled as the prod install.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from tests.conftest import ROOT
from tests.hardening.support import good_request
from tests.ops.prometheus import Prometheus, free_port
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving

RUNBOOK = ROOT / "docs" / "RUNBOOK.md"
SELECTOR = "app.kubernetes.io/name=cpsettle,app.kubernetes.io/instance=cpsettle"
PODS = ("cpsettle-6b7c9d-x2k4q", "cpsettle-6b7c9d-r8m2z")

FAKE_KUBECTL = r'''#!/usr/bin/env python3
"""Stand-in kubectl for tests/ops/test_runbook.py: `logs` of every pod, only as the runbook
must call it (label selector, --prefix, every line, enough log requests for every pod)."""
import os, sys
args = sys.argv[1:]
def fail(why):
    sys.exit(f"fake kubectl: {why}: {args}")
if args[:3] != ["-n", "cpsettle", "logs"]:
    fail("only `-n cpsettle logs` is faked")
if "-l" not in args or args[args.index("-l") + 1] != os.environ["RUNBOOK_SELECTOR"]:
    fail("not every replica: no label selector")
if "--prefix" not in args:
    fail("no --prefix: lines would not say their pod")
if "--tail=-1" not in args:
    fail("with a selector kubectl shows 10 lines per pod unless --tail=-1")
limit = [a for a in args if a.startswith("--max-log-requests=")]
pods = os.environ["RUNBOOK_PODS"].split(os.pathsep)
if not limit or int(limit[0].split("=", 1)[1]) < len(pods):
    fail("--max-log-requests below the number of pods")
if not [a for a in args if a.startswith("--since=")]:
    fail("no --since")
for pod in pods:
    name, _, path = pod.partition("=")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            sys.stdout.write(f"[pod/{name}/cpsettle] {line}")
'''


def blocks(language: str) -> list[str]:
    text = RUNBOOK.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def events_function() -> str:
    [definition] = [b for b in blocks("sh") if "cpsettle_events() {" in b]
    return definition


def pipelines() -> list[str]:
    """Every command of the runbook that reads the logs through cpsettle_events."""
    out = []
    for block in blocks("sh"):
        out += [line for line in block.splitlines() if line.startswith("cpsettle_events ")]
    return out


@pytest.fixture(scope="module")
def pod_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real server processes' logs: settlements, a refused request, a payout mismatch,
    a profile not found, and their start and stop lines."""
    tmp = tmp_path_factory.mktemp("pods")
    key = tmp / "key.pem"
    key.write_bytes(fixed_test_key(1))
    logs = {}
    for n, pod in enumerate(PODS):
        sock, log = tmp / f"{n}.sock", tmp / f"{pod}.log"
        proc = start(sock, log, CPSETTLE_SIGNING_KEY_FILE=str(key), CPSETTLE_LOG_FORMAT="json")
        try:
            wait_serving(f"unix://{sock}", proc)
            with SettlementClient(f"unix://{sock}", timeout=10) as c:
                request = good_request(f"{pod}-hand")
                request.table_id = f"table-{n}"
                nets = {p.player_id: p.net_money for p in c.settle(request).settlement.players}
                nets[next(iter(nets))] += 100
                assert not c.validate_payouts(request, nets).all_match
                bad = good_request(f"{pod}-bad")
                bad.players[1].arrangement.front[0] = "As"  # player A holds it too
                with pytest.raises(SettlementError):
                    c.settle(bad)
                with pytest.raises(SettlementError):
                    c.get_profile("no-such-house-profile")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
        logs[pod] = log
    return logs


def run(command: str, pod_logs: dict[str, Path], tmp: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        fake = bin_dir / "kubectl"
        fake.write_text(FAKE_KUBECTL.replace("#!/usr/bin/env python3", f"#!{sys.executable}"))
        fake.chmod(0o755)
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        RUNBOOK_SELECTOR=SELECTOR,
        RUNBOOK_PODS=os.pathsep.join(f"{p}={path}" for p, path in pod_logs.items()),
    )
    script = f"set -euo pipefail\n{events_function()}\n{command}\n"
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_every_log_command_reads_every_replica() -> None:
    """No command of the runbook reads one pod (`deploy/cpsettle`) or a pod's first lines."""
    commands = [line for b in blocks("sh") for line in b.replace("\\\n", " ").splitlines()]
    logs = [c for c in commands if re.search(r"\bkubectl\b.* logs\b", c)]
    assert logs, "no kubectl logs command found"
    for c in logs:
        assert "-l app.kubernetes.io/name=cpsettle" in c and "--prefix" in c, c
        assert "--max-log-requests=" in c, c
    assert not [c for c in commands if "deploy/cpsettle" in c]
    assert len(pipelines()) >= 8


def test_the_log_pipelines_on_real_log_lines(pod_logs: dict[str, Path], tmp_path: Path) -> None:
    outputs = {}
    for command in pipelines():
        done = run(command, pod_logs, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        outputs[command] = done.stdout
    by_filter = {c.split("|", 1)[1].strip(): out for c, out in outputs.items()}

    def output(fragment: str) -> str:
        [found] = [out for f, out in by_filter.items() if fragment in f]
        return found

    failed = json_lines(output('select(.event == "rpc" and .code != "OK") | {pod, method'))
    assert {(e["pod"], e["code"]) for e in failed} == {
        (p, code) for p in PODS for code in ("INVALID_ARGUMENT", "NOT_FOUND")
    }
    counts = output('"\\(.pod) \\(.code)"').split("\n")
    assert sorted(line.split()[1:] for line in counts if line) == sorted(
        [p, code] for p in PODS for code in ("INVALID_ARGUMENT", "NOT_FOUND")
    )
    mismatches = json_lines(output('select(.event == "payout.mismatch") | {pod, hand_id'))
    assert {(e["pod"], e["table_id"]) for e in mismatches} == {
        (PODS[0], "table-0"),
        (PODS[1], "table-1"),
    }
    assert mismatches[0]["players"], mismatches
    per_table = output('"\\(.table_id) \\(.dealer_id)"').split()
    assert per_table.count("1") == 2 and "table-0" in per_table
    started = json_lines(output('select(.event == "service.started")'))
    assert {e["pod"] for e in started} == set(PODS) and all(e["engine_digest"] for e in started)
    # signed, plaintext, healthy: these find nothing, and say so by printing nothing
    assert output('select(.event == "signing.disabled")') == ""
    assert output('select(.event == "tls.loaded"') == ""


def test_the_stand_in_refuses_a_command_that_reads_one_pod(
    pod_logs: dict[str, Path], tmp_path: Path
) -> None:
    one_pod = "kubectl -n cpsettle logs deploy/cpsettle --since=15m | head -1"
    done = run(one_pod, pod_logs, tmp_path)
    assert done.returncode != 0 and "no label selector" in done.stderr
    ten_lines = f"kubectl -n cpsettle logs -l {SELECTOR} --prefix --max-log-requests=20 --since=15m"
    done = run(ten_lines, pod_logs, tmp_path)
    assert done.returncode != 0 and "--tail=-1" in done.stderr


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    tmp = tmp_path_factory.mktemp("prom-runbook")
    p = Prometheus(tmp)
    port = free_port()
    proc = start(
        tmp / "s.sock",
        tmp / "server.log",
        CPSETTLE_METRICS_PORT=str(port),
        CPSETTLE_HOST="127.0.0.1",
    )
    try:
        wait_serving(f"unix://{tmp / 's.sock'}", proc)
        p.scrape("cpsettle", port)
        p.wait(lambda: bool(p.query('up{namespace="cpsettle"} == 1')), 30, "never scraped")
        with SettlementClient(f"unix://{tmp / 's.sock'}", timeout=10) as c:
            for i in range(3):
                c.settle(good_request(f"promql-{i}"))
            with pytest.raises(SettlementError):
                c.get_profile("no-such-house-profile")
        p.wait(
            lambda: bool(p.query('cpsettle_settlements_total{namespace="cpsettle"} >= 3')),
            30,
            "the calls were never scraped",
        )
        yield p
    finally:
        proc.kill()
        proc.wait(timeout=10)
        p.stop()


def test_every_promql_query_of_the_runbook_runs(prom: Prometheus) -> None:
    queries = [b.strip() for b in blocks("promql")]
    assert len(queries) >= 10
    answered = 0
    for q in queries:
        result = prom.query(q)  # fails on a query Prometheus cannot parse or evaluate
        answered += bool(result)
    assert answered >= 6, "most queries read series a live server has"
