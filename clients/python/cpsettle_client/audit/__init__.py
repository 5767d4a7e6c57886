"""``cpsettle audit``: re-check a day of hand history against what the dealers actually paid.

History format (JSON lines, UTF-8, one hand per line; blank lines are skipped)::

    {"handId": "T03-00042", "tableId": "T03", "roundId": "2026-11-29/T03/42", "dealerId": "D07",
     "preset": "western", "unitValue": 100, "buttonSeat": 4,
     "players": [{"playerId": "P1", "seat": 1, "arrangement": {...}, "stack": 4000}, ...],
     "recordedPayouts": {"P1": 300, "P2": -100, "P3": -200}}

Each line is the JSON form of a ``SettleRequest`` (docs/DESIGN.md) plus one extra field,
``recordedPayouts``: for every player id, the net money the dealer paid to (+) or collected
from (-) that player on this hand, in minor units, after caps and rake (what the settlement
calls ``netMoney``). The field is taken off before the rest is read as a ``SettleRequest``.
Without it (or with ``{}``) the hand is settled but not checked. Amounts are JSON integers (or
strings of digits, as proto3 JSON writes int64).

A line that is not JSON, not a valid ``SettleRequest``, or whose ``recordedPayouts`` is
malformed or misses a player is an *invalid hand* in the report, with its line number and
violations; it never stops the audit.

``--local`` settles in this process with the servicer's own code (``--workers N``: N processes
over chunks of lines); ``--server HOST:PORT`` sends batches of ``--batch`` hands over the
``SettleStream`` RPC (``--workers N``: N streams). Either way results are taken in line order,
so the report always covers lines ``firstLine`` to ``stoppedAfterLine`` exactly.

Exit codes: 0 every hand checked and matched; 1 payout differences or invalid hands found;
2 bad arguments or an unreadable history; 3 the server failed; 130 interrupted (Ctrl-C or
SIGTERM) — the report is still written, with ``"complete": false`` and the last line processed.
The report format is described in docs/BULK_AUDIT.md.

Rooms, in the order a line of history meets them: ``reading`` (a line into a hand and the item
of a ``SettleStreamRequest``), ``running`` (batches settled locally or over ``SettleStream``,
outcomes out in line order), ``outcome`` (what a run of lines found, tallied per table and per
dealer), ``report`` (outcomes merged into the JSON report and the readable summary),
``progress`` (the bar on a terminal, plain lines elsewhere) and ``command`` (the arguments, the
exit codes).
"""

__all__ = ["checkpoint", "command", "html", "outcome", "progress", "reading", "report", "running"]
