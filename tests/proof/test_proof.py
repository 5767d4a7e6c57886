"""Audited settlements: digests, signatures, verify, replay, the audit log, two replicas agree."""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_client.proof import ProofError, load_settlement
from cpsettle_service.proof.digests import content_bytes
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from cpsettle_service.proof.verify import verify
from tests.conftest import EXAMPLES
from tests.support.fixed_keys import fixed_test_key
from tests.support.random_tables import random_table
from tests.support.server_process import start, wait_serving

PEM = fixed_test_key(1)
KEY = signing_key_from_pem(PEM, "test-key")
KEYS = KeySet().with_current(KEY)  # the public half only


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("key") / "signing.pem"
    path.write_bytes(PEM)
    return path


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    path.write_text(KEYS.to_json())
    return path


def small_request() -> dict[str, Any]:
    request: dict[str, Any] = json.loads((EXAMPLES / "tables" / "one-six.json").read_text())
    request["players"] = request["players"][:2]
    request["handId"] = "h1"
    return request


def signed_settlement(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path, request: dict[str, Any]
) -> bytes:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    os.environ["CPSETTLE_SIGNING_KEY_ID"] = KEY.key_id
    assert (
        main(
            [
                "settle",
                str(path),
                "--local",
                "--signing-key-file",
                str(key_file),
                "--output",
                "json",
            ]
        )
        == 0
    )
    return capsys.readouterr().out.encode("utf-8")


def detected(data: bytes) -> bool:
    try:
        return bool(verify(load_settlement(data), KEYS))
    except ProofError:
        return True


