"""``apply_overrides``, the domain's entry for a partial profile laid on a preset: objects
merge, lists and values replace, and overrides that are not an object are refused with a
violation (the service's reader refuses them before; an embedder calls this directly)."""

from __future__ import annotations

import pytest

from cpsettle_service.domain.errors import InvalidInput, ViolationCode
from cpsettle_service.domain.profile.parse import apply_overrides, profile_to_dict
from cpsettle_service.profile_files import load_preset


@pytest.mark.parametrize("overrides", [[{"caps": {"wins": False}}], "caps.wins=false", None])
def test_overrides_that_are_not_an_object_are_refused(overrides: object) -> None:
    with pytest.raises(InvalidInput) as e:
        apply_overrides(load_preset("western"), overrides, "request.overrides")  # type: ignore[arg-type]
    assert [(v.field, v.reason, v.code) for v in e.value.violations] == [
        ("request.overrides", "must be an object", ViolationCode.PROFILE)
    ]


def test_objects_merge_and_lists_replace() -> None:
    western = load_preset("western")
    merged = apply_overrides(
        western,
        {
            "caps": {"wins": False},
            "naturals": {"table": [{"natural": "DRAGON", "rank": 1, "units": 20}]},
        },
    )
    assert (merged.caps.losses, merged.caps.wins) == (True, False)  # losses kept from western
    assert [(e.natural, e.units) for e in merged.naturals.table] == [("DRAGON", 20)]
    assert profile_to_dict(western)["caps"]["wins"] is True  # the preset itself is unchanged
