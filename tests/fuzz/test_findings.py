"""What the Settle fuzzer (fuzz/fuzz_settle.py) found, kept as regression tests.

Each reached the client as INTERNAL ("internal error") where INVALID_ARGUMENT with a field
violation is due; fixed in 04625be (and the int64 bounds of docs/DECISIONS.md). A new finding
that cannot be fixed at once goes into fuzz_settle.KNOWN with a strict xfail here, so the short
CI run (test_fuzz_short.py) keeps failing only on new kinds of crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import request_from_json
from cpsettle_service.api.servicer import ProfileResolver, SettlementServicer, tolerant
from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.profile_files import builtin_registry

ROOT = Path(__file__).resolve().parents[2]


def settle(request: pb.SettleRequest) -> pb.SettleResponse:
    servicer = SettlementServicer(ProfileResolver(builtin_registry()))
    return servicer.settle_response(tolerant(pb.SettleRequest)(request.SerializeToString()))


def example(name: str) -> pb.SettleRequest:
    path = ROOT / "examples" / "tables" / f"{name}.json"
    return request_from_json(json.loads(path.read_text()))


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_number_in_overrides_is_invalid_input(number: float) -> None:
    request = example("western")
    request.profile_overrides.update({"scoring": {"rowUnit": number}})
    with pytest.raises(InvalidInput):
        settle(request)


def test_stake_whose_money_overflows_int64_is_invalid_input() -> None:
    request = example("eastern")
    request.unit_value = 2**63 - 1
    with pytest.raises(InvalidInput):
        settle(request)


def test_loose_cards_without_a_natural_are_invalid_input_when_declaration_is_optional() -> None:
    request = example("two-four")
    player = request.players[3]
    arrangement = player.arrangement
    player.cards.extend([*arrangement.front, *arrangement.middle, *arrangement.back])
    player.ClearField("arrangement")
    player.ClearField("declared_natural")
    request.profile_overrides.update({"naturals": {"requireDeclaration": False}})
    with pytest.raises(InvalidInput):
        settle(request)


def test_the_same_card_twice_in_one_row_is_invalid_input() -> None:
    request = example("western")
    middle = request.players[0].arrangement.middle
    middle[2] = middle[0]
    with pytest.raises(InvalidInput):
        settle(request)
