"""structlog, configured once: JSON lines when not on a terminal, console output on one."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import orjson
import structlog

_configured = False


class _LateResponse(logging.Filter):
    """grpc.aio logs an ERROR with a traceback when a handler's answer reaches a call that has
    already ended (its deadline fired a moment earlier): nothing is lost — the client already
    has DEADLINE_EXCEEDED — so it becomes one plain info line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if record.name.startswith("grpc.") and type(error).__name__ == "ExecuteBatchError":
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


def configure(level: str = "info", fmt: str = "auto", stream: Any = None) -> None:
    """Configure structlog for the process (idempotent; later calls reconfigure)."""
    global _configured
    stream = stream if stream is not None else sys.stdout
    if fmt == "auto":
        fmt = "console" if getattr(stream, "isatty", lambda: False)() else "json"
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=False)
        if fmt == "console"
        else structlog.processors.JSONRenderer(serializer=_dumps)
    )
    # Libraries that log through the standard library (grpc's own errors) come out in the same
    # form, on the same stream, instead of as bare text on stderr.
    handler = logging.StreamHandler(stream)
    handler.addFilter(_LateResponse())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
            ],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.getLevelNamesMapping()[level.upper()])
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(name: str = "cpsettle") -> Any:
    return structlog.get_logger(name)
