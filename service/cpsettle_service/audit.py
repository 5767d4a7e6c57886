"""Proof on every settlement: digests, a signature, and the audit log events.

The service stores nothing, so each settlement carries its own proof (docs/AUDIT.md):

- ``request_digest``: SHA-256 of the request's canonical encoding — protobuf's deterministic
  binary serialization of the ``SettleRequest`` as received (fields in field-number order,
  map entries sorted; any spelling of a card is kept as sent).
- ``profile.digest``: SHA-256 of the resolved profile's canonical JSON (sorted keys, no spaces).
- ``settlement_id``: SHA-256 of ``"cpsettle-settlement-id/v2\\n" + request_digest + "\\n" +
  profile_digest + "\\n" + engine_version + "\\n" + engine_digest``: two builds that share a
  version but differ in code give different ids.
- ``settlement_digest``: SHA-256 of the settlement's deterministic serialization with
  ``settlement_digest``, ``issued_at`` and ``signature`` empty. Everything else is inside it, so
  the same request gives the same bytes on every replica; only ``issued_at`` and ``signature``
  vary.
- ``signature``: Ed25519 (keys.py), with the replica's private key, over the UTF-8 text
  ``"cpsettle-signature/v1\n" + settlement_digest + "\n" + issued_at + "\n" + key_id``, where
  ``issued_at`` is the Timestamp's fixed-width millisecond text (times.py). The
  settlement digest covers every other field, so the signature covers the whole settlement;
  anyone holding the published public keys can check it, and no one holding them can forge it.
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from cpsettle.v1 import settlement_pb2 as pb

from .domain.settlement import PayoutReport, Settlement
from .integrity import ENGINE_VERSION, engine_digest
from .keys import ALGORITHM, KeySet, SigningKey
from .times import TimeProblem, millis_text, now_ms, timestamp_text

ID_PREFIX = "cpsettle-settlement-id/v2\n"
NOT_DELIVERED = "settlement.not_delivered"


@dataclass(frozen=True, slots=True)
class Issued:
    """A settlement sealed (its ``settlement.issued`` logged), not necessarily delivered."""

    settlement_id: str
    hand_id: str


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


# The settlement this task or thread sealed last (``Sealer.seal``), for the caller that must
# account for it if it cannot be delivered.
last_issued: contextvars.ContextVar[Issued | None] = contextvars.ContextVar(
    "last_issued", default=None)
UNSIGNED = "NONE"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Ids issued before the engine digest was part of them (0.1.0): still accepted by verify(), so
# settlements stored then stay provable (docs/VERSIONING.md).
LEGACY_ID_PREFIX = "cpsettle-settlement-id/v1\n"


def legacy_settlement_id(request_digest: str, profile_digest: str, engine_version: str) -> str:
    text = f"{LEGACY_ID_PREFIX}{request_digest}\n{profile_digest}\n{engine_version}"
    return sha256_hex(text.encode("utf-8"))


def settlement_id(request_digest: str, profile_digest: str, engine_version: str,
                  engine_digest: str) -> str:
    text = f"{ID_PREFIX}{request_digest}\n{profile_digest}\n{engine_version}\n{engine_digest}"
    return sha256_hex(text.encode("utf-8"))


def content_bytes(s: pb.Settlement) -> bytes:
    """The settlement's canonical bytes without settlement_digest, issued_at and signature."""
    copy = pb.Settlement()
    copy.CopyFrom(s)
    copy.ClearField("settlement_digest")
    copy.ClearField("issued_at")
    copy.ClearField("signature")
    return copy.SerializeToString(deterministic=True)


SIGNATURE_PREFIX = "cpsettle-signature/v1\n"


def signed_bytes(settlement_digest: str, issued_at: str, key_id: str) -> bytes:
    """What the signature covers: the content digest, the time of issue (its fixed-width text,
    ``2026-11-30T09:31:02.123Z``) and the key id."""
    return f"{SIGNATURE_PREFIX}{settlement_digest}\n{issued_at}\n{key_id}".encode("utf-8")


def log_not_delivered(log: Any, issued: list[Issued], reason: str, detail: str = "") -> None:
    """One ``settlement.not_delivered`` line per settlement (``Sealer.not_delivered``)."""
    for i in issued:
        log.warning(NOT_DELIVERED, settlement_id=i.settlement_id, hand_id=i.hand_id[:128],
                    reason=reason, **({"detail": detail} if detail else {}))


class ProofEncoder(Protocol):
    """How the proof's fields are written onto a ``Settlement`` message's bytes (the service
    hands over ``api.wire``; the sealer knows what to write, the encoder how)."""

    def audit_fields(self, settlement_id: str, request_digest: str, engine_version: str,
                     engine_digest: str) -> bytes: ...

    def seal_fields(self, digest: str, issued_ms: int, algorithm: str, key_id: str,
                    value: str) -> bytes: ...

    def late_fields(self, currency: str) -> bytes: ...


