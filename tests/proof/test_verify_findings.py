"""What ``verify`` says about a stored settlement, word for word: each finding's field, its
detail (the values it names come from the vector or are worked out here from docs/AUDIT.md's
formulas, never through our functions) and whether the check could run at all.

The vectors (tests/vectors) say *which* checks fail; these tests hold the sentences an auditor
reads, the order of the checks, and the cases the vectors leave out: a settlement resealed here
with the legacy (v1) id, an unknown algorithm, empty fields.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.proof import load_settlement
from cpsettle_service.proof.keys import KeySet
from cpsettle_service.proof.verify import Finding, verify
from tests.conftest import ROOT
from tests.proof.test_known_answers import issued_at_text, settlement_digest, signed_text
from tests.support.fixed_keys import fixed_test_key

VECTORS = ROOT / "tests" / "vectors"
KEYS = KeySet.from_file(VECTORS / "keys.json")
KEY_ID = "test-key-1"


def _private() -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(fixed_test_key(1), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def vector(name: str) -> tuple[pb.Settlement, dict[str, Any]]:
    v = json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))
    s = load_settlement(json.dumps(v["settlement"], ensure_ascii=False).encode())
    return s, v["expected"]


def issued_at(s: pb.Settlement) -> str:
    """The time of issue as the signature covers it; "" when the field is absent."""
    if not s.HasField("issued_at"):
        return ""
    return issued_at_text(s.issued_at.seconds, s.issued_at.nanos)


def reseal(s: pb.Settlement) -> None:
    """Digest and signature made again over ``s`` as it now is, by the doc's formulas."""
    s.settlement_digest = settlement_digest(s)
    s.signature.value = (
        _private().sign(signed_text(s.settlement_digest, issued_at(s), s.signature.key_id)).hex()
    )


def findings(s: pb.Settlement, keys: KeySet | None = KEYS) -> list[tuple[str, str, bool]]:
    return [(f.what, f.detail, f.checked) for f in verify(s, keys)]


def test_a_valid_settlement_has_no_findings_and_without_keys_one_unchecked() -> None:
    s, _ = vector("valid-western")
    assert findings(s) == []
    assert findings(s, None) == [
        ("signature", f"NOT checked: no public keys given (key id {KEY_ID!r})", False)
    ]
    assert str(Finding("a", "b")) == "a: b"


def test_a_changed_amount_names_the_digest_it_should_have() -> None:
    s, e = vector("tampered-net-money")
    assert findings(s) == [
        (
            "settlement_digest",
            f"is {s.settlement_digest}, the content gives {e['settlementDigest']}",
            True,
        ),
        ("signature", "does not match the settlement's content", True),
    ]


def test_a_changed_request_digest_names_the_id_it_should_have() -> None:
    s, e = vector("tampered-request-digest-resigned")
    assert findings(s)[0] == (
        "settlement_id",
        f"is {s.settlement_id}, the request/profile/engine digests give {e['settlementId']}",
        True,
    )


def test_empty_fields_are_named_empty() -> None:
    s, e = vector("valid-western")
    s.settlement_id = ""
    s.settlement_digest = ""
    got = findings(s)
    assert got[0] == (
        "settlement_id",
        f"is (empty), the request/profile/engine digests give {e['settlementId']}",
        True,
    )
    assert got[1][:2] == (
        "settlement_digest",
        f"is (empty), the content gives {settlement_digest(s)}",
    )
    s, _ = vector("valid-western")
    s.ClearField("issued_at")
    reseal(s)  # a valid signature over no time at all: outside the key's window all the same
    window = KEYS.get(KEY_ID).window()  # type: ignore[union-attr]
    assert findings(s) == [
        (
            "signature.key_window",
            f"issued at (absent), outside key {KEY_ID!r}'s validity {window}",
            True,
        )
    ]


def test_a_settlement_id_of_format_v1_is_still_accepted() -> None:
    """Ids issued before the engine digest was part of them (docs/VERSIONING.md): SHA-256 of
    ``"cpsettle-settlement-id/v1\\n" + requestDigest + "\\n" + profileDigest + "\\n" +
    engineVersion``; any other id is refused."""
    s, _ = vector("valid-western")
    text = f"cpsettle-settlement-id/v1\n{s.request_digest}\n{s.profile.digest}\n{s.engine_version}"
    s.settlement_id = hashlib.sha256(text.encode("utf-8")).hexdigest()
    reseal(s)
    assert findings(s) == []
    s.settlement_id = hashlib.sha256((text + "\n").encode("utf-8")).hexdigest()
    reseal(s)
    assert [f[0] for f in findings(s)] == ["settlement_id"]


def test_unsigned_and_unknown_algorithms() -> None:
    s, _ = vector("tampered-unsigned")
    assert findings(s) == [("signature", "the settlement is unsigned", True)]
    assert findings(s, None) == [("signature", "the settlement is unsigned", False)]
    s.signature.algorithm = pb.SIGNATURE_ALGORITHM_UNSPECIFIED
    assert findings(s) == [("signature", "the settlement is unsigned", True)]
    s, _ = vector("valid-western")
    s.signature.algorithm = 99  # type: ignore[assignment]  # an open enum: a future algorithm
    s.settlement_digest = settlement_digest(s)
    assert findings(s) == [("signature", "unknown algorithm 99", True)]
    assert findings(s, None) == [("signature", "unknown algorithm 99", True)]


def test_an_unknown_key_and_a_key_outside_its_window() -> None:
    s, _ = vector("tampered-unknown-key-id")
    assert findings(s) == [
        ("signature.key_id", f"no key {s.signature.key_id!r} in the key set", True)
    ]
    s, _ = vector("invalid-outside-key-window")
    key = KEYS.get(s.signature.key_id)
    assert key is not None
    assert findings(s) == [
        (
            "signature.key_window",
            f"issued at {issued_at(s)}, outside key "
            f"{s.signature.key_id!r}'s validity {key.window()}",
            True,
        )
    ]
