"""The settlement's rooms keep their promises: results built by keyword with every field named,
a violation always carries its code, and the plan belongs to the profile."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from cpsettle_service.domain.errors import Collector, Violation, ViolationCode
from cpsettle_service.domain.settle import evaluation, payouts, results
from cpsettle_service.domain.settle.results import PlayerResult, RowResult
from cpsettle_service.domain.settle.working import plan_for
from cpsettle_service.profile_files import load_preset

DOMAIN = Path(results.__file__).resolve().parents[1]
SOURCES = sorted(DOMAIN.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(DOMAIN).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("cpsettle_service.domain", *parts))


def _record_types() -> dict[str, type]:
    """Every NamedTuple result type of the domain, by name."""
    out: dict[str, type] = {}
    for module in (results, evaluation, payouts):
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, tuple)
                and hasattr(obj, "_fields")
                and obj.__module__ == module.__name__
            ):
                out[name] = obj
    return out


RECORDS = _record_types()


def _type_name(t: object) -> str:
    assert isinstance(t, type)
    return t.__name__


def _calls(name: str, target: object = None) -> list[tuple[Path, ast.Call]]:
    """Calls of ``name`` in the modules where it means the result type (profile.py has a
    Fantasyland of its own: the rules, not the result)."""
    found = []
    for path in SOURCES:
        module = importlib.import_module(_module_name(path))
        if getattr(module, name, None) is not (target or RECORDS[name]):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = (
                    func.id
                    if isinstance(func, ast.Name)
                    else (func.attr if isinstance(func, ast.Attribute) else "")
                )
                if called == name:
                    found.append((path, node))
    return found


def test_the_result_types_are_found() -> None:
    assert {
        "PlayerResult",
        "PairResult",
        "LineItem",
        "Settlement",
        "FantasylandResult",
        "EvaluatedRow",
        "RowResult",
        "HandEvaluation",
        "PayoutCheck",
    } <= set(RECORDS)
    assert set(results.FACTORIES) <= set(RECORDS.values())


def _misbuilt(
    name: str, fields: set[str], sites: list[tuple[Path, ast.Call]], positional: int = 0
) -> list[str]:
    """Build sites that do not name every field by keyword (the first ``positional`` fields,
    a factory's positional-only ones, are passed by position)."""
    problems = []
    for path, call in sites:
        where = f"{path.name}:{call.lineno}"
        named = {k.arg for k in call.keywords}
        if len(call.args) != positional or any(isinstance(a, ast.Starred) for a in call.args):
            problems.append(f"{where}: {name} built positionally")
        elif None in named:
            problems.append(f"{where}: {name} built from **kwargs")
        elif named != fields:
            problems.append(f"{where}: {name} misses {sorted(fields - named)}")
    return problems


def _positional_only(factory: Callable[..., object]) -> list[str]:
    params = inspect.signature(factory).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY]


@pytest.mark.parametrize("record", sorted(results.FACTORIES, key=_type_name), ids=_type_name)
def test_each_factory_takes_exactly_its_types_fields(record: type) -> None:
    """A field added to a result fails here until its factory takes it; the factory has no
    defaults, so every build site must then supply it."""
    params = inspect.signature(results.FACTORIES[record]).parameters.values()
    # a NamedTuple class: ``type`` does not know its _fields
    assert [p.name for p in params] == list(record._fields)  # type: ignore[attr-defined]
    assert all(p.default is inspect.Parameter.empty for p in params)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_result_is_built_through_its_factory(name: str) -> None:
    """The domain never calls a factory-built type directly; the other types are built by
    keyword naming every field (defaulted ones too)."""
    record = RECORDS[name]
    sites = _calls(name)
    if record in results.FACTORIES:
        assert sites == [], f"{name} built outside {results.FACTORIES[record].__name__}"
        factory = results.FACTORIES[record]
        assert _calls(factory.__name__, factory), f"{factory.__name__} is never called"
        params = inspect.signature(factory).parameters.values()
        leading = _positional_only(factory)
        assert all(
            p.kind is inspect.Parameter.KEYWORD_ONLY for p in params if p.name not in leading
        )
        assert len(leading) <= 2, "only a record's identifying fields go by position"
        # a NamedTuple class: ``type`` does not know its _fields
        keyword_fields = set(record._fields) - set(leading)  # type: ignore[attr-defined]
        assert (
            _misbuilt(name, keyword_fields, _calls(factory.__name__, factory), len(leading)) == []
        )
    else:
        assert sites, f"{name} is never built in the domain"
        # a NamedTuple class: ``type`` does not know its _fields
        assert _misbuilt(name, set(record._fields), sites) == []  # type: ignore[attr-defined]


