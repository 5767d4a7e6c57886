"""Checking a dealer's proposed payouts against a settlement (the CheckPayouts call)."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Collector, ViolationCode
from .results import PairResult, Settlement


class PayoutCheck(NamedTuple):
    player_id: str
    expected: int
    proposed: int
    difference: int  # proposed - expected
    explanation: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return self.difference == 0


class PairCheck(NamedTuple):
    first: str
    second: str
    expected: int  # money for the first player after caps
    proposed: int
    difference: int
    explanation: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return self.difference == 0


class PayoutReport(NamedTuple):
    players: tuple[PayoutCheck, ...]
    pairs: tuple[PairCheck, ...]

    @property
    def all_match(self) -> bool:
        return all(c.matches for c in self.players) and all(c.matches for c in self.pairs)

    @property
    def mismatches(self) -> tuple[PayoutCheck, ...]:
        return tuple(c for c in self.players if not c.matches)


def pair_explanation(pair: PairResult) -> tuple[str, ...]:
    """The lines behind a pair's amount: rows, items, then the money and caps."""
    return tuple([r.text for r in pair.rows] + [i.text for i in pair.items] + [pair.text])


def check_payouts(
    settlement: Settlement,
    proposed: dict[str, int],
    proposed_pairs: dict[tuple[str, str], int] | None = None,
) -> PayoutReport:
    """Compare a dealer's proposed nets (and, optionally, per-pair amounts) with the settlement.

    Every player must have a proposal; unknown players or pairs are ``InvalidInput``.
    """
    errors = Collector()
    ids = [p.player_id for p in settlement.players]
    for pid in proposed:
        if pid not in ids:
            errors.add(
                f"proposed[{pid}]", f"{pid!r} is not a player at this table", ViolationCode.OTHER
            )
    for pid in ids:
        if pid not in proposed:
            errors.add(f"proposed[{pid}]", f"no proposed payout for {pid!r}", ViolationCode.OTHER)
    pairs_by_key = {}
    for pr in settlement.pairs:
        pairs_by_key[(pr.first, pr.second)] = (pr, 1)
        pairs_by_key[(pr.second, pr.first)] = (pr, -1)
    for key in proposed_pairs or {}:
        if key not in pairs_by_key:
            errors.add(
                f"proposedPairs[{key[0]},{key[1]}]",
                "is not a pair of players at this table",
                ViolationCode.OTHER,
            )
    errors.raise_if_any()
    checks = []
    pair_lines = [
        (pr.first, pr.second, f"{pr.first} v {pr.second}: {pr.text}") for pr in settlement.pairs
    ]  # each pair's sentence once, for both players
    for p in settlement.players:
        pid = p.player_id
        lines = [p.text] + [text for a, b, text in pair_lines if pid in (a, b)]
        want = proposed[pid]
        checks.append(
            PayoutCheck(
                player_id=pid,
                expected=p.net_money,
                proposed=want,
                difference=want - p.net_money,
                explanation=tuple(lines),
            )
        )
    pair_checks = []
    for (first, second), want in (proposed_pairs or {}).items():
        pr, sign = pairs_by_key[(first, second)]
        expected = sign * pr.money_for_first
        pair_checks.append(
            PairCheck(
                first=first,
                second=second,
                expected=expected,
                proposed=want,
                difference=want - expected,
                explanation=pair_explanation(pr),
            )
        )
    return PayoutReport(players=tuple(checks), pairs=tuple(pair_checks))
