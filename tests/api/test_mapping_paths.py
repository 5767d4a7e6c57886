"""What api/mapping.py reads from a request and writes into an answer, field by field, through
the real server and our own client: ValidatePayouts' checks and its refusals, the int64 edges
of a difference, fields an inline profile's nested messages carry that the schema does not
know, overrides that are not JSON, and EvaluateArrangement's Fantasyland flag.

Written to kill the mutants the mutation run found alive here (docs/MUTATION.md): each test names
what it pins down.
"""

from __future__ import annotations

import math
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset
from tests.support.tables import ARRANGEMENTS, table

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def refused(call: Any, *args: Any) -> SettlementError:
    with pytest.raises(SettlementError) as e:
        call(*args)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    return e.value


def validate_raw(server: Any, msg: pb.ValidatePayoutsRequest) -> pb.ValidatePayoutsResponse:
    """A ValidatePayouts message as built here (the client's own call takes a mapping, so it
    cannot name a player twice), its failure read by the client's error parser."""
    with grpc.insecure_channel(server.address) as channel:
        try:
            return pb_grpc.SettlementServiceStub(channel).ValidatePayouts(msg, timeout=10)
        except grpc.RpcError as e:
            raise SettlementError.from_rpc_error(e) from None


def _inline(request: dict[str, Any], raw_profile: bytes) -> pb.SettleRequest:
    message = request_from_json(request)
    message.preset = ""
    message.profile.ParseFromString(raw_profile)
    return message


def _with_unknown_field(msg: Any) -> None:
    """Field number 99, varint 1, appended to ``msg`` (a field from some other schema)."""
    msg.ParseFromString(msg.SerializeToString() + b"\x98\x06\x01")


def money_for_first(pair: pb.PairResult) -> int:
    return pair.paid if pair.payee == pair.first else -pair.paid


# --------------------------------------------------------------------------- ValidatePayouts


def test_every_field_of_every_check_is_answered(client: SettlementClient) -> None:
    """Each player's and each pair's check carries what was proposed, what was expected, the
    difference (proposed - expected), whether they match, and the lines behind the amount; a
    pair proposed in the other order is expected with the other sign."""
    request = table("two-four")
    s = client.settle(request).settlement
    offsets = {p.player_id: i for i, p in enumerate(s.players)}  # the first one matches
    proposed = {p.player_id: p.net_money + offsets[p.player_id] for p in s.players}
    pairs = {}
    for i, pr in enumerate(s.pairs):
        if i % 2:  # every other pair named second player first
            pairs[(pr.second, pr.first)] = -money_for_first(pr) + i
        else:
            pairs[(pr.first, pr.second)] = money_for_first(pr) + i
    report = client.validate_payouts(request, proposed, pairs)
    assert not report.all_match
    got = [(c.player_id, c.expected, c.proposed, c.difference, c.matches) for c in report.players]
    assert got == [
        (
            p.player_id,
            p.net_money,
            proposed[p.player_id],
            offsets[p.player_id],
            offsets[p.player_id] == 0,
        )
        for p in s.players
    ]
    for c, p in zip(report.players, s.players, strict=True):
        assert c.explanation[0] == p.text
        assert len(c.explanation) == 1 + sum(p.player_id in (q.first, q.second) for q in s.pairs)
    assert len(report.pairs) == len(s.pairs) == 6
    for i, (pc, pr) in enumerate(zip(report.pairs, s.pairs, strict=True)):
        first, second = (pr.second, pr.first) if i % 2 else (pr.first, pr.second)
        expected = -money_for_first(pr) if i % 2 else money_for_first(pr)
        assert (pc.first, pc.second, pc.expected, pc.proposed, pc.difference, pc.matches) == (
            first,
            second,
            expected,
            expected + i,
            i,
            i == 0,
        )
        assert pc.explanation[-1] == pr.text and len(pc.explanation) > 1


