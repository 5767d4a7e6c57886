"""Cards, rows and hands: what a card is, the three rows, and how strong a row's hand is
(RULES.md §2, §3).

>>> from cpsettle_service.domain.cards import evaluate_five, parse_cards
>>> evaluate_five(parse_cards("As Ks Qs Js Ts")).name
'Royal flush'
"""

from ..errors import CardError
from .cards import (
    CANONICAL,
    CARD_BY_SPELLING,
    CARD_INDEX,
    DECK,
    JOKER,
    JOKER_SPELLINGS,
    Card,
    Rank,
    Suit,
    is_joker,
    parse_card,
    parse_cards,
)
from .hands import (
    HandClass,
    HandRank,
    Wheel,
    evaluate_five,
    evaluate_row,
    evaluate_three,
    evaluate_with_repeats,
    highest_card,
)
from .rows import ROWS, Row

__all__ = [
    "CANONICAL",
    "CARD_BY_SPELLING",
    "CARD_INDEX",
    "DECK",
    "JOKER",
    "JOKER_SPELLINGS",
    "ROWS",
    "Card",
    "CardError",
    "HandClass",
    "HandRank",
    "Rank",
    "Row",
    "Suit",
    "Wheel",
    "evaluate_five",
    "evaluate_row",
    "evaluate_three",
    "evaluate_with_repeats",
    "highest_card",
    "is_joker",
    "parse_card",
    "parse_cards",
]
