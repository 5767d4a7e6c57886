"""A browser can settle: ``cpsettle page``'s page, served from a web origin, loads a table and
asks a real server over HTTP/JSON to evaluate and settle it, in headless Chromium (the views'
browser: Debian's chromium driven by Playwright).

CORS is what lets it: with the page's origin in ``CPSETTLE_HTTP_CORS_ORIGINS`` its calls are
answered (and equal what gRPC answers); with the default (no origin allowed) the browser's
preflight is refused and no call reaches the service.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_client.web import page_html
from tests.conftest import EXAMPLES, LogStream, ServerHandle, stop_server
from tests.hardening.support import start_tcp_server
from tests.http.support import free_port
from tests.views.conftest import LAPTOP, Opened

TABLE = EXAMPLES / "tables" / "western.json"


class Site:
    """A static web server for one folder, on 127.0.0.1 and a free port: the page's origin."""

    def __init__(self, folder: Path) -> None:
        handler = functools.partial(_Quiet, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the base's name
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("site")
    s = Site(folder)
    yield s
    s.close()


def serve(site: Site, **settings: Any) -> ServerHandle:
    return start_tcp_server(http_port=free_port(), **settings)


def open_page(browser: Any, site: Site, handle: ServerHandle, name: str) -> Opened:
    folder = Path(site.server.RequestHandlerClass.keywords["directory"])  # type: ignore[attr-defined]
    service = f"http://127.0.0.1:{handle.running.http_port}"
    (folder / f"{name}.html").write_text(page_html(service), encoding="utf-8")
    tab = Opened(browser.new_context(viewport=LAPTOP).new_page())
    tab.page.goto(f"{site.origin}/{name}.html")
    tab.page.wait_for_selector("body[data-ready=true]", timeout=20_000)
    return tab


def rows(tab: Opened, table_id: str) -> dict[str, list[str]]:
    return dict(
        tab.page.evaluate(
            f"""() => [...document.querySelectorAll('#{table_id} tbody tr')].map(
              r => [r.dataset.player, [...r.cells].map(c => c.textContent)])"""
        )
    )


def test_the_page_evaluates_and_settles_through_a_real_server(
    browser: Any, site: Site, logs: LogStream
) -> None:
    handle = serve(site, http_cors_origins=site.origin)
    try:
        tab = open_page(browser, site, handle, "allowed")
        tab.page.set_input_files("#file", str(TABLE))
        tab.wait_until("document.getElementById('request').value.includes('players')")

        tab.page.click("#settle")
        tab.wait_until("document.getElementById('status').textContent === 'settled'")
        nets = rows(tab, "nets")
        settled_id = tab.page.inner_text("#settlement-id")
        tab.shot("settle-page")
        tab.page.click("#evaluate")
        tab.wait_until("document.getElementById('status').textContent === 'evaluated'")
        evaluated = rows(tab, "evaluations")
        assert not tab.errors, tab.errors

        request = json.loads(TABLE.read_text())
        with SettlementClient(handle.address, timeout=10) as client:
            settlement = client.settle(request).settlement
            assert nets == {
                p.player_id: [
                    p.player_id,
                    str(p.net_units),
                    str(p.net_money),
                    str(p.rake),
                    "yes" if p.fouled else "",
                    nets[p.player_id][5],
                    "yes" if p.surrendered else "",
                ]
                for p in settlement.players
            }
            assert settlement.settlement_id in settled_id
            for player in request["players"]:
                answer = client.evaluate(
                    {"preset": request["preset"], "arrangement": player["arrangement"]}
                )
                assert evaluated[player["playerId"]] == [
                    player["playerId"],
                    *(r.name for r in answer.rows),
                    str(answer.royalty_total),
                    "yes" if answer.fouled else "",
                ]
        issued = logs.wait_events(
            "settlement.issued",
            lambda e: e.get("hand_id") == request["handId"] and e.get("transport") == "connect",
            1,
        )
        assert issued, "the browser's Settle went through the service's audit log"
    finally:
        stop_server(handle)


def test_the_page_lists_each_violation_of_a_refused_table(
    browser: Any, site: Site, tmp_path: Path
) -> None:
    request = json.loads(TABLE.read_text())
    first, second = (p["arrangement"] for p in request["players"][:2])
    first["front"] = first["front"][:2]
    second["back"][0] = first["back"][0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(request))
    handle = serve(site, http_cors_origins=site.origin)
    try:
        tab = open_page(browser, site, handle, "refused")
        tab.page.set_input_files("#file", str(bad))
        tab.wait_until("document.getElementById('request').value.includes('players')")
        tab.page.click("#settle")
        tab.wait_until("document.getElementById('status').className === 'error'")
        status = tab.page.inner_text("#status")
        shown = list(rows_of(tab, "violations"))
        with (
            SettlementClient(handle.address, timeout=10) as client,
            pytest.raises(SettlementError) as error,
        ):
            client.settle(request)
    finally:
        stop_server(handle)
    assert status.startswith("invalid_argument (INVALID_REQUEST): 2 problems")
    assert shown == [[v.field, v.reason] for v in error.value.violations]


def rows_of(tab: Opened, table_id: str) -> list[list[str]]:
    return list(
        tab.page.evaluate(
            f"""() => [...document.querySelectorAll('#{table_id} tbody tr')].map(
              r => [...r.cells].map(c => c.textContent))"""
        )
    )


def test_without_cors_the_browser_sends_no_call(browser: Any, site: Site, logs: LogStream) -> None:
    handle = serve(site)  # CPSETTLE_HTTP_CORS_ORIGINS unset: no origin allowed
    request = json.loads(TABLE.read_text())
    try:
        tab = open_page(browser, site, handle, "refused-origin")
        tab.page.set_input_files("#file", str(TABLE))
        tab.wait_until("document.getElementById('request').value.includes('players')")
        before = len(logs.events("settlement.issued"))
        tab.page.click("#settle")
        tab.wait_until("document.getElementById('status').className === 'error'")
        status = tab.page.inner_text("#status")
    finally:
        stop_server(handle)
    assert status.startswith("could not reach") and "CPSETTLE_HTTP_CORS_ORIGINS" in status
    assert not [
        e
        for e in logs.events("settlement.issued")[before:]
        if e.get("hand_id") == request["handId"] and e.get("transport") == "connect"
    ]
