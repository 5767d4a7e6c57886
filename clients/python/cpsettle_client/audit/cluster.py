"""Across machines: a sharded history audited shard by shard on Dask, merged in shard order.

A history too big for one machine's cores is kept as many JSON-lines files (``.jsonl``,
``.ndjson``, each optionally ``.gz``) in a folder or under an object-storage prefix, read
through fsspec (``s3://bucket/2026-11-29/``: s3fs, with the usual AWS settings —
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL`` for an S3-compatible
store). The shards are taken in the order of their paths, as if they were one file: a hand's
``line`` is its line in that whole (the lines of the shards before it, then its line in its
shard), its ``ref`` names the shard and the line in it (``2026-11-29/part-0007.jsonl.gz:412``)
so a person can find it.

Each shard is one task (``audit_shard``): the worker reads it, audits it the way a local audit
does (``running.audit_chunk``: the quick check, and the full way for what needs evidence) in
chunks of ``--batch`` lines, and returns the shard's ``Outcome``, its line numbers counted within
the shard. The command takes the outcomes in shard order, moves each by the lines before its
shard (``shifted``) and merges them into the same ``Report`` a single-process audit writes, so
the report is identical whichever way it ran (totals, per table, per dealer, every difference and
invalid hand in line order); ``cpsettle audit FOLDER --local`` runs the very same tasks in this
process.

The engine is Dask's distributed scheduler (chosen over Ray: bench/bench_reaudit.py and
docs/BULK_AUDIT.md): ``--cluster local`` starts a ``LocalCluster`` of ``--workers`` processes
(one thread each) on this machine; ``--cluster tcp://HOST:8786`` joins a running scheduler and
uses its workers. A worker that dies mid-run (killed, out of memory) loses only the tasks it
held: the scheduler runs them again on other workers (``distributed.scheduler.allowed-failures``,
3 by default), and because a task's outcome depends only on its shard's bytes, the report is
the same (tests/audit/test_cluster.py kills a worker process to hold it to that).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .outcome import AuditFailure, Outcome
from .reading import chunks

SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


@dataclass(frozen=True)
class Shard:
    url: str  # what fsspec opens
    name: str  # how the report names it (its path under the history's folder)


def is_sharded(history: str) -> bool:
    """Whether ``history`` is a folder or an fsspec URL (``s3://…``), not a plain file."""
    return "://" in history or os.path.isdir(history)


def list_shards(history: str) -> list[Shard]:
    """The shards of ``history`` in path order: every ``SUFFIXES`` file under a folder or prefix,
    or the one file it names. ``OSError`` when there is nothing to read."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(history)
    if fs.isdir(root):
        base = root.rstrip("/") + "/"
        paths = sorted(p for p in fs.find(root) if p.endswith(SUFFIXES))
        shards = [
            Shard(fs.unstrip_protocol(p), p[len(base) :] if p.startswith(base) else p)
            for p in paths
        ]
        if not shards:
            raise OSError(f"no {', '.join(SUFFIXES)} files under {history}")
        return shards
    if not fs.isfile(root):
        raise FileNotFoundError(f"no such file or folder: {history}")
    return [Shard(fs.unstrip_protocol(root), os.path.basename(root.rstrip("/")))]


def read_shard(url: str) -> tuple[list[tuple[int, bytes]], int]:
    """(the non-blank lines with their numbers, how many lines the shard has)."""
    import fsspec

    with fsspec.open(url, "rb", compression="infer") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return [(n, raw + b"\n") for n, raw in enumerate(lines, 1) if raw.strip()], len(lines)


_options: dict[str, Any] | None = None


def _engine(options: dict[str, Any]) -> None:
    """The engine of this worker process, made once (and again if the options change)."""
    global _options
    from . import running

    if _options != options or running._servicer is None:
        running._init_local(options)
        _options = dict(options)


@dataclass
class ShardResult:
    outcome: Outcome  # line numbers within the shard
    lines: int  # the shard's lines (blank ones too): how far the next shard's numbers move
    seconds: float  # time in the task, reading included (bench/bench_reaudit.py)
    cpu: float  # CPU time of it (this process's)


def audit_shard(
    shard: Shard, options: dict[str, Any], batch: int, quick: bool = True
) -> ShardResult:
    """One shard audited in this process: a Dask task, or a step of a local sharded audit."""
    from . import running

    began, cpu = time.perf_counter(), time.process_time()
    _engine(options)
    audit = running.audit_chunk if quick else running.audit_chunk_full
    lines, count = read_shard(shard.url)
    outcome = Outcome(1, 0)
    for first, last, part in chunks(lines, batch):
        outcome.merge(audit(shard.name, first, last, part))
    outcome.last_line = count
    return ShardResult(outcome, count, time.perf_counter() - began, time.process_time() - cpu)


def shifted(outcome: Outcome, offset: int) -> Outcome:
    """``outcome`` with its line numbers moved on by ``offset`` (refs keep the shard's own)."""
    if not offset:
        return outcome
    return dataclasses.replace(
        outcome,
        first_line=outcome.first_line + offset,
        last_line=outcome.last_line + offset,
        differences=[dict(d, line=d["line"] + offset) for d in outcome.differences],
        invalid=[dict(e, line=e["line"] + offset) for e in outcome.invalid],
        settlements={str(int(k) + offset): v for k, v in outcome.settlements.items()},
    )


class ShardRunner:
    """Audits shards in this process (``address`` None) or as tasks on a Dask cluster
    (``"local"``: a LocalCluster of ``workers`` processes; else a scheduler's address) and
    yields their outcomes in shard order, moved to the lines of the whole history."""

    def __init__(
        self,
        address: str | None,
        workers: int,
        options: dict[str, Any],
        batch: int,
        quick: bool = True,
        client: Any = None,
    ) -> None:
        self.address = address
        self.workers = workers
        self.options = options
        self.batch = batch
        self.quick = quick
        self.client: Any = None
        self.cluster: Any = None
        self.task_seconds = 0.0  # the tasks' own time, summed (bench/bench_reaudit.py)
        self.task_cpu = 0.0
        self.owned = client is None  # a client given (a benchmark's) is left open
        if client is not None:
            self.client = client
        elif address is None:
            _engine(options)  # a bad key file or profile folder fails fast
        else:
            self._connect()

    def _connect(self) -> None:
        import logging

        from distributed import Client, LocalCluster

        if self.address == "local":
            self.cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self.client = Client(self.cluster)
        else:
            self.client = Client(self.address, timeout="30s")

    def run(self, shards: list[Shard]) -> Iterator[Outcome]:
        offset = 0
        if self.client is None:
            for shard in shards:
                result = audit_shard(shard, self.options, self.batch, self.quick)
                self.task_seconds += result.seconds
                self.task_cpu += result.cpu
                yield shifted(result.outcome, offset)
                offset += result.lines
            return
        futures = self.client.map(
            audit_shard,
            shards,
            options=self.options,
            batch=self.batch,
            quick=self.quick,
            pure=False,
        )
        try:
            for future in futures:  # in shard order; the tasks run meanwhile
                try:
                    result = future.result()
                except Exception as e:  # a task failed past its retries
                    raise AuditFailure(f"a shard could not be audited: {e!r}") from e
                self.task_seconds += result.seconds
                self.task_cpu += result.cpu
                yield shifted(result.outcome, offset)
                offset += result.lines
        finally:
            for future in futures:
                future.cancel()

    def close(self, interrupted: bool) -> None:
        if not self.owned:
            return
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
