"""Hostile requests within the size limit: their server CPU, and a live Settle beside them.

    python bench/bench_hostile.py [--repeat 20] [--live 300] [--server-source CHECKOUT]

1. For each hostile request (invalid in bulk, a profile padded with junk, a new maximal valid
   profile every call), the server process's CPU per call: /proc utime+stime over ``--repeat``
   calls, one at a time. Target (issue #13): under 20 ms each.
2. A live Settle's latency alone, then with 8 of the most expensive hostile request in flight
   all the time (8 client threads), ``--live`` calls each, in one run. Target: p99 with the
   hostile load under 50 ms.

``--server-source``: run the server from another checkout (its service/ and proto/), e.g. the
code before a change (``git worktree add ../before main``), to compare; the requests are this
checkout's.

Prints figures and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from _support import (
    ROOT,
    SETTLE_METHOD,
    cpu_seconds,
    machine_line,
    percentile,
    request_bytes,
    start_server,
)


def hostile_requests() -> dict[str, tuple[str, Callable[[int], bytes]]]:
    """name -> (method, a function of the call's number giving the request bytes)."""
    from cpsettle_client.client import request_from_json
    from tests.hardening.hostile import bulk_requests, maximal_profile
    from tests.support.tables import table

    out: dict[str, tuple[str, Callable[[int], bytes]]] = {}
    for name, (method, request) in bulk_requests().items():
        data = request.SerializeToString()
        out[name] = (method, lambda n, data=data: data)
    junk = table(profileOverrides={f"junk{i}": i for i in range(1_500)})
    data = request_from_json(junk).SerializeToString()
    out["1,500 unknown override fields"] = ("Settle", lambda n, data=data: data)

    def maximal(n: int) -> bytes:
        request = table()
        del request["preset"]
        request["profile"] = maximal_profile(n)
        return request_from_json(request).SerializeToString()

    out["a new maximal valid profile"] = ("Settle", maximal)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--live", type=int, default=300)
    parser.add_argument("--hostile", default=None,
                        help="the request kept in flight (default: the most expensive)")
    parser.add_argument("--server-source", default=None,
                        help="a checkout whose service/ and proto/ the server runs from")
    args = parser.parse_args()

    import grpc

    print(machine_line())
    env = {}
    if args.server_source:
        root = Path(args.server_source).resolve()
        env["PYTHONPATH"] = os.pathsep.join(str(root / d) for d in ("service", "proto"))
        print(f"server from {root}")
    server = start_server(["-m", "cpsettle_service.server"], env)
    try:
        channel = grpc.insecure_channel(server.address)
        calls: dict[str, Any] = {}

        def call(method: str) -> Any:
            if method not in calls:
                calls[method] = channel.unary_unary(f"/cpsettle.v1.SettlementService/{method}")
            return calls[method]

        live = channel.unary_unary(SETTLE_METHOD)
        good = request_bytes(ROOT / "examples" / "tables" / "western.json")
        for _ in range(50):
            live(good, timeout=10)

        print(f"\nserver CPU per hostile call ({args.repeat} calls each, one at a time):")
        costs: dict[str, float] = {}
        serial = iter(range(10**9))
        for name, (method, make) in hostile_requests().items():
            payloads = [make(next(serial)) for _ in range(args.repeat)]
            codes = set()
            before = cpu_seconds(server.pid)
            for data in payloads:
                try:
                    call(method)(data, timeout=30)
                    codes.add("OK")
                except grpc.RpcError as e:
                    codes.add(e.code().name)
            costs[name] = (cpu_seconds(server.pid) - before) / args.repeat * 1000
            print(f"  {name:32s} {costs[name]:7.2f} ms  ({', '.join(sorted(codes))})")
        worst = max(costs, key=lambda k: costs[k])
        print(f"  most expensive: {worst}, {costs[worst]:.2f} ms (target < 20 ms)")

        def latencies() -> list[float]:
            out = []
            for _ in range(args.live):
                start = time.perf_counter()
                live(good, timeout=30)
                out.append((time.perf_counter() - start) * 1000)
            return sorted(out)

        alone = latencies()
        stop = threading.Event()
        if args.hostile:
            worst = args.hostile
        method, make = hostile_requests()[worst]
        # built beforehand, so that the client's own work does not slow the live calls it
        # measures; 400 distinct requests, more than the profile cache keeps
        payloads = [make(next(serial)) for _ in range(400)]
        hostile = call(method)

        answered = [0] * 8

        def attacker(k: int) -> None:
            i = k
            while not stop.is_set():
                try:
                    hostile(payloads[i % len(payloads)], timeout=30)
                except grpc.RpcError:
                    pass
                answered[k] += 1
                i += 8

        threads = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        began, before = time.perf_counter(), sum(answered)
        loaded = latencies()
        hostile_rate = (sum(answered) - before) / (time.perf_counter() - began)
        stop.set()
        for t in threads:
            t.join(30)
        print(f"\nlive Settle latency, {args.live} calls ({worst!r} x 8 in flight):")
        for label, q in (("p50", 50), ("p99", 99)):
            a, b = percentile(alone, q), percentile(loaded, q)
            print(f"  {label}: alone {a:6.2f} ms, beside 8 hostile {b:6.2f} ms ({b / a:.1f}x)")
        print("  target: p99 beside 8 hostile < 50 ms")
        print(f"  hostile calls answered meanwhile: {hostile_rate:.0f}/s")
        channel.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
