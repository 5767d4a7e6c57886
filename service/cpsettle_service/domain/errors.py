"""The domain's errors (RULES.md §15): ``CpsettleError``, the base of every error cpsettle
raises on purpose; ``InvalidInput``, carrying every violation of a request or profile at once;
``CardError``, a card text that names no card.

The service's own errors (a missing profile, a full replica, an unusable key...) derive from
the same base in ``cpsettle_service.errors``, which hands these on too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["CardError", "Collector", "CpsettleError", "InvalidInput", "Violation", "ViolationCode"]


class ViolationCode(StrEnum):
    """What kind of problem a violation is, for machines: metric labels and error details.

    The reason text is for people and may be reworded at any time; the code is stable and is
    the only thing a metric label or a client's branch may be derived from.
    """

    DUPLICATE_CARD = "duplicate_card"
    MALFORMED_CARD = "malformed_card"
    ROW_SIZE = "row_size"
    PLAYER_COUNT = "player_count"
    DUPLICATE_SEAT_OR_ID = "duplicate_seat_or_id"
    SURRENDER = "surrender"
    NATURAL = "natural"
    UNKNOWN_PRESET = "unknown_preset"
    STACK = "stack"
    BUTTON_SEAT = "button_seat"
    MALFORMED_REQUEST = "malformed_request"
    PROFILE = "profile"
    CURRENCY = "currency"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Violation:
    """One problem with the input: where it is (a field path), why it is wrong (for people) and
    what kind of problem it is (for machines)."""

    field: str
    reason: str
    code: ViolationCode  # required: a site cannot forget to say what kind of problem it is

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class CpsettleError(Exception):
    """The base of every error cpsettle raises on purpose (the domain's and the service's)."""


class InvalidInput(CpsettleError, ValueError):
    """Input that cannot be settled. Carries every violation found, never just the first."""

    def __init__(self, violations: list[Violation] | tuple[Violation, ...]) -> None:
        if not violations:
            raise ValueError("InvalidInput needs at least one violation")
        self.violations: tuple[Violation, ...] = tuple(violations)
        super().__init__("; ".join(str(v) for v in self.violations))


class CardError(CpsettleError, ValueError):
    """A card string that is not one of the 52 cards (RULES.md §2)."""


class Collector:
    """Gathers violations while validating, then raises them all at once."""

    __slots__ = ("violations",)

    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def add(self, field: str, reason: str, code: ViolationCode) -> None:
        self.violations.append(Violation(field, reason, code))

    def __bool__(self) -> bool:
        return bool(self.violations)

    def raise_if_any(self) -> None:
        if self.violations:
            raise InvalidInput(self.violations)
