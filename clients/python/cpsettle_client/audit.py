"""``cpsettle audit``: re-check a day of hand history against what the dealers actually paid.

History format (JSON lines, UTF-8, one hand per line; blank lines are skipped)::

    {"handId": "T03-00042", "tableId": "T03", "roundId": "2026-11-29/T03/42", "dealerId": "D07",
     "preset": "western", "unitValue": 100, "buttonSeat": 4,
     "players": [{"playerId": "P1", "seat": 1, "arrangement": {...}, "stack": 4000}, ...],
     "recordedPayouts": {"P1": 300, "P2": -100, "P3": -200}}

Each line is the JSON form of a ``SettleRequest`` (docs/DESIGN.md) plus one extra field,
``recordedPayouts``: for every player id, the net money the dealer paid to (+) or collected
from (-) that player on this hand, in minor units, after caps and rake (what the settlement
calls ``netMoney``). The field is taken off before the rest is read as a ``SettleRequest``.
Without it (or with ``{}``) the hand is settled but not checked. Amounts are JSON integers (or
strings of digits, as proto3 JSON writes int64).

A line that is not JSON, not a valid ``SettleRequest``, or whose ``recordedPayouts`` is
malformed or misses a player is an *invalid hand* in the report, with its line number and
violations; it never stops the audit.

``--local`` settles in this process with the servicer's own code (``--workers N``: N processes
over chunks of lines); ``--server HOST:PORT`` sends batches of ``--batch`` hands over the
``SettleStream`` RPC (``--workers N``: N streams). Either way results are taken in line order,
so the report always covers lines ``firstLine`` to ``stoppedAfterLine`` exactly.

Exit codes: 0 every hand checked and matched; 1 payout differences or invalid hands found;
2 bad arguments or an unreadable history; 3 the server failed; 130 interrupted (Ctrl-C or
SIGTERM) — the report is still written, with ``"complete": false`` and the last line processed.
The report format is described in docs/BULK_AUDIT.md.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import multiprocessing
import os
import queue
import re
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, TextIO

from cpsettle.v1 import settlement_pb2 as pb
from google.protobuf import json_format

RECORDED_FIELD = "recordedPayouts"
REPORT_FORMAT = "cpsettle.audit/v1"
DEFAULT_BATCH = 100
MAX_BATCH = 1000  # the server's limit per SettleBatch

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INVALID = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130

_IDS = ("handId", "tableId", "roundId", "dealerId")
NO_ID = "(none)"


class AuditFailure(Exception):
    """The audit could not go on (the server failed): the partial report is still written."""


# --------------------------------------------------------------------------- reading lines


def read_lines(path: str, start_line: int = 1) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of every non-blank line from ``start_line`` on."""
    f = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        for number, raw in enumerate(f, 1):
            if number < start_line or not raw.strip():
                continue
            yield number, raw
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def count_lines(path: str) -> int:
    """Lines in the file (a last line without a newline counts), read in binary chunks."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


class Hand:
    """One line of history, read: its ids, and where its item sits in the batch (or why not)."""

    __slots__ = ("dealer_id", "hand_id", "line", "paid", "problem", "round_id", "sent",
                 "table_id")

    def __init__(self, line: int) -> None:
        self.line = line
        self.hand_id = self.table_id = self.round_id = self.dealer_id = ""
        self.sent = False  # an AuditItem for it is in the batch
        self.paid = False  # recorded payouts came with it
        self.problem: tuple[str, str, list[tuple[str, str]]] | None = None


_ID_PATTERNS = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.){0,128})"') for key in _IDS
}


def _salvage_ids(hand: Hand, raw: bytes) -> None:
    """A line cut short or garbled: still name its hand, table and dealer when they show."""
    found = []
    for key in _IDS:
        m = _ID_PATTERNS[key].search(raw)
        try:
            found.append(json.loads(b'"' + m.group(1) + b'"') if m else "")
        except ValueError:
            found.append("")
    hand.hand_id, hand.table_id, hand.round_id, hand.dealer_id = found


def _describe(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _amount(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def prepare(ref_prefix: str, line: int, raw: bytes, batch: pb.SettleBatch) -> Hand:
    """Read one line into ``batch`` (an ``AuditItem``) or into the hand's problem."""
    hand = Hand(line)

    def invalid(field: str, reason: str) -> Hand:
        hand.problem = ("INVALID_ARGUMENT", f"{field}: {reason}", [(field, reason)])
        return hand

    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        return invalid("line", "is not UTF-8 text")
    except ValueError as e:
        _salvage_ids(hand, raw)
        return invalid("line", f"is not JSON: {e}")
    if not isinstance(data, dict):
        return invalid("line", f"must be a JSON object (a SettleRequest), got {_describe(data)}")
    ids = [data.get(k) for k in _IDS]
    hand.hand_id, hand.table_id, hand.round_id, hand.dealer_id = (
        v if isinstance(v, str) else "" for v in ids
    )
    recorded = data.pop(RECORDED_FIELD, None)
    paid: list[tuple[str, int]] = []
    if recorded is not None:
        if not isinstance(recorded, dict):
            return invalid(RECORDED_FIELD, "must be an object of player id: net money in minor "
                                           f"units, got {_describe(recorded)}")
        problems = []
        for pid, value in recorded.items():
            amount = _amount(value)
            if amount is None:
                problems.append((f"{RECORDED_FIELD}.{pid}",
                                 f"must be an integer amount in minor units, got {value!r}"))
            else:
                paid.append((pid, amount))
        if problems:
            hand.problem = ("INVALID_ARGUMENT",
                            "; ".join(f"{f}: {r}" for f, r in problems), problems)
            return hand
    item = batch.items.add()
    try:
        json_format.ParseDict(data, item.request)
    except (json_format.ParseError, TypeError, ValueError) as e:
        del batch.items[-1]
        return invalid("request", "not a valid SettleRequest: " + " ".join(str(e).split()))
    item.ref = f"{ref_prefix}:{line}"
    for pid, amount in paid:
        item.paid.add(player_id=pid, net_money=amount)
    hand.sent = True
    hand.paid = bool(paid)
    return hand


