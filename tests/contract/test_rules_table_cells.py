"""The field table of docs/RULES.md §17 is rendered from the schema (``schema.markdown_table``):
a doc line holding a ``|`` keeps its row's five columns."""

from __future__ import annotations

from dataclasses import dataclass

from cpsettle_service.domain.reading.schema import integer, markdown_table


@dataclass(frozen=True)
class Pipes:
    size: int = integer(3, 1, 9, "Small | large: how big.")


def test_a_pipe_in_a_doc_line_is_escaped() -> None:
    row = markdown_table(Pipes).splitlines()[2]
    assert row == "| `size` | int32 | `3` | 1–9 | Small \\| large: how big. |"
    assert row.replace("\\|", "").count("|") == 6
