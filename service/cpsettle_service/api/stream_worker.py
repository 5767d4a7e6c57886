"""A SettleStream worker process: settles the hands a server sends it (api/pool.py says what
runs where). ``init`` sets a worker up, ``settle_chunk`` settles one share of a batch.

The worker has no signing key and writes no log line: its sealer only prepares, and the lines
its work writes (a ``payout.mismatch``, a ``stream.item_failed``) travel back with the hands, as
do the counters it moved, for the server to write and add.
"""

from __future__ import annotations

import os
import signal
from collections.abc import MutableMapping
from typing import Any

import structlog

from cpsettle.v1 import settlement_pb2 as pb

from ..profile_files import builtin_registry, with_directory
from ..proof.seal import Prepared, Sealed, Sealer
from .pool import HandResult, counts, die_with
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


def init(profile_dir: str, include_request: bool, parent_pid: int, nice: int) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server drains on these, then closes us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with(parent_pid)
    if nice:
        os.nice(nice)
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
    out = []
    for item in pb.SettleStreamRequest.FromString(data).items:
        sealer.prepared = None
        parts = audit_parts(servicer, item)
        if isinstance(parts, bytes):
            out.append(HandResult(parts, lines=lines.take()))
        else:
            head, _, tail, _ = parts
            out.append(HandResult(head, sealer.prepared, tail, lines.take()))
    now = counts()
    moved = {k: v - _counted.get(k, 0.0) for k, v in now.items() if v != _counted.get(k, 0.0)}
    _counted.update(now)
    return out, moved
