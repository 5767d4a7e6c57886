"""Rejections through the in-process door (``cpsettle_service.local``, what table software and
``--local`` embed): the ``InvalidInput`` raised carries every problem, and its message says them
all as ``field: reason``; an ``InvalidInput`` without a problem cannot be made.

Written to kill the mutants the mutation run found alive in domain/errors.py (docs/MUTATION.md).
"""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.local import InvalidInput, LocalService
from tests.support.tables import table


def test_a_local_rejection_says_every_problem_in_its_message() -> None:
    request = table("western", currency="eur")
    request["players"][1]["seat"] = 1  # the first player's seat
    with pytest.raises(InvalidInput) as e:
        LocalService().settle(json_format.ParseDict(request, pb.SettleRequest()))
    assert [(v.field, v.code.value) for v in e.value.violations] == [
        ("currency", "currency"),
        ("players[1].seat", "duplicate_seat_or_id"),
    ]
    assert str(e.value) == "; ".join(f"{v.field}: {v.reason}" for v in e.value.violations)
    assert str(e.value).startswith(
        'currency: must be three upper-case letters (ISO 4217, e.g. EUR), got "eur"; '
        "players[1].seat: "
    )


def test_an_invalid_input_needs_a_problem() -> None:
    with pytest.raises(ValueError, match=r"^InvalidInput needs at least one violation$"):
        InvalidInput([])
