"""A replica's side of the witness (docs/AUDIT.md, "The witness"): each checkpoint of its audit
log goes to the witness with a consistency proof from the last one the witness cosigned, by
c2sp.org/tlog-witness's ``add-checkpoint`` call, from a thread of its own.

The first checkpoint of a run (size 0, written at start) registers the run's log: from then on
the witness knows the log exists, so a run cannot be withheld without the witness saying so.

While the witness cannot be reached the replica goes on settling: checkpoints wait (only the
newest is sent when it returns, with one proof from the witness's size: it covers every one
before), ``on_change`` reports the state (a metric and a log line, server.py). However long the
outage, the feed catches up by itself when the witness returns, in O(log n) memory:

- RFC 6962's consistency proof from ``m`` leaves to ``n`` is made of subtrees of ``[0, m)`` and
  of ``[m, n)`` only, so the feed keeps the compact range of the tree the witness cosigned
  (``acked``: at most one hash per bit of ``m``) and compact ranges of the leaves after it
  (``merkle.Range``: at most two hashes per level), cut only where a proof may start or end: at
  the newest checkpoint and at each size sent whose answer was lost (the witness may hold it:
  its 409 says so, and the feed moves on from there);
- the leaf hashes the log hands over (32 bytes a line) are folded into those ranges by the
  feed's thread up to the newest checkpoint; only the lines written since it wait unfolded.

So the log itself keeps nothing per line (its tree is a ``CompactRange``), and the feed keeps
the lines of one checkpoint interval at most (``CPSETTLE_AUDIT_CHECKPOINT_EVENTS``, 1000 by
default: 32 kB) and a few kilobytes of subtree hashes, whatever the lines the witness has not
seen (tests/record/test_feed.py counts them). Nothing is ever given up: there is no "gap".
"""

from __future__ import annotations

import base64
import http.client
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from .merkle import CompactRange, Range, consistency
from .note import Checkpoint

__all__ = ["FeedState", "WitnessFeed", "add_checkpoint_body", "witness_label"]

HASH = 32
# Sizes sent whose answer never came (a timeout, a connection lost after the request went
# out), remembered at most: the witness may hold any of them. Each costs a compact range's
# few hashes; past this many (the witness took requests for minutes without ever answering)
# the oldest is forgotten, and a witness that holds exactly that size is reported, not followed.
MAX_UNANSWERED = 64


@dataclass(frozen=True)
class FeedState:
    """What a feed reports on each change: whether the witness took the last checkpoint, the
    lines no cosigned checkpoint covers yet, the last cosigning (Unix time, 0 = never), and
    why it is down ("" when up)."""

    up: bool
    pending_lines: int
    cosigned_at: float
    why: str


def add_checkpoint_body(old: int, proof: list[bytes], note: str) -> bytes:
    """The body of c2sp.org/tlog-witness's add-checkpoint request."""
    lines = [f"old {old}"] + [base64.b64encode(p).decode("ascii") for p in proof]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


