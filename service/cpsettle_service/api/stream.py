"""``SettleStream``: bulk re-audit over one bidirectional stream (docs/BULK_AUDIT.md).

The client streams ``SettleStreamRequest`` messages; for each one the server answers exactly one
``SettleStreamResponse`` holding one ``AuditResult`` per ``AuditItem``, in order, ref echoed: the
settlement (and, when the dealer's recorded payouts came along, the per-player checks), or the
item's own error, a ``google.rpc.Status`` as a unary call would have answered (ErrorInfo,
BadRequest). One bad hand never ends the stream.

Batch-level problems answer the batch with a single result whose ``ref`` is empty and whose
error says what went wrong (the client's refs are never empty, so it can tell):

- bytes that are not a ``SettleStreamRequest`` (``codec``'s tolerant deserializer's
  ``Malformed``), or more bytes than the server reads (RESOURCE_EXHAUSTED);
- more than ``max_items`` hands in one message;
- results too big to send in one message (``max_result_bytes``): send fewer hands per batch.

Flow control: the handler reads the next batch only after the previous result has been handed
to the transport (grpc.aio awaits each yielded message), so a slow reader holds the server back
instead of making it buffer: at most the result being written plus what the HTTP/2 windows hold.
With worker processes (api/pool.py) it reads one batch ahead, which the workers settle while the
batch before it is sealed and sent: two batches at most.

A hand whose engine work may run long (a RULES.md §16 profile, or a profile never seen) is
settled by an engine worker (api/offload.py) when the stream's hands are settled in the server
process: no hand holds the event loop.

Live tables come first: between two hands the handler waits its turn (``priority.LiveFirst``):
while unary calls are in flight it lets them finish first, so a live Settle waits behind at most
one hand of a bulk batch, never behind the batch (``bench/bench_bulk_yield.py`` measures it).

The stream ends cleanly (status OK) at a batch boundary when it has sent nothing for
``idle_seconds`` or when the server drains (SIGTERM): every batch answered so far is delivered,
and a client that has batches left reconnects and sends them again (``cpsettle audit --server``
does).

Every settlement answered is logged as ``settlement.issued`` before its batch goes out (the
batch waits until the audit log has written it); one that cannot go out (results too big, the
call cancelled or past its deadline, the log unable to take events) gets its
``settlement.not_delivered`` line.

The per-item work is ``audit_item``, a plain function: ``settle_batch`` (the CLI's ``--local``
audit) and the stream run the very same code.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from google.rpc import status_pb2

from cpsettle.v1 import settlement_pb2 as pb

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..domain.settle import check_payouts
from ..errors import LogUnavailable, MessageTooLarge, WorkerLost
from ..observability import metrics
from ..observability.logging import audit_size, get_logger
from ..proof.seal import Issued
from ..wireformat import message_field, text_field
from . import wire
from .codec import Malformed
from .fair import caller_of
from .interceptors import RESULT_TOO_LARGE, count_invalid, error_status, status_of
from .mapping import check_differences, nets_from_proto, player_checks_to_proto
from .pool import HandResult, StreamPool, add_moved
from .priority import LiveFirst

MAX_ITEMS_PER_BATCH = 1000
# The default server sends messages of up to 4 x CPSETTLE_MAX_MESSAGE_BYTES (1 MiB) = 4 MiB.
DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
DEFAULT_IDLE_SECONDS = 60.0

_log = get_logger("cpsettle.stream")


def _paid(item: pb.AuditItem) -> dict[str, int]:
    problems: list[Violation] = []
    paid = nets_from_proto(item.paid, "paid", problems)
    if problems:
        raise InvalidInput(problems)
    return paid


_REF = text_field(1)
_SETTLEMENT = message_field(2)
_RECEIPT = message_field(7)  # AuditResult.receipt: after all_match (4) and checks (5)
_RESULT = message_field(1)


def _with_receipt(issued: Issued | None) -> bytes:
    """The ``AuditResult``'s receipt field for a settlement issued (nothing when unlogged)."""
    if issued is None or issued.receipt is None:
        return b""
    return _RECEIPT(wire.receipt(issued.receipt))


