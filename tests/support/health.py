"""Typed access to the generated gRPC health stub's methods, for the tests.

typeshed's ``HealthStub`` declares only its constructor (the generated class sets ``Check`` and
``Watch`` in ``__init__``), so the methods are read here once, with their real types."""

from __future__ import annotations

from typing import TypeAlias

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

# strings: grpc's multicallables are generic in the stubs only
Check: TypeAlias = (
    "grpc.UnaryUnaryMultiCallable[health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse]"
)
Watch: TypeAlias = (
    "grpc.UnaryStreamMultiCallable[health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse]"
)


def health_check(channel: grpc.Channel) -> Check:
    """``Health.Check`` on ``channel``, through the generated stub."""
    stub = health_pb2_grpc.HealthStub(channel)
    method: Check = stub.Check  # type: ignore[attr-defined]  # typeshed lists no methods
    return method


def health_watch(channel: grpc.Channel) -> Watch:
    """``Health.Watch`` on ``channel``, through the generated stub."""
    stub = health_pb2_grpc.HealthStub(channel)
    method: Watch = stub.Watch  # type: ignore[attr-defined]  # typeshed lists no methods
    return method
