"""The tamper suite (docs/AUDIT.md, "What each check catches"): real server processes, a real
witness, their real logs, then every way an insider could shorten, drop or replace the record,
each caught by ``cpsettle audit-log verify`` (and, for the checkpoint and inclusion-proof part,
by the JavaScript checker: tests/record/test_js_log.py)."""

from __future__ import annotations

import base64
import json
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient, request_from_json
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from cpsettle_service.proof.merkle import Tree, leaf_hash
from cpsettle_service.proof.note import COSIGNATURE, Checkpoint, NoteKey, sign
from tests.proof.test_proof import small_request
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving
from tests.support.witness import export, start_witness

REPLICA_KEY = fixed_test_key(1)


@dataclass
class Run:
    log: Path
    origin: str
    receipts: list[dict[str, Any]]


@dataclass
class World:
    tmp: Path
    runs: dict[str, Run]  # a1, a2 (replica A restarted), b (a second replica)
    keys: Path
    export: Path
    vkey: Path
    witness_url: str


def _settle(sock: Path, n: int, tag: str) -> list[dict[str, Any]]:
    out = []
    with SettlementClient(f"unix://{sock}") as c:
        for i in range(n):
            request = request_from_json(small_request())
            request.hand_id = f"{tag}-{i}"
            response = c.settle(request)
            out.append(
                {
                    "origin": response.receipt.origin,
                    "index": str(response.receipt.index),
                    "leafHash": response.receipt.leaf_hash,
                    "settlementId": response.settlement.settlement_id,
                }
            )
    return out


def _replica(tmp: Path, name: str, url: str, n: int, pause: float = 0.0) -> Run:
    pem = tmp / "replica.pem"
    sock, log = tmp / f"{name}.sock", tmp / f"{name}.log"
    # a generous grace and call timeout: on a loaded machine the last checkpoint still reaches
    # the witness before the replica exits (it exits as soon as the witness cosigned it)
    proc = start(
        sock,
        log,
        CPSETTLE_SIGNING_KEY_FILE=str(pem),
        CPSETTLE_WITNESS_URL=url,
        CPSETTLE_AUDIT_CHECKPOINT_SECONDS="0.2",
        CPSETTLE_AUDIT_CHECKPOINT_EVENTS="4",
        CPSETTLE_GRACE_SECONDS="30",
        CPSETTLE_WITNESS_TIMEOUT_SECONDS="20",
    )
    try:
        wait_serving(f"unix://{sock}", proc)
        receipts = _settle(sock, n, name)
        time.sleep(pause)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=90) == 0
    origin = json.loads(log.read_bytes().splitlines()[0])["log"]
    return Run(log, origin, receipts)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("tamper")
    (tmp / "replica.pem").write_bytes(REPLICA_KEY)
    (tmp / "witness.pem").write_bytes(fixed_test_key(3))
    keys = tmp / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(REPLICA_KEY)).to_json())
    db = str(tmp / "witness.sqlite3")
    witness, url = start_witness(tmp, tmp / "witness.pem", keys, db)
    runs = {}
    try:
        runs["a1"] = _replica(tmp, "a1", url, 6, pause=0.5)
        # the witness restarts between two runs: its record is on disk
        witness.send_signal(signal.SIGTERM)
        witness.wait(timeout=10)
        witness, url = start_witness(
            tmp, tmp / "witness.pem", keys, db, port=int(url.rsplit(":", 1)[1])
        )
        runs["a2"] = _replica(tmp, "a2", url, 3, pause=0.5)
        runs["b"] = _replica(tmp, "b", url, 3, pause=0.5)
        exported = export(url)
    finally:
        witness.send_signal(signal.SIGTERM)
        witness.wait(timeout=10)
    (tmp / "export.json").write_text(json.dumps(exported))
    (tmp / "witness.vkey").write_text(exported["witness"]["vkey"] + "\n")
    return World(tmp, runs, keys, tmp / "export.json", tmp / "witness.vkey", url)