def audit_item(servicer: Any, item: pb.AuditItem) -> tuple[bytes, Issued | None]:
    """One hand's ``AuditResult`` as bytes: the settlement, the check of the recorded payouts
    and the settlement's receipt, or the hand's error; and what was issued."""
    parts = audit_parts(servicer, item)
    if isinstance(parts, bytes):
        return parts, None
    head, settlement, tail, issued = parts
    return head + _SETTLEMENT(settlement) + tail + _with_receipt(issued), issued


def audit_parts(
    servicer: Any, item: pb.AuditItem
) -> bytes | tuple[bytes, bytes, bytes, Issued | None]:
    """``audit_item`` in parts: the ``AuditResult``'s fields before the settlement, the
    ``Settlement``'s bytes, the fields after it (a worker process leaves the settlement to be
    sealed by the server: api/pool.py), and what was issued; or the hand's error result,
    whole."""
    try:
        paid = _paid(item) if item.paid else None  # before settling, as ValidatePayouts does
        settled = servicer.settle_request(item.request)
        # The recorded payouts are checked before the settlement is issued (a record that names
        # an unknown player issues nothing), as ValidatePayouts checks a proposal.
        report = (
            None
            if paid is None
            else check_differences(check_payouts(settled.settlement, paid), "paid")
        )
        data, issued = servicer.issue(settled)
        rest = pb.AuditResult()
        if report is not None:
            player_checks_to_proto(report.players, rest.checks)
            rest.all_match = report.all_match
            if not report.all_match:
                metrics.PAYOUT_MISMATCHES.inc()
                # The audit-log event ValidatePayouts writes for a mismatch. Matching hands get
                # none here: a day's re-audit would log every hand twice (settlement.issued is
                # already there for each), and the caller's report lists them anyway.
                sealer = servicer.sealer
                if sealer is not None:
                    sid = pb.Settlement.FromString(data).settlement_id
                    sealer.payouts_checked(settled.settlement, sid, report)
        else:
            rest.all_match = True
        # Fields in number order: ref (1), settlement (2), then all_match (4) and checks (5).
        return _REF(item.ref), data, rest.SerializeToString(deterministic=True), issued
    except LogUnavailable:
        raise  # the whole stream fails closed: no settlement goes out without its event
    except InvalidInput as e:
        count_invalid(e)
        out = pb.AuditResult(ref=item.ref, error=status_of(e))
    except Exception as e:  # one hand's failure must not end the stream
        _log.error("stream.item_failed", ref=item.ref[:128], exc_info=e)
        out = pb.AuditResult(ref=item.ref, error=status_of(e))  # INTERNAL, INTERNAL_ERROR
    return out.SerializeToString(deterministic=True)


def _noting_issued(issued: list[Issued], work: Callable[[], tuple[bytes, Issued | None]]) -> bytes:
    """``work()``'s bytes; the settlement it logged as issued, if any, appended to
    ``issued``."""
    data, sealed = work()
    if sealed is not None:
        issued.append(sealed)
    return data


def finish_hand(servicer: Any, hand: HandResult, issued: list[Issued]) -> bytes:
    """A hand a worker settled, sealed here (the time of issue, the signature, its
    ``settlement.issued``, which ``issued`` then lists) and its log lines written after it:
    the ``AuditResult`` bytes the stream sends, its receipt with it."""
    prepared = hand.prepared
    sealed = None
    if prepared is not None:
        sealed = servicer.sealer.finish(prepared)
        if sealed.issued is not None:
            issued.append(sealed.issued)
    for logger, level, event, fields in hand.lines:
        log = servicer.sealer.log if logger == "audit" else _log
        getattr(log, level)(event, **fields)
    if sealed is None:
        return hand.head
    return hand.head + _SETTLEMENT(sealed.data) + hand.tail + _with_receipt(sealed.issued)


def offloaded(servicer: Any, item: pb.AuditItem) -> bool:
    """Whether a hand of a stream settled in the server process goes to an engine worker: its
    profile uses RULES.md §16's searching extensions, or it is new (api/offload.py)."""
    offload = getattr(servicer, "offload", None)
    if offload is None or not isinstance(item.request, pb.SettleRequest):
        return False
    route, choice = servicer.route(item.request)
    if route == "read":  # a profile to read first (here, between two hands, as before)
        try:
            return bool(servicer.resolver.resolve_cached(choice).extended)
        except InvalidInput:
            return False  # the hand's own error, answered by audit_item
    return bool(route == "worker")


