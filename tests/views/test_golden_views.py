"""What a person reads in each column, and on the printed sheet, for every golden case: the hand
page made by the real ``cpsettle view`` (with the request, keys embedded) from the engine's
signed settlement, opened in chromium. Players (badges, rows and their cards, jokers "Xj as
Qh", a natural's thirteen cards, Fantasyland, the money list), each pair (winner, units,
sentence, items), the payments (payer, payee, owed, cap, paid) and the rake: in English, then
again in another language chosen with the page's control. The expected text is computed in
Python (Babel, the catalogs; the sentences and hands' names by i18n/sentences.py, which the
page's sentences.js must agree with) from the settlement, and checked against the golden
file's hand-written expectations where it has them (nets, jokers, Fantasyland, fouls,
naturals, surrenders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.i18n import Language
from cpsettle_client.i18n.sentences import Sentences
from tests.support.tables import GOLDEN_LINE_ITEM_KINDS
from tests.views.conftest import CASES, OTHER_LANGUAGES, Opened, choose_language
from tests.views.test_print import check_sheet

STEMS = [p.stem for p in CASES]


def read_columns(page: Any) -> dict[str, Any]:
    """Everything a person reads, from the page's text (one call)."""
    columns: dict[str, Any] = page.evaluate("""() => {
      const t = (e) => (e ? e.textContent.trim() : null);
      const all = (root, sel) => [...root.querySelectorAll(sel)];
      return {
        verdict: document.querySelector('.verdict').dataset.verdict,
        players: all(document, 'article.player').map((a) => ({
          id: a.dataset.player,
          badges: all(a, '.badge').map((b) => [b.dataset.status, t(b)]),
          rows: all(a, 'tr[data-row]').map((r) => ({
            row: t(r.querySelector('th')),
            cards: all(r, '.card').map((c) => c.dataset.card),
            hand: t(r.querySelector('.hand-class')),
            jokers: all(r, '.joker-as').map(t),
          })),
          loose: all(a, '.natural-cards .card').map((c) => c.dataset.card),
          net: t(a.querySelector('.net .money')),
          money: all(a, '.money-list dd').map(t),
        })),
        pairs: all(document, 'details.pair').map((d) => ({
          kind: t(d.querySelector('.pair-kind')),
          text: t(d.querySelector('.pair-text')),
          rows: all(d, '.pair-rows tbody tr').map((r) => ({
            row: t(r.querySelector('th')),
            winner: r.querySelector('td.win')?.dataset.side ?? '',
            units: t(r.querySelector('td.num')),
            why: t(r.querySelector('td.sentence')),
          })),
          items: all(d, '.items li').map((li) => [t(li.querySelector('.item-kind')),
            t(li.querySelector('.item-units')), t(li.querySelector('.item-text'))]),
        })),
        payments: all(document, '.payments tbody tr').map((r) =>
          ['payer', 'payee', 'owed', 'cap', 'paid']
            .map((c) => t(r.querySelector(`[data-col=${c}]`)))),
        heads: all(document, '.payments thead th').map(t),
        rake: t(document.querySelector('.payments .rake .money')),
        text: document.querySelector('main').textContent,
      };
    }""")
    return columns


def expected_columns(s: dict[str, Any], lang: Language, request: dict[str, Any]) -> dict[str, Any]:
    cur = s.get("currency", "XXX")
    message = json_format.ParseDict(s, pb.Settlement())
    said = Sentences(message, lang)

    def m(value: Any, signed: bool = False) -> str:
        return lang.money(int(value or 0), cur, signed=signed)

    sent = {p["playerId"]: p for p in request.get("players", [])}
    players = []
    for p, pp in zip(s["players"], message.players, strict=True):
        rows = []
        for r, rr in zip(p.get("rows", []), pp.rows, strict=True):
            jokers = [c for c in r["cards"] if c.startswith("X")]
            rows.append(
                {
                    "row": lang.label(r["row"]),
                    "cards": r["cards"],
                    "hand": said.hand(rr).text,
                    "jokers": [
                        lang._("{joker} as {card}", joker=j, card=c)
                        for j, c in zip(jokers, r.get("jokerCards", []), strict=True)
                    ],
                }
            )
        players.append(
            {
                "id": p["playerId"],
                "rows": rows,
                # a player without rows (a natural, a false declaration): the request's 13 cards
                "loose": sent.get(p["playerId"], {}).get("cards", []) if not rows else [],
                "net": m(p.get("netMoney"), True),
                "money": [
                    lang.number(int(p.get("netUnits", 0)), signed=True),
                    m(p.get("moneyBeforeRake"), True),
                    m(p.get("rake")),
                    m(p["stack"]) if "stack" in p else lang._("no cap"),
                ],
            }
        )
    pairs = []
    for pr, q in zip(s["pairs"], message.pairs, strict=True):
        pairs.append(
            {
                "kind": lang.label(pr["kind"]),
                "rows": [
                    {
                        "row": lang.label(r["row"]),
                        "winner": r.get("winner", ""),
                        "units": lang.number(int(r.get("units", 0)), signed=True),
                        "why": ("" if r.get("winner") else lang._("tie") + " \u2014 ")
                        + said.row(q, rr).text,
                    }
                    for r, rr in zip(pr.get("rows", []), q.rows, strict=True)
                ],
                "items": [
                    [
                        lang.label(it["kind"]),
                        lang.ngettext(
                            "{units} unit",
                            "{units} units",
                            abs(int(it.get("units", 0))),
                            units=lang.number(int(it.get("units", 0)), signed=True),
                        ),
                        said.item(q, ii).text,
                    ]
                    for it, ii in zip(pr.get("items", []), q.items, strict=True)
                ],
                "text": said.pair(q).text,
            }
        )
    payments = [
        [
            pr.get("payer", ""),
            pr.get("payee", ""),
            m(pr.get("owed")),
            lang.label(pr.get("cap", "")) or "\u2014",
            m(pr.get("paid")),
        ]
        for pr in s["pairs"]
        if pr.get("payer") or int(pr.get("owed", 0)) or int(pr.get("paid", 0))
    ]
    return {
        "players": players,
        "pairs": pairs,
        "payments": payments,
        "rake": m(s.get("rake")),
        "heads": [lang._(w) for w in ("Payer", "Payee", "Owed", "Cap", "Paid")],
    }