# --------------------------------------------------------------------------- outcomes


# Per table and per dealer: hands settled, hands with differences, invalid hands, money.
HANDS, DIFFS, INVALID, OVER, UNDER = range(5)


class Outcome:
    """What a run of consecutive lines found; outcomes merge in line order into a report."""

    def __init__(self, first_line: int = 0, last_line: int = 0) -> None:
        self.first_line = first_line
        self.last_line = last_line
        self.read = 0
        self.checked = 0
        self.unchecked = 0  # settled, no recorded payouts
        self.differences: list[dict[str, Any]] = []
        self.invalid: list[dict[str, Any]] = []
        self.tables: dict[str, list[int]] = {}
        self.dealers: dict[str, list[int]] = {}
        self.over = 0
        self.under = 0

    def _bump(self, hand: Hand, index: int, amount: int = 1) -> None:
        for key, book in ((hand.table_id or NO_ID, self.tables),
                          (hand.dealer_id or NO_ID, self.dealers)):
            row = book.get(key)
            if row is None:
                row = book[key] = [0, 0, 0, 0, 0]
            row[index] += amount

    def _ids(self, hand: Hand, ref: str) -> dict[str, Any]:
        return {"line": hand.line, "ref": ref, "handId": hand.hand_id, "tableId": hand.table_id,
                "roundId": hand.round_id, "dealerId": hand.dealer_id}

    def add_invalid(self, hand: Hand, ref: str, code: str, message: str,
                    violations: Iterable[tuple[str, str]]) -> None:
        entry = self._ids(hand, ref)
        entry.update(code=code, message=message,
                     violations=[{"field": f, "reason": r} for f, r in violations])
        self.invalid.append(entry)
        self._bump(hand, INVALID)

    def add_result(self, hand: Hand, ref: str, result: pb.AuditResult) -> None:
        if result.WhichOneof("outcome") != "settlement":
            err = result.error
            self.add_invalid(hand, ref, err.code or "UNKNOWN", err.message,
                             [(v.field, v.reason) for v in err.violations])
            return
        self._bump(hand, HANDS)
        if not hand.paid:
            self.unchecked += 1
            return
        self.checked += 1
        if result.all_match:
            return
        over = under = 0
        players = []
        for c in result.checks:
            entry: dict[str, Any] = {"playerId": c.player_id, "expected": c.expected,
                                     "paid": c.proposed, "difference": c.difference}
            if c.difference:
                entry["explanation"] = list(c.explanation)
            if c.difference > 0:
                over += c.difference
            else:
                under -= c.difference
            players.append(entry)
        s = result.settlement
        diff = self._ids(hand, ref)
        diff.update(profile=s.profile.name, unitValue=s.unit_value, overpaid=over,
                    underpaid=under, players=players)
        if s.settlement_id:
            diff["settlementId"] = s.settlement_id
        self.differences.append(diff)
        self.over += over
        self.under += under
        self._bump(hand, DIFFS)
        self._bump(hand, OVER, over)
        self._bump(hand, UNDER, under)

    def add_batch(self, prefix: str, hands: list[Hand], result: pb.SettleBatchResult) -> None:
        """Take one batch's results; every hand of ``hands`` is accounted for, in order."""
        sent = sum(1 for h in hands if h.sent)
        results = result.results
        if len(results) != sent:
            raise AuditFailure(f"the server answered {len(results)} results for {sent} hands")
        it = iter(results)
        for hand in hands:
            ref = f"{prefix}:{hand.line}"
            self.read += 1
            if hand.problem is not None:
                code, message, violations = hand.problem
                self.add_invalid(hand, ref, code, message, violations)
                continue
            r = next(it)
            if r.ref != ref:
                raise AuditFailure(f"the server answered {r.ref!r} where {ref!r} was expected")
            self.add_result(hand, ref, r)


