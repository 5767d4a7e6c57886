"""A replica's side of the witness (docs/AUDIT.md, "The witness"): each checkpoint of its audit
log goes to the witness with a consistency proof from the last one the witness cosigned, by
c2sp.org/tlog-witness's ``add-checkpoint`` call, from a thread of its own.

The first checkpoint of a run (size 0, written at start) registers the run's log: from then on
the witness knows the log exists, so a run cannot be withheld without the witness saying so.

The feed keeps what the next consistency proof needs and nothing more: the compact range of
the tree the witness last cosigned, and the leaf hashes after it (32 bytes a line). While the
witness cannot be reached the replica goes on settling: checkpoints wait (only the newest is
sent when it returns, with a proof from the witness's size: it covers every one before), the
leaf hashes pile up, ``on_change`` reports the state (a metric and a log line, server.py). Past
``max_pending`` lines the feed gives up on this log (a ``witness.gap``): the leaves are
dropped, and the witness keeps the last checkpoint it cosigned; the lines after it are vouched
for by the log's own signed checkpoints only, until the replica restarts with a new log.
"""

from __future__ import annotations

import base64
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from .merkle import CompactRange, Extension
from .note import Checkpoint

__all__ = ["FeedState", "WitnessFeed", "add_checkpoint_body"]

HASH = 32


@dataclass(frozen=True)
class FeedState:
    """What a feed reports on each change: whether the witness took the last checkpoint, the
    lines no cosigned checkpoint covers yet, the last cosigning (Unix time, 0 = never), and
    why it is down ("" when up)."""

    up: bool
    pending_lines: int
    cosigned_at: float
    why: str
    gap: bool = False


def add_checkpoint_body(old: int, proof: list[bytes], note: str) -> bytes:
    """The body of c2sp.org/tlog-witness's add-checkpoint request."""
    lines = [f"old {old}"] + [base64.b64encode(p).decode("ascii") for p in proof]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


class WitnessFeed:
    """Sends one log's checkpoints to the witness at ``url`` (its submission prefix)."""

    def __init__(self, url: str, timeout: float = 2.0, max_pending: int = 2_000_000,
                 on_change: Callable[[FeedState], None] | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.max_pending = max_pending
        self.on_change = on_change or (lambda state: None)
        self.acked = CompactRange()  # the tree of the witness's last cosigned checkpoint
        self.cosigned_at = 0.0
        self.cosignatures = ""  # the witness's last answer: its signature lines
        self.gap = False
        self._fresh = True  # the witness holds nothing of this log yet: the next send is old 0
        self._pending = bytearray()  # leaf hashes after acked.size
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
            self._pending = bytearray()

    def leaf(self, h: bytes) -> None:
        with self._lock:
            if self.gap:
                return
            self._pending += h
            if len(self._pending) > self.max_pending * HASH:
                self.gap = True
                self._pending = bytearray()
                self._latest = None
                self._lock.notify()

    def checkpoint(self, checkpoint: Checkpoint, note: str) -> None:
        with self._lock:
            if not self.gap:
                self._latest = (checkpoint, note)
                self._lock.notify()

    # -- the server's side

    def close(self, timeout: float) -> bool:
        """Wait (blocking) until the newest checkpoint is cosigned; False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._latest is not None and not self.gap:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(min(left, 0.05))
            self._closing = True
            self._lock.notify_all()
            return self._latest is None

    @property
    def pending_lines(self) -> int:
        with self._lock:
            return len(self._pending) // HASH

    # -- the feed's thread

    def _run(self) -> None:
        backoff = 0.25
        while True:
            with self._lock:
                while (self._latest is None or self.gap) and not self._closing:
                    if self.gap:
                        break
                    self._lock.wait()
                gap, latest, fresh = self.gap, self._latest, self._fresh
                base = self.acked.copy()
                leaves = b""
                if latest is not None:
                    leaves = bytes(self._pending[: (latest[0].size - base.size) * HASH])
            if gap:
                self._report(False, "too many lines waited for the witness: this log's later "
                                    "checkpoints cannot be shown to it")
                with self._lock:
                    while not self._closing:
                        self._lock.wait()
                return
            if latest is None:
                return  # closing, nothing left
            why = self._send(latest[0], latest[1], base, leaves, fresh)
            if not why:
                backoff = 0.25
                continue
            self._report(False, why)
            with self._lock:
                if self._closing:
                    return
                self._lock.wait(backoff)
            backoff = min(backoff * 2, 10.0)

    def _send(self, checkpoint: Checkpoint, note: str, base: CompactRange,
              leaves: bytes, fresh: bool = False) -> str:
        """One add-checkpoint call; "" when the witness cosigned, else why not."""
        hashes = [leaves[i:i + HASH] for i in range(0, len(leaves), HASH)]
        if len(hashes) != checkpoint.size - base.size:
            return "the feed lacks the leaves of this checkpoint"
        old = 0 if fresh else base.size
        proof = Extension(base, hashes).consistency(checkpoint.size) if old else []
        body = add_checkpoint_body(old, proof, note)
        request = urllib.request.Request(f"{self.url}/add-checkpoint", data=body, method="POST",
                                         headers={"Content-Type": "text/plain"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310
                text = answer.read(1 << 16).decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            detail = e.read(1 << 12).decode("utf-8", "replace").strip()
            if e.code == 409 and detail.isdigit() and not fresh:
                return self._catch_up(int(detail), hashes) or (
                    f"the witness holds size {detail} of this log")
            return f"the witness answered {e.code}: {detail[:200]}"
        except (OSError, ValueError) as e:  # refused, unreachable, timed out
            return f"the witness cannot be reached: {getattr(e, 'reason', e)}"
        with self._lock:
            for h in hashes:
                self.acked.append(h)
            del self._pending[: len(hashes) * HASH]
            self._fresh = False
            if self._latest is not None and self._latest[0].size <= checkpoint.size:
                self._latest = None
            self.cosigned_at = time.time()
            self.cosignatures = text
            self._lock.notify_all()
        self._report(True, "")
        return ""

    def _catch_up(self, size: int, hashes: list[bytes]) -> str:
        """The witness already holds ``size`` (a retry it took before its answer was lost):
        move on to there, when the feed still has those leaves; "" then."""
        with self._lock:
            ahead = size - self.acked.size
            if not 0 < ahead <= len(hashes):
                return f"the witness holds size {size} of this log, the feed {self.acked.size}"
            for h in hashes[:ahead]:
                self.acked.append(h)
            del self._pending[: ahead * HASH]
        return ""

    def _report(self, up: bool, why: str) -> None:
        """Tell ``on_change``, outside the lock: the callback may write a log line, whose log
        calls ``leaf`` under its own lock."""
        with self._lock:
            state = FeedState(up, len(self._pending) // HASH, self.cosigned_at, why, self.gap)
            changed = self._up != up
            self._up = up
        if changed or up:
            try:
                self.on_change(state)
            except Exception:  # noqa: BLE001 — a report never stops the feed
                pass
