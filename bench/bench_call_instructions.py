"""Server instructions per Settle call, per preset, counted by callgrind: the whole call.

``bench_settle_instructions.py`` counts the engine alone; this counts everything the server
process does for one Settle call over the network: grpc and asyncio, the interceptor, the log
lines, parsing, mapping, the engine, the response bytes, sealing, metrics. The real server
(``python -m cpsettle_service.server``, production settings, log as JSON to /dev/null) runs under
``valgrind --tool=callgrind`` with the hash seed fixed and address randomization off. This
process is the client: for each preset it sends N random legal 4-player tables once (warm-up),
has callgrind dump and zero its counters (``callgrind_control --dump``), sends the same N tables
again (interval A), dumps, sends them twice more (interval B), dumps. B − A is the cost of
settling the same N tables once more, whatever the dumps and the idle server cost; ÷ N is the
instructions of one call, every thread of the server included.

    python bench/bench_call_instructions.py [--calls 50] [--presets western ofc ...]
    python bench/bench_call_instructions.py --source OTHER_CHECKOUT   # that checkout's server too

``--source``: also run the server of another checkout (its service/, proto/ and clients/python,
with its own .venv when it has one), in the same run, on the same tables (as that checkout's
client writes them), and print base, now and now/base per preset. Needs valgrind and setarch
(util-linux). Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _support import SETTLE_METHOD, free_port, wait_serving  # noqa: E402

SEED = 7
PATHS = ("service", "proto", "clients/python")


def presets_of(root: Path) -> list[str]:
    presets = root / "service/cpsettle_service/domain/presets"
    return [p.stem for p in sorted(presets.glob("*.json"))]


def python_of(root: Path) -> str:
    venv = root / ".venv/bin/python"
    return str(venv) if venv.exists() else sys.executable


# --------------------------------------------------------------------------- the requests


def write_requests(root: Path, preset: str, count: int) -> None:
    """(Inner mode.) ``count`` random legal tables of ``preset`` as ``root``'s client writes
    them, to stdout, each as a 4-byte length and the SettleRequest's bytes. The tables come from
    this checkout's generator, so every source settles the same deals."""
    import random

    # The tables from this checkout's generator and packages (the layout may differ from the
    # source's), then written by the source's own client.
    sys.path.append(str(ROOT))
    from tests.support.random_tables import random_table

    for name in [
        m
        for m in sys.modules
        if m.split(".")[0] in ("cpsettle", "cpsettle_service", "cpsettle_client")
    ]:
        del sys.modules[name]
    for sub in PATHS:
        sys.path.insert(0, str(root / sub))
    from cpsettle_client.client import request_from_json

    rng = random.Random(SEED)
    out = sys.stdout.buffer
    for i in range(count):
        table = random_table(rng, 4, preset=preset)
        table["handId"] = f"calls-{preset}-{i}"
        data = request_from_json(table).SerializeToString()
        out.write(struct.pack(">I", len(data)) + data)
    out.flush()


def requests_for(root: Path, preset: str, count: int) -> list[bytes]:
    data = subprocess.run(
        [python_of(root), __file__, "--write-requests", str(root), preset, str(count)],
        capture_output=True,
        check=True,
        cwd=str(ROOT),
    ).stdout
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from(">I", data, at)
        out.append(data[at + 4 : at + 4 + n])
        at += 4 + n
    return out


# --------------------------------------------------------------------------- one server


def totals(path: Path) -> int:
    """The instruction total of one callgrind dump file."""
    text = path.read_text("utf-8", "replace")
    match = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if match is None:
        raise RuntimeError(f"no totals in {path}")
    return int(match.group(1))


