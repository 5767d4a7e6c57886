"""Checking audit logs (docs/AUDIT.md, "Checking the log"): what ``cpsettle audit-log verify``
and ``prove`` run.

Lines are grouped by their log (``log``, the origin) and put in ``index`` order; each log's
leaves rebuild its Merkle tree, which every checkpoint must match:

- the log's own ``audit.checkpoint`` lines (signed by the replica's key: checked with the key
  set), each for the lines before it;
- the witness's cosigned checkpoints (``Witnessed``: from ``cpsettle-witness export`` or the
  witness's ``/export``): every log the witness registered must be there, no log may be
  unknown to it, none shorter than its cosigned checkpoint, and the tree at that size must have
  the cosigned root;
- receipts: the line at each receipt's index has its leaf hash, under a checkpoint.

Findings are problems (the log is not what was written) or notes; ``unchecked`` says what
could not be checked at all (no witness, no keys), which the command turns into its own exit
code.
"""

from __future__ import annotations

import base64
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..errors import NoteError, ProofError
from .keys import KeySet
from .log import CHECKPOINT_EVENT, Receipt
from .merkle import Tree, leaf_hash
from .note import Checkpoint, NoteKey, open_note, split_note

__all__ = [
    "Line",
    "LogReport",
    "Report",
    "Witnessed",
    "WitnessedLog",
    "check_logs",
    "describe",
    "log_keys",
    "proof_text",
    "read_proof",
    "TlogProof",
    "read_lines",
    "receipt_from_json",
]

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass
class Line:
    where: str  # FILE:LINE
    index: int
    hash: bytes  # its leaf hash
    raw: bytes
    event: dict[str, Any]


@dataclass
class LogReport:
    origin: str
    lines: list[Line] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tree: Tree | None = None  # the leaves 0 .. n-1 that are there in one run (no gap before)
    checkpoints: list[tuple[Line, Checkpoint, str]] = field(default_factory=list)

    def problem(self, kind: str, text: str) -> None:
        self.problems.append((kind, text))

    @property
    def size(self) -> int:
        return self.tree.size if self.tree is not None else 0


@dataclass(frozen=True)
class WitnessedLog:
    origin: str
    checkpoint: Checkpoint
    note: str  # the checkpoint with the log's signature and the witness's cosignature
    registered: str = ""


@dataclass(frozen=True)
class Witnessed:
    """What a witness holds: its key, and per log the latest checkpoint it cosigned."""

    key: NoteKey
    logs: tuple[WitnessedLog, ...]
    key_from_export: bool = True  # the key came with the export, not from the auditor

    @classmethod
    def from_json(cls, data: bytes, key: NoteKey | None = None) -> Witnessed:
        try:
            doc = json.loads(data)
            exported = NoteKey.from_vkey(doc["witness"]["vkey"])
            logs = []
            for entry in doc["logs"]:
                text, _ = split_note(entry["checkpoint"])
                logs.append(
                    WitnessedLog(
                        entry["origin"],
                        Checkpoint.parse(text),
                        entry["checkpoint"],
                        entry.get("registered", ""),
                    )
                )
        except (ValueError, KeyError, TypeError, NoteError) as e:
            raise NoteError(f"not a witness export: {e}") from None
        if key is not None and key != exported:
            raise NoteError("the export is signed for another witness key than the one given")
        return cls(key or exported, tuple(logs), key is None)


@dataclass
class Report:
    logs: list[LogReport]
    unreadable: list[str]
    other: int  # JSON lines without the log fields (other output on the stream)
    problems: list[tuple[str, str]] = field(default_factory=list)  # not of one log
    unchecked: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems and not any(x.problems for x in self.logs)