def is_batch_error(result: pb.SettleBatchResult) -> bool:
    """A per-batch error: one result, no ref (our refs are never empty), an error."""
    return (len(result.results) == 1 and not result.results[0].ref
            and result.results[0].WhichOneof("outcome") == "error")


def chunks(lines: Iterable[tuple[int, bytes]], size: int
           ) -> Iterator[tuple[int, int, list[tuple[int, bytes]]]]:
    """(first line, last line, lines) of ``size`` non-blank lines at a time."""
    batch: list[tuple[int, bytes]] = []
    for number, raw in lines:
        batch.append((number, raw))
        if len(batch) >= size:
            yield batch[0][0], number, batch
            batch = []
    if batch:
        yield batch[0][0], batch[-1][0], batch


# --------------------------------------------------------------------------- local


_servicer: Any = None


def _init_local(options: dict[str, Any]) -> None:
    """The servicer ``cpsettle settle --local`` uses (house profiles, sealer, signing key)."""
    global _servicer
    from .cli import Backend

    _servicer = Backend(argparse.Namespace(local=True, **options))._local()


def _init_worker(options: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _init_local(options)


def audit_chunk(prefix: str, first: int, last: int, lines: list[tuple[int, bytes]]) -> Outcome:
    """Audit a run of lines in this process, with the servicer's own stream code."""
    from cpsettle_service.api.stream import settle_batch

    batch = pb.SettleBatch()
    hands = [prepare(prefix, number, raw, batch) for number, raw in lines]
    outcome = Outcome(first, last)
    outcome.add_batch(prefix, hands, settle_batch(_servicer, batch, max_items=len(batch.items)))
    return outcome


class LocalRunner:
    def __init__(self, workers: int, options: dict[str, Any]) -> None:
        self.workers = workers
        self.options = options
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        _init_local(options)  # here first: a bad key file or profile folder fails fast

    def run(self, prefix: str, work: Iterable[tuple[int, int, list[tuple[int, bytes]]]],
            commit: Callable[[Outcome], None]) -> None:
        if self.workers == 1:
            for first, last, lines in work:
                commit(audit_chunk(prefix, first, last, lines))
            return
        # forkserver: never fork a process that may hold gRPC threads.
        context = multiprocessing.get_context("forkserver")
        # Import the engine once in the fork server: every worker forks from it ready to go.
        context.set_forkserver_preload(["cpsettle_client.audit", "cpsettle_service.api.stream",
                                        "cpsettle_service.api.servicer"])
        self.pool = concurrent.futures.ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=_init_worker,
            initargs=(self.options,),
        )
        in_flight: collections.deque[concurrent.futures.Future[Outcome]] = collections.deque()
        limit = 3 * self.workers
        try:
            for first, last, lines in work:
                in_flight.append(self.pool.submit(audit_chunk, prefix, first, last, lines))
                while in_flight and (len(in_flight) >= limit or in_flight[0].done()):
                    commit(in_flight.popleft().result())
            while in_flight:
                commit(in_flight.popleft().result())
        except KeyboardInterrupt:
            # Keep what is already done (in line order); drop the rest.
            while in_flight and in_flight[0].done() and not in_flight[0].cancelled():
                commit(in_flight.popleft().result())
            raise

    def close(self, interrupted: bool) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
            self.pool = None


