"""A profile's settlement plan keeps bounded caches: a profile that settles thousands of
distinct hands (an inline profile kept in the service's cache) holds at most
``PLAN_CACHE_ENTRIES`` per cache, and a full cache changes no result."""

from __future__ import annotations

import random
from dataclasses import replace

from cpsettle_service.domain.settle import settle
from cpsettle_service.domain.settle.table import request_from_dict
from cpsettle_service.domain.settle.working import PLAN_CACHE_ENTRIES, plan_for
from cpsettle_service.profile_files import load_preset
from tests.support.random_tables import random_table


def test_plan_caches_stop_at_their_bound_and_change_no_result() -> None:
    rng = random.Random(13)
    tables = [request_from_dict(random_table(rng, 4, preset="ofc"))[0] for _ in range(1_500)]
    profile = replace(load_preset("ofc"), description="a profile of its own: a plan of its own")
    for t in tables:
        settle(t, profile)
    plan = plan_for(profile)
    sizes = [*map(len, plan.row_cache), len(plan.values_cache), len(plan.entry_cache)]
    assert max(sizes) == PLAN_CACHE_ENTRIES, sizes  # full, and no further
    # hands met after the caches filled settle as under a plan that has seen nothing
    for t in tables[-50:]:
        fresh = replace(profile, description="another profile: an empty plan")
        assert settle(t, profile).players == settle(t, fresh).players
