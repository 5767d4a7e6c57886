"""docs/DESIGN.md stays true to the house: every module of the service and the client has its
row in one of the tables of "The house", and every row names a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = (ROOT / "docs" / "DESIGN.md").read_text("utf-8")
TOPS = {
    "service/cpsettle_service": ROOT / "service" / "cpsettle_service",
    "clients/python/cpsettle_client": ROOT / "clients" / "python" / "cpsettle_client",
}
# A table row's first cell: `path/to/module.py` (relative to a table's package root, which the
# table's heading names as `service/cpsettle_service/...` or `clients/python/cpsettle_client`).
ROW = re.compile(r"^\| `([\w/]+\.py)` \|", re.M)
HEADING = re.compile(r"^#+ .*`((?:service|clients)/[\w/]+)`", re.M)


def rows() -> set[str]:
    """Every module path the tables name, made whole with the heading above each table."""
    found: set[str] = set()
    headings = [(m.start(), m.group(1)) for m in HEADING.finditer(DESIGN)]
    for m in ROW.finditer(DESIGN):
        base = [h for at, h in headings if at < m.start()]
        assert base, f"row {m.group(1)} stands under no heading naming its folder"
        found.add(f"{base[-1]}/{m.group(1)}")
    return found


def modules() -> set[str]:
    out = set()
    for prefix, folder in TOPS.items():
        for path in folder.rglob("*.py"):
            if "presets" in path.parts:
                continue
            out.add(f"{prefix}/{path.relative_to(folder).as_posix()}")
    return out


def test_every_module_has_its_row() -> None:
    assert sorted(modules() - rows()) == []


def test_every_row_names_a_module_that_exists() -> None:
    assert sorted(rows() - modules()) == []


def test_the_tables_are_read() -> None:
    assert "service/cpsettle_service/domain/settle/jokers.py" in rows()
