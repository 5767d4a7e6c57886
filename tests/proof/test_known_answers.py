"""Known-answer tests for the proof formulas of docs/AUDIT.md.

Issuer and verifier share the project's audit functions, so a change there (say, the inputs of
the settlement-id digest swapped) moves both and every round-trip test still passes. Here each
formula is written once more, from the TEXT of docs/AUDIT.md, with hashlib and the Ed25519 of
``cryptography`` only — never through the project's functions — and the answers of a real
server (in process, on a unix socket, with a signing key, called through the project's client)
must equal what these give.

Each formula is one small function below, next to the sentence of the doc it transcribes (a test
checks that sentence is still in the doc, word for word). When the doc changes a formula, change
its function and its quote together.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient
from cpsettle_service.api import mapping
from cpsettle_service.domain.profile import presets
from tests.conftest import ROOT, ServerHandle, start_server, stop_server

AUDIT_DOC = ROOT / "docs" / "AUDIT.md"
PRESETS = Path(presets.__file__).parent  # the preset data files: the profile JSON form
KEY_ID = "kat-key-1"
# A fixed Ed25519 test key (never for production): pure Ed25519 signatures are deterministic
# (RFC 8032), so the expected signature is a known answer too.
PRIVATE = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"cpsettle known answers").digest())
PRIVATE_PEM = PRIVATE.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode("ascii")
PUBLIC_HEX = (
    PRIVATE.public_key()
    .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    .hex()
)


# --------------------------------------------------------------------------- the formulas
# Each: the doc's words (QUOTE_*), and the formula written from them.

QUOTE_SHA256 = "SHA-256 (lowercase hex, as every digest here)"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


QUOTE_REQUEST_DIGEST = (
    "SHA-256 (lowercase hex, as every digest here) of the request's bytes as the service encoded "
    "them — exactly the bytes the `settlement.issued` log event carries in `request` (base64), so "
    "any language checks it against the log without a protobuf library. (Those bytes are the "
    "`SettleRequest` written by the rule of the content bytes, with the request's own kinds and "
    "field table"
)


def request_digest(request: pb.SettleRequest) -> str:
    """The rule's bytes are the deterministic protobuf binary serialization of the service's
    runtime (upb); tests/proof/test_digest_vectors.py writes them from the rule itself."""
    return sha256_hex(request.SerializeToString(deterministic=True))


QUOTE_PROFILE_DIGEST = (
    "as canonical JSON: sorted keys, separators `,` and `:`, UTF-8, no escaping of non-ASCII. "
    "Digest format **v2**: the table's stake is not part of the profile"
)


def resolved_profile_json(profile_json: dict[str, Any]) -> dict[str, Any]:
    """The profile JSON form as resolved (digest format v2): the table's stake (the request's
    ``unitValue``) is not folded in; ``money.unitValue`` stays the house default."""
    return copy.deepcopy(profile_json)


def profile_digest(resolved: dict[str, Any]) -> str:
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(text.encode("utf-8"))


QUOTE_ENGINE_VERSION = "`cpsettle-engine/<package version>`"


def engine_version() -> str:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    return f"cpsettle-engine/{version}"


QUOTE_SETTLEMENT_ID = (
    'SHA-256 of the UTF-8 text `"cpsettle-settlement-id/v2\\n" + requestDigest + "\\n" + '
    'profile.digest + "\\n" + engineVersion + "\\n" + engineDigest`'
)


def settlement_id(
    request_digest: str, profile_digest: str, engine_version: str, engine_digest: str
) -> str:
    text = (
        "cpsettle-settlement-id/v2\n"
        + request_digest
        + "\n"
        + profile_digest
        + "\n"
        + engine_version
        + "\n"
        + engine_digest
    )
    return sha256_hex(text.encode("utf-8"))


QUOTE_SETTLEMENT_DIGEST = (
    "SHA-256 of the settlement's **content bytes** (the canonical encoding below): every field "
    "except `settlementDigest`, `issuedAt` and `signature`"
)
QUOTE_CONTENT_BYTES = "what protobuf's deterministic serializer produces for these messages"


def settlement_digest(settlement: pb.Settlement) -> str:
    content = pb.Settlement()
    content.CopyFrom(settlement)
    content.settlement_digest = ""
    content.ClearField("issued_at")
    content.ClearField("signature")
    return sha256_hex(content.SerializeToString(deterministic=True))


QUOTE_CURRENCY_IN_CONTENT = (
    "field 17\n(`currency`) is inside it, so in the content bytes it follows field 13 "
    "(`engineDigest`)"
)
QUOTE_ISSUED_AT = (
    "it means the time's **signed text**: RFC 3339 in UTC with exactly three fraction digits "
    "(milliseconds), fixed width: `2026-11-30T09:31:02.123Z`"
)
QUOTE_ISSUED_AT_BINARY = (
    "From the binary form (seconds and nanos since 1970-01-01T00:00:00Z): that instant, with "
    "`nanos / 1000000` as the three digits"
)


def issued_at_text(seconds: int, nanos: int) -> str:
    instant = datetime.fromtimestamp(seconds, UTC)
    return instant.strftime("%Y-%m-%dT%H:%M:%S") + "." + str(nanos // 1000000).zfill(3) + "Z"


QUOTE_SIGNATURE = (
    "`value` = the 64-byte Ed25519 signature (RFC 8032, pure Ed25519) as 128 lowercase hex "
    'digits, over the UTF-8 text `"cpsettle-signature/v1\\n" + settlementDigest + "\\n" + '
    'issuedAt + "\\n" + keyId`'
)
QUOTE_SIGNATURE_ALGORITHM = "`algorithm` `Ed25519`"


def signed_text(settlement_digest: str, issued_at: str, key_id: str) -> bytes:
    text = "cpsettle-signature/v1\n" + settlement_digest + "\n" + issued_at + "\n" + key_id
    return text.encode("utf-8")


def signature(key: Ed25519PrivateKey, settlement_digest: str, issued_at: str, key_id: str) -> str:
    return key.sign(signed_text(settlement_digest, issued_at, key_id)).hex()


QUOTES = [
    QUOTE_SHA256,
    QUOTE_REQUEST_DIGEST,
    QUOTE_PROFILE_DIGEST,
    QUOTE_ENGINE_VERSION,
    QUOTE_SETTLEMENT_ID,
    QUOTE_SETTLEMENT_DIGEST,
    QUOTE_CONTENT_BYTES,
    QUOTE_SIGNATURE,
    QUOTE_SIGNATURE_ALGORITHM,
    QUOTE_CURRENCY_IN_CONTENT,
    QUOTE_ISSUED_AT,
    QUOTE_ISSUED_AT_BINARY,
]


def test_each_formula_here_is_the_one_the_doc_states() -> None:
    doc = AUDIT_DOC.read_text("utf-8")
    missing = [q for q in QUOTES if q not in doc]
    assert missing == [], "docs/AUDIT.md changed a formula: update its function here too"


def test_the_formulas_themselves_on_fixed_inputs() -> None:
    """The formulas on fixed text, against digests worked out by hand from the doc's words
    (so a slip in a formula function above shows here, not only against the server)."""
    a, b, v, e = "a" * 64, "b" * 64, "cpsettle-engine/9.9.9", "e" * 64
    text = f"cpsettle-settlement-id/v2\n{a}\n{b}\n{v}\n{e}".encode()
    assert settlement_id(a, b, v, e) == hashlib.sha256(text).hexdigest()
    assert settlement_id(a, b, v, e) != settlement_id(b, a, v, e)
    assert settlement_id(a, b, v, e) != settlement_id(a, b, v, "f" * 64)
    assert (
        profile_digest({"b": "é", "a": [1, 2]})
        == hashlib.sha256('{"a":[1,2],"b":"é"}'.encode()).hexdigest()
    )
    text = f"cpsettle-signature/v1\n{a}\n2026-11-30T09:31:02.123Z\nk1".encode()
    value = signature(PRIVATE, a, "2026-11-30T09:31:02.123Z", "k1")
    assert len(value) == 128 and value == value.lower()
    PRIVATE.public_key().verify(bytes.fromhex(value), text)  # raises if it is not over `text`
    # the signed text of a time: three fraction digits, a whole second too
    assert issued_at_text(1796031062, 123000000) == "2026-11-30T09:31:02.123Z"
    assert issued_at_text(1796031062, 0) == "2026-11-30T09:31:02.000Z"
    # the currency (field 17, tag 17*8+2 = 138 = varint 8a 01) right after engineDigest (13)
    s = pb.Settlement(engine_digest="e", settlement_digest="d", currency="EUR")
    s.issued_at.seconds = 1796031062
    content = pb.Settlement()
    content.CopyFrom(s)
    content.settlement_digest = ""
    content.ClearField("issued_at")
    want = bytes.fromhex("6a01658a0103") + b"EUR"  # 13: "e", then 17: "EUR"
    assert content.SerializeToString(deterministic=True) == want
    assert settlement_digest(s) == sha256_hex(want)


# --------------------------------------------------------------------------- fixed inputs


def _request(**extra: Any) -> dict[str, Any]:
    return {
        "handId": "kat-1",
        "tableId": "table-kat",
        "roundId": "r-9",
        "dealerId": "dealer-ß",
        "players": [
            {
                "playerId": "north",
                "seat": 1,
                "arrangement": {
                    "front": ["As", "Ad", "2c"],
                    "middle": ["3c", "3d", "4h", "4s", "5c"],
                    "back": ["6s", "7s", "8s", "9s", "Js"],
                },
            },
            {
                "playerId": "south",
                "seat": 2,
                "arrangement": {
                    "front": ["Kc", "Kd", "2d"],
                    "middle": ["6h", "6d", "6c", "2h", "2s"],
                    "back": ["Th", "Jh", "Qh", "Kh", "9h"],
                },
            },
        ],
        **extra,
    }


def preset_json(name: str) -> dict[str, Any]:
    """A preset's profile JSON form: its data file."""
    data = json.loads((PRESETS / f"{name}.json").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def inline_profile(currency: str = "") -> dict[str, Any]:
    profile = preset_json("ofc")
    profile["name"] = "house-kat"
    profile["description"] = "Maison — règles d'essai (non-ASCII kept as is)"
    if currency:
        profile["money"]["currency"] = currency
    return profile


# (request JSON, the resolved profile JSON form the doc's profile digest is taken over)
TABLES = {
    "preset-with-stake": (
        _request(preset="western", unitValue=25),
        resolved_profile_json(preset_json("western")),
    ),
    "preset-default-stake": (
        _request(preset="eastern"),
        resolved_profile_json(preset_json("eastern")),
    ),
    "inline-non-ascii": (
        _request(profile=inline_profile(), unitValue=7),
        resolved_profile_json(inline_profile()),
    ),
    # a profile in yen, the table in euros: the request's currency is the settlement's
    "inline-currency": (
        _request(profile=inline_profile("JPY"), currency="EUR"),
        resolved_profile_json(inline_profile("JPY")),
    ),
}


@pytest.fixture(scope="module")
def signing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    handle = start_server(
        tmp_path_factory.mktemp("kat") / "kat.sock", signing_key=PRIVATE_PEM, signing_key_id=KEY_ID
    )
    yield handle
    stop_server(handle)


@pytest.fixture()
def signed_client(signing_server: ServerHandle) -> Iterator[SettlementClient]:
    with SettlementClient(signing_server.address, timeout=10) as c:
        yield c


def settle(client: SettlementClient, name: str) -> tuple[pb.SettleRequest, pb.Settlement]:
    request = json_format.ParseDict(TABLES[name][0], pb.SettleRequest())
    return request, client.settle(request).settlement


@pytest.mark.parametrize("name", sorted(TABLES))
def test_served_proofs_equal_the_doc_formulas(name: str, signed_client: SettlementClient) -> None:
    request, s = settle(signed_client, name)
    want_request = request_digest(request)
    want_profile = profile_digest(TABLES[name][1])
    want_engine = engine_version()
    assert s.request_digest == want_request
    assert s.profile.digest == want_profile
    assert s.engine_version == want_engine
    # the stake is the table's (digest format v2): on the settlement, under its digest
    assert s.unit_value == TABLES[name][0].get("unitValue", TABLES[name][1]["money"]["unitValue"])
    assert s.settlement_id == settlement_id(
        want_request, want_profile, want_engine, s.engine_digest
    )
    want_digest = settlement_digest(s)
    assert s.settlement_digest == want_digest
    assert s.signature.algorithm == pb.SIGNATURE_ALGORITHM_ED25519
    assert s.signature.key_id == KEY_ID
    want_issued = issued_at_text(s.issued_at.seconds, s.issued_at.nanos)
    assert s.issued_at.nanos % 1000000 == 0  # whole milliseconds
    assert s.signature.value == signature(PRIVATE, want_digest, want_issued, KEY_ID)
    # the currency: the request's, else the profile's, else XXX; under the digest
    assert s.currency == (
        TABLES[name][0].get("currency") or TABLES[name][1]["money"].get("currency", "XXX")
    )
    other = pb.Settlement()
    other.CopyFrom(s)
    other.currency = "USD" if s.currency != "USD" else "EUR"
    assert settlement_digest(other) != want_digest


def test_the_profile_digest_is_the_one_the_server_lists(signed_client: SettlementClient) -> None:
    for name in ("western", "ofc", "one-six"):
        summary = signed_client.get_profile(name).summary
        assert summary.digest == profile_digest(resolved_profile_json(preset_json(name)))


def test_the_id_depends_on_what_the_doc_says_and_nothing_else(
    signed_client: SettlementClient,
) -> None:
    """Same request twice: same id (issuedAt is outside it); another stake: another id."""
    _, first = settle(signed_client, "preset-with-stake")
    _, again = settle(signed_client, "preset-with-stake")
    assert first.settlement_id == again.settlement_id
    assert first.settlement_digest == again.settlement_digest
    _, other = settle(signed_client, "preset-default-stake")
    assert other.settlement_id != first.settlement_id


# The audit event names a cap as the engine does ("PAYER_STACK+PAYEE_STACK"), the settlement by
# its enum value (CAP_BOTH_STACKS)
CAP_NAMES = {number: name for name, number in mapping.CAP.items()}


def _verify(capsys: pytest.CaptureFixture[str], tmp_path: Path, s: pb.Settlement) -> int:
    stored = tmp_path / "settlement.json"
    stored.write_text(json_format.MessageToJson(pb.SettleResponse(settlement=s)), "utf-8")
    keys = tmp_path / "keys.json"
    keys.write_text(
        json.dumps(
            {
                "keys": [
                    {
                        "keyId": KEY_ID,
                        "algorithm": "SIGNATURE_ALGORITHM_ED25519",
                        "publicKey": PUBLIC_HEX,
                    },
                ]
            }
        ),
        "utf-8",
    )
    code = main(["verify", str(stored), "--keys", str(keys)])
    capsys.readouterr()
    return code


def test_the_verifier_follows_the_doc_formulas(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, signed_client: SettlementClient
) -> None:
    """``cpsettle verify`` accepts a settlement whose proofs were made here from the doc's
    formulas, and refuses one whose id was made with the inputs in another order."""
    _, s = settle(signed_client, "preset-with-stake")
    assert _verify(capsys, tmp_path, s) == 0
    # A settlement sealed by the doc's formulas alone (another issue time, so another signature).
    s.issued_at.seconds, s.issued_at.nanos = 1925089445, 678000000  # 2031-01-02T03:04:05.678Z
    s.settlement_digest = settlement_digest(s)
    s.signature.value = signature(PRIVATE, s.settlement_digest, "2031-01-02T03:04:05.678Z", KEY_ID)
    assert _verify(capsys, tmp_path, s) == 0
    # a currency changed and the digest recomputed: the signature gives it away
    paid = pb.Settlement()
    paid.CopyFrom(s)
    paid.currency = "EUR"
    paid.settlement_digest = settlement_digest(paid)
    assert _verify(capsys, tmp_path, paid) == 1
    # The id with its inputs swapped, resealed consistently: the verifier must refuse it.
    s.settlement_id = settlement_id(
        s.profile.digest, s.request_digest, s.engine_version, s.engine_digest
    )
    s.settlement_digest = settlement_digest(s)
    s.signature.value = signature(PRIVATE, s.settlement_digest, "2031-01-02T03:04:05.678Z", KEY_ID)
    assert _verify(capsys, tmp_path, s) == 1


def test_an_unsigned_settlement_carries_the_same_proofs_and_says_none(
    client: SettlementClient,
) -> None:
    """The suite's server has no key: the digests and the id are the doc's all the same, and
    the signature is ``NONE`` with no key id and no value."""
    request, _ = TABLES["preset-with-stake"]
    message = json_format.ParseDict(request, pb.SettleRequest())
    s = client.settle(message).settlement
    want_request = request_digest(message)
    assert s.settlement_id == settlement_id(
        want_request,
        profile_digest(TABLES["preset-with-stake"][1]),
        engine_version(),
        s.engine_digest,
    )
    assert s.settlement_digest == settlement_digest(s)
    assert (s.signature.algorithm, s.signature.key_id, s.signature.value) == (
        pb.SIGNATURE_ALGORITHM_NONE,
        "",
        "",
    )


def test_the_request_digest_is_over_the_canonical_encoding_whatever_the_key_order(
    signed_client: SettlementClient,
) -> None:
    """Overrides are a protobuf ``Struct`` (a map): the digest is over the deterministic
    encoding, so the same overrides sent in another key order give the same digest and id."""
    overrides: dict[str, dict[str, Any]] = {
        "scoring": {"scoopBonus": 4, "rowUnit": 2, "majorityBonus": 1},
        "rake": {"mode": "RAKE_MODE_COMMISSION", "commissionCap": 500, "commissionBps": 250},
        "caps": {"wins": False, "losses": True},
    }
    reordered = {k: dict(reversed(list(v.items()))) for k, v in reversed(overrides.items())}
    answers = []
    for o in (overrides, reordered):
        message = json_format.ParseDict(
            _request(preset="western", profileOverrides=o), pb.SettleRequest()
        )
        s = signed_client.settle(message).settlement
        assert s.request_digest == request_digest(message)
        answers.append(s)
    assert answers[0].request_digest == answers[1].request_digest
    assert answers[0].settlement_id == answers[1].settlement_id


def test_the_issued_event_carries_the_served_proofs(
    signed_client: SettlementClient, logs: Any
) -> None:
    """``settlement.issued`` (docs/AUDIT.md, audit log events) names the same ids, digests and
    money as the settlement the caller got."""
    import base64

    request = _request(preset="western", unitValue=25, handId="kat-event")
    request["players"][0]["stack"] = 30  # north loses 2 x 25 = 50: a cap the event lists
    message = json_format.ParseDict(request, pb.SettleRequest())
    s = signed_client.settle(message).settlement
    events = [e for e in logs.events("settlement.issued") if e["hand_id"] == "kat-event"]
    assert len(events) == 1
    e = events[0]
    want = {
        "hand_id": "kat-event",
        "table_id": "table-kat",
        "round_id": "r-9",
        "dealer_id": "dealer-ß",
        "settlement_id": s.settlement_id,
        "settlement_digest": s.settlement_digest,
        "request_digest": request_digest(message),
        "profile": "western",
        "profile_version": s.profile.version,
        "profile_digest": s.profile.digest,
        "engine_version": engine_version(),
        "engine_digest": s.engine_digest,
        "issued_at": issued_at_text(s.issued_at.seconds, s.issued_at.nanos),
        "signed": True,
        "key_id": KEY_ID,
        "unit_value": 25,
        "currency": "XXX",
        "rake": s.rake,
        "nets": {p.player_id: p.net_money for p in s.players},
        "net_units": {p.player_id: p.net_units for p in s.players},
        "fouls": [p.player_id for p in s.players if p.fouled],
        "naturals": {p.player_id: p.natural for p in s.players if p.natural},
        "surrenders": [p.player_id for p in s.players if p.surrendered],
        "caps": [
            {
                "payer": pr.payer,
                "payee": pr.payee,
                "owed": pr.owed,
                "paid": pr.paid,
                "cap": CAP_NAMES[pr.cap],
            }
            for pr in s.pairs
            if pr.cap
        ],
    }
    assert {k: e.get(k) for k in want} == want
    assert want["caps"], "the table must hit a cap"
    assert pb.SettleRequest.FromString(base64.b64decode(e["request"])) == message
    assert base64.b64decode(e["request"]) == message.SerializeToString(deterministic=True)
