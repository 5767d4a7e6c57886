"""Running the audit: batches of hands settled in this process or by a server, outcomes out.

Both runners take the work as ``Chunk``s (runs of lines) and yield one ``Outcome`` per chunk,
always in line order, keeping only a few chunks per worker in flight; on Ctrl-C they yield
what is already done and then raise ``KeyboardInterrupt``. ``close()`` stops what is left.

- ``LocalRunner``: the servicer's own stream code in this process, or in ``--workers`` worker
  processes started from a fork server that has the engine imported once.
- ``ServerRunner``: ``--workers`` ``SettleStream`` calls, each fed by a bounded queue and read by
  its own thread; a stream the server ends early (it drains, or the stream was idle) is opened
  again by itself and continues with the batches not yet answered.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from cpsettle.v1 import settlement_pb2 as pb

from ..client import SettlementError
from .outcome import AuditFailure, Outcome
from .reading import Chunk, Hand, prepare

if TYPE_CHECKING:  # the engine is imported only when the audit runs locally
    from cpsettle_service.local import LocalService

    from .quick import QuickChecker

# A batch on its way to a stream: its number, the outcome it fills, its hands, the message.
_Entry = tuple[int, Outcome, list[Hand], pb.SettleStreamRequest]


def is_batch_error(result: pb.SettleStreamResponse) -> bool:
    """A per-batch error: one result, no ref (our refs are never empty), an error."""
    return (
        len(result.results) == 1
        and not result.results[0].ref
        and result.results[0].WhichOneof("outcome") == "error"
    )


# --------------------------------------------------------------------------- local


_servicer: LocalService | None = None
_quick: QuickChecker | None = None


def _init_local(options: dict[str, Any]) -> None:
    """The engine ``cpsettle settle --local`` uses (house profiles, sealer, signing key)."""
    global _servicer, _quick
    from ..backend import local_service
    from .quick import QuickChecker

    _servicer = local_service(**options)
    _quick = QuickChecker(_servicer)


def _init_worker(options: dict[str, Any], audit_pid: int) -> None:
    from cpsettle_service.api.pool import die_with

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    die_with(audit_pid)  # however the audit process ends, its workers end with it
    _init_local(options)


def _ready() -> None:
    """Nothing: a first task that makes a worker start (and import the engine) early."""


def audit_chunk(prefix: str, first: int, last: int, lines: list[tuple[int, bytes]]) -> Outcome:
    """Audit a run of lines in this process: each line the quick way (``quick``: settled and
    compared, nothing written) when it can be, the rest (differences, invalid hands, unusual
    lines) with the servicer's own stream code, which writes their evidence."""
    assert _servicer is not None and _quick is not None, "_init_local first"
    outcome = Outcome(first, last)
    check = _quick.check
    matched = outcome.add_matched
    rest: list[tuple[int, bytes]] = []
    for number, raw in lines:
        found = check(raw)
        if found is None:
            rest.append((number, raw))
        else:
            matched(*found)
    if rest:
        batch = pb.SettleStreamRequest()
        hands = [prepare(prefix, number, raw, batch) for number, raw in rest]
        outcome.add_batch(prefix, hands, _servicer.settle_batch(batch, max_items=len(batch.items)))
    return outcome


def audit_chunk_full(prefix: str, first: int, last: int, lines: list[tuple[int, bytes]]) -> Outcome:
    """Audit a run of lines the full way only (every settlement written and sealed): what
    ``audit_chunk`` was before the quick check, kept to hold the two to the same report."""
    assert _servicer is not None, "_init_local first"
    batch = pb.SettleStreamRequest()
    hands = [prepare(prefix, number, raw, batch) for number, raw in lines]
    outcome = Outcome(first, last)
    outcome.add_batch(prefix, hands, _servicer.settle_batch(batch, max_items=len(batch.items)))
    return outcome


