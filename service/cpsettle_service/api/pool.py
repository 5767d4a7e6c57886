"""SettleStream's settlement work in worker processes: bulk re-audit on every core.

One process runs the event loop, and Python runs one thread of it at a time: a stream settled
in that process uses one core however many the machine has. ``StreamPool`` keeps ``size``
worker processes (``CPSETTLE_STREAM_WORKERS``, default one per core) and splits each batch
across them; the event loop only reads, finishes and sends.

What runs where (docs/BULK_AUDIT.md, "Worker processes"):

- a worker: the request's mapping, the engine, the settlement's bytes up to its seal, the
  payout check, and everything ``Sealer.prepare`` does (ids, digests, the ``settlement.issued``
  event without its time);
- the server process: ``Sealer.finish`` (the time of issue, the signature, the audit log line),
  the lines the worker's work wrote (a ``payout.mismatch``), the metrics it counted, delivery.

So the signing key never leaves the server process (a worker has none), and the audit log has
one writer: a settlement is logged as issued only when the server finishes it, just before its
batch goes out; a batch lost in a worker was never issued, so it is simply settled again
(once: a share of a batch that loses its worker twice is answered with one INTERNAL batch error,
and a client such as ``cpsettle audit --server`` asks for its hands one by one; the stream goes
on with the next batch, on new workers).

The processes are ``workers.WorkerSet``'s, each on pipes of its own (a worker killed while it
writes its answer once hung every later batch: issue 24, part 6). Workers run at a lower CPU
priority (``nice``): on a shared machine the live calls of the server process come first, as
``priority.LiveFirst`` lets them first in the event loop. They ignore SIGINT and SIGTERM (the
server drains on those and then closes the pool), and end by themselves the moment the server
process ends, however it ends (``workers.die_with``).
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cpsettle.v1 import settlement_pb2 as pb

from ..errors import WorkerLost
from ..observability import metrics
from ..proof.seal import Prepared
from .workers import WorkerSet, die_with

__all__ = [
    "DEFAULT_NICE",
    "HandResult",
    "StreamPool",
    "WorkerLost",
    "add_moved",
    "counts",
    "default_size",
    "die_with",
]

DEFAULT_NICE = 10  # the workers' niceness above the server's (0 = the same priority)

# Counters a worker's work moves; the server adds the worker's increments to its own.
_COUNTED = (
    metrics.SETTLEMENTS,
    metrics.FOULS,
    metrics.NATURALS,
    metrics.SURRENDERS,
    metrics.CAPS_APPLIED,
    metrics.PAYOUT_MISMATCHES,
    metrics.VALIDATION_ERRORS,
)


@dataclass(frozen=True, slots=True)
class HandResult:
    """One hand as a worker leaves it. With ``prepared``: the ``AuditResult``'s fields before
    the settlement (``head``), the settlement to seal, the fields after it (``tail``). Without:
    ``head`` is the whole result (the hand's error). ``lines``: the log lines its work wrote
    (logger ``audit`` or ``other``, level, event, fields), for the server to write after its
    ``settlement.issued``."""

    head: bytes
    prepared: Prepared | None = None
    tail: bytes = b""
    lines: tuple[tuple[str, str, str, dict[str, Any]], ...] = ()


def counts() -> dict[tuple[int, tuple[str, ...]], float]:
    """The ``_COUNTED`` counters' values now, by counter and labels (a worker's, sent back as
    increments: api/stream_worker.py)."""
    out = {}
    for i, counter in enumerate(_COUNTED):
        for family in counter.collect():
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    out[(i, tuple(sample.labels.values()))] = sample.value
    return out


def add_moved(moved: dict[tuple[int, tuple[str, ...]], float]) -> None:
    """Add a worker's counter increments (``counts``' differences) to this process's."""
    for (i, labels), amount in moved.items():
        counter = _COUNTED[i]
        (counter.labels(*labels) if labels else counter).inc(amount)


# --------------------------------------------------------------------------- the server's side


def default_size(cpu_max: str = "/sys/fs/cgroup/cpu.max") -> int:
    """One worker per core this process may use: the cores it may run on, and no more than its
    cgroup's CPU quota allows (a pod limited to 1 CPU on a 16-core node gets 1 worker, not 16)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        with open(cpu_max) as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):  # no cgroup v2 limit to read
        pass
    return cores


class StreamPool:
    """``size`` worker processes for SettleStream batches, started at the first batch: each
    runs ``module.init(*initargs)`` once, then ``module.settle_chunk`` on each share of a batch
    (``SettleStreamRequest`` bytes -> its hands' results and the counters' increments;
    api/stream_worker.py has both)."""

    def __init__(
        self, size: int, module: str, initargs: tuple[Any, ...], nice: int = DEFAULT_NICE
    ) -> None:
        self.size = size
        self.workers = WorkerSet(size, module, initargs, nice)

    def pids(self) -> list[int]:
        """The worker processes running now."""
        return self.workers.pids()

    async def _share(self, data: bytes) -> tuple[list[HandResult], dict[Any, float]]:
        try:
            answer: tuple[list[HandResult], dict[Any, float]] = await self.workers.run(
                "settle_chunk", data
            )
        except WorkerLost:
            # Its worker ended mid-share (killed, out of memory): nothing of it was issued
            # (only the server finishes and logs), so a new worker settles it again, once.
            answer = await self.workers.run("settle_chunk", data)
        return answer

    async def settle(self, items: Sequence[pb.AuditItem]) -> list[HandResult]:
        """The hands' results, in order, each worker settling a share of them. ``WorkerLost``
        when a share lost its worker twice (the stream answers the batch with one error)."""
        data = [
            pb.SettleStreamRequest(items=part).SerializeToString()
            for part in _shares(items, self.size)
        ]
        shares = [asyncio.ensure_future(self._share(d)) for d in data]
        try:
            answers = await asyncio.gather(*shares)
        except BaseException:
            for share in shares:  # the others stop too: their worker is interrupted and freed
                share.cancel()
            await asyncio.gather(*shares, return_exceptions=True)
            raise
        out: list[HandResult] = []
        for results, moved in answers:
            add_moved(moved)
            out.extend(results)
        return out

    def close(self) -> None:
        """End the workers now and wait for them. They hold nothing worth waiting for (nothing
        a worker does is issued until the server finishes it), and a worker left to finish
        could block writing a large result nobody reads any more."""
        self.workers.close()


def _shares(items: Sequence[pb.AuditItem], parts: int) -> list[Sequence[pb.AuditItem]]:
    """``items`` cut into at most ``parts`` runs of nearly equal length, in order."""
    n = len(items)
    parts = max(1, min(parts, n))
    size, extra = divmod(n, parts)
    out, start = [], 0
    for k in range(parts):
        end = start + size + (1 if k < extra else 0)
        out.append(items[start:end])
        start = end
    return out
