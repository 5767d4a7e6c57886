"""Where a command's calls go: a server (through ``SettlementClient``) or, with ``--local``, the
service's in-process engine (``cpsettle_service.local``); and the error every command raises.

Both ``cli`` and the bulk ``audit`` build on this module, so neither imports the other's
internals.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf.message import Message

from . import strict_json
from .client import FieldViolation, SettlementClient, SettlementError, TlsConfig

if TYPE_CHECKING:  # the service is imported only when --local runs
    from cpsettle_service.local import LocalService
    from cpsettle_service.proof.keys import SigningKey

EXIT_OK = 0
EXIT_MISMATCH = 1  # a check ran and found a difference
EXIT_INVALID = 2  # the input was rejected
EXIT_UNAVAILABLE = 3  # the server could not be reached or failed


class CliError(Exception):
    def __init__(
        self, message: str, violations: Sequence[FieldViolation] = (), code: int = EXIT_INVALID
    ) -> None:
        super().__init__(message)
        self.violations = tuple(violations)
        self.code = code


def local_service(
    profile_dir: str | None = None, signing_key_file: str | None = None
) -> LocalService:
    """The engine in this process, as ``cpsettle settle --local`` uses it (house profiles from
    ``profile_dir``, settlements signed with the key in ``signing_key_file``)."""
    from cpsettle_service.local import LocalService

    return LocalService(profile_dir, load_signing_key(signing_key_file))


class Backend:
    """Either a server (through SettlementClient) or the engine in process (--local)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.local = bool(getattr(args, "local", False))
        self._client: SettlementClient | None = None
        self._service: LocalService | None = None
        self.args = args

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()

    def _local(self) -> LocalService:
        if self._service is None:
            self._service = local_service(
                getattr(self.args, "profile_dir", None),
                getattr(self.args, "signing_key_file", None),
            )
        return self._service

    def client(self) -> SettlementClient:
        if self._client is None:
            a = self.args
            tls = None
            if self._tls():
                tls = TlsConfig(a.ca_file, a.cert_file, a.key_file, a.server_name)
            token = a.token or os.environ.get("CPSETTLE_TOKEN") or None
            self._client = SettlementClient(a.server, timeout=a.timeout, tls=tls, token=token)
        return self._client

    def call(
        self, local: Callable[[LocalService], Any], remote: Callable[[SettlementClient], Any]
    ) -> Any:
        if self.local:
            from cpsettle_service.local import InvalidInput, NotFound

            try:
                return local(self._local())
            except InvalidInput as e:
                raise CliError(
                    "the request was rejected",
                    [FieldViolation(v.field, v.reason) for v in e.violations],
                ) from None
            except NotFound as e:
                raise CliError(str(e)) from None
        try:
            return remote(self.client())
        except SettlementError as e:
            code = (
                EXIT_INVALID
                if e.violations
                or e.code.name in ("INVALID_ARGUMENT", "NOT_FOUND", "RESOURCE_EXHAUSTED")
                else EXIT_UNAVAILABLE
            )
            n = len(e.violations)
            message = (
                f"{e.code.name}: the request was rejected ({n} problem{'' if n == 1 else 's'})"
                if e.violations
                else f"{e.code.name}: {e.message}"
            )
            if e.code.name == "UNAVAILABLE" and not self._tls() and speaks_tls(self.args.server):
                message += (
                    f"\n  {self.args.server} speaks TLS: add --tls "
                    "(and --ca-file CA.pem for a private CA)"
                )
            raise CliError(message, e.violations, code) from None

    def _tls(self) -> bool:
        a = self.args
        return bool(a.tls or a.ca_file or a.cert_file)


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None


def read_json(path: str) -> Any:
    try:
        if path == "-":
            return strict_json.loads(sys.stdin.read())
        with open(path, encoding="utf-8") as f:
            return strict_json.loads(f.read())
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None
    except strict_json.DuplicateKey as e:
        raise CliError(f"{path}: {e}") from None
    except ValueError as e:  # not JSON, or not UTF-8
        raise CliError(f"{path} is not JSON: {e}") from None


_M = TypeVar("_M", bound=Message)


def parse_message(data: Any, message: _M, what: str) -> _M:
    """``message`` filled from ``data`` (a JSON value); a CliError naming every field that
    cannot be read (an unknown field with its path and the nearest known name), as the
    service's JSON routes name them."""
    from cpsettle_service.api.jsonform import json_violations

    problems = json_violations(data, message)
    if problems:
        raise CliError(
            f"{what} is not a valid {message.DESCRIPTOR.name}",
            [FieldViolation(v.field, v.reason) for v in problems],
        ) from None
    return message


def speaks_tls(target: str, timeout: float = 1.0) -> bool:
    """Whether ``target`` (HOST:PORT) completes a TLS handshake: said when a plaintext call to
    it failed, so that the CLI can tell the user to add ``--tls``. Never raises."""
    import socket
    import ssl

    if target.startswith("unix:"):
        return False
    host, _, port = target.rpartition(":")
    host = host.strip("[]") or "localhost"
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # only whether it speaks TLS, not whom to trust
    try:
        with (
            socket.create_connection((host, int(port)), timeout=timeout) as sock,
            context.wrap_socket(sock, server_hostname=host),
        ):
            return True
    except (OSError, ValueError):
        return False


def load_signing_key(path: str | None) -> SigningKey | None:
    """The Ed25519 key of ``--signing-key-file`` (PEM), ``$CPSETTLE_SIGNING_KEY_ID`` its id
    (default: the id the file keeps, else its fingerprint)."""
    if not path:
        return None
    from cpsettle_service.errors import KeyProblem
    from cpsettle_service.proof.keys import kept_key_id, signing_key_from_pem

    try:
        data = read_bytes(path)
        return signing_key_from_pem(
            data, os.environ.get("CPSETTLE_SIGNING_KEY_ID", "") or kept_key_id(data), path
        )
    except KeyProblem as e:
        raise CliError(str(e)) from None
