"""The log writer at its edges (issue 26, part 7): a full file (a file-size limit stands in for a
full disk: the same partial write, then the same error) leaves no torn line, before or after
room comes back, and a process that ends with its writer stuck exits without "Event loop is
closed" from the writer thread."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.server_process import ROOT

SCRIPT = textwrap.dedent("""
    import asyncio, json, os, resource, signal, sys, time
    sys.path[:0] = [{paths}]
    from cpsettle_service.proof.log import Log, ThreadSink
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    sink = ThreadSink(fd, capacity=4096, stall_seconds=30)
    log = Log(lambda e: json.dumps(e), lambda: "t", 10_000, sink)
    for i in range(20):
        log.emit({{"event": "before", "n": i, "pad": "x" * 50}})
    sink.flush(5)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(sys.argv[1]) + 130, hard))

    async def main():
        for i in range(8):
            try:
                r = log.emit({{"event": "full", "n": i, "pad": "y" * 50}})
            except Exception as e:
                print("refused", type(e).__name__)
                continue
            try:
                await log.written(r.index + 1, 0.2)
            except Exception as e:
                print("unwritten", type(e).__name__)
    asyncio.run(main())
    time.sleep(0.3)
    if sys.argv[2] == "room":
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
        print("flushed", sink.flush(10))
    else:
        print("flushed", sink.flush(0.5))
""")


def _run(tmp: Path, mode: str) -> tuple[list[bytes], str]:
    script = tmp / "writer.py"
    paths = ", ".join(repr(str(ROOT / d)) for d in ("service", "proto"))
    script.write_text(SCRIPT.format(paths=paths))
    out = tmp / f"{mode}.log"
    done = subprocess.run(
        [sys.executable, str(script), str(out), mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out.read_bytes().split(b"\n"), done.stdout + done.stderr


def test_a_full_file_leaves_whole_lines_and_they_are_written_when_room_comes(
    tmp_path: Path,
) -> None:
    lines, output = _run(tmp_path, "room")
    assert lines[-1] == b""  # the file ends with a line feed: no torn line
    events = [json.loads(x) for x in lines[:-1]]  # every line is whole JSON
    assert [e["index"] for e in events] == list(range(len(events)))
    assert len(events) >= 21 and "flushed True" in output
    assert "Event loop is closed" not in output and "Traceback" not in output


def test_a_process_that_ends_with_the_file_still_full_leaves_no_torn_line(tmp_path: Path) -> None:
    lines, output = _run(tmp_path, "full")
    assert lines[-1] == b""
    events = [json.loads(x) for x in lines[:-1]]
    assert [e["index"] for e in events] == list(range(len(events)))
    assert "flushed False" in output
    assert "Event loop is closed" not in output and "Traceback" not in output
