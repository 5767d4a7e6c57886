"""What a run of consecutive lines found: hands matched to their results, tallied by name.

An ``Outcome`` is made where a batch is settled (a worker process, a stream's reader thread),
travels back to the command, and merges with the outcomes before it in line order; the report
is built from the merged one.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cpsettle.v1 import settlement_pb2 as pb

from ..client import SettlementError
from .reading import Hand

NO_ID = "(none)"  # the table or dealer of a hand that names none
HAND_VIEWS = 200  # hands with differences drawn in full in the HTML report (audit/html.py)


def money(amount: int) -> str:
    """Money in the JSON report as protobuf's JSON writes int64 in the settlement it comes from:
    the integer minor units as a string ("-300"), exact in every JSON reader (README, "Money in
    JSON"). The outcome keeps integers; only the report's JSON writes strings."""
    return str(amount)


def difference_json(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``differences`` entry as the JSON report writes it: its money as strings."""
    out = dict(
        entry,
        unitValue=money(entry["unitValue"]),
        overpaid=money(entry["overpaid"]),
        underpaid=money(entry["underpaid"]),
    )
    out["players"] = [
        dict(
            p,
            expected=money(p["expected"]),
            paid=money(p["paid"]),
            difference=money(p["difference"]),
        )
        for p in entry["players"]
    ]
    return out


class AuditFailure(Exception):
    """The audit could not go on (the server failed): the partial report is still written."""


@dataclass(slots=True)
class Tally:
    """One table's or one dealer's count: hands settled, hands with differences, invalid hands,
    and the money overpaid and underpaid on them (minor units)."""

    hands: int = 0
    differences: int = 0
    invalid: int = 0
    overpaid: int = 0
    underpaid: int = 0

    def add(self, other: Tally) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict[str, int | str]:
        """The row of ``byTable`` / ``byDealer`` in the JSON report (money as strings)."""
        return {
            "hands": self.hands,
            "handsWithDifferences": self.differences,
            "invalidHands": self.invalid,
            "overpaid": money(self.overpaid),
            "underpaid": money(self.underpaid),
        }


@dataclass
class Outcome:
    """What lines ``first_line``..``last_line`` found; outcomes merge in line order."""

    first_line: int = 0
    last_line: int = 0
    read: int = 0
    checked: int = 0
    unchecked: int = 0  # settled, no recorded payouts
    differences: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, Tally] = field(default_factory=dict)
    dealers: dict[str, Tally] = field(default_factory=dict)
    over: int = 0
    under: int = 0
    # the settlements of the first HAND_VIEWS hands with differences, by line number (as text:
    # the binary settlement in base64, so a checkpoint keeps them as JSON): the HTML report's
    # hand views; not part of the JSON report
    settlements: dict[str, str] = field(default_factory=dict)

    def merge(self, later: Outcome) -> None:
        """Add the outcome of the lines right after these."""
        self.last_line = later.last_line
        self.read += later.read
        self.checked += later.checked
        self.unchecked += later.unchecked
        self.differences.extend(later.differences)
        self.invalid.extend(later.invalid)
        self.over += later.over
        self.under += later.under
        for line, settlement in later.settlements.items():
            if len(self.settlements) >= HAND_VIEWS:
                break
            self.settlements[line] = settlement
        for mine, theirs in ((self.tables, later.tables), (self.dealers, later.dealers)):
            for key, tally in theirs.items():
                mine.setdefault(key, Tally()).add(tally)

    def _tallies(self, hand: Hand) -> Iterator[Tally]:
        """The hand's table's tally and its dealer's."""
        for key, book in (
            (hand.table_id or NO_ID, self.tables),
            (hand.dealer_id or NO_ID, self.dealers),
        ):
            tally = book.get(key)
            if tally is None:
                tally = book[key] = Tally()
            yield tally

    def _ids(self, hand: Hand, ref: str) -> dict[str, Any]:
        return {
            "line": hand.line,
            "ref": ref,
            "handId": hand.hand_id,
            "tableId": hand.table_id,
            "roundId": hand.round_id,
            "dealerId": hand.dealer_id,
        }

    def add_matched(self, table_id: str, dealer_id: str, checked: bool) -> None:
        """A hand settled the quick way (audit/quick.py): every recorded payout matched its
        net, or (``checked`` false) none was recorded. Counted as ``add_result`` counts it."""
        self.read += 1
        if checked:
            self.checked += 1
        else:
            self.unchecked += 1
        for key, book in ((table_id or NO_ID, self.tables), (dealer_id or NO_ID, self.dealers)):
            tally = book.get(key)
            if tally is None:
                tally = book[key] = Tally()
            tally.hands += 1

    def add_invalid(
        self, hand: Hand, ref: str, code: str, message: str, violations: Iterable[tuple[str, str]]
    ) -> None:
        entry = self._ids(hand, ref)
        entry.update(
            code=code,
            message=message,
            violations=[{"field": f, "reason": r} for f, r in violations],
        )
        self.invalid.append(entry)
        for tally in self._tallies(hand):
            tally.invalid += 1

    def add_result(self, hand: Hand, ref: str, result: pb.AuditResult) -> None:
        if result.WhichOneof("outcome") != "settlement":
            err = SettlementError.from_status(result.error)
            self.add_invalid(
                hand, ref, err.code.name, err.message, [(v.field, v.reason) for v in err.violations]
            )
            return
        tallies = tuple(self._tallies(hand))
        for tally in tallies:
            tally.hands += 1
        if not hand.paid:
            self.unchecked += 1
            return
        self.checked += 1
        if result.all_match:
            return
        over = under = 0
        players = []
        for c in result.checks:
            entry: dict[str, Any] = {
                "playerId": c.player_id,
                "expected": c.expected,
                "paid": c.proposed,
                "difference": c.difference,
            }
            if c.difference:
                entry["explanation"] = list(c.explanation)
            if c.difference > 0:
                over += c.difference
            else:
                under -= c.difference
            players.append(entry)
        s = result.settlement
        diff = self._ids(hand, ref)
        diff.update(
            profile=s.profile.name,
            unitValue=s.unit_value,
            currency=s.currency or "XXX",
            overpaid=over,
            underpaid=under,
            players=players,
        )
        if s.settlement_id:
            diff["settlementId"] = s.settlement_id
        self.differences.append(diff)
        if len(self.settlements) < HAND_VIEWS:
            self.settlements[str(hand.line)] = base64.b64encode(
                s.SerializeToString(deterministic=True)
            ).decode("ascii")
        self.over += over
        self.under += under
        for tally in tallies:
            tally.differences += 1
            tally.overpaid += over
            tally.underpaid += under

    def add_batch(self, prefix: str, hands: list[Hand], result: pb.SettleStreamResponse) -> None:
        """Take one batch's results; every hand of ``hands`` is accounted for, in order."""
        sent = sum(1 for h in hands if h.sent)
        results = result.results
        if len(results) != sent:
            raise AuditFailure(f"the server answered {len(results)} results for {sent} hands")
        it = iter(results)
        for hand in hands:
            ref = f"{prefix}:{hand.line}"
            self.read += 1
            if hand.problem is not None:
                code, message, violations = hand.problem
                self.add_invalid(hand, ref, code, message, violations)
                continue
            r = next(it)
            if r.ref != ref:
                raise AuditFailure(f"the server answered {r.ref!r} where {ref!r} was expected")
            self.add_result(hand, ref, r)
