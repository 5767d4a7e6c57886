"""Transport security and caller authentication.

- TLS, or mutual TLS when a client CA is configured (certificates from files: a mounted Secret).
- Optional bearer tokens per caller: a file of ``caller-name: token`` lines (a mounted Secret).
  Tokens are compared in constant time and never logged; only the caller's name is.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Iterable, Mapping

import grpc

from .config import Settings
from .errors import Unauthenticated


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials from the configured files, or None for plaintext."""
    if not settings.tls_cert_file:
        return None
    cert = Path(settings.tls_cert_file).read_bytes()
    key = Path(settings.tls_key_file).read_bytes()
    client_ca = (
        Path(settings.tls_client_ca_file).read_bytes() if settings.tls_client_ca_file else None
    )
    return grpc.ssl_server_credentials(
        [(key, cert)],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )


class TokenChecker:
    """Checks ``authorization: Bearer <token>`` metadata against the configured callers."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        if not tokens:
            raise ValueError("a token file must name at least one caller")
        # Keep digests, not tokens: comparison is constant-time over fixed-length values.
        self._callers = [
            (name, hashlib.sha256(token.encode("utf-8")).digest()) for name, token in tokens.items()
        ]

    @classmethod
    def from_file(cls, path: str) -> TokenChecker:
        tokens: dict[str, str] = {}
        for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, token = line.partition(":")
            if not sep or not name.strip() or len(token.strip()) < 16:
                raise ValueError(
                    f"{path} line {n}: expected 'caller-name: token' with a token of 16+ characters"
                )
            tokens[name.strip()] = token.strip()
        return cls(tokens)

    def caller(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
        """The caller's name; raises ``Unauthenticated`` for a missing or wrong token."""
        presented = None
        for key, value in metadata or ():
            if key == "authorization":
                text = value.decode() if isinstance(value, bytes) else value
                scheme, _, token = text.partition(" ")
                if scheme.lower() == "bearer" and token:
                    presented = token.strip()
                break
        if presented is None:
            raise Unauthenticated("missing bearer token")
        digest = hashlib.sha256(presented.encode("utf-8")).digest()
        found = None
        for name, expected in self._callers:  # no early exit: same work for every caller
            if hmac.compare_digest(digest, expected):
                found = name
        if found is None:
            raise Unauthenticated("invalid bearer token")
        return found
