"""CORS for the Connect port: which web pages may call the service from a browser.

Off by default: with no allowed origin, no response carries CORS headers, so a browser lets no
page of another origin read an answer (and sends no JSON call at all: a JSON POST is always
preflighted). ``CPSETTLE_HTTP_CORS_ORIGINS`` lists the allowed origins exactly as browsers send
them (``https://tables.example.com``; ``*`` for any). An allowed origin's preflight is answered
for POST and GET with the headers a Connect client sends (``connect-rules``: content type,
protocol version, timeout, the bearer token, ``traceparent``); its answers expose the gRPC-Web
status headers. Credentials (cookies) are never allowed: the service authenticates by bearer
token. A small ASGI wrapper, written here rather than taken from a web framework's middleware:
an exact list, one preflight shape, no framework to bring in for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["ALLOWED_HEADERS", "EXPOSED_HEADERS", "MAX_AGE_SECONDS", "Cors"]

# What Connect-ES and gRPC-Web clients send (connectrpc.com/docs/cors), and what we read.
ALLOWED_HEADERS = (
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "authorization",
    "traceparent",
    "tracestate",
    "content-encoding",
    "accept-encoding",
)
EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin")
MAX_AGE_SECONDS = 7200  # how long a browser may keep a preflight's answer (Chromium's cap)

_Send = Callable[[dict[str, Any]], Awaitable[None]]


class Cors:
    """``app`` behind CORS for ``origins`` (see the module's docstring)."""

    def __init__(self, app: Any, origins: tuple[str, ...]) -> None:
        self.app = app
        self.any_origin = "*" in origins
        self.origins = frozenset(o.rstrip("/") for o in origins if o != "*")

    def allowed(self, origin: str) -> bool:
        return bool(origin) and (self.any_origin or origin in self.origins)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: _Send) -> None:
        if scope["type"] != "http" or not (self.any_origin or self.origins):
            await self.app(scope, receive, send)
            return
        origin = ""
        preflight = False
        for key, value in scope.get("headers", ()):
            if key == b"origin":
                origin = value.decode("latin-1")
            elif key == b"access-control-request-method":
                preflight = True
        if scope["method"] == "OPTIONS" and preflight:
            await self._preflight(origin, send)
            return
        if not self.allowed(origin):
            await self.app(scope, receive, send)
            return
        extra = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-expose-headers", ", ".join(EXPOSED_HEADERS).encode()),
            (b"vary", b"Origin"),
        ]

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=[*message.get("headers", ()), *extra])
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(self, origin: str, send: _Send) -> None:
        headers = [(b"vary", b"Origin"), (b"content-length", b"0")]
        if self.allowed(origin):
            headers += [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-allow-methods", b"POST, GET"),
                (b"access-control-allow-headers", ", ".join(ALLOWED_HEADERS).encode()),
                (b"access-control-max-age", str(MAX_AGE_SECONDS).encode()),
            ]
            status = 204
        else:
            status = 403
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
