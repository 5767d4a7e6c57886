"""Each package says what it offers: a docstring and an ``__all__`` that is exact.

Exact means: every name in ``__all__`` is there (a submodule counts); every public name a
package's ``__init__`` binds (other than its submodules) is in ``__all__``; and in a module that
declares ``__all__``, every public class and function it defines is listed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("cpsettle_service", "cpsettle_client")


def _walk() -> list[str]:
    names: list[str] = []
    for top in TOPS:
        package = importlib.import_module(top)
        names.append(top)
        for info in pkgutil.walk_packages(package.__path__, top + "."):
            if ".presets" in info.name:  # data, not code
                continue
            names.append(info.name)
    return names


ALL_MODULES = _walk()
PACKAGES = [n for n in ALL_MODULES if hasattr(importlib.import_module(n), "__path__")]


def test_the_walk_finds_the_wings() -> None:
    assert {
        "cpsettle_service.domain.cards",
        "cpsettle_service.domain.settle",
        "cpsettle_service.proof",
        "cpsettle_service.api",
        "cpsettle_client.views",
    } <= set(PACKAGES)


def _has(module: ModuleType, name: str) -> bool:
    if hasattr(module, name):
        return True
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_says_what_it_offers(name: str) -> None:
    package = importlib.import_module(name)
    assert (package.__doc__ or "").strip(), f"{name} has no docstring"
    offered = getattr(package, "__all__", None)
    assert offered is not None, f"{name} has no __all__"
    assert len(offered) == len(set(offered)), f"{name}.__all__ lists a name twice"
    assert [n for n in offered if not _has(package, n)] == [], f"{name}.__all__ names a ghost"
    bound = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_")
        and not (inspect.ismodule(v) and v.__name__.startswith(name + "."))
        and n != "annotations"
    }
    assert sorted(bound - set(offered)) == [], f"{name} binds public names not in __all__"


@pytest.mark.parametrize("name", [n for n in ALL_MODULES if n not in PACKAGES])
def test_a_declared_all_lists_every_public_definition(name: str) -> None:
    module = importlib.import_module(name)
    offered = getattr(module, "__all__", None)
    if offered is None:
        pytest.skip("declares no __all__")
    assert [n for n in offered if not hasattr(module, n)] == [], f"{name}.__all__ names a ghost"
    defined = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(v) or inspect.isfunction(v))
        and getattr(v, "__module__", None) == name
    }
    assert sorted(defined - set(offered)) == [], f"{name} defines public names not in __all__"
