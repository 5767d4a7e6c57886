"""The audit log's events about settlements (docs/AUDIT.md, "The audit log"): what is written
when a settlement is issued, when a dealer's payouts are checked against it, and when an issued
settlement does not reach its caller. The log itself (the chain of lines, its sinks) is
``log``; these functions only say what a line holds.

>>> from cpsettle_service.proof.events import Issued
>>> Issued("f" * 64, "h-1").hand_id
'h-1'
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

from ..domain.settle import PayoutReport, Settlement
from .log import Receipt

__all__ = [
    "ISSUED",
    "NOT_DELIVERED",
    "Issued",
    "issued_event",
    "log_not_delivered",
    "log_payouts_checked",
]

ISSUED = "settlement.issued"
NOT_DELIVERED = "settlement.not_delivered"


class Issued(NamedTuple):
    """A settlement sealed (its ``settlement.issued`` logged, at ``receipt``), not necessarily
    delivered."""

    settlement_id: str
    hand_id: str
    receipt: Receipt | None = None


def issued_event(
    settlement: Settlement,
    sid: str,
    digest: str,
    request_digest: str,
    profile_digest: str,
    engine_version: str,
    engine_digest: str,
    request_bytes: bytes | None,
) -> dict[str, Any]:
    """The ``settlement.issued`` event; the sealer fills in the time and the key when it signs.
    ``request_bytes``: the exact request, kept in the event for ``cpsettle replay`` (None: left
    out, ``CPSETTLE_AUDIT_INCLUDE_REQUEST=false``)."""
    c = settlement.context
    profile = settlement.profile
    # the players' facts in one pass
    nets: dict[str, int] = {}
    net_units: dict[str, int] = {}
    fouls: list[str] = []
    naturals: dict[str, str] = {}
    surrenders: list[str] = []
    for p in settlement.players:
        pid = p.player_id
        nets[pid] = p.net_money
        net_units[pid] = p.net_units
        if p.fouled:
            fouls.append(pid)
        if p.natural:
            naturals[pid] = str(p.natural)
        if p.surrendered:
            surrenders.append(pid)
    event: dict[str, Any] = {
        "hand_id": c.hand_id,
        "table_id": c.table_id,
        "round_id": c.round_id,
        "dealer_id": c.dealer_id,
        "settlement_id": sid,
        "settlement_digest": digest,
        "request_digest": request_digest,
        "profile": profile.name,
        "profile_version": profile.version,
        "profile_digest": profile_digest,
        "engine_version": engine_version,
        "engine_digest": engine_digest,
        "issued_at": "",
        "signed": False,
        "key_id": "",
        "unit_value": settlement.unit_value,
        "currency": settlement.currency,
        "rake": settlement.rake,
        "nets": nets,
        "net_units": net_units,
        "fouls": fouls,
        "naturals": naturals,
        "surrenders": surrenders,
        "caps": [
            {"payer": pr.payer, "payee": pr.payee, "owed": pr.owed, "paid": pr.paid, "cap": pr.cap}
            for pr in settlement.pairs
            if pr.cap
        ],
    }
    if request_bytes is not None:
        # The exact request bytes (cards included): `cpsettle replay` reads them back.
        event["request"] = base64.b64encode(request_bytes).decode("ascii")
    return event


def log_payouts_checked(
    log: Any, settlement: Settlement, settlement_id: str, report: PayoutReport
) -> None:
    """Log the check of a dealer's payouts against ``settlement`` (sealed as
    ``settlement_id``): ``payout.validated``, or ``payout.mismatch`` with the differences."""
    ids = settlement.context
    base = {
        "hand_id": ids.hand_id,
        "table_id": ids.table_id,
        "round_id": ids.round_id,
        "dealer_id": ids.dealer_id,
        "settlement_id": settlement_id,
    }
    if report.all_match:
        log.info("payout.validated", **base, players=len(report.players))
        return
    log.warning(
        "payout.mismatch",
        **base,
        players=[
            {
                "player_id": c.player_id,
                "expected": c.expected,
                "proposed": c.proposed,
                "difference": c.difference,
            }
            for c in report.players
            if not c.matches
        ],
        pairs=[
            {
                "first": c.first,
                "second": c.second,
                "expected": c.expected,
                "proposed": c.proposed,
                "difference": c.difference,
            }
            for c in report.pairs
            if not c.matches
        ],
    )


def log_not_delivered(log: Any, issued: list[Issued], reason: str, detail: str = "") -> None:
    """One ``settlement.not_delivered`` line per settlement sealed (and logged as issued) that
    will not reach its caller: with ``settlement.issued`` the log reconciles one to one with
    what clients received. ``reason``: ``audit_log_unavailable``, ``cancelled``,
    ``deadline_exceeded``, ``result_too_large``, or ``cancelled_while_sending`` (the stream was
    cancelled while the batch's answer was being written, or after and before the client sent
    more: it may have arrived)."""
    for i in issued:
        log.warning(
            NOT_DELIVERED,
            settlement_id=i.settlement_id,
            hand_id=i.hand_id[:128],
            reason=reason,
            **({"detail": detail} if detail else {}),
        )