def test_a_player_or_a_pair_named_twice_is_refused_with_both_problems(
    client: SettlementClient, server: Any
) -> None:
    request = table("two-four")
    s = client.settle(request).settlement
    msg = pb.ValidatePayoutsRequest(request=request_from_json(request))
    for p in s.players:
        msg.proposed.add(player_id=p.player_id, net_money=p.net_money)
    msg.proposed.add(player_id="B", net_money=0)
    pr = s.pairs[0]
    msg.proposed_pairs.add(first=pr.first, second=pr.second, money_for_first=money_for_first(pr))
    msg.proposed_pairs.add(first=pr.second, second=pr.first, money_for_first=0)  # reversed
    msg.proposed_pairs.add(first=pr.first, second=pr.second, money_for_first=1)  # the same
    e = refused(validate_raw, server, msg)
    assert {v.field: v.reason for v in e.violations} == {
        "proposed[4].playerId": "'B' is given twice",
        "proposedPairs[1]": "this pair is proposed twice",
        "proposedPairs[2]": "this pair is proposed twice",
    }
    assert e.metadata["violationCodes"] == "other"


def test_a_pair_named_in_both_orders_is_refused_alone(
    client: SettlementClient, server: Any
) -> None:
    """Only the other order, not the same key twice: the check looks both ways."""
    request = table("two-four")
    s = client.settle(request).settlement
    nets = {p.player_id: p.net_money for p in s.players}
    pr = s.pairs[2]
    msg = pb.ValidatePayoutsRequest(request=request_from_json(request))
    for pid, amount in nets.items():
        msg.proposed.add(player_id=pid, net_money=amount)
    msg.proposed_pairs.add(first=pr.first, second=pr.second, money_for_first=1)
    msg.proposed_pairs.add(first=pr.second, second=pr.first, money_for_first=-1)
    e = refused(validate_raw, server, msg)
    assert [(v.field, v.reason) for v in e.violations] == [
        ("proposedPairs[1]", "this pair is proposed twice")
    ]


def test_differences_at_the_int64_edges(client: SettlementClient) -> None:
    """A difference of exactly INT64_MAX or INT64_MIN is answered; one past it is refused,
    naming the proposal and the expected amount."""
    request = table("two-four")
    s = client.settle(request).settlement
    nets = {p.player_id: p.net_money for p in s.players}
    loser = next(p for p, n in nets.items() if n < 0)
    winner = next(p for p, n in nets.items() if n > 0)
    at_edges = dict(nets)
    at_edges[loser] = INT64_MAX + nets[loser]  # difference INT64_MAX
    at_edges[winner] = INT64_MIN + nets[winner]  # difference INT64_MIN
    report = client.validate_payouts(request, at_edges)
    differences = {c.player_id: c.difference for c in report.players}
    assert (differences[loser], differences[winner]) == (INT64_MAX, INT64_MIN)
    past = dict(nets)
    past[loser] = INT64_MAX + nets[loser] + 1
    e = refused(client.validate_payouts, request, past)
    assert [(v.field, v.reason) for v in e.violations] == [
        (
            "proposed",
            f"proposes {past[loser]} where {nets[loser]} is expected: the difference "
            "does not fit an int64 amount",
        )
    ]
    assert e.metadata["violationCodes"] == "other"
    below = dict(nets)
    below[winner] = INT64_MIN + nets[winner] - 1
    e = refused(client.validate_payouts, request, below)
    assert [v.field for v in e.violations] == ["proposed"]


def test_a_request_with_a_field_of_another_schema_is_refused_by_name(
    client: SettlementClient,
) -> None:
    message = request_from_json(table())
    _with_unknown_field(message)
    _with_unknown_field(message.players[1].arrangement)
    e = refused(client.settle, message)
    assert [(v.field, v.reason) for v in e.violations] == [
        ("request", "has fields this service does not know"),
        ("players[1]", "has fields this service does not know"),
    ]
    assert e.metadata["violationCodes"] == "other"


def test_without_a_button_the_lowest_seat_has_it(client: SettlementClient) -> None:
    """No ``buttonSeat``: the settlement names the lowest seat as the button, not a seat 0."""
    request = table("western")
    for i, p in enumerate(request["players"]):
        p["seat"] = i + 2
    assert client.settle(request).settlement.button_seat == 2
    assert client.settle(dict(request, buttonSeat=0)).settlement.button_seat == 0


