"""Transport security and caller authentication.

- TLS, or mutual TLS when a client CA is configured (certificates from files: a mounted Secret).
  The files are read again when they change on disk (cert-manager renewing the Secret): each
  new connection's handshake asks ``CertificateFiles.fetch``, which hands grpc the new
  certificate, key and CA once they are readable and the key matches the certificate;
  connections already open keep theirs. The serving certificate's expiry is a metric.
- Optional bearer tokens per caller: a file of ``caller-name: token`` lines (a mounted Secret).
  Tokens are compared in constant time and never logged; only the caller's name is.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from .config import Settings
from .errors import Unauthenticated
from .observability import metrics


def server_credentials(
    settings: Settings, files: CertificateFiles | None = None
) -> grpc.ServerCredentials | None:
    """TLS credentials from the configured files (read again when they change), or None for
    plaintext."""
    if not settings.tls_cert_file:
        return None
    files = files if files is not None else CertificateFiles.from_settings(settings)
    return grpc.dynamic_ssl_server_credentials(
        # grpc's fetcher may return None ("keep the current configuration"); typeshed's stub
        # says it must always return one.
        files.initial(),
        files.fetch,  # type: ignore[arg-type]
        require_client_authentication=bool(settings.tls_client_ca_file),
    )


class CertificateProblem(ValueError):
    """Certificate files that cannot serve: unreadable, or a key that is not the certificate's."""


_Signature = tuple[tuple[int, int, int], ...]


class CertificateFiles:
    """The serving certificate chain, its key and the client CA, from files, read again when
    one of them changes (its inode, size or modification time: a Secret volume swaps a symlink).

    ``fetch`` is grpc's certificate-configuration fetcher, asked at each new connection's
    handshake (and ``refresh`` by the server every few seconds, so the expiry metric follows
    the files without a connection): it returns the new configuration once, then None (keep).
    Files that do not make a usable pair (half-written, a key of another certificate) are
    rejected and the previous ones kept; they are tried again when they change again.
    """

    def __init__(
        self,
        cert_file: str,
        key_file: str,
        client_ca_file: str = "",
        on_change: Callable[[str, str], None] | None = None,
    ) -> None:
        self.paths = tuple(p for p in (cert_file, key_file, client_ca_file) if p)
        self.cert_file, self.key_file, self.client_ca_file = cert_file, key_file, client_ca_file
        self.on_change = on_change  # (result, detail): "loaded"/"rejected", for the log
        self.not_after = 0.0  # the serving certificate's expiry (Unix time)
        self._lock = threading.Lock()
        self._signature: _Signature = ()
        self._pending: grpc.ServerCertificateConfiguration | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, on_change: Callable[[str, str], None] | None = None
    ) -> CertificateFiles:
        return cls(
            settings.tls_cert_file, settings.tls_key_file, settings.tls_client_ca_file, on_change
        )

    def initial(self) -> grpc.ServerCertificateConfiguration:
        """The configuration at start (raises CertificateProblem: the server does not start)."""
        with self._lock:
            try:
                self._signature = self._stat()
            except OSError as e:
                raise CertificateProblem(f"{e.filename}: {e.strerror}") from None
            config = self._load()
            self._pending = None
            return config

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """grpc's fetcher: the new configuration once after the files changed, else None."""
        self.refresh()
        with self._lock:
            config, self._pending = self._pending, None
            return config

    def refresh(self) -> bool:
        """Read the files again if they changed; True when a new configuration was loaded."""
        with self._lock:
            try:
                signature = self._stat()
            except OSError:
                return False  # mid-swap: the next handshake or refresh looks again
            if signature == self._signature:
                return False
            self._signature = signature
            try:
                self._pending = self._load()
            except CertificateProblem as e:
                metrics.TLS_RELOADS.labels("rejected").inc()
                if self.on_change is not None:
                    self.on_change("rejected", str(e))
                return False
        metrics.TLS_RELOADS.labels("loaded").inc()
        if self.on_change is not None:
            self.on_change("loaded", self.cert_file)
        return True

    def _stat(self) -> _Signature:
        out = []
        for path in self.paths:
            st = os.stat(path)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(out)

    def _load(self) -> grpc.ServerCertificateConfiguration:
        try:
            chain = Path(self.cert_file).read_bytes()
            key = Path(self.key_file).read_bytes()
            client_ca = Path(self.client_ca_file).read_bytes() if self.client_ca_file else None
            leaf = x509.load_pem_x509_certificate(chain)
            private = serialization.load_pem_private_key(key, password=None)
        except (OSError, ValueError, TypeError) as e:
            raise CertificateProblem(f"{self.cert_file} / {self.key_file}: {e}") from None
        if private.public_key().public_bytes(*_SPKI) != leaf.public_key().public_bytes(*_SPKI):
            raise CertificateProblem(f"{self.key_file} is not the key of {self.cert_file}")
        self.not_after = leaf.not_valid_after_utc.timestamp()
        metrics.TLS_CERT_EXPIRY.set(self.not_after)
        return grpc.ssl_server_certificate_configuration(
            [(key, chain)], root_certificates=client_ca
        )


_SPKI = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


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
