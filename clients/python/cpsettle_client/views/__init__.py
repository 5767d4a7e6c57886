"""HTML views of settlements: one self-contained file a person opens in a browser.

``cpsettle view SETTLEMENT.json -o hand.html`` (and ``cpsettle settle … --output html``) draws
one hand; ``cpsettle audit … --html REPORT.html`` draws a day's re-audit, each hand with a
payout difference expandable into the same hand view (``audit/html.py``). See docs/VIEWS.md.

A page is a VIEW, never a second engine: the settlement's JSON is embedded as data, and the
page's script draws it and checks its proof in the browser (WebCrypto SHA-256 and Ed25519),
recomputing the content digest from the embedded settlement with ``clients/js/proof.mjs`` —
the same file the Node checker runs against the test vectors. The page computes nothing that
decides money, fetches nothing and sends nothing (its Content-Security-Policy forbids it).

Rooms: ``page`` (assembling one file: the template, the stylesheet, the scripts and the
embedded JSON) and ``hand`` (the hand page and the ``view`` command); ``assets/`` holds the
template, the stylesheet and the drawing script.
"""

from .hand import hand_page
from .page import Page

__all__ = ["Page", "hand_page"]
