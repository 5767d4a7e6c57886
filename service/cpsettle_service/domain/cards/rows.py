"""The three rows of an arrangement."""

from __future__ import annotations

from enum import StrEnum


class Row(StrEnum):
    """A row of an arrangement, in the order RULES.md §1 lists them (front is the 3-card row)."""

    FRONT = "FRONT"
    MIDDLE = "MIDDLE"
    BACK = "BACK"

    @property
    def size(self) -> int:
        return 3 if self is Row.FRONT else 5

    @property
    def label(self) -> str:
        return _LABELS[self]


ROWS: tuple[Row, Row, Row] = (Row.FRONT, Row.MIDDLE, Row.BACK)


_LABELS = {row: row.value.capitalize() for row in Row}