class Sealer:
    """Adds the proof to each settlement and writes the audit events."""

    def __init__(self, key: SigningKey | None, encoder: ProofEncoder, log: Any = None,
                 include_request: bool = True, clock: Any = now_ms,
                 keys: KeySet | None = None) -> None:
        self.key = key
        self._audit_fields = encoder.audit_fields
        self._seal_fields = encoder.seal_fields
        self._late_fields = encoder.late_fields
        # what GetVerificationKeys publishes: at least the signing key's public half
        if keys is None:
            keys = KeySet().with_current(key) if key is not None else KeySet()
        self.keys = keys
        self.log = log
        self.include_request = include_request
        self.engine_version = ENGINE_VERSION
        self.engine_digest = engine_digest()
        self._clock = clock

    def seal(self, body: bytes, request_bytes: bytes, profile_digest: str,
             settlement: Settlement) -> bytes:
        """The whole ``Settlement`` bytes: ``body`` (its fields 1-9, written by the encoder's
        module from ``settlement``, answering the request whose deterministic serialization is
        ``request_bytes``) followed by the ids and digests, the time of issue, the signature and
        the currency; logs ``settlement.issued``. ``clock`` gives the time of issue in whole
        milliseconds since the epoch."""
        return self.finish(self.prepare(body, request_bytes, profile_digest, settlement))

    def prepare(self, body: bytes, request_bytes: bytes, profile_digest: str,
                settlement: Settlement) -> Prepared:
        """The half of ``seal`` that needs neither the key, the clock nor the log: the ids and
        the content digest, and the ``settlement.issued`` event without its time. Picklable:
        SettleStream's worker processes prepare, the server process finishes (api/pool.py)."""
        request_digest = sha256_hex(request_bytes)
        sid = settlement_id(request_digest, profile_digest, self.engine_version,
                            self.engine_digest)
        content = body + self._audit_fields(sid, request_digest, self.engine_version,
                                            self.engine_digest)
        # The fields numbered after the seal's (17: currency) are content too.
        late = self._late_fields(settlement.currency)
        # Fields in number order and settlement_digest, issued_at, signature not yet written:
        # these are the bytes content_bytes() gives back from the finished message.
        digest = sha256_hex(content + late)
        event = None
        if self.log is not None:
            event = self._issued(settlement, sid, digest, request_digest, profile_digest,
                                 request_bytes)
        return Prepared(content, late, digest, Issued(sid, settlement.context.hand_id), event)

    def finish(self, prepared: Prepared) -> bytes:
        """The other half of ``seal``: the time of issue and the signature; logs
        ``settlement.issued`` (when ``prepared`` carries its event)."""
        digest = prepared.digest
        issued_ms = self._clock()
        issued_at = millis_text(issued_ms)
        key = self.key
        if key is None:
            tail = self._seal_fields(digest, issued_ms, UNSIGNED, "", "")
        else:
            value = key.sign(signed_bytes(digest, issued_at, key.key_id))
            tail = self._seal_fields(digest, issued_ms, ALGORITHM, key.key_id, value)
        if self.log is not None and prepared.event is not None:
            event = prepared.event
            event["issued_at"] = issued_at
            event["signed"] = key is not None
            event["key_id"] = key.key_id if key is not None else ""
            self.log.info("settlement.issued", **event)
            last_issued.set(prepared.issued)
        return prepared.content + tail + prepared.late

    def not_delivered(self, issued: list[Issued], reason: str, detail: str = "") -> None:
        """Log ``settlement.not_delivered`` for each settlement sealed (and logged as issued)
        that will not reach its caller: with ``settlement.issued`` the log reconciles one to one
        with what clients received. ``reason``: ``audit_log_unavailable``, ``cancelled``,
        ``deadline_exceeded``, ``result_too_large``, or ``cancelled_while_sending`` (the stream was
        cancelled while the batch's answer was being written, or after and before the client sent
        more: it may have arrived)."""
        if self.log is not None:
            log_not_delivered(self.log, issued, reason, detail)

    def _issued(self, settlement: Settlement, sid: str, digest: str, request_digest: str,
                profile_digest: str, request_bytes: bytes) -> dict[str, Any]:
        """The ``settlement.issued`` event; ``finish`` fills in the time and the key."""
        c = settlement.context
        profile = settlement.profile
        # the players' facts in one pass
        nets: dict[str, int] = {}
        net_units: dict[str, int] = {}
        fouls: list[str] = []
        naturals: dict[str, str] = {}
        surrenders: list[str] = []
        for p in settlement.players:
            pid = p.player_id
            nets[pid] = p.net_money
            net_units[pid] = p.net_units
            if p.fouled:
                fouls.append(pid)
            if p.natural:
                naturals[pid] = str(p.natural)
            if p.surrendered:
                surrenders.append(pid)
        event: dict[str, Any] = {
            "hand_id": c.hand_id,
            "table_id": c.table_id,
            "round_id": c.round_id,
            "dealer_id": c.dealer_id,
            "settlement_id": sid,
            "settlement_digest": digest,
            "request_digest": request_digest,
            "profile": profile.name,
            "profile_version": profile.version,
            "profile_digest": profile_digest,
            "engine_version": self.engine_version,
            "engine_digest": self.engine_digest,
            "issued_at": "",
            "signed": False,
            "key_id": "",
            "unit_value": settlement.unit_value,
            "currency": settlement.currency,
            "rake": settlement.rake,
            "nets": nets,
            "net_units": net_units,
            "fouls": fouls,
            "naturals": naturals,
            "surrenders": surrenders,
            "caps": [
                {"payer": pr.payer, "payee": pr.payee, "owed": pr.owed, "paid": pr.paid,
                 "cap": pr.cap}
                for pr in settlement.pairs if pr.cap
            ],
        }
        if self.include_request:
            # The exact request bytes (cards included): `cpsettle replay` reads them back.
            event["request"] = base64.b64encode(request_bytes).decode("ascii")
        return event

    def payouts_checked(self, settlement: Settlement, settlement_id: str,
                        report: PayoutReport) -> None:
        """Log the check of a dealer's payouts against ``settlement`` (sealed as
        ``settlement_id``): ``payout.validated``, or ``payout.mismatch`` with the differences."""
        if self.log is None:
            return
        ids = settlement.context
        base = {
            "hand_id": ids.hand_id,
            "table_id": ids.table_id,
            "round_id": ids.round_id,
            "dealer_id": ids.dealer_id,
            "settlement_id": settlement_id,
        }
        if report.all_match:
            self.log.info("payout.validated", **base, players=len(report.players))
            return
        self.log.warning(
            "payout.mismatch",
            **base,
            players=[
                {"player_id": c.player_id, "expected": c.expected, "proposed": c.proposed,
                 "difference": c.difference}
                for c in report.players if not c.matches
            ],
            pairs=[
                {"first": c.first, "second": c.second, "expected": c.expected,
                 "proposed": c.proposed, "difference": c.difference}
                for c in report.pairs if not c.matches
            ],
        )