async def in_worker(servicer: Any, item: pb.AuditItem, issued: list[Issued], context: Any) -> bytes:
    """One hand settled by an engine worker (after its caller's turn), finished here."""
    data = pb.SettleStreamRequest(items=[item]).SerializeToString()
    try:
        async with servicer.engine_turns.turn(caller_of(context)):
            hands, moved = await servicer.offload.workers.run("settle_chunk", data)
    except WorkerLost as e:
        _log.error("stream.item_failed", ref=item.ref[:128], exc_info=e)
        return pb.AuditResult(ref=item.ref, error=status_of(e)).SerializeToString(
            deterministic=True
        )
    add_moved(moved)
    return finish_hand(servicer, hands[0], issued)


def batch_error(status: status_pb2.Status) -> pb.SettleStreamResponse:
    """Answer a whole batch with one error result (empty ref)."""
    out = pb.SettleStreamResponse()
    out.results.add(error=status)
    return out


def _batch_problem(batch: Any, max_items: int) -> status_pb2.Status | None:
    if type(batch) is Malformed:
        if batch.too_large:
            return status_of(MessageTooLarge(f"{batch.error}: send fewer hands per batch"))
        return status_of(batch.invalid())
    n = len(batch.items)
    if n > max_items:
        v = Violation(
            "items", f"a batch holds at most {max_items} hands, got {n}", ViolationCode.OTHER
        )
        return status_of(InvalidInput([v]))
    return None


def _result(results: list[bytes], max_result_bytes: int | None) -> bytes | pb.SettleStreamResponse:
    """The ``SettleStreamResponse`` bytes of ``results``, or a batch error if they are too big."""
    data = b"".join([_RESULT(r) for r in results])
    size = len(data)
    if max_result_bytes is None or size <= max_result_bytes:
        return data
    n = len(results)
    return batch_error(
        error_status(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            RESULT_TOO_LARGE,
            f"the results of these {n} hands take {size} bytes, over the server's message limit of "
            f"{max_result_bytes} bytes: send fewer hands per batch",
            {"maxResultBytes": str(max_result_bytes)},
        )
    )


