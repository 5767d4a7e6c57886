"""Times in the contract: ``google.protobuf.Timestamp`` on the wire, one fixed-width text in proof.

A settlement's ``issued_at`` and a key's ``not_before`` / ``not_after`` are Timestamps (seconds
and nanos since the Unix epoch, UTC). What the signature covers, and what key windows compare,
is the time's **fixed-width text**: RFC 3339 in UTC to the millisecond, always three fraction
digits (``2026-11-30T09:31:02.123Z``; ``…:02.000Z`` on a whole second, which protobuf's JSON
printer writes as ``…:02Z``), so texts compare as times and the proof formulas of
docs/AUDIT.md read the same in every language. The service issues whole milliseconds only; a
time with a finer part cannot be written as that text and is refused where it is read.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from ..errors import TimeProblem

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")  # the fixed-width text
NANOS_PER_MS = 1_000_000
_EPOCH = datetime(1970, 1, 1)
# Timestamp's own range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
_MIN_SECONDS, _MAX_SECONDS = -62_135_596_800, 253_402_300_799


def time_text(seconds: int, nanos: int) -> str:
    """The fixed-width text of a time; ``TimeProblem`` if it is not whole milliseconds in range.

    >>> time_text(1_796_031_062, 123_000_000)
    '2026-11-30T09:31:02.123Z'
    >>> time_text(0, 0)
    '1970-01-01T00:00:00.000Z'
    """
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS or not 0 <= nanos < 10**9:
        raise TimeProblem(f"{seconds}s {nanos}ns is outside a Timestamp's range")
    if nanos % NANOS_PER_MS:
        raise TimeProblem(f"{seconds}s {nanos}ns is not a whole millisecond")
    moment = _EPOCH + timedelta(seconds=seconds, milliseconds=nanos // NANOS_PER_MS)
    return moment.isoformat(timespec="milliseconds") + "Z"


def timestamp_text(ts: Timestamp, present: bool = True) -> str:
    """A Timestamp field's fixed-width text; "" when the field is absent (``present`` False)."""
    return time_text(ts.seconds, ts.nanos) if present else ""


def set_timestamp(out: Timestamp, text: str) -> None:
    """Write a fixed-width text (``TIME``) into a Timestamp."""
    moment = datetime.fromisoformat(text.removesuffix("Z"))
    delta = moment - _EPOCH
    out.seconds = delta.days * 86_400 + delta.seconds
    out.nanos = delta.microseconds * 1000


def millis_of_text(text: str) -> int:
    """Milliseconds since the epoch of a fixed-width text (a test's or a tool's fixed clock)."""
    ts = Timestamp()
    set_timestamp(ts, text)
    return ts.seconds * 1000 + ts.nanos // NANOS_PER_MS


def now_ms() -> int:
    """Now, in whole milliseconds since the Unix epoch: the sealer's clock."""
    return int(time.time() * 1000)


_second: list[object] = [None, ""]  # the last second formatted, and its text


def millis_text(ms: int) -> str:
    """The fixed-width text of ``ms`` milliseconds since the epoch (a time of issue): the hot
    path's ``time_text``, formatting the date once a second rather than on every settlement."""
    second, millis = divmod(ms, 1000)
    if second != _second[0]:
        _second[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second[0] = second
    return f"{_second[1]}.{millis:03d}Z"
