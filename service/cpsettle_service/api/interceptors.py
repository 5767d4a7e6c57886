"""One server interceptor: request context, canonical log line, RPC metrics, error mapping.

Handlers never abort themselves: they raise, and the explicit table below turns the domain's
errors into gRPC status codes. Every error the service sends carries a ``google.rpc.ErrorInfo``
(a reason from the table, ``domain`` "cpsettle.v1", metadata without ids or client text);
invalid input also carries a ``google.rpc.BadRequest`` detail with one field violation per
problem, and an unknown profile a ``google.rpc.ResourceInfo``. ``error_status`` builds them,
for the unary and stream calls and for a SettleStream hand's own error alike.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from ..domain.errors import InvalidInput
from ..errors import (
    AtCapacity,
    DeadlineCapExceeded,
    LogUnavailable,
    MessageTooLarge,
    NotFound,
    Unauthenticated,
)
from ..observability import metrics, tracing
from ..observability.logging import get_logger
from ..security import TokenChecker
from .fair import CALLER
from .priority import LiveFirst

# The ErrorInfo domain of every reason below: the contract's package, whose comments list them
# (settlement.proto, "Errors"; README, "Errors").
DOMAIN = "cpsettle.v1"

# The explicit table: exception type -> gRPC status code and the ErrorInfo reason
# (UPPER_SNAKE_CASE, stable: clients branch on it; a new reason is a compatible change, a
# renamed one a breaking change). Anything not in it is INTERNAL, reason INTERNAL_ERROR.
ERROR_CODES: tuple[tuple[type[BaseException], grpc.StatusCode, str], ...] = (
    (InvalidInput, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST"),
    (NotFound, grpc.StatusCode.NOT_FOUND, "PROFILE_NOT_FOUND"),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED, "INVALID_TOKEN"),
    (DeadlineCapExceeded, grpc.StatusCode.DEADLINE_EXCEEDED, "SERVER_DEADLINE_CAP"),
    (AtCapacity, grpc.StatusCode.RESOURCE_EXHAUSTED, "AT_CAPACITY"),
    (MessageTooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED, "MESSAGE_TOO_LARGE"),
    (LogUnavailable, grpc.StatusCode.UNAVAILABLE, "AUDIT_LOG_UNAVAILABLE"),
)
INTERNAL_REASON = "INTERNAL_ERROR"
# Reasons of errors that are not exceptions of the table: SettleStream's batch answers.
RESULT_TOO_LARGE = "RESULT_TOO_LARGE"

_log = get_logger("cpsettle.rpc")


def count_invalid(error: InvalidInput) -> None:
    """Count a rejected request once, under its first violation's code: a low-cardinality label
    (metrics never carry ids or values), never derived from the reason, which is English for
    people and may quote the request. Once per request, not per violation: a request with
    thousands of problems costs one increment, and the rate reads as rejected requests."""
    metrics.VALIDATION_ERRORS.labels(error.violations[0].code.value).inc()


# The status travels in trailers, which clients refuse past 8 KiB (grpc.max_metadata_size):
# however much of a request was wrong (thousands of cards, a 500 KB string echoed back), the
# detail keeps to a byte budget and every text to a length, so the client still gets it.
_DETAIL_BUDGET = 3072
_TEXT_LIMIT = 200
_MESSAGE_LIMIT = 1024
_MAX_LISTED = 50  # violations listed at most; the rest are counted in one last entry


def _clip(text: str, limit: int = _TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pack(detail: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed


def _bad_request(error: InvalidInput) -> error_details_pb2.BadRequest:
    detail = error_details_pb2.BadRequest()
    size = 0
    for v in error.violations[:_MAX_LISTED]:
        item = error_details_pb2.BadRequest.FieldViolation(
            field=_clip(v.field), description=_clip(v.reason)
        )
        size += item.ByteSize() + 4
        if size > _DETAIL_BUDGET:
            break
        detail.field_violations.append(item)
    n = len(error.violations)
    listed = len(detail.field_violations)
    if listed < n:
        detail.field_violations.add(field="request", description=f"{n - listed} more problems")
    return detail


def error_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    metadata: dict[str, str] | None = None,
    *details: Any,
) -> status_pb2.Status:
    """The ``google.rpc.Status`` of an error: ``code``, ``message``, the ``details`` (BadRequest,
    ResourceInfo), then an ``ErrorInfo`` with ``reason`` in ``DOMAIN`` and ``metadata`` (never
    ids or client text). The ErrorInfo comes last so that the BadRequest stays where clients
    written before it found it (first)."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    return status_pb2.Status(
        code=code.value[0],
        message=_clip(message, _MESSAGE_LIMIT),
        details=[*(_pack(d) for d in details), _pack(info)],
    )


