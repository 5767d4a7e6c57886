"""``cpsettle verify``, ``keys``, ``audit-log verify`` and ``replay``: check a stored
settlement's proof and the audit log, publish the keys, settle again.

A stored settlement is the JSON the service returned (a ``SettleResponse`` — ``cpsettle settle
--output json`` — or a bare ``Settlement``), or its binary protobuf encoding.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb

from . import strict_json
from .client import message_dict
from .escape import json_text, shown

VARYING = ("issuedAt", "signature")  # the only fields outside the digests


class ProofError(ValueError):
    """A file that cannot be read as a settlement at all (itself a finding)."""


# issuedAt in JSON: RFC 3339 in UTC ("Z"), as docs/AUDIT.md requires of every verifier
_UTC_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z")


def load_settlement(data: bytes) -> pb.Settlement:
    """A Settlement from stored bytes: JSON (response or bare settlement) or binary protobuf;
    its ``issuedAt`` must have a signed text (docs/AUDIT.md): a time in whole milliseconds."""
    message = _load(data)
    from cpsettle_service.errors import TimeProblem
    from cpsettle_service.proof.times import timestamp_text

    try:
        timestamp_text(message.issued_at, message.HasField("issued_at"))
    except TimeProblem as e:
        raise ProofError(f"issuedAt: {e}") from None
    return message


def _load(data: bytes) -> pb.Settlement:
    text: str | None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.lstrip().startswith("{"):
        try:
            obj = strict_json.loads(text)
        except strict_json.DuplicateKey as e:
            raise ProofError(str(e)) from None
        except json.JSONDecodeError as e:
            raise ProofError(f"not valid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ProofError("not a settlement object")
        if "settlement" in obj and isinstance(obj["settlement"], dict) and len(obj) == 1:
            obj = obj["settlement"]
        for name in ("issuedAt", "issued_at"):
            stamp = obj.get(name)
            if isinstance(stamp, str) and not _UTC_TIME.fullmatch(stamp):
                raise ProofError(f"not a settlement: {name} {shown(stamp[:40])} is not an "
                                 "RFC 3339 time in UTC (…Z)")
        try:
            return json_format.ParseDict(obj, pb.Settlement())
        except json_format.ParseError as e:
            raise ProofError(f"not a settlement: {e}") from None
    try:
        msg = pb.Settlement.FromString(data)
    except Exception as e:  # noqa: BLE001 — any decoding failure is a finding
        raise ProofError(f"not a settlement: {e}") from None
    if msg.SerializeToString(deterministic=True) != data:
        raise ProofError("the binary settlement is not in its canonical encoding")
    return msg


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Every leaf that differs between two JSON-shaped values, as 'path: old -> new'."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            if not path and key in VARYING:
                continue
            sub = f"{path}.{key}" if path else key
            if key not in old:
                out.append(f"{sub}: (absent) -> {json_text(new[key], None)[:120]}")
            elif key not in new:
                out.append(f"{sub}: {json_text(old[key], None)[:120]} -> (absent)")
            else:
                out.extend(differences(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(f"{sub}: (absent) -> {json_text(new[i], None)[:120]}")
            elif i >= len(new):
                out.append(f"{sub}: {json_text(old[i], None)[:120]} -> (absent)")
            else:
                out.extend(differences(old[i], new[i], sub))
        return out
    if old != new:
        return [f"{path}: {json_text(old, None)} -> "
                f"{json_text(new, None)}"]
    return []


def settlement_dict(s: pb.Settlement) -> dict[str, Any]:
    return message_dict(s)


# --------------------------------------------------------------------------- commands

EXIT_VERIFIED = 0  # digests consistent and the signature valid under the given keys
EXIT_FAILED = 1  # something does not match (or the file is not a settlement)
EXIT_USAGE = 2  # bad arguments, an unreadable key set
EXIT_UNCHECKED = 4  # digests consistent, the signature NOT checked (no keys given)


def load_keys(path: str | None) -> Any:
    """The key set of ``--keys`` (None without one); an unusable file stops the command."""
    if not path:
        return None
    from cpsettle_service.errors import KeyProblem
    from cpsettle_service.proof.keys import KeySet

    from .backend import CliError

    try:
        return KeySet.from_file(path)
    except KeyProblem as e:
        raise CliError(str(e)) from None


def cmd_verify(args: Any) -> int:
    """``cpsettle verify SETTLEMENT --keys KEYS.json``; exit codes above (docs/AUDIT.md)."""
    from cpsettle_service.proof.verify import verify

    from .backend import read_bytes as _read_bytes

    keys = load_keys(args.keys)
    try:
        settlement = load_settlement(_read_bytes(args.file))
    except ProofError as e:
        print(f"{shown(args.file)}: FAILED")
        print(f"  - file: {shown(str(e))}")
        return EXIT_FAILED
    findings = verify(settlement, keys)
    failed = [f for f in findings if f.checked]
    if failed:
        print(f"{shown(args.file)}: FAILED")
        for f in failed:
            print(f"  - {shown(str(f))}")
        return EXIT_FAILED
    if findings:  # only the signature, not checked
        print(f"{shown(args.file)}: digests OK (settlement {shown(settlement.settlement_id)}); the "
              f"signature was NOT checked: {shown(findings[0].detail)}. Give --keys KEYS.json to "
              "check it.")
        return EXIT_UNCHECKED
    print(f"{shown(args.file)}: OK — settlement {shown(settlement.settlement_id)}, digests match "
          f"and the Ed25519 signature by key '{shown(settlement.signature.key_id)}' is valid")
    return EXIT_VERIFIED


def cmd_keys_show(args: Any) -> int:
    """The key set as JSON: from a server (GetVerificationKeys) or from local key files."""
    from .backend import Backend, CliError

    if args.local:
        from cpsettle_service.config import Settings
        from cpsettle_service.errors import KeyProblem
        from cpsettle_service.proof.keys import load_signing_key, published_keys

        settings = Settings(signing_key_file=args.signing_key_file or "",
                            signing_key_id=os.environ.get("CPSETTLE_SIGNING_KEY_ID", ""),
                            verification_keys_file=args.verification_keys_file or "")
        try:
            print(published_keys(settings, load_signing_key(settings)).to_json(), end="")
        except (KeyProblem, OSError) as e:
            raise CliError(str(e)) from None
        return EXIT_VERIFIED
    with Backend(args) as backend:
        response = backend.call(lambda s: s.verification_keys(), lambda c: c.verification_keys())
    print(json.dumps(message_dict(response), indent=2))
    return EXIT_VERIFIED


def cmd_keys_generate(args: Any) -> int:
    """A new Ed25519 private key (PEM, mode 0600, never overwritten); its public entry out."""
    from cpsettle_service.proof.keys import KeySet, generate_pem, signing_key_from_pem

    from .backend import CliError

    pem = generate_pem()
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise CliError(f"cannot create {args.out}: {e.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    key = signing_key_from_pem(pem, args.key_id or "")
    print(KeySet().with_current(key).to_json(), end="")
    return EXIT_VERIFIED


def cmd_audit_log_verify(args: Any) -> int:
    """``cpsettle audit-log verify LOGFILE...``: 0 intact, 1 problems, 2 unreadable input."""
    from cpsettle_service.proof.log import check_logs, describe

    from .backend import CliError

    keys = load_keys(args.keys)
    try:
        report = check_logs(args.logs, keys)
    except OSError as e:
        raise CliError(f"cannot read {e.filename}: {e.strerror}") from None
    for line in describe(report, keys is not None):
        print(shown(line))  # chain ids and values come from the log files
    if not report.chains:
        print("no chained audit lines found")
        return EXIT_FAILED
    return EXIT_VERIFIED if report.intact else EXIT_FAILED


def add_parsers(sub: Any, connection: Any) -> None:
    """The proof commands: verify, keys show / generate, audit-log verify."""
    p = sub.add_parser("verify", help="check a stored settlement's digests and signature")
    p.add_argument("file", help="settlement JSON (cpsettle settle --output json) or binary")
    p.add_argument("--keys", metavar="KEYS.json",
                   help="the public key set (cpsettle keys show); without it the signature is "
                        "NOT checked (exit 4)")
    p.set_defaults(func=cmd_verify)

    keys = sub.add_parser("keys", help="the public keys that verify settlements")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    p = ksub.add_parser("show", help="print the key set JSON (the file to post)")
    connection(p)
    p.add_argument("--verification-keys-file",
                   help="with --local: retired public keys to publish beside the signing key")
    p.set_defaults(func=cmd_keys_show)
    p = ksub.add_parser("generate", help="write a new Ed25519 private key (PEM, 0600)")
    p.add_argument("out", help="the private key file to create (never overwritten)")
    p.add_argument("--key-id", help="its id (default: the key's fingerprint)")
    p.set_defaults(func=cmd_keys_generate)

    log = sub.add_parser("audit-log", help="check the service's chained audit log")
    lsub = log.add_subparsers(dest="audit_log_command", required=True)
    p = lsub.add_parser("verify", help="report gaps, edits, reordering and forks per chain")
    p.add_argument("logs", nargs="+", metavar="LOGFILE", help="JSON-lines logs, in order")
    p.add_argument("--keys", metavar="KEYS.json", help="check the signed heads with these keys")
    p.set_defaults(func=cmd_audit_log_verify)
