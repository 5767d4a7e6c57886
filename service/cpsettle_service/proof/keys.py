"""Signing keys: the Ed25519 key a replica signs with, and the public key set anyone verifies with.

- The private key is a PEM file (PKCS#8, ``-----BEGIN PRIVATE KEY-----``), the form
  ``openssl genpkey -algorithm ed25519`` and ``cpsettle keys generate`` write; in production a
  mounted Secret named by ``CPSETTLE_SIGNING_KEY_FILE``. PEM rather than a raw 32-byte seed: the
  file says what it is (the algorithm's OID), so a wrong file is refused, never misread.
- Its key id is ``CPSETTLE_SIGNING_KEY_ID`` when set, otherwise the key's fingerprint: the first
  16 hex digits of SHA-256 over the 32-byte public key.
- The key set is the JSON form of ``GetVerificationKeysResponse``: every public key with its id
  and validity window, and which one this replica signs with now (docs/AUDIT.md, "Keys"). An
  operator lists retired keys in ``CPSETTLE_VERIFICATION_KEYS_FILE`` (the same format); a
  replica publishes them beside its own, so settlements signed before a rotation still verify.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from cpsettle.v1 import settlement_pb2 as pb

from ..config import Settings
from ..errors import KeyProblem, TimeProblem
from .times import set_timestamp, timestamp_text

ALGORITHM = "Ed25519"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


def fingerprint(public_raw: bytes) -> str:
    """The default key id: the first 16 hex digits of SHA-256 over the raw public key."""
    return hashlib.sha256(public_raw).hexdigest()[:16]


@dataclass(frozen=True)
class PublicKey:
    """One published key: what ``verify`` needs and nothing secret."""

    key_id: str
    raw: bytes  # 32 bytes (RFC 8032)
    # fixed-width texts (times.py: compare as times), "" = no bound; Timestamps on the wire
    not_before: str = ""
    not_after: str = ""

    def verify(self, signature_hex: str, data: bytes) -> bool:
        if not _HEX128.fullmatch(signature_hex):
            return False
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(bytes.fromhex(signature_hex), data)
        except InvalidSignature:
            return False
        return True

    def covers(self, when: str) -> bool:
        """Whether ``when`` (a fixed-width text, times.py) is inside the validity window."""
        return (not self.not_before or when >= self.not_before) and (
            not self.not_after or when <= self.not_after
        )

    def window(self) -> str:
        return f"[{self.not_before or 'open'}, {self.not_after or 'open'}]"

    def to_proto(self, out: pb.VerificationKey) -> None:
        out.key_id, out.public_key = self.key_id, self.raw.hex()
        out.algorithm = pb.SIGNATURE_ALGORITHM_ED25519
        if self.not_before:
            set_timestamp(out.not_before, self.not_before)
        if self.not_after:
            set_timestamp(out.not_after, self.not_after)


@dataclass(frozen=True)
class SigningKey:
    """The private key a replica signs with; its repr never shows the key."""

    key_id: str
    private: Ed25519PrivateKey = field(repr=False)
    public: PublicKey = field(repr=False)

    def sign(self, data: bytes) -> str:
        """The Ed25519 signature of ``data`` as 128 lowercase hex digits."""
        return self.private.sign(data).hex()


def signing_key_from_pem(data: bytes, key_id: str = "", where: str = "the key") -> SigningKey:
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as e:
        raise KeyProblem(
            f"{where} is not an unencrypted PEM private key "
            f"(openssl genpkey -algorithm ed25519): {type(e).__name__}"
        ) from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyProblem(f"{where} is a {type(private).__name__.lstrip('_')}, not an Ed25519 key")
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    kid = key_id or fingerprint(raw)
    return SigningKey(kid, private, PublicKey(kid, raw))


KEY_ID_LINE = "cpsettle-key-id: "


def key_file_exposed(settings: Settings) -> str:
    """Why the signing-key file is exposed ("" when it is not): any user may read or write it.
    Refused with ``CPSETTLE_REQUIRE_SIGNING_KEY`` (production), a loud warning otherwise."""
    if not settings.signing_key_file:
        return ""
    try:
        mode = Path(settings.signing_key_file).stat().st_mode & 0o777
    except OSError:
        return ""
    if not mode & 0o007:
        return ""
    return (
        f"CPSETTLE_SIGNING_KEY_FILE ({settings.signing_key_file}) is readable or writable "
        f"by any user (mode {mode:04o}): chmod o-rwx it (0600, or 0440 with the group that "
        "runs the service, as deploy/ mounts it)"
    )


def generate_pem(key_id: str = "") -> bytes:
    """A new Ed25519 private key as PKCS#8 PEM; with ``key_id``, a first line
    ``cpsettle-key-id: ID`` keeps the id with the key (text before a PEM block is outside it:
    OpenSSL and cryptography read the block alone)."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    if key_id:
        if not re.fullmatch(r"[\x21-\x7e]{1,128}", key_id):
            raise KeyProblem("a key id is 1 to 128 printable ASCII characters, no spaces")
        pem = f"{KEY_ID_LINE}{key_id}\n".encode() + pem
    return pem


