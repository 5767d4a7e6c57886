"""The hand page (``cpsettle view``, ``cpsettle settle --output html``): one settlement drawn
and verified in the browser, with the request it answers when one is given."""

from __future__ import annotations

import argparse
import hashlib
import html
from pathlib import Path
from typing import Any

from ..i18n import Language, LanguageProblem
from ..i18n.catalogs import DEFAULT
from .page import Page, marked, money_html

SETTLEMENT_ID = "cpsettle-settlement"
KEYS_ID = "cpsettle-keys"  # the element view.js reads an embedded key set from
REQUEST_ID = "cpsettle-request"  # the request's loose cards, for a natural's thirteen


def hand_mount(element_id: str, request_id: str | None = None) -> str:
    """Where view.js draws the settlement embedded under ``element_id``, with its verdict (and
    the cards of the request embedded under ``request_id``)."""
    request = f' data-request="{html.escape(request_id)}"' if request_id else ""
    return f'<div class="hand-view" data-settlement="{html.escape(element_id)}"{request}></div>'


def page_language(tag: str | None) -> Language | None:
    """The language a page is made for (``--lang``), None for the browser's; an unknown one is
    the command's error (exit 2)."""
    from ..backend import CliError

    if not tag:
        return None
    try:
        return Language.get(tag)
    except LanguageProblem as e:
        raise CliError(str(e)) from None


def _settlement_of(stored: Any) -> dict[str, Any]:
    s = stored.get("settlement", stored) if isinstance(stored, dict) else {}
    return s if isinstance(s, dict) else {}


def _context(stored: Any) -> dict[str, Any]:
    ctx = _settlement_of(stored).get("context", {})
    return ctx if isinstance(ctx, dict) else {}


def title(lang: Language, stored: Any) -> str:
    """The page's heading (marked, so the page can say it in another language)."""
    ctx = _context(stored)
    hand, table = str(ctx.get("handId") or ""), str(ctx.get("tableId") or "")
    if hand and table:
        return marked(
            lang, "Settlement \u2014 hand {hand} \u00b7 table {table}", hand=hand, table=table
        )
    if hand or table:
        return (
            marked(lang, "Settlement \u2014 hand {hand}", hand=hand)
            if hand
            else marked(lang, "Settlement \u2014 table {table}", table=table)
        )
    return marked(lang, "Settlement")


def _request_section(page: Page, request: dict[str, Any], request_name: str, stored: Any) -> str:
    """What the request adds: whether its digest is the settlement's (checked by this command,
    not in the browser), its dead cards, each player's thirteen loose cards (a natural's cards,
    drawn by the page: the settlement has no rows for them), and the payouts recorded at the
    table if it is a line of hand history."""
    from cpsettle.v1 import settlement_pb2 as pb

    from ..audit.reading import RECORDED_FIELD
    from ..backend import parse_message

    lang = page.lang
    request = dict(request)
    recorded = request.pop(RECORDED_FIELD, None)
    message = pb.SettleRequest()
    parse_message(request, message, request_name)
    digest = hashlib.sha256(message.SerializeToString(deterministic=True)).hexdigest()
    stored_digest = str(_settlement_of(stored).get("requestDigest", ""))
    same = digest == stored_digest
    page.embed(
        REQUEST_ID,
        {
            "matches": same,
            "players": {p.player_id: {"cards": list(p.cards)} for p in message.players if p.cards},
        },
    )
    mark = (
        "\u2714 " + marked(lang, "matches the settlement's request digest")
        if same
        else "\u2717 "
        + marked(
            lang,
            "does NOT match the settlement's request digest {digest}",
            digest=stored_digest or lang._("(none)"),
        )
    )
    out = [
        '<section class="request"><h2>' + marked(lang, "The request") + "</h2>",
        "<p>"
        + marked(lang, "{file}: SHA-256 of its encoding", file=request_name)
        + f' <span class="hex">{digest}</span> <strong class="{"" if same else "flag"}">'
        f"{mark}</strong> "
        + marked(lang, "(checked by cpsettle view when this page was made, not in this browser).")
        + "</p>",
    ]
    if message.dead_cards:
        out.append(
            "<p>" + marked(lang, "Dead cards: {cards}", cards=" ".join(message.dead_cards)) + "</p>"
        )
    if isinstance(recorded, dict):
        currency = str(_settlement_of(stored).get("currency") or "XXX")
        rows = "".join(
            f'<tr><td>{html.escape(str(k))}</td><td class="num">'
            + (money_html(lang, v, currency, signed=True) if _integer(v) else html.escape(str(v)))
            + "</td></tr>"
            for k, v in recorded.items()
        )
        out.append(
            "<h3>"
            + marked(lang, "Payouts recorded at the table")
            + '</h3><div class=scroll><table><thead><tr><th scope="col">'
            + marked(lang, "Player")
            + '</th><th scope="col" class="num">'
            + marked(lang, "Recorded net")
            + "</th></tr></thead><tbody>"
            + rows
            + "</tbody></table></div>"
        )
    out.append("</section>")
    return "\n".join(out)