def read_lines(paths: Iterable[str]) -> Report:
    logs: dict[str, LogReport] = {}
    unreadable: list[str] = []
    other = 0
    for path in paths:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                where = f"{path}:{number}"
                if not raw.strip():
                    continue
                data = raw.rstrip(b"\r\n")
                try:
                    event = json.loads(data)
                except ValueError:
                    unreadable.append(f"{where}: not a JSON line (edited or cut)")
                    continue
                if not isinstance(event, dict) or not all(k in event for k in ("log", "index")):
                    other += 1
                    continue
                origin, index = event["log"], event["index"]
                if not isinstance(origin, str) or type(index) is not int or index < 0:
                    unreadable.append(f"{where}: log fields of the wrong type (edited)")
                    continue
                report = logs.setdefault(origin, LogReport(origin))
                report.lines.append(Line(where, index, leaf_hash(data), data, event))
    return Report(list(logs.values()), unreadable, other)


def log_keys(keys: KeySet, origin: str) -> list[NoteKey]:
    """The note keys a replica's checkpoints of ``origin`` may be signed with."""
    return [NoteKey(origin, k.raw) for k in keys.keys]


def _check_order(r: LogReport) -> dict[int, Line]:
    """Repeats, forks, reordering and gaps; the first line of each index."""
    by_index: dict[int, list[Line]] = defaultdict(list)
    for line in r.lines:
        by_index[line.index].append(line)
    for index, lines in sorted(by_index.items()):
        for other in lines[1:]:
            if other.hash == lines[0].hash:
                r.problem("duplicate", f"{other.where}: repeats {lines[0].where} (index {index})")
            else:
                r.problem(
                    "fork",
                    f"{other.where}: a second, different line with index {index} "
                    f"(the other is {lines[0].where})",
                )
    highest: Line | None = None
    for line in r.lines:
        if highest is not None and line.index < highest.index and len(by_index[line.index]) == 1:
            r.problem(
                "order",
                f"{line.where}: index {line.index} comes after {highest.where} "
                f"(index {highest.index})",
            )
        if highest is None or line.index > highest.index:
            highest = line
    indices = sorted(by_index)
    if indices and indices[0] != 0:
        r.problem(
            "gap",
            f"{by_index[indices[0]][0].where}: the log starts at index "
            f"{indices[0]}; lines 0 to {indices[0] - 1} are missing",
        )
    for a, b in pairwise(indices):
        if b > a + 1:
            missing = f"index {a + 1}" if b == a + 2 else f"indices {a + 1} to {b - 1}"
            r.problem(
                "gap",
                f"{by_index[b][0].where}: {missing} missing before this line "
                f"(after {by_index[a][0].where})",
            )
    return {i: lines[0] for i, lines in by_index.items()}


def _check_log(r: LogReport, keys: KeySet | None, unchecked: set[str]) -> None:
    first = _check_order(r)
    leaves: list[bytes] = []
    while len(leaves) in first:
        leaves.append(first[len(leaves)].hash)
    r.tree = Tree(leaves)
    note_keys = log_keys(keys, r.origin) if keys is not None else []
    for line in sorted(first.values(), key=lambda x: x.index):
        e = line.event
        if e.get("event") != CHECKPOINT_EVENT:
            continue
        note = e.get("checkpoint")
        if not isinstance(note, str):
            r.problem("checkpoint", f"{line.where}: a checkpoint line without its checkpoint")
            continue
        try:
            text = split_note(note)[0] if e.get("signed") else note
            cp = Checkpoint.parse(text)
        except NoteError as err:
            r.problem("checkpoint", f"{line.where}: {err}")
            continue
        if cp.origin != r.origin or cp.size != line.index:
            r.problem(
                "checkpoint",
                f"{line.where}: a checkpoint of {cp.origin} at size "
                f"{cp.size} on line {line.index} of {r.origin}",
            )
            continue
        if cp.size <= r.size and r.tree.root(cp.size) != cp.root:
            r.problem(
                "root",
                f"{line.where}: the {cp.size} lines before this checkpoint do "
                "not hash to its root (a line before it was changed, removed, "
                "added or moved)",
            )
        if not e.get("signed"):
            r.notes.append(f"{line.where}: unsigned checkpoint (the replica had no key)")
        elif keys is None:
            unchecked.add("the signatures of the log's checkpoints (give --keys KEYS.json)")
        else:
            try:
                open_note(note, note_keys)
            except NoteError as err:
                r.problem("signature", f"{line.where}: {err}")
                continue
        r.checkpoints.append((line, cp, note))
    last = max((cp.size for _, cp, _ in r.checkpoints), default=-1)
    end = max(first, default=-1)
    if last < 0:
        r.notes.append("no checkpoint in the log: nothing vouches for it")
    elif end >= last + 1:
        r.notes.append(
            f"{end - last} line(s) after the last checkpoint of the log "
            "(at its size, the checkpoint's own line included): not covered by one"
        )


