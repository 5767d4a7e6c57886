"""The validation-error metric is labelled by the violation's code, never by its English reason
(which may quote the request: a player id, a card as sent)."""

from __future__ import annotations

import json

import grpc

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.api.interceptors import count_invalid
from cpsettle_service.domain.errors import InvalidInput, Violation, ViolationCode
from cpsettle_service.observability.metrics import REGISTRY
from tests.conftest import EXAMPLES

METRIC = "cpsettle_validation_errors_total"
# a reason quoting the texts the old substring table matched for other labels
NEEDLES = "is already used, is not a card, must hold, stack, natural, surrender, not a valid"


def counts() -> dict[str, float]:
    return {
        code.value: REGISTRY.get_sample_value(METRIC, {"reason": code.value}) or 0.0
        for code in ViolationCode
    }


def moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def test_the_label_is_the_code_whatever_the_reason_says() -> None:
    before = counts()
    count_invalid(
        InvalidInput(
            [
                Violation("players[0].stack", NEEDLES, ViolationCode.BUTTON_SEAT),
                Violation("profile.rows", NEEDLES, ViolationCode.DUPLICATE_CARD),
                Violation("request", NEEDLES, ViolationCode.OTHER),
            ]
        )
    )
    # one increment per rejected request, under the first violation's code
    assert moved(before, counts()) == {"button_seat": 1}


def test_a_player_id_in_a_reason_does_not_move_another_label(client: SettlementClient) -> None:
    """Through the real SettleStream: the dealer's recorded payouts name one player twice,
    a player whose id reads like other problems; the count goes to the problem's own code."""
    table = json.loads((EXAMPLES / "tables" / "western.json").read_text())
    item = pb.AuditItem(ref="h1", request=request_from_json(table))
    item.paid.add(player_id=NEEDLES, net_money=1)
    item.paid.add(player_id=NEEDLES, net_money=2)
    before = counts()
    [result] = list(client.settle_stream([pb.SettleStreamRequest(items=[item])]))
    error = SettlementError.from_status(result.results[0].error)
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    # the ErrorInfo's metadata is the codes, too: nothing of the player's text
    assert error.metadata == {"violationCodes": "other", "violationCount": "1"}
    assert [v.field for v in error.violations] == ["paid[1].playerId"]
    assert NEEDLES in error.violations[0].reason
    assert moved(before, counts()) == {"other": 1}
