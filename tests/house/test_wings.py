"""The wings keep their order: each uses only the wings below it (docs/DESIGN.md, "The house").

Every import counts (lazy ones too), as in ``tests/test_import_cycles.py``, whose walk this
reuses. A wing is a package or a top-level module; the rows below say which wings each one may
import. A new module lands in a wing by its path, so it is held to its wing's row at once.
"""

from __future__ import annotations

import pytest

from tests.test_import_cycles import PACKAGES, imports, modules

S = "cpsettle_service"
# wing -> the wings it may import (besides itself); every wing of the service is listed
ALLOWED: dict[str, set[str]] = {
    f"{S}.domain.errors": set(),
    f"{S}.domain.cards": {f"{S}.domain.errors"},
    f"{S}.domain.reading": {f"{S}.domain.errors", f"{S}.domain.cards"},
    f"{S}.domain.naturals": {f"{S}.domain.errors", f"{S}.domain.cards", f"{S}.domain.reading"},
    f"{S}.domain.profile": {
        f"{S}.domain.errors",
        f"{S}.domain.cards",
        f"{S}.domain.reading",
        f"{S}.domain.naturals",
    },
    f"{S}.domain.settle": {
        f"{S}.domain.errors",
        f"{S}.domain.cards",
        f"{S}.domain.reading",
        f"{S}.domain.naturals",
        f"{S}.domain.profile",
    },
    f"{S}.domain": {
        f"{S}.domain.errors",
        f"{S}.domain.cards",
        f"{S}.domain.reading",
        f"{S}.domain.naturals",
        f"{S}.domain.profile",
        f"{S}.domain.settle",
    },
}
DOMAIN = set(ALLOWED)
ALLOWED.update(
    {
        f"{S}.errors": DOMAIN,
        f"{S}.config": {f"{S}.errors"} | DOMAIN,
        f"{S}.wireformat": set(),
        f"{S}.profile_files": DOMAIN,
        f"{S}.proof": DOMAIN | {f"{S}.errors", f"{S}.config", f"{S}.wireformat"},
        f"{S}.observability": DOMAIN | {f"{S}.errors", f"{S}.config", f"{S}.proof"},
        f"{S}.security": {f"{S}.errors", f"{S}.config", f"{S}.observability"},
    }
)
BELOW_API = set(ALLOWED)
ALLOWED.update(
    {
        f"{S}.api": BELOW_API,
        # HTTP/JSON beside gRPC: it drives the gRPC side's handlers; nothing of the gRPC side (nor
        # the CLI's --local) imports it, so the service runs without it
        f"{S}.api.connect": BELOW_API | {f"{S}.api"},
        f"{S}.local": BELOW_API | {f"{S}.api"},
        f"{S}.server": BELOW_API | {f"{S}.api", f"{S}.api.connect"},
        # the witness: a program of its own beside the server, on the proof wing only
        f"{S}.witness": {f"{S}.errors", f"{S}.proof"} | DOMAIN | {f"{S}.config", f"{S}.wireformat"},
        S: set(),
    }
)


def wing_of(module: str) -> str:
    """The longest wing name that ``module`` is, or lies in."""
    best = ""
    for wing in ALLOWED:
        if (module == wing or module.startswith(wing + ".")) and len(wing) > len(best):
            best = wing
    assert best, f"{module} lies in no wing: add it to a row of ALLOWED"
    return best


FOUND = modules({S: PACKAGES[S]})


def test_every_module_lies_in_a_wing() -> None:
    assert [m for m in FOUND if not wing_of(m)] == []


@pytest.mark.parametrize("module", sorted(FOUND))
def test_a_module_imports_only_wings_below_its_own(module: str) -> None:
    own = wing_of(module)
    wrong = sorted(
        target
        for target in imports(module, FOUND[module], set(FOUND))
        if wing_of(target) != own and wing_of(target) not in ALLOWED[own]
    )
    assert wrong == [], f"{module} ({own}) imports {wrong}"


def test_the_rule_would_catch_an_upward_import() -> None:
    """The check is not vacuous: the domain's settlement may not import the api."""
    assert f"{S}.api" not in ALLOWED[wing_of(f"{S}.domain.settle.settlement")]
    assert wing_of(f"{S}.domain.settle.settlement") == f"{S}.domain.settle"