def _check_witnessed(report: Report, witnessed: Witnessed, keys: KeySet | None) -> None:
    logs = {r.origin: r for r in report.logs}
    seen = set()
    if witnessed.key_from_export:
        report.unchecked.append(
            "the witness's key was taken from its export (give --witness-key VKEY to pin it)"
        )
    for w in witnessed.logs:
        seen.add(w.origin)
        trusted = [witnessed.key] + (log_keys(keys, w.origin) if keys is not None else [])
        try:
            opened = open_note(w.note, trusted)
        except NoteError as e:
            report.problems.append(("cosignature", f"{w.origin}: the witness's checkpoint: {e}"))
            continue
        if witnessed.key.name not in opened.signed_by:
            report.problems.append(
                (
                    "cosignature",
                    f"{w.origin}: the witness's checkpoint has no cosignature by the witness",
                )
            )
            continue
        r = logs.get(w.origin)
        cp = w.checkpoint
        if r is None:
            report.problems.append(
                (
                    "missing",
                    f"{w.origin}: registered with the witness "
                    f"({cp.size} lines cosigned) but not in the "
                    "files given: a withheld replica run",
                )
            )
            continue
        if r.size <= cp.size:  # the checkpoint's own line (index cp.size) must be there too
            r.problem(
                "short",
                f"the witness cosigned this log's checkpoint of {cp.size} lines, "
                f"written as line {cp.size}; the files hold {r.size} lines in a "
                "row (lines cut from the end, or removed)",
            )
        elif r.tree is not None and r.tree.root(cp.size) != cp.root:
            r.problem(
                "root",
                f"the first {cp.size} lines do not hash to the root the witness "
                "cosigned (a line changed, removed, added or moved, or a "
                "different log under this origin)",
            )
        else:
            r.notes.append(
                f"witnessed: the first {cp.size} lines match the checkpoint the witness cosigned"
            )
    for r in report.logs:
        if r.origin not in seen:
            r.problem(
                "unwitnessed",
                "no witness registered this log: a run the witness never "
                "saw (made up, or kept from it)",
            )


def receipt_from_json(obj: Any) -> Receipt:
    """A receipt from its JSON form (``LogReceipt``), or from a settlement response holding
    one (``cpsettle settle --output json``)."""
    if isinstance(obj, dict) and isinstance(obj.get("receipt"), dict):
        obj = obj["receipt"]
    try:
        origin, index, h = obj["origin"], int(obj.get("index", 0)), obj["leafHash"]
    except (KeyError, TypeError, ValueError):
        raise ProofError("not a receipt: needs origin, index and leafHash") from None
    if not isinstance(origin, str) or not isinstance(h, str) or not _HEX64.fullmatch(h):
        raise ProofError("not a receipt: origin text and leafHash 64 lowercase hex digits")
    return Receipt(origin, index, bytes.fromhex(h))


def _check_receipts(
    report: Report, receipts: list[tuple[str, Receipt]], witnessed: Witnessed | None
) -> None:
    logs = {r.origin: r for r in report.logs}
    covered = {w.origin: w.checkpoint.size for w in witnessed.logs} if witnessed else {}
    for where, rc in receipts:
        r = logs.get(rc.origin)
        if r is None:
            report.problems.append(("receipt", f"{where}: log {rc.origin} is not in the files"))
            continue
        line = next((x for x in r.lines if x.index == rc.index), None)
        if line is None or line.hash != rc.leaf_hash:
            r.problem(
                "receipt",
                f"{where}: line {rc.index} of this log is "
                + ("missing" if line is None else f"another line ({line.where})"),
            )
            continue
        top = max([covered.get(rc.origin, 0)] + [cp.size for _, cp, _ in r.checkpoints])
        if rc.index >= top:
            r.problem(
                "receipt", f"{where}: line {rc.index} ({line.where}) is under no checkpoint yet"
            )


