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
(once: a batch that loses a worker twice is answered with an INTERNAL batch error, and a client
such as ``cpsettle audit --server`` asks for its hands one by one).

Workers run at a lower CPU priority (``nice``): on a shared machine the live calls of the
server process come first, as ``priority.LiveFirst`` lets them first in the event loop. They
ignore SIGINT and SIGTERM (the server drains on those and then closes the pool), and end by
themselves the moment the server process ends, however it ends (``die_with``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import multiprocessing
import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from cpsettle.v1 import settlement_pb2 as pb

from ..errors import WorkerLost
from ..observability import metrics
from ..proof.seal import Prepared

DEFAULT_NICE = 10  # the workers' niceness above the server's (0 = the same priority)
WATCH_INTERVAL = 0.5  # seconds between looks at the parent process, where pidfd is missing

# Counters a worker's work moves; the server adds the worker's increments to its own.
_COUNTED = (metrics.SETTLEMENTS, metrics.FOULS, metrics.NATURALS, metrics.SURRENDERS,
            metrics.CAPS_APPLIED, metrics.PAYOUT_MISMATCHES, metrics.VALIDATION_ERRORS)


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


def die_with(parent_pid: int) -> None:
    """End this process as soon as ``parent_pid`` ends, however it ends (SIGKILL included).

    A worker's parent is the fork server, not the process that asked for the pool, and the fork
    server lives as long as any worker (they hold its "alive" pipe): a death signal from the
    parent (PR_SET_PDEATHSIG) would never come. So a daemon thread watches that process itself:
    on Linux it waits on a pidfd, which becomes readable the moment the process exits; elsewhere
    it looks every ``WATCH_INTERVAL`` seconds whether the process is still there. Once the
    workers are gone, the fork server and the resource tracker see their pipes close and end.
    """
    try:
        pidfd = os.pidfd_open(parent_pid)  # type: ignore[attr-defined,unused-ignore]
    except ProcessLookupError:
        os._exit(1)  # already gone
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        pidfd = None

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        else:
            while _alive(parent_pid):
                time.sleep(WATCH_INTERVAL)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watchdog").start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
    runs ``init(*initargs, <this process's pid>, nice)`` once, then ``settle`` on each share of
    a batch (``SettleStreamRequest`` bytes -> its hands' results and the counters' increments;
    api/stream_worker.py has both)."""

    def __init__(self, size: int, init: Callable[..., None], initargs: tuple[Any, ...],
                 settle: Callable[[bytes], tuple[list[HandResult], dict[Any, float]]],
                 nice: int = DEFAULT_NICE) -> None:
        self.size = size
        self._init = init
        self._initargs = (*initargs, os.getpid(), nice)
        self._settle = settle
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        # forkserver: never fork a process that holds gRPC threads; the fork server imports the
        # engine once and every worker forks from it ready to go.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([self._init.__module__])
        self._executor = concurrent.futures.ProcessPoolExecutor(
            self.size, mp_context=context, initializer=self._init, initargs=self._initargs)
        return self._executor

    def pids(self) -> list[int]:
        """The worker processes running now."""
        executor = self._executor
        processes = getattr(executor, "_processes", None) or {}
        return [p.pid for p in list(processes.values()) if p.is_alive()]

    async def settle(self, items: Sequence[pb.AuditItem]) -> list[HandResult]:
        """The hands' results, in order, each worker settling a share of them."""
        data = [pb.SettleStreamRequest(items=part).SerializeToString()
                for part in _shares(items, self.size)]
        for attempt in (1, 2):
            executor = self._executor or self._start()
            loop = asyncio.get_running_loop()
            try:
                answers = await asyncio.gather(
                    *(loop.run_in_executor(executor, self._settle, d) for d in data))
                break
            except BrokenProcessPool:
                # A worker ended mid-batch (killed, out of memory): nothing of this batch was
                # issued (only the server finishes and logs), so a new pool settles it again.
                if self._executor is executor:
                    self._executor = None
                    _end(executor)
                if attempt == 2:
                    raise WorkerLost("a settlement worker process ended twice while settling "
                                     "this batch") from None
        out: list[HandResult] = []
        for results, moved in answers:
            for (i, labels), amount in moved.items():
                counter = _COUNTED[i]
                (counter.labels(*labels) if labels else counter).inc(amount)
            out.extend(results)
        return out

    def close(self) -> None:
        """End the workers now and wait for them. They hold nothing worth waiting for (nothing
        a worker does is issued until the server finishes it), and a worker left to finish
        could block writing a large result nobody reads any more."""
        executor, self._executor = self._executor, None
        if executor is not None:
            _end(executor)


def _end(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill an executor's workers and wait for them (5 s each at most). Also for a broken pool:
    its surviving workers may be blocked writing results nobody reads, and the executor's own
    thread, which joins them, would then hold up the interpreter's exit for ever."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()  # they ignore SIGTERM: the server's drain must not end them early
    for process in processes:
        process.join(5)


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
