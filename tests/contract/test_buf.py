"""The contract's buf checks (buf.yaml; scripts/proto-checks runs the same in CI).

`buf breaking` holds cpsettle.v1 to the committed baseline proto/baseline/cpsettle-v1.binpb; the
check is shown to bite on a copy of the protos with one field's type changed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.support.node import node_tools

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "proto" / "baseline" / "cpsettle-v1.binpb"


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(node_tools() / "buf"), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_contract_has_no_breaking_change_against_the_baseline() -> None:
    done = buf("breaking", "proto", "--against", str(BASELINE))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_changed_field_type_is_a_breaking_change(tmp_path: Path) -> None:
    shutil.copy(ROOT / "buf.yaml", tmp_path)
    for tree in ("proto", "third_party"):
        shutil.copytree(ROOT / tree, tmp_path / tree, ignore=shutil.ignore_patterns("*.py*"))
    settlement = tmp_path / "proto" / "cpsettle" / "v1" / "settlement.proto"
    text, changed = re.subn(r"\bint32 (\w+) = ", r"int64 \1 = ", settlement.read_text(), count=1)
    assert changed == 1
    settlement.write_text(text)
    done = buf("breaking", "proto", "--against", str(BASELINE), cwd=tmp_path)
    assert done.returncode != 0
    assert 'changed type from "int32" to "int64"' in done.stdout