def measure(root: Path, presets: list[str], calls: int, work: Path) -> dict[str, float]:
    """Instructions per Settle call of ``root``'s server, per preset."""
    import grpc

    port = free_port()
    out_file = work / "callgrind.out"
    # the timed audit-log line: the chain's head before issue 26, the checkpoint after
    config = (root / "service" / "cpsettle_service" / "config.py").read_text("utf-8")
    clock = (
        "CPSETTLE_AUDIT_CHECKPOINT_SECONDS"
        if "audit_checkpoint_seconds" in config
        else "CPSETTLE_AUDIT_HEAD_SECONDS"
    )
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(root / d) for d in PATHS),
        PYTHONHASHSEED="0",
        CPSETTLE_HOST="127.0.0.1",
        CPSETTLE_PORT=str(port),
        CPSETTLE_METRICS_PORT="0",
        CPSETTLE_LOG_FORMAT="json",
        # under valgrind everything is ~50x slower: no timing may fail a call, and nothing may
        # run on a clock (the audit chain's timed head) rather than per call
        CPSETTLE_AUDIT_LOG_STALL_SECONDS="600",
        CPSETTLE_DEFAULT_DEADLINE_SECONDS="600",
        **{clock: "100000"},
    )
    cmd = [
        "setarch",
        platform.machine(),
        "-R",
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        python_of(root),
        "-m",
        "cpsettle_service.server",
    ]
    with open(work / "valgrind.log", "wb") as err:  # the child keeps its own copy
        proc = subprocess.Popen(cmd, env=env, cwd=str(root), stdout=subprocess.DEVNULL, stderr=err)

    class Server:  # what wait_serving reads
        address = f"127.0.0.1:{port}"

        def __init__(self) -> None:
            self.proc = proc

        def log_tail(self) -> str:
            return (work / "valgrind.log").read_text("utf-8", "replace")[-2000:]

    dumps = 0

    def dump() -> int:
        nonlocal dumps
        before = set(work.glob("callgrind.out.*"))
        subprocess.run(
            ["callgrind_control", "--dump", str(proc.pid)], check=True, capture_output=True
        )
        dumps += 1
        for _ in range(600):
            new = set(work.glob("callgrind.out.*")) - before
            if new:
                path = new.pop()
                time.sleep(0.5)  # written whole before it is read
                return totals(path)
            time.sleep(0.1)
        raise RuntimeError("callgrind wrote no dump")

    result: dict[str, float] = {}
    try:
        wait_serving(Server(), 600)  # type: ignore[arg-type]
        with grpc.insecure_channel(Server.address) as channel:
            call = channel.unary_unary(SETTLE_METHOD)

            def send(requests: list[bytes]) -> None:
                for r in requests:
                    call(r, timeout=600)

            for preset in presets:
                requests = requests_for(root, preset, calls)
                send(requests)  # warm-up: every table once
                dump()
                send(requests)
                a = dump()
                send(requests)
                send(requests)
                b = dump()
                result[preset] = (b - a) / calls
    finally:
        proc.terminate()
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=50, help="tables per preset (N)")
    ap.add_argument("--presets", nargs="*", default=None)
    ap.add_argument("--source", default="", help="another checkout to measure beside this one")
    ap.add_argument("--write-requests", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_requests:
        root, preset, count = args.write_requests
        write_requests(Path(root), preset, int(count))
        return
    presets = args.presets or presets_of(ROOT)
    roots = [ROOT] + ([Path(args.source).resolve()] if args.source else [])
    with tempfile.TemporaryDirectory(prefix="call-instr-") as tmp:
        works = []
        for i, _ in enumerate(roots):
            works.append(Path(tmp) / str(i))
            works[-1].mkdir()
        with ThreadPoolExecutor(max_workers=len(roots)) as pool:
            figures = list(
                pool.map(
                    lambda rw: measure(rw[0], presets, args.calls, rw[1]),
                    zip(roots, works, strict=True),
                )
            )
    print(
        f"callgrind, server instructions per Settle call ({args.calls} warm random legal "
        f"4-player tables per preset, sequential calls), PYTHONHASHSEED=0, no ASLR"
    )
    now = figures[0]
    if len(figures) == 1:
        print(f"{'preset':<16} {'instructions/call':>18}")
        for p in presets:
            print(f"{p:<16} {now[p]:>18,.0f}")
        return
    base = figures[1]
    print(f"{'preset':<16} {'base':>12} {'now':>12} {'now/base':>9}")
    for p in presets:
        print(f"{p:<16} {base[p]:>12,.0f} {now[p]:>12,.0f} {now[p] / base[p]:>9.2f}")


if __name__ == "__main__":
    main()