def settle_batch(
    servicer: Any,
    batch: Any,
    *,
    max_items: int = MAX_ITEMS_PER_BATCH,
    max_result_bytes: int | None = None,
) -> pb.SettleStreamResponse:
    """One batch, synchronously: what the stream answers for it (``--local`` audits use this)."""
    problem = _batch_problem(batch, max_items)
    if problem is not None:
        return batch_error(problem)
    answer = _result([audit_item(servicer, item)[0] for item in batch.items], max_result_bytes)
    return pb.SettleStreamResponse.FromString(answer) if isinstance(answer, bytes) else answer


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _next_batch(
    request_iterator: AsyncIterator[Any], draining: asyncio.Event, idle_seconds: float
) -> tuple[Any, str]:
    """The next batch, or None and why the stream ends here: ``end`` (the client closed its
    side), ``idle`` (nothing for ``idle_seconds``), ``shutdown`` (the server drains)."""
    if draining.is_set():
        return None, "shutdown"
    read = asyncio.ensure_future(request_iterator.__anext__())
    read.add_done_callback(_retrieve)  # a read left behind must not log "never retrieved"
    stop = asyncio.ensure_future(draining.wait())
    try:
        done, _ = await asyncio.wait(
            (read, stop), timeout=idle_seconds, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        stop.cancel()
    if draining.is_set():  # a batch read meanwhile is dropped unanswered: the client resends it
        read.cancel()
        return None, "shutdown"
    if read not in done:
        read.cancel()
        return None, "idle"
    try:
        return read.result(), ""
    except StopAsyncIteration:
        return None, "end"


async def settle_stream(
    servicer: Any,
    request_iterator: AsyncIterator[Any],
    context: grpc.aio.ServicerContext[Any, Any],
    *,
    max_items: int = MAX_ITEMS_PER_BATCH,
    max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
    pool: StreamPool | None = None,
) -> AsyncIterator[bytes | pb.SettleStreamResponse]:
    """The SettleStream handler: one result per batch, in order, one batch at a time; the
    hands settled by ``pool``'s worker processes when there is one, else in this process."""
    draining: asyncio.Event = getattr(servicer, "draining", None) or asyncio.Event()
    live: LiveFirst = getattr(servicer, "live", None) or LiveFirst()
    issued: list[Issued] = []  # sealed for the batch in hand, not yet delivered
    # The last answer's settlements: handed to the transport, but a client that cancels before
    # its next batch (or its end) arrives may never have read them.
    unconfirmed: list[Issued] = []
    batches = 0
    sending = False

    async def take() -> tuple[Any, str, asyncio.Future[list[HandResult]] | None]:
        """The next batch (or None and why the stream ends), its hands already on their way
        through the workers when there is a pool."""
        batch, why = await _next_batch(request_iterator, draining, idle_seconds)
        if batch is None or pool is None or _batch_problem(batch, max_items) is not None:
            return batch, why, None
        settling = asyncio.ensure_future(pool.settle(batch.items))
        settling.add_done_callback(_retrieve)  # one left behind must not log "never retrieved"
        return batch, why, settling

    ahead: asyncio.Future[Any] | None = None
    try:
        while True:
            if ahead is None:
                ahead = asyncio.ensure_future(take())
            batch, why, settling = await ahead
            ahead = None
            unconfirmed = []  # the client went on: it was still there for the last answer
            if batch is None:
                if why != "end":
                    _log.info(
                        "stream.ended",
                        reason=why,
                        batches=batches,
                        idle_seconds=idle_seconds if why == "idle" else None,
                    )
                return
            if pool is not None:
                # Read ahead: the next batch settles in the workers while this one is sealed
                # and sent (two batches at most: the next is read only once this one is sent).
                ahead = asyncio.ensure_future(take())
                ahead.add_done_callback(_retrieve)
            batches += 1
            problem = _batch_problem(batch, max_items)
            if problem is not None:
                yield batch_error(problem)
                continue
            results = []
            if settling is not None:
                try:
                    hands = await settling
                except WorkerLost as e:
                    _log.error("stream.worker_lost", batches=batches, exc_info=e)
                    yield batch_error(status_of(e))
                    continue
                for hand in hands:  # nothing issued before this: a batch left behind issues none
                    results.append(finish_hand(servicer, hand, issued))
                    await live.wait_turn()
            else:
                for item in batch.items:
                    if offloaded(servicer, item):
                        # engine work that may run long: in a worker, never on the loop
                        results.append(await in_worker(servicer, item, issued, context))
                    else:
                        results.append(
                            _noting_issued(issued, functools.partial(audit_item, servicer, item))
                        )
                    # Live calls first: a live Settle waits behind one hand of this batch at
                    # most.
                    await live.wait_turn()
            answer = _result(results, max_result_bytes)
            if not isinstance(answer, bytes):
                servicer.not_delivered(issued, "result_too_large")
                issued = []
            else:
                handed, issued = issued, []
                # accounts for them itself if it fails
                await servicer.deliver(context, handed, audit_size())
                issued = handed  # in the transport's hands now: undelivered only if cancelled
            # Yielding suspends this generator until grpc.aio has written the message: the
            # batch after the next is read only then, so a slow reader throttles the pipeline.
            sending = True
            yield answer
            sending = False
            unconfirmed, issued = issued, []
    except (asyncio.CancelledError, GeneratorExit):
        if sending:  # the message may have reached the client just before the cancel
            servicer.not_delivered(
                issued,
                "cancelled_while_sending",
                "the call was cancelled while this answer was being written: "
                "the client may have received it",
            )
        else:
            servicer.not_delivered(
                unconfirmed,
                "cancelled_while_sending",
                "the call was cancelled after this answer was written, before "
                "the client sent more: the client may have received it",
            )
            servicer.not_delivered(issued, "cancelled")
        raise
    except LogUnavailable as e:
        servicer.not_delivered(issued, "audit_log_unavailable", str(e))
        raise
    finally:
        if ahead is not None:  # a batch read ahead is dropped (nothing of it was issued)
            if ahead.done() and not ahead.cancelled() and ahead.exception() is None:
                settling = ahead.result()[2]
                if settling is not None:
                    settling.cancel()
            ahead.cancel()
