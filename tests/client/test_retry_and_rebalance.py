"""Clients that rebalance and retry (README, "Rebalancing and retries").

Rebalance: two real servers behind one address (a TCP proxy that hands each new connection to
the next server in turn, as a Kubernetes Service spreads connections over pods). A long-lived
client reaches both within a few connection ages; with no maximum age it stays on one.

Retry: a gRPC server in front of the real one refuses the first attempts of a call (as a
replica at capacity or going away would); the client's service config retries them, with
backoff, and the call succeeds. A request the server refuses as too large is not retried.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from grpc_status import rpc_status

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.api.interceptors import error_status
from tests.conftest import ServerHandle, stop_server
from tests.hardening.support import good_request, start_tcp_server

# --------------------------------------------------------------------------- two replicas


def pem_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


class RoundRobinProxy:
    """One address for several servers: each new connection goes to the next one in turn."""

    def __init__(self, backends: list[int]) -> None:
        self.backends = backends
        self.connections = [0] * len(backends)
        self._next = itertools.cycle(range(len(backends)))
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True, name="proxy").start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._accept, "127.0.0.1", 0), self.loop
        ).result(10)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        i = next(self._next)
        self.connections[i] += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.backends[i])

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def close(self) -> None:
        async def shut() -> None:
            self.server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


def replicas(**settings: Any) -> list[ServerHandle]:
    return [
        start_tcp_server(signing_key=pem_key(), signing_key_id=f"replica-{name}", **settings)
        for name in "ab"
    ]


def key_ids_seen(address: str, seconds: float) -> set[str]:
    """Settle once every 50 ms on one long-lived client for ``seconds``; the replicas (signing
    key ids) that answered."""
    seen: set[str] = set()
    deadline = time.monotonic() + seconds
    with SettlementClient(address, timeout=5) as client:
        while time.monotonic() < deadline and len(seen) < 2:
            seen.add(client.settle(good_request("rebalance")).settlement.signature.key_id)
            time.sleep(0.05)
    return seen


def test_a_long_lived_client_reaches_both_replicas_within_the_age() -> None:
    servers = replicas(max_connection_age_seconds=0.5, max_connection_age_grace_seconds=1)
    proxy = RoundRobinProxy([s.running.port for s in servers])
    try:
        seen = key_ids_seen(f"127.0.0.1:{proxy.port}", 8.0)
    finally:
        proxy.close()
        for s in servers:
            stop_server(s)
    assert seen == {"replica-a", "replica-b"}
    assert min(proxy.connections) >= 1


def test_without_a_maximum_age_the_client_stays_on_one_replica() -> None:
    servers = replicas(max_connection_age_seconds=0)
    proxy = RoundRobinProxy([s.running.port for s in servers])
    try:
        seen = key_ids_seen(f"127.0.0.1:{proxy.port}", 2.0)
    finally:
        proxy.close()
        for s in servers:
            stop_server(s)
    assert len(seen) == 1 and sum(proxy.connections) == 1


# --------------------------------------------------------------------------- retries

_SERVICE = "/cpsettle.v1.SettlementService/"


class Gate(grpc.GenericRpcHandler):
    """A gRPC server's handler that refuses the first ``refuse`` attempts of every call with
    ``status`` and passes the others to ``target`` (their answers and errors as they come)."""

    def __init__(self, target: str, refuse: int, status: grpc.Status) -> None:
        self.channel = grpc.insecure_channel(target)
        self.refuse = refuse
        self.status = status
        self.attempts: list[int] = []  # grpc-previous-rpc-attempts of each attempt seen

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = details.method
        if not method.startswith(_SERVICE):
            return None
        forward: grpc.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(method)

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            metadata = dict(context.invocation_metadata())
            self.attempts.append(int(metadata.get("grpc-previous-rpc-attempts", "0")))
            if len(self.attempts) <= self.refuse:
                context.abort_with_status(self.status)
            try:
                return forward(request, timeout=5)
            except grpc.RpcError as e:
                context.set_trailing_metadata(
                    tuple((m.key, m.value) for m in e.trailing_metadata())
                )
                context.abort(e.code(), e.details() or "")
            raise AssertionError("unreachable")

        return grpc.unary_unary_rpc_method_handler(handle)


@pytest.fixture(scope="module")
def backend() -> Iterator[ServerHandle]:
    handle = start_tcp_server(max_message_bytes=64 * 1024)
    yield handle
    stop_server(handle)


def gate(backend: ServerHandle, refuse: int, status: grpc.Status) -> tuple[Gate, grpc.Server, str]:
    handler = Gate(backend.address, refuse, status)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return handler, server, f"127.0.0.1:{port}"


AT_CAPACITY = rpc_status.to_status(
    error_status(
        grpc.StatusCode.RESOURCE_EXHAUSTED, "AT_CAPACITY", "64 calls in flight; retry shortly"
    )
)


def unavailable() -> grpc.Status:
    return rpc_status.to_status(
        error_status(grpc.StatusCode.UNAVAILABLE, "AUDIT_LOG_UNAVAILABLE", "the audit log is stuck")
    )


@pytest.mark.parametrize("status", [AT_CAPACITY, unavailable()], ids=["at-capacity", "unavailable"])
def test_the_first_refusals_are_retried_and_the_call_succeeds(
    backend: ServerHandle, status: grpc.Status
) -> None:
    handler, server, address = gate(backend, 2, status)
    try:
        with SettlementClient(address, timeout=10) as client:
            settlement = client.settle(good_request("retried")).settlement
        with SettlementClient(backend.address, timeout=10) as direct:
            expected = direct.settle(good_request("retried")).settlement
    finally:
        server.stop(0)
    assert handler.attempts == [0, 1, 2]
    assert settlement.settlement_id == expected.settlement_id


def test_retries_end_after_four_attempts(backend: ServerHandle) -> None:
    handler, server, address = gate(backend, 10, AT_CAPACITY)
    try:
        with (
            SettlementClient(address, timeout=10) as client,
            pytest.raises(SettlementError) as error,
        ):
            client.settle(good_request("refused"))
    finally:
        server.stop(0)
    assert handler.attempts == [0, 1, 2, 3]
    assert error.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error.value.reason == "AT_CAPACITY"


def test_a_client_without_retries_tries_once(backend: ServerHandle) -> None:
    handler, server, address = gate(backend, 1, AT_CAPACITY)
    try:
        with (
            SettlementClient(address, timeout=10, retry=False) as client,
            pytest.raises(SettlementError),
        ):
            client.settle(good_request("once"))
    finally:
        server.stop(0)
    assert handler.attempts == [0]


def test_a_request_too_large_is_not_retried(backend: ServerHandle) -> None:
    handler, server, address = gate(backend, 0, AT_CAPACITY)
    big = good_request("h" * (80 * 1024))
    try:
        with (
            SettlementClient(address, timeout=10) as client,
            pytest.raises(SettlementError) as error,
        ):
            client.settle(big)
    finally:
        server.stop(0)
    assert error.value.reason == "MESSAGE_TOO_LARGE"
    assert handler.attempts == [0], "the server's pushback (-1) stops the retries"