def check_logs(
    paths: Iterable[str],
    keys: KeySet | None = None,
    witnessed: Witnessed | None = None,
    receipts: list[tuple[str, Receipt]] | None = None,
) -> Report:
    report = read_lines(paths)
    unchecked: set[str] = set()
    for r in report.logs:
        _check_log(r, keys, unchecked)
    report.unchecked.extend(sorted(unchecked))
    if witnessed is not None:
        _check_witnessed(report, witnessed, keys)
    else:
        report.unchecked.append(
            "whether lines were cut from the end or a whole run withheld, and whether each log "
            "is the one its replica wrote: only the witness's checkpoints show that (give "
            "--witness EXPORT.json or URL)"
        )
    if receipts:
        _check_receipts(report, receipts, witnessed)
    return report


def describe(report: Report) -> list[str]:
    out = []
    for r in report.logs:
        span = (
            f"index {min(x.index for x in r.lines)} to {max(x.index for x in r.lines)}"
            if r.lines
            else "empty"
        )
        verdict = "INTACT" if not r.problems else f"{len(r.problems)} PROBLEM(S)"
        out.append(
            f"log {r.origin}: {len(r.lines)} lines, {span}, {len(r.checkpoints)} "
            f"checkpoint(s): {verdict}"
        )
        out += [f"  - {kind}: {text}" for kind, text in r.problems]
        out += [f"  note: {n}" for n in r.notes]
    out += [f"- {kind}: {text}" for kind, text in report.problems]
    out += [f"note: not a log line: {u}" for u in report.unreadable]
    if report.other:
        out.append(f"note: {report.other} JSON line(s) without log fields were skipped")
    out += [f"NOT CHECKED: {u}" for u in report.unchecked]
    return out


def proof_text(r: LogReport, index: int, checkpoint_note: str, size: int) -> str:
    """A c2sp.org/tlog-proof for line ``index`` of ``r`` against the checkpoint of ``size``
    (``checkpoint_note``, signatures and cosignatures included); the line itself is the
    ``extra`` data, so the proof carries what its leaf hash is computed from."""
    assert r.tree is not None
    line = next(x for x in r.lines if x.index == index)
    proof = r.tree.inclusion(index, size)
    out = [
        "c2sp.org/tlog-proof@v1",
        "extra " + base64.b64encode(line.raw).decode("ascii"),
        f"index {index}",
    ]
    out += [base64.b64encode(p).decode("ascii") for p in proof]
    return "\n".join(out) + "\n\n" + checkpoint_note


@dataclass(frozen=True)
class TlogProof:
    """A parsed c2sp.org/tlog-proof: the line (extra), its index, the proof and the note."""

    line: bytes
    index: int
    proof: list[bytes]
    note: str


def read_proof(text: str) -> TlogProof:
    head, sep, note = text.partition("\n\n")
    lines = head.split("\n")
    if not sep or len(lines) < 2 or lines[0] != "c2sp.org/tlog-proof@v1":
        raise ProofError("not a c2sp.org/tlog-proof@v1")
    extra = b""
    rest = lines[1:]
    if rest[0].startswith("extra "):
        extra = base64.b64decode(rest[0][6:], validate=True)
        rest = rest[1:]
    if not rest or not re.fullmatch(r"index (0|[1-9][0-9]*)", rest[0]):
        raise ProofError("a tlog-proof names its index")
    try:
        proof = [base64.b64decode(x, validate=True) for x in rest[1:]]
    except ValueError:
        raise ProofError("a proof line is not base64") from None
    return TlogProof(extra, int(rest[0][6:]), proof, note)
