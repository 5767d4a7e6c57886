"""The gRPC servicer: map in, call the domain, map out. A few lines per RPC."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable

import grpc
from google.protobuf.message import Message

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..domain.profile.model import RuleProfile
from ..domain.settle import Settlement, check_payouts, evaluate_hand, settle
from ..errors import AtCapacity, DeadlineCapExceeded, LogUnavailable, NotFound
from ..observability import metrics
from ..observability.logging import audit_size, audit_written
from ..proof.digests import profile_digest
from ..proof.seal import Issued, Sealer
from . import bounds, mapping, stream, wire
from .codec import reject_malformed, reject_unknown, tolerant
from .pool import StreamPool
from .priority import LiveFirst
from .profiles import ProfileResolver

SERVICE_NAME = "cpsettle.v1.SettlementService"
# An answer with less time than this left before the call's deadline is not sent: it would
# reach the client after the client's own deadline (which fires a little earlier than the
# server's, by the request's transit), so its settlement would be logged as issued and never
# received. The call ends DEADLINE_EXCEEDED and the settlement gets settlement.not_delivered.
DELIVERY_MARGIN_SECONDS = 0.01

__all__ = ["SERVICE_NAME", "ProfileResolver", "SettlementServicer", "generic_handler",
           "profile_digest", "tolerant"]


# Each label's child of the settlement counters, bound once: labels() per call cost more than the
# increments themselves. A registry name or "inline", so as few as the profiles loaded.
_SETTLED: dict[str, Any] = {}
_NATURALS: dict[str, Any] = {}
_CAPS: dict[str, Any] = {}


def _child(children: dict[str, Any], metric: Any, label: str) -> Any:
    child = children.get(label)
    if child is None:
        child = children[label] = metric.labels(label)
    return child


def _record(settlement: Settlement, profile_label: str) -> None:
    (_SETTLED.get(profile_label) or _child(_SETTLED, metrics.SETTLEMENTS, profile_label)).inc()
    for p in settlement.players:
        if p.fouled:
            metrics.FOULS.inc()
        if p.natural is not None:
            _child(_NATURALS, metrics.NATURALS, p.natural.value).inc()
        if p.surrendered:
            metrics.SURRENDERS.inc()
    for pr in settlement.pairs:
        if pr.cap:
            _child(_CAPS, metrics.CAPS_APPLIED, pr.cap).inc()


class SettlementServicer:
    def __init__(self, resolver: ProfileResolver, sealer: Sealer | None = None,
                 log_timeout: float = 0.5, live: LiveFirst | None = None) -> None:
        self.resolver = resolver
        self.sealer = sealer
        # live (unary) calls in flight: streams let them go first between two hands
        self.live = live if live is not None else LiveFirst()
        # how long an answer waits for its audit lines to be written before it fails closed
        self.log_timeout = log_timeout
        # set when the server drains: streams end at their next batch boundary
        self.draining = asyncio.Event()

    def settlement_wire(
        self, request: Any, before_seal: Callable[[Settlement], object] | None = None
    ) -> tuple[bytes, Settlement, Issued | None]:
        """The ``Settlement`` message as bytes (sealed when there is a sealer), the domain
        settlement it was written from, and what the sealer issued (its receipt with it; None
        when nothing was logged). ``before_seal`` runs on the settlement before it is sealed
        (and logged as issued): a check that rejects the call issues nothing."""
        reject_malformed(request)
        table, choice = mapping.request_to_domain(request)
        profile, digest, source = self.resolver.resolve(choice)
        settlement = settle(table, profile)
        if before_seal is not None:
            before_seal(settlement)
        data = wire.settlement_body(settlement, digest, source)
        issued = None
        if self.sealer is not None:
            data, issued = self.sealer.seal(data, request.SerializeToString(deterministic=True),
                                            digest, settlement)
        # The profile label is never client text (an inline profile's name, or a name laid on by
        # overrides, would make a series per request): inline profiles count as "inline", and a
        # registry profile, overrides or not, under the registry name the request chose.
        _record(settlement, "inline" if source.startswith("inline") else request.preset)
        return data, settlement, issued

    # Plain functions: the async RPC methods below and the CLI's --local mode both use them,
    # so a local settlement is byte for byte what the server would answer.

    def settle_answer(self, request: Any) -> tuple[bytes, Issued | None]:
        """The ``SettleResponse`` bytes the Settle RPC sends (the receipt with the settlement),
        and what was issued."""
        data, _, issued = self.settlement_wire(request)
        return wire.settle_response(data, issued.receipt if issued is not None else None), issued

    def settle_wire(self, request: Any) -> bytes:
        """The ``SettleResponse`` bytes the Settle RPC sends."""
        return self.settle_answer(request)[0]

    def settle_response(self, request: Any) -> pb.SettleResponse:
        return pb.SettleResponse.FromString(self.settle_wire(request))

    def validate_response(self, request: Any) -> pb.ValidatePayoutsResponse:
        return self.validate_answer(request)[0]

    def validate_answer(self, request: Any) -> tuple[pb.ValidatePayoutsResponse, Issued | None]:
        """The ``ValidatePayoutsResponse`` (the receipt with the settlement) and what was
        issued."""
        reject_malformed(request)
        response = pb.ValidatePayoutsResponse()
        proposed, pairs = mapping.payouts_from_proto(request)
        checked = []
        data, settlement, issued = self.settlement_wire(
            request.request,
            lambda s: checked.append(
                mapping.check_differences(check_payouts(s, proposed, pairs), "proposed")))
        report = checked[0]
        response.settlement.MergeFromString(data)
        if issued is not None and issued.receipt is not None:
            wire.receipt_to_proto(issued.receipt, response.receipt)
        mapping.payout_report_to_proto(report, response)
        if not report.all_match:
            metrics.PAYOUT_MISMATCHES.inc()
        if self.sealer is not None:
            self.sealer.payouts_checked(settlement, response.settlement.settlement_id, report)
        return response, issued

    def evaluate_response(self, request: Any) -> pb.EvaluateArrangementResponse:
        reject_malformed(request)
        bounds.check_evaluate_request(request)
        choice = mapping.profile_choice(
            request.preset, request.HasField("profile"), request.profile,
            request.HasField("profile_overrides"), request.profile_overrides,
        )
        profile, digest, source = self.resolver.resolve(choice)
        evaluation = evaluate_hand(mapping.evaluate_input(request), profile)
        response = pb.EvaluateArrangementResponse()
        mapping.evaluation_to_proto(evaluation, response)
        ref = response.profile
        ref.name, ref.version, ref.digest, ref.source = (
            profile.name, profile.version, digest, source,
        )
        return response

    def list_response(self) -> pb.ListProfilesResponse:
        response = pb.ListProfilesResponse()
        for entry in self.resolver.registry.entries():
            self._summary(entry.profile, entry.source, response.profiles.add())
        return response

    def profile_response(self, name: str) -> pb.GetProfileResponse:
        entry = self.resolver.registry.entry(name)
        if entry is None:
            raise NotFound(
                f"no profile named {name!r}; known: " + ", ".join(self.resolver.registry.names()),
                resource_type=profile_pb2.RuleProfile.DESCRIPTOR.full_name, name=name,
            )
        response = pb.GetProfileResponse()
        mapping.profile_to_proto(entry.profile, response.profile)
        self._summary(entry.profile, entry.source, response.summary)
        return response

    def integrity_response(self, request: Any) -> pb.VerifyIntegrityResponse:
        """Re-check the installed files now and attest the manifest digest with the nonce."""
        from ..proof import integrity  # lazily: it reads the installed files' manifest

        reject_malformed(request)
        nonce = bytes(request.nonce)
        if not integrity.NONCE_MIN_BYTES <= len(nonce) <= integrity.NONCE_MAX_BYTES:
            raise InvalidInput([Violation(
                "nonce",
                f"must be {integrity.NONCE_MIN_BYTES} to {integrity.NONCE_MAX_BYTES} bytes, "
                f"got {len(nonce)}",
                ViolationCode.OTHER,
            )])
        report = integrity.check_installation()
        certified = report.intact and not report.development
        response = pb.VerifyIntegrityResponse(
            version=integrity.ENGINE_VERSION,
            engine_digest=integrity.engine_digest(),
            manifest_digest=report.manifest_digest,
            files_checked=report.files_checked,
            intact=certified,
            # no attestation for a modified install: the manifest itself may be untouched
            attestation=integrity.attest(nonce, report.manifest_digest) if certified else "",
        )
        response.problems.extend(report.problems)
        if report.development:
            response.problems.append("development install: no build manifest to check against")
        return response

    def keys_response(self) -> pb.GetVerificationKeysResponse:
        """The public keys that verify this replica's signatures (none without a sealer)."""
        if self.sealer is None:
            return pb.GetVerificationKeysResponse()
        return self.sealer.keys.to_proto()

    async def GetVerificationKeys(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetVerificationKeysResponse:
        reject_unknown(request)
        return self.keys_response()

    async def VerifyIntegrity(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.VerifyIntegrityResponse:
        return self.integrity_response(request)

    async def deliver(self, context: grpc.aio.ServicerContext[Any, Any],
                      issued: list[Issued], through: int) -> None:
        """Hold an answer until the audit log's first ``through`` lines (the settlements' own
        among them) are written. When they cannot be, or the call ends meanwhile, each
        settlement gets its ``settlement.not_delivered`` line and the call fails: no settlement
        goes out without its event, and none is logged as issued that was not delivered without
        saying so."""
        try:
            await audit_written(through, self.log_timeout)
        except LogUnavailable as e:
            self.not_delivered(issued, "audit_log_unavailable", str(e))
            raise
        except asyncio.CancelledError:
            self.not_delivered(issued, "cancelled")
            raise
        remaining = context.time_remaining()
        if remaining is not None and remaining < DELIVERY_MARGIN_SECONDS:
            self.not_delivered(issued, "deadline_exceeded")
            raise DeadlineCapExceeded("the call's deadline passed before its answer could go out")

    def not_delivered(self, issued: list[Issued], reason: str, detail: str = "") -> None:
        if self.sealer is not None and issued:
            self.sealer.not_delivered(issued, reason, detail)

    def brings_cold_profile(self, request: Any) -> bool:
        """Whether ``request`` (a Settle or EvaluateArrangement request) brings an inline profile
        or overrides the resolver has not cached: reading them is bulk work (``bulk_turn``)."""
        if not isinstance(request, (pb.SettleRequest, pb.EvaluateArrangementRequest)):
            return False  # malformed: refused at once
        has_profile = request.HasField("profile")
        has_overrides = request.HasField("profile_overrides")
        if not (has_profile or has_overrides):
            return False
        choice = mapping.profile_choice(request.preset, has_profile, request.profile,
                                        has_overrides, request.profile_overrides)
        return self.resolver.is_cold(choice)

    def bulk_turn(self) -> AbstractAsyncContextManager[None]:
        """``LiveFirst.bulk_turn``, refused (RESOURCE_EXHAUSTED) when the queue for it is full:
        calls waiting to read new profiles never take the whole budget of live calls."""
        if self.live.bulk_full():
            raise AtCapacity(
                f"{self.live.bulk_waiting} calls with profiles this replica has not read yet are "
                "waiting, the most it queues; retry shortly (a profile once read is kept)")
        return self.live.bulk_turn()

    async def _answer(self, build: Callable[[Any], Any], request: Any,
                      context: grpc.aio.ServicerContext[Any, Any], profile_of: Any) -> Any:
        """``build(request)`` and deliver it; as bulk work, after live calls, when
        ``profile_of`` (the message holding the request's profile choice) brings a profile
        the resolver has not cached: a live table's call never waits behind reading it."""
        if self.brings_cold_profile(profile_of):
            async with self.bulk_turn():
                answer, issued = build(request)
        else:
            answer, issued = build(request)
        sent = [issued] if issued is not None else []
        await self.deliver(context, sent, audit_size())
        if sent:
            # The client may cancel (or its deadline fire) after the answer is built and
            # before grpc sends it: the call then ends cancelled and the answer never leaves.
            # (typeshed types the callback as a class; any callable is what grpc takes)
            context.add_done_callback(
                lambda ended: self._after_answer(sent, ended))  # type: ignore[arg-type]
        return answer

    def _after_answer(self, issued: list[Issued],
                      context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """A call that answered a settlement has ended: if it ended cancelled (the client went,
        or its deadline passed, before the answer was sent), the settlement was not delivered.
        A cancel that reaches the server after the answer went out cannot be told apart from a
        delivery (docs/AUDIT.md, "Reconciling")."""
        if context.cancelled():
            self.not_delivered(issued, "cancelled_after_answer",
                               "the call ended cancelled after its answer was built: the answer "
                               "was not sent")

    async def Settle(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return await self._answer(self.settle_answer, request, context, request)  # type: ignore[no-any-return]

    async def ValidatePayouts(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ValidatePayoutsResponse:
        inner = request.request if isinstance(request, pb.ValidatePayoutsRequest) else None
        return await self._answer(self.validate_answer, request, context, inner)  # type: ignore[no-any-return]

    async def EvaluateArrangement(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.EvaluateArrangementResponse:
        if self.brings_cold_profile(request):
            async with self.bulk_turn():
                return self.evaluate_response(request)
        return self.evaluate_response(request)

    async def ListProfiles(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListProfilesResponse:
        reject_unknown(request)
        return self.list_response()

    async def GetProfile(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetProfileResponse:
        reject_malformed(request)
        return self.profile_response(request.name)

    @staticmethod
    def _summary(profile: RuleProfile, source: str, out: pb.ProfileSummary) -> None:
        out.name = profile.name
        out.version = profile.version
        out.digest = profile_digest(profile)
        out.source = source
        out.description = profile.description


_BOUNDED_REQUESTS = (pb.SettleRequest, pb.ValidatePayoutsRequest, pb.EvaluateArrangementRequest)


def generic_handler(
    servicer: SettlementServicer, *, max_result_bytes: int | None = None,
    max_request_bytes: int | None = None,
    stream_idle_seconds: float = stream.DEFAULT_IDLE_SECONDS,
    pool: StreamPool | None = None,
) -> grpc.GenericRpcHandler:
    """The service's handlers, with tolerant deserializers (bad bytes -> INVALID_ARGUMENT).

    ``max_result_bytes``: the largest SettleStream answer to send (the server's send limit);
    a batch whose results are bigger gets a per-batch error instead of failing the stream.
    Default: ``stream.DEFAULT_MAX_RESULT_BYTES``, the default server's limit.
    ``max_request_bytes``: the largest request message read (RESOURCE_EXHAUSTED past it).
    ``stream_idle_seconds``: a SettleStream that sends no batch for this long is ended.
    ``pool``: the worker processes that settle SettleStream's hands (None: this process).
    """
    result_limit = stream.DEFAULT_MAX_RESULT_BYTES if max_result_bytes is None else max_result_bytes

    async def settle_stream(
        request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        async for result in stream.settle_stream(
            servicer, request_iterator, context, max_result_bytes=result_limit,
            idle_seconds=stream_idle_seconds, pool=pool,
        ):
            yield result

    def unary(
        method: Any, req: type[Message], resp: type[Message]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        valid = bounds.MAX_REQUEST_BYTES if req in _BOUNDED_REQUESTS else None
        return grpc.unary_unary_rpc_method_handler(
            method, request_deserializer=tolerant(req, max_request_bytes, valid),
            response_serializer=wire.passthrough(resp.SerializeToString),
        )

    handlers = {
        "Settle": unary(servicer.Settle, pb.SettleRequest, pb.SettleResponse),
        "ValidatePayouts": unary(
            servicer.ValidatePayouts, pb.ValidatePayoutsRequest, pb.ValidatePayoutsResponse
        ),
        "EvaluateArrangement": unary(
            servicer.EvaluateArrangement,
            pb.EvaluateArrangementRequest,
            pb.EvaluateArrangementResponse,
        ),
        "ListProfiles": unary(
            servicer.ListProfiles, pb.ListProfilesRequest, pb.ListProfilesResponse
        ),
        "GetProfile": unary(servicer.GetProfile, pb.GetProfileRequest, pb.GetProfileResponse),
        "VerifyIntegrity": unary(
            servicer.VerifyIntegrity, pb.VerifyIntegrityRequest, pb.VerifyIntegrityResponse
        ),
        "GetVerificationKeys": unary(
            servicer.GetVerificationKeys, pb.GetVerificationKeysRequest,
            pb.GetVerificationKeysResponse,
        ),
        "SettleStream": grpc.stream_stream_rpc_method_handler(
            settle_stream,
            request_deserializer=tolerant(pb.SettleStreamRequest, max_request_bytes),
            response_serializer=wire.passthrough(pb.SettleStreamResponse.SerializeToString),
        ),
    }
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)