def status_of(error: BaseException) -> status_pb2.Status:
    """The status an exception answers, from the table (INTERNAL for anything else)."""
    if isinstance(error, InvalidInput):
        codes = sorted({v.code.value for v in error.violations})  # at most the enum's few
        metadata = {"violationCodes": ",".join(codes), "violationCount": str(len(error.violations))}
        return error_status(
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
            invalid_message(error),
            metadata,
            _bad_request(error),
        )
    for kind, code, reason in ERROR_CODES:
        if isinstance(error, kind):
            if isinstance(error, NotFound):
                resource = error_details_pb2.ResourceInfo(
                    resource_type=error.resource_type,
                    resource_name=_clip(error.name, 100),
                    description=_clip(str(error)),
                )
                return error_status(code, reason, str(error), {}, resource)
            return error_status(code, reason, str(error))
    return error_status(grpc.StatusCode.INTERNAL, INTERNAL_REASON, "internal error")


def invalid_argument_status(error: InvalidInput) -> grpc.Status:
    return rpc_status.to_status(status_of(error))


def invalid_message(error: InvalidInput) -> str:
    """The one-line summary of rejected input: the first five problems and how many more."""
    n = len(error.violations)
    message = f"{n} problem{'s' if n != 1 else ''}: " + "; ".join(
        _clip(str(v), 100) for v in error.violations[:5]
    )
    if n > 5:
        message += f"; … {n - 5} more"
    return message


def _split(method: str) -> tuple[str, str]:
    _, service, name = method.split("/", 2) if method.count("/") >= 2 else ("", "", method)
    return service, name


