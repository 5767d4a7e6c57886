"""Hand evaluation: names, ordering, the wheel, cross-size comparison, highest card, spellings,
and agreement with an independent reference and with treys (a test-only dependency)."""

from __future__ import annotations

import doctest
import random
from collections import Counter
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpsettle_service.domain.cards import hands
from cpsettle_service.domain.cards.cards import DECK, Card, Suit, parse_card
from cpsettle_service.domain.cards.hands import (
    HandClass,
    HandRank,
    Wheel,
    evaluate_five,
    evaluate_row,
    evaluate_three,
    highest_card,
)
from cpsettle_service.domain.errors import CardError

DECK_STRINGS = [str(c) for c in DECK]


def five(text: str, wheel: Wheel = Wheel.LOWEST) -> HandRank:
    return evaluate_five(text.split(), wheel)


def three(text: str) -> HandRank:
    return evaluate_three(text.split())


# --------------------------------------------------------------------------- reference


def reference(
    cards: Sequence[str | Card], wheel: Wheel = Wheel.LOWEST
) -> tuple[int, tuple[int, ...]]:
    """(category, ranks) computed the slow, obvious way, straight from RULES.md §3."""
    parsed = [c if isinstance(c, Card) else parse_card(c) for c in cards]
    values = [c.rank.value_int for c in parsed]
    counts = Counter(values)
    grouped = tuple(sorted(counts, key=lambda r: (counts[r], r), reverse=True))
    shape = sorted(counts.values(), reverse=True)
    if len(parsed) == 3:
        return {1: 0, 2: 1, 3: 3}[shape[0]], grouped
    flush = len({c.suit for c in parsed}) == 1
    straight: tuple[int, ...] | None = None
    if len(counts) == 5:
        if max(values) - min(values) == 4:
            straight = grouped
        elif set(values) == {14, 5, 4, 3, 2}:
            straight = (5, 4, 3, 2, 1) if wheel is Wheel.LOWEST else (14, 5, 4, 3, 2)
    if straight and flush:
        return (9 if straight[0] == 14 and straight[1] == 13 else 8), straight
    if shape[0] == 4:
        return 7, grouped
    if shape[:2] == [3, 2]:
        return 6, grouped
    if flush:
        return 5, grouped
    if straight:
        return 4, straight
    if shape[0] == 3:
        return 3, grouped
    if shape[:2] == [2, 2]:
        return 2, grouped
    if shape[0] == 2:
        return 1, grouped
    return 0, grouped


def front_fouls(front: Sequence[str], middle: Sequence[str]) -> bool:
    """RULES.md §4, literally: class first, then ranks in order over the front's cards."""
    fc, fr = reference(front)
    mc, mr = reference(middle)
    if fc != mc:
        return fc > mc
    for a, b in zip(fr, mr, strict=False):  # the front's 3 ranks against the middle's first 3
        if a != b:
            return a > b
    return False


@pytest.mark.parametrize("wheel", list(Wheel))
def test_agrees_with_the_reference(wheel: Wheel) -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        cards = rng.sample(DECK, 5)
        hand = evaluate_five(cards, wheel)
        assert (hand.category, hand.ranks) == reference(cards, wheel)
        assert evaluate_five([str(c) for c in cards], wheel) is hand
        assert evaluate_row(cards, wheel) is hand
    for cards3 in (rng.sample(DECK, 3) for _ in range(5_000)):
        hand3 = evaluate_three(cards3)
        assert (hand3.category, hand3.ranks) == reference(cards3)
        assert evaluate_row([str(c) for c in cards3]) is hand3


