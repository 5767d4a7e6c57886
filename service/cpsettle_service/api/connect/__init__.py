"""HTTP/JSON beside gRPC: the ``cpsettle.v1`` services over the Connect protocol
(https://connectrpc.com/docs/protocol), on a port of their own in the server's process.

``app`` runs each call through the very handlers the gRPC server runs (the service
interceptor's wrappers around the servicer: tokens, limits, deadlines, metrics, logs, audit
events and the error table), with a context (``HttpCall``) that speaks for the HTTP request;
``cors`` answers browsers' preflights for the origins a setting allows; ``listener`` serves the
ASGI app with uvicorn on the server's event loop (TLS from the same files as the gRPC port).
Nothing of the gRPC side imports this package (``tests/house/test_wings.py``).
"""

__all__ = ["app", "cors", "listener"]
