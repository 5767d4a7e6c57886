"""Writes the proof test vectors (tests/vectors/*.json, keys.json) from the real engine.

    python tests/vectors/generate.py [OUT_DIR]     (default: this folder)

Every settlement is signed with the fixed TEST keys of tests/support/fixed_keys.py — NEVER FOR
PRODUCTION: their seeds are public sentences. ``issuedAt`` is fixed (on a whole second, so its
JSON form ``2026-12-01T12:00:00Z`` has no fraction and its signed text does), and Ed25519 signatures
are deterministic, so the same engine writes the same files. (The engine's digest changes
with its code, so vectors written by a later engine differ in ``engineDigest``; the committed
ones stay valid proofs of the settlements they hold, which is what they test.)

Each vector: ``settlement`` (the JSON a client stores, ``cpsettle settle --output json``'s
settlement), and ``expected``: ``contentHex`` (the canonical content bytes the settlement
digest is taken over, docs/AUDIT.md), ``settlementDigest`` and ``settlementId`` as recomputed
from the content (not as stored), the ``verdict`` (``valid`` / ``invalid``) under keys.json,
and ``failures``: the checks that fail, by code (docs/AUDIT.md, "Verifying a settlement").
"""

from __future__ import annotations

import copy
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for sub in ("service", "proto", "clients/python", "."):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import request_from_json
from cpsettle_service.api.servicer import ProfileResolver, SettlementServicer
from cpsettle_service.profile_files import builtin_registry
from cpsettle_service.proof.digests import content_bytes, settlement_id, sha256_hex, signed_bytes
from cpsettle_service.proof.keys import KeySet, PublicKey, signing_key_from_pem
from cpsettle_service.proof.seal import Sealer
from cpsettle_service.proof.times import millis_of_text, timestamp_text
from tests.support.fixed_keys import fixed_test_key
from tests.support.random_tables import random_table

ISSUED_AT = "2026-12-01T12:00:00.000Z"
KEY = signing_key_from_pem(fixed_test_key(1), "test-key-1")
OLD = signing_key_from_pem(fixed_test_key(3), "test-key-retired")
# The retired key's window closed before ISSUED_AT: what it signs "then" is outside it.
KEYS = KeySet(
    (
        PublicKey(
            OLD.key_id, OLD.public.raw, "2025-01-01T00:00:00.000Z", "2025-12-31T23:59:59.999Z"
        ),
        PublicKey(KEY.key_id, KEY.public.raw, "2026-01-01T00:00:00.000Z", ""),
    ),
    KEY.key_id,
)


# The engine digest the vectors were first sealed under (it changes with every change of the
# engine's code, and the settlement id covers it): kept, so that regenerating the vectors after a
# change keeps every id, and a vector's digests change only where its content did.
ENGINE_DIGEST = "dfa33949f054d363ec07f6e6e22c09cd034f2f7d1b727c8f6d9b484305e1ffb0"


def _servicer(key: Any) -> SettlementServicer:
    sealer = Sealer(key, clock=lambda: millis_of_text(ISSUED_AT))
    sealer.engine_digest = ENGINE_DIGEST
    return SettlementServicer(ProfileResolver(builtin_registry()), sealer)


def settle(request: dict[str, Any], key: Any = KEY) -> pb.Settlement:
    return _servicer(key).settle_response(request_from_json(request)).settlement


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "examples" / "tables" / f"{name}.json").read_text())
    return data


