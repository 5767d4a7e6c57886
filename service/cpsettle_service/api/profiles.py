"""Which profile a request settles under: the resolver and its cache."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from moka_py import Moka

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
    entries = (
        len(profile.royalties.table)
        + len(profile.naturals.table)
        + len(profile.fantasyland.progressive)
    )
    key_bytes = sum(len(part) for part in key if isinstance(part, (bytes, str)))
    return key_bytes + _BYTES_PER_PROFILE + _BYTES_PER_ENTRY * entries


def uses_extensions(profile: RuleProfile) -> bool:
    """Whether settling under ``profile`` may run long: it uses RULES.md §16's extensions that
    search (jokers in the deck: §16.3; naturals defined as data: §16.1). The engine work of such
    a call runs in a worker process, off the event loop (api/offload.py)."""
    return profile.deck.jokers > 0 or any(e.definition is not None for e in profile.naturals.table)


@dataclass(frozen=True, slots=True)
class Cached:
    """A resolved choice in the cache: (profile, digest, source), whether it uses the
    extensions, and what it weighs (KiB, at least the cache's budget per entry)."""

    result: tuple[RuleProfile, str, str]
    extended: bool
    weight: int


def _weight(key: Any, value: Cached) -> int:
    return value.weight


class ProfileResolver:
    """Resolves a request's profile choice; the result is cached by the choice's content.

    The cache is bounded by entries and by bytes (``cached_bytes``): a table that sends the
    same overrides every hand hits it, while clients sending a new maximal profile on every
    call (about 100 KB each) cannot make it hold more than ``cache_bytes``. Which entries it
    keeps is moka's TinyLFU: a full cache admits a new profile only if it has been asked for
    more often, lately, than the entry it would evict, so a profile that keeps coming back stays
    however many profiles are sent once (``moka-py``: a frequency sketch of every key asked for,
    cached or not, aged by halving; LRU order among the admitted).

    ``seen_before`` is the server's doorkeeper (api/servicer.py): a profile asked for the first
    time is read and settled in a worker process, off the event loop, and only one that comes
    back is read by the server itself and offered to this cache.
    """

    def __init__(
        self,
        registry: ProfileRegistry,
        cache_size: int = 512,
        cache_bytes: int = 32 * 1024 * 1024,
        doorkeeper_size: int = 16384,
    ) -> None:
        self.registry = registry
        self._size = cache_size
        self._budget = cache_bytes
        # weights in KiB (moka sizes its frequency sketch by the capacity); every entry weighs
        # at least the budget's share of one entry, so that it holds at most cache_size entries
        self._capacity_kib = max(1, cache_bytes // 1024)
        self._least_kib = max(1, self._capacity_kib // max(1, cache_size))
        self._cache: Moka[Any, Cached] = Moka(
            self._capacity_kib, policy="tiny_lfu", weigher=_weight
        )
        self._seen: OrderedDict[bytes, bool] = OrderedDict()  # False: known invalid
        self._seen_size = doorkeeper_size

    @property
    def bytes_held(self) -> int:
        """What the cached entries weigh (KiB-rounded, as the cache counts them), in bytes."""
        self._cache.run_pending_tasks()
        return int(self._cache.weighted_size()) * 1024

    def __len__(self) -> int:
        self._cache.run_pending_tasks()
        return int(self._cache.count())

    def is_cold(self, choice: mapping.LazyChoice) -> bool:
        """Whether resolving ``choice`` means reading a profile: it brings an inline profile or
        overrides that are not in the cache (a preset alone is a lookup, cheap either way)."""
        _, profile, overrides = choice.key
        return (profile is not None or overrides is not None) and (
            self._cache.get(choice.key) is None
        )

    def lookup(self, choice: mapping.LazyChoice) -> Cached | None:
        """The cached resolution of ``choice``, if any (counted as a use of it)."""
        return self._cache.get(choice.key)

    def seen_before(self, choice: mapping.LazyChoice) -> bool:
        """Whether ``choice`` was asked for before (among the last ``doorkeeper_size`` choices
        not cached) and is not known to be invalid; records it either way."""
        digest = self._digest(choice)
        seen = self._seen.get(digest)
        if seen is not None:
            self._seen.move_to_end(digest)
            return seen
        self._seen[digest] = True
        if len(self._seen) > self._seen_size:
            self._seen.popitem(last=False)
        return False

    def mark_invalid(self, choice: mapping.LazyChoice) -> None:
        """``choice`` did not resolve: ``seen_before`` says no to it from now on (a worker reads
        it each time, never the loop), as long as the doorkeeper remembers it."""
        digest = self._digest(choice)
        self._seen[digest] = False
        self._seen.move_to_end(digest)

    @staticmethod
    def _digest(choice: mapping.LazyChoice) -> bytes:
        preset, profile, overrides = choice.key
        h = hashlib.blake2b(preset.encode("utf-8", "surrogatepass"), digest_size=16)
        for part in (profile, overrides):
            h.update(b"-" if part is None else b"+%d:" % len(part) + part)
        return h.digest()

    def resolve(self, choice: ProfileChoice | mapping.LazyChoice) -> tuple[RuleProfile, str, str]:
        """(profile, digest, source); ``InvalidInput`` when the choice cannot be resolved."""
        return self.resolve_cached(choice).result

    def resolve_cached(self, choice: ProfileChoice | mapping.LazyChoice) -> Cached:
        """``resolve``, with whether the profile uses the extensions."""
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
        cost = cached_bytes(key, profile) if key is not None else 0
        cached = Cached(
            (profile, profile_digest(profile), source),
            uses_extensions(profile),
            max(self._least_kib, -(-cost // 1024)),
        )
        if key is not None and cost <= self._budget:
            self._cache.set(key, cached)
            self._cache.run_pending_tasks()  # evict now: the bounds hold at every moment
        return cached