def test_a_proposal_with_an_overlong_player_id_is_named(client: SettlementClient) -> None:
    request = table("two-four")
    nets = {p.player_id: p.net_money for p in client.settle(request).settlement.players}
    nets["x" * 129] = 0
    e = refused(client.validate_payouts, request, nets)
    assert [v.field for v in e.violations] == ["proposed[4].playerId"]


def test_a_pair_that_is_not_at_the_table_is_named_by_both_ids(client: SettlementClient) -> None:
    """domain/payouts.py's refusal of a proposed pair of players not at the table: the field
    names the pair in the order proposed, the reason says why, the code is ``other``."""
    request = table("two-four")
    nets = {p.player_id: p.net_money for p in client.settle(request).settlement.players}
    e = refused(client.validate_payouts, request, nets, {("B", "Z"): 5})
    assert [(v.field, v.reason) for v in e.violations] == [
        ("proposedPairs[B,Z]", "is not a pair of players at this table")
    ]
    assert e.metadata["violationCodes"] == "other"


# --------------------------------------------------------------------------- profiles


@pytest.mark.parametrize("where", ["nested", "repeated"])
def test_an_unknown_field_deep_in_an_inline_profile_is_named_by_its_path(
    client: SettlementClient, where: str
) -> None:
    profile = profile_pb2.RuleProfile()
    json_format.ParseDict(profile_to_dict(load_preset("western")), profile)
    if where == "nested":
        _with_unknown_field(profile.caps)
        field = "profile.caps"
    else:
        _with_unknown_field(profile.naturals.table[2])
        field = "profile.naturals.table[2]"
    e = refused(client.settle, _inline(table(), profile.SerializeToString()))
    assert [(v.field, v.reason) for v in e.violations] == [
        (field, "has fields this service does not know")
    ]
    assert e.metadata["violationCodes"] == "profile"


def test_unknown_fields_at_two_depths_are_both_named(client: SettlementClient) -> None:
    profile = profile_pb2.RuleProfile()
    json_format.ParseDict(profile_to_dict(load_preset("ofc")), profile)
    _with_unknown_field(profile.royalties.table[0])
    _with_unknown_field(profile.money)
    e = refused(client.settle, _inline(table(), profile.SerializeToString()))
    assert sorted(v.field for v in e.violations) == ["profile.money", "profile.royalties.table[0]"]


def test_overrides_that_are_not_json_are_invalid_argument(client: SettlementClient) -> None:
    message = request_from_json(table("western"))
    message.profile_overrides.fields["scoring"].struct_value.fields[
        "rowUnit"
    ].number_value = math.nan
    e = refused(client.settle, message)
    assert [v.field for v in e.violations] == ["profileOverrides"]
    assert e.violations[0].reason.startswith("is not valid JSON: ")
    assert e.metadata["violationCodes"] == "profile"


def test_a_preset_without_overrides_is_the_builtin_profile(client: SettlementClient) -> None:
    s = client.settle(table("western")).settlement
    assert (s.profile.name, s.profile.source) == ("western", "builtin")


# --------------------------------------------------------------------------- EvaluateArrangement


def test_evaluate_reads_the_fantasyland_flag(client: SettlementClient) -> None:
    """OFC, arrangement B: kings in front enter Fantasyland (15 cards); a player already in it
    stays by the full house in the middle (14 cards)."""
    entering = client.evaluate({"preset": "ofc", "arrangement": ARRANGEMENTS["B"]}).fantasyland
    staying = client.evaluate(
        {"preset": "ofc", "arrangement": ARRANGEMENTS["B"], "inFantasyland": True}
    ).fantasyland
    assert (entering.qualifies, entering.cards, entering.text) == (
        True,
        15,
        "player qualifies for Fantasyland with pair of kings, two kicker in front — 15 cards",
    )
    assert (staying.qualifies, staying.cards, staying.text) == (
        True,
        14,
        "player stays in Fantasyland with full house, sixes full of twos in the "
        "middle — 14 cards next hand",
    )


def test_evaluate_without_cards_names_the_missing_arrangement(client: SettlementClient) -> None:
    e = refused(client.evaluate, {"preset": "western"})
    assert [(v.field, v.reason) for v in e.violations] == [
        ("arrangement", "send either an arrangement or 13 cards")
    ]
