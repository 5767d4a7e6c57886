"""The one error type of the domain: invalid input, carrying every violation found (spec 15)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """One problem with the input: where it is (a field path) and why it is wrong."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class InvalidInput(ValueError):
    """Input that cannot be settled. Carries every violation found, never just the first."""

    def __init__(self, violations: list[Violation] | tuple[Violation, ...]) -> None:
        if not violations:
            raise ValueError("InvalidInput needs at least one violation")
        self.violations: tuple[Violation, ...] = tuple(violations)
        super().__init__("; ".join(str(v) for v in self.violations))


class Collector:
    """Gathers violations while validating, then raises them all at once."""

    __slots__ = ("violations",)

    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def add(self, field: str, reason: str) -> None:
        self.violations.append(Violation(field, reason))

    def __bool__(self) -> bool:
        return bool(self.violations)

    def raise_if_any(self) -> None:
        if self.violations:
            raise InvalidInput(self.violations)