def witness_label(url: str) -> str:
    """The witness as the metrics name it: its URL's host, port and path, without the scheme
    and any user or password (``http://u:p@cpsettle-witness:8780/`` is
    ``cpsettle-witness:8780``): set by the operator, one per configured witness.

    >>> witness_label("https://user:secret@witness.example:8443/cpsettle/")
    'witness.example:8443/cpsettle'
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return (host + parts.path).rstrip("/")


class WitnessFeed:
    """Sends one log's checkpoints to the witness at ``url`` (its submission prefix)."""

    def __init__(
        self, url: str, timeout: float = 2.0, on_change: Callable[[FeedState], None] | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.on_change = on_change or (lambda state: None)
        self.acked = CompactRange()  # the tree of the witness's last cosigned checkpoint
        self.cosigned_at = 0.0
        self.cosignatures = ""  # the witness's last answer: its signature lines
        self._fresh = True  # the witness holds nothing of this log yet: the next send is old 0
        self._lines = 0  # the log's lines so far
        # the log's side: leaf hashes after the spans, and the sizes of the checkpoints among
        # them (where the spans must be cut)
        self._pending = bytearray()
        self._cuts: list[int] = []
        # the feed's thread only: compact ranges of [acked.size, folded), cut at the newest
        # checkpoint and at each unanswered size
        self._spans: list[Range] = []
        self._folded = 0
        self._unanswered: list[int] = []  # sizes sent whose answer never came
        self._latest: tuple[Checkpoint, str] | None = None  # newest not yet cosigned
        self._lock = threading.Condition()
        self._up: bool | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="witness-feed", daemon=True)
        self._thread.start()

    # -- the log's side (under the log's lock: kept short)

    def attach(self, tree: CompactRange) -> None:
        """Start from the log as it is (lines written before the feed was added): the first
        checkpoint goes with old size 0, which needs no proof."""
        with self._lock:
            self.acked = tree.copy()
            self._lines = self._folded = tree.size
            self._pending = bytearray()
            self._cuts = []
            self._spans = []

    def leaf(self, h: bytes) -> None:
        with self._lock:
            self._pending += h
            self._lines += 1

    def checkpoint(self, checkpoint: Checkpoint, note: str) -> None:
        with self._lock:
            self._cuts.append(checkpoint.size)
            self._latest = (checkpoint, note)
            self._lock.notify()

    # -- the server's side

    def close(self, timeout: float) -> bool:
        """Wait (blocking) until the newest checkpoint is cosigned; False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._latest is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(min(left, 0.05))
            self._closing = True
            self._lock.notify_all()
            return self._latest is None

    @property
    def pending_lines(self) -> int:
        """The log's lines no checkpoint the witness cosigned covers."""
        with self._lock:
            return self._lines - self.acked.size

    def held_hashes(self) -> int:
        """The 32-byte hashes the feed keeps now (its memory, bar a constant)."""
        with self._lock:
            return (
                len(self._pending) // HASH
                + sum(len(s) for s in self._spans)
                + bin(self.acked.size).count("1")
            )

    # -- the feed's thread

    def _run(self) -> None:
        backoff = 0.25
        while True:
            with self._lock:
                while self._latest is None and not self._closing:
                    self._lock.wait()
                latest, fresh = self._latest, self._fresh
                if latest is None:
                    return  # closing, nothing left
                cuts, self._cuts = self._cuts, []
                # fold up to the newest checkpoint: the lines after it wait for the next one
                upto = max(0, cuts[-1] - self._folded) * HASH if cuts else 0
                leaves = bytes(self._pending[:upto])
                del self._pending[:upto]
            self._fold(leaves, cuts)
            why = self._send(latest[0], latest[1], fresh)
            if not why:
                backoff = 0.25
                continue
            self._report(False, why)
            with self._lock:
                if self._closing:
                    return
                self._lock.wait(backoff)
            backoff = min(backoff * 2, 10.0)

    def _fold(self, leaves: bytes, cuts: list[int]) -> None:
        """Append ``leaves`` (from ``_folded`` on) to the spans, a new span at each cut, then
        merge the spans where no proof can start or end any more."""
        latest = self._latest
        keep = set(self._unanswered) | ({latest[0].size} if latest is not None else set())
        spans, at, cut = self._spans, self._folded, keep.union(cuts)
        for i in range(0, len(leaves), HASH):
            if not spans or at in cut:
                spans.append(Range(at))
            spans[-1].append(leaves[i : i + HASH])
            at += 1
        self._folded = at
        merged: list[Range] = []
        for span in spans:
            if merged and merged[-1].end not in keep:
                merged[-1].extend(span)
            else:
                merged.append(span)
        self._spans = merged

    def _range_to(self, size: int) -> Range | None:
        """The compact range ``[acked.size, size)`` from the spans; None when ``size`` is not
        where one ends."""
        r = Range(self.acked.size)
        for span in self._spans:
            if span.end > size:
                break
            r.extend(span)
        return r if r.end == size else None

    def _advance(self, size: int, new: Range) -> None:
        """The witness holds ``size`` now: its tree is the acked one and ``new``."""
        whole = Range.of(self.acked)
        whole.extend(new)
        acked = CompactRange(size, [h for _, _, h in whole.nodes()])
        with self._lock:
            self.acked = acked
            self._spans = [s for s in self._spans if s.begin >= size]
            self._unanswered = [u for u in self._unanswered if u > size]
            self._fresh = False
            if self._latest is not None and self._latest[0].size <= size:
                self._latest = None
            self._lock.notify_all()

    def _send(self, checkpoint: Checkpoint, note: str, fresh: bool = False) -> str:
        """One add-checkpoint call; "" when the witness cosigned (or it holds a size the feed
        sent, from which it goes on), else why not."""
        new = self._range_to(checkpoint.size)
        if new is None:
            return f"the feed cannot prove a checkpoint of {checkpoint.size} lines"
        old = 0 if fresh else self.acked.size
        proof = consistency(self.acked, new) if old else []
        body = add_checkpoint_body(old, proof, note)
        request = urllib.request.Request(
            f"{self.url}/add-checkpoint",
            data=body,
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                text = answer.read(1 << 16).decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            detail = e.read(1 << 12).decode("utf-8", "replace").strip()
            if e.code == 409 and detail.isdigit():
                if self._catch_up(int(detail)):
                    return ""
                return (
                    f"the witness holds size {detail} of this log, which the feed cannot prove from"
                )
            return f"the witness answered {e.code}: {detail[:200]}"
        except (OSError, ValueError, http.client.HTTPException) as e:
            refused = isinstance(getattr(e, "reason", e), ConnectionRefusedError)
            if not refused:  # the request may have arrived: the witness may hold this size
                self._unanswered.append(checkpoint.size)
                del self._unanswered[:-MAX_UNANSWERED]
            return f"the witness cannot be reached: {getattr(e, 'reason', e)}"
        with self._lock:
            self.cosigned_at = time.time()
            self.cosignatures = text
        self._advance(checkpoint.size, new)
        self._report(True, "")
        return ""

    def _catch_up(self, size: int) -> bool:
        """The witness already holds ``size``, a checkpoint it took before its answer was lost:
        go on from there (True)."""
        new = self._range_to(size) if size in self._unanswered else None
        if new is None:
            return False
        self._advance(size, new)
        return True

    def _report(self, up: bool, why: str) -> None:
        """Tell ``on_change``, outside the lock: the callback may write a log line, whose log
        calls ``leaf`` under its own lock."""
        with self._lock:
            state = FeedState(up, self._lines - self.acked.size, self.cosigned_at, why)
            changed = self._up != up
            self._up = up
        if changed or up:
            try:  # noqa: SIM105 — per leaf: a try costs nothing, suppress() an object each time
                self.on_change(state)
            except Exception:  # a report never stops the feed
                pass
