"""A checkpoint beside the report (``OUT.json.checkpoint``): how far an audit got, so that
``--resume`` goes on from there after a SIGKILL, a crash or a failed server.

A report may say it is complete only for lines audited in its own run, or in earlier runs
whose results it carries and checks. So the checkpoint carries the results themselves, in
**segments**: each segment is a run of consecutive lines audited between two writes, with

- ``linesDigest``: SHA-256 over those lines (each line's number and bytes): ``--resume`` reads
  them again and refuses a history edited, cut or swapped since (exit 2, checkpoint kept);
- ``outcome``: what those lines found (counts, the differences and invalid hands, the tallies
  per table and per dealer);
- ``mac``: HMAC-SHA256 over the segment's lines, digest and outcome, keyed by a random key made
  for the audit and kept in ``OUT.json.checkpoint.key`` (mode 0600), never in the checkpoint.

The totals are never read from the file: ``--resume`` adds up the segments that pass their
checks, in order, from the audit's first line. Lines the checkpoint claims (up to its
``nextLine``) but no checked segment carries — a ``nextLine`` moved forward, a segment edited
or forged without the key, the key file gone — are **not checked**: the resumed audit goes on
from ``nextLine``, and its report says ``complete: false`` and lists them in ``notChecked``
(exit 4). Whoever can read the key file can forge a segment: keep it where the audit's
writer alone can (the same folder, 0600, is the default).

It is written at chunk boundaries (whole batches only, in line order): after the first chunk,
then at most every ``max(1 s, 20 × the last write's time)`` so that writing stays under ~5 % of
the run, and at the end of an incomplete run. Each write goes to a temporary file in the same
folder, is flushed to disk and renamed over the old one: a kill at any moment leaves the old
checkpoint or the new one, never half of one. A complete audit removes it and its key.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from .. import strict_json
from ..escape import json_text
from .outcome import Outcome, Tally
from .report import Report, write_atomically

FORMAT = "cpsettle.audit-checkpoint/v2"
MAC_CONTEXT = b"cpsettle-audit-segment/v1\n"
MIN_INTERVAL = 1.0  # seconds between writes, at least
COST_SHARE = 20  # ... and at least this many times the last write's time

Line = tuple[int, bytes]


class CheckpointError(Exception):
    """No usable checkpoint: missing, unreadable, of another format, or of another history."""


def path_for(report_path: str) -> str:
    return f"{report_path}.checkpoint"


def key_path_for(checkpoint_path: str) -> str:
    return f"{checkpoint_path}.key"


class LinesDigest:
    """SHA-256 over the audited lines (number and bytes) of a segment, as the lines go by.

    ``feed`` passes the lines through and keeps those not yet digested (the runners read a few
    chunks ahead of the outcomes); ``cut(n)`` digests the kept lines up to line ``n`` and
    starts the next segment's digest.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._kept: deque[Line] = deque()

    def feed(self, lines: Iterable[Line]) -> Iterator[Line]:
        for line in lines:
            self._kept.append(line)
            yield line

    def _through(self, last_line: int) -> None:
        while self._kept and self._kept[0][0] <= last_line:
            number, raw = self._kept.popleft()
            self._hash.update(b"%d:" % number + raw)

    def cut(self, last_line: int) -> str:
        self._through(last_line)
        digest = "sha256:" + self._hash.hexdigest()
        self._hash = hashlib.sha256()
        return digest


