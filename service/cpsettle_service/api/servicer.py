"""The gRPC servicer: map in, call the domain, map out. A few lines per RPC."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, NamedTuple

import grpc
from google.protobuf.message import Message

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..domain.profile.model import RuleProfile
from ..domain.settle import Settlement, check_payouts, evaluate_hand, settle
from ..errors import DeadlineCapExceeded, LogUnavailable, NotFound
from ..observability import metrics
from ..observability.logging import audit_size, audit_written
from ..proof.digests import profile_digest
from ..proof.seal import Issued, Sealer
from . import bounds, mapping, stream, wire
from .codec import Malformed, reject_malformed, reject_unknown, tolerant, well_formed
from .fair import FairGate, caller_of
from .offload import Offload
from .pool import StreamPool
from .priority import LiveFirst
from .profiles import ProfileResolver, uses_extensions

SERVICE_NAME = "cpsettle.v1.SettlementService"
# An answer with less time than this left before the call's deadline is not sent: it would
# reach the client after the client's own deadline (which fires a little earlier than the
# server's, by the request's transit), so its settlement would be logged as issued and never
# received. The call ends DEADLINE_EXCEEDED and the settlement gets settlement.not_delivered.
DELIVERY_MARGIN_SECONDS = 0.01

__all__ = [
    "SERVICE_NAME",
    "ProfileResolver",
    "Settled",
    "SettlementServicer",
    "generic_handler",
    "profile_digest",
    "tolerant",
]


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


# A profile choice (inline profile and overrides, as sent) this small is read on the loop even
# the first time it is seen: reading costs about 1 ms per KiB (0.4 ms for a preset's overrides,
# 6 ms for the largest profile the rules allow, 6 KB), too little to be worth a worker's trip.
SMALL_CHOICE_BYTES = 2048


class Settled(NamedTuple):
    """A request settled, nothing issued yet: the request, the domain's settlement, and the
    profile's digest and source (what the settlement names)."""

    request: pb.SettleRequest
    settlement: Settlement
    profile_digest: str
    source: str


# How a unary call is worked out (``SettlementServicer.route``).
LIVE = "live"  # on the event loop, at once: a plain table, a profile already read
READ = "read"  # the server reads the profile (it came back) in a bulk turn, then as LIVE/WORKER
WORKER = "worker"  # in a worker process: §16's extensions, or a large profile seen the first time
BULK = "bulk"  # no workers: the whole call in a bulk turn on the loop (a profile not read yet)


