"""Checking a stored settlement (docs/AUDIT.md, "Verifying a settlement"): its id from its
digests, its content digest, and its Ed25519 signature against the published keys. The
client's ``cpsettle verify`` and the views use it; the JavaScript checker in clients/js is an
independent second implementation of the same checks.

>>> from cpsettle.v1 import settlement_pb2 as pb
>>> [f.what for f in verify(pb.Settlement())]
['settlement_id', 'settlement_digest', 'signature']
"""

from __future__ import annotations

from dataclasses import dataclass

from cpsettle.v1 import settlement_pb2 as pb

from ..errors import TimeProblem
from .digests import content_bytes, legacy_settlement_id, settlement_id, sha256_hex, signed_bytes
from .keys import KeySet
from .times import timestamp_text

__all__ = ["Finding", "verify"]


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
    want_id = settlement_id(s.request_digest, s.profile.digest, s.engine_version, s.engine_digest)
    if s.settlement_id != want_id and s.settlement_id != legacy_settlement_id(
        s.request_digest, s.profile.digest, s.engine_version
    ):
        findings.append(
            Finding(
                "settlement_id",
                f"is {s.settlement_id or '(empty)'}, the "
                f"request/profile/engine digests give {want_id}",
            )
        )
    digest = sha256_hex(content_bytes(s))
    if s.settlement_digest != digest:
        findings.append(
            Finding(
                "settlement_digest",
                f"is {s.settlement_digest or '(empty)'}, the content gives {digest}",
            )
        )
    sig = s.signature
    if sig.algorithm in (pb.SIGNATURE_ALGORITHM_NONE, pb.SIGNATURE_ALGORITHM_UNSPECIFIED):
        findings.append(Finding("signature", "the settlement is unsigned", keys is not None))
        return findings
    if sig.algorithm != pb.SIGNATURE_ALGORITHM_ED25519:
        findings.append(Finding("signature", f"unknown algorithm {sig.algorithm}"))
        return findings
    if keys is None:
        findings.append(
            Finding(
                "signature",
                f"NOT checked: no public keys given (key id {sig.key_id!r})",
                checked=False,
            )
        )
        return findings
    key = keys.get(sig.key_id)
    if key is None:
        findings.append(Finding("signature.key_id", f"no key {sig.key_id!r} in the key set"))
        return findings
    # Over the digest of the content as it is now: a changed field fails here too.
    if not key.verify(sig.value, signed_bytes(digest, issued_at, sig.key_id)):
        findings.append(Finding("signature", "does not match the settlement's content"))
    elif not key.covers(issued_at):
        findings.append(
            Finding(
                "signature.key_window",
                f"issued at {issued_at or '(absent)'}, "
                f"outside key {sig.key_id!r}'s validity {key.window()}",
            )
        )
    return findings
