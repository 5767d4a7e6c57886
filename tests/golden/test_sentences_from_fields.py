"""The settlement carries everything its sentences say (issue 29): every sentence of a settlement
— each row's outcome, each line item, each pair's money line, each player's sentence and hands'
names, Fantasyland, the totals and the rake — rendered in English from the structured fields
alone (i18n/sentences.py) is the signed sentence, byte for byte. On every golden case and on
random tables of every preset and of random house rules (jokers, house naturals, naturals of
equal rank compared card by card, suit tie-breaks, multipliers, caps, rake), all settled by the
real server through the project's client.

Then the same settlements in the four other languages: every sentence is shown translated
(never the signed English for want of a field or a message), and differs from the English
wherever the language's words differ.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_client.i18n import Language
from cpsettle_client.i18n.sentences import SIGNED, all_sentences, english
from cpsettle_service.profile_files import preset_names
from tests.conftest import ServerHandle
from tests.golden.sentence_tables import house_table, preset_table
from tests.support.tables import GOLDEN_LINE_ITEM_KINDS

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))
TRANSLATED = ("es", "it", "zh_Hans", "zh_Hant")
PER_PRESET = 40  # random tables of each preset (9 presets)
HOUSE = 300  # random tables under random house rules


def served(client: SettlementClient, request: dict[str, Any]) -> pb.Settlement:
    return client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement


def settled(client: SettlementClient, request: dict[str, Any]) -> pb.Settlement | None:
    """The settlement, or None for a drawn table the rules refuse (said why, never a crash)."""
    try:
        return served(client, request)
    except SettlementError as e:
        assert e.code.name == "INVALID_ARGUMENT" and e.violations, e
        return None


def mismatches(s: pb.Settlement) -> list[tuple[str, str, str]]:
    return [
        (where, rendered, signed) for where, rendered, signed in english(s) if rendered != signed
    ]


def count(s: pb.Settlement) -> int:
    return sum(1 for _ in english(s))


@pytest.fixture(scope="module")
def golden(server: ServerHandle) -> dict[str, pb.Settlement]:
    with SettlementClient(server.address, timeout=10) as client:
        return {p.stem: served(client, json.loads(p.read_text("utf-8"))["request"]) for p in CASES}


def test_every_golden_sentence_from_the_fields(golden: dict[str, pb.Settlement]) -> None:
    total = 0
    for stem, s in golden.items():
        assert mismatches(s) == [], stem
        total += count(s)
    assert total > 1000  # rows, items, pairs, players, hands, Fantasyland, totals


def test_the_golden_cases_say_every_kind_of_sentence(golden: dict[str, pb.Settlement]) -> None:
    """What the byte-for-byte test above walks: every line item kind, row ties broken by suit,
    a card comparison, a multiplier line, Fantasyland entered, stayed and not reached, rake."""
    settlements = list(golden.values())
    items = [i for s in settlements for pr in s.pairs for i in pr.items]
    kinds = {pb.LineItemKind.Name(i.kind) for i in items}
    assert kinds >= GOLDEN_LINE_ITEM_KINDS
    assert any(r.tie_break_cards for s in settlements for pr in s.pairs for r in pr.rows)
    assert any(i.HasField("cards_compared") for i in items)
    fantasyland = [
        p.fantasyland for s in settlements for p in s.players if p.HasField("fantasyland")
    ]
    assert any(f.qualifies and f.in_fantasyland for f in fantasyland)  # stays
    assert any(f.qualifies and not f.in_fantasyland for f in fantasyland)  # enters
    assert any(not f.qualifies for f in fantasyland)
    assert any(s.rake for s in settlements)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_golden_sentence_is_shown_translated(
    golden: dict[str, pb.Settlement], lang: str
) -> None:
    language = Language.get(lang)
    same: Counter[str] = Counter()
    for stem, s in golden.items():
        signed = [text for _, _, text in english(s)]
        shown = all_sentences(s, language)
        assert len(shown) == len(signed), stem
        for said, text in zip(shown, signed, strict=True):
            assert said.lang == language.tag and said.lang != SIGNED, (stem, text)
            assert said.text, (stem, text)
            if said.text == text:
                same[text] += 1
    if lang.startswith("zh"):
        assert not same, same  # no sentence is English words in Chinese
    else:
        # only hands' names that are the same words in both ("Full house" in Italian...)
        assert sum(same.values()) * 20 < sum(count(s) for s in golden.values()), same


def test_random_tables_of_every_preset(client: SettlementClient) -> None:
    rng = random.Random(2029)
    done: Counter[str] = Counter()
    sentences = 0
    for preset in sorted(preset_names()):
        for _ in range(PER_PRESET):
            request = preset_table(rng, preset)
            s = settled(client, request)
            if s is None:
                continue
            assert mismatches(s) == [], (preset, json.dumps(request))
            done[preset] += 1
            sentences += count(s)
    assert all(done[p] > PER_PRESET // 2 for p in preset_names()), done
    assert sentences > 20 * done.total()


def test_random_tables_of_random_house_rules(client: SettlementClient) -> None:
    rng = random.Random(1729)
    seen: Counter[str] = Counter()
    refused = 0
    for _ in range(HOUSE):
        request = house_table(rng)
        s = settled(client, request)
        if s is None:
            refused += 1
            continue
        assert mismatches(s) == [], json.dumps(request)
        language = Language.get(TRANSLATED[sum(seen.values()) % len(TRANSLATED)])
        assert {x.lang for x in all_sentences(s, language)} == {language.tag}, json.dumps(request)
        items = [i for pr in s.pairs for i in pr.items]
        seen.update(pb.LineItemKind.Name(i.kind) for i in items)
        seen["compared"] += sum(i.HasField("cards_compared") for i in items)
        seen["suit tie"] += sum(bool(r.tie_break_cards) for pr in s.pairs for r in pr.rows)
        seen["jokers"] += sum(bool(r.joker_cards) for p in s.players for r in p.rows)
        seen["natural jokers"] += sum(bool(p.natural_joker_cards) for p in s.players)
        seen["rake"] += bool(s.rake)
    assert refused < HOUSE // 2, refused  # surrenders and declarations some rules refuse
    for what in (
        "LINE_ITEM_KIND_NATURAL",
        "LINE_ITEM_KIND_SCOOP_MULTIPLIER",
        "LINE_ITEM_KIND_HOME_RUN_MULTIPLIER",
        "compared",
        "suit tie",
        "jokers",
        "natural jokers",
        "rake",
    ):
        assert seen[what], (what, seen)


def test_a_sentence_the_fields_do_not_say_stays_the_signed_english(
    golden: dict[str, pb.Settlement],
) -> None:
    """Decision 48: a settlement whose sentence its fields do not say (an older engine's, one
    edited by hand) shows that sentence in the signed English, marked English; the others are
    still translated."""
    s = pb.Settlement()
    s.CopyFrom(golden["107-one-two-row-tie-suit-default"])
    item = next(i for pr in s.pairs for i in pr.items)
    item.text = item.text.replace("won", "took")  # the fields no longer say it
    s.players[0].net_units += 1  # nor the first player's sentence
    es = Language.get("es")
    shown = all_sentences(s, es)
    edited = {item.text, s.players[0].text}
    signed = [text for _, _, text in english(s)]
    for said, text in zip(shown, signed, strict=True):
        if text in edited:
            assert (said.text, said.lang) == (text, SIGNED)
        else:
            assert said.lang == es.tag
    assert sum(said.lang == SIGNED for said in shown) == 3  # the item, the player twice (totals)
