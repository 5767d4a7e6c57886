"""The verifiable audit log: every JSON log line of a replica run is a leaf of one RFC 6962
Merkle tree, whose state is a signed checkpoint (docs/AUDIT.md, "The verifiable log").

Each line the service writes carries

- ``log``: the log's *origin* (c2sp.org/tlog-checkpoint), ``CPSETTLE_AUDIT_LOG_ORIGIN`` + "/" +
  32 random hex digits, new at every process start (one log per replica run);
- ``index``: 0, 1, 2, ... in the order the lines are written: the line's leaf index.

The leaf is the line's bytes as written (UTF-8, without the line feed); its hash is
``SHA-256(0x00 || line)`` (``merkle.leaf_hash``). An ``audit.checkpoint`` line (itself a leaf)
carries the signed checkpoint of every line before it: ``origin\\nsize\\nbase64(root)\\n``
signed as a c2sp.org/signed-note by the settlement key under the key name ``origin`` (proof/
note.py). Checkpoints are written at start (size 0: the run's registration with the witness),
every ``CPSETTLE_AUDIT_CHECKPOINT_EVENTS`` lines, every ``CPSETTLE_AUDIT_CHECKPOINT_SECONDS``
when lines were written since the last one, and at shutdown; each is handed to the witness
feeds (proof/feed.py), which send it to the witness.

Appending returns the line's ``Receipt`` (origin, index, leaf hash) to the caller, at once: the
sealer puts it in the answer (docs/AUDIT.md, "Receipts").
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import fcntl
import hashlib
import itertools
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import LogUnavailable
from .keys import SigningKey
from .merkle import CompactRange
from .note import Checkpoint, NoteKey, sign

__all__ = [
    "CHECKPOINT_EVENT",
    "DEFAULT_ORIGIN_PREFIX",
    "FORCED_EVENTS",
    "LOG_FIELDS",
    "REQUIRED_EVENTS",
    "Feed",
    "InlineSink",
    "Log",
    "Receipt",
    "ThreadSink",
]

CHECKPOINT_EVENT = "audit.checkpoint"
LOG_FIELDS = ("log", "index")
DEFAULT_ORIGIN_PREFIX = "cpsettle.audit"

# Events a settlement's delivery depends on: refused (LogUnavailable) when the log cannot take
# them, so the settlement fails closed. Every other line (an rpc line, a warning) is dropped
# instead and counted (``log.dropped``), so logging never fails a call that issues nothing.
REQUIRED_EVENTS = frozenset({"settlement.issued", "payout.validated", "payout.mismatch"})
# Taken even when the queue is full: at most one per settlement.issued line already queued.
FORCED_EVENTS = frozenset({"settlement.not_delivered"})


@dataclass(frozen=True, slots=True)
class Receipt:
    """Where a line sits: its log's origin, its leaf index and its leaf hash."""

    origin: str
    index: int
    leaf_hash: bytes

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``LogReceipt`` takes (settlement.proto)."""
        return {"origin": self.origin, "index": str(self.index), "leafHash": self.leaf_hash.hex()}


class Feed(Protocol):
    """What takes a log's leaves and checkpoints as they are made (a witness feed)."""

    def attach(self, tree: CompactRange) -> None: ...

    def leaf(self, h: bytes) -> None: ...

    def checkpoint(self, checkpoint: Checkpoint, note: str) -> None: ...


