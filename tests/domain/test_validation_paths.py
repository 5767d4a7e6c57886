"""What domain/validation.py says about each kind of bad table, word for word with its code:
every bad card of a row, a missing row, rows of the wrong sizes that still hold 13 cards, loose
cards, dead cards, jokers, player ids and seats, each named where it is.

A good hand takes a fast path (all 13 cards looked up at once) and only a hand with a problem is
walked card by card; these tables each take the slow path at least once, so a mutant that lets
a bad hand through the fast path, or names a problem wrongly on the slow one, fails here.
Written to kill the mutants the mutation run found alive (docs/MUTATION.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from cpsettle_service.domain.errors import InvalidInput
from tests.domain.test_boundaries import LOSER, STRONG, player, request, settle_json

NOT_A_CARD = (
    "is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), suits s h d c (or ♠ ♥ ♦ ♣)"
)
NO_JOKERS = "is a joker, and this profile's deck holds none (deck.jokers)"
JOKER_1 = {"deck": {"jokers": 1}}
LOOSE = [c for row in LOSER for c in row]  # 13 cards, no natural


def refused(
    players: list[dict[str, Any]], preset: str = "western", **extra: Any
) -> list[tuple[str, str, str]]:
    with pytest.raises(InvalidInput) as e:
        settle_json(request(players, preset, **extra))
    return [(v.field, v.reason, v.code.value) for v in e.value.violations]


def strong(**extra: Any) -> dict[str, Any]:
    return player("C", 3, STRONG, **extra)


def test_every_bad_card_of_a_row_is_named_and_the_rest_of_the_row_still_read() -> None:
    front = ["Zz", "Xj", "1s"]
    assert refused([player("A", 1, (front, LOSER[1], LOSER[2])), strong()]) == [
        ("players[0].arrangement.front[0]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
        ("players[0].arrangement.front[1]", f"'Xj' {NO_JOKERS}", "malformed_card"),
        ("players[0].arrangement.front[2]", f"'1s' {NOT_A_CARD}", "malformed_card"),
    ]


def test_a_card_with_spaces_around_it_is_read_as_the_card() -> None:
    front = [" 3h", "4c ", "7c"]
    s = settle_json(request([player("A", 1, (front, LOSER[1], LOSER[2])), strong()], "western"))
    assert s.player("A").rows[0].cards == ("3h", "4c", "7c")


def test_a_card_used_twice_names_where_it_was_first() -> None:
    back = ["Qc", "Qd", "Qs", "Jc", "As"]  # As is C's
    assert refused([player("A", 1, (LOSER[0], LOSER[1], back)), strong()]) == [
        (
            "players[1].arrangement.middle[0]",
            "As is already used at players[0].arrangement.back[4]: one deck per table",
            "duplicate_card",
        )
    ]


def test_a_missing_row_is_named_beside_the_bad_cards_of_the_others() -> None:
    only_middle = {"playerId": "A", "seat": 1, "arrangement": {"middle": ["8c", "Zz"]}}
    only_front = {"playerId": "B", "seat": 2, "arrangement": {"front": ["2d", "2s", "5c"]}}
    assert refused([only_middle, only_front]) == [
        ("players[0].arrangement.front", "is required (3 cards)", "other"),
        ("players[0].arrangement.middle", "must hold 5 cards, got 2", "row_size"),
        ("players[0].arrangement.middle[1]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
        ("players[0].arrangement.back", "is required (5 cards)", "other"),
        ("players[1].arrangement.middle", "is required (5 cards)", "other"),
        ("players[1].arrangement.back", "is required (5 cards)", "other"),
    ]


@pytest.mark.parametrize("missing", ["front", "middle", "back"])
def test_each_row_alone_missing_is_named(missing: str) -> None:
    a = player("A", 1, LOSER)
    del a["arrangement"][missing]
    size = 3 if missing == "front" else 5
    assert refused([a, strong()]) == [
        (f"players[0].arrangement.{missing}", f"is required ({size} cards)", "other")
    ]


@pytest.mark.parametrize("sizes", [(4, 4, 5), (3, 4, 6), (4, 5, 4), (2, 5, 6)])
def test_thirteen_cards_in_rows_of_the_wrong_sizes_are_refused(sizes: tuple[int, ...]) -> None:
    cards = LOOSE
    f, m = sizes[0], sizes[0] + sizes[1]
    rows = (cards[:f], cards[f:m], cards[m:])
    want = [
        (f"players[0].arrangement.{key}", f"must hold {size} cards, got {got}", "row_size")
        for key, size, got in zip(("front", "middle", "back"), (3, 5, 5), sizes, strict=True)
        if size != got
    ]
    assert refused([player("A", 1, rows), strong()]) == want


def test_what_a_player_sends_must_be_one_thing() -> None:
    nothing = {"playerId": "A", "seat": 1}
    both = dict(player("B", 2, LOSER), cards=LOOSE)
    declares = {"playerId": "D", "seat": 4, "surrender": True, "declaredNatural": "DRAGON"}
    assert refused([nothing, both, strong(), declares]) == [
        (
            "players[0]",
            "needs an arrangement, 13 cards with a declared natural, or a surrender",
            "surrender",
        ),
        ("players[1]", "send either an arrangement or 13 cards, not both", "other"),
        (
            "players[1].cards",
            "13 loose cards need a declared natural under this profile; "
            "otherwise send an arrangement",
            "natural",
        ),
        ("players[3]", "a player cannot both surrender and declare a natural", "surrender"),
    ]


def test_a_natural_the_profile_does_not_play_is_named() -> None:
    assert refused([player("A", 1, LOSER, declaredNatural="DRAGON"), strong()], "ofc") == [
        ("players[0].declaredNatural", "DRAGON is not played under profile 'ofc'", "natural")
    ]


def test_bad_loose_cards_are_named_one_by_one() -> None:
    loose = {
        "playerId": "A",
        "seat": 1,
        "cards": [*LOOSE[:11], "Zz"],
        "declaredNatural": "SIX_PAIRS",
    }
    assert refused([loose, strong()]) == [
        ("players[0].cards", "must hold 13 cards, got 12", "row_size"),
        ("players[0].cards[11]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
    ]


def test_twelve_good_loose_cards_are_one_short() -> None:
    loose = {"playerId": "A", "seat": 1, "cards": LOOSE[:12], "declaredNatural": "SIX_PAIRS"}
    assert refused([loose, strong()]) == [
        ("players[0].cards", "must hold 13 cards, got 12", "row_size")
    ]


def test_a_joker_among_bad_cards_is_a_card_where_the_deck_has_one() -> None:
    """The slow path reads ``Xj`` as a card when the profile's deck holds jokers: in rows and
    in loose cards only the bad card beside it is named (the dead cards: below)."""
    front = ["Xj", "Zz", "7c"]
    loose = {
        "playerId": "B",
        "seat": 2,
        "cards": [*STRONG[1], *STRONG[2], "Xj", "Zz", "4d"],
        "declaredNatural": "SIX_PAIRS",
    }
    assert refused(
        [player("A", 1, (front, LOSER[1], LOSER[2])), loose],
        "western",
        profileOverrides={"deck": {"jokers": 2}},
        deadCards=["Yy"],
    ) == [
        ("players[0].arrangement.front[1]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
        ("players[1].cards[11]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
        ("deadCards[0]", f"'Yy' {NOT_A_CARD}", "malformed_card"),
    ]


def test_dead_cards_are_checked_like_a_hand() -> None:
    assert refused([player("A", 1, LOSER), strong()], deadCards=["Xj"]) == [
        ("deadCards[0]", f"'Xj' {NO_JOKERS}", "malformed_card")
    ]
    assert refused([player("A", 1, LOSER), strong()], deadCards=["2h", "Zz", "Xj"]) == [
        ("deadCards[1]", f"'Zz' {NOT_A_CARD}", "malformed_card"),
        ("deadCards[2]", f"'Xj' {NO_JOKERS}", "malformed_card"),
    ]
    assert refused(
        [player("A", 1, LOSER), strong()], "ofc", profileOverrides=JOKER_1, deadCards=["Xj", "Zz"]
    ) == [("deadCards[1]", f"'Zz' {NOT_A_CARD}", "malformed_card")]


def test_jokers_past_the_deck_and_a_repeat_beside_a_joker() -> None:
    front = ["Xj", "4c", "7c"]
    assert refused(
        [player("A", 1, (front, LOSER[1], LOSER[2])), strong()],
        "ofc",
        profileOverrides=JOKER_1,
        deadCards=["Xj"],
    ) == [
        (
            "players",
            "the table holds 2 jokers; the profile's deck has 1 (deck.jokers)",
            "duplicate_card",
        )
    ]
    assert refused(
        [player("A", 1, (front, LOSER[1], LOSER[2])), strong()],
        "ofc",
        profileOverrides=JOKER_1,
        deadCards=["As"],
    ) == [
        (
            "deadCards[0]",
            "As is already used at players[1].arrangement.middle[0]: one deck per table",
            "duplicate_card",
        )
    ]


def test_player_ids_and_seats_are_named() -> None:
    players = [
        player("A", 1, LOSER),
        player("", 2, STRONG),
        player("A", 3, ([], [], [])),
        player("x\ty", 1, ([], [], [])),
    ]
    for p in players[2:]:
        del p["arrangement"]
        p["surrender"] = True
    found = refused(players, unitValue=0)
    assert found[0] == ("unitValue", "must be 1 to 1,000,000,000,000 minor units, got 0", "other")
    assert found[1:] == [
        ("players[1].playerId", "is required", "other"),
        ("players[2].playerId", "'A' is also the id of players[0]", "duplicate_seat_or_id"),
        ("players[3].playerId", "must be 1-64 printable characters", "other"),
        ("players[3].seat", "seat 1 is also taken by players[0]", "duplicate_seat_or_id"),
    ]
    assert refused([player("A", -1, LOSER), strong()]) == [
        ("players[0].seat", "must be 0 or more, got -1", "other")
    ]


# ------------------------------------------------ what domain/evaluation.py refuses in a table

NO_DECLARATION = {"naturals": {"requireDeclaration": False}}


def test_loose_cards_that_make_no_natural_where_naturals_are_found() -> None:
    loose = {"playerId": "A", "seat": 1, "cards": LOOSE}
    assert refused([loose, strong()], profileOverrides=NO_DECLARATION) == [
        (
            "players[0].cards",
            "these 13 cards make no natural this profile plays; send an arrangement",
            "natural",
        )
    ]


def test_loose_cards_where_no_natural_is_played() -> None:
    loose = {"playerId": "A", "seat": 1, "cards": LOOSE}
    overrides = {"naturals": {"requireDeclaration": False, "table": []}}
    assert refused([loose, strong()], profileOverrides=overrides) == [
        (
            "players[0].cards",
            "13 loose cards without a declared natural: send an arrangement",
            "natural",
        )
    ]


def test_a_joker_with_no_card_left_is_refused_with_its_code() -> None:
    held = {c for row in LOSER + STRONG for c in row} | {"Xj"}
    front = ["Xj", *LOSER[0][1:]]
    dead = [r + s for r in "23456789TJQKA" for s in "shdc" if r + s not in held]
    assert refused(
        [player("A", 1, (front, LOSER[1], LOSER[2])), strong()],
        "ofc",
        profileOverrides=JOKER_1,
        deadCards=[*dead, LOSER[0][0]],
    ) == [
        (
            "players[0]",
            "no card is left for a joker to stand for: every standard card is held "
            "or dead (RULES.md §16.3)",
            "other",
        )
    ]


def test_a_false_declaration_is_its_only_foul_reason() -> None:
    """Rows that would foul too (front trips over a middle pair) add nothing: the hand is
    fouled for the declaration alone."""
    fouled_rows = (
        ["Qs", "Qh", "Qc"],
        ["Ks", "Kh", "5d", "9c", "2s"],
        ["8h", "7d", "6c", "4s", "3h"],
    )
    s = settle_json(
        request([player("A", 1, fouled_rows, declaredNatural="DRAGON"), strong()], "western")
    )
    assert s.player("A").foul_reasons == ("FALSE_DECLARATION",)
