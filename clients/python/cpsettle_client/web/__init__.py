"""A small web page that asks a running service to evaluate or settle a table it loads.

``cpsettle page -o settle.html [--service URL]`` writes one self-contained HTML file (no
library, no request but its calls to the service): pick a table's ``SettleRequest`` JSON, and
its buttons call the service's HTTP/JSON port (Connect: ``POST /cpsettle.v1.SettlementService/
Settle`` and ``EvaluateArrangement``) and show the answer, or the error's code, reason and each
field violation (read from the ``google.rpc.BadRequest`` detail). Served from a web origin that
the service's ``CPSETTLE_HTTP_CORS_ORIGINS`` allows. Unlike the dispute viewer (``views``), which
never sends anything, this page exists to call the service; its Content-Security-Policy lets it
run its own script (by hash) and connect to the service's address only (any, if none is set).
"""

from .settle_page import add_parser, cmd_page, page_html

__all__ = ["add_parser", "cmd_page", "page_html", "settle_page"]
