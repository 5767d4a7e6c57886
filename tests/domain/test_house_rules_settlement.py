"""RULES.md §16 through ``settle`` and ``evaluate_hand``: jokers at a table (what is refused,
what is reported), equal naturals compared by the cards, house naturals declared, and the
property that a joker hand is never weaker than any allowed replacement of its jokers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.cards.cards import DECK, JOKER, Card
from cpsettle_service.domain.errors import InvalidInput
from cpsettle_service.domain.settle import HandEvaluation, Settlement, settle
from cpsettle_service.domain.settle.evaluation import evaluate_hand
from cpsettle_service.domain.settle.jokers import allowed_cards, assignments
from cpsettle_service.domain.settle.table import PlayerInput, request_from_dict, resolve_profile
from cpsettle_service.profile_files import builtin_registry

REGISTRY = builtin_registry()


def run(
    preset: str,
    players: list[dict[str, Any]],
    overrides: dict[str, Any] | None = None,
    dead: Sequence[str] = (),
) -> Settlement:
    request: dict[str, Any] = {"preset": preset, "players": players, "deadCards": list(dead)}
    if overrides:
        request["profileOverrides"] = overrides
    table, choice = request_from_dict(request)
    return settle(table, resolve_profile(choice, REGISTRY))


def arranged(pid: str, seat: int, front: str, middle: str, back: str) -> dict[str, Any]:
    return {
        "playerId": pid,
        "seat": seat,
        "arrangement": {"front": front.split(), "middle": middle.split(), "back": back.split()},
    }


def refused(
    preset: str,
    players: list[dict[str, Any]],
    overrides: dict[str, Any] | None = None,
    dead: Sequence[str] = (),
) -> dict[str, str]:
    with pytest.raises(InvalidInput) as e:
        run(preset, players, overrides, dead)
    return {v.field: v.reason for v in e.value.violations}


A = ("Qs Xj 2c", "Ks Kh 5d 5c 9s", "8h 8d 8c 4s 4h")
B = ("7s 7h 3d", "Js Jh 9d 9c 3c", "As Ah Ad 2s 2d")
JOKER_1 = {"deck": {"jokers": 1}}


def test_a_joker_is_refused_where_the_deck_has_none_naming_the_option() -> None:
    found = refused("ofc", [arranged("A", 1, *A), arranged("B", 2, *B)])
    assert "deck.jokers" in found["players[0].arrangement.front[1]"]


def test_more_jokers_than_the_deck_holds_are_refused() -> None:
    found = refused("ofc", [arranged("A", 1, *A), arranged("B", 2, "7s 7h xJ", *B[1:])], JOKER_1)
    assert "2 jokers" in found["players"] and "deck.jokers" in found["players"]


def test_a_joker_in_the_dead_cards_counts_and_the_joker_spelling_is_either_case() -> None:
    s = run(
        "ofc",
        [arranged("A", 1, "Qs XJ 2c", *A[1:]), arranged("B", 2, *B)],
        {"deck": {"jokers": 2}},
        dead=["xj", "Qh"],
    )
    # Qh is dead: the joker stands for the next queen in the suit order s h c d: Qc.
    front = s.player("A").rows[0]
    assert front.cards == ("Qs", JOKER, "2c") and front.joker_cards == ("Qc",)
    assert front.resolved_cards == ("Qs", "Qc", "2c")
    row = next(r for r in s.pairs[0].rows if r.row.value == "FRONT")
    assert "(Xj as Qc)" in row.text
    found = refused("ofc", [arranged("A", 1, *A), arranged("B", 2, *B)], JOKER_1, dead=["Xj"])
    assert "2 jokers" in found["players"]


def three_rows(
    texts: tuple[str, str, str],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    front, middle, back = texts
    return tuple(front.split()), tuple(middle.split()), tuple(back.split())


def row_texts(s: Settlement, first: str, second: str) -> list[str]:
    return next([r.text for r in p.rows] for p in s.pairs if (p.first, p.second) == (first, second))


# Where a joker's card is named in a row's sentence: after the hand's phrase, whichever player
# holds it and whether his hand wins or loses; a phrase that has a comma ("pair of queens, two
# kicker") takes one after the note too when it is followed by "beats", one without does not.
BACK_HEARTS = ("Qs Qh 2c", "Ks Kh 5d 5c 9s", "Xj 2h 5h 9h Th")
B_CLUBS = ("7s 7h 3d", "Js Jh 9d 9c 3c", "Ac Tc 7c 6c 4c")


def test_a_losing_joker_row_names_its_card_after_the_phrase() -> None:
    s = run("ofc", [arranged("A", 1, *A), arranged("B", 2, "Kc Kd 3d", *B[1:])], JOKER_1)
    assert row_texts(s, "A", "B")[0] == (
        "Front: B's pair of kings, three kicker, beats A's pair of queens, two kicker "
        "(Xj as Qh) — B +1"
    )


def test_the_second_players_joker_is_named_in_the_sentence() -> None:
    s = run("ofc", [arranged("B", 1, *B), arranged("A", 2, *A)], JOKER_1)
    assert row_texts(s, "B", "A")[0] == (
        "Front: A's pair of queens, two kicker (Xj as Qh), beats B's pair of sevens, three "
        "kicker — A +1"
    )


def test_a_winning_joker_phrase_without_a_comma_takes_none() -> None:
    s = run("ofc", [arranged("A", 1, *BACK_HEARTS), arranged("B", 2, *B_CLUBS)], JOKER_1)
    # the joker is the highest heart no one holds: Ah (Kh, Qh are A's, Jh is B's)
    assert row_texts(s, "A", "B") == [
        "Front: A's pair of queens, two kicker, beats B's pair of sevens, three kicker — A +1",
        "Middle: A's two pair, kings and fives, beats B's two pair, jacks and nines — A +1",
        "Back: A's ace-high flush (Xj as Ah) beats B's ace-high flush — A +1",
    ]


def test_two_jokers_in_a_row_are_named_in_order() -> None:
    hearts = ("Qs Qh 2c", "Ks Kh 5d 5c 9s", "Xj Xj 5h 9h Th")
    s = run("ofc", [arranged("A", 1, *hearts), arranged("B", 2, *B_CLUBS)], {"deck": {"jokers": 2}})
    # Ah, then the highest heart left: Kh, Qh (A), Jh (B), Th and 9h (in the row) are held: 8h
    assert row_texts(s, "A", "B")[2] == (
        "Back: A's ace-high flush (Xj as Ah, Xj as 8h), beats B's ace-high flush — A +1"
    )


def test_a_hand_fouled_both_ways_says_both_reasons() -> None:
    s = run(
        "ofc",
        [
            arranged("A", 1, "Qs Qh Qc", "Ks Kh 5d 9c 2s", "8h 7d 6c 4s 3h"),
            arranged("B", 2, "7s 7h 3d", "Js Jh 9d Tc 3c", "As Ah Ad 2c 2d"),
        ],
    )
    # fouled (SCOOPED): B's 3 rows + scoop bonus 3 + B's royalties 2 (77) + 6 (full house) = 14
    assert s.player("A").text == (
        "A: -14 units, -1400 after caps; fouled (front above middle, middle above back)"
    )
    with pytest.raises(KeyError) as e:
        s.player("Z")
    assert e.value.args == ("Z",)


def test_a_joker_with_no_card_left_to_stand_for_is_invalid_input() -> None:
    held = {c for row in A + B for c in row.split()} - {JOKER}
    dead = [str(c) for c in DECK if str(c) not in held]
    found = refused("ofc", [arranged("A", 1, *A), arranged("B", 2, *B)], JOKER_1, dead=dead)
    assert found == {
        "players[0]": "no card is left for a joker to stand for: every standard "
        "card is held or dead (RULES.md §16.3)"
    }


def test_a_joker_with_exactly_one_card_left_stands_for_it() -> None:
    held = {c for row in A + B for c in row.split()} - {JOKER}
    dead = [str(c) for c in DECK if str(c) not in held and str(c) != "2h"]
    s = run("ofc", [arranged("A", 1, *A), arranged("B", 2, *B)], JOKER_1, dead=dead)
    assert s.player("A").rows[0].joker_cards == ("2h",)


def test_two_jokers_may_share_the_one_card_left_where_they_duplicate() -> None:
    """With ``jokerDuplicates`` one free card is enough for any number of jokers; without, each
    joker needs one of its own."""
    a = ("Qs Xj 2c", "Ks Kh 5d 5c 9s", "8h 8d Xj 4s 4h")
    held = {c for row in a + B for c in row.split()} - {JOKER}
    dead = [str(c) for c in DECK if str(c) not in held and str(c) != "2h"]
    two = {"deck": {"jokers": 2}}
    assert "players[0]" in refused(
        "ofc", [arranged("A", 1, *a), arranged("B", 2, *B)], two, dead=dead
    )
    s = run(
        "ofc",
        [arranged("A", 1, *a), arranged("B", 2, *B)],
        {"deck": {"jokers": 2, "jokerDuplicates": True}},
        dead=dead,
    )
    assert [len(r.joker_cards) for r in s.player("A").rows] == [1, 0, 1]


def test_each_row_names_its_own_jokers() -> None:
    a = ("Xj Qs 2c", "Xj Kh 5d 5c 9s", "8h 8d 8c 4s 4h")
    s = run("ofc", [arranged("A", 1, *a), arranged("B", 2, *B)], {"deck": {"jokers": 2}})
    rows = s.player("A").rows
    assert [r.cards[0] for r in rows[:2]] == [JOKER, JOKER]
    assert [len(r.joker_cards) for r in rows] == [1, 1, 0]


def test_a_false_declaration_with_a_joker_is_settled_on_its_rows() -> None:
    """A declares a natural his cards (with the joker) do not make: fouled, and his rows are
    still evaluated, the joker resolved for them, under a profile with royalties."""
    s = run(
        "classic-1-6",
        [arranged("A", 1, *A) | {"declaredNatural": "DRAGON"}, arranged("B", 2, *B)],
        JOKER_1,
    )
    a = s.player("A")
    assert a.status == "FOULED" and a.foul_reasons == ("FALSE_DECLARATION",)
    assert len(a.rows) == 3 and a.rows[0].joker_cards == ("Qh",)


def test_equal_naturals_push_when_the_cards_rank_the_same() -> None:
    same = {"equalRank": "COMPARE_CARDS"}
    a = {
        "playerId": "A",
        "seat": 1,
        "declaredNatural": "THREE_FLUSHES",
        "cards": "2h 4h 6h 8h Th 3s 5s 7s 9s Js Qd Kd Ad".split(),
    }
    b = {
        "playerId": "B",
        "seat": 2,
        "declaredNatural": "THREE_FLUSHES",
        "cards": "2c 4c 6c 8c Tc 3d 5d 7d 9d Jd Qs Ks As".split(),
    }
    s = run("western", [a, b], {"naturals": same})
    assert s.pairs[0].units == 0 and "their cards rank the same" in s.pairs[0].items[0].text
    s = run("western", [a, b])
    assert s.pairs[0].units == 0 and "rank equal — 0" in s.pairs[0].items[0].text


def test_a_house_natural_not_in_the_table_is_not_known() -> None:
    a = {
        "playerId": "A",
        "seat": 1,
        "declaredNatural": "ONE_RED",
        "cards": "2h 3d 4h 5d 6h 7d 8h 9d Th Jd Qh Kd As".split(),
    }
    found = refused("western", [a, arranged("B", 2, *B)])
    assert found["players[0].declaredNatural"] == "'ONE_RED' is not a known natural"


def test_evaluate_hand_resolves_jokers_and_lists_the_naturals_they_make() -> None:
    profile = resolve_profile(
        request_from_dict(
            {"preset": "shisanshui", "profileOverrides": {"deck": {"jokers": 1}}, "players": []}
        )[1],
        REGISTRY,
    )
    dragon = PlayerInput("p", 0, cards=tuple("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc Xj".split()))
    e = evaluate_hand(dragon, profile)
    assert "DRAGON" in e.playable_naturals and "DRAGON" in e.naturals
    ofc_joker = resolve_profile(
        request_from_dict({"preset": "ofc", "profileOverrides": JOKER_1, "players": []})[1],
        REGISTRY,
    )
    rows = evaluate_hand(PlayerInput("p", 0, *three_rows(A)), ofc_joker).rows
    assert rows[0].joker_cards == ("Qh",) and rows[0].hand.name == "Pair of queens, two kicker"


# ---------------------------------------------------------------------------------------------
# The property, through the engine: never weaker than any allowed replacement.


def _key(e: HandEvaluation) -> tuple[bool, int, int, int, int]:
    """Higher is better, in the order RULES.md §16.3 resolves a hand by."""
    return (
        not e.fouled,
        e.royalty_total,
        e.rows[2].hand.strength,
        e.rows[1].hand.strength,
        e.rows[0].hand.strength,
    )


@settings(max_examples=25, deadline=None)
@given(
    st.permutations(DECK),
    st.sets(st.integers(0, 12), min_size=1, max_size=2),
    st.sampled_from(["ofc", "eastern", "classic-1-6"]),
    st.booleans(),
)
def test_a_joker_hand_is_never_weaker_than_the_hand_with_any_allowed_replacement(
    deck: list[Card], where: set[int], preset: str, suit_tiebreak: bool
) -> None:
    overrides = {"deck": {"jokers": 2}, "ranking": {"suitOrderTiebreak": suit_tiebreak}}
    profile = resolve_profile(
        request_from_dict({"preset": preset, "profileOverrides": overrides, "players": []})[1],
        REGISTRY,
    )
    real = [str(c) for c in deck[:13]]
    cards = tuple(JOKER if i in where else c for i, c in enumerate(real))
    with_jokers = evaluate_hand(PlayerInput("p", 0, cards[:3], cards[3:8], cards[8:]), profile)
    best = _key(with_jokers)
    allowed = allowed_cards(cards, False)
    for i, other in enumerate(assignments(cards, allowed, False)):
        if i % 7:  # a seventh of the assignments keeps the example fast; all are covered over runs
            continue
        c = other.cards
        assert best >= _key(evaluate_hand(PlayerInput("p", 0, c[:3], c[3:8], c[8:]), profile))


def test_evaluate_hand_in_process_calls_a_nameless_hand_player_and_names_a_missing_row() -> None:
    profile = resolve_profile(request_from_dict({"preset": "ofc", "players": []})[1], REGISTRY)
    rows = three_rows(B)
    e = evaluate_hand(PlayerInput("", 0, *rows), profile)
    assert e.fantasyland is not None
    assert e.fantasyland.text == (
        "player does not qualify for Fantasyland (pair of sevens, three kicker in front)"
    )
    with pytest.raises(InvalidInput) as refused_:
        evaluate_hand(PlayerInput("p", 0, rows[0], None, rows[2]), profile)
    assert [(v.field, v.reason, v.code.value) for v in refused_.value.violations] == [
        ("arrangement.middle", "is required (5 cards)", "other")
    ]