# --------------------------------------------------------------------------- server


class _Stream:
    """One SettleStream call: a bounded queue of batches in, a thread reading results out."""

    DEPTH = 2  # batches queued per stream beyond those in flight

    def __init__(self, client: Any, prefix: str, stop: threading.Event,
                 deliver: Callable[[int, Outcome | BaseException], None]) -> None:
        self.client = client
        self.prefix = prefix
        self.stop = stop
        self.deliver = deliver
        self.queue: queue.Queue[Any] = queue.Queue(self.DEPTH)
        self.pending: collections.deque[tuple[int, Outcome, list[Hand], pb.SettleBatch]] = (
            collections.deque()
        )
        self.results = client.settle_stream(self._requests())
        self.thread = threading.Thread(target=self._read, daemon=True, name="audit-stream")
        self.thread.start()

    def submit(self, entry: tuple[int, Outcome, list[Hand], pb.SettleBatch] | None) -> None:
        """Queue a batch (``None``: the end of input), waiting while the queue is full."""
        while True:
            try:
                self.queue.put(entry, timeout=0.2)
                return
            except queue.Full:
                if self.stop.is_set() or not self.thread.is_alive():
                    raise AuditFailure("the stream to the server ended") from None

    def _requests(self) -> Iterator[pb.SettleBatch]:
        while not self.stop.is_set():
            try:
                entry = self.queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if entry is None:
                return
            self.pending.append(entry)  # before the batch goes out: its answer finds it
            yield entry[3]

    def _read(self) -> None:
        from .client import SettlementError

        seq = -1
        try:
            for result in self.results:
                seq, outcome, hands, batch = self.pending.popleft()
                if is_batch_error(result) and len(batch.items) > 0:
                    result = self._one_by_one(batch, result)
                outcome.add_batch(self.prefix, hands, result)
                self.deliver(seq, outcome)
        except SettlementError as e:
            hint = ""
            if e.code.name == "RESOURCE_EXHAUSTED":
                hint = " (the server's message limit: try a smaller --batch)"
            self.deliver(seq, AuditFailure(f"the stream failed: {e}{hint}"))
        except BaseException as e:  # noqa: BLE001 — reported to the main thread
            self.deliver(seq, e)

    def _one_by_one(self, batch: pb.SettleBatch, error: pb.SettleBatchResult
                    ) -> pb.SettleBatchResult:
        """A batch the server refused as a whole (too big an answer): ask hand by hand."""
        singles = [pb.SettleBatch(items=[item]) for item in batch.items]
        out = pb.SettleBatchResult()
        for answer, item in zip(self.client.settle_stream(singles), batch.items):
            if is_batch_error(answer):
                r = out.results.add()
                r.CopyFrom(answer.results[0])
                r.ref = item.ref
            else:
                out.results.extend(answer.results)
        if len(out.results) != len(batch.items):
            e = error.results[0].error
            raise AuditFailure(f"the server refused a batch: {e.code}: {e.message}")
        return out

    def cancel(self) -> None:
        self.results.cancel()


class ServerRunner:
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

    def run(self, prefix: str, work: Iterable[tuple[int, int, list[tuple[int, bytes]]]],
            commit: Callable[[Outcome], None]) -> None:
        self.streams = [_Stream(self.client, prefix, self.stop, self._deliver)
                        for _ in range(self.workers)]
        limit = (_Stream.DEPTH + 3) * self.workers  # batches read but not yet committed
        next_commit = 0
        seq = 0

        def take(block: bool) -> bool:
            nonlocal next_commit
            with self.cond:
                while True:
                    if self.failure is not None:
                        raise self.failure
                    outcome = self.done.pop(next_commit, None)
                    if outcome is not None:
                        break
                    if not block:
                        return False
                    self.cond.wait(0.5)
            next_commit += 1
            commit(outcome)
            return True

        try:
            for first, last, lines in work:
                batch = pb.SettleBatch()
                hands = [prepare(prefix, number, raw, batch) for number, raw in lines]
                while seq - next_commit >= limit:
                    take(True)
                self._submit(self.streams[seq % self.workers], (seq, Outcome(first, last), hands,
                                                                batch))
                seq += 1
                while take(False):
                    pass
            for s in self.streams:
                self._submit(s, None)
            while next_commit < seq:
                take(True)
        except KeyboardInterrupt:
            # Keep the answers already in (in line order); drop the rest.
            while take(False):
                pass
            raise

    def _submit(self, stream: _Stream, entry: Any) -> None:
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


