"""A real server with its HTTP/JSON port, and what the HTTP tests send to it."""

from __future__ import annotations

import base64
import socket
from pathlib import Path
from typing import Any, Protocol, TypeVar

import grpc
import httpx
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import status_pb2
from grpc_status import rpc_status

from cpsettle.v1 import settlement_pb2 as pb
from tests.conftest import ServerHandle, start_server

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "cpsettle.v1.SettlementService"

_M = TypeVar("_M", bound=Message)


class Serializable(Protocol):
    """What a gRPC call sends: a message, or a stand-in that gives its own bytes."""

    def SerializeToString(self) -> bytes: ...  # protobuf's spelling


JSON = {"content-type": "application/json"}
PROTO = {"content-type": "application/proto"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(sock: Path, **overrides: Any) -> ServerHandle:
    """The real server: gRPC on the unix socket ``sock``, Connect on 127.0.0.1 and a free port
    (``handle.running.http_port``)."""
    overrides.setdefault("http_port", free_port())
    return start_server(sock, **overrides)


def url(handle: ServerHandle, method: str, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{handle.running.http_port}/{SERVICE}/{method}"


def grpc_call(
    handle: ServerHandle,
    method: str,
    request: Serializable,
    metadata: tuple[tuple[str, str], ...] = (),
) -> tuple[bytes, status_pb2.Status | None]:
    """``method`` over gRPC on the same server: the response's bytes, or the status of its
    error (code, message and details, as the trailer carries them)."""
    with grpc.insecure_channel(handle.address) as channel:
        # the raw bytes, as the server sent them
        raw: grpc.UnaryUnaryMultiCallable[Serializable, bytes] = channel.unary_unary(
            f"/{SERVICE}/{method}",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=lambda b: b,
        )
        try:
            return raw(request, timeout=10, metadata=metadata or None), None
        except grpc.RpcError as e:
            status = rpc_status.from_call(e)  # type: ignore[arg-type]
            if status is None:
                status = status_pb2.Status(code=e.code().value[0], message=e.details() or "")
            return b"", status


def connect_status(response: httpx.Response) -> tuple[str, str, list[tuple[str, bytes]]]:
    """A Connect error answer: its code, message and details (type and bytes)."""
    body = response.json()
    details = [
        (d["type"], base64.b64decode(d["value"] + "=" * (-len(d["value"]) % 4)))
        for d in body.get("details", [])
    ]
    return body["code"], body["message"], details


def grpc_status_as_connect(status: status_pb2.Status) -> tuple[str, str, list[tuple[str, bytes]]]:
    """What the Connect answer of a gRPC status must be: the same code (Connect's name), message
    and details."""
    name = grpc.StatusCode.CANCELLED.name
    for code in grpc.StatusCode:
        if code.value[0] == status.code:
            name = code.name
    connect = "canceled" if name == "CANCELLED" else name.lower()
    details = [(d.type_url.removeprefix("type.googleapis.com/"), d.value) for d in status.details]
    return connect, status.message, details


def without_time_and_signature(response: pb.SettleResponse) -> pb.SettleResponse:
    """The settlement but for the two fields that differ between two issues of it, and the
    receipt (each issue is its own line of the log: its own index and leaf; the log's origin
    is checked to be the replica's, the same over both ports)."""
    copy = pb.SettleResponse()
    copy.CopyFrom(response)
    copy.settlement.ClearField("issued_at")
    copy.settlement.ClearField("signature")
    assert response.receipt.origin and len(response.receipt.leaf_hash) == 64
    copy.receipt.ClearField("index")
    copy.receipt.ClearField("leaf_hash")
    return copy


def from_json(data: bytes, message: _M) -> _M:
    json_format.Parse(data, message)
    return message
