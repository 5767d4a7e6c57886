"""Reading history: a JSON line into a ``Hand`` and an ``AuditItem`` of a ``SettleStreamRequest``.

A line that cannot be read becomes a hand with a ``problem`` (an invalid hand in the report),
never an exception: the audit goes on.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb

from .. import strict_json

RECORDED_FIELD = "recordedPayouts"

_IDS = ("handId", "tableId", "roundId", "dealerId")

# (first line, last line, the lines): a run of lines settled together.
Chunk = tuple[int, int, list[tuple[int, bytes]]]


def read_lines(path: str, start_line: int = 1) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of every non-blank line from ``start_line`` on."""
    with contextlib.nullcontext(sys.stdin.buffer) if path == "-" else open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if number < start_line or not raw.strip():
                continue
            yield number, raw


def count_lines(path: str) -> int:
    """Lines in the file (a last line without a newline counts), read in binary chunks."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


class Hand:
    """One line of history, read: its ids, and where its item sits in the batch (or why not)."""

    __slots__ = ("dealer_id", "hand_id", "line", "paid", "problem", "round_id", "sent", "table_id")

    def __init__(self, line: int) -> None:
        self.line = line
        self.hand_id = self.table_id = self.round_id = self.dealer_id = ""
        self.sent = False  # an AuditItem for it is in the batch
        self.paid = False  # recorded payouts came with it
        self.problem: tuple[str, str, list[tuple[str, str]]] | None = None


_ID_PATTERNS = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.){0,128})"') for key in _IDS
}


def _salvage_ids(hand: Hand, raw: bytes) -> None:
    """A line cut short or garbled: still name its hand, table and dealer when they show."""
    found = []
    for key in _IDS:
        m = _ID_PATTERNS[key].search(raw)
        try:
            found.append(json.loads(b'"' + m.group(1) + b'"') if m else "")
        except ValueError:
            found.append("")
    hand.hand_id, hand.table_id, hand.round_id, hand.dealer_id = found


def _describe(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), "a number")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a ProposedPayout's net_money


def _amount(value: Any) -> int | None:
    """An integer amount (or digits in a string) within int64; None otherwise (an amount past
    int64 once crashed the audit where the ``ProposedPayout`` was built)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            return None
    if isinstance(value, int) and INT64_MIN <= value <= INT64_MAX:
        return value
    return None


def prepare(ref_prefix: str, line: int, raw: bytes, batch: pb.SettleStreamRequest) -> Hand:
    """Read one line into ``batch`` (an ``AuditItem``) or into the hand's problem."""
    hand = Hand(line)

    def invalid(field: str, reason: str) -> Hand:
        hand.problem = ("INVALID_ARGUMENT", f"{field}: {reason}", [(field, reason)])
        return hand

    try:
        data = strict_json.loads(raw)
    except UnicodeDecodeError:
        return invalid("line", "is not UTF-8 text")
    except strict_json.DuplicateKey as e:
        _salvage_ids(hand, raw)
        return invalid("line", str(e))
    except ValueError as e:
        _salvage_ids(hand, raw)
        return invalid("line", f"is not JSON: {e}")
    if not isinstance(data, dict):
        return invalid("line", f"must be a JSON object (a SettleRequest), got {_describe(data)}")
    ids = [data.get(k) for k in _IDS]
    hand.hand_id, hand.table_id, hand.round_id, hand.dealer_id = (
        v if isinstance(v, str) else "" for v in ids
    )
    recorded = data.pop(RECORDED_FIELD, None)
    paid: list[tuple[str, int]] = []
    if recorded is not None:
        if not isinstance(recorded, dict):
            return invalid(
                RECORDED_FIELD,
                "must be an object of player id: net money in minor "
                f"units, got {_describe(recorded)}",
            )
        problems = []
        for pid, value in recorded.items():
            amount = _amount(value)
            if amount is None:
                problems.append(
                    (
                        f"{RECORDED_FIELD}.{pid}",
                        f"must be an integer amount in minor units, got {value!r}",
                    )
                )
            else:
                paid.append((pid, amount))
        if problems:
            hand.problem = (
                "INVALID_ARGUMENT",
                "; ".join(f"{f}: {r}" for f, r in problems),
                problems,
            )
            return hand
    item = batch.items.add()
    try:
        json_format.ParseDict(data, item.request)
    except (json_format.ParseError, TypeError, ValueError) as e:
        del batch.items[-1]
        return invalid("request", "not a valid SettleRequest: " + " ".join(str(e).split()))
    item.ref = f"{ref_prefix}:{line}"
    for pid, amount in paid:
        item.paid.add(player_id=pid, net_money=amount)
    hand.sent = True
    hand.paid = bool(paid)
    return hand


def chunks(lines: Iterable[tuple[int, bytes]], size: int) -> Iterator[Chunk]:
    """(first line, last line, lines) of ``size`` non-blank lines at a time."""
    batch: list[tuple[int, bytes]] = []
    for number, raw in lines:
        batch.append((number, raw))
        if len(batch) >= size:
            yield batch[0][0], number, batch
            batch = []
    if batch:
        yield batch[0][0], batch[-1][0], batch
