"""The tamper-evident audit log: every JSON log line is a link of a hash chain.

Each line the service writes (docs/AUDIT.md, "The audit log chain") carries

- ``chain``: 32 hex digits, random, new at every process start (one chain per replica run);
- ``seq``: 1, 2, 3, … in the order the lines are written;
- ``prev``: SHA-256 (hex) of the previous line's bytes as written (UTF-8, without its line
  feed); the first line's ``prev`` is 64 zeros.

So deleting, editing, reordering or repeating a line breaks the chain where it happened, and
``cpsettle audit-log verify`` names the line. What the chain cannot show alone is a cut at its
end: the last lines are covered once a later line exists. So the head is signed: an
``audit.head`` line, itself a link, carries an Ed25519 signature (the settlement key, keys.py)
over ``"cpsettle-audit-head/v1\\n" + chain + "\\n" + seq + "\\n" + prev + "\\n" + key_id``, which
vouches for every line before it. Heads are written every ``CPSETTLE_AUDIT_HEAD_EVENTS`` lines,
every ``CPSETTLE_AUDIT_HEAD_SECONDS`` when lines were written since the last head, and at
shutdown (``reason``: ``count``, ``interval``, ``shutdown``).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import hashlib
import itertools
import json
import os
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import LogUnavailable
from .keys import ALGORITHM, KeySet, SigningKey

GENESIS = "0" * 64
HEAD_EVENT = "audit.head"
HEAD_PREFIX = "cpsettle-audit-head/v1\n"
CHAIN_FIELDS = ("chain", "seq", "prev")


def line_hash(line: bytes) -> str:
    """SHA-256 of one line's bytes, without its line feed (and a carriage return before it)."""
    return hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()


def head_bytes(chain: str, seq: int, prev: str, key_id: str) -> bytes:
    """What an ``audit.head`` line's signature covers."""
    return f"{HEAD_PREFIX}{chain}\n{seq}\n{prev}\n{key_id}".encode()


# Events a settlement's delivery depends on: refused (LogUnavailable) when the log cannot take
# them, so the settlement fails closed. Every other line (an rpc line, a warning) is dropped
# instead and counted (``log.dropped``), so logging never fails a call that issues nothing.
REQUIRED_EVENTS = frozenset({"settlement.issued", "payout.validated", "payout.mismatch"})
# Taken even when the queue is full: at most one per settlement.issued line already queued.
FORCED_EVENTS = frozenset({"settlement.not_delivered"})

# The seq of the last line this task or thread linked: a caller awaits its writing
# (``Chain.written``) before it answers.
last_seq: contextvars.ContextVar[int] = contextvars.ContextVar("audit_last_seq", default=0)