# --------------------------------------------------------------------------- report


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Report:
    """Outcomes merged in line order, and what to tell a person about them."""

    def __init__(self, source: str, first_line: int, settings: dict[str, Any]) -> None:
        self.source = source
        self.first_line = first_line
        self.settings = settings
        self.total = Outcome(first_line, first_line - 1)
        self.started = time.monotonic()
        self.started_at = _now()
        self.finished_at = ""
        self.elapsed = 0.0
        self.complete = False
        self.stop_reason = ""

    @property
    def last_line(self) -> int:
        return self.total.last_line

    def add(self, o: Outcome) -> None:
        t = self.total
        t.last_line = o.last_line
        t.read += o.read
        t.checked += o.checked
        t.unchecked += o.unchecked
        t.differences.extend(o.differences)
        t.invalid.extend(o.invalid)
        t.over += o.over
        t.under += o.under
        for mine, theirs in ((t.tables, o.tables), (t.dealers, o.dealers)):
            for key, row in theirs.items():
                acc = mine.get(key)
                if acc is None:
                    mine[key] = list(row)
                else:
                    for i, v in enumerate(row):
                        acc[i] += v

    def finish(self, complete: bool, reason: str = "") -> None:
        self.complete = complete
        self.stop_reason = reason
        self.elapsed = time.monotonic() - self.started
        self.finished_at = _now()

    @property
    def findings(self) -> bool:
        return bool(self.total.differences or self.total.invalid)

    def to_dict(self) -> dict[str, Any]:
        t = self.total

        def book(rows: dict[str, list[int]]) -> dict[str, Any]:
            return {k: {"hands": r[HANDS], "handsWithDifferences": r[DIFFS],
                        "invalidHands": r[INVALID], "overpaid": r[OVER], "underpaid": r[UNDER]}
                    for k, r in sorted(rows.items())}

        return {
            "format": REPORT_FORMAT,
            "source": self.source,
            **self.settings,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "elapsedSeconds": round(self.elapsed, 3),
            "handsPerSecond": round(t.read / self.elapsed, 1) if self.elapsed > 0 else 0.0,
            "complete": self.complete,
            "stopReason": self.stop_reason or None,
            "firstLine": self.first_line,
            "stoppedAfterLine": t.last_line,
            "summary": {
                "handsRead": t.read,
                "handsChecked": t.checked,
                "handsWithoutRecordedPayouts": t.unchecked,
                "handsWithDifferences": len(t.differences),
                "invalidHands": len(t.invalid),
                "overpaid": t.over,
                "underpaid": t.under,
            },
            "differences": t.differences,
            "invalid": t.invalid,
            "byTable": book(t.tables),
            "byDealer": book(t.dealers),
        }

    def write_json(self, path: str) -> None:
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)

    def summary(self, show: int, report_path: str | None) -> str:
        t = self.total
        rate = t.read / self.elapsed if self.elapsed > 0 else 0.0
        mode = self.settings
        where = mode["mode"] if mode["mode"] == "local" else f"server {mode.get('server')}"
        workers = f"{mode['workers']} worker{'s' if mode['workers'] != 1 else ''}"
        out = [f"cpsettle audit of {self.source} ({where}, {workers})"]
        span = f"lines {self.first_line:,} to {t.last_line:,}"
        if self.complete:
            out.append(f"  complete: {span}, {self.elapsed:.1f} s, {rate:,.0f} hands/s")
        else:
            out.append(f"  INCOMPLETE ({self.stop_reason}): {span} only; resume with "
                       f"--start-line {t.last_line + 1}")
        numbers = [
            ("hands read", t.read), ("hands checked", t.checked),
            ("hands without recorded payouts", t.unchecked),
            ("hands with payout differences", len(t.differences)),
            ("invalid hands", len(t.invalid)),
            ("money overpaid", t.over), ("money underpaid", t.under),
        ]
        out += [f"  {label:<32}{value:>12,}" for label, value in numbers]

        def more(n: int) -> None:
            if n > show:
                where = f"in {report_path}" if report_path else "with --report OUT.json"
                out.append(f"  … and {n - show:,} more (all of them {where})")

        def ids(e: dict[str, Any]) -> str:
            parts = [f"line {e['line']}"] + [
                f"{label} {e[key]}" for label, key in
                (("hand", "handId"), ("table", "tableId"), ("round", "roundId"),
                 ("dealer", "dealerId")) if e.get(key)
            ]
            return "  ".join(parts)

        if t.differences:
            out += ["", f"Payout differences ({len(t.differences):,})"]
            for d in t.differences[:show]:
                out.append(f"  {ids(d)}  [{d['profile']}, unit {d['unitValue']}]")
                out.append(f"      {'player':<12}{'expected':>10}{'paid':>10}{'difference':>12}")
                for p in d["players"]:
                    flag = "" if not p["difference"] else "  <--"
                    out.append(f"      {p['playerId']:<12}{p['expected']:>+10,}{p['paid']:>+10,}"
                               f"{p['difference']:>+12,}{flag}")
                for p in d["players"]:
                    if p.get("explanation"):
                        out.append(f"    why {p['playerId']} nets {p['expected']:+,}:")
                        out += [f"      {line}" for line in p["explanation"]]
            more(len(t.differences))
        if t.invalid:
            out += ["", f"Invalid hands ({len(t.invalid):,})"]
            for e in t.invalid[:show]:
                out.append(f"  {ids(e)}  {e['code']}")
                out += [f"      - {v['field']}: {v['reason']}" for v in e["violations"]]
            more(len(t.invalid))
        for title, rows, what in (("Per table", t.tables, "table"),
                                  ("Per dealer", t.dealers, "dealer")):
            if not rows:
                continue
            width = max(len(what), *(len(k) for k in rows))
            head = (f"  {what:<{width}}{'hands':>9}{'differences':>13}{'invalid':>9}"
                    f"{'overpaid':>11}{'underpaid':>11}")
            out += ["", title, head]
            for key, r in sorted(rows.items()):
                out.append(f"  {key:<{width}}{r[HANDS]:>9,}{r[DIFFS]:>13,}{r[INVALID]:>9,}"
                           f"{r[OVER]:>11,}{r[UNDER]:>11,}")
        return "\n".join(out)


