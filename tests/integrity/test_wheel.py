"""The manifest built into a real wheel, and check_installation() on the unpacked wheel."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import MANIFEST, ROOT, Wheel, build_wheel, report_in, run_python

SOURCES = {  # wheel top-level package -> source directory (pyproject's wheel sources)
    "cpsettle_service": Path("service/cpsettle_service"),
    "cpsettle_client": Path("clients/python/cpsettle_client"),
    "cpsettle": Path("proto/cpsettle"),
}
SCRIPT = ROOT / "scripts" / "manifest-digest"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def source_of(checkout: Path, path: str) -> Path:
    top, _, rest = path.partition("/")
    return checkout / SOURCES[top] / rest


# ---- the manifest in the wheel ---------------------------------------------------------------


def test_manifest_lists_every_shipped_file_with_its_sha256(wheel: Wheel) -> None:
    raw = wheel.manifest_bytes()
    manifest = json.loads(raw)
    assert raw == canonical(manifest), "written as its own canonical JSON"
    assert manifest["format"] == 1
    assert manifest["name"] == "cpsettle" and manifest["version"]
    paths = [f["path"] for f in manifest["files"]]
    assert paths == sorted(paths) and len(paths) == len(set(paths))
    with zipfile.ZipFile(wheel.path) as z:
        shipped = {
            n: sha256(z.read(n))
            for n in z.namelist()
            if n.split("/")[0] in SOURCES and n != MANIFEST
        }
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == shipped
    assert MANIFEST not in paths
    assert not [p for p in paths if "__pycache__" in p or p.endswith(".pyc")]
    for top in SOURCES:
        assert any(p.startswith(f"{top}/") for p in paths), top
    assert "cpsettle_service/domain/settle/settlement.py" in paths
    assert "cpsettle_service/domain/profile/presets/western.json" in paths


def test_manifest_hashes_are_those_of_the_source_files(wheel: Wheel) -> None:
    listed = {entry["path"]: entry["sha256"] for entry in wheel.manifest()["files"]}
    for path, digest in listed.items():
        assert sha256(source_of(wheel.source, path).read_bytes()) == digest, path
    for top, folder in SOURCES.items():  # every source module ships, and is listed
        for module in (wheel.source / folder).rglob("*.py"):
            assert f"{top}/{module.relative_to(wheel.source / folder).as_posix()}" in listed


def test_nothing_is_written_into_the_source_tree(wheel: Wheel) -> None:
    for checkout in (wheel.source, ROOT):
        assert not (checkout / "service" / "cpsettle_service" / "_manifest.json").exists()
    assert not list(wheel.source.rglob("_manifest.json"))


def test_the_manifest_is_reproducible(wheel: Wheel, tmp_path: Path) -> None:
    """Same source, same manifest bytes: the certified digest can be rebuilt anywhere."""
    again = build_wheel(tmp_path, wheel.source)
    assert again.manifest_bytes() == wheel.manifest_bytes()


def test_the_wheel_builds_from_the_repo_root(tmp_path: Path) -> None:
    """The documented command, in the working tree itself (no comparison with the tree: others
    may be editing it)."""
    built = build_wheel(tmp_path)
    assert built.build_seconds < 120, built.build_seconds
    proc = run_script(str(built.path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == sha256(built.manifest_bytes())
    assert not (ROOT / "service" / "cpsettle_service" / "_manifest.json").exists()


# ---- check_installation() in the unpacked wheel --------------------------------------------


def test_unpacked_wheel_is_intact(wheel: Wheel, site: Path) -> None:
    report = report_in(site)
    manifest = wheel.manifest()
    assert report["intact"] is True and report["problems"] == []
    assert report["development"] is False
    assert report["files_checked"] == len(manifest["files"]) > 0
    assert report["manifest_digest"] == sha256(canonical(manifest))
    assert report["manifest_digest"] == sha256(wheel.manifest_bytes())
    assert report["engine_digest"] == manifest["engine_digest"]
    assert report["engine_version"] == f"cpsettle-engine/{manifest['version']}"


def test_bytecode_caches_written_at_run_time_are_not_tampering(site: Path) -> None:
    code = "import cpsettle_service.server, cpsettle_client.cli"
    assert run_python(site, code, bytecode=True).returncode == 0
    assert list(site.glob("cpsettle_service/**/__pycache__/*.pyc"))
    assert report_in(site)["problems"] == []


@pytest.mark.parametrize(
    "path",
    [
        "cpsettle_service/domain/profile/presets/western.json",
        "cpsettle_service/domain/settle/settlement.py",
        "cpsettle_service/server.py",
        "cpsettle/v1/settlement_pb2.py",
        "cpsettle_client/cli.py",
    ],
)
def test_a_modified_file_is_named(site: Path, path: str) -> None:
    file = site / path
    data = file.read_bytes()
    file.write_bytes(data.replace(b"1", b"2", 1) if b"1" in data else data + b" ")
    report = report_in(site)
    assert report["intact"] is False
    assert f"modified: {path}" in report["problems"]
    assert report["manifest_digest"]  # still names the manifest it checked against


def test_an_added_module_is_named(site: Path) -> None:
    (site / "cpsettle_service/domain/backdoor.py").write_text("X = 1\n")
    (site / "cpsettle_service/api/extra").mkdir()
    (site / "cpsettle_service/api/extra/__init__.py").write_text("")
    report = report_in(site)
    assert "unlisted: cpsettle_service/domain/backdoor.py" in report["problems"]
    assert "unlisted: cpsettle_service/api/extra/__init__.py" in report["problems"]


def test_an_added_preset_or_sourceless_bytecode_is_named(site: Path) -> None:
    """The presets are found by listing their folder; a bare .pyc is importable."""
    (site / "cpsettle_service/domain/profile/presets/house.json").write_text("{}")
    (site / "cpsettle_client/render.pyc").write_bytes(b"\0")
    problems = report_in(site)["problems"]
    assert "unlisted: cpsettle_service/domain/profile/presets/house.json" in problems
    assert "unlisted: cpsettle_client/render.pyc" in problems


def test_a_deleted_file_is_named(site: Path) -> None:
    (site / "cpsettle_service/domain/settle/money.py").unlink()
    assert "missing: cpsettle_service/domain/settle/money.py" in report_in(site)["problems"]


def test_a_rewritten_manifest_changes_the_digest(wheel: Wheel, site: Path) -> None:
    """Whoever edits the manifest to hide a change cannot keep the certified digest."""
    path = "cpsettle_service/domain/settle/settlement.py"
    (site / path).write_bytes((site / path).read_bytes() + b"\n# changed\n")
    manifest = wheel.manifest()
    for entry in manifest["files"]:
        if entry["path"] == path:
            entry["sha256"] = sha256((site / path).read_bytes())
    (site / MANIFEST).write_bytes(canonical(manifest))
    report = report_in(site)
    assert report["manifest_digest"] != sha256(wheel.manifest_bytes())


# ---- engine digest ---------------------------------------------------------------------------


def engine_digest_of_source(checkout: Path) -> str:
    """Independent computation from the source tree (the definition in docs/INTEGRITY.md)."""
    base = checkout / "service"
    domain = base / "cpsettle_service" / "domain"
    files = [p for p in domain.rglob("*.py") if "__pycache__" not in p.parts]
    files += list((domain / "profile" / "presets").glob("*.json"))
    pairs = sorted((p.relative_to(base).as_posix(), sha256(p.read_bytes())) for p in files)
    h = hashlib.sha256()
    for path, digest in pairs:
        h.update(f"{path}\0{digest}\n".encode())
    return h.hexdigest()


def test_engine_digest_is_the_same_in_the_source_tree_and_the_wheel(
    wheel: Wheel, site: Path
) -> None:
    checkout = wheel.source / "service"
    code = "from cpsettle_service.proof import integrity as i; print(i.__file__, i.engine_digest())"
    proc = run_python(checkout, code)  # a source import, from the checkout the wheel came from
    assert proc.returncode == 0, proc.stderr
    file, source = proc.stdout.split()
    assert Path(file).is_relative_to(checkout)
    assert source == engine_digest_of_source(wheel.source)
    assert report_in(site)["engine_digest"] == source
    assert wheel.manifest()["engine_digest"] == source


def test_engine_digest_changes_with_an_engine_file(wheel: Wheel, site: Path) -> None:
    preset = site / "cpsettle_service/domain/profile/presets/western.json"
    preset.write_bytes(preset.read_bytes() + b"\n")
    report = report_in(site)
    assert report["engine_digest"] != wheel.manifest()["engine_digest"]
    assert "engine: the code loaded at start differs from the manifest" in report["problems"]


def test_engine_digest_ignores_the_rest_of_the_service(wheel: Wheel, site: Path) -> None:
    server = site / "cpsettle_service/server.py"
    server.write_bytes(server.read_bytes() + b"\n")
    assert report_in(site)["engine_digest"] == wheel.manifest()["engine_digest"]


# ---- scripts/manifest-digest -----------------------------------------------------------------


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_script_prints_the_digest_of_a_wheel_and_of_an_installation(
    wheel: Wheel, site: Path
) -> None:
    expected = report_in(site)["manifest_digest"]
    of_wheel = run_script(str(wheel.path))
    assert of_wheel.returncode == 0, of_wheel.stderr
    assert of_wheel.stdout == expected + "\n"
    of_site = run_script(str(site))
    assert of_site.returncode == 0, of_site.stderr
    assert of_site.stdout == expected + "\n"
    summary = json.loads(run_script("--json", str(wheel.path)).stdout)
    assert summary["manifest_digest"] == expected
    assert summary["engine_digest"] == wheel.manifest()["engine_digest"]


def test_script_refuses_a_tampered_installation(site: Path) -> None:
    (site / "cpsettle_service/domain/settle/settlement.py").write_text("# replaced\n")
    proc = run_script(str(site))
    assert proc.returncode == 1 and proc.stdout == ""
    assert "modified: cpsettle_service/domain/settle/settlement.py" in proc.stderr


def test_script_on_a_development_install_says_so() -> None:
    proc = run_script(str(ROOT / "service"))
    assert proc.returncode == 2 and "development install" in proc.stderr