def test_front_against_middle_follows_section_4() -> None:
    rng = random.Random(11)
    pairs_ranks = "23456789TJQKA"
    checked = 0
    for i in range(30_000):
        if i % 2:
            # Bias toward the interesting case: a pair in the front, the same pair in the middle.
            r = rng.choice(pairs_ranks)
            same = [r + s for s in "shdc"]
            rng.shuffle(same)
            rest = [c for c in DECK_STRINGS if c[0] != r]
            picked = rng.sample(rest, 4)
            front, middle = [same[0], same[1], picked[0]], [same[2], same[3], *picked[1:]]
        else:
            cards = rng.sample(DECK_STRINGS, 8)
            front, middle = cards[:3], cards[3:]
        f, m = evaluate_three(front), evaluate_five(middle)
        assert (f > m) == front_fouls(front, middle), (front, middle)
        assert (f <= m) == (not front_fouls(front, middle))
        checked += 1
    assert checked == 30_000


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("cards", "name", "hand_class"),
    [
        ("Kc Kd Kh 3s 3c", "Full house, kings full of threes", HandClass.FULL_HOUSE),
        ("Ts Th As 9d 4c", "Pair of tens, ace kicker", HandClass.PAIR),
        ("Ad Jd 9d 6d 2d", "Ace-high flush", HandClass.FLUSH),
        ("7c 5c 4c 3c 2c", "Seven-high flush", HandClass.FLUSH),
        ("As Ks Qs Js Ts", "Royal flush", HandClass.ROYAL_FLUSH),
        ("9h 8h 7h 6h 5h", "Straight flush, nine high", HandClass.STRAIGHT_FLUSH),
        ("Ah 2h 3h 4h 5h", "Straight flush, five high", HandClass.STRAIGHT_FLUSH),
        ("Ts 9h 8d 7c 6s", "Straight, ten high", HandClass.STRAIGHT),
        ("As Kh Qd Jc Ts", "Straight, ace high", HandClass.STRAIGHT),
        ("As 2d 3h 4c 5s", "Straight, five high", HandClass.STRAIGHT),
        ("Ac Ad Ah As 2c", "Four of a kind, aces", HandClass.FOUR_OF_A_KIND),
        ("7s 7h 7d Kc 2s", "Three of a kind, sevens", HandClass.THREE_OF_A_KIND),
        ("Ks Kh 5d 5c Qs", "Two pair, kings and fives", HandClass.TWO_PAIR),
        ("6s 6h 6d 2c 2s", "Full house, sixes full of twos", HandClass.FULL_HOUSE),
        ("As Jh 9d 6c 2s", "High card, ace", HandClass.HIGH_CARD),
        ("7s 5h 4d 3c 2s", "High card, seven", HandClass.HIGH_CARD),
    ],
)
def test_five_card_names(cards: str, name: str, hand_class: HandClass) -> None:
    hand = five(cards)
    assert hand.name == name
    assert hand.hand_class is hand_class
    assert hand.category == hand_class.order
    assert hand.size == 5
    assert five(cards, Wheel.SECOND_HIGHEST).name == name


@pytest.mark.parametrize(
    ("cards", "name", "ranks"),
    [
        ("Kh Kd Ac", "Pair of kings, ace kicker", (13, 14)),
        ("7s 7h 7d", "Three of a kind, sevens", (7,)),
        ("Ah 9d 2c", "High card, ace", (14, 9, 2)),
        ("Qs Jh Tc", "High card, queen", (12, 11, 10)),  # no straights in the front
        ("2s 3s 4s", "High card, four", (4, 3, 2)),  # no flushes either
    ],
)
def test_three_card_names(cards: str, name: str, ranks: tuple[int, ...]) -> None:
    hand = three(cards)
    assert (hand.name, hand.ranks, hand.size) == (name, ranks, 3)


def test_ranks_tuples() -> None:
    assert five("Ts Th As 9d 4c").ranks == (10, 14, 9, 4)
    assert five("Ks Kh 5d 5c Qs").ranks == (13, 5, 12)
    assert five("Kc Kd Kh 3s 3c").ranks == (13, 3)
    assert five("7s 7h 7d Kc 2s").ranks == (7, 13, 2)
    assert five("Ac Ad Ah As 2c").ranks == (14, 2)
    assert five("Ts 9h 8d 7c 6s").ranks == (10, 9, 8, 7, 6)
    assert five("As 2d 3h 4c 5s").ranks == (5, 4, 3, 2, 1)
    assert five("As 2d 3h 4c 5s", Wheel.SECOND_HIGHEST).ranks == (14, 5, 4, 3, 2)
    assert five("Ah 2h 3h 4h 5h").ranks == (5, 4, 3, 2, 1)
    assert five("Ah 2h 3h 4h 5h", Wheel.SECOND_HIGHEST).ranks == (14, 5, 4, 3, 2)
    assert five("As Ks Qs Js Ts").ranks == (14, 13, 12, 11, 10)
    assert five("As Ks Qs Js Ts").category == 9


def test_hand_class_order_and_label() -> None:
    assert [hc.order for hc in HandClass] == list(range(11))
    assert [hc.value for hc in HandClass] == [
        "HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH",
        "FULL_HOUSE", "FOUR_OF_A_KIND", "STRAIGHT_FLUSH", "ROYAL_FLUSH",
        "FIVE_OF_A_KIND",  # spec 16.3: jokers that may duplicate
    ]  # fmt: skip
    assert HandClass.FULL_HOUSE.label == "Full house"
    assert HandClass.HIGH_CARD.label == "High card"
    assert HandClass.THREE_OF_A_KIND.label == "Three of a kind"
    assert HandClass.ROYAL_FLUSH.label == "Royal flush"
    assert HandClass("PAIR") is HandClass.PAIR
    assert [w.value for w in Wheel] == ["LOWEST", "SECOND_HIGHEST"]


