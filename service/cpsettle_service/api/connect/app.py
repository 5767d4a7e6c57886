"""The Connect ASGI app over the gRPC server's own handlers: one seam, no second service.

``connect_app`` is given the handlers the gRPC server runs (``handlers``: the service
interceptor's wrappers around the servicer's methods, the same objects, cached per method), and
each Connect call goes through them as a gRPC call would:

- the request body, binary (``application/proto``) or JSON (``application/json``), is read by
  the handler's own tolerant deserializer (JSON is read by ``api.jsonform`` first, every problem
  named, then handed over as the binary it stands for), so the same size limits and the same
  ``INVALID_ARGUMENT`` come out of the same code;
- the handler runs with an ``HttpCall`` context: the HTTP headers are its metadata (bearer
  token, ``traceparent``), the ``connect-timeout-ms`` header its deadline, and its ``abort`` --
  what the interceptor calls with the ``google.rpc.Status`` of every error -- raises the
  ``ConnectError`` with the same code, message and details (BadRequest, ErrorInfo,
  ResourceInfo), which Connect writes as its error JSON (``details[].type``/``value``);
- the answer is the handler's serialized response, sent as it is (binary) or written in
  protobuf's JSON mapping with every field (JSON), as the CLI writes it.

Whatever the servicer and the interceptor do per call (off-loop work, delivery accounting,
receipts, the concurrency budget) therefore applies to HTTP calls as well. ``SettleStream`` is
served over gRPC only (a bidirectional stream needs HTTP/2 end to end): ``UNIMPLEMENTED`` here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import grpc
import structlog
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message
from google.rpc import status_pb2
from protobuf.wkt import Any as AnyDetail

from cpsettle.v1 import settlement_connect
from cpsettle.v1 import settlement_pb2 as pb

from ...domain.errors import InvalidInput
from ...errors import MessageTooLarge
from ..codec import Malformed
from ..jsonform import read_json_message
from .cors import Cors

__all__ = [
    "Answer",
    "BinaryCodec",
    "ConnectService",
    "HttpCall",
    "JsonCodec",
    "connect_app",
    "connect_error",
    "intercepted_handlers",
    "method_classes",
]

SERVICE = pb.DESCRIPTOR.services_by_name["SettlementService"]
STREAM_ONLY_OVER_GRPC = (
    "SettleStream is served over gRPC only (a bidirectional stream needs HTTP/2 end to end); "
    "over HTTP, send one Settle call per hand"
)
_STATUS_KEY = "grpc-status-details-bin"


def method_classes() -> dict[str, tuple[type[Message], type[Message]]]:
    """Each method of ``SettlementService``: its request and response message classes."""
    return {
        m.name: (
            message_factory.GetMessageClass(m.input_type),
            message_factory.GetMessageClass(m.output_type),
        )
        for m in SERVICE.methods
    }


def connect_error(
    code: grpc.StatusCode, message: str, trailing_metadata: Sequence[tuple[str, str | bytes]] = ()
) -> ConnectError:
    """The ``ConnectError`` of a gRPC status: the same code and message, and the details of
    the ``google.rpc.Status`` in ``grpc-status-details-bin`` (README, "Errors")."""
    details = []
    for key, value in trailing_metadata:
        if key == _STATUS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            message = status.message or message
            details = [AnyDetail(type_url=d.type_url, value=d.value) for d in status.details]
    # grpc spells CANCELLED, Connect CANCELED; every other name is the same
    name = "CANCELED" if code is grpc.StatusCode.CANCELLED else code.name
    return ConnectError(Code[name], message, details)


class HttpCall:
    """What the service's handlers ask of a ``grpc.aio.ServicerContext``, for a Connect call:
    its metadata (the request's HTTP headers, names in lower case), the time left before its
    deadline (``connect-timeout-ms``), and ``abort``, which raises the call's ``ConnectError``."""

    __slots__ = ("_ctx", "_metadata", "_code", "_details", "_done", "_cancelled")

    def __init__(self, ctx: RequestContext[Any, Any]) -> None:
        self._ctx = ctx
        self._metadata = tuple((k.lower(), v) for k, v in ctx.request_headers.allitems())
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._done: list[Callable[[HttpCall], None]] = []
        self._cancelled = False

    def add_done_callback(self, callback: Callable[[HttpCall], None]) -> None:
        """Run ``callback(self)`` when the call has ended (``ended``): as grpc runs a servicer
        context's done callbacks, so the servicer's delivery accounting holds over HTTP."""
        self._done.append(callback)

    def ended(self, cancelled: bool) -> None:
        """The call is over: its answer was handed to the HTTP server (``cancelled`` False:
        as over gRPC, a client that leaves after that cannot be told from a delivery), or its
        task was cancelled before (the client went: ``cancelled`` True)."""
        self._cancelled = cancelled
        callbacks, self._done = self._done, []
        for callback in callbacks:
            callback(self)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        remaining = self._ctx.timeout_ms
        return None if remaining is None else max(0.0, remaining / 1000)

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> None:
        self._code, self._details = code, details
        raise connect_error(code, details, trailing_metadata)

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def peer(self) -> str:
        return f"ipv4:{self._ctx.client_address}" if self._ctx.client_address else ""

    def cancelled(self) -> bool:
        return self._cancelled

    def done(self) -> bool:
        return self._code is not None


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data


class Answer:
    """A handler's response as gRPC would send it (``data``), and its message class, for the
    JSON codec to write it in JSON."""

    __slots__ = ("data", "message_class")

    def __init__(self, data: bytes, message_class: type[Message]) -> None:
        self.data = data
        self.message_class = message_class


class BinaryCodec:
    """``application/proto``: the request read by the handler's own deserializer (never raises:
    bad bytes come to the handler as ``Malformed``, refused there), the answer sent as is."""

    def __init__(self, deserializers: Mapping[type[Message], Callable[[bytes], Any]]) -> None:
        self._deserializers = deserializers

    def name(self) -> str:
        return "proto"

    def encode(self, message: Any) -> bytes:
        if isinstance(message, Answer):
            return message.data
        data: bytes = message.SerializeToString()
        return data

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        return self._deserializers[message_class](bytes(data))


class JsonCodec:
    """``application/json``: protobuf's JSON mapping. The request is read by
    ``api.jsonform`` (every problem named; a body past ``max_bytes`` is refused unread), then
    handed to the handler's deserializer as the binary it stands for, so that the same bounds
    apply; the answer is written with every field, zeros and false included."""

    def __init__(
        self, deserializers: Mapping[type[Message], Callable[[bytes], Any]], max_bytes: int
    ) -> None:
        self._deserializers = deserializers
        self._max_bytes = max_bytes

    def name(self) -> str:
        return "json"  # Connect reads "application/json; charset=utf-8" as "json" too

    def encode(self, message: Any) -> bytes:
        if isinstance(message, Answer):
            message = message.message_class.FromString(message.data)
        text: str = json_format.MessageToJson(
            message, indent=None, always_print_fields_with_no_presence=True
        )
        return text.encode()

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        full_name = message_class.DESCRIPTOR.full_name
        n = len(data)
        if n > self._max_bytes:
            return Malformed(
                full_name,
                MessageTooLarge(
                    f"the request is {n} bytes of JSON, over this server's limit of "
                    f"{self._max_bytes}"
                ),
                too_large=True,
            )
        try:
            message = read_json_message(bytes(data), message_class())
        except InvalidInput as e:
            return Malformed(full_name, e)
        return self._deserializers[message_class](message.SerializeToString())


class ConnectService:
    """The generated ``SettlementService`` protocol, each method a call of the gRPC server's
    handler for it (``handlers``: method name -> the interceptor's wrapped handler)."""

    def __init__(self, handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]]) -> None:
        classes = method_classes()
        # each unary method: the interceptor's wrapper (it takes a ServicerContext: an HttpCall
        # stands in), its serializer, its response class
        self._handlers: dict[
            str, tuple[Callable[[Any, Any], Any], Callable[[Any], bytes], type[Message]]
        ] = {
            name: (h.unary_unary, h.response_serializer or _serialize, classes[name][1])
            for name, h in handlers.items()
            if h.unary_unary is not None
        }

    async def _unary(self, name: str, request: Any, ctx: RequestContext[Any, Any]) -> Answer:
        behavior, serialize, response_class = self._handlers[name]
        # every line this call logs says it came over HTTP (a task of its own: nothing leaks)
        structlog.contextvars.bind_contextvars(transport="connect")
        call = HttpCall(ctx)
        try:
            answer = await behavior(request, call)
        except asyncio.CancelledError:
            call.ended(cancelled=True)
            raise
        call.ended(cancelled=False)
        return Answer(serialize(answer), response_class)

    async def settle(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("Settle", request, ctx)

    async def validate_payouts(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("ValidatePayouts", request, ctx)

    async def evaluate_arrangement(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("EvaluateArrangement", request, ctx)

    async def list_profiles(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("ListProfiles", request, ctx)

    async def get_profile(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("GetProfile", request, ctx)

    async def verify_integrity(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("VerifyIntegrity", request, ctx)

    async def get_verification_keys(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await self._unary("GetVerificationKeys", request, ctx)

    def settle_stream(self, request: Any, ctx: RequestContext[Any, Any]) -> Any:
        raise ConnectError(Code.UNIMPLEMENTED, STREAM_ONLY_OVER_GRPC)


class _CallDetails(NamedTuple):
    """A ``grpc.HandlerCallDetails``: what an interceptor is told of a call it wraps."""

    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


async def intercepted_handlers(
    interceptor: grpc.aio.ServerInterceptor, handler: grpc.GenericRpcHandler
) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """Each method's handler as the gRPC server runs it: ``handler``'s (the servicer's), as
    ``interceptor`` wraps it (the same cached wrapper a gRPC call of that method gets)."""

    async def continuation(
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        return handler.service(details)

    out = {}
    for method in SERVICE.methods:
        details = _CallDetails(f"/{SERVICE.full_name}/{method.name}", ())
        wrapped = await interceptor.intercept_service(continuation, details)  # type: ignore[arg-type]  # a HandlerCallDetails in shape
        if wrapped is not None:
            out[method.name] = wrapped
    return out


def connect_app(
    handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]],
    *,
    max_message_bytes: int,
    cors_origins: Sequence[str] = (),
) -> Any:
    """The ASGI app serving ``cpsettle.v1.SettlementService`` over Connect through
    ``handlers`` (see the module's docstring), behind CORS for ``cors_origins`` (none: no
    cross-origin caller is let in)."""
    classes = method_classes()
    deserializers = {
        classes[name][0]: h.request_deserializer
        for name, h in handlers.items()
        if h.request_deserializer is not None
    }
    app = settlement_connect.SettlementServiceASGIApplication(
        ConnectService(handlers),
        # Bodies up to twice the limit are read, as grpc reads them, so that the codecs refuse
        # those past it through the handler (counted, logged, MESSAGE_TOO_LARGE); beyond twice,
        # Connect refuses them unread (resource_exhausted, no details), as grpc does.
        read_max_bytes=2 * max_message_bytes,
        codecs=[BinaryCodec(deserializers), JsonCodec(deserializers, max_message_bytes)],
    )
    return Cors(app, tuple(cors_origins))
