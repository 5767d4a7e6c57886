"""``cpsettle page``: the settle page (``settle.html``) with its address and policy filled in."""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import re
from importlib import resources
from typing import Any

__all__ = ["add_parser", "cmd_page", "page_html"]

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def page_html(service: str = "") -> str:
    """The page, its address field filled with ``service`` (an http(s) URL, or empty)."""
    if service and not re.fullmatch(r"https?://[^\s\"'<>]+", service):
        raise ValueError(f"not an http(s) address: {service!r}")
    template = resources.files(__package__).joinpath("settle.html").read_text("utf-8")
    service = service.rstrip("/")
    page = template.replace("__SERVICE__", html.escape(service, quote=True))
    script = _SCRIPT.search(page)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    connect = service if service else "http: https:"
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        f"connect-src {connect}; form-action 'none'; base-uri 'none'"
    )
    return page.replace("__CSP__", csp)


def cmd_page(args: argparse.Namespace) -> int:
    from ..backend import CliError

    try:
        text = page_html(args.service or "")
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.out == "-":
        print(text, end="")
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "page",
        help="write a web page that evaluates and settles a table through the service",
        description="A self-contained page that loads a table's JSON and calls a running "
        "service's HTTP/JSON port (README, 'HTTP/JSON'; docs/VIEWS.md).",
    )
    p.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="SETTLE.html",
        help="the page to write ('-': standard output)",
    )
    p.add_argument(
        "--service",
        metavar="URL",
        help="the service's HTTP/JSON address filled in, e.g. https://cpsettle:8080 "
        "(the page then connects to it only)",
    )
    p.set_defaults(func=cmd_page)