def kept_key_id(data: bytes) -> str:
    """The key id a key file keeps (its ``cpsettle-key-id:`` line), "" when none."""
    for line in data.split(b"-----BEGIN", 1)[0].decode("utf-8", "replace").splitlines():
        if line.startswith(KEY_ID_LINE):
            return line[len(KEY_ID_LINE) :].strip()
    return ""


def load_signing_key(settings: Settings) -> SigningKey | None:
    """The signing key from ``CPSETTLE_SIGNING_KEY_FILE`` (a mounted Secret), or None.

    ``CPSETTLE_SIGNING_KEY`` (the PEM text itself in the environment) is for development only:
    environment text leaks into process listings, crash reports and ``kubectl describe``, so it
    is refused whenever ``CPSETTLE_REQUIRE_SIGNING_KEY`` is set (production).
    """
    if settings.signing_key and settings.require_signing_key:
        raise KeyProblem(
            "CPSETTLE_SIGNING_KEY (key text in the environment) is refused when "
            "CPSETTLE_REQUIRE_SIGNING_KEY is set: mount the key as a file and "
            "name it in CPSETTLE_SIGNING_KEY_FILE"
        )
    data = b""
    where = "the key"
    if settings.signing_key_file:
        path = Path(settings.signing_key_file)
        where = f"CPSETTLE_SIGNING_KEY_FILE ({path})"
        if path.exists():
            exposed = key_file_exposed(settings)
            if exposed and settings.require_signing_key:  # production: refused (DECISIONS.md)
                raise KeyProblem(exposed)
            data = path.read_bytes()
    if not data.strip() and settings.signing_key:
        data, where = settings.signing_key.encode("utf-8"), "CPSETTLE_SIGNING_KEY"
    if not data.strip():
        if settings.require_signing_key:
            raise KeyProblem(
                "CPSETTLE_REQUIRE_SIGNING_KEY is set but no key was found "
                "(CPSETTLE_SIGNING_KEY_FILE)"
            )
        return None
    kept = kept_key_id(data)
    if kept and settings.signing_key_id and kept != settings.signing_key_id:
        raise KeyProblem(
            f"{where} keeps key id {kept!r}, CPSETTLE_SIGNING_KEY_ID says "
            f"{settings.signing_key_id!r}: one id per key"
        )
    return signing_key_from_pem(data, settings.signing_key_id or kept, where)


