"""The metrics endpoint, served from the event loop: no thread per connection.

``prometheus_client.start_http_server`` runs a threading HTTP server: 800 half-open requests
made 800 threads. Here each connection is a coroutine on the server's own event loop, with a
bound on open connections, on the request head's size, and on the time to send it; rendering
the registry takes a few milliseconds of the loop per scrape (a scrape every few seconds).
"""

from __future__ import annotations

import asyncio

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

MAX_CONNECTIONS = 64  # open at once; more are closed at once, without a reply
HEAD_SECONDS = 5.0  # to send the request head, and to take the reply
HEAD_BYTES = 8192  # a scrape's request head is a few hundred bytes


def _reply(status: str, body: bytes, content_type: str = "text/plain; charset=utf-8") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def start_metrics_server(
    host: str, port: int, registry: CollectorRegistry
) -> asyncio.AbstractServer:
    """Listen on ``host:port``; ``GET /metrics`` (or ``/``) answers the registry's text."""
    open_now = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now
        if open_now >= MAX_CONNECTIONS:
            writer.close()
            return
        open_now += 1
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
            method, _, rest = head.partition(b" ")
            path = rest.split(b" ", 1)[0].split(b"?", 1)[0]
            if method not in (b"GET", b"HEAD"):
                answer = _reply("405 Method Not Allowed", b"GET only\n")
            elif path not in (b"/metrics", b"/"):
                answer = _reply("404 Not Found", b"see /metrics\n")
            else:
                answer = _reply("200 OK", generate_latest(registry), CONTENT_TYPE_LATEST)
                if method == b"HEAD":
                    answer = answer.partition(b"\r\n\r\n")[0] + b"\r\n\r\n"
            writer.write(answer)
            await asyncio.wait_for(writer.drain(), HEAD_SECONDS)
        except (
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
        ):
            pass  # a slow, broken or oversized request: closed without a reply
        finally:
            open_now -= 1
            writer.close()

    return await asyncio.start_server(handle, host, port, limit=HEAD_BYTES)