class LocalRunner:
    """Settles in this process (``workers`` 1) or in worker processes, a chunk per task."""

    def __init__(self, workers: int, options: dict[str, Any], quick: bool = True) -> None:
        self.workers = workers
        self.options = options
        # the quick check first (audit/quick.py), or every hand the full way (--no-quick)
        self.audit = audit_chunk if quick else audit_chunk_full
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        if workers > 1:
            self._start()  # the workers start (about 0.3 s) while this process checks and reads
        try:
            _init_local(options)  # here too: a bad key file or profile folder fails fast
        except BaseException:
            self.close(interrupted=True)
            raise

    def _start(self) -> None:
        # forkserver: never fork a process that may hold gRPC threads.
        context = multiprocessing.get_context("forkserver")
        # Import the engine once in the fork server: every worker forks from it ready to go.
        context.set_forkserver_preload(["cpsettle_client.audit.running", "cpsettle_service.local"])
        self.pool = concurrent.futures.ProcessPoolExecutor(
            self.workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(self.options, os.getpid()),
        )
        for _ in range(self.workers):  # start every worker now, not as the first chunks come
            self.pool.submit(_ready)

    def run(self, prefix: str, work: Iterable[Chunk]) -> Iterator[Outcome]:
        if self.workers == 1:
            for first, last, lines in work:
                yield self.audit(prefix, first, last, lines)
            return
        if self.pool is None:
            self._start()
        assert self.pool is not None
        in_flight: collections.deque[concurrent.futures.Future[Outcome]] = collections.deque()
        limit = 3 * self.workers
        try:
            for first, last, lines in work:
                in_flight.append(self.pool.submit(self.audit, prefix, first, last, lines))
                while in_flight and (len(in_flight) >= limit or in_flight[0].done()):
                    yield in_flight.popleft().result()
            while in_flight:
                yield in_flight.popleft().result()
        except KeyboardInterrupt:
            # Keep what is already done (in line order); drop the rest.
            while in_flight and in_flight[0].done() and not in_flight[0].cancelled():
                yield in_flight.popleft().result()
            raise

    def close(self, interrupted: bool) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
            self.pool = None


# --------------------------------------------------------------------------- server


