"""Unary calls whose engine work may run long, settled in worker processes (issue 24, part 2).

No request may hold the event loop for long, whatever it costs: health, readiness and every
live Settle are answered by that loop. A call goes to a worker (api/servicer.py decides) when

- its profile uses RULES.md §16's extensions that search (jokers in the deck, naturals defined
  as data: ``profiles.uses_extensions``): the engine's cost for those depends on the cards and
  on the house's definitions, and has been seconds to minutes for one legal request; or
- it brings an inline profile or overrides of more than 2 KiB that the server has not read and
  has not seen before: a maximal profile takes milliseconds to read, and a client sending a new
  one on every call would otherwise spend them on the loop (the server reads such a profile
  itself only when it comes back: api/profiles.py).

Plain preset tables never come here: they stay on the loop, as fast as before.

What runs where is what SettleStream's workers do (api/pool.py): a worker maps the request,
runs the engine and writes the settlement's bytes up to its seal (``Sealer.prepare``); the
server gives it its time of issue and signature and writes its ``settlement.issued`` line
(``Sealer.finish``), then the lines the worker's work wrote and the counters it moved. So the
bytes, ids, log lines and metrics are those the call would have had on the loop, and the
signing key and the audit log stay in the server process.

The call's deadline is honoured: when it passes (or the client goes), gRPC cancels the call,
and the cancelled ``WorkerSet.run`` interrupts the worker, which stops computing and is free
for the next call (or is killed and replaced if it does not answer within a second).
"""

from __future__ import annotations

from typing import Any

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..errors import NotFound
from ..observability.logging import get_logger
from ..proof.events import Issued
from . import wire
from .pool import add_moved
from .workers import WorkerLost, WorkerSet

__all__ = ["Offload", "WorkerLost", "finish"]

_log = get_logger("cpsettle.offload")


class Offload:
    """``size`` worker processes for unary engine work (started when first needed)."""

    def __init__(self, size: int, module: str, initargs: tuple[Any, ...], nice: int) -> None:
        self.size = size
        self.workers = WorkerSet(size, module, initargs, nice)
        self.calls = 0  # calls sent to a worker so far

    def pids(self) -> list[int]:
        return self.workers.pids()

    async def run(self, servicer: Any, kind: str, request: Any) -> tuple[Any, Issued | None]:
        """The answer of a ``kind`` call (settle, validate, evaluate) worked out in a worker
        and finished here: ``SettleResponse`` bytes, a ``ValidatePayoutsResponse``, or
        ``EvaluateArrangementResponse`` bytes; and what was issued (None: nothing)."""
        self.calls += 1
        result = await self.workers.run("unary", (kind, request.SerializeToString()))
        return finish(servicer, result)

    def close(self) -> None:
        self.workers.close()


def finish(servicer: Any, result: tuple[Any, ...]) -> tuple[Any, Issued | None]:
    """A worker's answer to one call, finished in the server: sealed (``settlement.issued``,
    the receipt with the answer), its log lines written after it, its counters added; or its
    error raised. Answers ``(answer, what was issued)``."""
    from cpsettle.v1 import settlement_pb2 as pb

    kind, value, body, lines, moved = result
    add_moved(moved)
    if kind == "invalid":
        _write(servicer, lines)
        raise InvalidInput([Violation(f, r, ViolationCode(c)) for f, r, c in value])
    if kind == "not_found":
        _write(servicer, lines)
        message, resource_type, name = value
        raise NotFound(message, resource_type=resource_type, name=name)
    data, issued = servicer.sealer.finish(value) if value is not None else (b"", None)
    _write(servicer, lines)
    receipt = issued.receipt if issued is not None else None
    if kind == "settle":
        return wire.settle_response(data, receipt), issued
    if kind == "validate":
        response = pb.ValidatePayoutsResponse.FromString(body)
        response.settlement.MergeFromString(data)
        if receipt is not None:
            wire.receipt_to_proto(receipt, response.receipt)
        return response, issued
    return body, None


def _write(servicer: Any, lines: tuple[tuple[str, str, str, dict[str, Any]], ...]) -> None:
    for logger, level, event, fields in lines:
        log = servicer.sealer.log if logger == "audit" else _log
        getattr(log, level)(event, **fields)
