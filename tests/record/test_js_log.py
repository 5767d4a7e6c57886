"""The JavaScript checker (clients/js/log.mjs, Node's standard library only) on the tamper
suite's real logs: every case of the checkpoint part caught, and the inclusion proofs that
`cpsettle audit-log prove` writes checked, a changed one refused."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from tests.conftest import ROOT
from tests.record.test_tamper import CASES, World, _lines, _write, world  # noqa: F401

NODE = shutil.which("node")
JS = ROOT / "clients" / "js" / "audit-log.mjs"
pytestmark = pytest.mark.skipif(
    NODE is None,
    reason="Node.js is not installed (the CI script installs it: apt-get install nodejs)",
)


def _node(*args: str) -> tuple[int, dict[str, Any]]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(JS), *args], capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode, json.loads(done.stdout or "{}")


def _verify(w: World, logs: list[Path]) -> tuple[int, set[str]]:
    code, report = _node(
        "verify",
        *map(str, logs),
        "--witness",
        str(w.export),
        "--witness-key",
        str(w.vkey),
        "--keys",
        str(w.keys),
    )
    return code, {p[0] for p in report.get("problems", [])}


def test_the_js_checker_finds_the_logs_intact(world: World) -> None:  # noqa: F811
    assert _verify(world, [r.log for r in world.runs.values()]) == (0, set())


@pytest.mark.parametrize("case", CASES)
def test_the_js_checker_catches_each_tampering(world: World, case: str) -> None:  # noqa: F811
    change, kinds = CASES[case]
    tampered = _write(
        world,
        "js-" + case.replace(" ", "-").replace(",", "").replace(":", ""),
        change(_lines(world.runs["a1"].log)),
    )
    code, found = _verify(world, [tampered, world.runs["a2"].log, world.runs["b"].log])
    assert code == 1 and found & (kinds | {"gap", "short", "root"}), found


def test_the_js_checker_catches_a_withheld_run(world: World) -> None:  # noqa: F811
    assert _verify(world, [world.runs["a1"].log, world.runs["b"].log]) == (1, {"missing"})


def test_the_js_checker_checks_an_inclusion_proof(
    world: World,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = world.runs["b"]
    receipt = tmp_path / "r.json"
    receipt.write_text(json.dumps(run.receipts[1]))
    capsys.readouterr()
    assert (
        main(["audit-log", "prove", str(receipt), str(run.log), "--witness", str(world.export)])
        == 0
    )
    proof = tmp_path / "p.tlog-proof"
    proof.write_text(capsys.readouterr().out)
    settlement = tmp_path / "s.json"
    settlement.write_text(json.dumps({"settlementId": run.receipts[1]["settlementId"]}))
    code, report = _node(
        "check-proof",
        str(proof),
        "--keys",
        str(world.keys),
        "--witness-key",
        str(world.vkey),
        "--settlement",
        str(settlement),
    )
    assert code == 0 and report["verdict"] == "valid", report
    assert _node("check-proof", str(proof), "--keys", str(world.keys))[0] == 4
    other = run.receipts[2]["settlementId"]
    settlement.write_text(json.dumps({"settlementId": other}))
    assert (
        _node(
            "check-proof",
            str(proof),
            "--keys",
            str(world.keys),
            "--witness-key",
            str(world.vkey),
            "--settlement",
            str(settlement),
        )[0]
        == 1
    )
    text = proof.read_text()
    lines = text.split("\n")
    lines[3] = "A" * 43 + "="  # a proof hash changed
    proof.write_text("\n".join(lines))
    assert (
        _node(
            "check-proof", str(proof), "--keys", str(world.keys), "--witness-key", str(world.vkey)
        )[0]
        == 1
    )