class _Stream:
    """One SettleStream at a time: batches waiting to go in, a thread reading results out.

    The server may end a stream cleanly before every batch is answered: it drains (SIGTERM) or
    the stream sat idle. Then the stream reconnects by itself (a new call on the same channel,
    after a backoff) and sends again, in order, the batches sent but not answered and then the
    ones still waiting; the same for a stream that fails UNAVAILABLE once the server has been
    reached (a server never reached fails the audit at once). Each answer is matched to its
    batch in order, so nothing is counted twice or lost.
    """

    DEPTH = 2  # batches waiting per stream beyond those in flight
    RETRIES = 10  # reconnections in a row without an answer, then the audit fails
    BACKOFF = 0.2  # seconds before the first reconnection, doubling up to BACKOFF_MAX
    BACKOFF_MAX = 5.0

    def __init__(
        self,
        client: Any,
        prefix: str,
        stop: threading.Event,
        deliver: Callable[[int, Outcome | BaseException], None],
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.stop = stop
        self.deliver = deliver
        self.cond = threading.Condition()
        self.waiting: collections.deque[_Entry] = collections.deque()  # not yet sent
        self.pending: collections.deque[_Entry] = collections.deque()  # sent, not answered
        self.input_done = False
        self.generation = 0  # one per call; a call's request generator ends when it moves on
        self.reconnects = 0  # how many times the stream was opened again
        self.reached = False  # the server answered or ended a stream at least once
        self.results = client.settle_stream(self._requests(0))
        self.thread = threading.Thread(target=self._read, daemon=True, name="audit-stream")
        self.thread.start()

    def submit(self, entry: _Entry | None) -> None:
        """Queue a batch (``None``: the end of input), waiting while the queue is full."""
        with self.cond:
            while entry is not None and len(self.waiting) >= self.DEPTH:
                if self.stop.is_set() or not self.thread.is_alive():
                    raise AuditFailure("the stream to the server ended")
                self.cond.wait(0.2)
            if entry is None:
                self.input_done = True
            else:
                self.waiting.append(entry)
            self.cond.notify_all()

    def _requests(self, generation: int) -> Iterator[pb.SettleStreamRequest]:
        with self.cond:  # a new call: first the batches the last one left unanswered
            again = [entry[3] for entry in self.pending]
        yield from again
        while True:
            with self.cond:
                while True:
                    if self.generation != generation or self.stop.is_set():
                        return
                    if self.waiting:
                        entry = self.waiting.popleft()
                        self.pending.append(entry)  # before the batch goes out: its answer finds it
                        self.cond.notify_all()
                        break
                    if self.input_done:
                        return
                    self.cond.wait(0.2)
            yield entry[3]

    def _unfinished(self) -> bool:
        with self.cond:
            return bool(self.pending or self.waiting or not self.input_done)

    def _reconnect(self, failures: int) -> bool:
        """Open the stream again after a backoff; False when it is time to give up."""
        if failures >= self.RETRIES or self.stop.wait(
            min(self.BACKOFF * 2**failures, self.BACKOFF_MAX)
        ):
            return False
        with self.cond:
            self.generation += 1
            generation = self.generation
            self.cond.notify_all()
        self.reconnects += 1
        self.results = self.client.settle_stream(self._requests(generation))
        return True

    def _read(self) -> None:
        seq = -1
        failures = 0
        why = ""
        while True:
            try:
                for result in self.results:
                    with self.cond:
                        seq, outcome, hands, batch = self.pending.popleft()
                    failures = 0
                    self.reached = True
                    if is_batch_error(result) and len(batch.items) > 0:
                        result = self._one_by_one(batch, result)
                    outcome.add_batch(self.prefix, hands, result)
                    self.deliver(seq, outcome)
                why = "the server ended the stream"
                self.reached = True
            except SettlementError as e:
                if e.code.name != "UNAVAILABLE" or not self.reached or self.stop.is_set():
                    hint = ""
                    if e.code.name == "RESOURCE_EXHAUSTED":
                        hint = " (the server's message limit: try a smaller --batch)"
                    self.deliver(seq, AuditFailure(f"the stream failed: {e}{hint}"))
                    return
                why = f"the stream failed: {e}"
            except BaseException as e:  # reported to the main thread
                self.deliver(seq, e)
                return
            if self.stop.is_set() or not self._unfinished():
                return
            if not self._reconnect(failures):
                if not self.stop.is_set():
                    self.deliver(
                        seq,
                        AuditFailure(f"{why}, and {failures} reconnections in a row got no answer"),
                    )
                return
            failures += 1

    def _one_by_one(
        self, batch: pb.SettleStreamRequest, error: pb.SettleStreamResponse
    ) -> pb.SettleStreamResponse:
        """A batch the server refused as a whole (too big an answer): ask hand by hand."""
        singles = [pb.SettleStreamRequest(items=[item]) for item in batch.items]
        out = pb.SettleStreamResponse()
        # not strict: a stream cut short is reported by the count check below, not a ValueError
        for answer, item in zip(self.client.settle_stream(singles), batch.items, strict=False):
            if is_batch_error(answer):
                r = out.results.add()
                r.CopyFrom(answer.results[0])
                r.ref = item.ref
            else:
                out.results.extend(answer.results)
        if len(out.results) != len(batch.items):
            e = SettlementError.from_status(error.results[0].error)
            raise AuditFailure(f"the server refused a batch: {e}")
        return out

    def cancel(self) -> None:
        self.results.cancel()


class ServerRunner:
    """Sends each chunk as a ``SettleStreamRequest`` over one of ``workers`` ``SettleStream``
    calls."""

    def __init__(self, client: Any, workers: int) -> None:
        self.client = client
        self.workers = workers
        self.stop = threading.Event()
        self.streams: list[_Stream] = []
        self.cond = threading.Condition()
        self.done: dict[int, Outcome] = {}
        self.failure: BaseException | None = None

    def _deliver(self, seq: int, outcome: Outcome | BaseException) -> None:
        with self.cond:
            if isinstance(outcome, BaseException):
                if self.failure is None:
                    self.failure = outcome
            else:
                self.done[seq] = outcome
            self.cond.notify_all()

    def run(self, prefix: str, work: Iterable[Chunk]) -> Iterator[Outcome]:
        self.streams = [
            _Stream(self.client, prefix, self.stop, self._deliver) for _ in range(self.workers)
        ]
        limit = (_Stream.DEPTH + 3) * self.workers  # batches read but not yet yielded
        next_out = 0
        seq = 0

        def take(block: bool) -> Outcome | None:
            """The outcome of batch ``next_out`` if it is in (waiting for it if ``block``)."""
            nonlocal next_out
            with self.cond:
                while True:
                    # What was answered goes first (in line order), then the failure: a stream
                    # the server ended at a batch boundary delivered every batch it settled.
                    outcome = self.done.pop(next_out, None)
                    if outcome is not None:
                        break
                    if self.failure is not None:
                        raise self.failure
                    if not block:
                        return None
                    self.cond.wait(0.5)
            next_out += 1
            return outcome

        def ready() -> Iterator[Outcome]:
            while (outcome := take(False)) is not None:
                yield outcome

        def wait() -> Outcome:
            outcome = take(True)
            assert outcome is not None  # take(True) returns only with an outcome
            return outcome

        try:
            for first, last, lines in work:
                batch = pb.SettleStreamRequest()
                hands = [prepare(prefix, number, raw, batch) for number, raw in lines]
                while seq - next_out >= limit:
                    yield wait()
                self._submit(
                    self.streams[seq % self.workers], (seq, Outcome(first, last), hands, batch)
                )
                seq += 1
                yield from ready()
            for s in self.streams:
                self._submit(s, None)
            while next_out < seq:
                yield wait()
        except KeyboardInterrupt:
            # Keep the answers already in (in line order); drop the rest.
            yield from ready()
            raise

    def _submit(self, stream: _Stream, entry: _Entry | None) -> None:
        try:
            stream.submit(entry)
        except AuditFailure:
            with self.cond:
                if self.failure is not None:
                    raise self.failure from None
            raise

    def close(self, interrupted: bool) -> None:
        self.stop.set()
        for s in self.streams:
            if interrupted:
                s.cancel()
        for s in self.streams:
            s.thread.join(5 if not interrupted else 1)
