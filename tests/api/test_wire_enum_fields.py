"""The wire writer's enum fields against the protobuf runtime, for every value of every enum
the settlement carries: single enums (the zero value writes nothing) and the packed repeated
foul reasons (none, one, several).

The writers are built when ``wire`` is imported, before a test can change anything; these build
them again at test time from the same factories, field numbers and tables (as
``test_wire_edges.py`` does for ints and strings), so a wrong tag, wire type or value in a
factory fails here and not only as a mismatch somewhere in a whole settlement.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service import wireformat
from cpsettle_service.api import mapping

# (message, field, the domain -> number table the writer is built from)
ENUMS: list[tuple[Any, str, dict[str, int]]] = [
    (pb.EvaluatedRow, "row", mapping.ROW),
    (pb.EvaluatedRow, "hand_class", mapping.HAND_CLASS),
    (pb.PlayerResult, "status", mapping.PLAYER_STATUS),
    (pb.RowResult, "row", mapping.ROW),
    (pb.LineItem, "kind", mapping.LINE_ITEM_KIND),
    (pb.PairResult, "kind", mapping.PAIR_KIND),
    (pb.PairResult, "cap", mapping.CAP),  # "" (nothing capped) is the zero value
    (pb.Signature, "algorithm", mapping.SIGNATURE_ALGORITHM),
]


@pytest.mark.parametrize(
    "message, field, table", ENUMS, ids=[f"{m.DESCRIPTOR.name}.{f}" for m, f, _ in ENUMS]
)
def test_each_enum_value_is_written_as_the_runtime_writes_it(
    message: Any, field: str, table: dict[str, int]
) -> None:
    written = wireformat.enum_field(wireformat.number(message, field), table)
    assert set(written) == set(table)
    for value, n in table.items():
        assert written[value] == message(**{field: n}).SerializeToString(), value


def test_a_pair_nothing_capped_carries_no_cap_field() -> None:
    """The zero value, the one proto3 leaves out (and the case the table above must include)."""
    assert mapping.CAP[""] == 0
    written = wireformat.enum_field(wireformat.number(pb.PairResult, "cap"), mapping.CAP)
    assert written[""] == b""


FOUL_REASONS = sorted(mapping.FOUL_REASON)
SETS = [list(c) for k in range(len(FOUL_REASONS) + 1) for c in combinations(FOUL_REASONS, k)]


@pytest.mark.parametrize("reasons", SETS, ids=["+".join(s) or "none" for s in SETS])
def test_foul_reasons_are_packed_as_the_runtime_packs_them(reasons: list[str]) -> None:
    write = wireformat.packed_enum_field(
        wireformat.number(pb.PlayerResult, "foul_reasons"), mapping.FOUL_REASON
    )
    expected = pb.PlayerResult(foul_reasons=[mapping.FOUL_REASON[r] for r in reasons])
    assert write(reasons) == expected.SerializeToString()
    assert list(pb.PlayerResult.FromString(write(reasons)).foul_reasons) == [
        mapping.FOUL_REASON[r] for r in reasons
    ]
