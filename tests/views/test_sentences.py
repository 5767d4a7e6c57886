"""The settlement's sentences in the browser (issue 29): the pages' script (views/assets/
sentences.js) says every sentence of every golden case in every language exactly as the Python
renderer does (i18n/sentences.py, which tests/golden/test_sentences_from_fields.py holds to
the signed English), and a reader of the hand view sees a line item in Spanish, with the
signed English sentence kept beside it (its title and data-signed)."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.i18n import Language, available
from cpsettle_client.i18n.sentences import all_sentences
from tests.views.conftest import Opened, choose_language


def test_the_page_says_every_sentence_as_the_python_renderer(
    module_tab: Opened, golden_pages: dict[str, Any]
) -> None:
    codes = list(available())
    assert {"en", "es", "it", "zh_Hans", "zh_Hant"} <= set(codes)
    compared = 0
    for stem, (path, s, _) in golden_pages.items():
        page = module_tab.open(path)  # the page carries its settlement's currency formats
        message = json_format.ParseDict(s, pb.Settlement())
        got = page.evaluate(
            f"() => {json.dumps(codes)}.map((c) => cpsettleView.sentences({json.dumps(s)}, c)"
            ".map((x) => [x.text, x.lang]))"
        )
        for code, shown in zip(codes, got, strict=True):
            want = [[x.text, x.lang] for x in all_sentences(message, Language.get(code))]
            assert shown == want, (stem, code)
            compared += len(want)
    assert compared > 5 * 1000


def test_a_line_item_read_in_spanish_in_the_hand_view(
    module_tab: Opened, golden_pages: dict[str, Any]
) -> None:
    path, s, _ = golden_pages["107-one-two-row-tie-suit-default"]
    page = module_tab.open(path)
    item = page.locator(
        'details.pair[data-pair="A-C"] li[data-kind="LINE_ITEM_KIND_MAJORITY_BONUS"] .item-text'
    )
    signed = "Majority bonus: A won 2 rows to 1 — A +1"
    assert item.inner_text() == signed and item.get_attribute("lang") == "en"
    choose_language(module_tab, "es")
    assert item.inner_text() == "Bonificación por ganar 2 de 3: A ganó 2 manos a 1 — A +1"
    assert item.get_attribute("lang") == "es"
    assert item.get_attribute("title") == signed == item.get_attribute("data-signed")
    # the hands by name, in Spanish, the service's English name in their title
    hand = page.locator('article.player[data-player="A"] .hand-class').first
    assert hand.get_attribute("lang") == "es" and hand.inner_text() != hand.get_attribute("title")
    english = next(r["name"] for p in s["players"] if p["playerId"] == "A" for r in p["rows"])
    assert hand.get_attribute("title") == english
