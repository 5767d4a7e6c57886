"""A checkpoint beside the report (``OUT.json.checkpoint``): how far an audit got, so that
``--resume`` goes on from there after a SIGKILL, a crash or a failed server.

It holds what the report needs (the merged ``Outcome`` of every line so far: counts, the
differences and invalid hands, the tallies per table and per dealer), the next line to read,
and a SHA-256 over the lines audited so far (each line's number and bytes): ``--resume``
reads those lines again, checks the digest (a history edited, cut or swapped since is refused)
and settles only what follows. A resumed audit's report equals an uninterrupted one's except
for its timing fields.

It is written at chunk boundaries (whole batches only, in line order): after the first chunk,
then at most every ``max(1 s, 20 × the last write's time)`` so that writing stays under ~5 % of
the run, and at the end of an incomplete run. Each write goes to a temporary file in the same
folder, is flushed to disk and renamed over the old one: a kill at any moment leaves the old
checkpoint or the new one, never half of one. A complete audit removes it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from .. import strict_json
from ..escape import json_text
from .outcome import Outcome, Tally
from .report import Report, write_atomically

FORMAT = "cpsettle.audit-checkpoint/v1"
MIN_INTERVAL = 1.0  # seconds between writes, at least
COST_SHARE = 20  # ... and at least this many times the last write's time

Line = tuple[int, bytes]


class CheckpointError(Exception):
    """No usable checkpoint: missing, unreadable, of another format, or of another history."""


def path_for(report_path: str) -> str:
    return f"{report_path}.checkpoint"


class LinesDigest:
    """SHA-256 over the audited lines (number and bytes) up to a line, as the lines go by.

    ``feed`` passes the lines through and keeps those not yet digested (the runners read a few
    chunks ahead of the outcomes); ``through(n)`` digests the kept lines up to line ``n``.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._kept: deque[Line] = deque()

    def feed(self, lines: Iterable[Line]) -> Iterator[Line]:
        for line in lines:
            self._kept.append(line)
            yield line

    def through(self, last_line: int) -> str:
        while self._kept and self._kept[0][0] <= last_line:
            number, raw = self._kept.popleft()
            self._hash.update(b"%d:" % number + raw)
        return "sha256:" + self._hash.hexdigest()


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    source: str
    first_line: int
    next_line: int
    lines_digest: str
    started_at: str
    elapsed: float
    outcome: Outcome


def _to_dict(report: Report, digest: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "source": report.source,
        "firstLine": report.first_line,
        "nextLine": report.last_line + 1,
        "linesDigest": digest,
        "startedAt": report.started_at,
        "elapsedSeconds": report.elapsed_so_far(),
        "outcome": dataclasses.asdict(report.total),
    }


def load(path: str) -> Checkpoint:
    try:
        with open(path, encoding="utf-8") as f:
            data = strict_json.loads(f.read())
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path} (the audit finished, or never ran with "
                              "this --report)") from None
    except OSError as e:
        raise CheckpointError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise CheckpointError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    try:
        raw = dict(data["outcome"])
        for book in ("tables", "dealers"):
            raw[book] = {k: Tally(**v) for k, v in raw[book].items()}
        outcome = Outcome(**raw)
        checkpoint = Checkpoint(str(data["source"]), int(data["firstLine"]),
                                int(data["nextLine"]), str(data["linesDigest"]),
                                str(data["startedAt"]), float(data["elapsedSeconds"]), outcome)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise CheckpointError(f"{path} is damaged or of another version: {e!r}") from None
    if checkpoint.outcome.last_line != checkpoint.next_line - 1:
        raise CheckpointError(f"{path} is damaged: nextLine and the outcome disagree")
    return checkpoint


def resumed(lines: Iterable[Line], digest: LinesDigest, checkpoint: Checkpoint) -> Iterator[Line]:
    """The lines after the checkpoint, once the lines before it are shown to be the same
    (read and checked here, before the audit goes on: ``CheckpointError`` if they differ)."""
    boundary = checkpoint.next_line - 1
    it = digest.feed(lines)
    after: list[Line] = []
    for number, raw in it:
        if number > boundary:
            after.append((number, raw))
            break
        digest.through(number)
    if digest.through(boundary) != checkpoint.lines_digest:
        raise CheckpointError(
            f"lines {checkpoint.first_line:,} to {boundary:,} of the history are not those the "
            "checkpoint was made from: the file changed, or it is another file")
    return itertools.chain(after, it)


class Checkpointer:
    """Writes the checkpoint now and then at chunk boundaries (see the module's docstring)."""

    def __init__(self, path: str, digest: LinesDigest) -> None:
        self.path = path
        self.digest = digest
        self.due = 0.0  # the first chunk's outcome is written at once

    def maybe_save(self, report: Report) -> None:
        if time.monotonic() >= self.due:
            self.save(report)

    def save(self, report: Report) -> None:
        began = time.monotonic()
        text = json_text(_to_dict(report, self.digest.through(report.last_line)), indent=None)
        write_atomically(self.path, text + "\n")
        took = time.monotonic() - began
        self.due = began + max(MIN_INTERVAL, COST_SHARE * took)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)
