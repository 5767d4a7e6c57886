"""Rules a house changes with ``profileOverrides`` on a preset, settled through the real server:
the royalty table's royal-flush fallback (RULES.md §14.2-14.3) and which natural a hand holding
several is settled with (§16.1, §16.2), each under a profile built from the overrides."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient


def arrangement(front: str, middle: str, back: str) -> dict[str, list[str]]:
    return {"front": front.split(), "middle": middle.split(), "back": back.split()}


def settle(
    client: SettlementClient,
    preset: str,
    overrides: dict[str, Any],
    a: dict[str, list[str]],
    b: dict[str, list[str]],
) -> pb.Settlement:
    return client.settle(
        {
            "handId": "h-overrides",
            "preset": preset,
            "profileOverrides": overrides,
            "players": [
                {"playerId": "A", "seat": 1, "arrangement": a},
                {"playerId": "B", "seat": 2, "arrangement": b},
            ],
        }
    ).settlement


def test_a_royal_flush_without_an_entry_is_priced_as_a_straight_flush(
    client: SettlementClient,
) -> None:
    """The ofc table replaced by one with straight-flush entries only: the back's royal flush
    takes the back's straight-flush entry, the middle's the middle's straight flush narrowed to
    ace high (the most specific entry, §14.3)."""
    table = [
        {"row": "ROW_BACK", "handClass": "HAND_CLASS_STRAIGHT_FLUSH", "units": 15},
        {"row": "ROW_MIDDLE", "handClass": "HAND_CLASS_STRAIGHT_FLUSH", "units": 30},
        {"row": "ROW_MIDDLE", "handClass": "HAND_CLASS_STRAIGHT_FLUSH", "rank": "A", "units": 45},
    ]
    s = settle(
        client,
        "ofc",
        {"royalties": {"table": table}},
        arrangement("2c 3d 4c", "Ah Kh Qh Jh Th", "As Ks Qs Js Ts"),
        arrangement("5c 6d 8h", "9c 9d 7s 7c 2d", "Kd Kc Ac Ad 5d"),
    )
    a = s.players[0]
    assert [(r.hand_class, r.royalty) for r in a.rows] == [
        (profile_pb2.HAND_CLASS_HIGH_CARD, 0),
        (profile_pb2.HAND_CLASS_ROYAL_FLUSH, 45),
        (profile_pb2.HAND_CLASS_ROYAL_FLUSH, 15),
    ]
    assert a.royalty_total == 60
    # ofc pays royalties always (ALWAYS); B takes the front, A the middle and back: 1-6 rows
    assert (a.net_units, s.players[1].net_units) == (61, -61)


# Three straights and three flushes at once (three straight flushes, which no table here plays)
BOTH = arrangement("2h 3h 4h", "5s 6s 7s 8s 9s", "Tc Jc Qc Kc Ac")
PLAIN = arrangement("5c 6d 8h", "9c 9d 7c 7d 2d", "Kd Ks Ad Ah 5d")


def natural_of_a(client: SettlementClient, table: list[dict[str, Any]], **naturals: Any) -> str:
    s = settle(
        client,
        "classic-1-6",
        {"naturals": {"requireDeclaration": False, "table": table, **naturals}},
        BOTH,
        PLAIN,
    )
    assert s.players[0].status == pb.PLAYER_STATUS_NATURAL
    return s.players[0].natural


def test_a_hand_with_two_naturals_of_one_rank_settles_with_the_one_worth_more(
    client: SettlementClient,
) -> None:
    assert (
        natural_of_a(
            client,
            [
                {"natural": "THREE_STRAIGHTS", "rank": 1, "units": 3},
                {"natural": "THREE_FLUSHES", "rank": 1, "units": 5},
            ],
        )
        == "THREE_FLUSHES"
    )
    # of equal units, the catalogue's order: three straights before three flushes
    assert (
        natural_of_a(
            client,
            [
                {"natural": "THREE_FLUSHES", "rank": 1, "units": 3},
                {"natural": "THREE_STRAIGHTS", "rank": 1, "units": 3},
            ],
        )
        == "THREE_STRAIGHTS"
    )
    # a house natural comes after the catalogue's, whatever the table's order
    assert (
        natural_of_a(
            client,
            [
                {
                    "natural": "LOW_TO_HIGH",
                    "rank": 1,
                    "units": 3,
                    "definition": {"distinctRanks": 13},
                },
                {"natural": "THREE_FLUSHES", "rank": 1, "units": 3},
            ],
        )
        == "THREE_FLUSHES"
    )


def test_a_house_definition_counts_quads_as_two_pairs_as_the_profile_says(
    client: SettlementClient,
) -> None:
    """§16.2 ``quadsAsTwoPairs`` holds for a house's own definitions as for the catalogue's:
    four aces fill two of the six pairs unless the profile says they do not."""
    quads = arrangement("2c Ts Th", "Qs Qh Js Jh Ks", "As Ah Ad Ac Kh")
    plain = arrangement("3c 4d 6h", "9c 9d 7c 7d 2d", "Kd Kc 8d 8c 5d")
    table = [
        {
            "natural": "PAIRS_SIX",
            "rank": 1,
            "units": 4,
            "definition": {"rankGroups": [2, 2, 2, 2, 2, 2]},
        }
    ]
    both_ways = {}
    for counted in (True, False):
        s = settle(
            client,
            "classic-1-6",
            {"naturals": {"requireDeclaration": False, "table": table, "quadsAsTwoPairs": counted}},
            quads,
            plain,
        )
        both_ways[counted] = (s.players[0].status, s.players[0].natural)
    assert both_ways == {
        True: (pb.PLAYER_STATUS_NATURAL, "PAIRS_SIX"),
        False: (pb.PLAYER_STATUS_REGULAR, ""),
    }


def test_a_profile_that_leaves_out_the_stay_keeps_the_default_stay(
    client: SettlementClient,
) -> None:
    """An inline Open-Face profile without ``fantasyland.stay``, or with it null (proto3 JSON:
    the default), keeps a player with four of a kind in the back in Fantasyland (RULES.md §11);
    one with only kings in front does not stay."""
    inline = json_format.MessageToDict(client.get_profile("ofc").profile)
    inline.update(name="house-ofc")
    without = {k: v for k, v in inline["fantasyland"].items() if k != "stay"}
    for fantasyland in (without, {**without, "stay": None}):
        s = client.settle(
            {
                "handId": "h-stay",
                "profile": {**inline, "fantasyland": fantasyland},
                "players": [
                    {
                        "playerId": "A",
                        "seat": 1,
                        "inFantasyland": True,
                        "arrangement": arrangement("4s 4h 2c", "9s Th Jd Qc Kc", "8s 8h 8d 8c 3s"),
                    },
                    {
                        "playerId": "B",
                        "seat": 2,
                        "inFantasyland": True,
                        "arrangement": arrangement("Kh Kd 5c", "As Ah 6s 6h 2d", "Ad Qd 9d 7d 3d"),
                    },
                ],
            }
        )
        assert [(p.fantasyland.qualifies, p.fantasyland.cards) for p in s.settlement.players] == [
            (True, 14),
            (False, 0),
        ]


def test_null_thresholds_read_as_left_out(client: SettlementClient) -> None:
    """A null entry threshold is the default (QQ or better enters); a null stay threshold is
    no threshold for that row (RULES.md §11: each condition may be switched off)."""
    s = settle(
        client,
        "ofc",
        {"fantasyland": {"entry": None, "stay": {"front": None, "middle": None}}},
        arrangement("4s 4h 4d", "9s Th Jd Qc Kc", "8s 8h 8d 8c 3s"),
        arrangement("Kh Kd 5c", "As Ah 6s 6h 2d", "Ad Qd 9d 7d 3d"),
    )
    # A holds front trips (the default entry's 17 cards), B enters with kings (15 cards)
    assert [(p.fantasyland.qualifies, p.fantasyland.cards) for p in s.players] == [
        (True, 17),
        (True, 15),
    ]
    a_in_fantasyland = client.settle(
        {
            "handId": "h-stay",
            "preset": "ofc",
            "profileOverrides": {"fantasyland": {"stay": {"front": None, "middle": None}}},
            "players": [
                {
                    "playerId": "A",
                    "seat": 1,
                    "inFantasyland": True,
                    "arrangement": arrangement("4s 4h 4d", "9s 9h 9d Qc Qd", "Ts Th Tc Jc Js"),
                },
                {
                    "playerId": "B",
                    "seat": 2,
                    "arrangement": arrangement("Kh Kd 5c", "Ah Ac 6s 6h 2d", "Ad Jd 8d 7d 3d"),
                },
            ],
        }
    )
    # front trips and a middle full house keep him no longer: only the back's quads would
    a = a_in_fantasyland.settlement.players[0]
    assert (a.status, a.fantasyland.qualifies) == (pb.PLAYER_STATUS_REGULAR, False)


def test_a_null_stay_is_the_default_stay_and_the_version_is_echoed(
    client: SettlementClient,
) -> None:
    """Overrides may null a part (proto3 JSON: its default): A, in Fantasyland with four of a
    kind in the back, stays. The settlement names the version the overrides give."""
    s = client.settle(
        {
            "handId": "h-stay",
            "preset": "ofc",
            "profileOverrides": {"version": "house-7", "fantasyland": {"stay": None}},
            "players": [
                {
                    "playerId": "A",
                    "seat": 1,
                    "inFantasyland": True,
                    "arrangement": arrangement("4s 4h 2c", "9s Th Jd Qc Kc", "8s 8h 8d 8c 3s"),
                },
                {
                    "playerId": "B",
                    "seat": 2,
                    "arrangement": arrangement("Kh Kd 5c", "As Ah 6s 6h 2d", "Ad Qd 9d 7d 3d"),
                },
            ],
        }
    )
    assert (s.settlement.profile.name, s.settlement.profile.version) == ("ofc", "house-7")
    assert (
        s.settlement.players[0].fantasyland.qualifies,
        s.settlement.players[0].fantasyland.cards,
    ) == (True, 14)
