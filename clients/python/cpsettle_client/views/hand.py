"""The hand page (``cpsettle view``, ``cpsettle settle --output html``): one settlement drawn
and verified in the browser, with the request it answers when one is given."""

from __future__ import annotations

import argparse
import hashlib
import html
from pathlib import Path
from typing import Any

from .page import Page

SETTLEMENT_ID = "cpsettle-settlement"
KEYS_ID = "cpsettle-keys"  # the element view.js reads an embedded key set from


def hand_mount(element_id: str) -> str:
    """Where view.js draws the settlement embedded under ``element_id``, with its verdict."""
    return f'<div class="hand-view" data-settlement="{html.escape(element_id)}"></div>'


def _context(stored: Any) -> dict[str, Any]:
    s = stored.get("settlement", stored) if isinstance(stored, dict) else {}
    ctx = s.get("context", {}) if isinstance(s, dict) else {}
    return ctx if isinstance(ctx, dict) else {}


def _request_section(request: dict[str, Any], request_name: str, stored: Any) -> str:
    """What the request adds: whether its digest is the settlement's (checked by this command,
    not in the browser), its dead cards, and the payouts recorded at the table if it is a line
    of hand history."""
    from cpsettle.v1 import settlement_pb2 as pb

    from ..audit.reading import RECORDED_FIELD
    from ..backend import parse_message

    request = dict(request)
    recorded = request.pop(RECORDED_FIELD, None)
    message = pb.SettleRequest()
    parse_message(request, message, request_name)
    digest = hashlib.sha256(message.SerializeToString(deterministic=True)).hexdigest()
    s = stored.get("settlement", stored) if isinstance(stored, dict) else {}
    stored_digest = s.get("requestDigest", "") if isinstance(s, dict) else ""
    same = digest == stored_digest
    mark = ("\u2714 matches the settlement's request digest" if same else
            f"\u2717 does NOT match the settlement's request digest {stored_digest or '(none)'}")
    out = [
        '<section class="request"><h2>The request</h2>',
        (f"<p>{html.escape(request_name)}: SHA-256 of its encoding "
         f'<span class="hex">{digest}</span> <strong class="{"" if same else "flag"}">'
         f"{html.escape(mark)}</strong> (checked by <code>cpsettle view</code> when this page "
         "was made, not in this browser).</p>"),
    ]
    if message.dead_cards:
        out.append(f"<p>Dead cards: {html.escape(' '.join(message.dead_cards))}</p>")
    if isinstance(recorded, dict):
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td>"
                       f'<td class="num">{html.escape(str(v))}</td></tr>'
                       for k, v in recorded.items())
        out.append("<h3>Payouts recorded at the table</h3><div class=scroll><table><thead><tr>"
                   '<th scope="col">Player</th><th scope="col" class="num">Recorded net '
                   "(minor units)</th></tr></thead><tbody>" + rows + "</tbody></table></div>")
    out.append("</section>")
    return "\n".join(out)


def hand_page(stored: Any, *, keys: dict[str, Any] | None = None,
              request: dict[str, Any] | None = None, request_name: str = "REQUEST.json") -> str:
    """The page of one stored settlement (its JSON as stored: a ``SettleResponse`` or a bare
    ``Settlement``, embedded as it is, so the browser checks exactly what was stored);
    ``keys``: a key set to embed (the JSON of ``cpsettle keys show``)."""
    ctx = _context(stored)
    what = " · ".join(f"{k} {ctx[f]}" for k, f in (("hand", "handId"), ("table", "tableId"))
                      if ctx.get(f))
    page = Page(title=f"Settlement{(' — ' + what) if what else ''}")
    page.embed(SETTLEMENT_ID, stored)
    if keys is not None:
        page.embed(KEYS_ID, keys)
    body = [hand_mount(SETTLEMENT_ID)]
    if request is not None:
        body.append(_request_section(request, request_name, stored))
    page.body = "\n".join(body)
    return page.render()


# --------------------------------------------------------------------------- the command


def _stored_settlement(path: str) -> Any:
    """The settlement file's JSON as stored (a binary settlement: its JSON form). A key named
    twice is refused: the page's reader and another could see different values."""
    from google.protobuf import json_format

    from .. import strict_json
    from ..backend import CliError, read_bytes
    from ..proof import ProofError, load_settlement

    data = read_bytes(path)
    try:
        return strict_json.loads(data.decode("utf-8"))
    except strict_json.DuplicateKey as e:
        raise CliError(f"{path}: not a settlement: {e}") from None
    except (UnicodeDecodeError, ValueError):
        pass
    try:
        return json_format.MessageToDict(load_settlement(data))
    except ProofError as e:
        raise CliError(f"{path}: {e}") from None


def write_page(text: str, out: str) -> None:
    """Write a page to ``out`` ('-': standard output)."""
    from ..backend import CliError

    if out == "-":
        print(text, end="")
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}") from None


def cmd_view(args: argparse.Namespace) -> int:
    from ..backend import read_json
    from ..proof import load_keys

    stored = _stored_settlement(args.settlement)
    keys = None
    if args.keys:
        load_keys(args.keys)  # refuses an unusable key set (exit 2) before a page is made
        keys = read_json(args.keys)
    request = read_json(args.request) if args.request else None
    text = hand_page(stored, keys=keys, request=request,
                     request_name=Path(args.request).name if args.request else "")
    write_page(text, args.out)
    if args.out != "-":
        print(f"wrote {args.out}: open it in a browser (it verifies the settlement there)")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "view", help="write one settlement as a self-contained HTML page that verifies itself",
        description="Draw a stored settlement (cards, rows, winners, items, caps, rake, nets) "
                    "as one HTML file that checks its digests and Ed25519 signature in the "
                    "browser (docs/VIEWS.md).")
    p.add_argument("settlement", help="the stored settlement (cpsettle settle --output json)")
    p.add_argument("request", nargs="?", help="the SettleRequest JSON it answers (or its line "
                   "of hand history): its digest is compared and its dead cards shown")
    p.add_argument("-o", "--out", required=True, metavar="HAND.html",
                   help="the page to write ('-': standard output)")
    p.add_argument("--keys", metavar="KEYS.json",
                   help="embed this key set (cpsettle keys show) so the page checks the "
                        "signature on opening; without it the page offers a file picker")
    p.set_defaults(func=cmd_view)
