"""The digests and ids a settlement proves itself with (docs/AUDIT.md), as pure functions:

- ``request_digest``: SHA-256 of the request's canonical encoding — protobuf's deterministic
  binary serialization of the ``SettleRequest`` as received (fields in field-number order, map
  entries sorted; any spelling of a card is kept as sent).
- ``profile_digest``: SHA-256 of the resolved profile's canonical JSON (sorted keys, no spaces,
  UTF-8).
- ``settlement_id``: SHA-256 of ``"cpsettle-settlement-id/v2\\n" + request_digest + "\\n" +
  profile_digest + "\\n" + engine_version + "\\n" + engine_digest``: two builds that share a
  version but differ in code give different ids (``legacy_settlement_id``: the v1 formula,
  without the engine digest, still accepted by ``verify``).
- ``settlement_digest``: SHA-256 of the settlement's deterministic serialization with
  ``settlement_digest``, ``issued_at`` and ``signature`` empty (``content_bytes``).
- the signature covers ``signed_bytes``: ``"cpsettle-signature/v1\\n" + settlement_digest +
  "\\n" + issued_at + "\\n" + key_id``, ``issued_at`` in its fixed-width text (``times``).

>>> sha256_hex(b"")
'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
>>> signed_bytes("ab" * 32, "2026-11-30T09:31:02.123Z", "k1").decode().splitlines()[0]
'cpsettle-signature/v1'
"""

from __future__ import annotations

import hashlib
import json

from cpsettle.v1 import settlement_pb2 as pb

from ..domain.profile import RuleProfile, profile_to_dict

__all__ = [
    "ID_PREFIX",
    "LEGACY_ID_PREFIX",
    "SIGNATURE_PREFIX",
    "content_bytes",
    "legacy_settlement_id",
    "profile_digest",
    "settlement_id",
    "sha256_hex",
    "signed_bytes",
]

ID_PREFIX = "cpsettle-settlement-id/v2\n"
# Ids issued before the engine digest was part of them (0.1.0): still accepted by verify(), so
# settlements stored then stay provable (docs/VERSIONING.md).
LEGACY_ID_PREFIX = "cpsettle-settlement-id/v1\n"
SIGNATURE_PREFIX = "cpsettle-signature/v1\n"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def profile_digest(profile: RuleProfile) -> str:
    """sha256 of the profile's canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(
        profile_to_dict(profile), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def legacy_settlement_id(request_digest: str, profile_digest: str, engine_version: str) -> str:
    text = f"{LEGACY_ID_PREFIX}{request_digest}\n{profile_digest}\n{engine_version}"
    return sha256_hex(text.encode("utf-8"))


def settlement_id(
    request_digest: str, profile_digest: str, engine_version: str, engine_digest: str
) -> str:
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


def signed_bytes(settlement_digest: str, issued_at: str, key_id: str) -> bytes:
    """What the signature covers: the content digest, the time of issue (its fixed-width text,
    ``2026-11-30T09:31:02.123Z``) and the key id."""
    return f"{SIGNATURE_PREFIX}{settlement_digest}\n{issued_at}\n{key_id}".encode()