@dataclass(frozen=True)
class KeySet:
    """Public keys by id, and the one a replica signs with now ("" = none)."""

    keys: tuple[PublicKey, ...] = ()
    current_key_id: str = ""

    def get(self, key_id: str) -> PublicKey | None:
        return next((k for k in self.keys if k.key_id == key_id), None)

    def with_current(self, key: SigningKey) -> KeySet:
        """This set with ``key`` as the current key (its window kept from the set if listed)."""
        listed = self.get(key.key_id)
        if listed is not None and listed.raw != key.public.raw:
            raise KeyProblem(
                f"the key set lists key id {key.key_id!r} with another public key "
                "than the signing key's"
            )
        mine = listed or key.public
        return KeySet((*(k for k in self.keys if k.key_id != key.key_id), mine), key.key_id)

    def to_proto(self) -> pb.GetVerificationKeysResponse:
        out = pb.GetVerificationKeysResponse(current_key_id=self.current_key_id)
        for k in self.keys:
            k.to_proto(out.keys.add())
        return out

    def to_json(self) -> str:
        from google.protobuf import json_format

        # every field, as the CLI prints the key set it gets from a server (an absent notBefore
        # or notAfter: no bound)
        return (
            json.dumps(
                json_format.MessageToDict(
                    self.to_proto(), always_print_fields_with_no_presence=True
                ),
                indent=2,
            )
            + "\n"
        )

    @classmethod
    def from_proto(cls, message: pb.GetVerificationKeysResponse, where: str = "key set") -> KeySet:
        problems: list[str] = []
        keys: list[PublicKey] = []
        seen: set[str] = set()
        for i, k in enumerate(message.keys):
            at = f"{where}: keys[{i}]"
            before = len(problems)
            if not k.key_id:
                problems.append(f"{at}.keyId is empty")
            if k.key_id in seen:
                problems.append(f"{at}.keyId {k.key_id!r} is listed twice")
            seen.add(k.key_id)
            if k.algorithm != pb.SIGNATURE_ALGORITHM_ED25519:
                got = (
                    pb.SignatureAlgorithm.Name(k.algorithm)
                    if k.algorithm in (pb.SignatureAlgorithm.values())
                    else str(k.algorithm)
                )
                problems.append(f"{at}.algorithm must be SIGNATURE_ALGORITHM_ED25519, got {got}")
            if not _HEX64.fullmatch(k.public_key):
                problems.append(f"{at}.publicKey must be 64 lowercase hex digits")
            window = []
            for name in ("not_before", "not_after"):
                try:
                    window.append(timestamp_text(getattr(k, name), k.HasField(name)))
                except TimeProblem as e:
                    json_name = "notBefore" if name == "not_before" else "notAfter"
                    problems.append(
                        f"{at}.{json_name} must be a time in whole milliseconds "
                        f"like 2026-11-30T09:31:02.123Z: {e}"
                    )
            if len(problems) == before:
                keys.append(PublicKey(k.key_id, bytes.fromhex(k.public_key), *window))
        if problems:
            raise KeyProblem("; ".join(problems))
        return cls(tuple(keys), message.current_key_id)

    @classmethod
    def from_json_bytes(cls, data: bytes, where: str = "key set") -> KeySet:
        from google.protobuf import json_format

        try:
            message = json_format.Parse(data.decode("utf-8"), pb.GetVerificationKeysResponse())
        except (json_format.ParseError, UnicodeDecodeError) as e:
            raise KeyProblem(
                f'{where} is not a key set (docs/AUDIT.md, "Keys"): ' + " ".join(str(e).split())
            ) from None
        return cls.from_proto(message, where)

    @classmethod
    def from_file(cls, path: str | Path) -> KeySet:
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise KeyProblem(f"cannot read the key set {path}: {e.strerror or e}") from None
        return cls.from_json_bytes(data, str(path))


def published_keys(settings: Settings, key: SigningKey | None) -> KeySet:
    """What ``GetVerificationKeys`` answers: the retired keys configured in
    ``CPSETTLE_VERIFICATION_KEYS_FILE`` and the signing key, marked current."""
    keys = (
        KeySet.from_file(settings.verification_keys_file)
        if settings.verification_keys_file
        else KeySet()
    )
    keys = replace(keys, current_key_id="")
    return keys.with_current(key) if key is not None else keys
