"""The gRPC API (``cpsettle.v1.SettlementService``): requests mapped to the domain
(``mapping``, the only room that knows both protobuf and the domain), checked for size
(``bounds``, ``codec``), answered by ``servicer`` (unary RPCs) and ``stream`` (SettleStream, its
worker processes in ``pool`` and ``stream_worker``), with the settlement written as wire bytes
(``wire``); ``interceptors`` map errors to status codes, ``priority`` lets live calls first,
``fair`` gives bulk turns to callers round robin, ``offload`` sends engine work that may run long
to worker processes (``workers``, shared with ``pool``), and ``profiles`` resolves and caches each
request's rule profile. ``connect`` serves the same handlers over HTTP/JSON (Connect), reading
JSON requests through ``jsonform``.
"""

__all__ = [
    "bounds",
    "codec",
    "connect",
    "fair",
    "interceptors",
    "jsonform",
    "mapping",
    "offload",
    "pool",
    "priority",
    "profiles",
    "servicer",
    "stream",
    "stream_worker",
    "wire",
    "workers",
]