def _flips(args: tuple[bytes, int, int]) -> list[int]:
    data, start_bit, stop_bit = args
    missed = []
    buf = bytearray(data)
    for bit in range(start_bit, stop_bit):
        buf[bit // 8] ^= 1 << (bit % 8)
        if not detected(bytes(buf)):
            missed.append(bit)
        buf[bit // 8] ^= 1 << (bit % 8)
    return missed


def test_a_signed_settlement_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path, keys_file: Path
) -> None:
    data = signed_settlement(capsys, tmp_path, key_file, small_request())
    settlement = load_settlement(data)
    assert settlement.signature.algorithm == pb.SIGNATURE_ALGORITHM_ED25519
    assert settlement.signature.key_id == "test-key"
    assert verify(settlement, KEYS) == []
    stored = tmp_path / "settlement.json"
    stored.write_bytes(data)
    assert main(["verify", str(stored), "--keys", str(keys_file)]) == 0
    assert "signature by key 'test-key' is valid" in capsys.readouterr().out
    # another key under the same id: the signature no longer checks out
    wrong = tmp_path / "wrong.json"
    wrong.write_text(
        KeySet().with_current(signing_key_from_pem(fixed_test_key(2), "test-key")).to_json()
    )
    assert main(["verify", str(stored), "--keys", str(wrong)]) == 1
    assert "signature: does not match" in capsys.readouterr().out
    # no keys: the digests are checked, and the output and exit code say the signature was not
    assert main(["verify", str(stored)]) == 4
    assert "signature was NOT checked" in capsys.readouterr().out


@pytest.mark.parametrize("form", ["json", "binary"])
def test_every_single_bit_flip_is_detected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path, form: str
) -> None:
    data = signed_settlement(capsys, tmp_path, key_file, small_request())
    if form == "binary":
        data = load_settlement(data).SerializeToString(deterministic=True)
    assert not detected(data)
    bits = len(data) * 8
    workers = max(1, min(4, os.cpu_count() or 1))
    step = -(-bits // workers)
    chunks = [(data, i, min(bits, i + step)) for i in range(0, bits, step)]
    with ProcessPoolExecutor(workers) as pool:
        missed = [bit for part in pool.map(_flips, chunks) for bit in part]
    assert missed == [], f"{len(missed)} of {bits} flips went unnoticed, first at bit {missed[:5]}"


def test_verify_names_what_does_not_match(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path
) -> None:
    data = signed_settlement(capsys, tmp_path, key_file, small_request())
    settlement = load_settlement(data)
    settlement.players[0].net_money += 1
    findings = {f.what for f in verify(settlement, KEYS)}
    assert findings == {"settlement_digest", "signature"}
    settlement = load_settlement(data)
    settlement.request_digest = "0" * 64
    assert {f.what for f in verify(settlement, KEYS)} == {
        "settlement_id",
        "settlement_digest",
        "signature",
    }


def test_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path, server: Any
) -> None:
    request = small_request()
    stored = tmp_path / "settlement.json"
    stored.write_bytes(signed_settlement(capsys, tmp_path, key_file, request))
    req_path = tmp_path / "request.json"
    req_path.write_text(json.dumps(request))
    assert main(["replay", str(req_path), str(stored), "--local"]) == 0
    assert "identical" in capsys.readouterr().out
    # against a server too (unsigned there: signature and issuedAt are outside the comparison)
    assert main(["replay", str(req_path), str(stored), "--server", server.address]) == 0
    capsys.readouterr()

    changed = json.loads(json.dumps(request))
    front = changed["players"][0]["arrangement"]["front"]
    used = {c for p in changed["players"] for row in p["arrangement"].values() for c in row}
    front[0] = next(c for c in ("2s", "2h", "2d", "2c", "3s", "3h") if c not in used)
    req_path.write_text(json.dumps(changed))
    assert main(["replay", str(req_path), str(stored), "--local", "--output", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["identical"]
    assert any(d.startswith("players[0].rows[0].cards[0]") for d in report["differences"])
    assert any(d.startswith("requestDigest") for d in report["differences"])

    changed = json.loads(json.dumps(request))
    changed["profileOverrides"] = {"scoring": {"scoopBonus": 5}}
    req_path.write_text(json.dumps(changed))
    assert main(["replay", str(req_path), str(stored), "--local", "--output", "json"]) == 1
    diffs = json.loads(capsys.readouterr().out)["differences"]
    assert any(d.startswith("profile.digest") for d in diffs)


def _serve(tmp_path: Path, name: str, key_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    sock = tmp_path / f"{name}.sock"
    proc = start(
        sock,
        tmp_path / f"{name}.log",
        CPSETTLE_SIGNING_KEY_FILE=str(key_file),
        CPSETTLE_SIGNING_KEY_ID="test-key",
    )
    return proc, f"unix://{sock}"


def test_two_server_processes_give_byte_identical_settlements(
    tmp_path: Path, key_file: Path
) -> None:
    rng = random.Random(2026)
    presets = [
        "one-six",
        "classic-1-6",
        "one-two",
        "two-four",
        "western",
        "eastern",
        "ofc",
        "ofc-descubierto",
        "shisanshui",
    ]
    requests = []
    for i in range(1000):
        r = random_table(
            rng, rng.randint(2, 4), preset=presets[i % len(presets)], stacks=i % 3 == 0
        )
        r["handId"] = f"hand-{i}"
        requests.append(request_from_json(r))
    servers = [_serve(tmp_path, n, key_file) for n in ("replica-a", "replica-b")]
    try:
        for proc, address in servers:
            wait_serving(address, proc)
        answers = []
        for _, address in servers:
            with SettlementClient(address) as c:
                answers.append([c.settle(r).settlement for r in requests])
    finally:
        for proc, _ in servers:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
    for a, b in zip(*answers, strict=True):
        assert content_bytes(a) == content_bytes(b)
        assert a.settlement_id == b.settlement_id and a.settlement_digest == b.settlement_digest
        assert verify(a, KEYS) == [] and verify(b, KEYS) == []


def test_audit_log_events(client: SettlementClient, logs: Any) -> None:
    request = request_from_json(small_request())
    request.hand_id = "audit-log-hand"
    s = client.settle(request).settlement
    events = [e for e in logs.events("settlement.issued") if e["hand_id"] == "audit-log-hand"]
    assert len(events) == 1
    e = events[0]
    assert e["settlement_id"] == s.settlement_id and e["request_digest"] == s.request_digest
    assert e["profile_digest"] == s.profile.digest and e["engine_digest"] == s.engine_digest
    assert e["nets"] == {p.player_id: p.net_money for p in s.players}
    assert pb.SettleRequest.FromString(base64.b64decode(e["request"])) == request
    nets = {p.player_id: p.net_money for p in s.players}
    first = next(iter(nets))
    nets[first] += 1
    client.validate_payouts(request, nets)
    mismatch = [m for m in logs.events("payout.mismatch") if m["hand_id"] == "audit-log-hand"]
    assert len(mismatch) == 1 and [p["player_id"] for p in mismatch[0]["players"]] == [first]


def test_service_started_event_and_no_secret_in_logs(tmp_path: Path, key_file: Path) -> None:
    proc, address = _serve(tmp_path, "started", key_file)
    try:
        wait_serving(address, proc)
        with SettlementClient(address) as c:
            c.settle(small_request())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    out = (tmp_path / "started.log").read_text()
    secret = KEY.private.private_bytes_raw()
    assert secret.hex() not in out and base64.b64encode(secret).decode() not in out
    assert "PRIVATE KEY" not in out
    started = next(json.loads(line) for line in out.splitlines() if '"service.started"' in line)
    assert started["signing_key_id"] == "test-key" and len(started["engine_digest"]) == 64
    assert {p["name"] for p in started["profiles"]} >= {"western", "ofc", "shisanshui"}
    assert all(len(p["digest"]) == 64 for p in started["profiles"])


def test_a_required_key_that_is_missing_stops_the_service(tmp_path: Path) -> None:
    proc = start(tmp_path / "nokey.sock", CPSETTLE_REQUIRE_SIGNING_KEY="true")
    code = proc.wait(timeout=30)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert code != 0 and "signing.key_unusable" in out


def test_without_a_key_the_service_warns_and_marks_settlements_unsigned(tmp_path: Path) -> None:
    sock = tmp_path / "dev.sock"
    proc = start(sock)
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}") as c:
            s = c.settle(small_request()).settlement
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert "signing.disabled" in out and "NO SIGNING KEY" in out
    assert s.signature.algorithm == pb.SIGNATURE_ALGORITHM_NONE and s.settlement_digest
    assert [f.what for f in verify(s, KEYS)] == ["signature"]


def test_issued_at_is_utc_milliseconds_and_follows_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time as time_module

    from cpsettle_service.proof import times

    for now in (1764495062.123, 1764495062.9999, 1764495063.0004, 1764581462.5):
        monkeypatch.setattr(time_module, "time", lambda now=now: now)
        ms = int(now * 1000)
        assert times.now_ms() == ms
        want = time_module.strftime("%Y-%m-%dT%H:%M:%S", time_module.gmtime(ms // 1000))
        assert times.millis_text(ms) == f"{want}.{ms % 1000:03d}Z"
        # the hot path's text is the general one, and protobuf reads it back to the same time
        assert times.millis_text(ms) == times.time_text(ms // 1000, ms % 1000 * 1_000_000)
        assert times.millis_of_text(times.millis_text(ms)) == ms
