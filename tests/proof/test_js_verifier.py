"""The independent JavaScript checker (clients/js, Node's standard library only): the vectors,
and settlements freshly issued by a real server, checked with nothing but its public keys."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from google.protobuf import json_format

from cpsettle_client.client import SettlementClient
from tests.conftest import EXAMPLES, ROOT
from tests.support.fixed_keys import fixed_test_key
from tests.support.random_tables import random_table
from tests.support.server_process import start, wait_serving

NODE = shutil.which("node")
JS = ROOT / "clients" / "js"
pytestmark = pytest.mark.skipif(
    NODE is None,
    reason="Node.js is not installed (the CI script installs it: apt-get install nodejs)",
)


def node(*args: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, *args], capture_output=True, text=True, timeout=120, check=False)


def test_the_js_checker_passes_every_vector() -> None:
    done = node("--test", str(JS / "test"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout


def test_the_js_checker_verifies_a_settlement_fresh_from_a_server(tmp_path: Path) -> None:
    pem = tmp_path / "key.pem"
    pem.write_bytes(fixed_test_key(2))
    sock = tmp_path / "s.sock"
    proc = start(sock, tmp_path / "server.log", CPSETTLE_SIGNING_KEY_FILE=str(pem))
    rng = random.Random(1414)
    tables = [json.loads((EXAMPLES / "tables" / "ofc.json").read_text())] + [
        random_table(rng, 4, preset=p, stacks=True, surrender_rate=0.2)
        for p in ("western", "one-six")
    ]
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}") as c:
            responses = [c.settle(t) for t in tables]
            keys = json_format.MessageToDict(c.verification_keys())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(keys))
    verify = str(JS / "verify.mjs")
    for i, response in enumerate(responses):
        stored = json_format.MessageToDict(response)  # what `cpsettle settle --output json` keeps
        path = tmp_path / f"settlement-{i}.json"
        path.write_text(json.dumps(stored, ensure_ascii=False))
        done = node(verify, str(path), "--keys", str(keys_file))
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["verdict"] == "valid" and report["signatureChecked"] is True
        assert report["settlementDigest"] == response.settlement.settlement_digest
        assert report["settlementId"] == response.settlement.settlement_id

        done = node(verify, str(path))  # no keys: digests only, and it says so
        assert done.returncode == 4 and "NOT checked" in done.stdout

        stored["settlement"]["players"][0]["netMoney"] = str(
            int(stored["settlement"]["players"][0].get("netMoney", "0")) + 1
        )
        path.write_text(json.dumps(stored))
        done = node(verify, str(path), "--keys", str(keys_file))
        assert done.returncode == 1
        assert sorted(json.loads(done.stdout)["failures"]) == ["settlement_digest", "signature"]
