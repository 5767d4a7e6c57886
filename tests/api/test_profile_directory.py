"""House profiles from a profile directory (RULES.md §12: "or load its own profiles from a
directory at start"): listed beside the presets with the file each came from, and a directory
with problems refused as a whole, naming every file and every problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset, preset_names
from tests.conftest import start_server, stop_server
from tests.support.tables import table


def house(name: str, **changes: Any) -> dict[str, Any]:
    """A house profile: the western preset under another name, with ``changes`` laid on."""
    profile = profile_to_dict(load_preset("western"))
    profile.update(name=name, description=f"{name}, a house profile", **changes)
    return profile


def test_house_profiles_are_listed_with_the_file_they_came_from(tmp_path: Path) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    bonus = house("house-bonus", scoring={"rowUnit": 2, "majorityBonus": 1, "scoopBonus": 5})
    (folder / "house-bonus.json").write_text(json.dumps(bonus), "utf-8")
    (folder / "house-plain.json").write_text(json.dumps(house("house-plain")), "utf-8")
    (folder / "notes.txt").write_text("not a profile: only *.json files are read", "utf-8")
    handle = start_server(tmp_path / "house.sock", profile_dir=str(folder))
    try:
        with SettlementClient(handle.address, timeout=10) as client:
            listing = client.list_profiles()
            sources = {p.name: p.source for p in listing.profiles}
            assert [p.name for p in listing.profiles] == sorted(sources)
            assert sources == {
                **{n: "builtin" for n in preset_names()},
                "house-bonus": str(folder / "house-bonus.json"),
                "house-plain": str(folder / "house-plain.json"),
            }
            got = client.get_profile("house-bonus")
            assert got.summary.source == str(folder / "house-bonus.json")
            assert got.profile.scoring.scoop_bonus == 5
            settled = client.settle(table("house-bonus")).settlement
            assert settled.profile.name == "house-bonus"
    finally:
        stop_server(handle)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_directory_with_problems_names_every_file_and_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Files are read in name order; a problem in one does not stop the ones after it."""
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "1-broken.json").write_text('{"name": "broken", ', "utf-8")
    bad = house("bad", surrender={"units": -1}, caps={"wins": "yes"})
    (folder / "2-bad.json").write_text(json.dumps(bad), "utf-8")
    (folder / "3-western.json").write_text(json.dumps(house("western")), "utf-8")
    (folder / "4-good.json").write_text(json.dumps(house("house-good")), "utf-8")
    (folder / "5-again.json").write_text(json.dumps(house("house-good")), "utf-8")
    (folder / "6-also-broken.json").write_text("[", "utf-8")
    code, out, err = run(capsys, "profiles", "--local", "--profile-dir", str(folder))
    assert code == 2 and out == ""
    problems = [line[4:] for line in err.splitlines() if line.startswith("  - ")]
    assert len(problems) == 6, err
    assert problems[0].startswith(f"{folder / '1-broken.json'}: cannot be read as JSON: ")
    assert problems[1:5] == [
        f"{folder / '2-bad.json'}.surrender.units: must be at least 0, got -1",
        f"{folder / '2-bad.json'}.caps.wins: must be true or false, got a string",
        f"{folder / '3-western.json'}.name: profile 'western' is already defined (builtin)",
        f"{folder / '5-again.json'}.name: profile 'house-good' is already defined "
        f"({folder / '4-good.json'})",
    ]
    assert problems[5].startswith(f"{folder / '6-also-broken.json'}: cannot be read as JSON: ")
