"""structlog, configured once: JSON lines when not on a terminal, console output on one.

JSON lines are the leaves of the verifiable audit log (``proof/log.py``): numbered and hashed
into one Merkle tree, written one at a time by the log, whichever logger they come from.

The server writes them from a thread of their own (``background=True``): a sink that blocks
(a pipe nobody reads) or fails (a closed pipe, a full disk) never blocks the event loop. A
settlement is answered only once its ``settlement.issued`` line is written (``audit_written``,
given how many lines must be out); when the log cannot take it, the call fails closed with
UNAVAILABLE. ``audit_append`` appends an audit event and hands back its receipt.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import orjson
import structlog

from ..proof.log import DEFAULT_ORIGIN_PREFIX, InlineSink, Log, Receipt, ThreadSink

_configured = False
_log: Log | None = None
_stamp: Any = None
_level_no = logging.INFO


class _LateResponse(logging.Filter):
    """grpc.aio logs an ERROR with a traceback when a handler's answer reaches a call that has
    already ended (its deadline fired a moment earlier): the client already has
    DEADLINE_EXCEEDED, so it becomes one plain info line instead (the settlement the answer
    carried gets its ``settlement.not_delivered`` line from the call's done callback:
    api/servicer.py)."""

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


class _LogHandler(logging.Handler):
    """Standard-library records (grpc's own) as log lines, in the structlog line's shape."""

    def __init__(self, log: Log, stamp: Any) -> None:
        super().__init__()
        self.log = log
        self.stamp = stamp

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event: dict[str, Any] = {
                "event": record.getMessage(),
                "level": record.levelname.lower(),
                "logger": record.name,
            }
            if record.exc_info:
                event["exc_info"] = record.exc_info
            stamped = structlog.processors.format_exc_info(None, "", self.stamp(None, "", event))
            self.log.emit(dict(stamped))
        except Exception:  # logging never raises into the caller
            self.handleError(record)


def configure(
    level: str = "info",
    fmt: str = "auto",
    stream: Any = None,
    checkpoint_every: int = 1000,
    background: bool = False,
    queue_lines: int = 2048,
    stall_seconds: float = 0.5,
    origin_prefix: str = DEFAULT_ORIGIN_PREFIX,
) -> None:
    """Configure structlog for the process (idempotent; later calls reconfigure). JSON lines
    are leaves of the audit log, new at each call (a new process start), whose origin is
    ``origin_prefix`` + "/" + a random id; a checkpoint every ``checkpoint_every`` lines.
    ``background``: JSON lines go to the stream's file descriptor from a writer thread (at most
    ``queue_lines`` waiting; a write blocked for ``stall_seconds`` marks the log stuck)."""
    global _configured, _log, _stamp, _level_no
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
        _log = None
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
        log = Log(
            render,
            lambda: stamp(None, "", {})["timestamp"],
            checkpoint_every,
            sink,
            origin_prefix=origin_prefix,
        )

        def final(logger: Any, name: str, event: dict[str, Any]) -> Any:
            log.emit(event)
            raise structlog.DropEvent

        handler = _LogHandler(log, stamp)
        _log = log
    _stamp, _level_no = stamp, level_no
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


def audit_log() -> Log | None:
    """The process's audit log (None when logging to a terminal in console form)."""
    return _log


def audit_size() -> int:
    """How many lines the audit log has appended so far (0 without one)."""
    log = _log
    return log.size if log is not None else 0


async def audit_written(count: int, timeout: float) -> None:
    """Until the audit log's first ``count`` lines are written (LogUnavailable after
    ``timeout`` seconds); at once without a log or when lines are written inline."""
    log = _log
    if log is not None and count:
        await log.written(count, timeout)


def audit_append(name: str, level: str, fields: dict[str, Any]) -> Receipt | None:
    """Append the audit event ``name`` (``level`` info or warning) with ``fields`` and the
    call's context, as structlog would write it; its receipt (None: no audit log, or the level
    filters it out). Raises LogUnavailable for a required event the log cannot take."""
    log = _log
    if log is None:
        getattr(get_logger("cpsettle.audit"), level)(name, **fields)
        return None
    if logging.getLevelNamesMapping()[level.upper()] < _level_no:
        return None
    event = structlog.contextvars.get_contextvars()
    event.update(fields)
    event["event"] = name
    event["level"] = level
    return log.emit(_stamp(None, level, event))


def get_logger(name: str = "cpsettle") -> Any:
    return structlog.get_logger(name)
