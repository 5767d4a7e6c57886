"""``SettlementClient``: a typed client for the cpsettle gRPC service. With a server running
(``scripts/demo`` starts one; tests/support starts them for the tests)::

    with SettlementClient("localhost:50051") as client:
        settlement = client.settle(request).settlement
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle.v1 import settlement_pb2_grpc as pb_grpc

DEFAULT_TIMEOUT = 10.0

# The unary calls are retried by gRPC itself when the replica is going away or busy (README,
# "Rebalancing and retries"): UNAVAILABLE (a replica shutting down, a connection lost, the
# audit log stuck: nothing was issued) and RESOURCE_EXHAUSTED (AT_CAPACITY; the server tells
# the client not to retry a request that is too large, with grpc-retry-pushback-ms -1). Four
# attempts at most, 0.1 s, then up to 0.2, 0.4 s apart (randomized by gRPC, within the call's
# deadline). Settle is deterministic: a retried call answers the same settlement (same id).
# SettleStream is not retried (`cpsettle audit --server` reconnects and resumes by itself).
RETRIED_METHODS = (
    "Settle",
    "ValidatePayouts",
    "EvaluateArrangement",
    "ListProfiles",
    "GetProfile",
    "VerifyIntegrity",
    "GetVerificationKeys",
)
RETRY_POLICY = {
    "maxAttempts": 4,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"],
}
SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": [
                    {"service": "cpsettle.v1.SettlementService", "method": m}
                    for m in RETRIED_METHODS
                ],
                "retryPolicy": RETRY_POLICY,
            }
        ]
    }
)

_Response = TypeVar("_Response")


@dataclass(frozen=True, slots=True)
class FieldViolation:
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class SettlementError(Exception):
    """A call that failed: the status code, its message, every field violation, and the
    machine-readable ``reason`` and ``domain`` of its ``google.rpc.ErrorInfo`` (README,
    "Errors"; empty when the status came from gRPC itself, e.g. UNAVAILABLE), with its
    ``metadata``; for NOT_FOUND, ``resource_type`` and ``resource_name``."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        violations: Sequence[FieldViolation] = (),
        *,
        reason: str = "",
        domain: str = "",
        metadata: Mapping[str, str] | None = None,
        resource_type: str = "",
        resource_name: str = "",
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.violations = tuple(violations)
        self.reason = reason
        self.domain = domain
        self.metadata = dict(metadata or {})
        self.resource_type = resource_type
        self.resource_name = resource_name

    @classmethod
    def from_status(cls, status: status_pb2.Status) -> SettlementError:
        """The error a ``google.rpc.Status`` describes: a call's, or a SettleStream hand's."""
        try:
            code = grpc.StatusCode[code_pb2.Code.Name(status.code)]
        except (ValueError, KeyError):
            code = grpc.StatusCode.UNKNOWN
        violations: list[FieldViolation] = []
        info = error_details_pb2.ErrorInfo()
        resource = error_details_pb2.ResourceInfo()
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations.extend(
                    FieldViolation(v.field, v.description) for v in bad.field_violations
                )
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                detail.Unpack(info)
            elif detail.Is(error_details_pb2.ResourceInfo.DESCRIPTOR):
                detail.Unpack(resource)
        return cls(
            code,
            status.message,
            violations,
            reason=info.reason,
            domain=info.domain,
            metadata=info.metadata,
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
        )

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> SettlementError:
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        details = error.details() if hasattr(error, "details") else str(error)
        try:
            status = rpc_status.from_call(error)  # type: ignore[arg-type]  # a Call at runtime
        except (ValueError, AttributeError):
            status = None
        if status is not None:
            return cls.from_status(status)
        return cls(code, details or "")


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """Server CA (to trust), and optionally a client certificate and key (mutual TLS)."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None  # override the name checked in the server certificate

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: str | None) -> bytes | None:
            if not path:
                return None
            with open(path, "rb") as f:
                return f.read()

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca_file),
            private_key=read(self.key_file),
            certificate_chain=read(self.cert_file),
        )


_MessageT = TypeVar("_MessageT", bound=Message)


@overload
def request_from_json(data: Mapping[str, Any] | str, message: None = None) -> pb.SettleRequest: ...
@overload
def request_from_json(data: Mapping[str, Any] | str, message: _MessageT) -> _MessageT: ...
def request_from_json(data: Mapping[str, Any] | str, message: Message | None = None) -> Message:
    """A request message from its JSON form (dict or text); unknown fields are errors. The
    message is a ``SettleRequest`` unless another (empty) message is given to fill."""
    target = message if message is not None else pb.SettleRequest()
    if isinstance(data, str):
        return json_format.Parse(data, target)
    return json_format.ParseDict(dict(data), target)


def message_dict(message: Any) -> dict[str, Any]:
    """A message in protobuf's JSON form with every field, zeros and false included
    (``allMatch: false``, ``netMoney: "0"``): what the CLI prints. int64 money comes out as a
    string, as protobuf's JSON mapping writes it (README, "Money in JSON"); a field with
    presence (``optional``, a oneof) appears only when set."""
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


class BatchResultStream(Iterator[pb.SettleStreamResponse]):
    """The answers of one ``SettleStream`` call, in order; ``cancel()`` ends the call."""

    def __init__(self, call: Any) -> None:
        self._call = call
        self._cancelled = False

    def __iter__(self) -> BatchResultStream:
        return self

    def __next__(self) -> pb.SettleStreamResponse:
        try:
            result: pb.SettleStreamResponse = next(self._call)
            return result
        except grpc.RpcError as e:
            if self._cancelled and e.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise SettlementError.from_rpc_error(e) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._call.cancel()


class SettlementClient:
    """Typed, blocking client. Use as a context manager; every call has a deadline."""

    def __init__(
        self,
        target: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        tls: TlsConfig | None = None,
        token: str | None = None,
        options: Iterable[tuple[str, Any]] = (),
        metadata: Iterable[tuple[str, str]] = (),
        retry: bool = True,
    ) -> None:
        """``metadata`` goes with every call (e.g. a W3C ``traceparent``). ``retry``: the
        unary calls are retried on UNAVAILABLE and RESOURCE_EXHAUSTED (``SERVICE_CONFIG``)."""
        opts = list(options)
        if retry:
            opts += [("grpc.enable_retries", 1), ("grpc.service_config", SERVICE_CONFIG)]
        if tls is not None:
            if tls.server_name:
                opts.append(("grpc.ssl_target_name_override", tls.server_name))
            self._channel = grpc.secure_channel(target, tls.credentials(), options=opts)
        else:
            self._channel = grpc.insecure_channel(target, options=opts)
        self._stub = pb_grpc.SettlementServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self.timeout = timeout
        self._metadata = tuple(metadata) + (
            (("authorization", f"Bearer {token}"),) if token else ()
        )

    def __enter__(self) -> SettlementClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _call(
        self,
        method: grpc.UnaryUnaryMultiCallable[Any, _Response],
        request: Any,
        timeout: float | None,
    ) -> _Response:
        try:
            return method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self._metadata or None,
            )
        except grpc.RpcError as e:
            raise SettlementError.from_rpc_error(e) from None

    def settle(
        self, request: pb.SettleRequest | Mapping[str, Any], *, timeout: float | None = None
    ) -> pb.SettleResponse:
        if not isinstance(request, pb.SettleRequest):
            request = request_from_json(request)
        return self._call(self._stub.Settle, request, timeout)

    def validate_payouts(
        self,
        request: pb.SettleRequest | Mapping[str, Any],
        proposed: Mapping[str, int],
        proposed_pairs: Mapping[tuple[str, str], int] | None = None,
        *,
        timeout: float | None = None,
    ) -> pb.ValidatePayoutsResponse:
        msg = pb.ValidatePayoutsRequest(
            request=request if isinstance(request, pb.SettleRequest) else request_from_json(request)
        )
        for pid, amount in proposed.items():
            msg.proposed.add(player_id=pid, net_money=amount)
        for (first, second), amount in (proposed_pairs or {}).items():
            msg.proposed_pairs.add(first=first, second=second, money_for_first=amount)
        return self._call(self._stub.ValidatePayouts, msg, timeout)

    def evaluate(
        self,
        request: pb.EvaluateArrangementRequest | Mapping[str, Any],
        *,
        timeout: float | None = None,
    ) -> pb.EvaluateArrangementResponse:
        if not isinstance(request, pb.EvaluateArrangementRequest):
            request = request_from_json(request, pb.EvaluateArrangementRequest())
        return self._call(self._stub.EvaluateArrangement, request, timeout)

    def settle_stream(
        self, batches: Iterable[pb.SettleStreamRequest], *, timeout: float | None = None
    ) -> BatchResultStream:
        """Bulk re-audit: one ``SettleStreamResponse`` per batch sent, in order, as they come.

        ``batches`` is consumed by a gRPC thread as fast as flow control lets it send, so a
        generator may block (on a queue, a file) to pace it. Unlike the unary calls, the stream
        has no deadline unless ``timeout`` is given (it lasts as long as its input). Failures of
        the stream itself raise ``SettlementError`` from the iteration; a single hand's problem
        is an ``AuditResult.error`` and never ends the stream. ``cancel()`` ends the call early.
        """
        call = self._stub.SettleStream(
            iter(batches), timeout=timeout, metadata=self._metadata or None
        )
        return BatchResultStream(call)

    def list_profiles(self, *, timeout: float | None = None) -> pb.ListProfilesResponse:
        return self._call(self._stub.ListProfiles, pb.ListProfilesRequest(), timeout)

    def get_profile(self, name: str, *, timeout: float | None = None) -> pb.GetProfileResponse:
        return self._call(self._stub.GetProfile, pb.GetProfileRequest(name=name), timeout)

    def verification_keys(self, *, timeout: float | None = None) -> pb.GetVerificationKeysResponse:
        """The server's public keys (current and retired): what ``cpsettle verify --keys`` reads."""
        return self._call(self._stub.GetVerificationKeys, pb.GetVerificationKeysRequest(), timeout)

    def health(self, service: str = "", *, timeout: float | None = None) -> str:
        """'SERVING', 'NOT_SERVING', … for a health service name ('' = the whole server)."""
        check: grpc.UnaryUnaryMultiCallable[
            health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse
        ] = self._health.Check  # type: ignore[attr-defined]  # the stubs' HealthStub lists no methods
        response = self._call(check, health_pb2.HealthCheckRequest(service=service), timeout)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))
