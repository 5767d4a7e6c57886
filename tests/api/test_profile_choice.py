"""How a request names its rules, and what the service answers when it names them wrongly: a
preset and an inline profile at once, an unknown preset (with the names it knows), none at all
(overrides alone are not a profile), and an inline profile's problems at their paths. Through a
real server and the project's client, word for word with the violation codes.

Written to kill the mutants the mutation run found alive in domain/table.py's
``resolve_profile`` (docs/MUTATION.md).
"""

from __future__ import annotations

from typing import Any

from cpsettle_client.client import SettlementClient
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset
from tests.support.refusals import refused as refusal_of
from tests.support.tables import table

PRESETS = (
    "classic-1-6, eastern, ofc, ofc-descubierto, one-six, one-two, shisanshui, two-four, western"
)


def refused(client: SettlementClient, request: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:
    return refusal_of(client.settle, request)


def without_preset(**extra: Any) -> dict[str, Any]:
    request = table("western", **extra)
    del request["preset"]
    return request


def test_a_preset_and_an_inline_profile_at_once(client: SettlementClient) -> None:
    inline = profile_to_dict(load_preset("eastern"))
    assert refused(client, table("western", profile=inline)) == (
        [("profile", "send either preset or profile, not both")],
        "profile",
    )
    # with overrides as well: still the one problem, never a crash on the missing profile
    assert refused(
        client, table("western", profile=inline, profileOverrides={"money": {"unitValue": 5}})
    ) == ([("profile", "send either preset or profile, not both")], "profile")


def test_an_unknown_preset_names_the_ones_this_service_knows(client: SettlementClient) -> None:
    assert refused(client, table("westren")) == (
        [("preset", f"unknown preset 'westren'; known: {PRESETS}")],
        "unknown_preset",
    )


def test_no_preset_and_no_profile(client: SettlementClient) -> None:
    expected = ([("preset", "is required (or send an inline profile)")], "other")
    assert refused(client, without_preset()) == expected
    # overrides change a profile: alone they are none
    assert refused(client, without_preset(profileOverrides={"money": {"unitValue": 5}})) == expected


def test_an_inline_profile_names_its_problems_under_profile(client: SettlementClient) -> None:
    inline = profile_to_dict(load_preset("eastern"))
    inline["money"] = {"unitValue": 0, "currency": "EURO"}
    found, codes = refused(client, without_preset(profile=inline))
    assert codes == "profile"
    assert sorted(field for field, _ in found) == [
        "profile.money.currency",
        "profile.money.unitValue",
    ]


def test_the_overrides_of_an_inline_profile_are_named_at_their_path(
    client: SettlementClient,
) -> None:
    found, codes = refused(
        client,
        without_preset(
            profile=profile_to_dict(load_preset("eastern")),
            profileOverrides={"money": {"currency": "EURO"}},
        ),
    )
    assert codes == "profile"
    assert [field for field, _ in found] == ["profileOverrides.money.currency"]
