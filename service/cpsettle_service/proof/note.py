"""Signed notes, checkpoints and cosignatures: the C2SP formats the audit log's state travels in
(docs/AUDIT.md, "The verifiable log").

- ``signed-note`` (c2sp.org/signed-note): a text ending in a newline, a blank line, then one line
  per signature, ``"— " + key name + " " + base64(4-byte key id || signature)``. An Ed25519
  key's id is ``SHA-256(name || 0x0A || 0x01 || public key)[:4]``; its *verifier key* (vkey)
  is ``name + "+" + hex(key id) + "+" + base64(0x01 || public key)``.
- ``tlog-checkpoint`` (c2sp.org/tlog-checkpoint): the note text ``origin\\nsize\\nbase64(root)\\n``;
  a replica signs it with its settlement key under the key name ``origin``.
- ``tlog-cosignature`` (c2sp.org/tlog-cosignature, Ed25519): a witness signs ``"cosignature/v1\\n"
  + "time " + T + "\\n" + checkpoint text`` and writes ``base64(key id || u64 T || signature)``
  with the key id of type 0x04.

Known answers: golang.org/x/mod/sumdb/note's test key and note (tests/record/test_note.py).

>>> Checkpoint("example.com/log", 0, bytes(32)).text()
'example.com/log\\n0\\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\\n'
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import NoteError

__all__ = [
    "COSIGNATURE",
    "ED25519",
    "Checkpoint",
    "NoteError",
    "NoteKey",
    "Opened",
    "Signature",
    "cosign",
    "cosignature_message",
    "open_note",
    "sign",
    "split_note",
]

ED25519 = 0x01  # signed-note's Ed25519 signature type
COSIGNATURE = 0x04  # tlog-cosignature's timestamped Ed25519
DASH = "\u2014"
MAX_SIGNATURES = 64
_NAME = re.compile(r"[^\s+]+")
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,19}")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise NoteError(f"{what} is not base64") from None


@dataclass(frozen=True)
class NoteKey:
    """A public key as a note names it: its name, signature type and 32 raw bytes (and, for
    signing, the private half: never shown)."""

    name: str
    public: bytes
    kind: int = ED25519
    private: Ed25519PrivateKey | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise NoteError(f"key name {self.name!r} is empty or holds a space or a plus")
        if len(self.public) != 32:
            raise NoteError("an Ed25519 public key is 32 bytes")

    @property
    def key_id(self) -> bytes:
        return hashlib.sha256(
            self.name.encode() + b"\n" + bytes([self.kind]) + self.public
        ).digest()[:4]

    def vkey(self) -> str:
        return f"{self.name}+{self.key_id.hex()}+{_b64(bytes([self.kind]) + self.public)}"

    @classmethod
    def from_private(cls, name: str, private: Ed25519PrivateKey, kind: int = ED25519) -> NoteKey:
        raw = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return cls(name, raw, kind, private)

    @classmethod
    def from_vkey(cls, text: str) -> NoteKey:
        parts = text.strip().split("+", 2)
        if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            raise NoteError(f"not a verifier key (name+hex id+base64 key): {text[:80]!r}")
        material = _unb64(parts[2], "the verifier key")
        if len(material) != 33 or material[0] not in (ED25519, COSIGNATURE):
            raise NoteError("the verifier key is not an Ed25519 key (type 0x01 or 0x04)")
        key = cls(parts[0], material[1:], material[0])
        if key.key_id.hex() != parts[1]:
            raise NoteError("the verifier key's id does not match its name and key")
        return key

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class Signature:
    """One signature line: the key name, key id and the bytes after it."""

    name: str
    key_id: bytes
    value: bytes

    def line(self) -> str:
        return f"{DASH} {self.name} {_b64(self.key_id + self.value)}\n"


def split_note(note: str) -> tuple[str, list[Signature]]:
    """A signed note's text (with its final newline) and its signature lines, as written;
    NoteError when it is not a note (c2sp.org/signed-note)."""
    if any(ord(c) < 0x20 and c != "\n" for c in note):
        raise NoteError("a note holds no control characters but newlines")
    if not note.endswith("\n"):
        raise NoteError("a note ends with a newline")
    cut = note.rfind("\n\n")
    if cut < 0:
        raise NoteError("a note has a blank line before its signatures")
    text, lines = note[: cut + 1], note[cut + 2 :].split("\n")[:-1]
    if not lines:
        raise NoteError("a note has at least one signature")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"more than {MAX_SIGNATURES} signatures")
    sigs = []
    for line in lines:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != DASH or not _NAME.fullmatch(parts[1]):
            raise NoteError(f"not a signature line: {line[:80]!r}")
        raw = _unb64(parts[2], "a signature")
        if len(raw) < 5:
            raise NoteError("a signature is shorter than its key id")
        sigs.append(Signature(parts[1], raw[:4], raw[4:]))
    return text, sigs


def sign(text: str, key: NoteKey) -> str:
    """``text`` signed by ``key`` (Ed25519, type 0x01) as a whole note."""
    if key.private is None or key.kind != ED25519:
        raise NoteError("signing takes an Ed25519 private key")
    if not text.endswith("\n") or "\n\n" in text:
        raise NoteError("a note's text ends with a newline and holds no blank line")
    return (
        text + "\n" + Signature(key.name, key.key_id, key.private.sign(text.encode("utf-8"))).line()
    )


def cosignature_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def cosign(text: str, key: NoteKey, timestamp: int) -> Signature:
    """The tlog-cosignature (Ed25519, type 0x04) of a checkpoint's text at ``timestamp``."""
    if key.private is None or key.kind != COSIGNATURE:
        raise NoteError("cosigning takes a private key of type 0x04")
    if not 0 < timestamp < 1 << 63:
        raise NoteError("a cosignature's time is positive")
    value = struct.pack(">Q", timestamp) + key.private.sign(cosignature_message(text, timestamp))
    return Signature(key.name, key.key_id, value)