class ServiceInterceptor(grpc.aio.ServerInterceptor):
    """Wraps every unary handler once (cached per method) with context, logs, metrics, errors."""

    def __init__(
        self,
        skip_services: tuple[str, ...] = (),
        tokens: TokenChecker | None = None,
        deadline_cap: float = 10.0,
        max_in_flight: int | None = None,
        max_streams: int | None = None,
        live: LiveFirst | None = None,
    ) -> None:
        self._cache: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        self._skip = skip_services
        self._tokens = tokens
        self._cap = deadline_cap
        # The concurrency limits live here, not in grpc's maximum_concurrent_rpcs, so that they
        # count only the settlement service: health probes are answered however busy we are.
        # Unary calls and streams have budgets of their own: open streams (idle or bulk) never
        # take the slots of live Settle calls.
        self._limit = max_in_flight
        self._in_flight = 0
        self._stream_limit = max_streams
        self._streams = 0
        # unary calls in flight, which bulk streams let go first; calls waiting to read a new
        # profile (bulk work) may hold at most half of the unary budget
        self.live = (
            live
            if live is not None
            else LiveFirst(
                None if max_in_flight is None else max(1, max_in_flight // 2), AtCapacity
            )
        )

    def _enter(self) -> None:
        if self._limit is not None and self._in_flight >= self._limit:
            raise AtCapacity(
                f"{self._in_flight} calls in flight, the limit of this replica; retry shortly"
            )
        self._in_flight += 1
        self.live.enter()

    def _enter_stream(self) -> None:
        if self._stream_limit is not None and self._streams >= self._stream_limit:
            raise AtCapacity(
                f"{self._streams} streams open, the limit of this replica; retry shortly"
            )
        self._streams += 1

    def _admit(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Authenticate the caller (when tokens are configured) and bind its name to the logs."""
        if self._tokens is not None:
            caller = self._tokens.caller(context.invocation_metadata())
            structlog.contextvars.bind_contextvars(caller=caller)
            CALLER.set(caller)  # whose queue its bulk work waits in (api/fair.py)

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        cached = self._cache.get(method)
        if cached is not None:
            return cached
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        service, name = _split(method)
        if service in self._skip:
            return handler
        if handler.unary_unary is not None:
            wrapped = grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, service, name),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        elif handler.stream_stream is not None:
            wrapped = grpc.stream_stream_rpc_method_handler(
                self._wrap_stream(handler.stream_stream, service, name),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        else:
            wrapped = handler
        self._cache[method] = wrapped
        return wrapped

    def _wrap_unary(self, behavior: Any, service: str, name: str) -> Any:
        book = _Bookkeeping(self, "unary", service, name)
        cap = self._cap

        async def wrapper(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            start, span = book.begin(_request_context(request), context)
            code = "OK"
            entered = False
            try:
                self._admit(context)
                self._enter()
                entered = True
                if context.time_remaining() is None:
                    try:
                        return await asyncio.wait_for(behavior(request, context), cap)
                    except TimeoutError:
                        raise DeadlineCapExceeded(
                            f"no deadline was set and the call ran past the server's {cap} s cap"
                        ) from None
                return await behavior(request, context)
            except BaseException as e:  # every failure is mapped or logged
                code, abort = _classify(e, context)
                if abort is not None:
                    await context.abort(*abort)
                raise
            finally:
                book.end(start, code, entered, span)

        return wrapper

    def _wrap_stream(self, behavior: Any, service: str, name: str) -> Any:
        book = _Bookkeeping(self, "bidi_stream", service, name)

        async def wrapper(
            request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> Any:
            start, span = book.begin({}, context)
            code = "OK"
            entered = False
            try:
                self._admit(context)
                self._enter_stream()
                entered = True
                async for response in behavior(request_iterator, context):
                    yield response
            except BaseException as e:  # every failure is mapped or logged
                code, abort = _classify(e, context)
                if abort is not None:
                    await context.abort(*abort)
                raise
            finally:
                book.end(start, code, entered, span)

        return wrapper


class _Bookkeeping:
    """One method's metrics, log context and canonical log line, around each call."""

    __slots__ = ("owner", "kind", "service", "name", "started", "handling", "handled")

    def __init__(self, owner: ServiceInterceptor, kind: str, service: str, name: str) -> None:
        self.owner = owner
        self.kind, self.service, self.name = kind, service, name
        self.started = metrics.STARTED.labels(kind, service, name)
        histogram = metrics.STREAM_HANDLING if kind == "bidi_stream" else metrics.HANDLING
        self.handling = histogram.labels(kind, service, name)
        self.handled: dict[str, Any] = {}

    def begin(
        self, context: dict[str, str], call: grpc.aio.ServicerContext[Any, Any]
    ) -> tuple[float, Any]:
        self.started.inc()
        metrics.IN_FLIGHT.inc()
        # Every per-call key is set on each call (Ellipsis = absent, which merge_contextvars
        # skips), so nothing of an earlier call can show: cheaper than clear_contextvars(),
        # which walks every context variable of the process.
        trace_id, span_id, span = tracing.begin(call.invocation_metadata(), self.service, self.name)
        structlog.contextvars.bind_contextvars(
            rpc=self.name,
            trace_id=trace_id,
            span_id=span_id,
            **{key: context.get(key, ...) for key in _CALL_KEYS},
        )
        return time.perf_counter(), span

    def end(self, start: float, code: str, entered: bool, span: Any = None) -> None:
        if entered:
            if self.kind == "unary":
                self.owner._in_flight -= 1
                self.owner.live.leave()
            else:
                self.owner._streams -= 1
        elapsed = time.perf_counter() - start
        metrics.IN_FLIGHT.dec()
        self.handling.observe(elapsed)
        counter = self.handled.get(code)
        if counter is None:
            counter = self.handled[code] = metrics.HANDLED.labels(
                self.kind, self.service, self.name, code
            )
        counter.inc()
        # One line per call: a call that delivered a settlement already has its line, the
        # settlement.issued audit event (the call's ids, rpc, trace ids and every fact of the
        # settlement; its duration is in the histogram). Every other call, and every failed
        # one, gets its rpc line.
        if code != "OK" or self.kind != "unary" or self.name not in ISSUING_METHODS:
            _log.info("rpc", method=self.name, code=code, duration_ms=round(elapsed * 1000, 3))
        tracing.finish(span, code)


# Unary methods whose successful answer carries a settlement issued (and logged) for it.
ISSUING_METHODS = frozenset({"Settle", "ValidatePayouts"})
_CALL_KEYS = ("hand_id", "table_id", "round_id", "dealer_id", "caller")


def _request_context(request: Any) -> dict[str, str]:
    inner = getattr(request, "request", None)  # ValidatePayoutsRequest wraps a SettleRequest
    source = inner if inner is not None and hasattr(inner, "hand_id") else request
    out = {}
    for key in ("hand_id", "table_id", "round_id", "dealer_id"):
        value = getattr(source, key, "")
        if value:
            out[key] = value[:128]
    return out


def _classify(
    error: BaseException, context: grpc.aio.ServicerContext[Any, Any]
) -> tuple[str, tuple[Any, ...] | None]:
    """The status code name for a failure, and the abort arguments (None: already final)."""
    if isinstance(error, grpc.aio.AbortError):
        code = context.code()
        return (code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"), None
    if isinstance(error, (asyncio.CancelledError, GeneratorExit)):
        # GeneratorExit: grpc.aio closes a stream handler's generator when the client cancels
        # (or the call otherwise ends under it); nothing may be awaited then, least of all an
        # abort, whose failure surfaced as "Task exception was never retrieved"
        return "CANCELLED", None
    if isinstance(error, InvalidInput):
        count_invalid(error)
        _log.info("request.invalid", violations=len(error.violations))
    elif not any(isinstance(error, kind) for kind, _, _ in ERROR_CODES):
        _log.error("rpc.failed", exc_info=error)
    status = rpc_status.to_status(status_of(error))
    trailing = status.trailing_metadata
    if isinstance(error, MessageTooLarge):
        # gRPC's retry policy (the clients' service config) retries RESOURCE_EXHAUSTED for
        # AT_CAPACITY; a request too large is refused whenever it comes: no retry (gRFC A6)
        trailing = (*trailing, ("grpc-retry-pushback-ms", "-1"))
    return status.code.name, (status.code, status.details, trailing)
