"""A small generated day of hand history (and its answer key), shared by the audit tests."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import EXAMPLES


def load_generator() -> ModuleType:
    name = "cpsettle_examples_generate_history"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / "generate_history.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return module


@dataclass
class Day:
    path: Path
    key: dict[str, Any]
    lines: list[str]

    @property
    def mistake_lines(self) -> set[int]:
        return {m["line"] for m in self.key["mistakes"]}

    @property
    def invalid_lines(self) -> set[int]:
        return {m["line"] for m in self.key["invalid"]}


HANDS = 400


@pytest.fixture(scope="session")
def day(tmp_path_factory: pytest.TempPathFactory) -> Day:
    lines, key = load_generator().generate(HANDS, seed=11, mistakes=14, invalid=8)
    path = tmp_path_factory.mktemp("history") / "day.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Day(path, key, lines)


def read_report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data
