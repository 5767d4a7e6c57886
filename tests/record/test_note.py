"""Signed notes, checkpoints and cosignatures (proof/note.py): golang.org/x/mod/sumdb/note's
known answers, and every malformation refused."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cpsettle_service.proof.merkle import EMPTY_ROOT
from cpsettle_service.proof.note import (
    COSIGNATURE,
    Checkpoint,
    NoteError,
    NoteKey,
    cosign,
    open_note,
    sign,
    split_note,
)

# golang.org/x/mod/sumdb/note, note_test.go (TestSign, TestNewVerifier, TestOpen)
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_SIG = (
    "\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSN"
    "XgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG0"
    "1oOTGwnWLox33WWd1RvMc+QQ=\n"
)


def _peter() -> NoteKey:
    seed = base64.b64decode(PETER_SKEY.split("+", 4)[4])[1:]
    return NoteKey.from_private("PeterNeumann", Ed25519PrivateKey.from_private_bytes(seed))


def test_the_go_note_vector_signs_and_opens() -> None:
    peter = _peter()
    assert peter.vkey() == PETER_VKEY
    assert sign(TEXT, peter) == TEXT + "\n" + PETER_SIG
    opened = open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, [NoteKey.from_vkey(PETER_VKEY)])
    assert opened.text == TEXT and opened.signed_by == {"PeterNeumann": 0}
    assert [s.name for s in opened.unknown] == ["EnochRoot"]
    both = open_note(
        TEXT + "\n" + PETER_SIG + ENOCH_SIG,
        [NoteKey.from_vkey(PETER_VKEY), NoteKey.from_vkey(ENOCH_VKEY)],
    )
    assert set(both.signed_by) == {"PeterNeumann", "EnochRoot"}


def test_a_changed_note_or_a_key_it_does_not_know_is_refused() -> None:
    peter = NoteKey.from_vkey(PETER_VKEY)
    with pytest.raises(NoteError, match="does not verify"):
        open_note(TEXT.replace("answer", "ANSWER") + "\n" + PETER_SIG, [peter])
    with pytest.raises(NoteError, match="no signature by a known key"):
        open_note(TEXT + "\n" + ENOCH_SIG, [peter])
    for bad in (
        TEXT + PETER_SIG,
        TEXT + "\n",
        TEXT + "\n" + PETER_SIG[:-1],
        TEXT + "\n" + PETER_SIG.replace("\u2014", "-"),
        "a\tb\n\n" + PETER_SIG,
    ):
        with pytest.raises(NoteError):
            split_note(bad) if bad != TEXT + "\n" else open_note(bad, [peter])


def test_verifier_keys_are_checked() -> None:
    assert NoteKey.from_vkey(PETER_VKEY).name == "PeterNeumann"
    for bad in (
        PETER_VKEY.replace("c74f20a3", "c74f20a4"),
        PETER_VKEY + "+x",
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ):
        with pytest.raises(NoteError):
            NoteKey.from_vkey(bad)


def test_a_checkpoint_round_trips_and_refuses_malformations() -> None:
    c = Checkpoint("cpsettle.audit/abc", 12, EMPTY_ROOT)
    assert Checkpoint.parse(c.text()) == c
    for bad in (
        "o\n012\n" + base64.b64encode(EMPTY_ROOT).decode() + "\n",
        "o\n1\nAAAA\n",
        "o\n1\n",
        "\n1\n" + base64.b64encode(EMPTY_ROOT).decode() + "\n",
    ):
        with pytest.raises(NoteError):
            Checkpoint.parse(bad)


def test_a_cosignature_verifies_with_its_time_and_only_for_that_text() -> None:
    witness = NoteKey.from_private(
        "witness.example/w1", Ed25519PrivateKey.from_private_bytes(bytes(range(32))), COSIGNATURE
    )
    body = Checkpoint("example.com/log", 5, EMPTY_ROOT).text()
    line = cosign(body, witness, 1_700_000_000).line()
    public = NoteKey(witness.name, witness.public, COSIGNATURE)
    assert NoteKey.from_vkey(public.vkey()) == public
    assert open_note(body + "\n" + line, [public]).signed_by == {
        "witness.example/w1": 1_700_000_000
    }
    other = Checkpoint("example.com/log", 6, EMPTY_ROOT).text()
    with pytest.raises(NoteError):
        open_note(other + "\n" + line, [public])
