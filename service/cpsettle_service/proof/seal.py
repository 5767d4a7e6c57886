"""Sealing a settlement: its ids and digests, the time of issue and the signature, written as
the ``Settlement`` message's fields 10-17 after the content (fields 1-9, ``api.wire``), and its
``settlement.issued`` event handed to the audit log (docs/AUDIT.md; the digests are
``digests``, the events ``events``).

``Sealer.seal`` does it all in one step. ``prepare`` and ``finish`` split it where SettleStream's
worker processes meet the server: a worker prepares (ids, content digest, the event without its
time), and the server finishes (clock, key, log), so the signing key and the audit log never
leave the server process (api/pool.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from google.protobuf.timestamp_pb2 import Timestamp

from cpsettle.v1 import settlement_pb2 as pb

from ..domain.settle import PayoutReport, Settlement
from ..wireformat import enum_field, int_field, message_field, number, text_field
from .digests import settlement_id, sha256_hex, signed_bytes
from .events import ISSUED, Issued, issued_event, log_not_delivered, log_payouts_checked
from .integrity import ENGINE_VERSION, engine_digest
from .keys import ALGORITHM, KeySet, SigningKey
from .times import millis_text, now_ms

__all__ = ["UNSIGNED", "Issued", "Prepared", "Sealed", "Sealer", "late_fields"]

UNSIGNED = "NONE"


@dataclass(frozen=True, slots=True)
class Prepared:
    """A settlement ready to be sealed (``Sealer.prepare``): its bytes before the seal's fields
    and after them, their digest, its ids, and its ``settlement.issued`` event (None without an
    audit log)."""

    content: bytes
    late: bytes
    digest: str
    issued: Issued
    event: dict[str, Any] | None


class Sealed(NamedTuple):
    """What ``Sealer.seal`` (or ``finish``) issued: the whole ``Settlement`` bytes and the
    settlement as issued (its ids and, once its ``settlement.issued`` line is in the audit log,
    that line's receipt). ``issued`` is None when nothing was logged (no audit log): nothing to
    account for."""

    data: bytes
    issued: Issued | None


# --------------------------------------------------------------------------- the seal's fields

_S = pb.Settlement
_SIGNATURE_ALGORITHM = {
    UNSIGNED: pb.SIGNATURE_ALGORITHM_NONE,
    ALGORITHM: pb.SIGNATURE_ALGORITHM_ED25519,
}
_S_SETTLEMENT_ID = text_field(number(_S, "settlement_id"))
_S_REQUEST_DIGEST = text_field(number(_S, "request_digest"))
_S_ENGINE_VERSION = text_field(number(_S, "engine_version"))
_S_ENGINE_DIGEST = text_field(number(_S, "engine_digest"))
_S_DIGEST = text_field(number(_S, "settlement_digest"))
_S_ISSUED_AT = message_field(number(_S, "issued_at"))
_T_SECONDS = int_field(number(Timestamp, "seconds"))
_T_NANOS = int_field(number(Timestamp, "nanos"))
_S_CURRENCY = text_field(number(_S, "currency"))
_S_SIGNATURE = message_field(number(_S, "signature"))
_G_ALGORITHM = enum_field(number(pb.Signature, "algorithm"), _SIGNATURE_ALGORITHM)
_G_KEY_ID = text_field(number(pb.Signature, "key_id"))
_G_VALUE = text_field(number(pb.Signature, "value"))


def _audit_fields(
    settlement_id: str, request_digest: str, engine_version: str, engine_digest: str
) -> bytes:
    """Fields 10-13 of ``Settlement``: what its digest covers besides the content."""
    return (
        _S_SETTLEMENT_ID(settlement_id)
        + _S_REQUEST_DIGEST(request_digest)
        + _S_ENGINE_VERSION(engine_version)
        + _S_ENGINE_DIGEST(engine_digest)
    )


def _seal_fields(
    settlement_digest: str, issued_ms: int, algorithm: str, key_id: str, value: str
) -> bytes:
    """Fields 14-16 of ``Settlement``: its digest, the time of issue (``issued_ms`` milliseconds
    since the epoch, as a ``google.protobuf.Timestamp``) and the signature."""
    seconds, millis = divmod(issued_ms, 1000)
    return (
        _S_DIGEST(settlement_digest)
        + _S_ISSUED_AT(_T_SECONDS(seconds) + _T_NANOS(millis * 1_000_000))
        + _S_SIGNATURE(_G_ALGORITHM[algorithm] + _G_KEY_ID(key_id) + _G_VALUE(value))
    )


def late_fields(currency: str) -> bytes:
    """The fields of ``Settlement`` numbered after the seal's (17: the currency): content, inside
    the settlement digest, but written after field 16 to keep field-number order."""
    return _S_CURRENCY(currency)


# --------------------------------------------------------------------------- the sealer


class Sealer:
    """Adds the proof to each settlement and writes the audit events."""

    def __init__(
        self,
        key: SigningKey | None,
        log: Any = None,
        include_request: bool = True,
        clock: Any = now_ms,
        keys: KeySet | None = None,
    ) -> None:
        self.key = key
        # what GetVerificationKeys publishes: at least the signing key's public half
        if keys is None:
            keys = KeySet().with_current(key) if key is not None else KeySet()
        self.keys = keys
        self.log = log
        self.include_request = include_request
        self.engine_version = ENGINE_VERSION
        self.engine_digest = engine_digest()
        self._clock = clock

    def seal(
        self, body: bytes, request_bytes: bytes, profile_digest: str, settlement: Settlement
    ) -> Sealed:
        """The whole ``Settlement`` bytes: ``body`` (its fields 1-9, written by ``api.wire``
        from ``settlement``, answering the request whose deterministic serialization is
        ``request_bytes``) followed by the ids and digests, the time of issue, the signature and
        the currency; logs ``settlement.issued``. ``clock`` gives the time of issue in whole
        milliseconds since the epoch. Returns the bytes and what was issued, its receipt with
        it."""
        return self.finish(self.prepare(body, request_bytes, profile_digest, settlement))

    def prepare(
        self, body: bytes, request_bytes: bytes, profile_digest: str, settlement: Settlement
    ) -> Prepared:
        """The half of ``seal`` that needs neither the key, the clock nor the log: the ids and
        the content digest, and the ``settlement.issued`` event without its time. Picklable:
        SettleStream's worker processes prepare, the server process finishes (api/pool.py)."""
        request_digest = sha256_hex(request_bytes)
        sid = settlement_id(request_digest, profile_digest, self.engine_version, self.engine_digest)
        content = body + _audit_fields(sid, request_digest, self.engine_version, self.engine_digest)
        # The fields numbered after the seal's (17: currency) are content too.
        late = late_fields(settlement.currency)
        # Fields in number order and settlement_digest, issued_at, signature not yet written:
        # these are the bytes digests.content_bytes() gives back from the finished message.
        digest = sha256_hex(content + late)
        event = None
        if self.log is not None:
            event = issued_event(
                settlement,
                sid,
                digest,
                request_digest,
                profile_digest,
                self.engine_version,
                self.engine_digest,
                request_bytes if self.include_request else None,
            )
        return Prepared(content, late, digest, Issued(sid, settlement.context.hand_id), event)

    def finish(self, prepared: Prepared) -> Sealed:
        """The other half of ``seal``: the time of issue and the signature; logs
        ``settlement.issued`` (when ``prepared`` carries its event) and returns its receipt
        with the bytes."""
        digest = prepared.digest
        issued_ms = self._clock()
        issued_at = millis_text(issued_ms)
        key = self.key
        if key is None:
            tail = _seal_fields(digest, issued_ms, UNSIGNED, "", "")
        else:
            value = key.sign(signed_bytes(digest, issued_at, key.key_id))
            tail = _seal_fields(digest, issued_ms, ALGORITHM, key.key_id, value)
        data = prepared.content + tail + prepared.late
        if self.log is not None and prepared.event is not None:
            event = prepared.event
            event["issued_at"] = issued_at
            event["signed"] = key is not None
            event["key_id"] = key.key_id if key is not None else ""
            append = getattr(self.log, "append", None)  # the audit log's: with the receipt
            receipt = None
            if append is not None:
                receipt = append(ISSUED, **event)
            else:  # a plain logger (an embedder's): no receipt
                self.log.info(ISSUED, **event)
            return Sealed(data, prepared.issued._replace(receipt=receipt))
        return Sealed(data, None)

    def not_delivered(self, issued: list[Issued], reason: str, detail: str = "") -> None:
        """Log ``settlement.not_delivered`` for each settlement sealed (and logged as issued)
        that will not reach its caller (``events.log_not_delivered``)."""
        if self.log is not None:
            log_not_delivered(self.log, issued, reason, detail)

    def payouts_checked(
        self, settlement: Settlement, settlement_id: str, report: PayoutReport
    ) -> None:
        """Log the check of a dealer's payouts against ``settlement`` (sealed as
        ``settlement_id``): ``payout.validated`` or ``payout.mismatch``."""
        if self.log is not None:
            log_payouts_checked(self.log, settlement, settlement_id, report)