class InlineSink:
    """Writes each line at once, in the caller's thread (tests, in-process servers). A failed
    write raises; the line is not appended."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self.written = 0

    def problem(self, force: bool) -> str:
        return ""

    def put(self, count: int, data: bytes) -> None:
        try:
            self._write(data.decode("utf-8"))
        except OSError as e:
            raise LogUnavailable(f"the audit log cannot be written: {e.strerror or e}") from None
        self.written = count

    async def wait(self, count: int, timeout: float) -> None:
        return None

    def watch(self, listener: Callable[[bool], None]) -> None:
        return None

    def flush(self, timeout: float) -> bool:
        return True

    def state(self) -> tuple[bool, int]:
        """(stuck, lines waiting): a failed write raises at once, nothing waits."""
        return False, 0


class ThreadSink:
    """Writes lines to a file descriptor from its own thread, so a sink that blocks or fails
    never blocks the event loop. Holds at most ``capacity`` lines not yet written; a line whose
    write fails is retried (with backoff) until the sink takes it, so the log never has a gap.

    No torn line: when a write to a regular file stops part-way through a line (a full disk,
    a file size limit), the file is cut back to the end of the last whole line before the write
    is tried again, and so is a line left half-written when the process ends (``flush``).

    The log is *stuck* while a write fails, while one has been blocked for more than
    ``stall_seconds``, or while the queue is full; listeners hear of each change (from any
    thread), and required events are refused meanwhile.
    """

    BATCH = 256  # lines per write

    def __init__(self, fd: int, capacity: int = 2048, stall_seconds: float = 0.5) -> None:
        self.fd = fd
        self.capacity = capacity
        self.stall_seconds = stall_seconds
        self.written = 0  # lines written out
        self.failure = ""  # why the last write failed ("" = it did not)
        self.stuck = False
        self._lines: collections.deque[tuple[int, bytes]] = collections.deque()
        self._cond = threading.Condition()
        self._busy_since = 0.0  # monotonic start of the write in progress (0: none)
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._listeners: list[Callable[[bool], None]] = []
        try:
            self._regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            self._regular = False
        self._torn_at = -1  # the file offset a half-written line starts at (-1: none)
        # Held by the writer thread from a write until any line it tore is cut off again, so
        # that flush, giving up, can stop the writer between whole lines (no torn line).
        self._write_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="audit-log-writer", daemon=True)
        self._thread.start()

    # -- the callers' side (under the log's lock)

    def problem(self, force: bool) -> str:
        """Why a line cannot be queued now ("" = it can)."""
        if force:
            return ""
        with self._cond:
            why = self._why_stuck()
        if why:
            self._set_stuck(True)
        return why

    def _why_stuck(self) -> str:
        if self.failure:
            return f"the audit log cannot be written: {self.failure}"
        if len(self._lines) >= self.capacity:
            return f"the audit log is {len(self._lines)} lines behind its sink"
        busy = self._busy_since
        if busy and time.monotonic() - busy > self.stall_seconds:
            return f"the audit log's sink has taken nothing for {self.stall_seconds} s"
        return ""

    def put(self, count: int, data: bytes) -> None:
        with self._cond:
            self._lines.append((count, data))
            self._cond.notify()

    async def wait(self, count: int, timeout: float) -> None:
        """Until ``count`` lines are written; LogUnavailable after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._cond:
            if self.written >= count:
                return
            entry = (count, loop, future)
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            with self._cond:
                why = self._why_stuck() or (
                    f"the audit log's sink took more than {timeout} s to write an event"
                )
            self._set_stuck(True)
            raise LogUnavailable(why) from None
        finally:
            with self._cond:
                if entry in self._waiters:
                    self._waiters.remove(entry)

    def watch(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(healthy)`` (from any thread) whenever the log turns stuck or well,
        and now if it is stuck already."""
        with self._cond:
            self._listeners.append(listener)
            stuck = self.stuck
        if stuck:
            listener(False)

    def flush(self, timeout: float) -> bool:
        """Wait (blocking) until every queued line is written; False after ``timeout``, and
        then a line left half-written in a regular file is cut off (no torn line)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._lines:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._listeners.clear()  # the process ends: nobody to tell any more
                    break
                self._cond.wait(left)
            else:
                return True
        # The writer may be inside a write: take the write lock (a write to a regular file
        # returns at once, full or not) so that no write starts again and none is half done.
        self._closing = True
        if self._regular and self._write_lock.acquire(timeout=1.0):  # a pipe is never cut
            try:
                with self._cond:
                    self._cut_torn()
            finally:
                self._write_lock.release()
        return False

    def state(self) -> tuple[bool, int]:
        """(stuck, lines waiting) now, for the metrics (read at each scrape): stuck while a
        write fails, one has been blocked for more than ``stall_seconds`` or the queue is full,
        whether or not a call has asked since."""
        with self._cond:
            return bool(self.stuck or self._why_stuck()), len(self._lines)

    def _set_stuck(self, stuck: bool) -> None:
        with self._cond:
            if self.stuck == stuck:
                return
            self.stuck = stuck
            listeners = list(self._listeners)
        for listener in listeners:
            # RuntimeError: its event loop has closed (the process is ending)
            with contextlib.suppress(RuntimeError):
                listener(not stuck)

    # -- the writer thread

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._lines:
                    self._cond.wait()
                batch = list(itertools.islice(self._lines, self.BATCH))
                self._busy_since = time.monotonic()
            if not self._write_all([data for _, data in batch]):
                return  # flush gave up: the process is ending
            with self._cond:
                for _ in batch:
                    self._lines.popleft()
                self._busy_since = 0.0
                self.written = batch[-1][0]
                ready = [w for w in self._waiters if w[0] <= self.written]
                self._waiters = [w for w in self._waiters if w[0] > self.written]
                self._cond.notify_all()
                backlog = len(self._lines)
            for _, loop, future in ready:
                try:  # noqa: SIM105 — per line written: a try costs nothing, suppress() an object
                    loop.call_soon_threadsafe(_settle_future, future)
                except RuntimeError:  # that loop has closed: nobody waits any more
                    pass
            if self.stuck and backlog < self.capacity // 2:
                self._set_stuck(False)

    def _write_all(self, lines: list[bytes]) -> bool:
        """Write ``lines`` out, retrying until the sink takes them all (True); False when
        flush has given up on the sink (the process is ending)."""
        data = b"".join(lines)
        ends = list(itertools.accumulate(len(x) for x in lines))
        view = memoryview(data)
        done = 0  # bytes of data written (in a regular file, the end of a whole line)
        backoff = 0.01
        while done < len(data):
            with self._write_lock:
                if self._closing:
                    return False
                failure = self._write_once(view, done, ends)
                if isinstance(failure, int):
                    done = failure
            if isinstance(failure, int):
                if self.failure:
                    with self._cond:
                        self.failure = ""
                continue
            with self._cond:
                self.failure = failure
            self._set_stuck(True)
            time.sleep(backoff)  # the writer's own thread: nothing else waits on it
            backoff = min(backoff * 2, 1.0)
        return True

    def _write_once(self, view: memoryview, done: int, ends: list[int]) -> int | str:
        """One write of ``view[done:]`` (under the write lock): the new end of the whole
        lines written, or why nothing more was written. A write that stops inside a line is
        cut back to the line's start at once, and counts as a failure (a full file)."""
        start = self._offset() if self._regular else -1
        try:
            n = os.write(self.fd, view[done:])
        except InterruptedError:
            return done
        except OSError as e:
            return f"{e.strerror} (errno {e.errno})"
        if n == 0:
            return "the sink took no bytes"
        if done + n == len(view) or not self._regular or start < 0:
            return done + n
        whole = max([0] + [e for e in ends if e <= done + n])
        if whole == done + n:
            return whole
        with self._cond:  # data[whole] sits at file offset start + (whole - done)
            self._torn_at = start + whole - done
            self._cut_torn()
        if whole > done:
            return whole
        return "a write stopped inside a line (is the disk full?)"

    def _offset(self) -> int:
        """Where the next write lands: the file's end when it was opened to append (its own
        offset says 0 until it has written), else its offset."""
        try:
            if fcntl.fcntl(self.fd, fcntl.F_GETFL) & os.O_APPEND:
                return os.fstat(self.fd).st_size
            return os.lseek(self.fd, 0, os.SEEK_CUR)
        except OSError:
            return -1

    def _cut_torn(self) -> None:
        """Cut a regular file back to the end of its last whole line (no torn line left)."""
        at = self._torn_at
        if at < 0:
            return
        self._torn_at = -1  # tried once: a stale offset must never cut whole lines later
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, at)
            os.lseek(self.fd, at, os.SEEK_SET)


