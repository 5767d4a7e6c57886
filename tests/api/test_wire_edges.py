"""The wire writer's edges against the protobuf runtime: varints at the lookup table's ends,
lengths at the one-to-two-to-three byte steps, empty strings, repeated strings with empty items.

Writers are built when ``wire`` is imported; these build them at test time too, so a change in
a writer's factory (not only in the writers made at import) shows here.
"""

from __future__ import annotations

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service import wireformat

EDGES = [
    0,
    1,
    127,
    128,
    16383,
    16384,
    16385,
    -1,
    -16383,
    -16384,
    -16385,
    2**31 - 1,
    -(2**31),
    2**63 - 1,
    -(2**63),
]


@pytest.mark.parametrize("value", EDGES)
def test_varint_is_the_runtimes(value: int) -> None:
    encoded = pb.PlayerResult(net_units=value).SerializeToString()  # tag 0x60, then the varint
    assert wireformat.varint(value) == (encoded[1:] if value else b"\x00")


@pytest.mark.parametrize("length", [0, 1, 127, 128, 16383, 16384, 16385, 2**21])
def test_text_field_at_each_length_step(length: int) -> None:
    text = "x" * length
    assert wireformat.text_field(17)(text) == pb.PlayerResult(text=text).SerializeToString()


@pytest.mark.parametrize("length", [0, 125, 126, 16380, 16381, 16382, 2**21])
def test_message_field_at_each_length_step(length: int) -> None:
    inner = pb.FantasylandResult(text="y" * length)
    body = inner.SerializeToString()
    expected = pb.PlayerResult(fantasyland=inner).SerializeToString()
    assert wireformat.message_field(16)(body) == expected


def test_message_field_bodies_of_exactly_16384_bytes() -> None:
    inner = pb.FantasylandResult(text="y" * 16381)  # tag 1 + length 2 + 16381 = 16384 bytes
    body = inner.SerializeToString()
    assert len(body) == 16384
    expected = pb.PlayerResult(fantasyland=inner).SerializeToString()
    assert wireformat.message_field(16)(body) == expected


@pytest.mark.parametrize("values", [[], ["a"], [""], ["a", "", "é", ""], ["z" * 16384]])
def test_repeated_text_field_keeps_empty_items(values: list[str]) -> None:
    expected = pb.Settlement(text=values).SerializeToString()
    assert wireformat.repeated_text_field(9)(values) == expected


@pytest.mark.parametrize("value", EDGES)
def test_int_field_factory_at_test_time(value: int) -> None:
    assert (
        wireformat.int_field(13)(value)
        == pb.PlayerResult(money_before_rake=value).SerializeToString()
    )