def check(shown: dict[str, Any], want: dict[str, Any]) -> None:
    assert shown["heads"] == want["heads"]
    assert shown["payments"] == want["payments"]
    assert shown["rake"] == want["rake"]
    for got, p in zip(shown["players"], want["players"], strict=True):
        assert got["id"] == p["id"]
        assert [{k: r[k] for k in ("row", "cards", "hand", "jokers")} for r in got["rows"]] == p[
            "rows"
        ], p["id"]
        assert got["loose"] == p["loose"], p["id"]
        assert got["net"] == p["net"] and got["money"] == p["money"], p["id"]
    for got, pr in zip(shown["pairs"], want["pairs"], strict=True):
        assert got["kind"] == pr["kind"]
        assert [{k: r[k] for k in ("row", "winner", "units", "why")} for r in got["rows"]] == pr[
            "rows"
        ]
        assert got["items"] == pr["items"]
        assert got["text"] == pr["text"]
    assert "nspecified" not in shown["text"] and "UNSPECIFIED" not in shown["text"]


@pytest.mark.parametrize("stem", STEMS)
def test_each_golden_case_as_a_person_reads_it(
    module_tab: Opened, golden_pages: dict[str, Any], stem: str
) -> None:
    tab = module_tab
    path, s, case = golden_pages[stem]
    page = tab.open(path)
    english = Language.get("en")
    shown = read_columns(page)
    assert shown["verdict"] == "valid"
    check(shown, expected_columns(s, english, case["request"]))
    # and against what the golden file's author wrote by hand
    by_id = {p["id"]: p for p in shown["players"]}
    cur = s.get("currency", "XXX")
    for pid, want in case["expected"]["players"].items():
        got = by_id[pid]
        assert got["net"] == english.money(want["netMoney"], cur, signed=True), pid
        if "jokers" in want:
            assert [j for r in got["rows"] for j in r["jokers"]] == want["jokers"], pid
        badges = dict(got["badges"])
        cards = want.get("fantasylandCards", 0)
        assert badges.get("fantasyland") == (f"Fantasyland ({cards} cards)" if cards else None)
        assert ("fouled" in badges) == want.get("fouled", False), pid
        assert ("surrendered" in badges) == want.get("surrendered", False), pid
        if want.get("natural"):
            assert badges["natural"] == f"\u2605 Natural: {english.label(want['natural'])}"
    # on paper: one A4 sheet, every text of the dispute on it, nothing past the edge (one page
    # load for both: tests/views/test_print.py has the sheet's checks)
    check_sheet(tab, page, stem, s)
    # the same page in another language, chosen by the reader
    other = OTHER_LANGUAGES[STEMS.index(stem) % len(OTHER_LANGUAGES)]
    choose_language(tab, other)
    check(read_columns(page), expected_columns(s, Language.get(other), case["request"]))


def test_the_golden_cases_hold_every_kind_of_line(golden_pages: dict[str, Any]) -> None:
    """The cases above cover what a dispute is about: caps, rake, surrenders, naturals (with
    their thirteen cards in the request), jokers, Fantasyland, fouls, and every line item kind
    the engine writes."""
    settlements = [s for _, s, _ in golden_pages.values()]
    players = [p for s in settlements for p in s["players"]]
    kinds = {it["kind"] for s in settlements for pr in s["pairs"] for it in pr.get("items", [])}
    assert kinds >= GOLDEN_LINE_ITEM_KINDS
    assert {pr.get("cap") for s in settlements for pr in s["pairs"]} >= {
        "CAP_PAYER_STACK",
        "CAP_PAYEE_STACK",
    }
    assert any(int(s.get("rake", 0)) for s in settlements)
    assert any(p.get("surrendered") for p in players)
    assert any(p.get("natural") and not p.get("rows") for p in players)  # drawn from the request
    assert any(r.get("jokerCards") for p in players for r in p.get("rows", []))
    assert any(p.get("fantasyland", {}).get("qualifies") for p in players)
    assert any(p.get("fouled") for p in players)
    assert {s.get("currency") for s in settlements} >= {"XXX", "JPY", "KWD"}


def test_a_natural_without_the_request_says_where_its_cards_are(
    tab: Opened, golden_pages: dict[str, Any], tmp_path: Path
) -> None:
    from tests.views.conftest import cli

    stem = next(
        k
        for k, (_, s, _) in golden_pages.items()
        if any(p.get("natural") and not p.get("rows") for p in s["players"])
    )
    path, s, _ = golden_pages[stem]
    page_file = tmp_path / "no-request.html"
    assert cli("view", str(path.with_suffix(".json")), "-o", str(page_file))[0] == 0
    page = tab.open(page_file)
    natural = next(p for p in s["players"] if p.get("natural") and not p.get("rows"))
    article = page.locator(f'article.player[data-player="{natural["playerId"]}"]')
    assert article.locator(".natural-cards").count() == 0
    assert "a natural is settled on the thirteen cards as dealt" in article.inner_text()