def _settle_future(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Log:
    """Numbers, hashes, checkpoints and writes the log lines of one process, one at a time, in
    order.

    Lines are appended (numbered, rendered and hashed into the tree) in the caller's thread
    under one lock, in the order they are queued, and written in that order by the sink; a
    line the sink cannot take now is not appended at all, so the log never has a gap.
    """

    def __init__(
        self,
        render: Callable[[dict[str, Any]], str],
        timestamp: Callable[[], str],
        checkpoint_every: int = 1000,
        sink: InlineSink | ThreadSink | None = None,
        write: Callable[[str], None] | None = None,
        origin_prefix: str = DEFAULT_ORIGIN_PREFIX,
    ) -> None:
        self.log_id = secrets.token_hex(16)
        self.origin = f"{origin_prefix}/{self.log_id}"
        self.tree = CompactRange()
        self.note_key: NoteKey | None = None
        self.key_id = ""
        self.checkpoint_every = checkpoint_every
        self.since_checkpoint = 0
        self.checkpoints = 0
        self.dropped = 0  # lines not written since the last log.dropped line
        if sink is None:
            assert write is not None, "a write function or a sink"
            sink = InlineSink(write)
        self.sink = sink
        self.feeds: list[Feed] = []
        self._render = render
        self._timestamp = timestamp
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Lines appended so far."""
        return self.tree.size

    def set_signer(self, key: SigningKey | None) -> None:
        """Sign checkpoints with ``key`` (the settlement key) under the key name ``origin``."""
        with self._lock:
            self.note_key = None if key is None else NoteKey.from_private(self.origin, key.private)
            self.key_id = "" if key is None else key.key_id

    def add_feed(self, feed: Feed) -> None:
        """Hand every later leaf and checkpoint to ``feed``, which starts from the tree as it
        is (lines written before it was added included)."""
        with self._lock:
            feed.attach(self.tree)
            self.feeds.append(feed)

    def emit(self, event: dict[str, Any]) -> Receipt | None:
        """Append ``event`` as one line; its receipt. Raises LogUnavailable for a required
        event the log cannot take; drops any other one (None)."""
        name = event.get("event")
        required = name in REQUIRED_EVENTS
        force = name in FORCED_EVENTS
        with self._lock:
            try:
                if self.dropped:
                    self._append(
                        {
                            "event": "log.dropped",
                            "level": "warning",
                            "timestamp": self._timestamp(),
                            "count": self.dropped,
                        },
                        force,
                    )
                    self.dropped = 0
                receipt = self._append(event, force)
            except LogUnavailable:
                if required:
                    raise
                self.dropped += 1
                return None
            if self.since_checkpoint >= self.checkpoint_every:
                self._try_checkpoint("count")
            return receipt

    async def written(self, count: int, timeout: float) -> None:
        """Until the first ``count`` lines are written by the sink (LogUnavailable after
        ``timeout``)."""
        await self.sink.wait(count, timeout)

    def checkpoint(self, reason: str) -> None:
        """Write a checkpoint line now (for ``interval``, only when lines came since the
        last)."""
        with self._lock:
            if reason != "interval" or self.since_checkpoint:
                self._try_checkpoint(reason)

    def _append(self, event: dict[str, Any], force: bool = False) -> Receipt:
        problem = self.sink.problem(force)
        if problem:
            raise LogUnavailable(problem)
        index = self.tree.size
        event["log"], event["index"] = self.origin, index
        data = self._render(event).encode("utf-8")
        h = hashlib.sha256(b"\x00" + data).digest()
        self.sink.put(index + 1, data + b"\n")  # raises (and nothing moves) if it cannot take it
        self.tree.append(h)
        for feed in self.feeds:
            feed.leaf(h)
        self.since_checkpoint += 1
        return Receipt(self.origin, index, h)

    def _try_checkpoint(self, reason: str) -> None:
        with contextlib.suppress(LogUnavailable):  # the next line, or interval, tries again
            self._checkpoint(reason)

    def _checkpoint(self, reason: str) -> None:
        checkpoint = Checkpoint(self.origin, self.tree.size, self.tree.root())
        text = checkpoint.text()
        key = self.note_key
        note = sign(text, key) if key is not None else text
        event: dict[str, Any] = {
            "event": CHECKPOINT_EVENT,
            "level": "info",
            "timestamp": self._timestamp(),
            "reason": reason,
            "size": checkpoint.size,
            "root": base64.b64encode(checkpoint.root).decode("ascii"),
            "signed": key is not None,
            "key_id": self.key_id,
            "checkpoint": note,
        }
        self._append(event, force=reason == "shutdown")
        self.since_checkpoint = 0
        self.checkpoints += 1
        for feed in self.feeds:  # unsigned too: the witness refuses it, and the feed says so
            feed.checkpoint(checkpoint, note)
