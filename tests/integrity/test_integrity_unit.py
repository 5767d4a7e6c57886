"""attest(), the development case and the check's handling of odd manifests (no wheel needed)."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
from pathlib import Path

import pytest

from cpsettle_service.proof import integrity
from cpsettle_service.proof.integrity import IntegrityReport, attest, check_installation

DIGEST = "ab" * 32


# ---- attest ----------------------------------------------------------------------------------


def test_attest_is_hmac_sha256_keyed_by_the_nonce() -> None:
    nonce = bytes(range(32))
    expected = hmac.new(nonce, DIGEST.encode("ascii"), hashlib.sha256).hexdigest()
    assert attest(nonce, DIGEST) == expected
    # Fixed vector, computed outside Python:
    #   printf %s "$DIGEST" | openssl dgst -sha256 -mac HMAC -macopt hexkey:000102...1e1f
    assert expected == "583630234f7e60ecfa2a6ae2e98ee37876e3ff6344457723cb4b42fcf77f7fc0"


def test_attest_depends_on_nonce_and_digest() -> None:
    a = attest(b"n" * 16, DIGEST)
    assert a != attest(b"m" * 16, DIGEST)
    assert a != attest(b"n" * 16, "cd" * 32)
    assert len(a) == 64 and int(a, 16) >= 0


@pytest.mark.parametrize("size", [16, 17, 32, 63, 64])
def test_attest_accepts_nonces_of_16_to_64_bytes(size: int) -> None:
    nonce = os.urandom(size)
    assert attest(nonce, DIGEST) == hmac.new(nonce, DIGEST.encode(), hashlib.sha256).hexdigest()


@pytest.mark.parametrize("size", [0, 1, 15, 65, 1024])
def test_attest_rejects_short_and_long_nonces(size: int) -> None:
    with pytest.raises(ValueError):
        attest(b"x" * size, DIGEST)


def test_attest_rejects_a_text_nonce() -> None:
    with pytest.raises(TypeError):
        attest("x" * 32, DIGEST)  # type: ignore[arg-type]


# ---- API shape and the source checkout -------------------------------------------------------


def test_report_shape() -> None:
    report = IntegrityReport("d", 3, ("modified: x",), False)
    assert [f.name for f in dataclasses.fields(report)] == [
        "manifest_digest",
        "files_checked",
        "problems",
        "development",
    ]
    assert report.intact is False
    assert IntegrityReport("d", 3, (), False).intact is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.files_checked = 4  # type: ignore[misc]


def test_source_checkout_is_a_development_install() -> None:
    report = check_installation()
    assert report == IntegrityReport("", 0, (), True)
    assert report.intact


def test_engine_version_and_digest() -> None:
    assert integrity.ENGINE_VERSION.startswith("cpsettle-engine/")
    assert len(integrity.ENGINE_VERSION) > len("cpsettle-engine/")
    digest = integrity.engine_digest()
    assert len(digest) == 64 and digest == integrity.engine_digest()


# ---- the check on synthetic trees ------------------------------------------------------------


def make_site(tmp_path: Path, files: dict[str, bytes], **manifest_fields: object) -> Path:
    site = tmp_path / "site"
    entries = []
    for path, data in sorted(files.items()):
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
        entries.append({"path": path, "sha256": hashlib.sha256(data).hexdigest()})
    pairs = [(e["path"], e["sha256"]) for e in entries]
    manifest = {
        "format": 1,
        "name": "cpsettle",
        "version": "0.1.0",
        "files": entries,
        "engine_digest": integrity._engine_digest_of(pairs),
    }
    manifest.update(manifest_fields)
    (site / "cpsettle_service").mkdir(parents=True, exist_ok=True)
    (site / "cpsettle_service/_manifest.json").write_bytes(integrity.canonical_json(manifest))
    return site


FILES = {
    "cpsettle_service/__init__.py": b"",
    "cpsettle_service/domain/__init__.py": b"",
    "cpsettle_service/domain/rules.py": b"RULES = 1\n",
    "cpsettle_service/domain/profile/presets/a.json": b"{}",
    "cpsettle_client/__init__.py": b"",
}


def check(site: Path) -> IntegrityReport:
    return integrity._check_tree(site, site / "cpsettle_service/_manifest.json")


def test_synthetic_tree_is_intact(tmp_path: Path) -> None:
    site = make_site(tmp_path, FILES)
    report = check(site)
    assert report.intact and report.files_checked == len(FILES) and not report.development
    raw = (site / "cpsettle_service/_manifest.json").read_bytes()
    assert report.manifest_digest == hashlib.sha256(raw).hexdigest()


def test_digest_is_of_the_canonical_json_not_the_file_bytes(tmp_path: Path) -> None:
    site = make_site(tmp_path, FILES)
    path = site / "cpsettle_service/_manifest.json"
    before = check(site).manifest_digest
    path.write_text(json.dumps(json.loads(path.read_bytes()), indent=4))
    assert check(site).manifest_digest == before


def test_no_manifest_is_development(tmp_path: Path) -> None:
    site = make_site(tmp_path, FILES)
    (site / "cpsettle_service/_manifest.json").unlink()
    assert check(site) == IntegrityReport("", 0, (), True)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "manifest: not valid JSON"),
        (b"[]", "manifest: unsupported format None"),
        (b'{"format": 2, "files": []}', "manifest: unsupported format 2"),
        (b'{"format": 1, "files": []}', "manifest: no file list"),
    ],
)
def test_a_broken_manifest_is_a_problem(tmp_path: Path, content: bytes, problem: str) -> None:
    site = make_site(tmp_path, FILES)
    (site / "cpsettle_service/_manifest.json").write_bytes(content)
    report = check(site)
    assert problem in report.problems and not report.development


@pytest.mark.parametrize(
    "path", ["../outside.py", "/etc/passwd", "cpsettle_service/../../x.py", "other/x.py", "a"]
)
def test_manifest_paths_must_stay_inside_the_packages(tmp_path: Path, path: str) -> None:
    site = make_site(tmp_path, FILES)
    manifest_path = site / "cpsettle_service/_manifest.json"
    manifest = json.loads(manifest_path.read_bytes())
    manifest["files"].append({"path": path, "sha256": "0" * 64})
    manifest_path.write_bytes(integrity.canonical_json(manifest))
    assert any(p.startswith("manifest: path outside the packages") for p in check(site).problems)


def test_a_symlinked_file_is_not_accepted(tmp_path: Path) -> None:
    site = make_site(tmp_path, FILES)
    target = tmp_path / "elsewhere.py"
    target.write_bytes(FILES["cpsettle_service/domain/rules.py"])
    (site / "cpsettle_service/domain/rules.py").unlink()
    (site / "cpsettle_service/domain/rules.py").symlink_to(target)
    assert "not a regular file: cpsettle_service/domain/rules.py" in check(site).problems


def test_engine_loaded_at_start_is_compared_with_the_manifest(tmp_path: Path) -> None:
    site = make_site(tmp_path, FILES)
    manifest = site / "cpsettle_service/_manifest.json"
    expected = json.loads(manifest.read_bytes())["engine_digest"]
    ok = integrity._check_tree(site, manifest, expected)
    assert ok.intact
    bad = integrity._check_tree(site, manifest, "0" * 64)
    assert bad.problems == ("engine: the code loaded at start differs from the manifest",)


def test_engine_files_are_domain_code_and_presets_only() -> None:
    yes = [
        "cpsettle_service/domain/settle/settlement.py",
        "cpsettle_service/domain/profile/presets/__init__.py",
        "cpsettle_service/domain/profile/presets/western.json",
    ]
    no = [
        "cpsettle_service/server.py",
        "cpsettle_service/domain/notes.txt",
        "cpsettle_service/domain/other.json",
        "cpsettle_service/domain/profile/presets/sub/x.json",
        "cpsettle_service/domain/__pycache__/settlement.cpython-311.py",
    ]
    assert all(integrity._is_engine_file(p) for p in yes)
    assert not any(integrity._is_engine_file(p) for p in no)
