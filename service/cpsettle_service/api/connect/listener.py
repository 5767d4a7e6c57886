"""The HTTP port (``CPSETTLE_HTTP_PORT``): uvicorn serving the Connect app on the server's own
event loop, TLS from the gRPC port's files.

uvicorn (HTTP/1.1, its pure-Python h11 parser) runs as a task of the loop the gRPC server runs
on, from a socket bound here (so a port in use is the service's own start-up error, and port 0
gets a free one for tests). The service keeps SIGTERM: uvicorn's own signal handlers are not
installed, and ``stop`` drains it beside the gRPC server (connections closed once their call
is answered, within the grace period). With ``CPSETTLE_TLS_CERT_FILE`` the port speaks only
HTTPS (TLS 1.2 or later), with client certificates from ``CPSETTLE_TLS_CLIENT_CA_FILE``
required as on the gRPC port; the files are read again when they change (``reload_tls``, on
the server's certificate refresh), as the gRPC port's are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import uvicorn

from ...config import Settings

__all__ = ["HttpListener", "bind", "start_http", "tls_context"]

# At most this many connections (and so calls) at once on the HTTP port; past it uvicorn
# answers 503 at once. The service's own budget (CPSETTLE_MAX_CONCURRENT_RPCS, shared with
# gRPC) still decides which calls run: this only bounds idle keep-alive connections.
MAX_CONNECTIONS = 256
KEEP_ALIVE_SECONDS = 5  # an idle keep-alive connection is closed after this long

# uvicorn logs through the standard library: keep its info lines (each start and stop) out of
# the service's JSON log (its warnings and errors stay), and no access line: every call has its
# canonical log line (or its settlement.issued event) from the interceptor, as over gRPC.
logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
logging.getLogger("uvicorn.access").propagate = False


def tls_context(settings: Settings) -> ssl.SSLContext | None:
    """The HTTPS context from the gRPC port's certificate files (None: plaintext)."""
    if not settings.tls_cert_file:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
    if settings.tls_client_ca_file:
        context.load_verify_locations(settings.tls_client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["http/1.1"])
    return context


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _signature(settings: Settings) -> tuple[tuple[int, int, int], ...]:
    """The TLS files' inode, size and modification time (a Secret volume swaps a symlink)."""
    out = []
    for path in (settings.tls_cert_file, settings.tls_key_file, settings.tls_client_ca_file):
        if path:
            try:
                st = os.stat(path)
            except OSError:
                return ()
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class _Embedded(uvicorn.Server):
    """uvicorn without its signal handlers: the service's SIGTERM drains every port."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpListener:
    """A running HTTP port: ``port``, and ``stop``."""

    def __init__(
        self,
        server: _Embedded,
        task: asyncio.Task[None],
        port: int,
        settings: Settings,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.server = server
        self.task = task
        self.port = port
        self.settings = settings
        self.tls = tls
        self._files = _signature(settings)

    def reload_tls(self) -> bool:
        """Read the certificate files again when they changed (a renewed Secret): the next
        handshakes use them, open connections keep theirs. Files that do not load (half
        written, a key of another certificate) are ignored until they change again; True when
        new files were loaded."""
        if self.tls is None:
            return False
        files = _signature(self.settings)
        if files == self._files:
            return False
        self._files = files
        try:
            tls_context(self.settings)  # a scratch context first: the live one stays whole
            self.tls.load_cert_chain(self.settings.tls_cert_file, self.settings.tls_key_file)
            if self.settings.tls_client_ca_file:
                self.tls.load_verify_locations(self.settings.tls_client_ca_file)
        except (OSError, ssl.SSLError):
            return False
        return True

    async def stop(self, grace: float | None) -> None:
        """Stop taking connections; calls in flight get ``grace`` seconds (None: as long as
        they take), then are cancelled."""
        if grace is not None and grace <= 0:
            self.server.force_exit = True  # close at once, cancelling what runs
            grace = None
        self.server.config.timeout_graceful_shutdown = None if grace is None else int(grace + 0.999)
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def start_http(app: Any, settings: Settings, port: int | None = None) -> HttpListener:
    """Serve ``app`` on ``settings.host`` and ``port`` (default ``settings.http_port``)."""
    sock = bind(settings.host, settings.http_port if port is None else port)
    tls = tls_context(settings)
    config = uvicorn.Config(
        app,
        http="h11",
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ssl_context_factory=(lambda _config, _default: tls) if tls is not None else None,
    )
    server = _Embedded(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="cpsettle-http")
    while not server.started:
        if task.done():
            task.result()  # its start-up error
            raise RuntimeError("the HTTP port stopped as it started")
        await asyncio.sleep(0.005)
    return HttpListener(server, task, sock.getsockname()[1], settings, tls)
