"""The witness service: c2sp.org/tlog-witness's ``add-checkpoint`` over HTTP, the export
auditors verify with, and the ``cpsettle-witness`` command (docs/AUDIT.md, "The witness").

For each checkpoint a replica sends, the witness checks, as the protocol says: the origin is a
replica log's (``CPSETTLE_WITNESS_ORIGIN_PREFIX``, else 404), the checkpoint is signed by a
replica key (the key set in ``CPSETTLE_WITNESS_LOG_KEYS_FILE``, else 403), ``old`` is the size
it last cosigned for that log (else 409 with its size), and the consistency proof from there
verifies (else 422). Then it records the checkpoint durably (store.py), cosigns it with its own
Ed25519 key (c2sp.org/tlog-cosignature) and answers the cosignature line. A log's first
checkpoint (size 0, sent at the replica's start) registers the log.

    cpsettle-witness serve      # CPSETTLE_WITNESS_* below; the HTTP server
    cpsettle-witness export     # every log with its latest cosigned checkpoint, as JSON
    cpsettle-witness vkey       # the witness's verifier key (what auditors pin)

Settings: ``CPSETTLE_WITNESS_KEY_FILE`` (its Ed25519 private key, PEM), ``CPSETTLE_WITNESS_NAME``
(its key name, default ``cpsettle-witness``), ``CPSETTLE_WITNESS_LOG_KEYS_FILE`` (the replicas'
key set: ``cpsettle keys show``), ``CPSETTLE_WITNESS_ORIGIN_PREFIX`` (default
``cpsettle.audit``), ``CPSETTLE_WITNESS_DATABASE`` (``postgresql://...`` or a SQLite file,
default ``witness.sqlite3``) or ``CPSETTLE_WITNESS_DATABASE_FILE`` (a file holding it: a mounted
Secret, since a PostgreSQL URL holds a password), ``CPSETTLE_WITNESS_HOST`` /
``CPSETTLE_WITNESS_PORT`` (default ``127.0.0.1:8780``).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..errors import KeyProblem, NoteError, ProofError
from ..proof.keys import KeySet, signing_key_from_pem
from ..proof.merkle import EMPTY_ROOT, verify_consistency
from ..proof.note import COSIGNATURE, Checkpoint, NoteKey, cosign, open_note, split_note
from .store import Store

__all__ = ["Refused", "Witness", "WitnessConfig", "load_witness", "main", "serve"]

MAX_BODY = 1 << 16
MAX_PROOF_LINES = 63


class Refused(Exception):
    """An add-checkpoint the witness refuses: the HTTP status, the body, its content type."""

    def __init__(self, status: int, text: str, content_type: str = "text/plain") -> None:
        super().__init__(text)
        self.status, self.text, self.content_type = status, text, content_type


@dataclass(frozen=True)
class WitnessConfig:
    key_file: str = ""
    name: str = "cpsettle-witness"
    log_keys_file: str = ""
    origin_prefix: str = "cpsettle.audit"
    database: str = "witness.sqlite3"
    host: str = "127.0.0.1"
    port: int = 8780

    @classmethod
    def from_env(cls, env: Any = None) -> WitnessConfig:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name in ("key_file", "name", "log_keys_file", "origin_prefix", "database", "host"):
            var = f"CPSETTLE_WITNESS_{name.upper()}"
            if var in env:
                values[name] = env[var].strip()
        if "CPSETTLE_WITNESS_DATABASE_FILE" in env:
            if "database" in values:
                raise KeyProblem(
                    "CPSETTLE_WITNESS_DATABASE and CPSETTLE_WITNESS_DATABASE_FILE: one or the other"
                )
            path = env["CPSETTLE_WITNESS_DATABASE_FILE"].strip()
            try:
                values["database"] = Path(path).read_text("utf-8").strip()
            except (OSError, UnicodeDecodeError) as e:
                raise KeyProblem(f"CPSETTLE_WITNESS_DATABASE_FILE {path}: {e}") from None
            if not values["database"]:
                raise KeyProblem(f"CPSETTLE_WITNESS_DATABASE_FILE {path} is empty")
        if "CPSETTLE_WITNESS_PORT" in env:
            try:
                values["port"] = int(env["CPSETTLE_WITNESS_PORT"])
            except ValueError:
                raise KeyProblem("CPSETTLE_WITNESS_PORT must be a number") from None
        return cls(**values)


def _now_seconds() -> int:
    return int(time.time())


class Witness:
    """The witness's checks and its record; ``add_checkpoint`` is the protocol's call."""

    def __init__(
        self, key: NoteKey, log_keys: KeySet, store: Store, origin_prefix: str = "cpsettle.audit"
    ) -> None:
        if key.kind != COSIGNATURE or key.private is None:
            raise KeyProblem("the witness needs its private key, as a cosigner (type 0x04)")
        self.key = key
        self.log_keys = log_keys
        self.store = store
        self.prefix = origin_prefix.rstrip("/") + "/"
        self.clock = _now_seconds

    def add_checkpoint(self, body: bytes) -> str:
        """c2sp.org/tlog-witness add-checkpoint: the cosignature line, or Refused."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(400, "not UTF-8") from None
        head, sep, note = text.partition("\n\n")
        lines = head.split("\n")
        if not sep or not lines[0].startswith("old "):
            raise Refused(400, "the body is: old SIZE, proof lines, an empty line, a checkpoint")
        try:
            old = int(lines[0][4:])
            if str(old) != lines[0][4:] or old < 0:
                raise ValueError
            proof = [base64.b64decode(x, validate=True) for x in lines[1:]]
        except (ValueError, binascii.Error):
            raise Refused(400, "a malformed old size or proof line") from None
        if len(proof) > MAX_PROOF_LINES:
            raise Refused(400, f"more than {MAX_PROOF_LINES} proof lines")
        try:
            checkpoint = Checkpoint.parse(split_note(note)[0])
        except NoteError as e:
            raise Refused(400, f"not a signed checkpoint: {e}") from None
        origin = checkpoint.origin
        if not origin.startswith(self.prefix) or len(origin) == len(self.prefix):
            raise Refused(404, f"unknown origin {origin[:100]!r}")
        try:
            open_note(note, [NoteKey(origin, k.raw) for k in self.log_keys.keys])
        except NoteError as e:
            raise Refused(403, f"the checkpoint is not signed by a replica key: {e}") from None
        if old > checkpoint.size:
            raise Refused(400, f"old size {old} is larger than the checkpoint's")
        if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
            raise Refused(422, "a checkpoint of size 0 has the empty tree's root")
        stored = self.store.latest(origin)
        have = stored.size if stored is not None else 0
        if old != have:
            raise Refused(409, f"{have}\n", "text/x.tlog.size")
        if old == 0:
            if proof:
                raise Refused(422, "a proof from size 0 must be empty")
        else:
            assert stored is not None
            try:
                verify_consistency(
                    old, checkpoint.size, proof, base64.b64decode(stored.root), checkpoint.root
                )
            except ProofError as e:
                raise Refused(
                    422, f"not consistent with the checkpoint of size {old}: {e}"
                ) from None
        line = cosign(checkpoint.text(), self.key, self.clock()).line()
        now = self.store.advance(
            origin,
            old,
            checkpoint.size,
            base64.b64encode(checkpoint.root).decode("ascii"),
            note + line,
        )
        if now is not None:
            raise Refused(409, f"{now}\n", "text/x.tlog.size")
        return line

    def export(self) -> dict[str, Any]:
        """Every log the witness registered, with the latest checkpoint it cosigned."""
        public = NoteKey(self.key.name, self.key.public, COSIGNATURE)
        return {
            "witness": {"name": self.key.name, "vkey": public.vkey()},
            "logs": [
                {
                    "origin": s.origin,
                    "size": s.size,
                    "root": s.root,
                    "checkpoint": s.note,
                    "registered": s.registered,
                    "updated": s.updated,
                }
                for s in self.store.logs()
            ],
        }