# --------------------------------------------------------------------------- verification


@dataclass(frozen=True)
class Finding:
    what: str
    detail: str
    checked: bool = True  # False: a check that could not run (no keys), not a failed one

    def __str__(self) -> str:
        return f"{self.what}: {self.detail}"


def verify(s: pb.Settlement, keys: KeySet | None = None) -> list[Finding]:
    """Every digest and the signature of a stored settlement; empty list = all good.

    Without ``keys`` the signature is not checked, and the one finding that says so has
    ``checked=False``; an unsigned settlement is a finding either way.
    """
    try:
        issued_at = timestamp_text(s.issued_at, s.HasField("issued_at"))
    except TimeProblem as e:  # not a time this service issues, nor one a signature can cover
        return [Finding("file", f"issuedAt: {e}")]
    findings: list[Finding] = []
    want_id = settlement_id(s.request_digest, s.profile.digest, s.engine_version,
                            s.engine_digest)
    if s.settlement_id != want_id and s.settlement_id != legacy_settlement_id(
            s.request_digest, s.profile.digest, s.engine_version):
        findings.append(Finding("settlement_id", f"is {s.settlement_id or '(empty)'}, the "
                                f"request/profile/engine digests give {want_id}"))
    digest = sha256_hex(content_bytes(s))
    if s.settlement_digest != digest:
        findings.append(Finding(
            "settlement_digest",
            f"is {s.settlement_digest or '(empty)'}, the content gives {digest}",
        ))
    sig = s.signature
    if sig.algorithm in (pb.SIGNATURE_ALGORITHM_NONE, pb.SIGNATURE_ALGORITHM_UNSPECIFIED):
        findings.append(Finding("signature", "the settlement is unsigned", keys is not None))
        return findings
    if sig.algorithm != pb.SIGNATURE_ALGORITHM_ED25519:
        findings.append(Finding("signature", f"unknown algorithm {sig.algorithm}"))
        return findings
    if keys is None:
        findings.append(Finding("signature", f"NOT checked: no public keys given (key id "
                                f"{sig.key_id!r})", checked=False))
        return findings
    key = keys.get(sig.key_id)
    if key is None:
        findings.append(Finding("signature.key_id", f"no key {sig.key_id!r} in the key set"))
        return findings
    # Over the digest of the content as it is now: a changed field fails here too.
    if not key.verify(sig.value, signed_bytes(digest, issued_at, sig.key_id)):
        findings.append(Finding("signature", "does not match the settlement's content"))
    elif not key.covers(issued_at):
        findings.append(Finding("signature.key_window", f"issued at {issued_at or '(absent)'}, "
                                f"outside key {sig.key_id!r}'s validity {key.window()}"))
    return findings
