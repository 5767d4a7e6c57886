"""The profiles a service offers by name: the built-in presets and a house's own profiles.

The registry holds profiles; it reads no file. Whoever builds it reads the files and hands
their JSON over (``cpsettle_service.profile_files`` does, for the presets shipped in
``presets/`` and a house's profile directory), so the domain stays free of I/O.

>>> from cpsettle_service.domain.profile import ProfileRegistry, profile_from_dict
>>> house = ProfileRegistry({}).with_house_profiles([("house.json", {"name": "house"})])
>>> house.names(), house.entry("house").source
(('house',), 'house.json')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import InvalidInput, Violation, ViolationCode
from .model import RuleProfile
from .parse import profile_from_dict

__all__ = ["ProfileRegistry", "RegisteredProfile"]


@dataclass(frozen=True, slots=True)
class RegisteredProfile:
    profile: RuleProfile
    source: str  # "builtin" or the file it was loaded from


class ProfileRegistry:
    """The profiles a service offers by name: the built-in presets plus house profiles."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Mapping[str, RegisteredProfile]) -> None:
        self._entries = dict(entries)

    def with_house_profiles(
        self, documents: Iterable[tuple[str, object | Violation]]
    ) -> ProfileRegistry:
        """This registry plus a profile from each document: ``(source, its JSON data)``, or
        ``(source, Violation)`` for a file that could not be read as JSON.

        Raises ``InvalidInput`` naming every problem of every document; a house profile may not
        reuse the name of another profile.
        """
        entries = dict(self._entries)
        problems: list[Violation] = []
        for source, data in documents:
            if isinstance(data, Violation):
                problems.append(data)
                continue
            try:
                profile = profile_from_dict(data, source)
            except InvalidInput as e:
                problems.extend(e.violations)
                continue
            if profile.name in entries:
                problems.append(
                    Violation(
                        f"{source}.name",
                        f"profile {profile.name!r} is already defined "
                        f"({entries[profile.name].source})",
                        ViolationCode.PROFILE,
                    )
                )
                continue
            entries[profile.name] = RegisteredProfile(profile, source)
        if problems:
            raise InvalidInput(problems)
        return ProfileRegistry(entries)

    def get(self, name: str) -> RuleProfile | None:
        entry = self._entries.get(name)
        return entry.profile if entry else None

    def entry(self, name: str) -> RegisteredProfile | None:
        return self._entries.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._entries))

    def entries(self) -> tuple[RegisteredProfile, ...]:
        return tuple(self._entries[n] for n in self.names())
