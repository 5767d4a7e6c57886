"""Bench-only server: the real cpsettle server plus a trivial ``/bench.Echo/Echo`` RPC.

    PYTHONPATH=service:proto:clients/python CPSETTLE_PORT=50099 CPSETTLE_METRICS_PORT=0 \\
        python bench/bench_server.py --echo-request examples/tables/western.json

The server is built exactly as in production, by ``cpsettle_service.server.build_server(settings)``
with settings from the CPSETTLE_* environment (same grpc.aio options, same
``ServiceInterceptor``, same logging). On top of it, a generic handler answers
``/bench.Echo/Echo`` with identity (de)serializers: it ignores the request bytes and returns a
pre-serialized response: the bytes this server itself answered to one Settle call on
``--echo-request`` at start, so its messages are exactly the sizes of a real Settle call. Since
the handler is on the same server, the interceptor wraps it too (metrics, log line, error mapping).

Never used in production: only bench/bench_grpc.py starts it. SIGTERM drains and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _sub in ("service", "proto", "clients/python"):
    if str(ROOT / _sub) not in sys.path:
        sys.path.insert(0, str(ROOT / _sub))

import grpc  # noqa: E402

from cpsettle.v1 import settlement_pb2 as pb  # noqa: E402
from cpsettle_service.config import Settings  # noqa: E402
from cpsettle_service.observability.logging import configure, get_logger  # noqa: E402
from cpsettle_service.server import build_server, load_registry  # noqa: E402

ECHO_SERVICE = "bench.Echo"
SETTLE_METHOD = "/cpsettle.v1.SettlementService/Settle"


def echo_handler(response: bytes) -> grpc.GenericRpcHandler:
    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return response

    return grpc.method_handlers_generic_handler(
        ECHO_SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(
                echo, request_deserializer=None, response_serializer=None
            )
        },
    )


def load_request(path: Path) -> pb.SettleRequest:
    data = path.read_bytes()
    if path.suffix == ".json":
        from cpsettle_client.client import request_from_json

        return request_from_json(data.decode("utf-8"))
    return pb.SettleRequest.FromString(data)


async def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    configure(settings.log_level, settings.log_format)
    registry = load_registry(settings)
    request = load_request(Path(args.echo_request))

    running = await build_server(settings, registry)
    # The Echo answer is what this very server answers to Settle for the table (whatever the
    # build adds: audit digests, signature), fetched once over a channel to itself.
    host = "127.0.0.1" if settings.host in ("", "0.0.0.0", "::") else settings.host
    target = settings.address if settings.unix_socket else f"{host}:{running.port}"
    async with grpc.aio.insecure_channel(target) as channel:
        echo_bytes = await channel.unary_unary(SETTLE_METHOD)(
            request.SerializeToString(), timeout=30
        )
    running.server.add_generic_rpc_handlers((echo_handler(echo_bytes),))
    get_logger("cpsettle.bench").info(
        "bench.server.started",
        port=running.port,
        echo_response_bytes=len(echo_bytes),
        echo_request_bytes=len(request.SerializeToString()),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.drain()
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--echo-request",
        default=str(ROOT / "examples/tables/western.json"),
        help="SettleRequest as JSON (.json) or wire bytes (any other suffix)",
    )
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
