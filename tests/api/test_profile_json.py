"""An inline profile's JSON form is read by a direct walk of the message (``mapping.
profile_dict_from_proto``): it must be exactly what ``json_format.MessageToDict`` gives, which
the domain's reader was written against, and refuse fields this schema doesn't know."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from cpsettle.v1 import profile_pb2
from cpsettle_service.api import mapping
from cpsettle_service.domain.errors import InvalidInput
from tests.hardening.hostile import maximal_profile


def as_proto(data: dict[str, object]) -> profile_pb2.RuleProfile:
    return json_format.ParseDict(data, profile_pb2.RuleProfile())


@pytest.mark.parametrize("n", [0, 1, 999])
def test_a_maximal_profile_reads_as_json_format_writes_it(n: int) -> None:
    message = as_proto(maximal_profile(n))
    assert mapping.profile_dict_from_proto(message) == json_format.MessageToDict(message)


def test_edge_values_read_as_json_format_writes_them() -> None:
    message = as_proto(
        {
            "name": "edge ✓",
            "scoring": {},
            "money": {"unitValue": str(-(2**63))},
            "rake": {"perPlayerFee": "0", "commissionCap": str(2**63 - 1), "commissionBps": 0},
            "ranking": {"suitOrder": ["SUIT_SPADE", "SUIT_CLUB"], "suitOrderTiebreak": False},
            "naturals": {
                "table": [
                    {
                        "natural": "house",
                        "definition": {
                            "rankGroups": [3, 3, 3, 4],
                            "ranksIn": ["A", "K"],
                            "rows": {},
                        },
                    }
                ]
            },
        }
    )
    # numbers this schema has no name for: they stay numbers
    message.royalties.mode = profile_pb2.RoyaltyMode.ValueType(99)
    message.ranking.suit_order.append(profile_pb2.Suit.ValueType(77))
    got = mapping.profile_dict_from_proto(message)
    assert got == json_format.MessageToDict(message)
    assert got["royalties"] == {"mode": 99} and got["scoring"] == {}
    assert got["money"] == {"unitValue": str(-(2**63))}


def test_unknown_fields_anywhere_are_refused_where_they_are() -> None:
    message = as_proto(maximal_profile(5))
    message.royalties.table[3].MergeFromString(b"\xf8\x06\x01")  # field 111, varint 1
    with pytest.raises(InvalidInput) as refused:
        mapping.profile_dict_from_proto(message)
    assert [v.field for v in refused.value.violations] == ["profile.royalties.table[3]"]
