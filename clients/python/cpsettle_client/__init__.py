"""cpsettle's Python client: ``SettlementClient`` for the gRPC service (``client``), the
``cpsettle`` command (``cli``), checking stored settlements (``proof``), the bulk re-audit
(``audit``) and the HTML views (``views``)."""

__all__ = ["audit", "cli", "client", "proof", "views"]