class InlineSink:
    """Writes each line at once, in the caller's thread (tests, in-process servers). A failed
    write raises; the line is not linked."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self.written = 0

    def problem(self, force: bool) -> str:
        return ""

    def put(self, seq: int, text: str) -> None:
        try:
            self._write(text)
        except OSError as e:
            raise LogUnavailable(f"the audit log cannot be written: {e.strerror or e}") from None
        self.written = seq

    async def wait(self, seq: int, timeout: float) -> None:
        return None

    def watch(self, listener: Callable[[bool], None]) -> None:
        return None

    def flush(self, timeout: float) -> bool:
        return True


class ThreadSink:
    """Writes lines to a file descriptor from its own thread, so a sink that blocks or fails
    never blocks the event loop. Holds at most ``capacity`` lines not yet written; a line whose
    write fails is retried (with backoff) until the sink takes it, so the chain never has a gap.

    The log is *stuck* while a write fails, while one has been blocked for more than
    ``stall_seconds``, or while the queue is full; listeners hear of each change (from any
    thread), and required events are refused meanwhile.
    """

    BATCH = 256  # lines per write

    def __init__(self, fd: int, capacity: int = 2048, stall_seconds: float = 0.5) -> None:
        self.fd = fd
        self.capacity = capacity
        self.stall_seconds = stall_seconds
        self.written = 0  # seq of the last line written out
        self.failure = ""  # why the last write failed ("" = it did not)
        self.stuck = False
        self._lines: collections.deque[tuple[int, bytes]] = collections.deque()
        self._cond = threading.Condition()
        self._busy_since = 0.0  # monotonic start of the write in progress (0: none)
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._listeners: list[Callable[[bool], None]] = []
        self._thread = threading.Thread(target=self._run, name="audit-log-writer", daemon=True)
        self._thread.start()

    # -- the callers' side (under the chain's lock)

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

    def put(self, seq: int, text: str) -> None:
        with self._cond:
            self._lines.append((seq, text.encode("utf-8")))
            self._cond.notify()

    async def wait(self, seq: int, timeout: float) -> None:
        """Until line ``seq`` is written; LogUnavailable after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._cond:
            if self.written >= seq:
                return
            entry = (seq, loop, future)
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            with self._cond:
                why = self._why_stuck() or (f"the audit log's sink took more than {timeout} s "
                                            "to write an event")
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
        """Wait (blocking) until every queued line is written; False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._lines:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def _set_stuck(self, stuck: bool) -> None:
        with self._cond:
            if self.stuck == stuck:
                return
            self.stuck = stuck
        for listener in list(self._listeners):
            listener(not stuck)

    # -- the writer thread

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._lines:
                    self._cond.wait()
                batch = list(itertools.islice(self._lines, self.BATCH))
                self._busy_since = time.monotonic()
            self._write_all(b"".join(data for _, data in batch))
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
                loop.call_soon_threadsafe(_settle_future, future)
            if self.stuck and backlog < self.capacity // 2:
                self._set_stuck(False)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        backoff = 0.01
        while view:
            try:
                n = os.write(self.fd, view)
            except InterruptedError:
                continue
            except OSError as e:
                with self._cond:
                    self.failure = f"{e.strerror} (errno {e.errno})"
                self._set_stuck(True)
                time.sleep(backoff)  # the writer's own thread: nothing else waits on it
                backoff = min(backoff * 2, 1.0)
                continue
            view = view[n:]
            if self.failure:
                with self._cond:
                    self.failure = ""


def _settle_future(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Chain:
    """Numbers, links and writes the log lines of one process, one at a time, in order.

    Lines are linked (numbered and hashed) in the caller's thread under one lock, in the order
    they are queued, and written in that order by the sink; a line the sink cannot take now is
    not linked at all, so the chain never has a gap.
    """

    def __init__(self, write: Callable[[str], None] | None, render: Callable[[dict[str, Any]], str],
                 timestamp: Callable[[], str], head_every: int = 1000,
                 sink: InlineSink | ThreadSink | None = None) -> None:
        self.chain_id = secrets.token_hex(16)
        self.seq = 0
        self.prev = GENESIS
        self.signer: SigningKey | None = None
        self.head_every = head_every
        self.since_head = 0
        self.dropped = 0  # lines not written since the last log.dropped line
        if sink is None:
            assert write is not None, "a write function or a sink"
            sink = InlineSink(write)
        self.sink = sink
        self._render = render
        self._timestamp = timestamp
        self._lock = threading.Lock()

    def emit(self, event: dict[str, Any]) -> None:
        """Link ``event`` to the chain, render it and queue it as one line. Raises
        LogUnavailable for a required event the log cannot take; drops any other one."""
        name = event.get("event")
        required = name in REQUIRED_EVENTS
        force = name in FORCED_EVENTS
        with self._lock:
            try:
                if self.dropped:
                    self._emit({"event": "log.dropped", "level": "warning",
                                "timestamp": self._timestamp(), "count": self.dropped}, force)
                    self.dropped = 0
                self._emit(event, force)
            except LogUnavailable:
                if required:
                    raise
                self.dropped += 1
                return
            if self.since_head >= self.head_every:
                self._try_head("count")

    async def written(self, seq: int, timeout: float) -> None:
        """Until line ``seq`` is written by the sink (LogUnavailable after ``timeout``)."""
        await self.sink.wait(seq, timeout)

    def sign_head(self, reason: str) -> None:
        """Write a signed ``audit.head`` line now (not for ``interval`` when nothing moved)."""
        with self._lock:
            if reason != "interval" or self.since_head:
                self._try_head(reason)

    def _emit(self, event: dict[str, Any], force: bool = False) -> None:
        problem = self.sink.problem(force)
        if problem:
            raise LogUnavailable(problem)
        seq = self.seq + 1
        event["chain"], event["seq"], event["prev"] = self.chain_id, seq, self.prev
        line = self._render(event)
        self.sink.put(seq, line + "\n")  # raises (and nothing moves) if it cannot take it
        self.seq = seq
        self.prev = hashlib.sha256(line.encode("utf-8")).hexdigest()
        self.since_head += 1
        last_seq.set(seq)

    def _try_head(self, reason: str) -> None:
        try:
            self._head(reason)
        except LogUnavailable:
            pass  # the next line, or the next interval, tries again

    def _head(self, reason: str) -> None:
        key = self.signer
        seq = self.seq + 1
        event: dict[str, Any] = {"event": HEAD_EVENT, "level": "info",
                                 "timestamp": self._timestamp(), "reason": reason,
                                 "covers_seq": self.seq}
        if key is None:
            event.update(algorithm="NONE", key_id="", signature="")
        else:
            event.update(algorithm=ALGORITHM, key_id=key.key_id,
                         signature=key.sign(head_bytes(self.chain_id, seq, self.prev,
                                                       key.key_id)))
        self._emit(event)
        self.since_head = 0


# --------------------------------------------------------------------------- verification


@dataclass
class Link:
    where: str  # "FILE:LINE"
    seq: int
    prev: str
    hash: str
    event: dict[str, Any]


@dataclass
class ChainReport:
    chain_id: str
    links: list[Link] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    notes: list[str] = field(default_factory=list)

    def problem(self, kind: str, text: str) -> None:
        self.problems.append((kind, text))


@dataclass
class LogReport:
    chains: list[ChainReport]
    # "FILE:LINE: why": lines that are not links (other programs' output on the same stream).
    # Not failures by themselves: a link made unreadable shows as a gap in its chain.
    unreadable: list[str]
    unchained: int  # JSON lines without chain fields (not written by a chained service)

    @property
    def intact(self) -> bool:
        return not any(c.problems for c in self.chains)


def read_links(paths: Iterable[str]) -> LogReport:
    chains: dict[str, ChainReport] = {}
    unreadable: list[str] = []
    unchained = 0
    for path in paths:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                where = f"{path}:{number}"
                if not raw.strip():
                    continue
                try:
                    event = json.loads(raw)
                except ValueError:
                    unreadable.append(f"{where}: not a JSON line (edited or cut)")
                    continue
                if not isinstance(event, dict) or not all(k in event for k in CHAIN_FIELDS):
                    unchained += 1
                    continue
                chain, seq, prev = (event[k] for k in CHAIN_FIELDS)
                if not isinstance(chain, str) or type(seq) is not int or not isinstance(prev, str):
                    unreadable.append(f"{where}: chain fields of the wrong type (edited)")
                    continue
                report = chains.setdefault(chain, ChainReport(chain))
                report.links.append(Link(where, seq, prev, line_hash(raw), event))
    return LogReport(list(chains.values()), unreadable, unchained)


def check_chain(c: ChainReport, keys: KeySet | None) -> None:
    """Gaps, edits, reordering, repeats and forks of one chain, each named by its line."""
    by_seq: dict[int, list[Link]] = defaultdict(list)
    for link in c.links:
        by_seq[link.seq].append(link)
    # repeats and forks: one seq, several lines
    for seq, links in sorted(by_seq.items()):
        first = links[0]
        for other in links[1:]:
            if other.hash == first.hash:
                c.problem("duplicate", f"{other.where}: repeats {first.where} (seq {seq})")
            else:
                c.problem("fork", f"{other.where}: a second, different line with seq {seq} "
                                  f"(the other is {first.where})")
    # reordering: a line after one with a higher seq
    highest: Link | None = None
    for link in c.links:
        if highest is not None and link.seq < highest.seq and len(by_seq[link.seq]) == 1:
            c.problem("order", f"{link.where}: seq {link.seq} comes after {highest.where} "
                               f"(seq {highest.seq})")
        if highest is None or link.seq > highest.seq:
            highest = link
    # gaps
    seqs = sorted(by_seq)
    if seqs and seqs[0] != 1:
        c.problem("gap", f"{by_seq[seqs[0]][0].where}: the chain starts at seq {seqs[0]}; "
                         f"seq 1 to {seqs[0] - 1} are missing")
    for a, b in itertools.pairwise(seqs):
        if b > a + 1:
            missing = f"seq {a + 1}" if b == a + 2 else f"seq {a + 1} to {b - 1}"
            c.problem("gap", f"{by_seq[b][0].where}: {missing} missing before this line "
                             f"(after {by_seq[a][0].where})")
    # edits: each line's prev must be the hash of the line before it
    for seq in seqs:
        for link in by_seq[seq]:
            if seq == 1:
                if link.prev != GENESIS:
                    c.problem("edit", f"{link.where}: seq 1 must have prev {GENESIS[:8]}…")
                continue
            before = by_seq.get(seq - 1)
            if before and not any(b.hash == link.prev for b in before):
                c.problem("edit", f"{before[0].where}: this line (seq {seq - 1}) was changed: "
                                  f"it no longer hashes to the prev of {link.where}")
    # signed heads
    last_head: Link | None = None
    for link in c.links:
        if link.event.get("event") != HEAD_EVENT:
            continue
        e = link.event
        if e.get("algorithm") != ALGORITHM:
            c.notes.append(f"{link.where}: unsigned head (the service had no signing key)")
            continue
        if keys is None:
            c.notes.append(f"{link.where}: head signed by key {e.get('key_id')!r}, "
                           "signature NOT checked (no --keys)")
            last_head = link
            continue
        key = keys.get(str(e.get("key_id", "")))
        good = key is not None and key.verify(str(e.get("signature", "")),
                                              head_bytes(c.chain_id, link.seq, link.prev,
                                                         key.key_id))
        if not good:
            why = "unknown key id" if key is None else "does not match"
            c.problem("signature", f"{link.where}: head signature {why} (key "
                                   f"{e.get('key_id')!r})")
        else:
            last_head = link
    if c.links:
        end = max(c.links, key=lambda x: x.seq)
        if last_head is None:
            c.notes.append("no signed head: the chain's end is not vouched for (lines cut "
                           "from the end would not show)")
        elif last_head.seq != end.seq or last_head.event.get("reason") != "shutdown":
            after = end.seq - last_head.seq
            c.notes.append(f"{after} line(s) after the last signed head ({last_head.where}); "
                           "no shutdown head: lines cut from the end, or a crash, look the same")


def check_logs(paths: Iterable[str], keys: KeySet | None = None) -> LogReport:
    report = read_links(paths)
    for c in report.chains:
        check_chain(c, keys)
    return report


def describe(report: LogReport, keys_checked: bool) -> list[str]:
    out = []
    for c in report.chains:
        span = (f"seq {min(x.seq for x in c.links)} to {max(x.seq for x in c.links)}"
                if c.links else "empty")
        verdict = "INTACT" if not c.problems else f"{len(c.problems)} PROBLEM(S)"
        out.append(f"chain {c.chain_id}: {len(c.links)} lines, {span}: {verdict}")
        out += [f"  - {kind}: {text}" for kind, text in c.problems]
        out += [f"  note: {n}" for n in c.notes]
    out += [f"note: not a link: {u}" for u in report.unreadable]
    if report.unchained:
        out.append(f"note: {report.unchained} JSON line(s) without chain fields were skipped")
    if not keys_checked:
        out.append("head signatures were NOT checked: give --keys KEYS.json")
    return out
