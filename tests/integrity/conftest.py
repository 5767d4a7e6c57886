"""A real wheel, built once per session with the project's build hook, unpacked per test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = "cpsettle_service/_manifest.json"


BUILD_INPUTS = (
    "pyproject.toml",
    "README.md",
    "hatch_build.py",
    ".gitignore",
    "service",
    "clients",
    "proto",
)


@dataclass(frozen=True)
class Wheel:
    path: Path
    build_seconds: float
    source: Path  # the checkout it was built from

    def manifest_bytes(self) -> bytes:
        with zipfile.ZipFile(self.path) as z:
            return z.read(MANIFEST)

    def manifest(self) -> dict[str, Any]:
        data = json.loads(self.manifest_bytes())
        assert isinstance(data, dict)
        return data


def build_wheel(out: Path, source: Path = ROOT) -> Wheel:
    """``python -m pip wheel . --no-deps --no-build-isolation -w OUT`` run in ``source``."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            ".",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=240,
    )
    seconds = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [wheel] = out.glob("cpsettle-*.whl")
    return Wheel(wheel, seconds, source)


def snapshot_checkout(target: Path) -> Path:
    """A frozen copy of the build inputs: the tests compare the wheel with the very sources it was
    built from, even while the working tree is being edited."""
    for name in BUILD_INPUTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(
                src, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        elif src.exists():
            shutil.copy2(src, target / name)
    return target


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Wheel:
    """A wheel built (once per session) from a snapshot of this checkout."""
    source = snapshot_checkout(tmp_path_factory.mktemp("checkout"))
    return build_wheel(tmp_path_factory.mktemp("wheel"), source)


@pytest.fixture()
def site(wheel: Wheel, tmp_path: Path) -> Path:
    """The wheel unpacked into a fresh directory laid out like site-packages."""
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel.path) as z:
        z.extractall(target)
    return target


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CPSETTLE_", "PYTHON"))}
    env.update(extra)
    return env


def run_python(
    site: Path, code: str, *, bytecode: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python -c CODE`` importing the packages from ``site`` (PYTHONPATH, cwd)."""
    env = clean_env(PYTHONPATH=str(site))
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=site, env=env, capture_output=True, text=True, timeout=60
    )


REPORT_CODE = """
import dataclasses, json
import cpsettle_service
from cpsettle_service.proof import integrity as i
r = i.check_installation()
print(json.dumps({**dataclasses.asdict(r), "intact": r.intact, "file": cpsettle_service.__file__,
                  "engine_digest": i.engine_digest(), "engine_version": i.ENGINE_VERSION}))
"""


def report_in(site: Path, *, bytecode: bool = False) -> dict[str, Any]:
    proc = run_python(site, REPORT_CODE, bytecode=bytecode)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(report, dict)
    assert Path(report["file"]).is_relative_to(site), "imported the wrong cpsettle_service"
    return report
