"""Profile files: the built-in presets (the JSON files in ``domain/profile/presets/``) and a
house's profile directory (``CPSETTLE_PROFILE_DIR``), read from disk into the domain's
``ProfileRegistry``. The domain reads no file; this module does it for the server, the stream
workers, ``--local`` and the tests.

>>> load_preset("western").surrender.units
3
>>> builtin_registry().names()[:3]
('classic-1-6', 'eastern', 'ofc')
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

from .domain.errors import Violation, ViolationCode
from .domain.profile import ProfileRegistry, RegisteredProfile, RuleProfile, profile_from_dict

__all__ = ["builtin_registry", "load_preset", "preset_names", "with_directory"]

_PRESET_PACKAGE = "cpsettle_service.domain.profile.presets"


@cache
def preset_names() -> tuple[str, ...]:
    """The names of the built-in presets, sorted."""
    files = resources.files(_PRESET_PACKAGE).iterdir()
    return tuple(sorted(f.name[: -len(".json")] for f in files if f.name.endswith(".json")))


@cache
def load_preset(name: str) -> RuleProfile:
    """A built-in preset by name; ``KeyError`` for an unknown name."""
    if name not in preset_names():
        raise KeyError(name)
    text = resources.files(_PRESET_PACKAGE).joinpath(f"{name}.json").read_text("utf-8")
    return profile_from_dict(json.loads(text), f"preset {name}")


def builtin_registry() -> ProfileRegistry:
    """The built-in presets, each with the source ``builtin``."""
    return ProfileRegistry(
        {n: RegisteredProfile(load_preset(n), "builtin") for n in preset_names()}
    )


def with_directory(registry: ProfileRegistry, directory: str) -> ProfileRegistry:
    """``registry`` plus every ``*.json`` profile in ``directory``, in name order.

    Raises ``InvalidInput`` naming the file and every problem; a house profile may not reuse
    the name of another profile.
    """
    documents: list[tuple[str, object | Violation]] = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            documents.append((str(path), json.loads(path.read_text("utf-8"))))
        except (OSError, ValueError) as e:
            documents.append(
                (
                    str(path),
                    Violation(str(path), f"cannot be read as JSON: {e}", ViolationCode.PROFILE),
                )
            )
    return registry.with_house_profiles(documents)