# --------------------------------------------------------------------------- progress


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """A one-line bar on a terminal (rewritten with \\r), plain periodic lines elsewhere."""

    def __init__(self, stream: TextIO, mode: str, total_lines: int | None, first_line: int,
                 interval: float) -> None:
        if mode == "auto":
            isatty = getattr(stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        self.mode = mode
        self.stream = stream
        self.total = (total_lines - first_line + 1) if total_lines is not None else None
        self.first_line = first_line
        self.interval = interval if mode == "lines" else 0.1
        self.started = time.monotonic()
        self.last = self.started
        self.width = 0

    def _numbers(self, report: Report) -> tuple[int, float, str, str]:
        t = report.total
        elapsed = max(time.monotonic() - self.started, 1e-9)
        done_lines = t.last_line - self.first_line + 1
        rate = t.read / elapsed
        if self.total:
            share = min(done_lines / self.total, 1.0)
            left = (self.total - done_lines) * elapsed / done_lines if done_lines > 0 else 0.0
            pct = f"{share * 100:5.1f}%"
            eta = _duration(max(left, 0.0)) if done_lines > 0 else "?"
        else:
            pct, eta = "", "?"
        return done_lines, rate, pct, eta

    def update(self, report: Report, final: bool = False) -> None:
        if self.mode == "none":
            return
        now = time.monotonic()
        if not final and now - self.last < self.interval:
            return
        self.last = now
        t = report.total
        done, rate, pct, eta = self._numbers(report)
        findings = f"{len(t.differences):,} with differences, {len(t.invalid):,} invalid"
        if self.mode == "bar":
            share = min(done / self.total, 1.0) if self.total else 0.0
            filled = int(share * 24)
            bar = "[" + "#" * filled + "." * (24 - filled) + "]" if self.total else ""
            count = f"{done:,}/{self.total:,}" if self.total else f"{done:,}"
            text = (f"{bar} {count} lines {pct}  {rate:,.0f} hands/s  "
                    f"ETA {'0s' if final else eta}  {findings}")
            pad = max(self.width - len(text), 0)
            self.width = len(text)
            self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
        else:
            of = f"/{self.total:,} ({pct.strip()})" if self.total else ""
            tail = ("done" if report.complete else "stopped") if final else f"ETA {eta}"
            self.stream.write(f"cpsettle audit: line {t.last_line:,}{of}, {t.read:,} hands, "
                              f"{rate:,.0f} hands/s, {tail}, {findings}\n")
        self.stream.flush()


# --------------------------------------------------------------------------- command


def _positive(limit: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < 1 or (limit is not None and value > limit):
            bound = f"1 to {limit}" if limit else "at least 1"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    return parse


def add_parser(sub: Any, connection: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "audit", help="re-check a day of hand history (JSON lines) against the recorded payouts",
        description="Settle every hand of a JSON-lines history and report each payout that "
                    "differs from the settlement (docs/BULK_AUDIT.md).",
    )
    p.add_argument("history", help=f"JSON lines: a SettleRequest per line, with "
                                   f"{RECORDED_FIELD!r} (PLAYER: net minor units); '-' = stdin")
    p.add_argument("--workers", type=_positive(), default=1,
                   help="--local: processes; --server: parallel streams (default 1)")
    p.add_argument("--batch", type=_positive(MAX_BATCH), default=DEFAULT_BATCH,
                   help=f"hands per SettleBatch message (default {DEFAULT_BATCH})")
    p.add_argument("--report", metavar="OUT.json", help="write the full report as JSON here")
    p.add_argument("--start-line", type=_positive(), default=1,
                   help="skip the lines before this one (resume an interrupted audit)")
    p.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                   help="auto: a bar on a terminal, plain lines otherwise")
    p.add_argument("--progress-interval", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between plain progress lines (default 5)")
    p.add_argument("--show", type=int, default=20, metavar="N",
                   help="differences and invalid hands listed in the summary (default 20)")
    connection(p)
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    return run(args)


def run(args: argparse.Namespace, *, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from .cli import Backend, CliError

    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    path = args.history
    total: int | None = None
    if path != "-":
        try:
            total = count_lines(path)
        except OSError as e:
            raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    if args.report:
        folder = os.path.dirname(os.path.abspath(args.report))
        if not os.path.isdir(folder):
            raise CliError(f"cannot write the report: no folder {folder}")
    prefix = os.path.basename(path) if path != "-" else "stdin"
    local = bool(getattr(args, "local", False))
    settings = {"mode": "local" if local else "server", "workers": args.workers,
                "batch": args.batch}
    if not local:
        settings["server"] = args.server
    report = Report(prefix, args.start_line, settings)
    progress = Progress(stderr, args.progress, total, args.start_line, args.progress_interval)

    def commit(outcome: Outcome) -> None:
        report.add(outcome)
        progress.update(report)

    backend = None
    runner: LocalRunner | ServerRunner
    if local:
        runner = LocalRunner(args.workers, {
            "profile_dir": getattr(args, "profile_dir", None),
            "signing_key_file": getattr(args, "signing_key_file", None),
        })
    else:
        backend = Backend(args)
        runner = ServerRunner(backend.client(), args.workers)
    reason = ""
    code = EXIT_OK
    restore = _sigterm_as_interrupt()
    try:
        runner.run(prefix, chunks(read_lines(path, args.start_line), args.batch), commit)
    except KeyboardInterrupt:
        reason, code = "interrupted", EXIT_INTERRUPTED
    except AuditFailure as e:
        reason, code = f"error: {e}", EXIT_UNAVAILABLE
    except OSError as e:
        reason, code = f"error: cannot read {path}: {e.strerror or e}", EXIT_INVALID
    finally:
        try:
            runner.close(interrupted=bool(reason) or sys.exc_info()[0] is not None)
        except KeyboardInterrupt:  # a second Ctrl-C while stopping: the report still follows
            reason, code = "interrupted", EXIT_INTERRUPTED
        restore()
        if backend is not None:
            backend.__exit__(None, None, None)
    report.finish(complete=not reason, reason=reason)
    progress.update(report, final=True)
    if args.report:
        report.write_json(args.report)
    print(report.summary(args.show, args.report), file=stdout)
    if reason and code != EXIT_INTERRUPTED:
        print(f"cpsettle: {reason}", file=stderr)
    if code == EXIT_OK and report.findings:
        code = EXIT_FINDINGS
    return code


def _sigterm_as_interrupt() -> Callable[[], None]:
    """SIGTERM stops the audit like Ctrl-C (a partial report); returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:
        return lambda: None
    return lambda: signal.signal(signal.SIGTERM, previous)
