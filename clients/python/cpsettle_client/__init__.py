"""cpsettle's Python client: ``SettlementClient`` for the gRPC service (``client``), the
``cpsettle`` command (``cli``), checking stored settlements (``proof``), the bulk re-audit
(``audit``), the HTML views (``views``) and the page that settles through the HTTP/JSON port
(``web``)."""

__all__ = ["audit", "cli", "client", "proof", "views", "web"]
