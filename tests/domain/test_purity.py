"""The domain package is pure: standard library only, no gRPC, protobuf, logging or metrics."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

DOMAIN = Path(__file__).resolve().parents[2] / "service" / "cpsettle_service" / "domain"
FORBIDDEN_STDLIB = {"logging"}  # logging belongs to the service layer, not the rules


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_domain_imports_only_the_standard_library() -> None:
    files = sorted(DOMAIN.rglob("*.py"))
    assert len(files) >= 8
    offenders = []
    for path in files:
        for name in imported_modules(path):
            top = name.split(".")[0]
            if top == "__future__" or name.startswith("cpsettle_service.domain"):
                continue
            if top not in sys.stdlib_module_names or top in FORBIDDEN_STDLIB:
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_the_walk_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import grpc\nfrom prometheus_client import Counter\nimport logging\n")
    names = imported_modules(bad)
    assert {"grpc", "prometheus_client", "logging"} <= names
