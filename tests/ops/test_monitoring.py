"""The monitoring kit against the real things: promtool on the alert rules (check and unit tests)
and on a real server's /metrics after real calls, and every metric name the dashboard's and the
rules' queries use checked against the names that server exposes.

promtool comes with Debian's `prometheus` package (.ci/run installs it when missing). Without it
these tests skip, unless CPSETTLE_REQUIRE_PROMTOOL=1 (CI), when they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from tests.conftest import EXAMPLES, ROOT
from tests.ops.test_observability import free_port
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving

COMPONENTS = ROOT / "deploy" / "components"
RULE = COMPONENTS / "prometheus-rules" / "prometheusrule.yaml"
DASHBOARD = COMPONENTS / "grafana-dashboard" / "cpsettle-dashboard.json"
RULE_TESTS = Path(__file__).parent / "promtool" / "cpsettle_rules_test.yaml"


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CPSETTLE_REQUIRE_PROMTOOL") == "1":
            pytest.fail("promtool not found (apt-get install prometheus)")
        pytest.skip("promtool not found: apt-get install prometheus (CI installs it)")
    return path


def run_promtool(*args: str, cwd: Path, stdin: str | None = None) -> str:
    done = subprocess.run(
        [promtool(), *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"promtool {' '.join(args)} failed:\n{output}"
    return output


def rule_spec() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(RULE.read_text(encoding="utf-8"))["spec"]
    return spec


def alerts() -> list[dict[str, Any]]:
    return [r for g in rule_spec()["groups"] for r in g["rules"] if "alert" in r]


# --------------------------------------------------------------------------- the rules


def test_promtool_checks_the_rules_and_runs_their_unit_tests(tmp_path: Path) -> None:
    """The PrometheusRule's spec is a plain rule file: promtool lints it, then runs the unit
    tests (every alert fires on its firing series and stays quiet on its quiet ones)."""
    (tmp_path / "cpsettle.rules.yaml").write_text(yaml.safe_dump(rule_spec()))
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    checked = run_promtool("check", "rules", "cpsettle.rules.yaml", cwd=tmp_path)
    rules = sum(len(g["rules"]) for g in rule_spec()["groups"])  # alerts and recording rules
    assert f"SUCCESS: {rules} rules found" in checked
    tested = run_promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path)
    assert "SUCCESS" in tested


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    cases = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]
    fired: set[str] = set()
    quiet: set[str] = set()
    for case in cases:
        for check in case["alert_rule_test"]:
            (fired if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {a["alert"] for a in alerts()}
    assert len(names) == 16 and "CpsettleWitnessUnreachable" in names
    assert fired == names, f"no firing case for {sorted(names - fired)}"
    assert quiet == names, f"no quiet case for {sorted(names - quiet)}"


# --------------------------------------------------------------------------- a real server


def example(name: str) -> dict[str, Any]:
    data = json.loads((EXAMPLES / "tables" / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def exposition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """/metrics of a real server process after calls that move every metric: each RPC, a
    rejected request, naturals, fouls, caps, a payout mismatch, a stream, the audit log, a
    witness (one nobody answers at: its series exist only for a configured witness)."""
    tmp = tmp_path_factory.mktemp("scrape")
    port = free_port()
    sock = tmp / "s.sock"
    key_file = tmp / "signing.pem"
    key_file.write_bytes(fixed_test_key(1))
    proc = start(
        sock,
        tmp / "server.log",
        CPSETTLE_METRICS_PORT=str(port),
        CPSETTLE_HOST="127.0.0.1",
        CPSETTLE_SIGNING_KEY_FILE=str(key_file),
        CPSETTLE_WITNESS_URL=f"http://127.0.0.1:{free_port()}",
    )
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}", timeout=10) as c:
            c.settle(example("western"))  # caps
            c.settle(example("classic-1-6"))  # naturals
            c.settle(example("two-four"))  # fouls
            s = c.settle(example("one-six")).settlement
            nets = {
                p.player_id: p.net_money + (1 if i == 0 else 0) for i, p in enumerate(s.players)
            }
            c.validate_payouts(example("one-six"), nets)  # a mismatch
            bad = example("one-six")
            bad["players"][0]["arrangement"]["front"][0] = "Zz"
            with pytest.raises(SettlementError):
                c.settle(bad)
            c.list_profiles()
            item = pb.AuditItem(ref="r1", request=request_from_json(example("western")))
            assert len(list(c.settle_stream([pb.SettleStreamRequest(items=[item])]))) == 1
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    yield text.decode()


def sample_names(text: str) -> set[str]:
    return {
        line.split("{")[0].split(" ")[0]
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def test_promtool_accepts_a_real_scrape(exposition: str, tmp_path: Path) -> None:
    out = run_promtool("check", "metrics", cwd=tmp_path, stdin=exposition)
    assert "cpsettle" not in out, out  # promtool names each metric it has a lint finding for


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
# metric names, recorded series (cpsettle:...), and Prometheus' own `up`
_NAME = re.compile(
    r"\b(?:(?:grpc_server|cpsettle)_[a-zA-Z0-9_:]*|cpsettle:[a-zA-Z0-9_:]+|up(?=\{))"
)


def metric_names(query: str) -> set[str]:
    """The metric names in a PromQL query (label values, in quotes, left out)."""
    return set(_NAME.findall(_QUOTED.sub('""', query)))


def queries() -> dict[str, str]:
    """Where -> PromQL, for every alert and every dashboard panel target and variable."""
    out = {f"alert {a['alert']}": a["expr"] for a in alerts()}
    out.update(
        {
            f"record {r['record']}": r["expr"]
            for g in rule_spec()["groups"]
            for r in g["rules"]
            if "record" in r
        }
    )
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            out[f"panel {panel['title']!r} {target['refId']}"] = target["expr"]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            out[f"variable {var['name']}"] = var["definition"]
    return out


def recorded() -> set[str]:
    return {r["record"] for g in rule_spec()["groups"] for r in g["rules"] if "record" in r}


def test_dashboard_and_rules_use_only_metrics_the_server_exposes(exposition: str) -> None:
    # what the server exposes, what the rules record from it, and Prometheus' own `up`
    exposed = sample_names(exposition) | recorded() | {"up"}
    found = queries()
    assert len(found) >= 25
    used: set[str] = set()
    for where, query in found.items():
        names = metric_names(query)
        assert names, f"{where}: no metric name found in {query!r}"
        missing = names - exposed
        assert not missing, f"{where} reads {sorted(missing)}, which the server does not expose"
        used |= names
    # The names the issue asks to watch are all on the dashboard or in an alert.
    for name in (
        "cpsettle_max_concurrent_rpcs",
        "cpsettle_signing_enabled",
        "cpsettle_audit_events_total",
        "cpsettle_audit_last_write_timestamp_seconds",
        "cpsettle_build_info",
        "cpsettle_stream_duration_seconds_bucket",
        "cpsettle_naturals_total",
        "cpsettle_caps_applied_total",
        "cpsettle_fouls_total",
        "cpsettle_ready",
        "cpsettle_audit_log_stuck",
        "cpsettle_audit_log_queued_lines",
        "cpsettle_tls_certificate_expiry_timestamp_seconds",
        "up",
    ):
        assert name in used, name


def test_the_name_check_catches_a_renamed_metric(exposition: str) -> None:
    exposed = sample_names(exposition)
    assert metric_names('rate(cpsettle_settlement_total{profile="cpsettle_x"}[5m])') == {
        "cpsettle_settlement_total"
    }
    assert "cpsettle_settlement_total" not in exposed
    assert "cpsettle_settlements_total" in exposed


def test_new_gauges_report_the_configuration(exposition: str) -> None:
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in exposition.splitlines()
        if line and not line.startswith("#")
    }
    assert values["cpsettle_max_concurrent_rpcs"] == 64
    assert values["cpsettle_signing_enabled"] == 1
    # 4 Settle + 1 ValidatePayouts + 1 stream hand settled: one settlement.issued each
    assert values['cpsettle_audit_events_total{event="settlement.issued"}'] == 6
    assert values['cpsettle_audit_events_total{event="payout.mismatch"}'] == 1
    assert values["cpsettle_audit_last_write_timestamp_seconds"] > 1.7e9
    stream = {
        k: v for k, v in values.items() if k.startswith("cpsettle_stream_duration_seconds_count")
    }
    assert list(stream.values()) == [1]
    # the stream is not in the unary histogram any more
    assert not [
        k
        for k in values
        if k.startswith("grpc_server_handling_seconds_count") and "SettleStream" in k
    ]
