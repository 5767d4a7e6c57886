"""Which profile a request settles under: the resolver and its cache."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..domain.profile import ProfileRegistry, RuleProfile
from ..domain.settle import ProfileChoice, resolve_profile
from ..proof.digests import profile_digest
from . import mapping

# What one cached profile costs beside its key's bytes: measured with tracemalloc at about
# 170 bytes per table entry (the entry, its dataclass, the lookups built from it), a few KiB
# for the rest of the profile, and its settlement plan at its largest (the plan's caches
# stop at PLAN_CACHE_ENTRIES each: 290 KB measured after 3,000 random tables, with the royalty
# triples' cache still nearly empty, so 384 KiB is allowed for it).
_BYTES_PER_ENTRY = 256
_BYTES_PER_PROFILE = 8 * 1024 + 384 * 1024


def cached_bytes(key: Any, profile: RuleProfile) -> int:
    """An upper estimate of the memory a cache entry holds: its key and its profile."""
    entries = (len(profile.royalties.table) + len(profile.naturals.table)
               + len(profile.fantasyland.progressive))
    key_bytes = sum(len(part) for part in key if isinstance(part, (bytes, str)))
    return key_bytes + _BYTES_PER_PROFILE + _BYTES_PER_ENTRY * entries


class ProfileResolver:
    """Resolves a request's profile choice; the result is cached by the choice's content.

    The cache is bounded by entries and by bytes (``cached_bytes``): a table that sends the
    same overrides every hand hits it, while clients sending a new maximal profile on every
    call (about 100 KB each) cannot make it hold more than ``cache_bytes``.
    """

    def __init__(self, registry: ProfileRegistry, cache_size: int = 512,
                 cache_bytes: int = 32 * 1024 * 1024) -> None:
        self.registry = registry
        self._cache: OrderedDict[Any, tuple[tuple[RuleProfile, str, str], int]] = OrderedDict()
        self._size = cache_size
        self._budget = cache_bytes
        self.bytes = 0

    def is_cold(self, choice: mapping.LazyChoice) -> bool:
        """Whether resolving ``choice`` means reading a profile: it brings an inline profile or
        overrides that are not in the cache (a preset alone is a lookup, cheap either way)."""
        _, profile, overrides = choice.key
        return (profile is not None or overrides is not None) and choice.key not in self._cache

    def resolve(self, choice: ProfileChoice | mapping.LazyChoice) -> tuple[RuleProfile, str, str]:
        """(profile, digest, source); ``InvalidInput`` when the choice cannot be resolved."""
        key = choice.key if isinstance(choice, mapping.LazyChoice) else None
        if key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit[0]
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
            cost = cached_bytes(key, profile)
            if cost <= self._budget:
                self._cache[key] = (result, cost)
                self.bytes += cost
                while len(self._cache) > self._size or self.bytes > self._budget:
                    self.bytes -= self._cache.popitem(last=False)[1][1]
        return result
