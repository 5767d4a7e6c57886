"""Cards: ranks, suits, parsing (RULES.md §2, §14.1).

>>> parse_card("10h")
Card(rank=<Rank.TEN: 'T'>, suit=<Suit.HEART: 'h'>)
>>> str(parse_card("a♠"))
'As'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ..errors import CardError


class Rank(StrEnum):
    """Card rank; the value is the notation. ``Rank.ACE.value_int == 14``."""

    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "T"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"
    ACE = "A"

    @property
    def value_int(self) -> int:
        """2 for a deuce … 14 for an ace."""
        return _RANK_INT[self]

    @property
    def word(self) -> str:
        """'two' … 'ace' — used in readable hand names."""
        return _RANK_WORDS[self][0]

    @property
    def plural(self) -> str:
        """'twos' … 'aces', 'sixes'."""
        return _RANK_WORDS[self][1]

    @classmethod
    def from_int(cls, value: int) -> Rank:
        """The rank whose ``value_int`` is ``value`` (1 is read as the ace)."""
        return _INT_RANK[14 if value == 1 else value]


class Suit(StrEnum):
    """Card suit; the value is the notation letter."""

    SPADE = "s"
    HEART = "h"
    DIAMOND = "d"
    CLUB = "c"

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOL[self]

    @property
    def colour(self) -> str:
        """'black' (spades, clubs) or 'red' (hearts, diamonds)."""
        return "black" if self in (Suit.SPADE, Suit.CLUB) else "red"


_RANK_INT: dict[Rank, int] = {r: i + 2 for i, r in enumerate(Rank)}
_INT_RANK: dict[int, Rank] = {v: r for r, v in _RANK_INT.items()}
_RANK_WORDS: dict[Rank, tuple[str, str]] = {
    Rank.TWO: ("two", "twos"),
    Rank.THREE: ("three", "threes"),
    Rank.FOUR: ("four", "fours"),
    Rank.FIVE: ("five", "fives"),
    Rank.SIX: ("six", "sixes"),
    Rank.SEVEN: ("seven", "sevens"),
    Rank.EIGHT: ("eight", "eights"),
    Rank.NINE: ("nine", "nines"),
    Rank.TEN: ("ten", "tens"),
    Rank.JACK: ("jack", "jacks"),
    Rank.QUEEN: ("queen", "queens"),
    Rank.KING: ("king", "kings"),
    Rank.ACE: ("ace", "aces"),
}
_SUIT_SYMBOL: dict[Suit, str] = {
    Suit.SPADE: "♠",
    Suit.HEART: "♥",
    Suit.DIAMOND: "♦",
    Suit.CLUB: "♣",
}


@dataclass(frozen=True, slots=True)
class Card:
    """One card of the 52-card deck. ``str(card)`` is the canonical form (``As``)."""

    rank: Rank
    suit: Suit

    def __str__(self) -> str:
        return self.rank.value + self.suit.value

    @property
    def index(self) -> int:
        """A dense index 0..51 (rank-major), stable across versions."""
        return (_RANK_INT[self.rank] - 2) * 4 + _SUIT_INDEX[self.suit]


_SUIT_INDEX: dict[Suit, int] = {s: i for i, s in enumerate(Suit)}

# Every accepted spelling of every card -> the Card. Built once; parsing is one dict lookup.
_RANK_SPELLINGS: dict[Rank, tuple[str, ...]] = {
    r: ((r.value, r.value.lower()) if r.value.isalpha() else (r.value,)) for r in Rank
}
_RANK_SPELLINGS[Rank.TEN] = ("T", "t", "10")
_SUIT_SPELLINGS: dict[Suit, tuple[str, ...]] = {
    Suit.SPADE: ("s", "S", "♠", "♤"),
    Suit.HEART: ("h", "H", "♥", "♡"),
    Suit.DIAMOND: ("d", "D", "♦", "♢"),
    Suit.CLUB: ("c", "C", "♣", "♧"),
}

DECK: tuple[Card, ...] = tuple(Card(r, s) for r in Rank for s in Suit)
"""The 52 cards, rank-major (2s 2h 2d 2c 3s …), the order of ``Card.index``."""

CARD_BY_SPELLING: dict[str, Card] = {
    rs + ss: Card(r, s)
    for r in Rank
    for rs in _RANK_SPELLINGS[r]
    for s in Suit
    for ss in _SUIT_SPELLINGS[s]
}
"""Every accepted spelling of a card (``As``, ``as``, ``AS``, ``10h``, ``A♠`` …) -> the Card."""


JOKER = "Xj"
"""A joker's canonical spelling (RULES.md §16.3); input accepts either case (``xj``, ``XJ``)."""

JOKER_SPELLINGS: frozenset[str] = frozenset({"Xj", "xj", "XJ", "xJ"})


def is_joker(text: object) -> bool:
    """Whether a card string spells a joker (surrounding blanks allowed, as for cards)."""
    return isinstance(text, str) and (text in JOKER_SPELLINGS or text.strip() in JOKER_SPELLINGS)


def parse_card(text: str) -> Card:
    """One card from its text; raises ``CardError`` with a readable reason."""
    card = CARD_BY_SPELLING.get(text) if isinstance(text, str) else None
    if card is None:
        card = CARD_BY_SPELLING.get(text.strip()) if isinstance(text, str) else None
    if card is None:
        if is_joker(text):
            raise CardError(
                f"{text!r} is a joker: only a profile whose deck holds jokers "
                "(deck.jokers) accepts it, and it stands for a card only in a hand"
            )
        raise CardError(
            f"{text!r} is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), "
            "suits s h d c (or ♠ ♥ ♦ ♣), e.g. 'As', 'Td', '2c'"
        )
    return card


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Cards from a space-separated string or an iterable of card strings.

    >>> [str(c) for c in parse_cards("As kd 10h")]
    ['As', 'Kd', 'Th']
    """
    items = text.split() if isinstance(text, str) else list(text)
    return tuple(parse_card(t) for t in items)


CARD_INDEX: dict[str, int] = {s: DECK.index(c) for s, c in CARD_BY_SPELLING.items()}
"""Every accepted spelling -> the card's dense index (``Card.index``); for fast validation."""

CANONICAL: tuple[str, ...] = tuple(str(c) for c in DECK)
"""Canonical text of each card by index."""
