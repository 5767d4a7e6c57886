"""The chained audit log of a real server: intact as written; every cut, edit, swap and repeat
reported with its line."""

from __future__ import annotations

import itertools
import json
import signal
import time
from pathlib import Path

import pytest

from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.proof.log import GENESIS, line_hash
from tests.proof.test_proof import small_request
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving


@pytest.fixture(scope="module")
def served_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A server's log (a few settlements and payout checks, heads every 5 lines, a shutdown
    head) and its key set, fetched with ``cpsettle keys show`` while it ran."""
    tmp = tmp_path_factory.mktemp("chain")
    pem = tmp / "key.pem"
    pem.write_bytes(fixed_test_key(1))
    log, sock = tmp / "server.log", tmp / "s.sock"
    proc = start(sock, log, CPSETTLE_SIGNING_KEY_FILE=str(pem), CPSETTLE_AUDIT_HEAD_EVENTS="5")
    keys = tmp / "keys.json"
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}") as c:
            for i in range(6):
                request = request_from_json(small_request())
                request.hand_id = f"chain-{i}"
                s = c.settle(request).settlement
                c.validate_payouts(request, {p.player_id: p.net_money for p in s.players})
            keys.write_text(json.dumps({"keys": [
                {"keyId": k.key_id, "algorithm": k.algorithm, "publicKey": k.public_key}
                for k in c.verification_keys().keys]}))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    return log, keys


def _verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["audit-log", "verify", *args])
    return code, capsys.readouterr().out


def test_the_log_as_written_is_one_intact_chain(served_log: tuple[Path, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    log, keys = served_log
    lines = log.read_bytes().splitlines()
    events = [json.loads(x) for x in lines]
    assert len({e["chain"] for e in events}) == 1
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["prev"] == GENESIS
    assert all(e["prev"] == line_hash(lines[i - 1]) for i, e in enumerate(events) if i)
    heads = [e for e in events if e["event"] == "audit.head"]
    assert [h["reason"] for h in heads[:-1]] == ["count"] * (len(heads) - 1)
    assert heads[-1]["reason"] == "shutdown" and events[-1] is heads[-1]
    assert all(h["algorithm"] == "Ed25519" and len(h["signature"]) == 128 for h in heads)
    code, out = _verify(capsys, str(log), "--keys", str(keys))
    assert code == 0, out
    assert "INTACT" in out and "NOT checked" not in out and "PROBLEM" not in out
    code, out = _verify(capsys, str(log))
    assert code == 0 and "signature NOT checked" in out


def _tampered(log: Path, tmp_path: Path, change) -> Path:  # type: ignore[no-untyped-def]
    lines = log.read_bytes().splitlines(keepends=True)
    change(lines)
    out = tmp_path / "tampered.log"
    out.write_bytes(b"".join(lines))
    return out


def _edit(line: bytes) -> bytes:
    event = json.loads(line)
    key = next(k for k in ("hand_id", "settlement_id", "event") if k in event)
    event[key] = str(event[key]) + "x"
    return json.dumps(event).encode() + b"\n"


CASES = {
    # name: (change the lines (0-based index), the kind reported, the line (1-based) named)
    "delete": (lambda ls: ls.pop(6), "gap", 7),
    "edit": (lambda ls: ls.__setitem__(6, _edit(ls[6])), "edit", 7),
    "swap": (lambda ls: ls.__setitem__(slice(6, 8), [ls[7], ls[6]]), "order", 8),
    "duplicate": (lambda ls: ls.insert(7, ls[6]), "duplicate", 8),
    "fork": (lambda ls: ls.insert(7, _edit(ls[6])), "fork", 8),
    "unreadable": (lambda ls: ls.__setitem__(6, ls[6][:40] + b"\n"), "gap", 8),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_tampering_is_reported_with_its_line(served_log: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  name: str) -> None:
    log, keys = served_log
    change, kind, line = CASES[name]
    bad = _tampered(log, tmp_path, change)
    code, out = _verify(capsys, str(bad), "--keys", str(keys))
    assert code == 1, out
    reported = [x for x in out.splitlines() if x.startswith(f"  - {kind}: {bad}:{line}:")]
    assert reported, out


def test_heads_on_an_interval_and_two_runs_are_two_chains(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    pem = tmp_path / "key.pem"
    pem.write_bytes(fixed_test_key(1))
    log = tmp_path / "two-runs.log"
    for run in range(2):
        sock = tmp_path / f"run{run}.sock"
        part = tmp_path / f"run{run}.log"
        proc = start(sock, part, CPSETTLE_SIGNING_KEY_FILE=str(pem),
                     CPSETTLE_AUDIT_HEAD_SECONDS="0.2")
        try:
            wait_serving(f"unix://{sock}", proc)
            with SettlementClient(f"unix://{sock}") as c:
                c.settle(small_request())
                time.sleep(0.6)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
        with log.open("ab") as f:
            f.write(part.read_bytes())
    events = [json.loads(x) for x in log.read_bytes().splitlines()]
    reasons = [e["reason"] for e in events if e["event"] == "audit.head"]
    assert reasons.count("interval") >= 2 and reasons.count("shutdown") == 2
    # an idle interval writes no head: no two interval heads in a row without lines between
    heads_in_row = [a["event"] == b["event"] == "audit.head" and b["reason"] == "interval"
                    for a, b in itertools.pairwise(events)]
    assert not any(heads_in_row)
    code, out = _verify(capsys, str(log))
    assert code == 0, out
    assert out.count("INTACT") == 2
