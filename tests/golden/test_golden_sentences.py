"""The sentences a settlement says, word for word, for one pair of each kind in the golden
cases, through the real server.

The golden files hold the arithmetic (units, money, statuses); test_golden_wire.py checks that
the server writes the same sentences as the engine in process, which both would write wrong
alike. Here each pair's line items (kind, units, text), its rows and its closing sentence are
written out; each was read against its case's hand-worked comment (the same winner, amounts
and reasons). A pair of every kind the engine settles: rows with bonuses, royalties, a scoop
and a home run multiplied, each foul rule, surrenders, and each way a natural is paid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient

CASES = Path(__file__).parent / "cases"

# (case, first, second): (the pair's line items as (kind, units for first, text)..., its sentence)
SENTENCES: dict[tuple[str, str, str], tuple[Any, ...]] = {
    ("002-spec-13-2-ofc-always", "A", "B"): (
        ("ROYALTIES", -10, "Royalties: A 15, B 25 — B +10"),
        "A owes B 11 units = 1100; A pays 1100",
    ),
    ("003-spec-13-3-one-six-scoop", "P1", "P2"): (
        ("SCOOP_BONUS", 3, "Scoop bonus: P1 won all three rows — P1 +3"),
        "P2 owes P1 6 units = 600; P2 pays 600",
    ),
    ("102-one-six-scooped-fouls-cross-size", "B", "C"): (
        ("FOUL_PENALTY", 0, "Foul: B's hand is fouled (middle above back), so it loses every row"),
        ("SCOOP_BONUS", -3, "Scoop bonus: C won all three rows — C +3"),
        "B owes C 6 units = 600; B pays 600",
    ),
    ("102-one-six-scooped-fouls-cross-size", "B", "A"): (
        ("NO_SCORE", 0, "Both B and A fouled — they settle 0"),
        "B and A settle 0",
    ),
    ("102-one-six-scooped-fouls-cross-size", "C", "A"): (
        ("FOUL_PENALTY", 0, "Foul: A's hand is fouled (front above middle), so it loses every row"),
        ("SCOOP_BONUS", 3, "Scoop bonus: C won all three rows — C +3"),
        "A owes C 6 units = 600; A pays 600",
    ),
    ("107-one-two-row-tie-suit-default", "A", "C"): (
        ("MAJORITY_BONUS", 1, "Majority bonus: A won 2 rows to 1 — A +1"),
        "C owes A 2 units = 200; C pays 200",
    ),
    ("111-two-four-four-players-two-fouls", "A", "B"): (
        ("MAJORITY_BONUS", -1, "Majority bonus: B won 2 rows to 1 — B +1"),
        "A owes B 2 units = 200; A pays 200",
    ),
    ("118-ofc-fantasyland-stay-quads-not-kk", "A", "B"): (
        ("ROYALTIES", 2, "Royalties: A 14, B 12 — A +2"),
        "B owes A 3 units = 300; B pays 300",
    ),
    ("115-classic-1-6-fixed-foul-cross-size-ok", "B", "C"): (
        (
            "FOUL_PENALTY",
            -3,
            "Foul: B's hand is fouled (front above middle); he pays C the fixed penalty — C +3",
        ),
        ("ROYALTIES", -5, "Royalties: B also pays C's royalties of 5 — C +5"),
        "B owes C 8 units = 800; B pays 800",
    ),
    ("116-classic-1-6-naturals-equal-rank", "C", "D"): (
        ("NATURAL", 3, "Natural: C's three flushes wins automatically against D — C +3"),
        "D owes C 3 units = 300; D pays 300",
    ),
    ("116-classic-1-6-naturals-equal-rank", "C", "A"): (
        ("NATURAL", -4, "Natural: A's four threes of a kind outranks C's three flushes — A +4"),
        "C owes A 4 units = 400; C pays 400",
    ),
    ("116-classic-1-6-naturals-equal-rank", "C", "B"): (
        ("NO_SCORE", 0, "Natural: C's three flushes and B's six pairs rank equal — 0"),
        "C and B settle 0",
    ),
    ("117-classic-1-6-dragon-vs-fouls-false-declaration", "A", "C"): (
        (
            "NATURAL",
            9,
            "Natural: A's dragon against C's fouled hand (declared a natural the "
            "cards do not make); C pays the natural's 9 — A +9",
        ),
        "C owes A 9 units = 900; C pays 900",
    ),
    ("204-western-4p-surrenders-foul-natural", "C", "D"): (
        (
            "NATURAL",
            -4,
            "Natural: D's three straights against C's fouled hand (front above "
            "middle); C pays the natural's 4 — D +4",
        ),
        "C owes D 4 units = 400; C pays 400",
    ),
    ("204-western-4p-surrenders-foul-natural", "D", "A"): (
        ("SURRENDER", 3, "Surrender: A surrendered and pays D 3 — D +3"),
        "A owes D 3 units = 300; A pays 300",
    ),
    ("204-western-4p-surrenders-foul-natural", "A", "B"): (
        ("NO_SCORE", 0, "Both A and B surrendered — 0"),
        "A and B settle 0",
    ),
    ("213-eastern-4p-surrender-pays-fouled-false", "A", "B"): (
        ("NO_SCORE", 0, "Surrender: A surrendered, but B's fouled hand collects nothing — 0"),
        "A and B settle 0",
    ),
    ("213-eastern-4p-surrender-pays-fouled-false", "D", "B"): (
        (
            "FOUL_PENALTY",
            3,
            "Foul: B's hand is fouled (front above middle); he pays D the fixed penalty — D +3",
        ),
        ("ROYALTIES", 6, "Royalties: B also pays D's royalties of 6 — D +6"),
        "B owes D 9 units = 900; B pays 900",
    ),
    ("213-eastern-4p-surrender-pays-fouled-false", "A", "C"): (
        ("SURRENDER", -3, "Surrender: A surrendered and pays C 3 — C +3"),
        "A owes C 3 units = 300; A pays 300",
    ),
    ("219-shisanshui-4p-home-run", "A", "B"): (
        ("SCOOP_MULTIPLIER", 6, "Scoop ×2: A scooped — +6 becomes +12 for A"),
        (
            "HOME_RUN_MULTIPLIER",
            12,
            "Home run ×2: A scooped every opponent — +12 becomes +24 for A",
        ),
        "B owes A 24 units = 2400; B pays 2400",
    ),
    ("221-shisanshui-3p-foul-scooped-no-home-run", "B", "C"): (
        ("FOUL_PENALTY", 0, "Foul: B's hand is fouled (front above middle), so it loses every row"),
        ("SCOOP_MULTIPLIER", -4, "Scoop ×2: C scooped — +4 becomes +8 for C"),
        "B owes C 8 units = 800; B pays 800",
    ),
    ("223-shisanshui-3p-naturals-and-false-declaration", "A", "C"): (
        (
            "NATURAL",
            6,
            "Natural: A's three straights against C's fouled hand (declared a "
            "natural the cards do not make); C pays the foul penalty of 6, more than the "
            "natural's 3 — A +6",
        ),
        "C owes A 6 units = 600; C pays 600",
    ),
    # a natural made with a joker names the card the joker stands for
    ("406-shisanshui-two-jokers-dragon-and-fouled-joker-hand", "A", "B"): (
        (
            "NATURAL",
            36,
            "Natural: A's dragon (Xj as As) against B's fouled hand (front above "
            "middle); B pays the natural's 36 — A +36",
        ),
        "B owes A 36 units = 3600; B pays 3600",
    ),
    ("406-shisanshui-two-jokers-dragon-and-fouled-joker-hand", "A", "C"): (
        ("NATURAL", 36, "Natural: A's dragon (Xj as As) wins automatically against C — A +36"),
        "C owes A 36 units = 3600; C pays 3600",
    ),
    ("403-shisanshui-equal-naturals-compare-cards", "A", "B"): (
        (
            "NATURAL",
            4,
            "Natural: A's six pairs and B's six pairs rank equal; compared from the "
            "top, card 11 is nine against eight — A +4",
        ),
        "B owes A 4 units = 400; B pays 400",
    ),
}

ROWS = {
    ("003-spec-13-3-one-six-scoop", "P1", "P2"): [
        "Front: P1's pair of aces, jack kicker, beats P2's pair of queens, three kicker — P1 +1",
        "Middle: P1's straight, eight high, beats P2's two pair, jacks and tens — P1 +1",
        "Back: P1's full house, kings full of nines, beats P2's ten-high flush — P1 +1",
    ],
    ("118-ofc-fantasyland-stay-quads-not-kk", "A", "B"): [
        "Front: B's pair of kings, five kicker, beats A's pair of fours, two kicker — B +1",
        "Middle: A's straight, king high, beats B's two pair, aces and sixes — A +1",
        "Back: A's four of a kind, eights, beats B's ace-high flush — A +1",
    ],
    ("105-one-two-one-row-two-pushes", "B", "A"): [
        "Front: B's high card, ten, ties A's high card, ten — push",
        "Middle: B's pair of sixes, king kicker, ties A's pair of sixes, king kicker — push",
        "Back: A's ace-high flush beats B's straight, jack high — A +1",
    ],
    # rowTie SUIT_OF_HIGHEST_CARD: the deciding cards in the row's sentence, for either player
    ("107-one-two-row-tie-suit-default", "A", "B"): [
        "Front: A's high card, king, beats B's high card, king (equal by rank; highest card Kc "
        "against Kd) — A +1",
        "Middle: A's straight, nine high, beats B's two pair, nines and sixes — A +1",
        "Back: A's full house, jacks full of threes, beats B's ace-high flush — A +1",
    ],
    ("107-one-two-row-tie-suit-default", "B", "C"): [
        "Front: C's pair of queens, seven kicker, beats B's high card, king — C +1",
        "Middle: C's straight, nine high, beats B's two pair, nines and sixes — C +1",
        "Back: B's ace-high flush beats C's ace-high flush (equal by rank; highest card Ac "
        "against Ad) — B +1",
    ],
    # a tie by suit won by the pair's second player: his card is named first
    ("108-one-two-row-tie-suit-filipino-foul", "A", "B"): [
        "Front: B's high card, king, beats A's high card, king (equal by rank; highest card Kd "
        "against Kc) — B +1",
        "Middle: A's straight, nine high, beats B's two pair, nines and sixes — A +1",
        "Back: A's full house, jacks full of threes, beats B's ace-high flush — A +1",
    ],
    # B fouled (middle above back): C wins each row without comparison
    ("102-one-six-scooped-fouls-cross-size", "B", "C"): [
        "Front: C's pair of queens, three kicker wins against B's fouled hand — C +1",
        "Middle: C's three of a kind, fours wins against B's fouled hand — C +1",
        "Back: C's straight, nine high wins against B's fouled hand — C +1",
    ],
}

# case: each player's closing sentence (net units, money after caps, rake, why), then the
# settlement's rake line if any; the amounts are the case's netUnits, netMoney and rake.
PLAYERS = {
    "107-one-two-row-tie-suit-default": (
        "A: +5 units, +500 after caps",
        "B: -5 units, -500 after caps",
        "C: 0 units, 0 after caps",
    ),
    "116-classic-1-6-naturals-equal-rank": (
        "C: -1 units, -100 after caps; natural: three flushes",
        "D: -10 units, -1000 after caps",
        "A: +12 units, +1200 after caps; natural: four threes of a kind",
        "B: -1 units, -100 after caps; natural: six pairs",
    ),
    "204-western-4p-surrenders-foul-natural": (
        "C: +2 units, +200 after caps; fouled (front above middle)",
        "D: +10 units, +1000 after caps; natural: three straights",
        "A: -6 units, -600 after caps; surrendered",
        "B: -6 units, -600 after caps; surrendered",
    ),
    "206-western-3p-caps-current-stack": (
        "A: +6 units, +500 after caps",
        "B: -6 units, -300 after caps",
        "C: 0 units, -200 after caps",
    ),
    "217-eastern-3p-rake-commission-capped": (
        "A: +13 units, +6300 after caps and 200 rake",
        "B: +1 units, +291 after caps and 9 rake",
        "C: -14 units, -6800 after caps",
        "Rake: 209 to the house",
    ),
    "405-one-six-duplicating-joker-five-aces": (
        "A: -1 units, -100 after caps",
        "B: +1 units, +100 after caps",
    ),
}


def served(client: SettlementClient, stem: str) -> pb.Settlement:
    case = json.loads((CASES / f"{stem}.json").read_text("utf-8"))
    return client.settle(json_format.ParseDict(case["request"], pb.SettleRequest())).settlement


def pair(s: pb.Settlement, first: str, second: str) -> pb.PairResult:
    return next(p for p in s.pairs if (p.first, p.second) == (first, second))


@pytest.mark.parametrize("key", sorted(SENTENCES), ids=lambda k: f"{k[0][:3]}-{k[1]}{k[2]}")
def test_a_pair_says_what_was_worked_out_by_hand(
    client: SettlementClient, key: tuple[str, str, str]
) -> None:
    *items, text = SENTENCES[key]
    got = pair(served(client, key[0]), key[1], key[2])
    assert [
        (pb.LineItemKind.Name(i.kind).removeprefix("LINE_ITEM_KIND_"), i.units, i.text)
        for i in got.items
    ] == items
    assert got.text == text


@pytest.mark.parametrize("key", sorted(ROWS), ids=lambda k: f"{k[0][:3]}-{k[1]}{k[2]}")
def test_rows_say_who_beats_whom(client: SettlementClient, key: tuple[str, str, str]) -> None:
    got = pair(served(client, key[0]), key[1], key[2])
    assert [r.text for r in got.rows] == ROWS[key]


@pytest.mark.parametrize("stem", sorted(PLAYERS), ids=lambda k: k[:3])
def test_players_say_their_nets(client: SettlementClient, stem: str) -> None:
    s = served(client, stem)
    assert tuple(p.text for p in s.players) + tuple(s.text[len(s.players) :]) == PLAYERS[stem]
    assert tuple(s.text[: len(s.players)]) == tuple(p.text for p in s.players)


def test_equal_naturals_with_equal_cards_settle_nothing(client: SettlementClient) -> None:
    """Case 403 with B's last three cards made 9 9 2 like A's (RULES.md §16.2): compared card
    by card from the top, nothing differs, so the pair settles 0 under COMPARE_CARDS too."""
    case = json.loads(next(CASES.glob("403-*.json")).read_text("utf-8"))
    request = case["request"]
    request["players"][1]["cards"][10:] = ["9d", "9c", "2d"]
    request["players"][2]["arrangement"]["back"][4] = "3d"  # C gave B its 2d: trips 7s, 2h 3d
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    ab = pair(s, "A", "B")
    assert [(i.units, i.text) for i in ab.items] == [
        (0, "Natural: A's six pairs and B's six pairs and their cards rank the same — 0")
    ]
    assert (ab.units, ab.text) == (0, "A and B settle 0")


def test_equal_naturals_won_by_the_second_player(client: SettlementClient) -> None:
    """Case 403 with A's and B's cards swapped: B now holds the nines, so B collects."""
    case = json.loads(next(CASES.glob("403-*.json")).read_text("utf-8"))
    request = case["request"]
    a, b = request["players"][0], request["players"][1]
    a["cards"], b["cards"] = b["cards"], a["cards"]
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    ab = pair(s, "A", "B")
    assert [(i.units, i.text) for i in ab.items] == [
        (
            -4,
            "Natural: B's six pairs and A's six pairs rank equal; compared from the top, card "
            "11 is nine against eight — B +4",
        )
    ]
    assert (ab.units, ab.text) == (-4, "A owes B 4 units = 400; A pays 400")


def test_a_scooped_foul_against_a_natural_counts_the_majority_bonus_on_scoop(
    client: SettlementClient,
) -> None:
    """Case 223 with a majority bonus of 1 paid on a scoop too: C's foul costs it what a scoop
    costs, (3 rows x 1 + 0 scoop bonus + 1 majority bonus) x 2 = 8, more than A's natural (3)
    and B's (4) — RULES.md §14.6."""
    case = json.loads(next(CASES.glob("223-*.json")).read_text("utf-8"))
    request = case["request"]
    request["profileOverrides"] = {"scoring": {"majorityBonus": 1, "majorityBonusOnScoop": True}}
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    assert [i.text for i in pair(s, "A", "C").items] == [
        "Natural: A's three straights against C's fouled hand (declared a natural the cards do "
        "not make); C pays the foul penalty of 8, more than the natural's 3 — A +8"
    ]
    assert pair(s, "B", "C").units == 8


