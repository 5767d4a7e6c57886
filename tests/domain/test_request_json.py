"""The JSON form of a SettleRequest read by the domain (``table.request_from_dict``: the golden
files, table software that embeds the engine): it reads the same table the service's wire
mapping reads from the same JSON, absent and null fields included, and it names every problem of
shape at once, word for word with its path and code.

Written to kill the mutants the mutation run found alive in domain/table.py (docs/MUTATION.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.api.mapping import request_to_domain
from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.settle.table import ProfileChoice, Table, request_from_dict
from tests.support.tables import ARRANGEMENTS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "cases"
REQUEST, CARD = "malformed_request", "malformed_card"
NOT_A_CARD = "must be a card string, got"


def through_the_wire(data: dict[str, Any]) -> Table:
    """The table the service reads from the same JSON: parsed as a SettleRequest, then mapped."""
    return request_to_domain(json_format.ParseDict(data, pb.SettleRequest()))[0]


def refused(data: object) -> list[tuple[str, str, str]]:
    with pytest.raises(InvalidInput) as e:
        request_from_dict(data)
    return [(v.field, v.reason, v.code.value) for v in e.value.violations]


def rows(pid: str) -> dict[str, list[str]]:
    return {k: list(v) for k, v in ARRANGEMENTS[pid].items()}


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_every_golden_request_reads_as_the_wire_reads_it(path: Path) -> None:
    data = json.loads(path.read_text("utf-8"))["request"]
    table, _ = request_from_dict(data)
    assert table == through_the_wire(data)


def test_absent_fields_read_as_the_wire_defaults() -> None:
    # no ids, no preset, no seat, no stake, no button, no currency, no dead cards, no flags
    data = {"players": [{"arrangement": rows("A")}, {"playerId": "B", "arrangement": rows("B")}]}
    table, choice = request_from_dict(data)
    assert table == through_the_wire(data)
    assert (table.button_seat, table.unit_value, table.currency, table.dead_cards) == (
        None,
        None,
        "",
        (),
    )
    assert (table.players[0].player_id, table.players[0].seat, table.players[0].stack) == (
        "",
        0,
        None,
    )
    assert not table.players[1].surrender and not table.players[1].in_fantasyland
    assert table.players[1].declared_natural == ""
    assert table.context.hand_id == table.context.dealer_id == ""
    assert choice == ProfileChoice("", None, None)


def test_null_reads_as_absent_as_in_proto3_json() -> None:
    data = {
        "handId": None,
        "tableId": None,
        "roundId": None,
        "dealerId": None,
        "preset": None,
        "profile": None,
        "profileOverrides": None,
        "unitValue": None,
        "buttonSeat": None,
        "currency": None,
        "deadCards": None,
        "players": [
            {
                "playerId": "A",
                "seat": 1,
                "stack": None,
                "cards": None,
                "declaredNatural": None,
                "surrender": None,
                "inFantasyland": None,
                "arrangement": rows("A"),
            },
            {"playerId": "B", "seat": 2, "arrangement": rows("B")},
        ],
    }
    table, choice = request_from_dict(data)
    assert table == through_the_wire(data)
    assert choice == ProfileChoice("", None, None)


def test_a_null_row_reads_as_a_missing_row() -> None:
    # (the wire cannot tell a missing row from an empty one; validation names either)
    stated = {"playerId": "A", "seat": 1, "arrangement": {"middle": rows("A")["middle"]}}
    nulls = {
        "playerId": "A",
        "seat": 1,
        "arrangement": {"front": None, "middle": rows("A")["middle"], "back": None},
    }
    read = request_from_dict({"players": [nulls]})[0].players[0]
    assert read == request_from_dict({"players": [stated]})[0].players[0]
    assert read.front is None and read.back is None
    assert read.middle == tuple(ARRANGEMENTS["A"]["middle"])


def test_stated_values_are_read() -> None:
    data = {
        "handId": "h",
        "tableId": "t",
        "roundId": "r",
        "dealerId": "d",
        "preset": "ofc",
        "unitValue": "25",
        "buttonSeat": 0,
        "currency": "EUR",
        "deadCards": ["2c"],
        "profileOverrides": {"money": {"unitValue": 5}},
        "players": [
            {
                "playerId": "A",
                "seat": 3,
                "stack": "0",
                "inFantasyland": True,
                "arrangement": rows("A"),
            },
            {
                "playerId": "B",
                "seat": 4,
                "surrender": True,
                "declaredNatural": "X",
                "cards": ["As"],
            },
        ],
    }
    table, choice = request_from_dict(data)
    assert table == through_the_wire(data)
    assert (table.unit_value, table.button_seat, table.players[0].stack) == (25, 0, 0)
    assert choice == ProfileChoice("ofc", None, {"money": {"unitValue": 5}})


def test_a_request_that_is_not_an_object() -> None:
    assert refused(["players"]) == [("", "must be an object, got a list", REQUEST)]


def test_every_problem_of_shape_is_named_at_once() -> None:
    assert refused(
        {
            "handId": 7,
            "profile": [],
            "profileOverrides": "money",
            "unitValue": "a lot",
            "buttonSeat": 1.5,
            "currency": 978,
            "deadCards": [2],
            "colour": "red",
            "players": [
                {
                    "playerId": "A",
                    "seat": "one",
                    "stack": False,
                    "surrender": "no",
                    "declaredNatural": 13,
                    "inFantasyland": 1,
                    "hat": True,
                    "arrangement": {"front": ["As", 1, None], "middle": [[]], "back": [{}], "x": 0},
                },
                {"playerId": "B", "seat": 2, "cards": ["Kd", 10.0]},
                "C",
            ],
        }
    ) == [
        ("handId", "must be a string, got an integer", REQUEST),
        ("profile", "must be an object, got a list", "profile"),
        ("profileOverrides", "must be an object, got a string", "profile"),
        ("unitValue", "must be an integer, got a string", REQUEST),
        ("buttonSeat", "must be an integer, got a number", REQUEST),
        ("currency", "must be a string, got an integer", REQUEST),
        ("players[0].arrangement.front[1]", f"{NOT_A_CARD} an integer", CARD),
        ("players[0].arrangement.front[2]", f"{NOT_A_CARD} null", CARD),
        ("players[0].arrangement.middle[0]", f"{NOT_A_CARD} a list", CARD),
        ("players[0].arrangement.back[0]", f"{NOT_A_CARD} an object", CARD),
        ("players[0].arrangement.x", "unknown field", REQUEST),
        ("players[0].stack", "must be an integer, got a boolean", REQUEST),
        ("players[0].seat", "must be an integer, got a string", REQUEST),
        ("players[0].declaredNatural", "must be a string, got an integer", REQUEST),
        ("players[0].surrender", "must be true or false, got a string", REQUEST),
        ("players[0].inFantasyland", "must be true or false, got an integer", REQUEST),
        ("players[0].hat", "unknown field", REQUEST),
        ("players[1].cards[1]", f"{NOT_A_CARD} a number", CARD),
        ("players[2]", "must be an object, got a string", REQUEST),
        ("deadCards[0]", f"{NOT_A_CARD} an integer", CARD),
        ("colour", "unknown field", REQUEST),
    ]


def test_the_currency_field_holds_at_most_64_characters() -> None:
    base = {"preset": "western", "players": []}
    assert request_from_dict({**base, "currency": "X" * 64})[0].currency == "X" * 64
    assert refused({**base, "currency": "X" * 65}) == [
        ("currency", "must be at most 64 characters", REQUEST)
    ]


@pytest.mark.parametrize("field", ["buttonSeat", "unitValue"])
def test_a_misspelt_field_beside_the_null_one_is_the_only_one_named(field: str) -> None:
    # a client that writes the key in another case: the null is still "absent", the other
    # spelling is a field this request does not have
    for spelling in (field.lower(), field.upper()):
        assert refused({"players": [], field: None, spelling: 1}) == [
            (spelling, "unknown field", REQUEST)
        ]