def _handler(witness: Witness) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "cpsettle-witness"

        def _answer(self, status: int, text: str, content_type: str = "text/plain") -> None:
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # http.server's name
            if self.path.rstrip("/").rsplit("/", 1)[-1] != "add-checkpoint":
                self._answer(404, "not found\n")
                return
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                self._answer(411, "a Content-Length is required\n")
                return
            if not 0 < length <= MAX_BODY:
                self._answer(413, f"a body is 1 to {MAX_BODY} bytes\n")
                return
            body = self.rfile.read(length)
            try:
                line = witness.add_checkpoint(body)
            except Refused as e:
                self._answer(
                    e.status, e.text if e.text.endswith("\n") else e.text + "\n", e.content_type
                )
                return
            self._answer(200, line)

        def do_GET(self) -> None:
            if self.path == "/export":
                self._answer(200, json.dumps(witness.export(), indent=1) + "\n", "application/json")
            elif self.path == "/vkey":
                self._answer(200, witness.export()["witness"]["vkey"] + "\n")
            elif self.path in ("/healthz", "/readyz"):
                self._answer(200, "ok\n")
            else:
                self._answer(404, "not found\n")

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(
                json.dumps(
                    {
                        "event": "witness.http",
                        "request": self.requestline,
                        "status": args[1] if len(args) > 1 else "",
                    }
                )
                + "\n"
            )

    return Handler


def load_witness(config: WitnessConfig) -> Witness:
    if not config.key_file:
        raise KeyProblem("CPSETTLE_WITNESS_KEY_FILE: the witness's Ed25519 private key (PEM)")
    if not config.log_keys_file:
        raise KeyProblem(
            "CPSETTLE_WITNESS_LOG_KEYS_FILE: the replicas' key set (cpsettle keys show)"
        )
    key = signing_key_from_pem(Path(config.key_file).read_bytes(), where=config.key_file)
    note_key = NoteKey.from_private(config.name, key.private, COSIGNATURE)
    return Witness(
        note_key,
        KeySet.from_file(config.log_keys_file),
        Store(config.database),
        config.origin_prefix,
    )


def serve(witness: Witness, host: str, port: int) -> None:
    server = ThreadingHTTPServer((host, port), _handler(witness))
    stop = threading.Event()

    def end(*_: Any) -> None:
        stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    print(
        json.dumps(
            {
                "event": "witness.started",
                "address": f"{host}:{server.server_port}",
                "vkey": witness.export()["witness"]["vkey"],
                "database": "postgresql" if witness.store.postgres else "sqlite",
            }
        ),
        flush=True,
    )
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        witness.store.close()
        print(json.dumps({"event": "witness.stopped"}), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="cpsettle-witness", description="a witness for cpsettle's audit logs"
    )
    parser.add_argument("command", nargs="?", default="serve", choices=("serve", "export", "vkey"))
    args = parser.parse_args(argv)
    try:
        config = WitnessConfig.from_env()
        witness = load_witness(config)
    except (KeyProblem, OSError) as e:
        print(f"cpsettle-witness: {e}", file=sys.stderr)
        sys.exit(2)
    if args.command == "export":
        print(json.dumps(witness.export(), indent=1))
    elif args.command == "vkey":
        print(witness.export()["witness"]["vkey"])
    else:
        serve(witness, config.host, config.port)


if __name__ == "__main__":
    main()