def _verify(
    capsys: pytest.CaptureFixture[str],
    w: World,
    logs: list[Path],
    *extra: str,
    witness: bool = True,
) -> tuple[int, str]:
    capsys.readouterr()
    args = ["audit-log", "verify", *map(str, logs), "--keys", str(w.keys)]
    if witness:
        args += ["--witness", str(w.export), "--witness-key", str(w.vkey)]
    code = main([*args, *extra])
    return code, capsys.readouterr().out


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _write(w: World, name: str, lines: list[bytes]) -> Path:
    path = w.tmp / f"tampered-{name}.log"
    path.write_bytes(b"".join(x + b"\n" for x in lines))
    return path


def _all(w: World) -> list[Path]:
    return [w.runs[k].log for k in ("a1", "a2", "b")]


def test_the_witness_registered_every_run_and_cosigned_its_last_checkpoint(world: World) -> None:
    doc = json.loads(world.export.read_text())
    assert {x["origin"] for x in doc["logs"]} == {r.origin for r in world.runs.values()}
    for entry in doc["logs"]:
        run = next(r for r in world.runs.values() if r.origin == entry["origin"])
        lines = _lines(run.log)
        last = json.loads(lines[-1])
        assert last["event"] == "audit.checkpoint" and last["reason"] == "shutdown"
        assert entry["size"] == last["size"] == len(lines) - 1  # the shutdown one, cosigned