def test_a_new_field_would_be_caught() -> None:
    """The checks really fail for a field the build sites do not name, defaulted or not."""
    sites = _calls("RowResult")
    widened = {*RowResult._fields, "new_field"}
    assert len(_misbuilt("RowResult", widened, sites)) == len(sites)
    params = [p.name for p in inspect.signature(results.player_result).parameters.values()]
    assert params != [*PlayerResult._fields, "new_field"]


@pytest.mark.parametrize("record", sorted(results.FACTORIES, key=_type_name), ids=_type_name)
def test_each_build_site_stays_a_plain_call(record: type) -> None:
    """CPython 3.11 compiles a call with more than 30 stack slots (a positional argument takes
    one, a keyword two) into a call through a dict, 8x dearer for a 16-field record. A record
    that grows past the line takes one more identifying field positionally (see results.py)."""
    factory = results.FACTORIES[record]
    for path, call in _calls(factory.__name__, factory):
        slots = len(call.args) + 2 * len(call.keywords)
        assert slots <= 30, f"{path.name}:{call.lineno}: {slots} stack slots"


def test_only_the_factories_build_positionally() -> None:
    for path in SOURCES:
        text = path.read_text("utf-8")
        if path.name != "results.py":
            assert "tuple.__new__" not in text and "._make(" not in text, path.name
    factories = "\n".join(inspect.getsource(f) for f in results.FACTORIES.values())
    assert inspect.getsource(results).count("_new(") == factories.count("_new(")


# --------------------------------------------------------------------------- violations

LABELS = {
    "duplicate_card",
    "malformed_card",
    "row_size",
    "player_count",
    "duplicate_seat_or_id",
    "surrender",
    "natural",
    "unknown_preset",
    "stack",
    "button_seat",
    "malformed_request",
    "profile",
    "currency",
    "other",
}


def test_every_code_is_a_metric_label() -> None:
    assert {c.value for c in ViolationCode} == LABELS


def test_a_violation_without_a_code_cannot_be_made() -> None:
    with pytest.raises(TypeError):
        Violation("players", "wrong")  # type: ignore[call-arg]  # no code: refused
    with pytest.raises(TypeError):
        Collector().add("players", "wrong")  # type: ignore[call-arg]  # no code: refused
    assert Violation("players", "wrong", ViolationCode.PLAYER_COUNT).code == "player_count"


def test_every_domain_site_names_its_code() -> None:
    """Statically, so that a site no test reaches cannot hide a missing code either."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "Violation":
                assert len(node.args) + len(node.keywords) == 3, f"{path.name}:{node.lineno}"
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "add"
                and "errors" in ast.unparse(func.value)
            ):
                assert len(node.args) + len(node.keywords) == 3, f"{path.name}:{node.lineno}"


# --------------------------------------------------------------------------- plan


def test_the_plan_is_held_by_its_profile() -> None:
    western = load_preset("western")
    assert plan_for(western) is plan_for(western)
    other = load_preset("one-six")
    assert plan_for(other) is not plan_for(western)
    assert "_settlement_plan" not in repr(western)
