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

import hashlib
import itertools
import json
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

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


class Chain:
    """Numbers, links and writes the log lines of one process, one at a time."""

    def __init__(self, write: Callable[[str], None], render: Callable[[dict[str, Any]], str],
                 timestamp: Callable[[], str], head_every: int = 1000) -> None:
        self.chain_id = secrets.token_hex(16)
        self.seq = 0
        self.prev = GENESIS
        self.signer: SigningKey | None = None
        self.head_every = head_every
        self.since_head = 0
        self._write = write
        self._render = render
        self._timestamp = timestamp
        self._lock = threading.Lock()

    def emit(self, event: dict[str, Any]) -> None:
        """Link ``event`` to the chain, render it and write it as one line."""
        with self._lock:
            self._emit(event)
            if self.since_head >= self.head_every:
                self._head("count")

    def sign_head(self, reason: str) -> None:
        """Write a signed ``audit.head`` line now (not for ``interval`` when nothing moved)."""
        with self._lock:
            if reason != "interval" or self.since_head:
                self._head(reason)

    def _emit(self, event: dict[str, Any]) -> None:
        self.seq += 1
        event["chain"], event["seq"], event["prev"] = self.chain_id, self.seq, self.prev
        line = self._render(event)
        self._write(line + "\n")
        self.prev = hashlib.sha256(line.encode("utf-8")).hexdigest()
        self.since_head += 1

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
