"""structlog, configured once: JSON lines when not on a terminal, console output on one.

JSON lines are links of the audit chain (``audit_chain.py``): numbered, each with the hash of the
line before, written one at a time by the chain, whichever logger they come from.

The server writes them from a thread of their own (``background=True``): a sink that blocks
(a pipe nobody reads) or fails (a closed pipe, a full disk) never blocks the event loop. A
settlement is answered only once its ``settlement.issued`` line is written (``audit_written``);
when the log cannot take it, the call fails closed with UNAVAILABLE.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import orjson
import structlog

from ..proof.events import log_not_delivered
from ..proof.log import Chain, InlineSink, ThreadSink, last_seq
from ..proof.seal import last_issued

_configured = False
_chain: Chain | None = None


class _LateResponse(logging.Filter):
    """grpc.aio logs an ERROR with a traceback when a handler's answer reaches a call that has
    already ended (its deadline fired a moment earlier): the client already has
    DEADLINE_EXCEEDED, so it becomes one plain info line instead; a settlement the answer
    carried gets its ``settlement.not_delivered`` line (grpc logs this in the call's own task,
    so the call's last sealed settlement is still in its context)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if record.name.startswith("grpc.") and type(error).__name__ == "ExecuteBatchError":
            issued = last_issued.get()
            if issued is not None:
                last_issued.set(None)
                log_not_delivered(get_logger("cpsettle.audit"), [issued], "deadline_exceeded",
                                  "the call had ended when its answer was sent")
            original = record.getMessage()
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = "response not sent: the call had already ended (%s)"
            record.args = (original,)
        return True


def _dumps(event: Any, **kw: Any) -> str:
    """JSON through orjson (structlog's performance advice: about half the cost of json.dumps
    for an audit event); non-JSON values go through structlog's fallback (``default``).
    What orjson refuses (ints beyond 64 bits, non-string keys) goes through ``json``."""
    try:
        return orjson.dumps(event, **kw).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(event, **kw)


class _ChainHandler(logging.Handler):
    """Standard-library records (grpc's own) as chain links, in the structlog line's shape."""

    def __init__(self, chain: Chain, stamp: Any) -> None:
        super().__init__()
        self.chain = chain
        self.stamp = stamp

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event: dict[str, Any] = {"event": record.getMessage(),
                                     "level": record.levelname.lower(), "logger": record.name}
            if record.exc_info:
                event["exc_info"] = record.exc_info
            stamped = structlog.processors.format_exc_info(None, "", self.stamp(None, "", event))
            self.chain.emit(dict(stamped))
        except Exception:  # noqa: BLE001 — logging never raises into the caller
            self.handleError(record)


def configure(level: str = "info", fmt: str = "auto", stream: Any = None,
              head_every: int = 1000, background: bool = False, queue_lines: int = 2048,
              stall_seconds: float = 0.5) -> None:
    """Configure structlog for the process (idempotent; later calls reconfigure). JSON lines
    are chained; the chain is new at each call (a new process start). ``background``: JSON
    lines go to the stream's file descriptor from a writer thread (at most ``queue_lines``
    waiting; a write blocked for ``stall_seconds`` marks the log stuck)."""
    global _configured, _chain
    stream = stream if stream is not None else sys.stdout
    if fmt == "auto":
        fmt = "console" if getattr(stream, "isatty", lambda: False)() else "json"
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    level_no = logging.getLevelNamesMapping()[level.upper()]
    root = logging.getLogger()
    final: Any
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=False)
        # Libraries that log through the standard library (grpc's own errors) come out in the
        # same form, on the same stream, instead of as bare text on stderr.
        handler: logging.Handler = logging.StreamHandler(stream)
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=[
                    structlog.stdlib.add_log_level,
                    structlog.stdlib.add_logger_name,
                    stamp,
                    structlog.processors.format_exc_info,
                ],
                processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            )
        )
        final = renderer
        _chain = None
    else:
        json_renderer = structlog.processors.JSONRenderer(serializer=_dumps)

        def write(text: str) -> None:
            stream.write(text)
            stream.flush()

        def render(event: dict[str, Any]) -> str:
            return str(json_renderer(None, "", event))

        sink: InlineSink | ThreadSink
        fileno = getattr(stream, "fileno", None)
        if background and fileno is not None:
            stream.flush()
            sink = ThreadSink(fileno(), queue_lines, stall_seconds)
        else:
            sink = InlineSink(write)
        chain = Chain(None, render, lambda: stamp(None, "", {})["timestamp"], head_every, sink)

        def final(logger: Any, name: str, event: dict[str, Any]) -> Any:
            chain.emit(event)
            raise structlog.DropEvent

        handler = _ChainHandler(chain, stamp)
        _chain = chain
    handler.addFilter(_LateResponse())
    root.handlers = [handler]
    root.setLevel(level_no)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            final,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    _configured = True


def chain() -> Chain | None:
    """The process's audit chain (None when logging to a terminal in console form)."""
    return _chain


async def audit_written(timeout: float) -> None:
    """Until the last audit line this call linked is written (LogUnavailable after
    ``timeout`` seconds); at once when nothing is chained or the lines are written inline."""
    c = _chain
    seq = last_seq.get()
    if c is not None and seq:
        await c.written(seq, timeout)


def get_logger(name: str = "cpsettle") -> Any:
    return structlog.get_logger(name)