def _canonical(outcome: dict[str, Any]) -> bytes:
    return json.dumps(outcome, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode(
        "ascii"
    )


def segment_mac(
    key: bytes, source: str, first: int, last: int, lines_digest: str, outcome: dict[str, Any]
) -> str:
    text = (
        MAC_CONTEXT
        + f"{json.dumps(source)}\n{first}\n{last}\n{lines_digest}\n".encode()
        + _canonical(outcome)
    )
    return "hmac-sha256:" + hmac.new(key, text, hashlib.sha256).hexdigest()


def _outcome(raw: Any) -> Outcome:
    data = dict(raw)
    for book in ("tables", "dealers"):
        data[book] = {str(k): Tally(**v) for k, v in data[book].items()}
    return Outcome(**data)


@dataclasses.dataclass(frozen=True)
class Segment:
    first_line: int
    last_line: int
    lines_digest: str
    outcome: Outcome


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    source: str
    first_line: int
    next_line: int
    started_at: str
    elapsed: float
    segments: tuple[Segment, ...]  # those that passed their checks, in order
    outcome: Outcome  # their outcomes added up
    not_checked: tuple[tuple[int, int, str], ...]  # (first, last, why): claimed, not carried
    key: bytes


def _read_key(path: str) -> bytes | None:
    try:
        with open(path, encoding="ascii") as f:
            return bytes.fromhex(f.read().strip())
    except (OSError, ValueError):
        return None


def load(path: str) -> Checkpoint:
    """The checkpoint at ``path`` with every segment checked (``CheckpointError`` if there is
    none to go on from)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = strict_json.loads(f.read())
    except FileNotFoundError:
        raise CheckpointError(
            f"no checkpoint at {path} (the audit finished, or never ran with this --report)"
        ) from None
    except OSError as e:
        raise CheckpointError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise CheckpointError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(
            f"{path} is not a {FORMAT} checkpoint (one of an older version: "
            "run the audit again without --resume)"
        )
    try:
        source = str(data["source"])
        first_line, next_line = int(data["firstLine"]), int(data["nextLine"])
        started_at, elapsed = str(data["startedAt"]), float(data["elapsedSeconds"])
        raw_segments = list(data["segments"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path} is damaged or of another version: {e!r}") from None
    if not 1 <= first_line <= next_line:
        raise CheckpointError(f"{path} is damaged: firstLine {first_line}, nextLine {next_line}")
    key = _read_key(key_path_for(path))
    segments: list[Segment] = []
    total = Outcome(first_line, first_line - 1)
    expected = first_line
    why = ""
    for raw in raw_segments:
        try:
            first, last = int(raw["firstLine"]), int(raw["lastLine"])
            digest, mac = str(raw["linesDigest"]), str(raw["mac"])
            outcome_data = raw["outcome"]
            outcome = _outcome(outcome_data)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            why = f"a segment is damaged ({e!r})"
            break
        if key is None:
            why = f"its key ({key_path_for(path)}) is missing or unreadable"
            break
        if (
            first != expected
            or last < first
            or last >= next_line
            or (outcome.first_line, outcome.last_line) != (first, last)
        ):
            why = f"its segment of lines {first} to {last} does not follow line {expected - 1}"
            break
        if not hmac.compare_digest(
            mac, segment_mac(key, source, first, last, digest, outcome_data)
        ):
            why = f"its segment of lines {first} to {last} fails its check (edited, or forged)"
            break
        segments.append(Segment(first, last, digest, outcome))
        total.merge(outcome)
        expected = last + 1
    not_checked: list[tuple[int, int, str]] = []
    if expected < next_line:
        not_checked.append(
            (
                expected,
                next_line - 1,
                why
                or (
                    f"the checkpoint says the audit got to line {next_line - 1:,} but carries the "
                    f"results of lines to {expected - 1:,} only"
                ),
            )
        )
    total.last_line = next_line - 1  # the lines not checked are listed, never counted
    return Checkpoint(
        source,
        first_line,
        next_line,
        started_at,
        elapsed,
        tuple(segments),
        total,
        tuple(not_checked),
        key or secrets.token_bytes(32),
    )


def resumed(lines: Iterable[Line], digest: LinesDigest, checkpoint: Checkpoint) -> Iterator[Line]:
    """The lines from the checkpoint's ``nextLine`` on, once the lines of its segments are shown
    to be the same (read and checked here, before the audit goes on: ``CheckpointError`` if
    they differ). Lines not checked are skipped as they are: the report lists them."""
    boundary = checkpoint.next_line - 1
    segments = iter(checkpoint.segments)
    segment = next(segments, None)
    check = LinesDigest()
    it = iter(lines)
    after: list[Line] = []

    def verify(s: Segment) -> None:
        if check.cut(s.last_line) != s.lines_digest:
            raise CheckpointError(
                f"lines {s.first_line:,} to {s.last_line:,} of the history are not those the "
                "checkpoint was made from: the file changed, or it is another file"
            )

    for number, raw in it:
        if number > boundary:
            after.append((number, raw))
            break
        while segment is not None and number > segment.last_line:
            verify(segment)
            segment = next(segments, None)
        if segment is not None and number >= segment.first_line:
            check._kept.append((number, raw))
    while segment is not None:  # the lines of the last segments (a history cut short)
        verify(segment)
        segment = next(segments, None)
    return digest.feed(_chain(after, it))


def _chain(first: list[Line], rest: Iterator[Line]) -> Iterator[Line]:
    yield from first
    yield from rest


class Checkpointer:
    """Writes the checkpoint now and then at chunk boundaries (see the module's docstring)."""

    def __init__(self, path: str, digest: LinesDigest, resume: Checkpoint | None = None) -> None:
        self.path = path
        self.key_path = key_path_for(path)
        self.digest = digest
        self.due = 0.0  # the first chunk's outcome is written at once
        self.segments: list[dict[str, Any]] = []
        self.pending: Outcome | None = None  # the lines since the last write
        if resume is not None:  # the segments that passed their checks go on as they were
            self.key = resume.key
            for s in resume.segments:
                self._close(resume.source, s.first_line, s.last_line, s.lines_digest, s.outcome)
        else:
            self.key = secrets.token_bytes(32)
        self._key_written = False

    def add(self, outcome: Outcome) -> None:
        """The outcome of the lines right after those already in (as ``Report.add``)."""
        if self.pending is None:
            self.pending = Outcome(outcome.first_line, outcome.first_line - 1)
        self.pending.merge(outcome)

    def _close(self, source: str, first: int, last: int, digest: str, outcome: Outcome) -> None:
        data = dataclasses.asdict(outcome)
        self.segments.append(
            {
                "firstLine": first,
                "lastLine": last,
                "linesDigest": digest,
                "outcome": data,
                "mac": segment_mac(self.key, source, first, last, digest, data),
            }
        )

    def maybe_save(self, report: Report) -> None:
        if time.monotonic() >= self.due:
            self.save(report)

    def save(self, report: Report) -> None:
        began = time.monotonic()
        if not self._key_written:  # beside the checkpoint, readable by its writer alone
            tmp = f"{self.key_path}.{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w", encoding="ascii") as f:
                    f.write(self.key.hex() + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.key_path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._key_written = True
        p = self.pending
        if p is not None and p.last_line >= p.first_line:
            self._close(report.source, p.first_line, p.last_line, self.digest.cut(p.last_line), p)
            self.pending = None
        text = json_text(
            {
                "format": FORMAT,
                "source": report.source,
                "firstLine": report.first_line,
                "nextLine": report.last_line + 1,
                "startedAt": report.started_at,
                "elapsedSeconds": report.elapsed_so_far(),
                "segments": self.segments,
            },
            indent=None,
        )
        write_atomically(self.path, text + "\n")
        took = time.monotonic() - began
        self.due = began + max(MIN_INTERVAL, COST_SHARE * took)

    def remove(self) -> None:
        for path in (self.path, self.key_path):
            with contextlib.suppress(OSError):
                os.unlink(path)
