"""The wire writer on hands no golden table has, through the real server and the project's own
client, against the protobuf runtime's own serialization of the same settlement: a row that
holds two jokers (``EvaluatedRow.joker_cards`` repeated), and a false natural declared with 13
loose cards (fouled, with no rows), which loses every row to arranged hands from either seat of
a pair (``RowResult`` with only the other player's row).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from google.protobuf import json_format

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient
from cpsettle_service.api import mapping
from cpsettle_service.api.servicer import ProfileResolver
from cpsettle_service.domain.settle import settle
from cpsettle_service.profile_files import builtin_registry
from tests.support.reference_proto import settlement_to_proto

RESOLVER = ProfileResolver(builtin_registry())
# What the sealer writes (ids, digests, time, signature): not the settlement's content.
SealField = Literal[
    "settlement_id",
    "request_digest",
    "engine_version",
    "engine_digest",
    "settlement_digest",
    "issued_at",
    "signature",
]
SEAL: tuple[SealField, ...] = get_args(SealField)


def served_and_reference(
    client: SettlementClient, request: dict[str, Any]
) -> tuple[pb.Settlement, bytes, bytes]:
    """(the served settlement, its content's bytes, the runtime's bytes of the same content)."""
    message = json_format.ParseDict(request, pb.SettleRequest())
    served = client.settle(message).settlement
    table, choice = mapping.request_to_domain(message)
    profile, digest, source = RESOLVER.resolve(choice)
    s = settle(table, profile)
    reference = settlement_to_proto(s, pb.Settlement(), digest, source)
    reference.currency = s.currency
    content = pb.Settlement()
    content.CopyFrom(served)  # unknown fields (bytes the runtime would not write) come along
    for field in SEAL:
        content.ClearField(field)
    return (
        served,
        content.SerializeToString(deterministic=True),
        reference.SerializeToString(deterministic=True),
    )


def arranged(pid: str, seat: int, front: str, middle: str, back: str) -> dict[str, Any]:
    return {
        "playerId": pid,
        "seat": seat,
        "arrangement": {"front": front.split(), "middle": middle.split(), "back": back.split()},
    }


def test_a_row_with_two_jokers_lists_both(client: SettlementClient) -> None:
    request = {
        "handId": "two-jokers",
        "preset": "shisanshui",
        "profileOverrides": {"deck": {"jokers": 2}},
        "players": [
            arranged("A", 1, "Qs Qh 2c", "Ks Kh 5d 5c 9s", "Xj Xj 5h 9h Th"),
            arranged("C", 2, "3h 4c 7c", "8c 8d 9c 9d Tc", "Qc Qd Js Jc Jd"),
        ],
    }
    served, content, reference = served_and_reference(client, request)
    assert content == reference
    back = served.players[0].rows[2]
    assert back.row == profile_pb2.ROW_BACK
    assert list(back.joker_cards) == ["Ah", "Jh"]  # the ace-high heart flush
    assert list(served.pairs[0].rows[2].first.joker_cards) == ["Ah", "Jh"]


def test_a_false_declaration_without_rows_loses_every_row_from_either_seat(
    client: SettlementClient,
) -> None:
    request = {
        "handId": "false-dragon",
        "preset": "shisanshui",
        "players": [
            arranged("A", 1, "As Ad 2c", "3c 3d 4h 4s 5c", "6s 7s 8s 9s Js"),
            {
                "playerId": "B",
                "seat": 2,
                "declaredNatural": "DRAGON",
                "cards": "Kc Kd 2d 6h 6d 6c 2h 2s Th Jh Qh Kh 9h".split(),
            },
            arranged("C", 3, "3h 4c 7c", "8c 8d 9c 9d Tc", "Qc Qd Qs Jc Jd"),
        ],
    }
    served, content, reference = served_and_reference(client, request)
    assert content == reference
    b = next(p for p in served.players if p.player_id == "B")
    assert b.status == pb.PLAYER_STATUS_FOULED and len(b.rows) == 0
    assert list(b.foul_reasons) == [pb.FOUL_REASON_FALSE_DECLARATION]
    pairs = {(pr.first, pr.second): pr for pr in served.pairs}
    for other, b_is_first in (("A", False), ("C", True)):
        pr = pairs[("B", other) if b_is_first else (other, "B")]
        assert pr.kind == pb.PAIR_KIND_FOUL
        assert [r.winner for r in pr.rows] == [other] * 3
        for r in pr.rows:
            # the fouled hand has no row to show; the other hand's row is there
            assert r.HasField("first") != b_is_first
            assert r.HasField("second") == b_is_first