def _integer(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, (bool, float))


def hand_page(
    stored: Any,
    *,
    keys: dict[str, Any] | None = None,
    request: dict[str, Any] | None = None,
    request_name: str = "REQUEST.json",
    lang: Language | None = None,
) -> str:
    """The page of one stored settlement (its JSON as stored: a ``SettleResponse`` or a bare
    ``Settlement``, embedded as it is, so the browser checks exactly what was stored);
    ``keys``: a key set to embed (the JSON of ``cpsettle keys show``); ``request``: the
    ``SettleRequest`` it answers; ``lang``: the language the page opens in (None: the browser's
    when the page has it, else English)."""
    page = Page(title="", lang=lang or Language.get(DEFAULT), fixed=lang is not None)
    page.title = title(page.lang, stored)
    page.currencies.add(str(_settlement_of(stored).get("currency") or "XXX"))
    page.embed(SETTLEMENT_ID, stored)
    if keys is not None:
        page.embed(KEYS_ID, keys)
    section = _request_section(page, request, request_name, stored) if request is not None else ""
    body = [hand_mount(SETTLEMENT_ID, REQUEST_ID if request is not None else None)]
    if section:
        body.append(section)
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
    text = hand_page(
        stored,
        keys=keys,
        request=request,
        request_name=Path(args.request).name if args.request else "",
        lang=page_language(args.lang),
    )
    write_page(text, args.out)
    if args.out != "-":
        print(f"wrote {args.out}: open it in a browser (it verifies the settlement there)")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "view",
        help="write one settlement as a self-contained HTML page that verifies itself",
        description="Draw a stored settlement (cards, rows, winners, items, caps, rake, nets) "
        "as one HTML file that checks its digests and Ed25519 signature in the "
        "browser (docs/VIEWS.md).",
    )
    p.add_argument("settlement", help="the stored settlement (cpsettle settle --output json)")
    p.add_argument(
        "request",
        nargs="?",
        help="the SettleRequest JSON it answers (or its line "
        "of hand history): its digest is compared and its dead cards shown",
    )
    p.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="HAND.html",
        help="the page to write ('-': standard output)",
    )
    p.add_argument(
        "--keys",
        metavar="KEYS.json",
        help="embed this key set (cpsettle keys show) so the page checks the "
        "signature on opening; without it the page offers a file picker",
    )
    add_lang_option(
        p,
        "the language the page opens in (default: the browser's, when the "
        "page has it); the reader can change it",
    )
    p.set_defaults(func=cmd_view)


def add_lang_option(p: Any, what: str) -> None:
    """``--lang LANG``: one of the languages with a catalog (``$CPSETTLE_LOCALE_DIR`` adds)."""
    p.add_argument(
        "--lang",
        metavar="LANG",
        help=f"{what}: en, es, it, zh-Hans, zh-Hant, or "
        "a language of a catalog in $CPSETTLE_LOCALE_DIR (docs/VIEWS.md)",
    )