def test_module_doctests() -> None:
    result = doctest.testmod(hands, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 20
    assert result.failed == 0


# --------------------------------------------------------------------------- ordering


def test_cross_size_examples_from_section_4() -> None:
    front = three("Kh Kd Ac")
    assert front <= five("Ks Kc Ad 3s 2h")  # equal over the front's cards: not a foul
    assert not front > five("Ks Kc Ad 3s 2h")
    assert not front <= five("Ks Kc Qd Js 9h")  # the front's ace beats the queen: foul
    assert front > five("Ks Kc Qd Js 9h")
    assert three("Ah Kd 2c") <= five("As Kc 2d 7s 5h")
    assert three("Ah Kd 8c") > five("As Kc 2d 7s 5h")
    assert three("Ah Kd 7c") <= five("As Kc 2d 7s 5h")
    assert three("2h 2d 3c") > five("Ah Kc Qd Js 9h")  # any pair beats high card
    assert three("2h 2d 2c") > five("Ah Ac Kd Ks 9h")  # trips beat two pair
    assert three("2h 2d 2c") <= five("3h 3d 3c 4s 5h")
    assert three("Ah Ad Ac") < five("2h 3d 4c 5s 6h")  # a straight beats any front


def test_lowest_wheel_ordering() -> None:
    wheel = five("As 2d 3h 4c 5s")
    assert five("Ac Ad Ah Ks Qd") < wheel < five("6s 2d 3h 4c 5s")
    sf_wheel = five("Ah 2h 3h 4h 5h")
    assert five("Ac Ad Ah As Kd") < sf_wheel < five("6h 2h 3h 4h 5h")
    assert wheel.strength == five("Ac Ad Ah Ks Qd").strength + 1


def test_second_highest_wheel_ordering() -> None:
    sh = Wheel.SECOND_HIGHEST
    wheel = five("As 2d 3h 4c 5s", sh)
    king_high = five("Ks Qd Jh Tc 9s", sh)
    ace_high = five("As Kd Qh Jc Ts", sh)
    assert king_high < wheel < ace_high
    assert king_high.strength + 1 == wheel.strength == ace_high.strength - 1
    assert wheel > five("6s 2d 3h 4c 5s", sh)
    sf_wheel = five("Ah 2h 3h 4h 5h", sh)
    sf_king = five("Kh Qh Jh Th 9h", sh)
    royal = five("Ah Kh Qh Jh Th", sh)
    assert sf_king < sf_wheel < royal
    assert sf_king.strength + 1 == sf_wheel.strength == royal.strength - 1
    assert royal.hand_class is HandClass.ROYAL_FLUSH
    assert sf_wheel.hand_class is HandClass.STRAIGHT_FLUSH
    # A plain string naming the setting works too (StrEnum values).
    by_text = evaluate_five("As 2d 3h 4c 5s".split(), "SECOND_HIGHEST")  # type: ignore[arg-type]
    assert by_text is wheel


def test_hand_rank_compares_on_category_and_ranks_only() -> None:
    a = HandRank(1, (13, 14), HandClass.PAIR, "one name", 3, 1)
    b = HandRank(1, (13, 14), HandClass.PAIR, "another", 5, 99)
    assert a == b and hash(a) == hash(b) and not a < b
    assert HandRank(1, (13, 12), HandClass.PAIR, "x", 3, 2) < a
    with pytest.raises(AttributeError):
        a.name = "changed"  # type: ignore[misc]
    # Shared instances: same class by rank, same object.
    assert five("As Ks Qs Js 9s") is five("9h Jh Qh Kh Ah")
    assert five("Ts Th As 9d 4c") is five("4d 9c Ad Td Tc")
    assert five("Ts Th As 9d 4c") == five("Td Tc Ah 9s 4s")


# --------------------------------------------------------------------------- input forms


def test_card_spellings_and_card_objects() -> None:
    canonical = five("Ts Th As 9d 4c")
    assert evaluate_five(["10s", "10h", "as", "9D", "4♣"]) is canonical
    assert evaluate_five(["T♠", "t♥", "A♤", "9♦", "4C"]) is canonical
    assert evaluate_five(["a♠", "KS", "10h", "9d", "q♦"]) is five("As Ks Th 9d Qd")
    cards = [parse_card(c) for c in "Ts Th As 9d 4c".split()]
    assert evaluate_five(cards) is canonical
    assert evaluate_five(tuple(cards)) is canonical
    assert evaluate_five([cards[0], "10h", cards[2], "9d", "4c"]) is canonical
    ace_of_clubs = Card(parse_card("Ac").rank, Suit.CLUB)
    assert evaluate_three(["k♥", "KD", ace_of_clubs]) is three("Kh Kd Ac")
    # What parse_card accepts beyond the spelling table (padding, one string) still works.
    assert evaluate_five([" Ts", "Th ", "As", "9d", "4c"]) is canonical
    assert evaluate_five("Ts Th As 9d 4c") is canonical
    # a generator too, though the signature asks for a sequence
    assert evaluate_row(c for c in "Kh Kd Ac".split()) is three("Kh Kd Ac")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["1s", "11h", "Ax", "", "Ace", "Zz", None, 14, ("A", "s")])
