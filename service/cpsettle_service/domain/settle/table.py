"""What the table software sends: the players' revealed hands, seats, stacks, the button.

``Table`` holds the input exactly as sent (card strings unparsed); ``settle`` validates it
against the profile. ``request_from_dict`` reads the JSON form of ``SettleRequest`` (golden
files, the CLI's local mode).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Collector, InvalidInput, ViolationCode
from ..profile.model import RuleProfile
from ..profile.parse import apply_overrides, profile_from_dict
from ..profile.registry import ProfileRegistry
from ..reading.reader import Reader, describe


@dataclass(frozen=True, slots=True)
class PlayerInput:
    """One player's revealed hand: exactly one of rows, 13 loose cards, or a surrender."""

    player_id: str
    seat: int
    front: tuple[str, ...] | None = None
    middle: tuple[str, ...] | None = None
    back: tuple[str, ...] | None = None
    cards: tuple[str, ...] | None = None
    declared_natural: str = ""
    surrender: bool = False
    stack: int | None = None
    in_fantasyland: bool = False

    @property
    def has_arrangement(self) -> bool:
        return self.front is not None or self.middle is not None or self.back is not None


@dataclass(frozen=True, slots=True)
class AuditContext:
    """Ids the caller sends so that the settlement can be found again; echoed back."""

    hand_id: str = ""
    table_id: str = ""
    round_id: str = ""
    dealer_id: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """One hand at one table: the players, the button, dead cards, the ids and the stake.

    ``unit_value`` is the table's stake in minor units per scoring unit; None plays the
    profile's ``money.unitValue`` (the house default). The stake is a fact about the table, not
    a rule: the same profile settles tables at every stake. ``currency`` (ISO 4217) says what
    the stake's minor units are; "" plays the profile's ``money.currency``.
    """

    players: tuple[PlayerInput, ...]
    button_seat: int | None = None
    dead_cards: tuple[str, ...] = ()
    context: AuditContext = field(default_factory=AuditContext)
    unit_value: int | None = None
    currency: str = ""  # ISO 4217; "" plays the profile's money.currency


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """How a request names its rules: a preset (or house profile) name, or a whole profile.

    The stake is not part of the rules: it travels on the ``Table``.
    """

    preset: str = ""
    profile: Mapping[str, Any] | None = None
    overrides: Mapping[str, Any] | None = None


def resolve_profile(choice: ProfileChoice, registry: ProfileRegistry) -> RuleProfile:
    """The fully resolved profile a request settles under; ``InvalidInput`` if it can't be."""
    errors = Collector()
    profile: RuleProfile | None = None
    if choice.preset and choice.profile is not None:
        errors.add("profile", "send either preset or profile, not both", ViolationCode.PROFILE)
    elif choice.profile is not None:
        try:
            profile = profile_from_dict(choice.profile, "profile")
        except InvalidInput as e:
            errors.violations.extend(e.violations)
    elif choice.preset:
        profile = registry.get(choice.preset)
        if profile is None:
            known = ", ".join(registry.names())
            errors.add(
                "preset",
                f"unknown preset {choice.preset!r}; known: {known}",
                ViolationCode.UNKNOWN_PRESET,
            )
    else:
        errors.add("preset", "is required (or send an inline profile)", ViolationCode.OTHER)
    if profile is not None and choice.overrides:
        try:
            profile = apply_overrides(profile, choice.overrides)
        except InvalidInput as e:
            errors.violations.extend(e.violations)
    errors.raise_if_any()
    assert profile is not None
    return profile


def _cards(errors: Collector, r: Reader, key: str) -> tuple[str, ...] | None:
    if not r.has(key):
        r.raw(key)
        return None
    out: list[str] = []
    items = r.items(key)
    for path, value in items:
        if not isinstance(value, str):
            errors.add(
                path, f"must be a card string, got {describe(value)}", ViolationCode.MALFORMED_CARD
            )
        else:
            out.append(value)
    return tuple(out)


def request_from_dict(data: object) -> tuple[Table, ProfileChoice]:
    """Read the JSON form of a ``SettleRequest``. Shapes only: ``settle`` checks the content."""
    errors = Collector()
    r = Reader(errors, "", data, ViolationCode.MALFORMED_REQUEST)
    context = AuditContext(
        hand_id=r.string("handId", ""),
        table_id=r.string("tableId", ""),
        round_id=r.string("roundId", ""),
        dealer_id=r.string("dealerId", ""),
    )
    preset = r.string("preset", "")
    profile = r.raw("profile")
    if profile is not None and not isinstance(profile, dict):
        errors.add("profile", f"must be an object, got {describe(profile)}", ViolationCode.PROFILE)
        profile = None
    overrides = r.raw("profileOverrides")
    if overrides is not None and not isinstance(overrides, dict):
        errors.add(
            "profileOverrides",
            f"must be an object, got {describe(overrides)}",
            ViolationCode.PROFILE,
        )
        overrides = None
    unit_value = r.integer("unitValue", 0) if r.has("unitValue") else None
    button = r.integer("buttonSeat", 0) if r.has("buttonSeat") else None
    if not r.has("buttonSeat"):
        r.raw("buttonSeat")
    if not r.has("unitValue"):
        r.raw("unitValue")
    currency = r.string("currency", "", max_length=64)
    players: list[PlayerInput] = []
    for path, item in r.items("players"):
        p = Reader(errors, path, item, ViolationCode.MALFORMED_REQUEST)
        arrangement = p.obj("arrangement")
        front = _cards(errors, arrangement, "front")
        middle = _cards(errors, arrangement, "middle")
        back = _cards(errors, arrangement, "back")
        arrangement.finish()
        stack = p.integer("stack", 0) if p.has("stack") else None
        if stack is None:
            p.raw("stack")
        players.append(
            PlayerInput(
                player_id=p.string("playerId", ""),
                seat=p.integer("seat", 0),
                front=front,
                middle=middle,
                back=back,
                cards=_cards(errors, p, "cards"),
                declared_natural=p.string("declaredNatural", ""),
                surrender=p.boolean("surrender", False),
                stack=stack,
                in_fantasyland=p.boolean("inFantasyland", False),
            )
        )
        p.finish()
    dead = _cards(errors, r, "deadCards") or ()
    r.finish()
    errors.raise_if_any()
    table = Table(tuple(players), button, dead, context, unit_value, currency)
    return table, ProfileChoice(preset, profile, overrides)
