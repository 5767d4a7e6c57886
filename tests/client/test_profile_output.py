"""``cpsettle profiles NAME --output json``: a preset printed as its JSON form, tables in the
order RULES.md §12 lists them."""

from __future__ import annotations

import json

import pytest

from cpsettle_client.cli import main


def test_the_progressive_table_is_printed_weakest_first(capsys: pytest.CaptureFixture[str]) -> None:
    """Table E: Fantasyland from QQ, progressive 14 / 15 / 16 / 17 (QQ, KK, AA, trips)."""
    assert main(["profiles", "ofc", "--local", "--output", "json"]) == 0
    fantasyland = json.loads(capsys.readouterr().out)["fantasyland"]
    assert fantasyland["progressive"] == [
        {"handClass": "HAND_CLASS_PAIR", "rank": "Q", "cards": 14},
        {"handClass": "HAND_CLASS_PAIR", "rank": "K", "cards": 15},
        {"handClass": "HAND_CLASS_PAIR", "rank": "A", "cards": 16},
        {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "cards": 17},
    ]