def test_the_logs_as_written_are_intact_and_fully_checked(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    receipts = world.tmp / "receipts.jsonl"
    receipts.write_text(
        "".join(json.dumps(r) + "\n" for run in world.runs.values() for r in run.receipts)
    )
    code, out = _verify(capsys, world, _all(world), "--receipt", str(receipts))
    assert code == 0, out
    assert out.count(": INTACT") == 3 and "NOT CHECKED" not in out


def test_without_the_witness_it_says_what_it_could_not_check(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _verify(capsys, world, _all(world), witness=False)
    assert code == 4 and "NOT CHECKED: whether lines were cut from the end" in out


def _resign(lines: list[bytes], origin: str | None = None) -> list[bytes]:
    """What an insider holding the replica's key can do: rewrite every line's log fields and
    every checkpoint so that the log agrees with itself again."""
    key = signing_key_from_pem(REPLICA_KEY)
    out: list[bytes] = []
    tree = Tree()
    origin = origin or json.loads(lines[0])["log"]
    for i, raw in enumerate(lines):
        e = json.loads(raw)
        e["log"], e["index"] = origin, i
        if e["event"] == "audit.checkpoint":
            cp = Checkpoint(origin, tree.size, tree.root())
            e["size"], e["root"] = cp.size, base64.b64encode(cp.root).decode()
            e["checkpoint"] = sign(cp.text(), NoteKey.from_private(origin, key.private))
        data = json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()
        out.append(data)
        tree.append(leaf_hash(data))
    return out


def _issued(lines: list[bytes]) -> list[int]:
    return [i for i, x in enumerate(lines) if b'"settlement.issued"' in x]


CASES: dict[str, tuple[Callable[[list[bytes]], list[bytes]], set[str]]] = {
    # case: (how the lines of run a1 are changed, the problem kinds expected)
    "cut the last line": (lambda ls: ls[:-1], {"short"}),
    "cut the last 2 lines": (lambda ls: ls[:-2], {"short"}),
    "cut the last 4 lines": (lambda ls: ls[:-4], {"short"}),
    "delete a line": (lambda ls: ls[:3] + ls[4:], {"gap", "short"}),
    "delete a line, re-indexed and re-signed": (
        lambda ls: _resign(ls[: _issued(ls)[0]] + ls[_issued(ls)[0] + 1 :]),
        {"short"},
    ),
    "swap two lines": (lambda ls: [*ls[:2], ls[3], ls[2], *ls[4:]], {"order"}),
    "edit a line": (
        lambda ls: [*ls[:3], ls[3].replace(b'"level":"info"', b'"level":"INFO"', 1), *ls[4:]],
        {"root"},
    ),
    "edit a line, re-signed": (
        lambda ls: _resign(
            [*ls[:3], ls[3].replace(b'"level":"info"', b'"level":"INFO"', 1), *ls[4:]]
        ),
        {"root"},
    ),
    "duplicate a line": (lambda ls: [*ls[:4], ls[3], *ls[4:]], {"duplicate"}),
    "fork: a second line 3": (
        lambda ls: [
            *ls,
            json.dumps({**json.loads(ls[3]), "event": "made.up"}, separators=(",", ":")).encode(),
        ],
        {"fork"},
    ),
    "lines after the last checkpoint that skip": (
        lambda ls: [
            *ls,
            json.dumps(
                {"event": "x", "log": json.loads(ls[0])["log"], "index": len(ls) + 3}
            ).encode(),
        ],
        {"gap"},
    ),
    "a made-up log, signed with the replica's key": (
        lambda ls: _resign(ls, "cpsettle.audit/" + "f" * 32),
        {"unwitnessed"},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_every_tampering_of_a_log_is_caught(
    world: World, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    change, kinds = CASES[case]
    tampered = _write(
        world,
        case.replace(" ", "-").replace(",", "").replace(":", ""),
        change(_lines(world.runs["a1"].log)),
    )
    code, out = _verify(capsys, world, [tampered, world.runs["a2"].log, world.runs["b"].log])
    assert code == 1, out
    found = {
        line.split(":")[0].strip(" -")
        for line in out.splitlines()
        if line.startswith(("  - ", "- "))
    }
    assert kinds <= found, out


def test_a_withheld_run_is_caught(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _verify(capsys, world, [world.runs["a1"].log, world.runs["b"].log])
    assert code == 1 and "- missing: " + world.runs["a2"].origin in out


def test_two_replicas_spliced_into_one_log_are_caught(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _lines(world.runs["a1"].log), _lines(world.runs["b"].log)
    spliced = _write(world, "spliced", _resign(a[:5] + b[2:6] + a[5:]))
    code, out = _verify(capsys, world, [spliced, world.runs["a2"].log, world.runs["b"].log])
    assert code == 1 and "  - root: the first" in out, out


def test_a_receipt_whose_line_is_gone_is_caught(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    run = world.runs["a1"]
    lines = _lines(run.log)
    receipt = run.receipts[0]
    gone = int(receipt["index"])
    rewritten = _write(world, "no-receipt", _resign(lines[:gone] + lines[gone + 1 :]))
    path = world.tmp / "receipt.json"
    path.write_text(json.dumps(receipt))
    code, out = _verify(
        capsys,
        world,
        [rewritten, world.runs["a2"].log, world.runs["b"].log],
        "--receipt",
        str(path),
    )
    assert code == 1 and "  - receipt: " in out and "  - short: " in out, out


def test_a_cosignature_by_another_witness_key_is_refused(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    private = serialization.load_pem_private_key(fixed_test_key(4), None)
    assert isinstance(private, Ed25519PrivateKey)
    other = NoteKey.from_private("witness.test/w1", private, COSIGNATURE)
    vkey = world.tmp / "other.vkey"
    vkey.write_text(NoteKey(other.name, other.public, COSIGNATURE).vkey())
    capsys.readouterr()
    code = main(
        [
            "audit-log",
            "verify",
            *map(str, _all(world)),
            "--keys",
            str(world.keys),
            "--witness",
            str(world.export),
            "--witness-key",
            str(vkey),
        ]
    )
    assert code == 2 and "another witness key" in capsys.readouterr().err


def test_prove_and_check_proof(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    run = world.runs["a1"]
    receipt = world.tmp / "r.json"
    receipt.write_text(json.dumps(run.receipts[2]))
    capsys.readouterr()
    assert (
        main(["audit-log", "prove", str(receipt), str(run.log), "--witness", str(world.export)])
        == 0
    )
    proof = capsys.readouterr().out
    assert proof.startswith("c2sp.org/tlog-proof@v1\nextra ") and "\u2014 witness.test/w1" in proof
    path = world.tmp / "r.tlog-proof"
    path.write_text(proof)
    assert (
        main(
            [
                "audit-log",
                "check-proof",
                str(path),
                "--keys",
                str(world.keys),
                "--witness-key",
                str(world.vkey),
            ]
        )
        == 0
    )
    assert "cosigned by witness.test/w1" in capsys.readouterr().out
    bad = proof.replace(
        "index " + run.receipts[2]["index"], "index " + str(int(run.receipts[2]["index"]) + 1)
    )
    path.write_text(bad)
    assert (
        main(
            [
                "audit-log",
                "check-proof",
                str(path),
                "--keys",
                str(world.keys),
                "--witness-key",
                str(world.vkey),
            ]
        )
        == 1
    )
