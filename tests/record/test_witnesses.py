"""Two witnesses, one down: a real server process sends each checkpoint to two real witnesses
(``CPSETTLE_WITNESS_URL=A,B``); B is stopped. Each witness has its own series (label
``witness``), so B's outage shows as B's alone -- on /metrics and in the alert a real Prometheus
evaluates from the committed rules -- while A's stays up; when B is back (its record on disk)
it catches up by itself, and the log verifies against each witness's export.

The replica's key file is readable by all (``signing.key_exposed`` is its first line, written
before the feeds exist): the feed once fell one leaf short here; on a real process."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.proof.feed import witness_label
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from tests.ops.prometheus import Prometheus, binary
from tests.proof.test_proof import small_request
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving
from tests.support.witness import export, free_port, start_witness

REPLICA_KEY = fixed_test_key(1)
SAMPLE = re.compile(r'^(cpsettle_witness_\w+)\{witness="([^"]+)"\} (\S+)$', re.M)


def scrape(port: int) -> dict[tuple[str, str], float]:
    """The witness series of /metrics: (metric, witness) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return {(m, w): float(v) for m, w, v in SAMPLE.findall(text)}


def wait_for(what: str, condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.1)


def test_two_witnesses_one_down_each_its_own_series_alert_and_catch_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary("prometheus")  # (skips without it, as the other alert tests)
    (tmp_path / "witness.pem").write_bytes(fixed_test_key(3))
    (tmp_path / "witness-b.pem").write_bytes(fixed_test_key(4))
    keys = tmp_path / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(REPLICA_KEY)).to_json())
    a, url_a = start_witness(tmp_path, tmp_path / "witness.pem", keys, str(tmp_path / "a.db"))
    b, url_b = start_witness(
        tmp_path, tmp_path / "witness-b.pem", keys, str(tmp_path / "b.db"), name="witness.test/w2"
    )
    b.send_signal(signal.SIGTERM)  # B is down from the start: the run's registration waits
    b.wait(timeout=10)
    label_a, label_b = witness_label(url_a), witness_label(url_b)
    assert label_a != label_b and label_a.startswith("127.0.0.1:")
    pem = tmp_path / "replica.pem"
    pem.write_bytes(REPLICA_KEY)
    pem.chmod(0o644)
    sock, log, metrics_port = tmp_path / "r.sock", tmp_path / "r.log", free_port()
    (tmp_path / "prometheus").mkdir()
    try:
        prom = Prometheus(tmp_path / "prometheus")
    except BaseException:
        stop(a)
        raise
    replica = start(
        sock,
        log,
        CPSETTLE_SIGNING_KEY_FILE=str(pem),
        CPSETTLE_WITNESS_URL=f"{url_a},{url_b}",
        CPSETTLE_HOST="127.0.0.1",
        CPSETTLE_METRICS_PORT=str(metrics_port),
        CPSETTLE_AUDIT_CHECKPOINT_SECONDS="0.2",
        CPSETTLE_GRACE_SECONDS="30",
        CPSETTLE_WITNESS_TIMEOUT_SECONDS="5",
    )
    try:
        wait_serving(f"unix://{sock}", replica)
        prom.scrape("two-witnesses", metrics_port)
        with SettlementClient(f"unix://{sock}") as c:
            for i in range(5):
                request = request_from_json(small_request())
                request.hand_id = f"w-{i}"
                c.settle(request)
        up = ("cpsettle_witness_up", label_a), ("cpsettle_witness_up", label_b)
        pending = (
            ("cpsettle_witness_pending_lines", label_a),
            ("cpsettle_witness_pending_lines", label_b),
        )
        wait_for(
            "A takes the checkpoints, B does not",
            lambda: (
                (s := scrape(metrics_port))[up[0]] == 1
                and s[up[1]] == 0
                and s[pending[1]] >= 7
                and s[pending[0]] < s[pending[1]]
            ),
        )
        # the alert's expression is true for B only (pending: `for` is 5 minutes)
        alert = prom.wait_alert("CpsettleWitnessUnreachable", "two-witnesses", witness=label_b)
        assert alert["labels"]["instance"] == f"127.0.0.1:{metrics_port}"
        assert [
            x
            for x in prom.alerts()
            if x["labels"]["alertname"] == "CpsettleWitnessUnreachable"
            and x["labels"].get("witness") == label_a
        ] == []
        # B comes back on its address with its record: the feed catches up by itself
        b, _ = start_witness(
            tmp_path,
            tmp_path / "witness-b.pem",
            keys,
            str(tmp_path / "b.db"),
            port=int(url_b.rsplit(":", 1)[1]),
            name="witness.test/w2",
        )
        wait_for(
            "B catches up", lambda: (s := scrape(metrics_port))[up[1]] == 1 and s[pending[1]] <= 2
        )
        assert (
            scrape(metrics_port)[("cpsettle_witness_last_cosigned_timestamp_seconds", label_b)]
            > 1.7e9
        )
    finally:
        replica.send_signal(signal.SIGTERM)
        assert replica.wait(timeout=90) == 0
        prom.stop()
    try:
        lines = log.read_bytes().splitlines()
        first = json.loads(lines[0])
        assert (first["event"], first["index"]) == ("signing.key_exposed", 0)
        last = json.loads(lines[-1])
        assert (last["event"], last["reason"]) == ("audit.checkpoint", "shutdown")
        unreachable = [json.loads(x) for x in lines if b'"witness.unreachable"' in x]
        assert unreachable and {u["witness"] for u in unreachable} == {url_b}
        for url in (url_a, url_b):  # each witness holds the run to its last checkpoint
            exported = export(url)
            [entry] = exported["logs"]
            assert entry["size"] == last["size"] and entry["root"] == last["root"]
            (tmp_path / "export.json").write_text(json.dumps(exported))
            (tmp_path / "w.vkey").write_text(exported["witness"]["vkey"] + "\n")
            capsys.readouterr()
            code = main(
                [
                    "audit-log",
                    "verify",
                    str(log),
                    "--keys",
                    str(keys),
                    "--witness",
                    str(tmp_path / "export.json"),
                    "--witness-key",
                    str(tmp_path / "w.vkey"),
                ]
            )
            assert code == 0, capsys.readouterr().out
    finally:
        stop(a)
        stop(b)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