@dataclass(frozen=True)
class Opened:
    """A note whose signatures were checked: its text, the keys that verified it (with each
    cosignature's time), and the lines from keys not known."""

    text: str
    signed_by: dict[str, int]  # key name -> cosignature time (0 for a plain signature)
    unknown: list[Signature]


def open_note(note: str, keys: list[NoteKey]) -> Opened:
    """Check ``note``'s signatures against ``keys`` (c2sp.org/signed-note): a line whose name
    and id match a known key must verify (NoteError otherwise), other lines are ignored; at
    least one known key must have signed."""
    text, sigs = split_note(note)
    known = {(k.name, k.key_id): k for k in keys}
    signed: dict[str, int] = {}
    unknown: list[Signature] = []
    for s in sigs:
        key = known.get((s.name, s.key_id))
        if key is None:
            unknown.append(s)
            continue
        if key.kind == COSIGNATURE:
            if len(s.value) != 72:
                raise NoteError(f"the cosignature by {s.name} is not 8 + 64 bytes")
            (when,) = struct.unpack(">Q", s.value[:8])
            good = key.verify(cosignature_message(text, when), s.value[8:])
        else:
            when, good = 0, key.verify(text.encode("utf-8"), s.value)
        if not good:
            raise NoteError(f"the signature by {s.name} ({s.key_id.hex()}) does not verify")
        signed[s.name] = when
    if not signed:
        raise NoteError("no signature by a known key")
    return Opened(text, signed, unknown)


@dataclass(frozen=True)
class Checkpoint:
    """A log's state (c2sp.org/tlog-checkpoint): its origin, size and RFC 6962 root."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.origin, str(self.size), _b64(self.root), *self.extensions]
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not x for x in lines[:-1]):
            raise NoteError("a checkpoint is at least three non-empty lines")
        origin, size, root = lines[0], lines[1], lines[2]
        if not _DECIMAL.fullmatch(size) or int(size) >= 1 << 63:
            raise NoteError(f"a checkpoint's size is a decimal without leading zeros: {size!r}")
        raw = _unb64(root, "a checkpoint's root")
        if len(raw) != 32:
            raise NoteError("a checkpoint's root is 32 bytes")
        return cls(origin, int(size), raw, tuple(lines[3:-1]))
