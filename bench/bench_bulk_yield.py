"""Benchmark: live Settle latency with and without one bulk re-audit stream beside it.

    python bench/bench_bulk_yield.py [--live 4] [--think-ms 5] [--seconds 5] [--rounds 3]
                                     [--batch 100] [--seed 7] [--server-source CHECKOUT]

Starts ONE server process (``python -m cpsettle_service.server`` on 127.0.0.1, production
defaults, metrics off, the audit log to /dev/null) and drives it from this process over
loopback with grpc.aio:

- ``--live`` live callers, each a closed loop of unary Settle calls (a random legal 4-player
  table each, 10 s deadline) with ``--think-ms`` between calls, as tables at a casino send them;
- in alternate phases of ``--seconds`` each (``--rounds`` of each, alone first), one bulk
  SettleStream beside them, sending batches of ``--batch`` hands back to back (a re-audit).

``--server-source``: run the server from another checkout (its service/ and proto/), e.g. the
code before a change, to compare.

Prints the live calls' p50 / p99 / max alone and with the bulk stream, the bulk stream's
hands/s, and the ratio live p99 with bulk / live p99 alone (issue #13's target: at most 2x).
Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from _support import (
    SETTLE_METHOD,
    machine_line,
    percentile,
    random_requests,
    start_server,
)

from cpsettle.v1 import settlement_pb2 as pb

STREAM_METHOD = "/cpsettle.v1.SettlementService/SettleStream"


async def live_caller(
    channel: grpc.aio.Channel,
    requests: list[bytes],
    offset: int,
    think: float,
    stop: asyncio.Event,
    out: list[float],
    errors: list[str],
) -> None:
    call = channel.unary_unary(SETTLE_METHOD, request_serializer=None, response_deserializer=None)
    i = offset
    while not stop.is_set():
        start = time.perf_counter()
        try:
            await call(requests[i % len(requests)], timeout=10)
            out.append(time.perf_counter() - start)
        except grpc.RpcError as e:
            errors.append(e.code().name)
        i += 7
        await asyncio.sleep(think)


async def bulk_stream(channel: grpc.aio.Channel, batches: list[bytes], stop: asyncio.Event) -> int:
    """One SettleStream, batches back to back until ``stop``; the number of hands answered."""
    call = channel.stream_stream(STREAM_METHOD, request_serializer=None, response_deserializer=None)
    hands_per_batch = len(pb.SettleStreamRequest.FromString(batches[0]).items)
    stream = call(timeout=600)
    answered = 0
    i = 0
    while not stop.is_set():
        await stream.write(batches[i % len(batches)])
        await stream.read()
        answered += hands_per_batch
        i += 1
    await stream.done_writing()
    return answered


async def phase(
    address: str, requests: list[bytes], batches: list[bytes] | None, args: argparse.Namespace
) -> tuple[list[float], list[str], float]:
    stop = asyncio.Event()
    latencies: list[float] = []
    errors: list[str] = []
    async with (
        grpc.aio.insecure_channel(address) as live,
        grpc.aio.insecure_channel(address) as bulk,
    ):
        callers = [
            asyncio.create_task(
                live_caller(live, requests, n, args.think_ms / 1000, stop, latencies, errors)
            )
            for n in range(args.live)
        ]
        streamer = (
            asyncio.create_task(bulk_stream(bulk, batches, stop)) if batches is not None else None
        )
        start = time.perf_counter()
        await asyncio.sleep(args.seconds)
        stop.set()
        await asyncio.gather(*callers)
        hands = await streamer if streamer is not None else 0
        elapsed = time.perf_counter() - start
    return latencies, errors, hands / elapsed


def figures(values: list[float]) -> tuple[float, float, float]:
    s = sorted(values)
    return percentile(s, 50) * 1000, percentile(s, 99) * 1000, s[-1] * 1000


async def run(args: argparse.Namespace) -> None:
    requests = random_requests(2000, args.seed)
    items = [
        pb.AuditItem(ref=f"bulk-{i}", request=pb.SettleRequest.FromString(r))
        for i, r in enumerate(random_requests(args.batch * 10, args.seed + 1))
    ]
    batches = [
        pb.SettleStreamRequest(items=items[k : k + args.batch]).SerializeToString()
        for k in range(0, len(items), args.batch)
    ]
    env = {}
    if args.server_source:
        root = Path(args.server_source).resolve()
        env["PYTHONPATH"] = os.pathsep.join(str(root / d) for d in ("service", "proto"))
    server = start_server(["-m", "cpsettle_service.server"], env)
    try:
        await phase(
            server.address, requests, None, argparse.Namespace(**{**vars(args), "seconds": 1})
        )  # warm
        alone: list[float] = []
        beside: list[float] = []
        errors: list[str] = []
        rates = []
        for _ in range(args.rounds):
            lat, err, _ = await phase(server.address, requests, None, args)
            alone += lat
            errors += err
            lat, err, rate = await phase(server.address, requests, batches, args)
            beside += lat
            errors += err
            rates.append(rate)
    finally:
        server.stop()
    print(machine_line())
    print(
        f"{args.live} live callers ({args.think_ms} ms between calls), one bulk stream of "
        f"{args.batch}-hand batches, {args.rounds} x {args.seconds} s per phase"
    )
    a50, a99, amax = figures(alone)
    b50, b99, bmax = figures(beside)
    print(
        f"live alone:           {len(alone):6d} calls  p50 {a50:7.2f} ms  p99 {a99:7.2f} ms  "
        f"max {amax:7.2f} ms"
    )
    print(
        f"live beside the bulk: {len(beside):6d} calls  p50 {b50:7.2f} ms  p99 {b99:7.2f} ms  "
        f"max {bmax:7.2f} ms"
    )
    print(f"bulk stream: {sum(rates) / len(rates):.0f} hands/s while the live calls ran")
    print(f"errors: {len(errors)} {sorted(set(errors))}")
    print(
        f"ratio live p99 with bulk / alone: {b99 / a99:.2f} (target <= 2)  "
        f"p50 ratio: {b50 / a50:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--live", type=int, default=4)
    parser.add_argument("--think-ms", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--server-source", default="", help="a checkout to run the server from")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
