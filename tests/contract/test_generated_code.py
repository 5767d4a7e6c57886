"""The committed protobuf code is exactly what proto/generate.sh produces from the .proto files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = sorted(
    [
        *(ROOT / "proto" / "cpsettle" / "v1").glob("*_pb2*.py*"),
        *(ROOT / "proto" / "cpsettle" / "v1").glob("*_connect.py"),
    ]
)


def test_generated_code_is_committed() -> None:
    names = {p.name for p in GENERATED}
    for stem in ("profile", "settlement"):
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi"):
            assert stem + suffix in names
    assert "settlement_connect.py" in names  # the Connect service (profile.proto has none)


def test_regenerating_changes_nothing(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run(
        ["bash", str(ROOT / "proto" / "generate.sh"), str(tmp_path)],
        check=True,
        env=env,
        capture_output=True,
    )
    fresh = sorted(
        [
            *(tmp_path / "cpsettle" / "v1").glob("*_pb2*.py*"),
            *(tmp_path / "cpsettle" / "v1").glob("*_connect.py"),
        ]
    )
    assert [p.name for p in fresh] == [p.name for p in GENERATED]
    for new, old in zip(fresh, GENERATED, strict=True):
        assert new.read_bytes() == old.read_bytes(), f"{old.name} is stale: run proto/generate.sh"
