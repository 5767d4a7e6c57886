"""The order RULES.md §16.3 resolves jokers in, step by step: each test builds a hand where one
step alone decides, so reversing or skipping that step changes the answer.

An arranged hand: (1) no foul, (2) the highest royalty total, (3) the strongest back, then
middle, then front, (4) the highest card for the first joker (front, middle, back; left to
right) by rank, then by the profile's suit order, then the same for the second. A natural: the
best natural in the profile's order, then the highest 13 ranks sorted from the top, then the
jokers' cards as above."""

from __future__ import annotations

from typing import Any

from cpsettle_service.domain.cards.cards import JOKER, is_joker, parse_card
from cpsettle_service.domain.cards.hands import HandClass, HandRank
from cpsettle_service.domain.profile.model import RuleProfile
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.domain.settle.fouls import foul_check
from cpsettle_service.domain.settle.jokers import (
    Assignment,
    allowed_cards,
    resolve_arrangement,
    resolve_natural,
    rows_of,
)
from cpsettle_service.profile_files import load_preset

from ..support import reference_jokers as reference


def profile(
    preset: str = "one-six", jokers: int = 2, duplicates: bool = False, **parts: dict[str, Any]
) -> RuleProfile:
    d = profile_to_dict(load_preset(preset))
    d["deck"] = {"jokers": jokers, "jokerDuplicates": duplicates}
    for key, value in parts.items():
        d[key] = {**d.get(key, {}), **value}
    return profile_from_dict(d)


def hand(front: str, middle: str, back: str) -> tuple[str, ...]:
    return tuple(
        JOKER if is_joker(t) else str(parse_card(t)) for t in f"{front} {middle} {back}".split()
    )


def arranged(
    p: RuleProfile, cards: tuple[str, ...], dead: tuple[str, ...] = ()
) -> tuple[Assignment, tuple[HandRank, HandRank, HandRank]]:
    allowed = allowed_cards(cards + dead, p.deck.joker_duplicates)
    a = resolve_arrangement(cards, allowed, p, foul_check(p))
    assert a is not None
    assert a == reference.resolve_arrangement(cards, allowed, p, foul_check(p))
    return a, rows_of(a.cards, p)


# ---------------------------------------------------------------------------------------------
# An arranged hand


def test_step_1_no_foul_comes_before_the_royalties() -> None:
    # A king makes trips in front (OFC pays 21 for front kings... and 8 for a pair of kings),
    # above the middle's two pair: a foul. Any other card keeps the pair: the ace is best.
    p = profile("ofc", jokers=1)
    a, (front, _, _) = arranged(p, hand("Xj Ks Kh", "Qs Qh 5d 5c 3s", "As Ad Ac 7h 2d"))
    assert front.hand_class is HandClass.PAIR and a.stands_for == ("Ah",)


def test_step_2_the_royalty_total_comes_before_the_strength() -> None:
    # This house pays 10 for a flush in the back and nothing for a straight flush or a royal
    # flush: the joker makes the best plain flush (the 8 of hearts), not the royal flush.
    p = profile(
        "one-six",
        jokers=1,
        royalties={
            "mode": "ROYALTY_MODE_ALWAYS",
            "table": [{"row": "ROW_BACK", "handClass": "HAND_CLASS_FLUSH", "units": 10}],
        },
    )
    a, (_, _, back) = arranged(p, hand("2c 3d 4s", "7c 7d 9s 9d 5c", "Th Jh Qh Kh Xj"))
    assert back.hand_class is HandClass.FLUSH and a.stands_for == ("8h",)


def test_step_3_the_back_comes_before_the_front() -> None:
    # One ace is left (the back holds three) and both jokers want it: the back for four aces,
    # the front for a pair of kings with an ace. The back has it; the front takes a queen (a
    # king would make trips above the middle's two pair).
    p = profile("one-six")
    a, (front, _, back) = arranged(p, hand("Xj Kh Kd", "Qh Qc Jd Js 3h", "Xj Ah Ad Ac 7s"))
    assert back.hand_class is HandClass.FOUR_OF_A_KIND
    assert a.stands_for == ("Qs", "As") and front.ranks == (13, 12)


def test_step_3_the_middle_comes_before_the_front() -> None:
    # The back is fixed; the front and the middle both want the last ace (a pair of aces in
    # front, trips in the middle): the middle has it, the front makes a pair of fives.
    p = profile("one-six")
    a, (front, middle, _) = arranged(p, hand("Xj Ad 5c", "Xj Ah Ac Ks 7s", "9h 8h 7h 6h 5h"))
    assert middle.hand_class is HandClass.THREE_OF_A_KIND
    assert a.stands_for == ("5s", "As") and front.ranks == (5, 14)


def test_step_3_the_front_last_its_strongest_not_its_highest_card() -> None:
    # Nothing else depends on the front's joker: it makes the strongest front (a pair of
    # sevens), not the highest card (an ace).
    p = profile("one-six", jokers=1)
    a, (front, _, _) = arranged(p, hand("Xj 7s 2d", "Qs Qh 5d 5c 3s", "As Ad Ac 8h 2c"))
    assert front.hand_class is HandClass.PAIR and a.stands_for == ("7h",)