def requests() -> dict[str, dict[str, Any]]:
    """The valid settlements' requests: between them every field of ``Settlement`` is set."""
    out = {
        f"valid-{name}": example(name)
        for name in ("one-six", "western", "ofc", "shisanshui", "two-four")
    }
    two = example("one-six")
    two.update(handId="two-players", players=two["players"][:2])
    out["valid-two-players"] = two
    rng = random.Random(14)
    capped = random_table(rng, 4, preset="western", stacks=True, surrender_rate=0.3)
    capped["handId"] = "capped-1"
    out["valid-stacks-caps-surrender"] = capped
    fouled = random_table(random.Random(7), 3, preset="one-six", legal=False)
    fouled["handId"] = "fouled-1"
    out["valid-fouled"] = fouled
    text = example("one-six")
    text.update(
        handId='手-1 «ünïcödé» "quoted" \\ 🂡', tableId="table\tone", roundId="", dealerId="D/07"
    )
    out["valid-unicode-and-escapes"] = text
    big = example("one-six")
    big.update(handId="big-money", unitValue="1000000000000")  # the largest stake allowed
    out["valid-largest-unit-value"] = big
    for case, name in (
        ("224-shisanshui-4p-natural-vs-foul-natural-units", "valid-natural"),
        ("204-western-4p-surrenders-foul-natural", "valid-surrenders"),
        ("404-ofc-joker-front-queens-royalty-fantasyland", "valid-jokers"),
        # what the sentences say beyond the rest (issue 29): a tie broken by
        # suit, two naturals compared card by card, a natural's jokers, a
        # Fantasyland stay
        ("107-one-two-row-tie-suit-default", "valid-suit-tie"),
        ("403-shisanshui-equal-naturals-compare-cards", "valid-naturals-compared"),
        ("406-shisanshui-two-jokers-dragon-and-fouled-joker-hand", "valid-natural-jokers"),
        ("118-ofc-fantasyland-stay-quads-not-kk", "valid-fantasyland-stay"),
    ):
        out[name] = json.loads((ROOT / "tests" / "golden" / "cases" / f"{case}.json").read_text())[
            "request"
        ]
    priced = example("western")  # a currency (KWD: 3 minor units) over the profile's JPY
    priced.update(
        handId="currency",
        currency="KWD",
        unitValue="1250",
        profileOverrides={"money": {"currency": "JPY"}},
    )
    out["valid-currency"] = priced
    raked = example("western")
    raked.update(
        handId="raked",
        profileOverrides={"rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 500}},
    )
    out["valid-rake"] = raked
    return out


def resign(s: pb.Settlement, key: Any = KEY) -> None:
    """Recompute the digest and signature of a changed settlement (a forger without the key
    can do the first, not the second)."""
    s.settlement_digest = sha256_hex(content_bytes(s))
    s.signature.key_id = key.key_id
    s.signature.value = key.sign(
        signed_bytes(s.settlement_digest, timestamp_text(s.issued_at), key.key_id)
    )


Change = Callable[[pb.Settlement], None]


def _tamper_cases(base: pb.Settlement) -> dict[str, tuple[str, Change, list[str]]]:
    def net(s: pb.Settlement) -> None:
        s.players[0].net_money += 100

    def net_and_digest(s: pb.Settlement) -> None:
        s.players[0].net_money += 100
        s.settlement_digest = sha256_hex(content_bytes(s))

    def issued(s: pb.Settlement) -> None:
        s.issued_at.nanos += 1_000_000  # one millisecond

    def currency(s: pb.Settlement) -> None:
        s.currency = "EUR"  # the same numbers, paid in another currency

    def currency_resealed(s: pb.Settlement) -> None:
        s.currency = "EUR"
        s.settlement_digest = sha256_hex(content_bytes(s))

    def sig_bit(s: pb.Settlement) -> None:
        v = s.signature.value
        s.signature.value = v[:10] + ("0" if v[10] != "0" else "1") + v[11:]

    def unknown_key(s: pb.Settlement) -> None:
        s.signature.key_id = "no-such-key"

    def other_key(s: pb.Settlement) -> None:  # signed by a key not in keys.json, same id
        stranger = signing_key_from_pem(fixed_test_key(2), KEY.key_id)
        s.signature.value = stranger.sign(
            signed_bytes(s.settlement_digest, timestamp_text(s.issued_at), KEY.key_id)
        )

    def request_digest(s: pb.Settlement) -> None:
        s.request_digest = "0" * 64
        resign(s)  # even re-signed by the real key, the id no longer follows

    def unsigned(s: pb.Settlement) -> None:
        s.signature.Clear()
        s.signature.algorithm = pb.SIGNATURE_ALGORITHM_NONE

    def row_card(s: pb.Settlement) -> None:
        row = s.players[0].rows[0]
        row.cards[0] = row.cards[0][::-1]  # "As" -> "sA": a spelling change only

    def empty_text(s: pb.Settlement) -> None:
        s.text.append("")  # one more (empty) repeated string: still changes the bytes

    return {
        "tampered-net-money": (
            "a player's net money raised by 100",
            net,
            ["settlement_digest", "signature"],
        ),
        "tampered-net-money-digest-recomputed": (
            "net money raised and the digest recomputed: only the signature can tell",
            net_and_digest,
            ["signature"],
        ),
        "tampered-issued-at": ("issuedAt moved by one millisecond", issued, ["signature"]),
        "tampered-currency": (
            "the currency changed from XXX to EUR",
            currency,
            ["settlement_digest", "signature"],
        ),
        "tampered-currency-digest-recomputed": (
            "the currency changed and the digest recomputed: only the signature can tell",
            currency_resealed,
            ["signature"],
        ),
        "tampered-signature-bit": (
            "one hex digit of the signature changed",
            sig_bit,
            ["signature"],
        ),
        "tampered-unknown-key-id": (
            "the key id names no published key",
            unknown_key,
            ["signature.key_id"],
        ),
        "tampered-signed-by-another-key": (
            "signed by a key that is not the published one",
            other_key,
            ["signature"],
        ),
        "tampered-request-digest-resigned": (
            (
                "requestDigest changed, then digest and signature redone with the real key: the "
                "settlement id gives it away"
            ),
            request_digest,
            ["settlement_id"],
        ),
        "tampered-unsigned": (
            "the signature block replaced by algorithm NONE",
            unsigned,
            ["signature"],
        ),
        "tampered-card-spelling": (
            "a card written backwards",
            row_card,
            ["settlement_digest", "signature"],
        ),
        "tampered-extra-empty-text": (
            "an empty string appended to text",
            empty_text,
            ["settlement_digest", "signature"],
        ),
    }


def expected(s: pb.Settlement, failures: list[str]) -> dict[str, Any]:
    content = content_bytes(s)
    return {
        "contentHex": content.hex(),
        "settlementDigest": sha256_hex(content),
        "settlementId": settlement_id(
            s.request_digest, s.profile.digest, s.engine_version, s.engine_digest
        ),
        "verdict": "invalid" if failures else "valid",
        "failures": failures,
    }


def vector(name: str, description: str, s: pb.Settlement, failures: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "settlement": json_format.MessageToDict(s),
        "expected": expected(s, failures),
    }


def build() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    settled = {name: settle(r) for name, r in requests().items()}
    for name, s in settled.items():
        out[name] = vector(name, f"as issued: {name[6:]}", s, [])
    base = settled["valid-two-players"]
    for name, (description, change, failures) in _tamper_cases(base).items():
        s = copy.deepcopy(base)
        change(s)
        out[name] = vector(name, description, s, failures)
    old = settle(requests()["valid-two-players"], OLD)
    out["invalid-outside-key-window"] = vector(
        "invalid-outside-key-window",
        "signed by the retired key after its window closed (keys.json: notAfter 2025-12-31)",
        old,
        ["signature.key_window"],
    )
    sub_ms = json_format.MessageToDict(base)
    sub_ms["issuedAt"] = "2026-12-01T12:00:00.000000001Z"
    out["invalid-issued-at-finer-than-a-millisecond"] = {
        "name": "invalid-issued-at-finer-than-a-millisecond",
        "description": "issuedAt one nanosecond past the signed time: no signed text can cover it",
        "settlement": sub_ms,
        "expected": {"verdict": "invalid", "failures": ["file"]},
    }
    out["invalid-not-a-settlement"] = {
        "name": "invalid-not-a-settlement",
        "description": "an unknown field: not a Settlement, nothing to digest",
        "settlement": {**json_format.MessageToDict(base), "bonusNote": "paid in cash"},
        "expected": {"verdict": "invalid", "failures": ["file"]},
    }
    return out


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    keys = folder / "keys.json"
    keys.write_text(KEYS.to_json())
    written.append(keys)
    for name, v in build().items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(v, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    for p in write(target):
        print(p)