def test_a_foul_penalty_equal_to_the_natural_is_paid_as_the_natural(
    client: SettlementClient,
) -> None:
    """Case 223 with scoop bonus 1 and no scoop multiplier: a scooped foul costs 3 x 1 + 1 = 4.
    Against A's natural (3) the penalty is more and is paid; against B's (4) it is equal, not
    more, so C pays B the natural's 4 (GREATER_OF_NATURAL_AND_FOUL)."""
    case = json.loads(next(CASES.glob("223-*.json")).read_text("utf-8"))
    request = case["request"]
    request["profileOverrides"] = {"scoring": {"scoopBonus": 1, "scoopMultiplier": 1}}
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    fouled = "C's fouled hand (declared a natural the cards do not make)"
    assert [i.text for pr in (pair(s, "A", "C"), pair(s, "B", "C")) for i in pr.items] == [
        f"Natural: A's three straights against {fouled}; C pays the foul penalty of 4, more "
        "than the natural's 3 — A +4",
        f"Natural: B's six pairs against {fouled}; C pays the natural's 4 — B +4",
    ]


def test_each_multiplier_applies_without_the_other(client: SettlementClient) -> None:
    """Case 218 (a scoop, 2 players) with the home run multiplier at 1: the scoop still doubles
    (+8 -> +16); case 219 (a home run) with the scoop multiplier at 1: A's +6 against each
    opponent doubles once, by the home run, to +12."""
    case = json.loads(next(CASES.glob("218-*.json")).read_text("utf-8"))
    request = case["request"]
    request["profileOverrides"]["scoring"] = {"homeRun": {"multiplier": 1}}
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    assert [(i.units, i.text) for i in pair(s, "A", "B").items] == [
        (8, "Scoop ×2: A scooped — +8 becomes +16 for A")
    ]
    case = json.loads(next(CASES.glob("219-*.json")).read_text("utf-8"))
    request = case["request"]
    request["profileOverrides"] = {"scoring": {"scoopMultiplier": 1}}
    s = client.settle(json_format.ParseDict(request, pb.SettleRequest())).settlement
    assert [(i.units, i.text) for i in pair(s, "A", "B").items] == [
        (6, "Home run ×2: A scooped every opponent — +6 becomes +12 for A")
    ]
