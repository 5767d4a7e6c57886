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
        if isinstance(obj.get("settlement"), dict) and set(obj) <= {"settlement", "receipt"}:
            obj = obj["settlement"]  # a SettleResponse: the settlement and its receipt
        twice = _named_twice(obj)
        if twice:
            raise ProofError(f"not a settlement: {twice}")
        for name in ("issuedAt", "issued_at"):
            stamp = obj.get(name)
            if isinstance(stamp, str) and not _UTC_TIME.fullmatch(stamp):
                raise ProofError(
                    f"not a settlement: {name} {shown(stamp[:40])} is not an "
                    "RFC 3339 time in UTC (…Z)"
                )
        try:
            return json_format.ParseDict(obj, pb.Settlement())
        except json_format.ParseError as e:
            raise ProofError(f"not a settlement: {e}") from None
    try:
        msg = pb.Settlement.FromString(data)
    except Exception as e:  # any decoding failure is a finding
        raise ProofError(f"not a settlement: {e}") from None
    if msg.SerializeToString(deterministic=True) != data:
        raise ProofError("the binary settlement is not in its canonical encoding")
    return msg


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _named_twice(value: Any, path: str = "") -> str:
    """A field given under both its JSON names (``unit_value`` beside ``unitValue``): protobuf's
    parser takes either and keeps one, so the other could hide a tampered value."""
    if isinstance(value, dict):
        seen: dict[str, str] = {}
        for key in value:
            camel = _camel(key) if isinstance(key, str) else key
            if camel in seen:
                return f"{path or 'the settlement'} gives {seen[camel]!r} and {key!r}: one field"
            seen[camel] = key
        for key, sub in value.items():
            found = _named_twice(sub, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found = _named_twice(sub, f"{path}[{i}]")
            if found:
                return found
    return ""


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
        return [f"{path}: {json_text(old, None)} -> {json_text(new, None)}"]
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
        print(
            f"{shown(args.file)}: digests OK (settlement {shown(settlement.settlement_id)}); the "
            f"signature was NOT checked: {shown(findings[0].detail)}. Give --keys KEYS.json to "
            "check it."
        )
        return EXIT_UNCHECKED
    print(
        f"{shown(args.file)}: OK — settlement {shown(settlement.settlement_id)}, digests match "
        f"and the Ed25519 signature by key '{shown(settlement.signature.key_id)}' is valid"
    )
    return EXIT_VERIFIED


def cmd_keys_show(args: Any) -> int:
    """The key set as JSON: from a server (GetVerificationKeys) or from local key files."""
    from .backend import Backend, CliError

    if args.local:
        from cpsettle_service.config import Settings
        from cpsettle_service.errors import KeyProblem
        from cpsettle_service.proof.keys import load_signing_key, published_keys

        settings = Settings(
            signing_key_file=args.signing_key_file or "",
            signing_key_id=os.environ.get("CPSETTLE_SIGNING_KEY_ID", ""),
            verification_keys_file=args.verification_keys_file or "",
        )
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
    from cpsettle_service.errors import KeyProblem
    from cpsettle_service.proof.keys import KeySet, generate_pem, signing_key_from_pem

    from .backend import CliError

    try:
        pem = generate_pem(args.key_id or "")  # the id kept in the file, with the key
    except KeyProblem as e:
        raise CliError(str(e)) from None
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise CliError(f"cannot create {args.out}: {e.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    key = signing_key_from_pem(pem, args.key_id or "")
    print(KeySet().with_current(key).to_json(), end="")
    return EXIT_VERIFIED


EXIT_LOG_INTACT = 0  # every check ran, nothing wrong
EXIT_LOG_PROBLEMS = 1  # a problem (docs/AUDIT.md, "Checking the log": the kinds)
EXIT_LOG_UNCHECKED = 4  # nothing wrong found, but part could not be checked (no witness, keys)


def _load_witnessed(source: str | None, vkey: str | None) -> Any:
    """The witness's cosigned checkpoints: an export file, or the witness's /export."""
    if not source:
        return None
    from cpsettle_service.errors import NoteError
    from cpsettle_service.proof.logcheck import Witnessed
    from cpsettle_service.proof.note import NoteKey

    from .backend import CliError

    try:
        key = NoteKey.from_vkey(_read_text(vkey)) if vkey else None
        if source.startswith(("http://", "https://")):
            import urllib.request

            with urllib.request.urlopen(source.rstrip("/") + "/export", timeout=30) as answer:
                data = answer.read()
        else:
            with open(source, "rb") as f:
                data = f.read()
        return Witnessed.from_json(data, key)
    except (OSError, NoteError) as e:
        raise CliError(f"cannot use the witness's checkpoints {source}: {e}") from None


def _read_text(value: str) -> str:
    """A verifier key given as itself or as a file holding it."""
    if os.path.exists(value):
        with open(value, encoding="utf-8") as f:
            return f.read().strip()
    return value.strip()


def _load_receipts(paths: list[str] | None) -> list[tuple[str, Any]]:
    """Receipts from files: a receipt or a settlement response (JSON), or JSON lines of
    them."""
    from cpsettle_service.errors import ProofError as BadReceipt
    from cpsettle_service.proof.logcheck import receipt_from_json

    from .backend import CliError

    out = []
    for path in paths or []:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            docs = (
                [json.loads(text)]
                if text.lstrip().startswith("{") and text.count("\n{") == 0
                else [json.loads(x) for x in text.splitlines() if x.strip()]
            )
            out += [(f"{path}#{i + 1}", receipt_from_json(d)) for i, d in enumerate(docs)]
        except (OSError, ValueError, BadReceipt) as e:
            raise CliError(f"cannot read the receipts {path}: {e}") from None
    return out


def cmd_audit_log_verify(args: Any) -> int:
    """``cpsettle audit-log verify LOGFILE... [--keys] [--witness] [--receipt]``: 0 intact and
    fully checked, 1 problems, 2 unusable input, 4 intact as far as it could be checked."""
    from cpsettle_service.proof.logcheck import check_logs, describe

    from .backend import CliError

    keys = load_keys(args.keys)
    witnessed = _load_witnessed(args.witness, args.witness_key)
    receipts = _load_receipts(args.receipt)
    try:
        report = check_logs(args.logs, keys, witnessed, receipts)
    except OSError as e:
        raise CliError(f"cannot read {e.filename}: {e.strerror}") from None
    for line in describe(report):
        print(shown(line))  # origins and values come from the log files
    if not report.logs and witnessed is None:
        print("no audit log lines found")
        return EXIT_LOG_PROBLEMS
    if not report.intact:
        return EXIT_LOG_PROBLEMS
    if report.unchecked:
        print("no problem found in what could be checked; see NOT CHECKED above")
        return EXIT_LOG_UNCHECKED
    print("INTACT: every check ran")
    return EXIT_LOG_INTACT


def cmd_audit_log_prove(args: Any) -> int:
    """``cpsettle audit-log prove RECEIPT LOGFILE... [--witness]``: the receipted line's
    inclusion proof (c2sp.org/tlog-proof) against the witness's cosigned checkpoint, else the
    log's latest checkpoint that covers it."""
    from cpsettle_service.proof.logcheck import check_logs, proof_text

    from .backend import CliError

    receipts = _load_receipts([args.receipt])
    if len(receipts) != 1:
        raise CliError("give one receipt (or one settlement response)")
    where, receipt = receipts[0]
    witnessed = _load_witnessed(args.witness, args.witness_key)
    report = check_logs(args.logs, None, witnessed, receipts)
    log = next((r for r in report.logs if r.origin == receipt.origin), None)
    bad = [t for r in report.logs for k, t in r.problems if k == "receipt"]
    bad += [t for k, t in report.problems if k == "receipt"]
    if log is None or bad:
        print(f"{shown(where)}: NOT PROVABLE: " + shown("; ".join(bad) or "no such log"))
        return EXIT_LOG_PROBLEMS
    choices = []
    if witnessed is not None:
        choices += [
            (w.checkpoint.size, w.note)
            for w in witnessed.logs
            if w.origin == receipt.origin
            and w.checkpoint.size <= log.size
            and log.tree is not None
            and log.tree.root(w.checkpoint.size) == w.checkpoint.root
        ]
    choices += [(cp.size, note) for _, cp, note in log.checkpoints]
    covering = [c for c in choices if c[0] > receipt.index]
    if not covering:
        print(f"{shown(where)}: NOT PROVABLE: no checkpoint covers line {receipt.index}")
        return EXIT_LOG_PROBLEMS
    size, note = covering[0]  # the witness's first: the one an auditor trusts
    print(proof_text(log, receipt.index, note, size), end="")
    return EXIT_LOG_INTACT


def cmd_audit_log_check_proof(args: Any) -> int:
    """``cpsettle audit-log check-proof PROOF --keys KEYS.json [--witness-key VKEY]
    [--settlement FILE]``: a tlog-proof's checkpoint signatures and inclusion proof; 0 valid, 1
    invalid, 4 valid but not every signature could be checked (no witness key)."""
    from cpsettle_service.errors import NoteError
    from cpsettle_service.errors import ProofError as BadProof
    from cpsettle_service.proof.logcheck import log_keys, read_proof
    from cpsettle_service.proof.merkle import leaf_hash, verify_inclusion
    from cpsettle_service.proof.note import Checkpoint, NoteKey, open_note, split_note

    from .backend import CliError

    keys = load_keys(args.keys)
    if keys is None:
        raise CliError("give --keys KEYS.json: the replica keys that sign checkpoints")
    try:
        with open(args.proof, encoding="utf-8") as f:
            proof = read_proof(f.read())
        cp = Checkpoint.parse(split_note(proof.note)[0])
        trusted = log_keys(keys, cp.origin)
        witness = NoteKey.from_vkey(_read_text(args.witness_key)) if args.witness_key else None
        opened = open_note(proof.note, trusted + ([witness] if witness else []))
        if cp.origin not in opened.signed_by:
            raise NoteError("the checkpoint is not signed by a replica key")
        if witness is not None and witness.name not in opened.signed_by:
            raise NoteError(f"no cosignature by the witness {witness.name}")
        verify_inclusion(leaf_hash(proof.line), proof.index, cp.size, proof.proof, cp.root)
        line = json.loads(proof.line)
        if line.get("log") != cp.origin or line.get("index") != proof.index:
            raise BadProof("the line's log fields do not match the proof's log and index")
        if args.settlement:
            settlement = load_settlement(_read_bytes(args.settlement))
            if (
                line.get("settlement_id") != settlement.settlement_id
                or line.get("event") != "settlement.issued"
            ):
                raise BadProof("the line is not this settlement's settlement.issued")
    except (OSError, ValueError, NoteError, BadProof, ProofError) as e:
        print(f"{shown(args.proof)}: INVALID: {shown(str(e))}")
        return EXIT_FAILED
    what = f"line {proof.index} of {cp.origin} is in its checkpoint of {cp.size} lines"
    if witness is None:
        print(
            f"{shown(args.proof)}: OK as far as checked: {shown(what)}; the witness's "
            "cosignature was NOT checked (give --witness-key VKEY)"
        )
        return EXIT_UNCHECKED
    print(f"{shown(args.proof)}: OK: {shown(what)}, cosigned by {shown(witness.name)}")
    return EXIT_VERIFIED


def _read_bytes(path: str) -> bytes:
    from .backend import read_bytes

    return read_bytes(path)


def add_parsers(sub: Any, connection: Any) -> None:
    """The proof commands: verify, keys show / generate, audit-log verify."""
    p = sub.add_parser("verify", help="check a stored settlement's digests and signature")
    p.add_argument("file", help="settlement JSON (cpsettle settle --output json) or binary")
    p.add_argument(
        "--keys",
        metavar="KEYS.json",
        help="the public key set (cpsettle keys show); without it the signature is "
        "NOT checked (exit 4)",
    )
    p.set_defaults(func=cmd_verify)

    keys = sub.add_parser("keys", help="the public keys that verify settlements")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    p = ksub.add_parser("show", help="print the key set JSON (the file to post)")
    connection(p)
    p.add_argument(
        "--verification-keys-file",
        help="with --local: retired public keys to publish beside the signing key",
    )
    p.set_defaults(func=cmd_keys_show)
    p = ksub.add_parser("generate", help="write a new Ed25519 private key (PEM, 0600)")
    p.add_argument("out", help="the private key file to create (never overwritten)")
    p.add_argument("--key-id", help="its id, kept in the file (default: the key's fingerprint)")
    p.set_defaults(func=cmd_keys_generate)

    log = sub.add_parser("audit-log", help="check the service's verifiable audit log")
    lsub = log.add_subparsers(dest="audit_log_command", required=True)
    p = lsub.add_parser(
        "verify",
        help="rebuild each log's Merkle tree and check it against its "
        "checkpoints, the witness's and the receipts",
    )
    p.add_argument("logs", nargs="+", metavar="LOGFILE", help="JSON-lines logs (any order)")
    p.add_argument("--keys", metavar="KEYS.json", help="check the checkpoints' signatures")
    p.add_argument(
        "--witness",
        metavar="EXPORT.json|URL",
        help="the witness's cosigned checkpoints (cpsettle-witness export), or its "
        "address; without it a cut end or a withheld run cannot show (exit 4)",
    )
    p.add_argument(
        "--witness-key",
        metavar="VKEY",
        help="the witness's verifier key (or a file "
        "holding it); without it the export's own is used, and said so",
    )
    p.add_argument(
        "--receipt",
        action="append",
        metavar="FILE",
        help="receipts (or settlement responses) whose lines must be in the log",
    )
    p.set_defaults(func=cmd_audit_log_verify)
    p = lsub.add_parser(
        "prove", help="the inclusion proof of a receipted line (c2sp.org/tlog-proof)"
    )
    p.add_argument("receipt", help="a receipt, or a settlement response holding one")
    p.add_argument("logs", nargs="+", metavar="LOGFILE")
    p.add_argument(
        "--witness",
        metavar="EXPORT.json|URL",
        help="prove against the witness's cosigned checkpoint",
    )
    p.add_argument("--witness-key", metavar="VKEY")
    p.set_defaults(func=cmd_audit_log_prove)
    p = lsub.add_parser("check-proof", help="check a tlog-proof: signatures, inclusion, line")
    p.add_argument("proof", help="the proof (cpsettle audit-log prove)")
    p.add_argument("--keys", metavar="KEYS.json", help="the replica keys (required)")
    p.add_argument("--witness-key", metavar="VKEY")
    p.add_argument("--settlement", metavar="FILE", help="the settlement the line must issue")
    p.set_defaults(func=cmd_audit_log_check_proof)
