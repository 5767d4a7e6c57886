"""Jokers (RULES.md §16.3) in the domain: the allowed cards, the assignment an arranged hand or
a natural settles with, and the property that a joker hand is never weaker than the same hand
with its jokers replaced by any allowed cards."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpsettle_service.domain.cards.cards import DECK, JOKER, Card, is_joker, parse_card
from cpsettle_service.domain.cards.hands import (
    CARD_CODES,
    HandClass,
    HandRank,
    Wheel,
    evaluate_five,
    evaluate_three,
    evaluate_with_repeats,
    hand_of_codes,
)
from cpsettle_service.domain.cards.rows import ROWS
from cpsettle_service.domain.errors import CardError
from cpsettle_service.domain.profile.model import RuleProfile
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.domain.settle.jokers import (
    Assignment,
    allowed_cards,
    assignments,
    resolve_arrangement,
    resolve_natural,
    rows_of,
)
from cpsettle_service.profile_files import load_preset


def with_deck(
    preset: str, jokers: int = 2, duplicates: bool = False, **naturals: object
) -> RuleProfile:
    d = profile_to_dict(load_preset(preset))
    d["deck"] = {"jokers": jokers, "jokerDuplicates": duplicates}
    d["naturals"].update(naturals)
    return profile_from_dict(d)


def simple_fouls(cards: Sequence[str], hf: HandRank, hm: HandRank, hb: HandRank) -> bool:
    return hf.order_key > hm.order_key or hm.strength > hb.strength


def resolved(cards: Sequence[str], allowed: Sequence[Card], profile: RuleProfile) -> Assignment:
    """The assignment an arranged hand settles with, under ``simple_fouls``."""
    a = resolve_arrangement(cards, allowed, profile, simple_fouls)
    assert a is not None, "the jokers have no allowed card"
    return a


def natural_of(
    cards: Sequence[str], allowed: Sequence[Card], profile: RuleProfile, naturals: Sequence[str]
) -> tuple[str, Assignment]:
    found = resolve_natural(cards, allowed, profile, naturals)
    assert found is not None, naturals
    return found


def hand(text: str) -> tuple[str, ...]:
    return tuple(JOKER if is_joker(t) else str(parse_card(t)) for t in text.split())


def test_spelling() -> None:
    assert all(is_joker(t) for t in ("Xj", "xj", "XJ", " xJ "))
    assert not is_joker("Xs") and not is_joker(None)
    with pytest.raises(CardError, match="is a joker"):
        parse_card("Xj")


def test_allowed_cards() -> None:
    table = ["As", "Kd", JOKER]
    assert len(allowed_cards(table, False)) == 50
    assert parse_card("As") not in allowed_cards(table, False)
    assert allowed_cards(table, True) == DECK


def test_two_jokers_of_one_hand_stand_for_different_cards_unless_duplicating() -> None:
    cards = hand("Xj Xj 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc")
    allowed = allowed_cards(cards, False)[:3]
    assert len(list(assignments(cards, allowed, False))) == 3 * 2
    assert len(list(assignments(cards, allowed, True))) == 3 * 3


def test_a_joker_in_the_front_makes_the_best_front_the_rest_allows() -> None:
    # Back AA-KK-2, middle QQ-JJ-3: trips nines in front would pass the middle's two pair (a
    # foul), so a pair of nines is the most, with the highest kicker the cards allow.
    profile = with_deck("ofc")
    cards = hand("9s 9h Xj Qs Qh Jd Jc 3s As Ah Kd Kc 2s")
    a = resolved(cards, allowed_cards(cards, False), profile)
    hf, hm, hb = rows_of(a.cards, profile)
    assert hf.hand_class is HandClass.PAIR and not simple_fouls(a.cards, hf, hm, hb)
    # An ace (As Ah are in the back; Ad, Ac are free), the better suit of the order s h c d.
    assert a.stands_for == ("Ac",)


def test_ofc_royalties_decide_before_strength() -> None:
    profile = with_deck("ofc")
    cards = hand("2s 3h 4d 5s 6h 7d 8c 9s Th Jh Qh Xj 8h")
    a = resolved(cards, allowed_cards(cards, False), profile)
    _hf, _hm, hb = rows_of(a.cards, profile)
    # Th Jh Qh 8h + 9h is a straight flush (15 units), better than a flush or a straight.
    assert hb.hand_class is HandClass.STRAIGHT_FLUSH
    assert a.stands_for == ("9h",)


def test_a_hand_fouls_only_if_every_assignment_fouls() -> None:
    profile = with_deck("one-six")
    cards = hand("As Ah Xj 2s 3h 4d 5c 7s 8h 9d Tc Qs Kh")  # AA + anything above the rows
    a = resolved(cards, allowed_cards(cards, False), profile)
    hf, hm, hb = rows_of(a.cards, profile)
    assert simple_fouls(a.cards, hf, hm, hb)  # aces in front over a king-high middle: a foul
    # Fouled all the same: then the strongest rows, trips aces, and of Ad / Ac the better suit.
    assert hf.hand_class is HandClass.THREE_OF_A_KIND and a.stands_for == ("Ac",)


def test_five_of_a_kind_with_duplicating_jokers() -> None:
    cards = hand("2s 3h 4d 5s 6h 7d 8c 9s As Ah Ad Ac Xj")
    profile = with_deck("one-six", 1, True)
    a = resolved(cards, allowed_cards(cards, True), profile)
    _hf, _hm, hb = rows_of(a.cards, profile)
    assert hb.hand_class is HandClass.FIVE_OF_A_KIND and hb.name == "Five of a kind, aces"
    assert a.stands_for == ("As",)
    # Under OFC royalties the back's four aces and a king pay 10 and five aces nothing (table E
    # has no entry for it): the royalty total decides first (RULES.md §16.3).
    ofc = with_deck("ofc", 1, True)
    a = resolved(cards, allowed_cards(cards, True), ofc)
    assert rows_of(a.cards, ofc)[2].hand_class is HandClass.FOUR_OF_A_KIND


def test_naturals_with_jokers() -> None:
    d = profile_to_dict(load_preset("shisanshui"))
    d["deck"] = {"jokers": 1, "jokerDuplicates": True}
    d["naturals"]["table"].append({"natural": "FIVE_OF_A_KIND", "rank": 0, "units": 30})
    profile = profile_from_dict(d)
    dragon_less_one = hand("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc Xj")
    name, a = natural_of(
        dragon_less_one, allowed_cards(dragon_less_one, True), profile, profile.naturals.best_first
    )
    assert name == "DRAGON" and a.stands_for[0][0] == "A"
    five = hand("As Ah Ad Ac 2s 3h 4d 5c 6s 8h 9d Tc Xj")
    name, a = natural_of(five, allowed_cards(five, True), profile, ["FIVE_OF_A_KIND"])
    assert name == "FIVE_OF_A_KIND" and a.stands_for == ("As",)
    assert resolve_natural(five, allowed_cards(five, True), profile, ["DRAGON"]) is None


# ---------------------------------------------------------------------------------------------
# The property: never weaker than any allowed replacement (a reference written here).


def _reference_key(
    profile: RuleProfile, cards13: Sequence[str]
) -> tuple[bool, int, HandRank, HandRank, HandRank]:
    hf = evaluate_three(cards13[:3])
    hm = evaluate_five(cards13[3:8])
    hb = evaluate_five(cards13[8:])
    legal = hf <= hm <= hb
    rows = zip(ROWS, (hf, hm, hb), strict=True)
    royalty = sum(profile.royalties.units(r, h) for r, h in rows) if legal else 0
    return (legal, royalty, hb, hm, hf)


@settings(max_examples=60, deadline=None)
@given(
    st.permutations(DECK),
    st.sets(st.integers(0, 12), min_size=1, max_size=2),
    st.sampled_from(["ofc", "eastern", "one-six"]),
)
def test_a_joker_hand_is_never_weaker_than_any_allowed_replacement(
    deck: list[Card], where: set[int], preset: str
) -> None:
    profile = with_deck(preset, 2)
    real = [str(c) for c in deck[:13]]
    cards = tuple(JOKER if i in where else c for i, c in enumerate(real))
    allowed = allowed_cards(cards, False)
    a = resolved(cards, allowed, profile)
    got = _reference_key(profile, a.cards)
    assert set(a.stands_for) <= {str(c) for c in allowed}
    for other in assignments(cards, allowed, False):
        assert got >= _reference_key(profile, other.cards)


# ---------------------------------------------------------------------------------------------
# The card codes the joker resolution sums: the same hand as evaluating the cards.


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=5, max_size=5), st.sampled_from(list(Wheel)))
def test_hand_of_codes_is_the_evaluated_hand(cards: list[Card], wheel: Wheel) -> None:
    total = sum(CARD_CODES[c.index] for c in cards)
    repeated = len(set(cards)) < 5
    expected = evaluate_with_repeats(cards, wheel) if repeated else evaluate_five(cards, wheel)
    assert hand_of_codes(total, 5, wheel, repeated) is expected
    front = cards[:3]
    assert hand_of_codes(
        sum(CARD_CODES[c.index] for c in front), 3, wheel, len(set(front)) < 3
    ) is evaluate_with_repeats(front)


def test_hand_of_codes_five_of_a_kind_and_a_flush_with_a_repeat() -> None:
    aces = [parse_card(t) for t in "As As Ah Ad Ac".split()]
    assert (
        hand_of_codes(sum(CARD_CODES[c.index] for c in aces), 5, Wheel.LOWEST, True).hand_class
        is HandClass.FIVE_OF_A_KIND
    )
    spades = [parse_card(t) for t in "Ks Ks Qs Js 9s".split()]  # no flush: a pair of kings
    assert (
        hand_of_codes(sum(CARD_CODES[c.index] for c in spades), 5, Wheel.LOWEST, True).hand_class
        is HandClass.PAIR
    )
