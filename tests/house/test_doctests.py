"""Every example in a docstring runs: each module of the service and the client that shows one
(``>>>``) passes ``doctest``, so an example can never drift from the code it documents."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "cpsettle_service": ROOT / "service" / "cpsettle_service",
    "cpsettle_client": ROOT / "clients" / "python" / "cpsettle_client",
}


def _modules_with_examples() -> list[str]:
    out = []
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            if ">>> " not in path.read_text("utf-8"):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append(".".join((package, *parts)))
    return out


MODULES = _modules_with_examples()


def test_the_examples_are_found() -> None:
    """The walk finds the modules known to hold examples (a broken walk would pass vacuously)."""
    assert {
        "cpsettle_service.domain.cards.hands",
        "cpsettle_service.proof.times",
        "cpsettle_client.strict_json",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} mentions '>>> ' but doctest found no example"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} fail"