class SettlementServicer:
    def __init__(
        self,
        resolver: ProfileResolver,
        sealer: Sealer | None = None,
        log_timeout: float = 0.5,
        live: LiveFirst | None = None,
        offload: Offload | None = None,
    ) -> None:
        self.resolver = resolver
        self.sealer = sealer
        # live (unary) calls in flight: streams let them go first between two hands
        self.live = live if live is not None else LiveFirst()
        # worker processes for engine work that may run long (None: all of it on the loop)
        self.offload = offload if sealer is not None else None
        self.engine_turns = FairGate(
            offload.size if offload is not None else 1, self.live.budget, self.live.refused
        )
        # each registry profile's name -> whether it uses the extensions that search
        self._preset_extended = {
            e.profile.name: uses_extensions(e.profile) for e in resolver.registry.entries()
        }
        # how long an answer waits for its audit lines to be written before it fails closed
        self.log_timeout = log_timeout
        # set when the server drains: streams end at their next batch boundary
        self.draining = asyncio.Event()

    # Plain functions: the async RPC methods below, the engine workers (api/offload.py) and the
    # CLI's --local mode all use them, so a settlement is byte for byte the same wherever it is
    # worked out. A Settle reads top to bottom: settle_request (map, resolve the profile,
    # settle: nothing issued yet), then issue (write the bytes, seal, log, count), then the
    # answer. Each step returns what it made; nothing comes back through context variables.

    def settle_request(
        self, request: pb.SettleRequest | Malformed, choice: mapping.LazyChoice | None = None
    ) -> Settled:
        """The request settled, nothing issued yet. ``choice``: the request's profile choice
        when the caller made it already (``route``), so it is made once per call."""
        request = well_formed(request)
        table, choice = mapping.request_to_domain(request, choice)
        profile, digest, source = self.resolver.resolve(choice)
        return Settled(request, settle(table, profile), digest, source)

    def issue(self, settled: Settled) -> tuple[bytes, Issued | None]:
        """The ``Settlement`` message's bytes, sealed when there is a sealer, and what the sealer
        issued (its ``settlement.issued`` line and receipt; None when nothing was logged)."""
        request, settlement, digest, source = settled
        data = wire.settlement_body(settlement, digest, source)
        issued = None
        if self.sealer is not None:
            data, issued = self.sealer.seal(
                data, request.SerializeToString(deterministic=True), digest, settlement
            )
        # The profile label is never client text (an inline profile's name, or a name laid on by
        # overrides, would make a series per request): inline profiles count as "inline", and a
        # registry profile, overrides or not, under the registry name the request chose.
        _record(settlement, "inline" if source.startswith("inline") else request.preset)
        return data, issued

    def settle_answer(
        self, request: pb.SettleRequest | Malformed, choice: mapping.LazyChoice | None = None
    ) -> tuple[bytes, Issued | None]:
        """The ``SettleResponse`` bytes the Settle RPC sends (the receipt with the settlement),
        and what was issued."""
        data, issued = self.issue(self.settle_request(request, choice))
        return wire.settle_response(data, issued.receipt if issued is not None else None), issued

    def validate_answer(
        self,
        request: pb.ValidatePayoutsRequest | Malformed,
        choice: mapping.LazyChoice | None = None,
    ) -> tuple[pb.ValidatePayoutsResponse, Issued | None]:
        """The ``ValidatePayoutsResponse`` (the receipt with the settlement) and what was
        issued. The proposal is checked before the settlement is issued: a proposal that names
        an unknown player issues nothing."""
        request = well_formed(request)
        proposed, pairs = mapping.payouts_from_proto(request)
        settled = self.settle_request(request.request, choice)
        report = mapping.check_differences(
            check_payouts(settled.settlement, proposed, pairs), "proposed"
        )
        data, issued = self.issue(settled)
        response = pb.ValidatePayoutsResponse()
        response.settlement.MergeFromString(data)
        if issued is not None and issued.receipt is not None:
            wire.receipt_to_proto(issued.receipt, response.receipt)
        mapping.payout_report_to_proto(report, response)
        if not report.all_match:
            metrics.PAYOUT_MISMATCHES.inc()
        if self.sealer is not None:
            self.sealer.payouts_checked(
                settled.settlement, response.settlement.settlement_id, report
            )
        return response, issued

    def evaluate_answer(
        self,
        request: pb.EvaluateArrangementRequest | Malformed,
        choice: mapping.LazyChoice | None = None,
    ) -> tuple[pb.EvaluateArrangementResponse, None]:
        """The ``EvaluateArrangementResponse``; an evaluation issues nothing."""
        request = well_formed(request)
        bounds.check_evaluate_request(request)
        profile, digest, source = self.resolver.resolve(choice or mapping.request_choice(request))
        evaluation = evaluate_hand(mapping.evaluate_input(request), profile)
        response = pb.EvaluateArrangementResponse()
        mapping.evaluation_to_proto(evaluation, response)
        ref = response.profile
        ref.name, ref.version, ref.digest, ref.source = (
            profile.name,
            profile.version,
            digest,
            source,
        )
        return response, None

    def settle_response(self, request: pb.SettleRequest | Malformed) -> pb.SettleResponse:
        """``settle_answer`` as a message (the CLI's ``--local``, tests)."""
        return pb.SettleResponse.FromString(self.settle_answer(request)[0])

    def validate_response(
        self, request: pb.ValidatePayoutsRequest | Malformed
    ) -> pb.ValidatePayoutsResponse:
        return self.validate_answer(request)[0]

    def evaluate_response(
        self, request: pb.EvaluateArrangementRequest | Malformed
    ) -> pb.EvaluateArrangementResponse:
        return self.evaluate_answer(request)[0]

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
                resource_type=profile_pb2.RuleProfile.DESCRIPTOR.full_name,
                name=name,
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
            raise InvalidInput(
                [
                    Violation(
                        "nonce",
                        f"must be {integrity.NONCE_MIN_BYTES} to "
                        f"{integrity.NONCE_MAX_BYTES} bytes, "
                        f"got {len(nonce)}",
                        ViolationCode.OTHER,
                    )
                ]
            )
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

    async def deliver(
        self, context: grpc.aio.ServicerContext[Any, Any], issued: list[Issued], through: int
    ) -> None:
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

    def route(self, request: object) -> tuple[str, mapping.LazyChoice | None]:
        """How a call whose profile choice ``request`` holds (a Settle or EvaluateArrangement
        request) is worked out -- LIVE, READ, WORKER or BULK -- and the request's profile
        choice when it names an inline profile or overrides (made here once for the call)."""
        if not isinstance(request, (pb.SettleRequest, pb.EvaluateArrangementRequest)):
            return LIVE, None  # malformed: refused at once
        if not (request.HasField("profile") or request.HasField("profile_overrides")):
            if self.offload is not None and self._preset_extended.get(request.preset):
                return WORKER, None
            return LIVE, None
        choice = mapping.request_choice(request)
        cached = self.resolver.lookup(choice)
        if cached is not None:
            return (WORKER if cached.extended and self.offload is not None else LIVE), choice
        if self.offload is None:
            return BULK, choice
        _, profile, overrides = choice.key
        small = len(profile or b"") + len(overrides or b"") <= SMALL_CHOICE_BYTES
        if small or self.resolver.seen_before(choice):
            return READ, choice
        return WORKER, choice

    def bulk_turn(self, caller: str = "") -> AbstractAsyncContextManager[None]:
        """``LiveFirst.bulk_turn`` (refused, RESOURCE_EXHAUSTED, when the queue for it is
        full: calls waiting to read new profiles never take the whole budget of live calls)."""
        return self.live.bulk_turn(caller)

    async def _answer(
        self,
        kind: str,
        build: Callable[[Any, mapping.LazyChoice | None], Any],
        request: Message | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
        profile_of: object,
    ) -> Any:
        """The answer of one unary call, delivered: worked out on the loop, in a bulk turn, or
        in a worker process (``route``), so that a live table's call never waits behind reading
        a new profile nor behind engine work that may run long. ``build`` (and the worker's
        ``Offload.run``) answers ``(answer, what was issued)``, and the call delivers exactly
        what was issued: its audit line written, or its ``settlement.not_delivered``."""
        route, choice = self.route(profile_of)
        if route == READ:
            assert choice is not None
            async with self.bulk_turn(caller_of(context)):
                try:
                    cached = self.resolver.resolve_cached(choice)
                except InvalidInput:
                    self.resolver.mark_invalid(choice)  # a worker reads it next time
                    raise
            route = WORKER if cached.extended else LIVE
        if route == LIVE:
            answer, issued = build(request, choice)
        elif route == BULK:
            async with self.bulk_turn(caller_of(context)):
                answer, issued = build(request, choice)
        else:
            assert self.offload is not None
            async with self.live.away(), self.engine_turns.turn(caller_of(context)):
                answer, issued = await self.offload.run(self, kind, request)
        sent = [issued] if issued is not None else []
        if kind != "evaluate":
            await self.deliver(context, sent, audit_size())
        if sent:
            # The client may cancel (or its deadline fire) after the answer is built and
            # before grpc sends it: the call then ends cancelled and the answer never leaves.
            # (typeshed types the callback as a class; any callable is what grpc takes)
            context.add_done_callback(lambda ended: self._after_answer(sent, ended))  # type: ignore[arg-type]
        return answer

    def _after_answer(
        self, issued: list[Issued], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        """A call that answered a settlement has ended: if it ended cancelled (the client went,
        or its deadline passed, before the answer was sent), the settlement was not delivered.
        A cancel that reaches the server after the answer went out cannot be told apart from a
        delivery (docs/AUDIT.md, "Reconciling")."""
        if context.cancelled():
            self.not_delivered(
                issued,
                "cancelled_after_answer",
                "the call ended cancelled after its answer was built: the answer was not sent",
            )

    async def Settle(
        self, request: pb.SettleRequest | Malformed, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        answer: bytes = await self._answer("settle", self.settle_answer, request, context, request)
        return answer

    async def ValidatePayouts(
        self,
        request: pb.ValidatePayoutsRequest | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> pb.ValidatePayoutsResponse:
        inner = request.request if isinstance(request, pb.ValidatePayoutsRequest) else None
        answer: pb.ValidatePayoutsResponse = await self._answer(
            "validate", self.validate_answer, request, context, inner
        )
        return answer

    async def EvaluateArrangement(
        self,
        request: pb.EvaluateArrangementRequest | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> pb.EvaluateArrangementResponse:
        answer: pb.EvaluateArrangementResponse = await self._answer(
            "evaluate", self.evaluate_answer, request, context, request
        )
        return answer

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
    servicer: SettlementServicer,
    *,
    max_result_bytes: int | None = None,
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
            servicer,
            request_iterator,
            context,
            max_result_bytes=result_limit,
            idle_seconds=stream_idle_seconds,
            pool=pool,
        ):
            yield result

    def unary(
        method: Any, req: type[Message], resp: type[Message]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        valid = bounds.MAX_REQUEST_BYTES if req in _BOUNDED_REQUESTS else None
        return grpc.unary_unary_rpc_method_handler(
            method,
            request_deserializer=tolerant(req, max_request_bytes, valid),
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
            servicer.GetVerificationKeys,
            pb.GetVerificationKeysRequest,
            pb.GetVerificationKeysResponse,
        ),
        "SettleStream": grpc.stream_stream_rpc_method_handler(
            settle_stream,
            request_deserializer=tolerant(pb.SettleStreamRequest, max_request_bytes),
            response_serializer=wire.passthrough(pb.SettleStreamResponse.SerializeToString),
        ),
    }
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)
