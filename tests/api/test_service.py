"""Every RPC and every error path, through the real server and our own client."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.profile_files import load_preset
from tests.support.tables import ARRANGEMENTS, table

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "cases"


def violations(excinfo: pytest.ExceptionInfo[SettlementError]) -> dict[str, str]:
    return {v.field: v.reason for v in excinfo.value.violations}


def reject(client: SettlementClient, request: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SettlementError) as excinfo:
        client.settle(request)
    assert excinfo.value.code is grpc.StatusCode.INVALID_ARGUMENT
    found = violations(excinfo)
    assert found, "an INVALID_ARGUMENT always names its violations"
    return found


# --------------------------------------------------------------------------- Settle


def test_table_cards_are_one_deck() -> None:
    cards = [c for a in ARRANGEMENTS.values() for row in a.values() for c in row]
    assert len(cards) == 52 and len(set(cards)) == 52


@pytest.mark.parametrize("name", ["001", "002", "003", "004"])
def test_worked_examples_over_the_wire(client: SettlementClient, name: str) -> None:
    path = next(GOLDEN.glob(f"{name}-*.json"))
    case = json.loads(path.read_text())
    settlement = client.settle(case["request"]).settlement
    for p in settlement.players:
        want = case["expected"]["players"][p.player_id]
        assert p.net_units == want["netUnits"]
        assert p.net_money == want["netMoney"]


def test_settle_returns_every_line_and_echoes_context(client: SettlementClient) -> None:
    s = client.settle(table("western", unitValue=25, buttonSeat=3)).settlement
    assert (s.context.hand_id, s.context.table_id, s.context.round_id, s.context.dealer_id) == (
        "test-hand",
        "test-table",
        "r1",
        "dealer-7",
    )
    assert s.profile.name == "western" and len(s.profile.digest) == 64
    assert s.unit_value == 25
    assert list(s.order) == ["C", "D", "A", "B"]  # button seat 3 first, clockwise
    assert len(s.pairs) == 6
    assert [(p.first, p.second) for p in s.pairs][:3] == [("C", "D"), ("C", "A"), ("C", "B")]
    for pair in s.pairs:
        assert len(pair.rows) == 3
        for row in pair.rows:
            assert row.text and row.first.name and row.second.hand_class
        assert pair.owed == abs(pair.units) * 25
    assert sum(p.net_money for p in s.players) + s.rake == 0
    assert sum(p.net_units for p in s.players) == 0
    for p in s.players:
        assert p.net_money == p.net_units * 25  # no caps without stacks, no rake in western
        assert len(p.rows) == 3 and p.text


def test_cards_are_returned_canonical(client: SettlementClient) -> None:
    request = table("one-six", players="AB")
    request["players"][0]["arrangement"]["front"] = ["as", "A♦", "2C"]
    s = client.settle(request).settlement
    assert list(s.players[0].rows[0].cards) == ["As", "Ad", "2c"]


def test_inline_profile_from_get_profile_round_trips(client: SettlementClient) -> None:
    fetched = client.get_profile("western")
    assert fetched.summary.source == "builtin"
    profile = fetched.profile
    profile.money.unit_value = 7
    profile.name = "house-7"
    request = request_from_json(table("western"))
    request.preset = ""
    request.profile.CopyFrom(profile)
    s = client.settle(request).settlement
    assert s.profile.name == "house-7" and s.profile.source == "inline"
    assert s.unit_value == 7
    assert s.profile.digest != fetched.summary.digest


def test_profile_overrides_apply_on_top_of_a_preset(client: SettlementClient) -> None:
    base = client.settle(table("one-six", players="AB")).settlement
    doubled = client.settle(
        table("one-six", players="AB", profileOverrides={"scoring": {"rowUnit": 2}})
    ).settlement
    assert doubled.profile.source == "builtin+overrides"
    assert base.players[0].net_units != 0
    # 1-6 with row unit 2: rows pay double, the scoop bonus stays 3.
    for b, d in zip(base.pairs, doubled.pairs, strict=True):
        rows = sum(r.units for r in b.rows)
        assert d.units == b.units + rows


# --------------------------------------------------------------------------- other RPCs


def test_validate_payouts_flags_exactly_the_wrong_player(client: SettlementClient) -> None:
    request = table("two-four")
    expected = {p.player_id: p.net_money for p in client.settle(request).settlement.players}
    ok = client.validate_payouts(request, expected)
    assert ok.all_match and all(c.matches for c in ok.players)
    wrong = dict(expected)
    wrong["C"] += 1
    report = client.validate_payouts(request, wrong)
    assert not report.all_match
    flagged = [c.player_id for c in report.players if not c.matches]
    assert flagged == ["C"]
    c = next(c for c in report.players if c.player_id == "C")
    assert c.difference == 1 and c.expected == expected["C"] and c.explanation


def test_validate_payouts_per_pair(client: SettlementClient) -> None:
    request = table("two-four")
    s = client.settle(request).settlement
    nets = {p.player_id: p.net_money for p in s.players}
    first = s.pairs[0]
    good = first.paid if first.payee == first.first else -first.paid
    report = client.validate_payouts(request, nets, {(first.first, first.second): good + 100})
    assert not report.all_match
    assert len(report.pairs) == 1 and report.pairs[0].difference == 100
    assert any("Back" in line or "Front" in line for line in report.pairs[0].explanation)


def test_validate_payouts_rejects_unknown_players(client: SettlementClient) -> None:
    with pytest.raises(SettlementError) as e:
        client.validate_payouts(table("two-four"), {"A": 0, "B": 0, "C": 0, "D": 0, "Z": 5})
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "proposed[Z]" in violations(e)


def test_evaluate_arrangement(client: SettlementClient) -> None:
    e = client.evaluate({"preset": "ofc", "arrangement": ARRANGEMENTS["B"]})
    assert [profile_pb2.HandClass.Name(r.hand_class) for r in e.rows] == [
        "HAND_CLASS_PAIR",
        "HAND_CLASS_FULL_HOUSE",
        "HAND_CLASS_STRAIGHT_FLUSH",
    ]
    assert not e.fouled
    # OFC table E: front KK 8, middle full house 12, back straight flush 15.
    assert [r.royalty for r in e.rows] == [8, 12, 15] and e.royalty_total == 35
    assert e.fantasyland.qualifies and e.fantasyland.cards == 15
    fouled = client.evaluate(
        {
            "preset": "ofc",
            "arrangement": {
                "front": ["Kc", "Kd", "2d"],
                "middle": ARRANGEMENTS["B"]["back"],
                "back": ARRANGEMENTS["B"]["middle"],
            },
        }
    )
    assert fouled.fouled and list(fouled.foul_reasons) == [pb.FOUL_REASON_MIDDLE_ABOVE_BACK]
    assert not fouled.fantasyland.qualifies


def test_evaluate_finds_naturals(client: SettlementClient) -> None:
    dragon = ["2s", "3h", "4d", "5c", "6s", "7h", "8d", "9c", "Ts", "Jh", "Qd", "Kc", "As"]
    e = client.evaluate({"preset": "western", "cards": dragon})
    assert "DRAGON" in e.naturals and next(iter(e.playable_naturals)) == "DRAGON"
    assert not e.rows


def test_list_and_get_profiles(client: SettlementClient) -> None:
    listing = client.list_profiles()
    names = [p.name for p in listing.profiles]
    assert names == sorted(
        [
            "one-six",
            "classic-1-6",
            "one-two",
            "two-four",
            "western",
            "eastern",
            "ofc",
            "ofc-descubierto",
            "shisanshui",
        ]
    )
    assert all(len(p.digest) == 64 and p.source == "builtin" for p in listing.profiles)
    got = client.get_profile("shisanshui")
    assert json_format.MessageToDict(got.profile)["scoring"]["scoopMultiplier"] == 2
    assert profile_to_dict(load_preset("shisanshui"))["scoring"]["scoopMultiplier"] == 2
    with pytest.raises(SettlementError) as e:
        client.get_profile("no-such-profile")
    assert e.value.code is grpc.StatusCode.NOT_FOUND
    assert (e.value.reason, e.value.domain) == ("PROFILE_NOT_FOUND", "cpsettle.v1")
    assert e.value.resource_type == "cpsettle.v1.RuleProfile"
    assert e.value.resource_name == "no-such-profile"
    with pytest.raises(SettlementError) as e:
        client.get_profile("p" * 5000)  # the name in the ResourceInfo is clipped
    assert e.value.resource_name.startswith("ppp") and len(e.value.resource_name) <= 100


def test_health(client: SettlementClient) -> None:
    assert client.health() == "SERVING"
    assert client.health("cpsettle.v1.SettlementService") == "SERVING"
    assert client.health("liveness") == "SERVING"


# --------------------------------------------------------------------------- invalid input


def _player(request: dict[str, Any], i: int) -> dict[str, Any]:
    player: dict[str, Any] = request["players"][i]
    return player


def test_malformed_card(client: SettlementClient) -> None:
    r = table()
    _player(r, 0)["arrangement"]["front"][2] = "Xx"
    assert "players[0].arrangement.front[2]" in reject(client, r)


def test_duplicated_card_anywhere(client: SettlementClient) -> None:
    r = table(deadCards=["As"])
    found = reject(client, r)
    assert "already used at players[0].arrangement.front[0]" in found["deadCards[0]"]


def test_rows_of_the_wrong_size(client: SettlementClient) -> None:
    r = table()
    _player(r, 1)["arrangement"]["middle"].pop()
    found = reject(client, r)
    assert "must hold 5 cards" in found["players[1].arrangement.middle"]


@pytest.mark.parametrize("count", [1, 5])
def test_player_count(client: SettlementClient, count: int) -> None:
    r = table(players="ABCD")
    if count == 1:
        r["players"] = r["players"][:1]
    else:
        r["players"].append({"playerId": "E", "seat": 9, "surrender": True})
    assert "players" in reject(client, r)


def test_repeated_seat_and_player_id(client: SettlementClient) -> None:
    r = table()
    _player(r, 1)["seat"] = 1
    _player(r, 2)["playerId"] = "A"
    found = reject(client, r)
    assert "players[1].seat" in found and "players[2].playerId" in found


def test_unknown_preset(client: SettlementClient) -> None:
    found = reject(client, table("no-such-preset"))
    assert "unknown preset" in found["preset"]


def test_inconsistent_inline_profile(client: SettlementClient) -> None:
    profile = profile_to_dict(load_preset("classic-1-6"))
    profile["scoring"]["rowUnit"] = -1
    # 99: a hand class this schema doesn't have (an open enum carries the number through)
    profile["royalties"]["table"].append({"row": "ROW_BACK", "handClass": 99, "units": 1})
    profile["royalties"]["table"].append(copy.deepcopy(profile["royalties"]["table"][0]))
    profile["royalties"]["table"].append(
        {"row": "ROW_FRONT", "handClass": "HAND_CLASS_FLUSH", "units": 1}
    )
    r = table()
    del r["preset"]
    r["profile"] = profile
    found = reject(client, r)
    assert "profile.scoring.rowUnit" in found
    assert any(
        reason.startswith("got 99, which is not one of HAND_CLASS_HIGH_CARD")
        for reason in found.values()
    )
    assert any("duplicates the royalty entry" in reason for reason in found.values())
    assert any("cannot make FLUSH" in reason for reason in found.values())


def test_inline_profile_with_a_field_the_schema_does_not_know(client: SettlementClient) -> None:
    request = request_from_json(table())
    request.preset = ""
    known = profile_pb2.RuleProfile()
    json_format.ParseDict(profile_to_dict(load_preset("one-six")), known)
    # field number 99, varint 1: a field from some other schema
    request.profile.ParseFromString(known.SerializeToString() + b"\x98\x06\x01")
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "profile" in violations(e)


def test_surrender_not_allowed_and_with_a_natural(client: SettlementClient) -> None:
    r = table("one-six")
    _player(r, 0).pop("arrangement")
    _player(r, 0)["surrender"] = True
    assert "players[0].surrender" in reject(client, r)
    r = table("western")
    _player(r, 0).pop("arrangement")
    _player(r, 0).update(surrender=True, declaredNatural="DRAGON")
    assert "players[0]" in reject(client, r)


def test_negative_stack_and_bad_button(client: SettlementClient) -> None:
    r = table(buttonSeat=-2)
    _player(r, 3)["stack"] = -5
    found = reject(client, r)
    assert "players[3].stack" in found and "buttonSeat" in found


def test_unknown_natural_declaration(client: SettlementClient) -> None:
    r = table("western")
    p = _player(r, 0)
    cards = [c for row in p.pop("arrangement").values() for c in row]
    p.update(cards=cards, declaredNatural="FIVE_ACES")
    assert "not a known natural" in reject(client, r)["players[0].declaredNatural"]


def test_every_violation_is_reported_at_once(client: SettlementClient) -> None:
    r = table(buttonSeat=-1)
    _player(r, 0)["arrangement"]["front"][0] = "1x"
    _player(r, 1)["seat"] = 1
    _player(r, 2)["stack"] = -1
    assert len(reject(client, r)) >= 4
    with pytest.raises(SettlementError) as e:
        client.settle(r)
    # the ErrorInfo beside the BadRequest: the reason, and the violations' codes (no text)
    assert (e.value.reason, e.value.domain) == ("INVALID_REQUEST", "cpsettle.v1")
    assert e.value.metadata == {
        "violationCodes": "button_seat,duplicate_seat_or_id,malformed_card,stack",
        "violationCount": str(len(e.value.violations)),
    }


def test_bytes_that_do_not_parse_are_invalid_argument(server: Any) -> None:
    channel = grpc.insecure_channel(server.address)
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        "/cpsettle.v1.SettlementService/Settle", request_serializer=None, response_deserializer=None
    )
    for garbage in (b"\xff\xff\xff\xff", b"\x52\x05abc", bytes(range(256))):
        with pytest.raises(grpc.RpcError) as e:
            call(garbage, timeout=5)
        assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    channel.close()


def test_oversized_request_is_resource_exhausted(client: SettlementClient) -> None:
    r = table()
    r["handId"] = "x" * (70 * 1024)  # the test server's limit is 64 KiB
    with pytest.raises(SettlementError) as e:
        client.settle(r)
    assert e.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    # refused by the service (within twice its limit), so with its reason: not AT_CAPACITY
    assert (e.value.reason, e.value.domain) == ("MESSAGE_TOO_LARGE", "cpsettle.v1")
    assert client.health() == "SERVING"


def test_settle_request_json_matches_the_documented_form() -> None:
    doc = {
        "preset": "western",
        "unitValue": 100,
        "buttonSeat": 2,
        "players": [
            {"playerId": "A", "seat": 1, "arrangement": {"front": ["As", "Ad", "2c"]}, "stack": 500}
        ],
    }
    msg = request_from_json(doc)
    assert isinstance(msg, pb.SettleRequest)
    assert msg.unit_value == 100 and msg.players[0].stack == 500


def test_a_request_with_fields_the_schema_does_not_know_is_refused(
    client: SettlementClient,
) -> None:
    request = request_from_json(table())
    raw = request.SerializeToString() + b"\x98\x06\x01"  # field 99 at the top level
    request = pb.SettleRequest.FromString(raw)
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "request" in violations(e)
    request = request_from_json(table())
    player = pb.Player.FromString(request.players[2].SerializeToString() + b"\x98\x06\x01")
    request.players[2].CopyFrom(player)
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    assert "players[2]" in violations(e)


def test_reflection_is_off_by_default_and_on_behind_the_setting(
    tmp_path: Path, server: Any
) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from tests.conftest import start_server, stop_server

    def services(address: str) -> list[reflection_pb2.ServerReflectionResponse]:
        with grpc.insecure_channel(address) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            info: grpc.StreamStreamMultiCallable[
                reflection_pb2.ServerReflectionRequest, reflection_pb2.ServerReflectionResponse
            ] = stub.ServerReflectionInfo  # type: ignore[assignment]  # typeshed: Incomplete
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            return list(info(iter([request]), timeout=5))

    with pytest.raises(grpc.RpcError) as e:
        services(server.address)
    assert e.value.code() is grpc.StatusCode.UNIMPLEMENTED
    handle = start_server(tmp_path / "r.sock", reflection=True)
    try:
        names = {s.name for s in services(handle.address)[0].list_services_response.service}
    finally:
        stop_server(handle)
    assert "cpsettle.v1.SettlementService" in names and "grpc.health.v1.Health" in names


def test_repeated_overrides_give_the_same_profile_digest(client: SettlementClient) -> None:
    request = table("western", profileOverrides={"caps": {"wins": False}})
    first = client.settle(request).settlement
    second = client.settle(request).settlement
    assert first.profile.digest == second.profile.digest
    assert first.profile.source == "builtin+overrides"
    changed = table(
        "western", profileOverrides={"caps": {"wins": True}, "rake": {"mode": "RAKE_MODE_NONE"}}
    )
    assert client.settle(changed).settlement.profile.digest != first.profile.digest


# --------------------------------------------------------------------------- house rules (§16)


def test_house_rules_over_the_wire(client: SettlementClient) -> None:
    """A joker golden table through the real server: the row names what the joker stands for;
    an inline profile whose natural the vocabulary cannot check is INVALID_ARGUMENT naming it."""
    case = json.loads(next(GOLDEN.glob("404-*.json")).read_text())
    s = client.settle(case["request"]).settlement
    a = next(p for p in s.players if p.player_id == "A")
    assert list(a.rows[0].cards) == ["Qs", "Xj", "2c"] and list(a.rows[0].joker_cards) == ["Qh"]
    assert a.rows[0].name == "Pair of queens, two kicker" and a.net_units == 6
    request = request_from_json(table("western"))
    request.preset = ""
    profile = profile_to_dict(load_preset("western"))
    profile["naturals"]["table"].append(
        {"natural": "ONE_RED", "rank": 9, "units": 24, "definition": {"sameSuit": 14}}
    )
    profile["naturals"]["equalRank"] = "NATURAL_TIE_COMPARE_CARDS"
    json_format.ParseDict(profile, request.profile)
    with pytest.raises(SettlementError) as e:
        client.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 13" in violations(e)["profile.naturals.table[7].definition.sameSuit"]