def test_unknown_card_raises_card_error(bad: object) -> None:
    with pytest.raises(CardError):
        evaluate_five(["As", "Kd", bad, "7c", "2h"])  # type: ignore[list-item]
    with pytest.raises(CardError):
        evaluate_three(["As", bad, "7c"])  # type: ignore[list-item]
    with pytest.raises(CardError):
        evaluate_row(["As", bad, "7c"])  # type: ignore[list-item]


def test_unhashable_card_raises_card_error() -> None:
    with pytest.raises(CardError):
        evaluate_five(["As", "Kd", ["Q", "s"], "7c", "2h"])  # type: ignore[list-item]


@pytest.mark.parametrize("cards", [[], ["As"], ["As", "Kd", "7c", "2h"], DECK_STRINGS[:6]])
def test_wrong_number_of_cards(cards: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        evaluate_five(cards)
    assert not isinstance(info.value, CardError)
    if len(cards) != 3:
        with pytest.raises(ValueError):
            evaluate_three(cards)
    with pytest.raises(ValueError):
        evaluate_row(cards)


@pytest.mark.parametrize(
    "cards",
    [
        ["As", "As", "As", "As", "As"],  # five of a kind: no such rank pattern
        ["As", "as", "A♠", "AS", "a♤"],
        ["As", "As", "Ks", "Qs", "Js"],  # a "flush" with a pair: no such hand
        ["Ah", "Ah", "Ad", "Ac", "As"],  # five aces
    ],
)
def test_impossible_duplicates_raise_value_error(cards: list[str]) -> None:
    with pytest.raises(ValueError, match="duplicate") as info:
        evaluate_five(cards)
    assert not isinstance(info.value, CardError)


def test_unknown_wheel() -> None:
    with pytest.raises(ValueError, match="wheel"):
        evaluate_five("As Ks Qs Js Ts".split(), "HIGHEST")  # type: ignore[arg-type]


@given(st.permutations(DECK).map(lambda p: p[:5]), st.sampled_from(list(Wheel)))
def test_order_and_spelling_do_not_matter(cards: Sequence[Card], wheel: Wheel) -> None:
    hand = evaluate_five(cards, wheel)
    assert evaluate_five([str(c).lower() for c in reversed(cards)], wheel) is hand
    assert evaluate_five([c.rank.value + c.suit.symbol for c in cards], wheel) is hand
    assert hand.hand_class.order == hand.category


# --------------------------------------------------------------------------- highest card


def test_highest_card() -> None:
    order = ["s", "h", "c", "d"]
    cards = "Ts Th As 9d 4c".split()
    pair = evaluate_five(cards)
    assert highest_card(cards, pair, order) == parse_card("Ts")
    assert highest_card(cards, pair, ["h", "s", "c", "d"]) == parse_card("Th")
    suits = [Suit.HEART, Suit.SPADE, Suit.CLUB, Suit.DIAMOND]
    assert highest_card(cards, pair, suits) == parse_card("Th")
    assert highest_card(cards, pair, "♥♠♣♦") == parse_card("Th")
    full = "Kc Kd Kh 3s 3c".split()
    assert highest_card(full, evaluate_five(full), order) == parse_card("Kh")
    assert highest_card(full, evaluate_five(full), "dchs") == parse_card("Kd")
    flush = "Ad Jd 9d 6d 2d".split()
    assert highest_card(flush, evaluate_five(flush), order) == parse_card("Ad")
    straight = "Ts 9h 8d 7c 6s".split()
    assert highest_card(straight, evaluate_five(straight), order) == parse_card("Ts")
    wheel = "As 2d 3h 4c 5s".split()
    assert highest_card(wheel, evaluate_five(wheel), order) == parse_card("5s")
    second = Wheel.SECOND_HIGHEST
    assert highest_card(wheel, evaluate_five(wheel, second), order) == parse_card("As")
    sf_wheel = "Ah 2h 3h 4h 5h".split()
    assert highest_card(sf_wheel, evaluate_five(sf_wheel), order) == parse_card("5h")
    assert highest_card(sf_wheel, evaluate_five(sf_wheel, second), order) == parse_card("Ah")
    front = "Kh Kd Ac".split()
    assert highest_card(front, evaluate_three(front), order) == parse_card("Kh")
    high = "Qs Jh 4c".split()
    assert highest_card(high, evaluate_three(high), order) == parse_card("Qs")
    objects = [parse_card(c) for c in "10h t♠ As 9d 4c".split()]
    assert highest_card(objects, evaluate_five(objects), order) == parse_card("Ts")
    # Suits the order leaves out come after those it lists.
    assert highest_card(cards, pair, ["c", "h"]) == parse_card("Th")


def test_highest_card_errors() -> None:
    cards = "Ts Th As 9d 4c".split()
    with pytest.raises(ValueError, match="no card"):
        highest_card(cards, five("Ks Kh 5d 5c Qs"), "shcd")
    with pytest.raises(ValueError, match="not a suit"):
        highest_card(cards, evaluate_five(cards), ["s", "x"])
    with pytest.raises(ValueError, match="twice"):
        highest_card(cards, evaluate_five(cards), ["s", "S"])
    with pytest.raises(CardError):
        highest_card(["Ts", "Tz"], evaluate_five(cards), "shcd")


# --------------------------------------------------------------------------- treys


@pytest.fixture(scope="module")
def treys_rank() -> Callable[[Sequence[str]], int]:
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    code = {s: treys.Card.new(s) for s in DECK_STRINGS}

    def rank(cards: Sequence[str]) -> int:
        return int(evaluator.evaluate([code[c] for c in cards], []))  # 1 = royal flush (lower wins)

    return rank


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def test_agrees_with_treys_on_random_pairs(treys_rank: Callable[[Sequence[str]], int]) -> None:
    rng = random.Random(20240917)
    pairs = 200_000
    hands_ = [rng.sample(DECK_STRINGS, 5) for _ in range(2 * pairs)]
    ours = [evaluate_five(h).strength for h in hands_]
    theirs = [treys_rank(h) for h in hands_]
    disagreements = [
        (hands_[i], hands_[i + 1])
        for i in range(0, 2 * pairs, 2)
        if _sign(ours[i] - ours[i + 1]) != _sign(theirs[i + 1] - theirs[i])
    ]
    assert disagreements == []
    # Both scales are the dense 7,462 classes, so they are the same scale reversed.
    assert all(o == 7463 - t for o, t in zip(ours, theirs, strict=True))
    # Ties do occur in the sample, so equality is exercised too.
    assert sum(ours[i] == ours[i + 1] for i in range(0, 2 * pairs, 2)) > 0


def test_lowest_wheel_agrees_with_treys(treys_rank: Callable[[Sequence[str]], int]) -> None:
    hands_ = [
        "As 2d 3h 4c 5s",  # the wheel
        "Ah 2h 3h 4h 5h",  # the steel wheel (straight flush)
        "6s 2d 3h 4c 5s",
        "6h 2h 3h 4h 5h",
        "Ac Ad Ah Ks Qd",
        "Ac Ad Ah As Kd",
        "As Kd Qh Jc Ts",
        "Ks Qd Jh Tc 9s",
        "Ah Kh Qh Jh Th",
        "Kh Qh Jh Th 9h",
        "Ad 5d 4d 3d 7d",
    ]
    for text in hands_:
        assert five(text).strength == 7463 - treys_rank(text.split()), text
    for a in hands_:
        for b in hands_:
            ours = _sign(five(a).strength - five(b).strength)
            assert ours == _sign(treys_rank(b.split()) - treys_rank(a.split())), (a, b)


def test_order_key_orders_exactly_like_the_compared_fields() -> None:
    import random

    from cpsettle_service.domain.cards.cards import CANONICAL

    rng = random.Random(11)
    deck = list(CANONICAL)
    for _ in range(20_000):
        cards = rng.sample(deck, 8)
        front, middle = evaluate_three(cards[:3]), evaluate_five(cards[3:])
        assert (front.order_key > middle.order_key) == (front > middle)
        assert (front.order_key == middle.order_key) == (front == middle)
