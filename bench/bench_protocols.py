"""The same tables settled through gRPC, Connect JSON and Connect binary on one server process:
their answers compared, and the server's CPU per call of each.

    python bench/bench_protocols.py [--tables 100] [--rounds 9] [--seed 11]

One real server (``python -m cpsettle_service.server``, JSON log to /dev/null, metrics off) with
its gRPC port and its HTTP/JSON port (``CPSETTLE_HTTP_PORT``). This process is the client:

1. Answers: each of ``--tables`` random legal 4-player tables is settled once through each
   protocol; the three ``SettleResponse`` messages must be equal but for ``issuedAt`` and the
   signature (the same settlement id, nets, items and digests). Prints how many are identical.
2. CPU: in each round, each protocol settles every table once, one call at a time over one kept
   connection (a gRPC channel; an httpx client with keep-alive), the protocols in a new order
   each round; the server's CPU (/proc utime+stime) over those calls, per call. Prints each
   protocol's median over the rounds and its ratio to gRPC's.

Prints only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
for _sub in ("service", "proto", "clients/python", "."):
    sys.path.insert(0, str(ROOT / _sub))

import grpc  # noqa: E402
import httpx  # noqa: E402
from _support import (  # noqa: E402
    SETTLE_METHOD,
    cpu_seconds,
    free_port,
    machine_line,
    random_requests,
    start_server,
)
from google.protobuf import json_format  # noqa: E402

from cpsettle.v1 import settlement_pb2 as pb  # noqa: E402


def comparable(response: pb.SettleResponse) -> bytes:
    copy = pb.SettleResponse()
    copy.CopyFrom(response)
    copy.settlement.ClearField("issued_at")
    copy.settlement.ClearField("signature")
    return copy.SerializeToString(deterministic=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    requests = random_requests(args.tables, args.seed)
    as_json = [
        json_format.MessageToJson(pb.SettleRequest.FromString(r), indent=None).encode()
        for r in requests
    ]
    http_port = free_port()
    server = start_server(
        ["-m", "cpsettle_service.server"], env={"CPSETTLE_HTTP_PORT": str(http_port)}
    )
    url = f"http://127.0.0.1:{http_port}/cpsettle.v1.SettlementService/Settle"
    try:
        with grpc.insecure_channel(server.address) as channel, httpx.Client(timeout=30) as http:
            settle = channel.unary_unary(
                SETTLE_METHOD, request_serializer=None, response_deserializer=None
            )

            def over_grpc(i: int) -> bytes:
                return settle(requests[i], timeout=30)  # type: ignore[no-any-return]

            def over_connect_json(i: int) -> bytes:
                answer = http.post(
                    url, content=as_json[i], headers={"content-type": "application/json"}
                )
                answer.raise_for_status()
                return json_format.Parse(answer.content, pb.SettleResponse()).SerializeToString()

            def over_connect_binary(i: int) -> bytes:
                answer = http.post(
                    url, content=requests[i], headers={"content-type": "application/proto"}
                )
                answer.raise_for_status()
                return answer.content

            protocols: dict[str, Callable[[int], bytes]] = {
                "gRPC": over_grpc,
                "Connect JSON": over_connect_json,
                "Connect binary": over_connect_binary,
            }
            identical = 0
            for i in range(len(requests)):
                answers = {
                    comparable(pb.SettleResponse.FromString(call(i))) for call in protocols.values()
                }
                identical += len(answers) == 1
            per_call: dict[str, list[float]] = {name: [] for name in protocols}
            names = list(protocols)
            for r in range(args.rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                for name in order:
                    call = protocols[name]
                    before = cpu_seconds(server.pid)
                    for i in range(len(requests)):
                        call(i)
                    per_call[name].append((cpu_seconds(server.pid) - before) / len(requests))
                # the load of a shared machine comes and goes: rounds close together in time
                # are compared, so each round's figures are also kept as ratios to its gRPC one
    finally:
        server.stop()

    print(machine_line())
    print(
        f"tables: {args.tables} random legal 4-player tables (seed {args.seed}), "
        f"{args.rounds} rounds"
    )
    print(
        f"answers identical through gRPC, Connect JSON and Connect binary "
        f"(but issuedAt and signature): {identical}/{len(requests)}"
    )
    grpc_rounds = per_call["gRPC"]
    print(
        f"{'protocol':<16}{'server CPU/call':>18}{'vs gRPC':>10}   (median of the rounds; "
        "vs gRPC: median of each round's ratio)"
    )
    for name, values in per_call.items():
        median = statistics.median(values)
        ratio = statistics.median(v / g for v, g in zip(values, grpc_rounds, strict=True))
        print(f"{name:<16}{median * 1000:>15.3f} ms{ratio:>10.2f}")
    print(
        json.dumps(
            {
                "identical": identical,
                "tables": len(requests),
                "cpu_ms_per_call": {
                    k: round(statistics.median(v) * 1000, 4) for k, v in per_call.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
