"""A worker process's side: settles the hands of a SettleStream batch (api/pool.py says what
runs where) and the engine work of unary calls sent off the event loop (api/offload.py).
``init`` sets a worker up, ``settle_chunk`` settles one share of a batch, ``unary`` one call.

The worker has no signing key and writes no log line: its sealer only prepares, and the lines
its work writes (a ``payout.mismatch``, a ``stream.item_failed``) travel back with the hands, as
do the counters it moved, for the server to write and add.
"""

from __future__ import annotations

import os
import time
from collections.abc import MutableMapping
from typing import Any

import structlog

from cpsettle.v1 import settlement_pb2 as pb

from ..domain.errors import InvalidInput
from ..errors import NotFound
from ..profile_files import builtin_registry, with_directory
from ..proof.seal import Prepared, Sealed, Sealer
from .pool import HandResult, counts
from .profiles import ProfileResolver
from .servicer import SettlementServicer
from .stream import audit_parts


class _Lines:
    """The log lines a worker's work writes, kept for the server (a worker writes none)."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, str, str, dict[str, Any]]] = []

    def take(self) -> tuple[tuple[str, str, str, dict[str, Any]], ...]:
        out, self.taken = tuple(self.taken), []
        return out

    def processor(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        text = event.pop("event")
        self.taken.append(("other", method, text, dict(event)))
        raise structlog.DropEvent


class _AuditLog:
    """The worker sealer's audit log: keeps the lines (``payouts_checked``'s) for the server."""

    def __init__(self, lines: _Lines) -> None:
        self._lines = lines

    def info(self, event: str, **kw: Any) -> None:
        self._lines.taken.append(("audit", "info", event, kw))

    def warning(self, event: str, **kw: Any) -> None:
        self._lines.taken.append(("audit", "warning", event, kw))


class _PreparingSealer(Sealer):
    """Prepares, never finishes: no key, no clock, no log line; the server finishes."""

    prepared: Prepared | None = None

    def finish(self, prepared: Prepared) -> Sealed:
        self.prepared = prepared
        return Sealed(prepared.content, None)


_worker: tuple[Any, _PreparingSealer, _Lines] | None = None
_counted: dict[tuple[int, tuple[str, ...]], float] = {}


def init(profile_dir: str, include_request: bool) -> None:
    """Set this worker up (``workers.worker_main`` has already made it a worker: signals,
    niceness, the watch on the server process)."""
    global _worker
    registry = builtin_registry()
    if profile_dir:  # read again here: the server read it at start, and refused it if invalid
        registry = with_directory(registry, profile_dir)
    lines = _Lines()
    structlog.configure(processors=[structlog.processors.format_exc_info, lines.processor])
    sealer = _PreparingSealer(None, log=_AuditLog(lines), include_request=include_request)
    _worker = (SettlementServicer(ProfileResolver(registry), sealer), sealer, lines)


def settle_chunk(data: bytes) -> tuple[list[HandResult], dict[tuple[int, tuple[str, ...]], float]]:
    """Settle a ``SettleStreamRequest``'s hands (bytes) in this worker: each hand's result and
    the counters' increments since the last chunk."""
    assert _worker is not None, "_init_worker first"
    servicer, sealer, lines = _worker
    _fresh(lines)
    _spin()
    out = []
    for item in pb.SettleStreamRequest.FromString(data).items:
        sealer.prepared = None
        parts = audit_parts(servicer, item)
        if isinstance(parts, bytes):
            out.append(HandResult(parts, lines=lines.take()))
        else:
            head, _, tail, _ = parts
            out.append(HandResult(head, sealer.prepared, tail, lines.take()))
    return out, _moved()


# --------------------------------------------------------------------------- unary calls

# Test-only: every unary call and every stream chunk a worker takes first spins for this many
# seconds of CPU, in Python, where an interrupt lands as it does in the engine
# (tests/hardening/test_off_loop.py: a request that stays slow however fast the engine becomes).
SPIN_VARIABLE = "CPSETTLE_TEST_WORKER_SPIN_SECONDS"


def _spin() -> None:
    seconds = float(os.environ.get(SPIN_VARIABLE) or 0)
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _moved() -> dict[tuple[int, tuple[str, ...]], float]:
    now = counts()
    moved = {k: v - _counted.get(k, 0.0) for k, v in now.items() if v != _counted.get(k, 0.0)}
    _counted.update(now)
    return moved


def _fresh(lines: _Lines) -> None:
    """Forget what a task stopped midway (api/workers.py: interrupted) left: its log lines and
    its counters' increments belong to no answer."""
    lines.take()
    _moved()


def unary(argument: tuple[str, bytes]) -> tuple[Any, ...]:
    """One unary call's engine work (api/offload.py): ``(kind, request bytes)`` with kind
    ``settle``, ``validate`` or ``evaluate``. Answers ``(kind, prepared, body, lines, moved)``:
    the settlement prepared for the server to seal (None for an evaluation), the response's
    bytes without the settlement (the whole response for an evaluation), the log lines the work
    wrote, the counters it moved; or ``("invalid", violations, …)`` / ``("not_found", …)``."""
    assert _worker is not None, "init first"
    servicer, sealer, lines = _worker
    kind, data = argument
    _fresh(lines)
    _spin()
    sealer.prepared = None
    try:
        if kind == "settle":
            servicer.issue(servicer.settle_request(pb.SettleRequest.FromString(data)))
            out: tuple[Any, ...] = (kind, sealer.prepared, b"")
        elif kind == "validate":
            response = servicer.validate_response(pb.ValidatePayoutsRequest.FromString(data))
            response.ClearField("settlement")
            out = (kind, sealer.prepared, response.SerializeToString())
        else:
            answer = servicer.evaluate_response(pb.EvaluateArrangementRequest.FromString(data))
            out = (kind, None, answer.SerializeToString())
    except InvalidInput as e:
        out = ("invalid", [(v.field, v.reason, v.code.value) for v in e.violations], b"")
    except NotFound as e:
        out = ("not_found", (str(e), e.resource_type, e.name), b"")
    return (*out, lines.take(), _moved())
