"""The cpsettle command: local and against the real server; errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.profile_files import load_preset
from tests.conftest import EXAMPLES

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "cases"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("where", ["local", "server"])
def test_settle_json_output_matches_the_worked_example(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: Any, where: str
) -> None:
    case = json.loads(next(GOLDEN.glob("002-*.json")).read_text())
    args = ["--local"] if where == "local" else ["--server", server.address]
    code, out, _ = run(
        capsys, "settle", write(tmp_path, "r.json", case["request"]), *args, "--output", "json"
    )
    assert code == 0
    players = json.loads(out)["settlement"]["players"]
    nets = {p["playerId"]: int(p.get("netUnits", 0)) for p in players}
    assert nets == {k: v["netUnits"] for k, v in case["expected"]["players"].items()}


def test_local_and_server_answers_are_identical(
    capsys: pytest.CaptureFixture[str], server: Any
) -> None:
    for path in sorted((EXAMPLES / "tables").glob("*.json")):
        _, local, _ = run(capsys, "settle", str(path), "--local", "--output", "json")
        _, remote, _ = run(
            capsys, "settle", str(path), "--server", server.address, "--output", "json"
        )
        a, b = json.loads(local)["settlement"], json.loads(remote)["settlement"]
        for varying in ("issuedAt", "signature"):  # the only fields outside the digests
            a.pop(varying), b.pop(varying)
        assert a == b, path.name


def test_settle_table_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "settle", str(EXAMPLES / "tables" / "ofc.json"), "--local")
    assert code == 0
    assert "Player" in out and "Units" in out and "Money" in out
    assert " v " in out and "Back:" in out


def test_validate_flags_a_mismatch(capsys: pytest.CaptureFixture[str], server: Any) -> None:
    path = str(EXAMPLES / "tables" / "one-six.json")
    _, out, _ = run(capsys, "settle", path, "--local", "--output", "json")
    nets = {
        p["playerId"]: int(p.get("netMoney", 0)) for p in json.loads(out)["settlement"]["players"]
    }
    good = [f"{k}={v}" for k, v in nets.items()]
    code, out, _ = run(capsys, "validate", path, "--server", server.address, "--proposed", *good)
    assert code == 0 and "All payouts match" in out
    first = next(iter(nets))
    bad = [f"{k}={v + (5 if k == first else 0)}" for k, v in nets.items()]
    code, out, _ = run(capsys, "validate", path, "--local", "--proposed", *bad)
    assert code == 1 and "MISMATCH" in out and f"Why {first} should get" in out


def test_evaluate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "evaluate",
        "--preset",
        "ofc",
        "--local",
        "--front",
        "Qs Qh 2c",
        "--middle",
        "8s 8h 8d 7c 7d",
        "--back",
        "9s 9h 9d 6s 6h",
    )
    assert code == 0
    assert "Full house, eights full of sevens" in out and "14 cards" in out


def test_profile_json_round_trips_into_a_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: Any
) -> None:
    code, out, _ = run(
        capsys, "profiles", "eastern", "--server", server.address, "--output", "json"
    )
    assert code == 0
    profile = json.loads(out)
    # the engine's form, but for 64-bit money, written as protobuf JSON writes it (strings)
    expected = profile_to_dict(load_preset("eastern"))
    assert profile["money"] == {k: str(v) for k, v in expected["money"].items()}
    assert profile["rake"]["perPlayerFee"] == str(expected["rake"]["perPlayerFee"])
    assert profile_from_dict(profile) == load_preset("eastern")
    assert {k: v for k, v in profile.items() if k not in ("money", "rake")} == {
        k: v for k, v in expected.items() if k not in ("money", "rake")
    }
    profile["surrender"]["units"] = 2
    request = json.loads((EXAMPLES / "tables" / "eastern.json").read_text())
    request.pop("preset")
    request["profile"] = profile
    code, out, _ = run(
        capsys, "settle", write(tmp_path, "inline.json", request), "--local", "--output", "json"
    )
    assert code == 0 and json.loads(out)["settlement"]["profile"]["source"] == "inline"


def test_profiles_listing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "profiles", "--local")
    assert code == 0
    for name in ("one-six", "western", "shisanshui", "ofc-descubierto"):
        assert name in out


def test_errors_are_a_list_of_violations(capsys: pytest.CaptureFixture[str], server: Any) -> None:
    path = str(EXAMPLES / "invalid" / "duplicate-and-bad-cards.json")
    for args in (["--local"], ["--server", server.address]):
        code, _, err = run(capsys, "settle", path, *args)
        assert code == 2
        lines = [line for line in err.splitlines() if line.startswith("  - ")]
        assert len(lines) == 3
        assert any("players[0].arrangement.front[0]" in line for line in lines)


def test_unreadable_input_and_unreachable_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "settle", str(bad), "--local")
    assert code == 2 and "is not JSON" in err
    code, _, err = run(
        capsys, "settle", write(tmp_path, "x.json", {"players": [], "bogus": 1}), "--local"
    )
    assert code == 2 and "bogus" in err
    good = str(EXAMPLES / "tables" / "one-six.json")
    code, _, err = run(capsys, "settle", good, "--server", "127.0.0.1:1", "--timeout", "1")
    assert code == 3 and "UNAVAILABLE" in err
