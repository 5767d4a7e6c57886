"""Which profile a request settles under: the resolver, its cache, and profile digests."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from ..domain.profile import ProfileRegistry, RuleProfile, profile_to_dict
from ..domain.table import ProfileChoice, resolve_profile
from . import mapping


def profile_digest(profile: RuleProfile) -> str:
    """sha256 of the profile's canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(profile_to_dict(profile), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ProfileResolver:
    """Resolves a request's profile choice; the result is cached by the choice's content."""

    def __init__(self, registry: ProfileRegistry, cache_size: int = 512) -> None:
        self.registry = registry
        self._cache: OrderedDict[Any, tuple[RuleProfile, str, str]] = OrderedDict()
        self._size = cache_size

    def resolve(self, choice: ProfileChoice | mapping.LazyChoice) -> tuple[RuleProfile, str, str]:
        """(profile, digest, source); ``InvalidInput`` when the choice cannot be resolved."""
        key = choice.key if isinstance(choice, mapping.LazyChoice) else None
        if key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        if isinstance(choice, mapping.LazyChoice):
            choice = choice.build()
        profile = resolve_profile(choice, self.registry)
        if choice.profile is not None:
            source = "inline"
        else:
            entry = self.registry.entry(choice.preset)
            source = entry.source if entry else "inline"
        if choice.overrides:
            source += "+overrides"
        result = (profile, profile_digest(profile), source)
        if key is not None:
            self._cache[key] = result
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return result
