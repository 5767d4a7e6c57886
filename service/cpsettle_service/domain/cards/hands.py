"""Hand ranking for 5-card rows (middle, back) and 3-card rows (front) (RULES.md §3-4).

Every possible hand is precomputed at import into a shared, immutable ``HandRank``; evaluating a
row is a handful of dict lookups and integer additions and returns one of those shared objects.

Comparison
    ``HandRank`` compares on ``(category, ranks)`` only. ``category`` is ``HandClass.order``
    (0 high card … 9 royal flush); ``ranks`` lists the deciding ranks, 2..14, group rank first
    and then kickers from the top. A front uses the same scale (high card 0, pair 1, three of a
    kind 3), so ``front <= middle`` is the cross-size rule of RULES.md §4: ranks the front lacks
    are simply not compared.

    >>> front = evaluate_three(["Kh", "Kd", "Ac"])
    >>> front.category, front.ranks
    (1, (13, 14))
    >>> front <= evaluate_five("Ks Kc Ad 3s 2h".split())    # equal as far as the front goes
    True
    >>> front <= evaluate_five("Ks Kc Qd Js 9h".split())    # the front is higher: a foul
    False

Naming scheme (``HandRank.name``): capitalised, rank words from ``Rank.word``/``Rank.plural``;
the name tells the class and the ranks that define it, and for a pair also the top kicker.

    =================  ==========================================================
    class              name
    =================  ==========================================================
    high card          "High card, ace"           (the top card only)
    pair               "Pair of tens, ace kicker" (the top kicker)
    two pair           "Two pair, kings and fives"
    three of a kind    "Three of a kind, sevens"
    straight           "Straight, ten high"       (the wheel: "Straight, five high")
    flush              "Ace-high flush"
    full house         "Full house, kings full of threes"
    four of a kind     "Four of a kind, aces"
    straight flush     "Straight flush, nine high" (the wheel: "…, five high")
    royal flush        "Royal flush"
    =================  ==========================================================

The wheel (A-2-3-4-5) is named "five high" under both ``Wheel`` settings: the name describes
the cards, ``ranks``/``strength`` carry its place. Names are the same for 3-card fronts.

    >>> evaluate_five("As Ks Qs Js Ts".split()).name
    'Royal flush'
    >>> evaluate_five("9h 8h 7h 6h 5h".split()).name
    'Straight flush, nine high'
    >>> evaluate_five(["Ac", "Ad", "Ah", "As", "2c"]).name
    'Four of a kind, aces'
    >>> evaluate_five("Kc Kd Kh 3s 3c".split()).name
    'Full house, kings full of threes'
    >>> evaluate_five("Ad Jd 9d 6d 2d".split()).name
    'Ace-high flush'
    >>> evaluate_five("Ts 9h 8d 7c 6s".split()).name
    'Straight, ten high'
    >>> evaluate_five("As 2d 3h 4c 5s".split()).name
    'Straight, five high'
    >>> evaluate_five("7s 7h 7d Kc 2s".split()).name
    'Three of a kind, sevens'
    >>> evaluate_five("Ks Kh 5d 5c Qs".split()).name
    'Two pair, kings and fives'
    >>> hand = evaluate_five("Ts Th As 9d 4c".split())
    >>> hand.name, hand.ranks
    ('Pair of tens, ace kicker', (10, 14, 9, 4))
    >>> evaluate_five("As Jh 9d 6c 2s".split()).name
    'High card, ace'
    >>> evaluate_three(["7s", "7h", "7d"]).name
    'Three of a kind, sevens'

The wheel: ``(5, 4, 3, 2, 1)`` under ``Wheel.LOWEST`` (the lowest straight), ``(14, 5, 4, 3, 2)``
under ``Wheel.SECOND_HIGHEST`` (between the king-high and the ace-high straight).

    >>> evaluate_five("As 2d 3h 4c 5s".split()).ranks
    (5, 4, 3, 2, 1)
    >>> evaluate_five("As 2d 3h 4c 5s".split(), Wheel.SECOND_HIGHEST).ranks
    (14, 5, 4, 3, 2)

``strength`` is a dense int, larger is stronger, comparable only between hands of the same size
evaluated under the same wheel setting: 1..7462 for 5-card hands, 1..455 for 3-card hands.

Cards are card strings in any spelling of ``cards.CARD_BY_SPELLING`` (``As``, ``as``, ``AS``,
``10h``, ``A♠``) or ``Card`` objects; an unknown card raises ``CardError``. Callers validate that
the cards are distinct (the table validator does): a duplicate inside one call either raises
``ValueError`` or, where the cards still form a possible rank pattern (``As As Kd Qd Jd``),
is evaluated as written. A wrong number of cards raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations

from .cards import CARD_BY_SPELLING, DECK, Card, Rank, Suit, parse_card, parse_cards

__all__ = [
    "HandClass",
    "Wheel",
    "HandRank",
    "evaluate_five",
    "evaluate_three",
    "evaluate_row",
    "evaluate_with_repeats",
    "hand_of_codes",
    "CARD_CODES",
    "highest_card",
]


class HandClass(StrEnum):
    """The class of a hand, weakest first; ``order`` is the comparison category 0..9."""

    HIGH_CARD = "HIGH_CARD"
    PAIR = "PAIR"
    TWO_PAIR = "TWO_PAIR"
    THREE_OF_A_KIND = "THREE_OF_A_KIND"
    STRAIGHT = "STRAIGHT"
    FLUSH = "FLUSH"
    FULL_HOUSE = "FULL_HOUSE"
    FOUR_OF_A_KIND = "FOUR_OF_A_KIND"
    STRAIGHT_FLUSH = "STRAIGHT_FLUSH"
    ROYAL_FLUSH = "ROYAL_FLUSH"
    FIVE_OF_A_KIND = "FIVE_OF_A_KIND"  # only with jokers that may duplicate (RULES.md §16.3)

    @property
    def order(self) -> int:
        """0 (high card) … 9 (royal flush), 10 (five of a kind): ``HandRank.category``."""
        return _CLASS_ORDER[self]

    @property
    def label(self) -> str:
        """Readable class name: 'High card', 'Pair', … 'Full house', … 'Royal flush'."""
        return _CLASS_LABEL[self]


_CLASS_ORDER: dict[HandClass, int] = {hc: i for i, hc in enumerate(HandClass)}
_CLASS_LABEL: dict[HandClass, str] = {
    hc: hc.value.replace("_", " ").capitalize() for hc in HandClass
}


class Wheel(StrEnum):
    """Where A-2-3-4-5 ranks among straights (and straight flushes), profile field ``wheel``."""

    LOWEST = "LOWEST"
    SECOND_HIGHEST = "SECOND_HIGHEST"


@dataclass(frozen=True, order=True, slots=True)
class HandRank:
    """An evaluated row. Compared (``==``, ``<``, hash) on ``(category, ranks)`` only."""

    category: int
    ranks: tuple[int, ...]
    hand_class: HandClass = field(compare=False)
    name: str = field(compare=False)
    size: int = field(compare=False)
    strength: int = field(compare=False)
    # (category, ranks) as one int with the same order as the tuples, across sizes: ranks
    # padded with 0 to five base-16 digits (a shorter equal prefix is smaller, as for tuples).
    order_key: int = field(compare=False, default=0)
    # The name as it reads inside a sentence ("full house, kings full of threes").
    phrase: str = field(compare=False, default="")
    # The phrase as the subject of a sentence: a name with its own comma gets a closing one
    # ("full house, kings full of threes, beats ...").
    clause: str = field(compare=False, default="")

    def __post_init__(self) -> None:
        phrase = self.name[:1].lower() + self.name[1:]
        object.__setattr__(self, "phrase", phrase)
        object.__setattr__(self, "clause", phrase + "," if "," in phrase else phrase)
        key = self.category
        for i in range(5):
            key = key * 16 + (self.ranks[i] if i < len(self.ranks) else 0)
        object.__setattr__(self, "order_key", key)


# --------------------------------------------------------------------------- card codes
#
# Each card (every accepted spelling and the Card object itself) maps to one int:
#
#     5 ** (rank - 2)  +  (7 << (32 + 6 * suit_index))
#
# Summing five codes gives, in the low 32 bits, the rank multiset in base 5 (a rank occurs at
# most four times, so no digit overflows; the largest sum, 4 * 5**12 + 5**11, is < 2**32) and,
# above it, four 6-bit suit fields each holding 7 * (cards of that suit). A field reaches 35
# (bit 5 set) only for five cards of its suit: 4 * 7 = 28 < 32 <= 35. Masking the sum with
# _KEY_MASK (the rank bits plus bit 5 of each suit field) leaves the rank multiset for a
# non-flush and rank multiset + one flush bit for a flush, so ONE dict lookup finds the hand.
# The sums exceed 2**30, so they are two-digit CPython ints (a little slower to add). Keeping
# them below 2**30 would leave the suits at most 11 bits beside a 19-bit rank part (the smallest
# 5-sum-distinct rank weights found); a search over all suit weights up to that size found no
# single AND-mask that tells a flush, so the one-lookup layout above was kept.

_RANK_BITS = 32
_RANK_MASK = (1 << _RANK_BITS) - 1
_SUIT_FIELD_BITS = 6
_SUIT_WEIGHT = 7
_FLUSH_BIT = 32  # 5 * _SUIT_WEIGHT = 35 has it; 4 * _SUIT_WEIGHT = 28 has not
_SUIT_INDEX: dict[Suit, int] = {s: i for i, s in enumerate(Suit)}
_FLUSH_BITS: tuple[int, ...] = tuple(
    _FLUSH_BIT << (_RANK_BITS + _SUIT_FIELD_BITS * i) for i in range(len(_SUIT_INDEX))
)
_KEY_MASK = _RANK_MASK | sum(_FLUSH_BITS)


_RANK_CODE: tuple[int, ...] = (0, 0, *(5 ** (r - 2) for r in range(2, 15)))
"""rank value (2..14) -> its code, indexed by the rank value."""


def _card_code(card: Card) -> int:
    return _RANK_CODE[card.rank.value_int] + (
        _SUIT_WEIGHT << (_RANK_BITS + _SUIT_FIELD_BITS * _SUIT_INDEX[card.suit])
    )


_CODE_BY_CARD: dict[Card, int] = {c: _card_code(c) for c in DECK}
_CODE: dict[object, int] = {s: _CODE_BY_CARD[c] for s, c in CARD_BY_SPELLING.items()}
_CODE.update(_CODE_BY_CARD.items())


# --------------------------------------------------------------------------- names


def _word(rank: int) -> str:
    return Rank.from_int(rank).word


def _plural(rank: int) -> str:
    return Rank.from_int(rank).plural


def _name(hand_class: HandClass, ranks: tuple[int, ...], top: int) -> str:
    """The readable name; ``top`` is the highest card of a straight (5 for the wheel)."""
    if hand_class is HandClass.HIGH_CARD:
        return f"High card, {_word(ranks[0])}"
    if hand_class is HandClass.PAIR:
        return f"Pair of {_plural(ranks[0])}, {_word(ranks[1])} kicker"
    if hand_class is HandClass.TWO_PAIR:
        return f"Two pair, {_plural(ranks[0])} and {_plural(ranks[1])}"
    if hand_class is HandClass.THREE_OF_A_KIND:
        return f"Three of a kind, {_plural(ranks[0])}"
    if hand_class is HandClass.STRAIGHT:
        return f"Straight, {_word(top)} high"
    if hand_class is HandClass.FLUSH:
        return f"{_word(ranks[0]).capitalize()}-high flush"
    if hand_class is HandClass.FULL_HOUSE:
        return f"Full house, {_plural(ranks[0])} full of {_plural(ranks[1])}"
    if hand_class is HandClass.FOUR_OF_A_KIND:
        return f"Four of a kind, {_plural(ranks[0])}"
    if hand_class is HandClass.STRAIGHT_FLUSH:
        return f"Straight flush, {_word(top)} high"
    if hand_class is HandClass.FIVE_OF_A_KIND:
        return f"Five of a kind, {_plural(ranks[0])}"
    return "Royal flush"


# --------------------------------------------------------------------------- tables

_DESC: tuple[int, ...] = tuple(range(14, 1, -1))  # ace … deuce
_WHEEL_CARDS = (14, 5, 4, 3, 2)
_ROYAL_CARDS = (14, 13, 12, 11, 10)

# One hand class before ranking: (class, ranks, the five (or three) card ranks, flush?).
_Shape = tuple[HandClass, tuple[int, ...], tuple[int, ...], bool]


def _five_shapes(wheel: Wheel) -> list[_Shape]:
    """The 7,462 classes of five-card hands (6,175 rank multisets + 1,287 flushes)."""
    shapes: list[_Shape] = []
    add = shapes.append
    for cards in combinations(_DESC, 5):
        if cards[0] - cards[4] == 4:
            run: tuple[int, ...] | None = cards
        elif cards == _WHEEL_CARDS:
            run = (5, 4, 3, 2, 1) if wheel is Wheel.LOWEST else _WHEEL_CARDS
        else:
            run = None
        if run is None:
            add((HandClass.HIGH_CARD, cards, cards, False))
            add((HandClass.FLUSH, cards, cards, True))
        else:
            add((HandClass.STRAIGHT, run, cards, False))
            sf = HandClass.ROYAL_FLUSH if cards == _ROYAL_CARDS else HandClass.STRAIGHT_FLUSH
            add((sf, run, cards, True))
    for a in _DESC:
        rest = [r for r in _DESC if r != a]
        for kick in combinations(rest, 3):
            add((HandClass.PAIR, (a, *kick), (a, a, *kick), False))
        for kickers in combinations(rest, 2):
            add((HandClass.THREE_OF_A_KIND, (a, *kickers), (a, a, a, *kickers), False))
        for b in rest:
            add((HandClass.FULL_HOUSE, (a, b), (a, a, a, b, b), False))
            add((HandClass.FOUR_OF_A_KIND, (a, b), (a, a, a, a, b), False))
            if b < a:
                for k in rest:
                    if k != b:
                        add((HandClass.TWO_PAIR, (a, b, k), (a, a, b, b, k), False))
    return shapes


def _three_shapes() -> list[_Shape]:
    """The 455 classes of three-card hands (no straights or flushes in the front)."""
    shapes: list[_Shape] = []
    for cards in combinations(_DESC, 3):
        shapes.append((HandClass.HIGH_CARD, cards, cards, False))
    for a in _DESC:
        shapes.append((HandClass.THREE_OF_A_KIND, (a,), (a, a, a), False))
        for k in _DESC:
            if k != a:
                shapes.append((HandClass.PAIR, (a, k), (a, a, k), False))
    return shapes


def _build(
    shapes: list[_Shape], size: int, shared: dict[tuple[int, tuple[int, ...], int], HandRank]
) -> dict[int, HandRank]:
    """key -> HandRank, strengths dense in (category, ranks) order. ``shared`` interns
    identical HandRanks across tables (the two wheel settings differ only among straights)."""
    shapes.sort(key=lambda s: (_CLASS_ORDER[s[0]], s[1]))
    table: dict[int, HandRank] = {}
    rank_code = _RANK_CODE.__getitem__
    for strength, (hand_class, ranks, cards, flush) in enumerate(shapes, 1):
        category = _CLASS_ORDER[hand_class]
        ident = (category, ranks, strength)
        hand = shared.get(ident)
        if hand is None:
            top = cards[1] if cards == _WHEEL_CARDS else cards[0]
            name = _name(hand_class, ranks, top)
            hand = HandRank(category, ranks, hand_class, name, size, strength)
            shared[ident] = hand
        key = sum(map(rank_code, cards))
        if flush:
            for bit in _FLUSH_BITS:
                table[key | bit] = hand
        else:
            table[key] = hand
    return table


def _build_all() -> tuple[dict[int, HandRank], dict[int, HandRank], dict[int, HandRank]]:
    shared: dict[tuple[int, tuple[int, ...], int], HandRank] = {}
    lowest = _build(_five_shapes(Wheel.LOWEST), 5, shared)
    second = _build(_five_shapes(Wheel.SECOND_HIGHEST), 5, shared)
    three = _build(_three_shapes(), 3, {})
    return lowest, second, three


_FIVE_LOWEST, _FIVE_SECOND_HIGHEST, _THREE = _build_all()
_FIVE_BY_WHEEL: dict[object, dict[int, HandRank]] = {
    Wheel.LOWEST: _FIVE_LOWEST,
    Wheel.SECOND_HIGHEST: _FIVE_SECOND_HIGHEST,
}
_LOWEST = Wheel.LOWEST


# --------------------------------------------------------------------------- evaluation


def evaluate_five(cards: Sequence[str | Card], wheel: Wheel = Wheel.LOWEST) -> HandRank:
    """The shared ``HandRank`` of a five-card row (middle or back)."""
    # Hot path: five dict lookups, four additions, one mask, one lookup. Anything unusual
    # (unknown card, wrong count, impossible multiset, odd wheel) falls to _slow below.
    try:
        a, b, c, d, e = cards
        if wheel is _LOWEST:
            return _FIVE_LOWEST[(_CODE[a] + _CODE[b] + _CODE[c] + _CODE[d] + _CODE[e]) & _KEY_MASK]
        return _FIVE_BY_WHEEL[wheel][
            (_CODE[a] + _CODE[b] + _CODE[c] + _CODE[d] + _CODE[e]) & _KEY_MASK
        ]
    except (KeyError, TypeError, ValueError):
        pass
    return _slow(cards, 5, wheel)


def evaluate_three(cards: Sequence[str | Card]) -> HandRank:
    """The shared ``HandRank`` of a three-card row (front): high card, pair or three of a kind."""
    try:
        a, b, c = cards
        return _THREE[(_CODE[a] + _CODE[b] + _CODE[c]) & _RANK_MASK]
    except (KeyError, TypeError, ValueError):
        pass
    return _slow(cards, 3, Wheel.LOWEST)


def evaluate_row(cards: Sequence[str | Card], wheel: Wheel = Wheel.LOWEST) -> HandRank:
    """``evaluate_three`` or ``evaluate_five`` by the number of cards."""
    if not hasattr(cards, "__len__") or isinstance(cards, str):
        cards = parse_cards(cards)  # type: ignore[arg-type]  # a generator, or "As Kd 7c"
    n = len(cards)
    if n == 5:
        return evaluate_five(cards, wheel)
    if n == 3:
        return evaluate_three(cards)
    raise ValueError(f"a row has 3 or 5 cards, got {n}")


_FIVE_OF_A_KIND: dict[int, HandRank] = {
    rank: HandRank(
        _CLASS_ORDER[HandClass.FIVE_OF_A_KIND],
        (rank,),
        HandClass.FIVE_OF_A_KIND,
        _name(HandClass.FIVE_OF_A_KIND, (rank,), rank),
        5,
        7462 + rank - 1,
    )
    for rank in range(2, 15)
}


def evaluate_with_repeats(cards: Sequence[Card], wheel: Wheel = Wheel.LOWEST) -> HandRank:
    """A row that may hold a card twice (a joker standing for a card already at the table,
    RULES.md §16.3): five cards of one rank are ``FIVE_OF_A_KIND``, above every other five-card hand
    (strengths 7463..7475); a row holding one card twice is no flush (a flush is five different
    cards of a suit), so the repeat reads as a pair.

    >>> evaluate_with_repeats(parse_cards("As As Ah Ad Ac")).name
    'Five of a kind, aces'
    >>> evaluate_with_repeats(parse_cards("Ks Ks Qs Js Ts")).name
    'Pair of kings, queen kicker'
    """
    cards = tuple(cards)
    if len(cards) == 5 and len({c.rank for c in cards}) == 1:
        return _FIVE_OF_A_KIND[cards[0].rank.value_int]
    key = sum(_CODE_BY_CARD[c] for c in cards)
    if len(cards) == 3:
        return _THREE[key & _RANK_MASK]
    if len(set(cards)) < 5:
        key &= _RANK_MASK
    return _FIVE_BY_WHEEL[wheel][key & _KEY_MASK]


CARD_CODES: tuple[int, ...] = tuple(_CODE_BY_CARD[c] for c in DECK)
"""Each card's code by ``Card.index``: a row's hand is ``hand_of_codes`` of their sum."""

# Five of a kind overflows its rank's base-5 digit into the next (5 x 5**k = 5**(k+1)): a key no
# other hand has (its digits sum to 1, every other hand's to 5).
_FIVE_OF_A_KIND_BY_KEY: dict[int, HandRank] = {
    5 * _RANK_CODE[rank]: hand for rank, hand in _FIVE_OF_A_KIND.items()
}


def hand_of_codes(total: int, size: int, wheel: Wheel, repeated: bool) -> HandRank:
    """The hand of a row given the sum of its cards' ``CARD_CODES``: what ``evaluate_three``,
    ``evaluate_five`` or (``repeated``: the row holds a card twice) ``evaluate_with_repeats``
    return for those cards, without looking at them again.

    >>> hand_of_codes(sum(CARD_CODES[c.index] for c in parse_cards("As Ks Qs Js Ts")), 5,
    ...               Wheel.LOWEST, False).name
    'Royal flush'
    >>> hand_of_codes(5 * CARD_CODES[parse_card("7h").index], 5, Wheel.LOWEST, True).name
    'Five of a kind, sevens'
    """
    if size == 3:
        return _THREE[total & _RANK_MASK]
    if repeated:
        key = total & _RANK_MASK
        hand = _FIVE_BY_WHEEL[wheel].get(key)
        return hand if hand is not None else _FIVE_OF_A_KIND_BY_KEY[key]
    return _FIVE_BY_WHEEL[wheel][total & _KEY_MASK]


def _to_card(card: object) -> Card:
    return card if isinstance(card, Card) else parse_card(card)  # type: ignore[arg-type]


def _slow(cards: object, size: int, wheel: object) -> HandRank:
    """Everything the hot path does not take: raise the right error, or evaluate leniently
    (a space-separated string, padded card text) what ``parse_card`` accepts."""
    if size == 5:
        try:
            table = _FIVE_BY_WHEEL[wheel]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown wheel {wheel!r}: expected one of {[w.value for w in Wheel]}"
            ) from None
    else:
        table = _THREE
    if isinstance(cards, str):
        parsed = parse_cards(cards)
    else:
        try:
            items = list(cards)  # type: ignore[call-overload]
        except TypeError:
            raise ValueError(f"expected {size} cards, got {cards!r}") from None
        parsed = tuple(_to_card(c) for c in items)
    if len(parsed) != size:
        raise ValueError(f"a {size}-card row needs {size} cards, got {len(parsed)}")
    if len(set(parsed)) != size:
        dup = sorted({str(c) for c in parsed if parsed.count(c) > 1})
        raise ValueError(f"duplicate card(s) in one row: {', '.join(dup)}")
    key = sum(_CODE_BY_CARD[c] for c in parsed)
    return table[key & (_KEY_MASK if size == 5 else _RANK_MASK)]


# --------------------------------------------------------------------------- highest card

_SUIT_BY_TOKEN: dict[object, Suit] = {s: s for s in Suit}
for _spelling, _card in CARD_BY_SPELLING.items():
    if _card.rank is Rank.ACE:
        _SUIT_BY_TOKEN[_spelling[1:]] = _card.suit  # 's', 'S', '♠', '♤' …
del _spelling, _card


def _suit_positions(suit_order: Iterable[Suit | str]) -> dict[Suit, int]:
    positions: dict[Suit, int] = {}
    for token in suit_order:
        try:
            suit = _SUIT_BY_TOKEN[token]
        except (KeyError, TypeError):
            raise ValueError(f"{token!r} is not a suit (s h d c or ♠ ♥ ♦ ♣)") from None
        if suit in positions:
            raise ValueError(f"suit {suit.value!r} appears twice in the suit order")
        positions[suit] = len(positions)
    return positions


def highest_card(
    cards: Iterable[str | Card], hand_rank: HandRank, suit_order: Iterable[Suit | str]
) -> Card:
    """The hand's highest card for suit tie-breaks.

    The card of the first rank in ``hand_rank.ranks`` (the pair rank of a pair, the top card of
    a straight or flush, the 5 of a ``LOWEST`` wheel, the ace of a ``SECOND_HIGHEST`` wheel),
    and among cards of that rank the one whose suit comes first in ``suit_order`` (``Suit``s or
    suit letters/symbols, best first; suits it leaves out rank after those it lists).

    >>> str(highest_card("Ks Kh 5d 5c Qs".split(), evaluate_five("Ks Kh 5d 5c Qs".split()), "shcd"))
    'Ks'
    >>> wheel = "As 2d 3h 4c 5s".split()
    >>> str(highest_card(wheel, evaluate_five(wheel), ["s", "h", "c", "d"]))
    '5s'
    >>> str(highest_card(wheel, evaluate_five(wheel, Wheel.SECOND_HIGHEST), ["s", "h", "c", "d"]))
    'As'
    """
    target = hand_rank.ranks[0]
    if target == 1:
        target = 14
    positions = _suit_positions(suit_order)
    unlisted = len(positions)
    best: Card | None = None
    best_key = (0, 0)
    for item in cards:
        card = _to_card(item)
        if card.rank.value_int != target:
            continue
        key = (positions.get(card.suit, unlisted), _SUIT_INDEX[card.suit])
        if best is None or key < best_key:
            best, best_key = card, key
    if best is None:
        raise ValueError(
            f"no card of rank {Rank.from_int(target).value} among the cards of {hand_rank.name!r}"
        )
    return best
