"""Ed25519 keys: loading, the published key set (RPC, file, CLI) and rotation across replicas."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from cpsettle_client.client import SettlementClient
from cpsettle_client.proof import load_settlement
from cpsettle_service.config import Settings
from cpsettle_service.errors import KeyProblem
from cpsettle_service.proof.keys import KeySet, load_signing_key, signing_key_from_pem
from cpsettle_service.proof.verify import verify
from tests.proof.test_proof import small_request
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import start, wait_serving


def _serve(tmp_path: Path, name: str, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    sock = tmp_path / f"{name}.sock"
    proc = start(sock, tmp_path / f"{name}.log", **env)
    address = f"unix://{sock}"
    wait_serving(address, proc)
    return proc, address


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=15)


def _keys_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["keys", "show", *args]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def _replica(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, **env: str
) -> tuple[dict[str, Any], Any]:
    """A replica's published key set (``cpsettle keys show``) and one settlement of it."""
    proc, address = _serve(tmp_path, name, **env)
    try:
        keys = _keys_json(capsys, "--server", address)
        with SettlementClient(address) as c:
            return keys, c.settle(small_request()).settlement
    finally:
        _stop(proc)


def test_rotation_new_key_signs_old_settlements_still_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_pem, new_pem = tmp_path / "old.pem", tmp_path / "new.pem"
    old_pem.write_bytes(fixed_test_key(1))
    new_pem.write_bytes(fixed_test_key(2))
    old = signing_key_from_pem(fixed_test_key(1), "2026-a")
    # Before the rotation: replica A signs with the old key.
    before, s_old = _replica(
        tmp_path,
        capsys,
        "a",
        CPSETTLE_SIGNING_KEY_FILE=str(old_pem),
        CPSETTLE_SIGNING_KEY_ID="2026-a",
    )
    assert before == {
        "keys": [
            {
                "keyId": "2026-a",
                "algorithm": "SIGNATURE_ALGORITHM_ED25519",
                "publicKey": old.public.raw.hex(),
            }
        ],  # no bounds: open
        "currentKeyId": "2026-a",
    }
    # The rotation: the old key retired (its window closed), replica B signs with the new one.
    before["keys"][0]["notAfter"] = "2099-01-01T00:00:00.000Z"
    retired = tmp_path / "retired.json"
    retired.write_text(json.dumps({"keys": before["keys"]}))
    after, s_new = _replica(
        tmp_path,
        capsys,
        "b",
        CPSETTLE_SIGNING_KEY_FILE=str(new_pem),
        CPSETTLE_SIGNING_KEY_ID="2026-b",
        CPSETTLE_VERIFICATION_KEYS_FILE=str(retired),
    )
    assert after["currentKeyId"] == "2026-b"
    assert [k["keyId"] for k in after["keys"]] == ["2026-a", "2026-b"]
    assert after["keys"][0]["notAfter"] == "2099-01-01T00:00:00Z"  # protobuf JSON: no fraction
    assert s_old.signature.key_id == "2026-a" and s_new.signature.key_id == "2026-b"
    assert s_old.settlement_id == s_new.settlement_id  # same request, same id, any key
    # The posted key set verifies both, through the CLI, with nothing but public keys.
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(after))
    for name, s in (("old", s_old), ("new", s_new)):
        path = tmp_path / f"{name}.bin"
        path.write_bytes(s.SerializeToString(deterministic=True))
        assert main(["verify", str(path), "--keys", str(keys_file)]) == 0, name
    # The set from before the rotation does not know the new key.
    before_file = tmp_path / "before.json"
    before_file.write_text(json.dumps(before))
    assert main(["verify", str(tmp_path / "new.bin"), "--keys", str(before_file)]) == 1
    assert "no key '2026-b' in the key set" in capsys.readouterr().out
    # A settlement issued after its key's window closed is refused.
    closed = KeySet.from_json_bytes(json.dumps(after).encode())
    closed = KeySet(
        tuple(
            k if k.key_id != "2026-a" else type(k)(k.key_id, k.raw, "", "2020-01-01T00:00:00.000Z")
            for k in closed.keys
        )
    )
    assert [f.what for f in verify(s_old, closed)] == ["signature.key_window"]