def test_step_4_the_first_joker_by_rank_then_suit_then_the_second() -> None:
    # Any ace and any king make the broadway straight. Hearts come first in this house's suit
    # order but the ace of hearts is in front: the first joker is the best ace left (spades),
    # by rank before suit, and the second the best king (hearts).
    p = profile(
        "one-six", ranking={"suitOrder": ["SUIT_HEART", "SUIT_SPADE", "SUIT_CLUB", "SUIT_DIAMOND"]}
    )
    a, (_, _, back) = arranged(p, hand("Ah 2c 3d", "9s 9c 4h 4d 2s", "Xj Xj Qs Jh Td"))
    assert back.hand_class is HandClass.STRAIGHT and a.stands_for == ("As", "Kh")


def test_step_4_duplicating_jokers_in_two_rows_each_take_the_best_card() -> None:
    # The hand of the middle-before-front test: with duplicates, both rows have their ace,
    # the same best one.
    p = profile("one-six", duplicates=True)
    a, (front, _, _) = arranged(p, hand("Xj Ad 5c", "Xj Ah Ac Ks 7s", "9h 8h 7h 6h 5h"))
    assert a.stands_for == ("As", "As") and front.ranks == (14, 5)


# ---------------------------------------------------------------------------------------------
# A natural


def house(
    jokers: int,
    *naturals: dict[str, Any],
    duplicates: bool = False,
    suit_order: list[str] | None = None,
) -> RuleProfile:
    ranking = {"suitOrder": suit_order} if suit_order else {}
    return profile(
        "one-six",
        jokers=jokers,
        duplicates=duplicates,
        ranking=ranking,
        naturals={"table": list(naturals), "requireDeclaration": False},
    )


def natural(p: RuleProfile, cards: str, dead: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    cards13 = hand(*cards.split(" ", 2))
    allowed = allowed_cards(cards13 + dead, p.deck.joker_duplicates)
    found = resolve_natural(cards13, allowed, p, p.naturals.best_first)
    assert found is not None
    assert found == reference.resolve_natural(cards13, allowed, p, p.naturals.best_first)
    return found[0], found[1].stands_for


ANY_FOUR = {"natural": "FOUR_OF_A_SUIT", "rank": 5, "units": 5, "definition": {"sameSuit": 4}}
DRAGON = {"natural": "DRAGON", "rank": 1, "units": 13}
THREE_OF_EACH_SUIT_BUT_ONE = "As Kh Qd Jc Ts 9h 8d 7c 6s 5h 4d 3c Xj"


def test_natural_step_1_the_best_natural_in_the_profile_s_order() -> None:
    # A two makes a dragon; any card makes four of its suit, the better natural here.
    p = house(1, DRAGON, ANY_FOUR)
    assert natural(p, THREE_OF_EACH_SUIT_BUT_ONE) == ("FOUR_OF_A_SUIT", ("Ah",))
    assert natural(house(1, DRAGON), THREE_OF_EACH_SUIT_BUT_ONE) == ("DRAGON", ("2s",))


def test_natural_step_2_the_highest_sorted_ranks() -> None:
    # Four of a suit with any card: the highest, an ace (the ace of spades is held).
    assert natural(house(1, ANY_FOUR), THREE_OF_EACH_SUIT_BUT_ONE) == ("FOUR_OF_A_SUIT", ("Ah",))
    # Six pairs: the jokers pair two of the singles ace, three and two, and the colours must
    # split 7 and 6: one joker red at most. The ace and the three win (A♦ with 3♠) over the
    # ace of spades with the two of hearts, although spades come first: the 13 ranks first.
    six_pairs = {
        "natural": "SIX_PAIRS_SPLIT",
        "rank": 2,
        "units": 5,
        "definition": {"rankGroups": [2, 2, 2, 2, 2, 2], "colourSplit": [7, 6]},
    }
    dead = ("Ac", "3h", "3d", "2d", "2c")
    assert natural(house(2, six_pairs), "Xj Ks Kh Qs Qh Js Jh Ts Th Ah 3c 2s Xj", dead) == (
        "SIX_PAIRS_SPLIT",
        ("Ad", "3s"),
    )


def test_natural_step_3_the_jokers_cards_by_the_suit_order() -> None:
    # The dragon's missing ace is any ace: the house's suit order puts diamonds first, and the
    # ace of diamonds is dead, so clubs next.
    order = ["SUIT_DIAMOND", "SUIT_CLUB", "SUIT_HEART", "SUIT_SPADE"]
    p = house(1, DRAGON, suit_order=order)
    assert natural(p, "Ks Qh Jd Tc 9s 8h 7d 6c 5s 4h 3d 2c Xj", dead=("Ad",)) == ("DRAGON", ("Ac",))
    # Two jokers pairing a jack and a nine for five pairs: the first takes the jack, each the
    # best suit left.
    five_pairs = {
        "natural": "FIVE_PAIRS",
        "rank": 2,
        "units": 5,
        "definition": {"rankGroups": [2, 2, 2, 2, 2]},
    }
    p2 = house(2, five_pairs, suit_order=order)
    assert natural(p2, "Xj As Ah Kd Kc Qs Qh Jd 9c 7h 5d 3s Xj") == ("FIVE_PAIRS", ("Jc", "9d"))
