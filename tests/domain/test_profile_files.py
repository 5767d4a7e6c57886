"""A house profile is a JSON file the server loads at start (``CPSETTLE_PROFILE_DIR``), and the
domain reads profiles and requests that table software builds in Python: the reader names every
problem there too, with the file (or field) it is in and the JSON type it found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpsettle_service.domain.errors import InvalidInput, ViolationCode
from cpsettle_service.domain.profile.parse import profile_from_dict
from cpsettle_service.domain.settle.table import request_from_dict
from cpsettle_service.profile_files import builtin_registry, with_directory


def problems(
    error: pytest.ExceptionInfo[InvalidInput],
    root: Path | None = None,
    code: ViolationCode = ViolationCode.PROFILE,
) -> list[tuple[str, str]]:
    assert {v.code for v in error.value.violations} == {code}
    return [
        (v.field.replace(f"{root}/", "") if root else v.field, v.reason)
        for v in error.value.violations
    ]


def test_house_profile_files_with_mistakes_are_each_named(tmp_path: Path) -> None:
    (tmp_path / "a-empty.json").write_text("null")
    (tmp_path / "b-list.json").write_text("[1]")
    (tmp_path / "c-typed.json").write_text(
        json.dumps(
            {
                "name": 7,
                "version": 2,
                "scoring": {"rowUnit": 1.5, "scoopMultiplier": 2.0, "majorityBonusOnScoop": 1},
                "caps": {"wins": None},
                "rake": "none",
            }
        )
    )
    with pytest.raises(InvalidInput) as refused:
        with_directory(builtin_registry(), str(tmp_path))
    assert problems(refused, tmp_path) == [
        ("a-empty.json.name", "is required"),  # an empty file's profile still needs a name
        ("b-list.json", "must be an object, got a list"),  # and nothing more about it
        ("c-typed.json.name", "must be a string, got an integer"),  # and only that
        ("c-typed.json.version", "must be a string, got an integer"),
        ("c-typed.json.scoring.rowUnit", "must be an integer, got a number"),
        ("c-typed.json.scoring.majorityBonusOnScoop", "must be true or false, got an integer"),
        ("c-typed.json.rake", "must be an object, got a string"),
    ]


def test_a_value_json_cannot_hold_is_named_by_its_type() -> None:
    # a profile built in Python: a tuple where JSON has a list, a complex number
    with pytest.raises(InvalidInput) as refused:
        profile_from_dict(
            {
                "name": "house",
                "ranking": {"suitOrder": ("SUIT_SPADE",)},
                "scoring": {"rowUnit": 1 + 2j},
            }
        )
    assert problems(refused) == [
        ("profile.scoring.rowUnit", "must be an integer, got complex"),
        ("profile.ranking.suitOrder", "must be a list, got tuple"),
    ]


def test_a_request_read_from_json_names_its_own_fields_from_the_top() -> None:
    with pytest.raises(InvalidInput) as refused:
        request_from_dict({"handId": 5, "players": "AB", "seats": 2})
    assert problems(refused, code=ViolationCode.MALFORMED_REQUEST) == [
        ("handId", "must be a string, got an integer"),
        ("players", "must be a list, got a string"),
        ("seats", "unknown field"),
    ]


def test_a_request_string_from_json_is_at_most_256_characters() -> None:
    with pytest.raises(InvalidInput) as refused:
        request_from_dict({"handId": "h" * 256, "tableId": "t" * 257, "players": []})
    assert problems(refused, code=ViolationCode.MALFORMED_REQUEST) == [
        ("tableId", "must be at most 256 characters")
    ]
    assert request_from_dict({"handId": "h" * 256})[0].context.hand_id == "h" * 256