def test_the_key_set_file_is_checked(tmp_path: Path) -> None:
    bad = {
        "keys": [
            {
                "keyId": "k",
                "algorithm": "SIGNATURE_ALGORITHM_NONE",
                "publicKey": "xyz",
                "notBefore": "2026-01-01T00:00:00.0005Z",
            },  # finer than a millisecond
            {"keyId": "k", "algorithm": "SIGNATURE_ALGORITHM_ED25519", "publicKey": "00" * 32},
        ]
    }
    with pytest.raises(KeyProblem) as e:
        KeySet.from_json_bytes(json.dumps(bad).encode())
    text = str(e.value)
    for part in (
        "keys[0].algorithm",
        "keys[0].publicKey",
        "keys[0].notBefore",
        "keys[1].keyId 'k' is listed twice",
    ):
        assert part in text
    assert "whole milliseconds" in text
    with pytest.raises(KeyProblem, match="not a key set"):
        KeySet.from_json_bytes(b'{"keys": [{"secret": 1}]}')
    # a bound is a Timestamp: RFC 3339 in JSON, never "" or words
    for when in ("yesterday", ""):
        with pytest.raises(KeyProblem, match=r"not a key set.*notBefore"):
            KeySet.from_json_bytes(
                json.dumps({"keys": [{**bad["keys"][1], "notBefore": when}]}).encode()
            )
    # a key set naming the signing key's id with another public key stops the replica
    path = tmp_path / "k.pem"
    path.write_bytes(fixed_test_key(1))
    other = KeySet().with_current(signing_key_from_pem(fixed_test_key(2), "same"))
    listed = tmp_path / "keys.json"
    listed.write_text(other.to_json())
    from cpsettle_service.proof.keys import published_keys

    settings = Settings(
        signing_key_file=str(path), signing_key_id="same", verification_keys_file=str(listed)
    )
    with pytest.raises(KeyProblem, match="another public key"):
        published_keys(settings, load_signing_key(settings))


def test_key_sources() -> None:
    pem = fixed_test_key(1).decode()
    key = load_signing_key(Settings(signing_key=pem))  # development: key text accepted
    assert key is not None and len(key.key_id) == 16  # the fingerprint
    assert key.key_id == signing_key_from_pem(pem.encode()).public.key_id
    assert "PRIVATE" not in repr(key) and pem.split("\n")[1] not in repr(key)
    with pytest.raises(KeyProblem, match="refused"):
        load_signing_key(Settings(signing_key=pem, require_signing_key=True))
    with pytest.raises(KeyProblem, match="not an unencrypted PEM"):
        load_signing_key(Settings(signing_key="a-16-byte-hmac-secret-of-old"))
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key

    ec = generate_private_key(SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(KeyProblem, match="not an Ed25519 key"):
        load_signing_key(Settings(signing_key=ec.decode()))
    assert load_signing_key(Settings()) is None


def test_keys_generate_and_show_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new.pem"
    assert main(["keys", "generate", str(out), "--key-id", "house-3"]) == 0
    entry = json.loads(capsys.readouterr().out)
    assert out.stat().st_mode & 0o777 == 0o600
    assert entry["currentKeyId"] == "house-3"
    assert main(["keys", "generate", str(out)]) == 2  # never overwritten
    capsys.readouterr()
    shown = _keys_json(capsys, "--local", "--signing-key-file", str(out))
    assert shown["keys"][0]["publicKey"] == entry["keys"][0]["publicKey"]
    request = tmp_path / "r.json"
    request.write_text(json.dumps(small_request()))
    assert (
        main(
            ["settle", str(request), "--local", "--signing-key-file", str(out), "--output", "json"]
        )
        == 0
    )
    s = load_settlement(capsys.readouterr().out.encode())
    keys = KeySet.from_json_bytes(json.dumps(shown).encode())
    assert verify(s, keys) == []
