"""The engine in this process, answering as the server does: the service's one in-process door.

``cpsettle ... --local`` and the bulk audit's local mode settle through ``LocalService``: the
same servicer code the server runs (tolerant decoding aside: the messages are built in
process), so a local answer is byte for byte what a server with the same profiles and key would
send (only ``issuedAt`` and the signature over it differ). Rejections raise ``InvalidInput``
(every violation) or ``NotFound`` (an unknown profile), both exported here, so a caller needs
nothing else of the service.

For the bulk audit's quick check (``cpsettle_client.audit.quick``) it also hands out the domain's
table types, the profile a preset and its overrides resolve to (through the servicer's own
resolver, so the server's choice exactly), and the engine's ``settle``: a hand that matches its
recorded payouts needs nothing more; the rest go through ``settle_batch`` for their evidence.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from .api import mapping, stream
from .api.profiles import ProfileResolver
from .api.servicer import SettlementServicer
from .domain.errors import InvalidInput
from .domain.profile import RuleProfile
from .domain.settle import AuditContext, PlayerInput, Settlement, Table, settle
from .errors import NotFound
from .profile_files import builtin_registry, with_directory
from .proof.keys import SigningKey
from .proof.seal import Sealer

__all__ = [
    "AuditContext",
    "InvalidInput",
    "LocalService",
    "NotFound",
    "PlayerInput",
    "Table",
    "settle",
]


class LocalService:
    """Settle, validate, evaluate and read profiles in process (built-in profiles, plus
    ``profile_dir``'s; signed with ``key`` when one is given)."""

    def __init__(self, profile_dir: str | None = None, key: SigningKey | None = None) -> None:
        registry = builtin_registry()
        if profile_dir:
            registry = with_directory(registry, profile_dir)
        self._servicer = SettlementServicer(ProfileResolver(registry), Sealer(key))

    def settle(self, request: pb.SettleRequest) -> pb.SettleResponse:
        return self._servicer.settle_response(request)

    def validate_payouts(self, request: pb.ValidatePayoutsRequest) -> pb.ValidatePayoutsResponse:
        return self._servicer.validate_response(request)

    def evaluate(self, request: pb.EvaluateArrangementRequest) -> pb.EvaluateArrangementResponse:
        return self._servicer.evaluate_response(request)

    def list_profiles(self) -> pb.ListProfilesResponse:
        return self._servicer.list_response()

    def get_profile(self, name: str) -> pb.GetProfileResponse:
        return self._servicer.profile_response(name)

    def verification_keys(self) -> pb.GetVerificationKeysResponse:
        return self._servicer.keys_response()

    def settle_batch(
        self, batch: pb.SettleStreamRequest, *, max_items: int = stream.MAX_ITEMS_PER_BATCH
    ) -> pb.SettleStreamResponse:
        """What ``SettleStream`` answers for ``batch`` (one result per item, in order)."""
        return stream.settle_batch(self._servicer, batch, max_items=max_items)

    def profile_for(self, preset: str, overrides: Any) -> RuleProfile:
        """The profile a ``SettleRequest`` with this ``preset`` and ``profileOverrides`` (its
        JSON value; None: none sent) settles under, resolved and cached as the server does.
        ``InvalidInput`` (or json_format's ``ParseError``) when it cannot be."""
        sent = overrides is not None
        struct = json_format.ParseDict(overrides, struct_pb2.Struct()) if sent else None
        choice = mapping.profile_choice(
            preset,
            False,
            profile_pb2.RuleProfile(),
            sent,
            struct if struct is not None else struct_pb2.Struct(),
        )
        return self._servicer.resolver.resolve(choice)[0]

    @staticmethod
    def settle_table(table: Table, profile: RuleProfile) -> Settlement:
        """The engine alone: ``table`` settled under ``profile`` (no bytes, no seal)."""
        return settle(table, profile)
