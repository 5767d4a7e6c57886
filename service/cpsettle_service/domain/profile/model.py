"""Rule profiles: every number a house can change (RULES.md §3-12), as immutable data.

The parts of a profile (scoring, royalties, fouls, naturals, money, caps, rake, ranking,
Fantasyland, deck) are frozen dataclasses whose fields declare their JSON name, default, bounds
and documentation once (``reading.schema``); ``parse`` reads and writes the JSON form, and
``registry`` holds the profiles a service offers by name.

>>> from cpsettle_service.domain.profile import profile_from_dict
>>> p = profile_from_dict({"name": "house", "surrender": {"allowed": True, "units": 2}})
>>> (p.scoring.row_unit, p.surrender.units, p.caps.losses)
(1, 2, False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..cards.cards import Rank, Suit
from ..cards.hands import HandClass, HandRank, Wheel
from ..cards.rows import ROWS, Row
from ..naturals.catalogue import Natural, builtin_definition, builtin_predicate
from ..naturals.vocabulary import Definition, Predicate, compile_definition
from ..reading.schema import (
    boolean,
    card_rank,
    choice,
    external,
    integer,
    part,
    repeated,
    text,
    write_part,
)
from .currencies import NO_CURRENCY


class RoyaltyMode(StrEnum):
    NONE = "NONE"
    ALWAYS = "ALWAYS"
    ON_WIN_ADDED = "ON_WIN_ADDED"
    ON_WIN_REPLACES = "ON_WIN_REPLACES"


class FoulPenalty(StrEnum):
    SCOOPED = "SCOOPED"
    FIXED = "FIXED"


class VsFoul(StrEnum):
    GREATER_OF_NATURAL_AND_FOUL = "GREATER_OF_NATURAL_AND_FOUL"
    NATURAL_UNITS = "NATURAL_UNITS"


class CapBasis(StrEnum):
    HAND_START = "HAND_START"
    CURRENT_STACK = "CURRENT_STACK"


class CapOrder(StrEnum):
    BUTTON_FIRST = "BUTTON_FIRST"
    LEFT_OF_BUTTON_FIRST = "LEFT_OF_BUTTON_FIRST"


class RakeMode(StrEnum):
    NONE = "NONE"
    PER_PLAYER = "PER_PLAYER"
    COMMISSION = "COMMISSION"


class RowTie(StrEnum):
    PUSH = "PUSH"
    SUIT_OF_HIGHEST_CARD = "SUIT_OF_HIGHEST_CARD"


class NaturalTie(StrEnum):
    """How two naturals of equal rank settle (RULES.md §16.2); proto enum ``NaturalTie``."""

    PUSH = "PUSH"
    COMPARE_CARDS = "COMPARE_CARDS"


MAX_UNIT_VALUE = 10**12  # minor units per scoring unit: ten billion in a two-decimal currency
MAX_MONEY = 2**63 - 1  # every amount must fit the int64 money fields of the API

FRONT_CLASSES = frozenset({HandClass.HIGH_CARD, HandClass.PAIR, HandClass.THREE_OF_A_KIND})

# The most entries a table can hold where the rules allow no more (DECISIONS.md decision 23):
# beyond them a profile is refused before its entries are read, so no profile a client sends
# is larger than the rules make sensible. A royalty entry is one (row, class, rank or none),
# never repeated: the front's 3 classes x (13 ranks + the whole class) = 42, and each 5-card
# row's ranked classes (9, and five of a kind with jokers: 10) x 14 + the royal flush = 141,
# so 42 + 2 x 141 = 324. A progressive
# entry is one front threshold: 3 classes x 14 = 42. A naturals entry is one natural: the 14 of
# the catalogue, the 3 RULES.md §16.1 adds, and room for a house's own definitions: 32.
MAX_ROYALTY_ENTRIES = len(FRONT_CLASSES) * 14 + 2 * ((len(HandClass) - 1) * 14 + 1)
MAX_PROGRESSIVE_ENTRIES = len(FRONT_CLASSES) * 14
MAX_NATURAL_ENTRIES = 32
DEFAULT_SUIT_ORDER: tuple[Suit, ...] = (Suit.SPADE, Suit.HEART, Suit.CLUB, Suit.DIAMOND)


MAX_UNITS = 1_000_000  # units a row, bonus, royalty, natural, foul or surrender can be worth
MAX_FEE = 10**12  # minor units of a rake fee or commission cap


# Each part's fields are its schema (schema.py): type, default, bounds and doc line, written once
# here. The proto and docs/RULES.md §17 are checked against them
# (tests/contract/test_profile_schema.py).


@dataclass(frozen=True, slots=True)
class HomeRun:
    min_players: int = integer(4, 2, 4, "The fewest players at the table for a home run to count.")
    multiplier: int = integer(1, 1, 100, "What a home run multiplies the scooper's pair scores by.")


@dataclass(frozen=True, slots=True)
class Scoring:
    row_unit: int = integer(1, 0, MAX_UNITS, "Units for each row won.")
    majority_bonus: int = integer(0, 0, MAX_UNITS, "Units for winning two rows of three.")
    majority_bonus_on_scoop: bool = boolean(False, "Whether a scoop also earns the majority bonus.")
    scoop_bonus: int = integer(0, 0, MAX_UNITS, "Units for winning all three rows.")
    scoop_multiplier: int = integer(1, 1, 100, "What a scoop multiplies the pair's row units by.")
    home_run: HomeRun = part(HomeRun, "The home-run (scoop of every opponent) multiplier.")


@dataclass(frozen=True, slots=True)
class RoyaltyEntry:
    row: Row = choice(Row, None, "The row the hand is made in.")
    hand_class: HandClass = choice(HandClass, None, "The class of the hand.")
    rank: Rank | None = card_rank("Narrows the entry to a pair or trips of one rank.")
    units: int = integer(None, 0, MAX_UNITS, "The royalty in units.")


@dataclass(frozen=True)
class Royalties:
    """The royalty table and how it is paid. ``units(row, hand)`` prices one row."""

    mode: RoyaltyMode = choice(RoyaltyMode, RoyaltyMode.NONE, "How royalties are paid.")
    table: tuple[RoyaltyEntry, ...] = repeated(
        RoyaltyEntry,
        MAX_ROYALTY_ENTRIES,
        "What each hand is worth; a hand not listed is "
        "worth 0. One entry per row, class and rank (or none).",
    )
    _lookup: Mapping[tuple[Row, HandClass, int], int] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # Resolve "most specific wins" and the royal-flush fallback once, so pricing a row at
        # settlement time is one dict lookup (RULES.md §14.2-14.4).
        by_class = {(e.row, e.hand_class): e.units for e in self.table if e.rank is None}
        by_rank = {
            (e.row, e.hand_class, e.rank.value_int): e.units
            for e in self.table
            if e.rank is not None
        }
        lookup: dict[tuple[Row, HandClass, int], int] = {}
        for row in ROWS:
            for hc in HandClass:
                for main in range(2, 15):
                    units = by_rank.get((row, hc, main), by_class.get((row, hc)))
                    if units is None and hc is HandClass.ROYAL_FLUSH:
                        units = by_rank.get(
                            (row, HandClass.STRAIGHT_FLUSH, main),
                            by_class.get((row, HandClass.STRAIGHT_FLUSH)),
                        )
                    if units:
                        lookup[(row, hc, main)] = units
        object.__setattr__(self, "_lookup", lookup)

    def units(self, row: Row, hand: HandRank) -> int:
        """The row's royalty in units (0 when no entry matches)."""
        return self._lookup.get((row, hand.hand_class, hand.ranks[0]), 0)


@dataclass(frozen=True, slots=True)
class Foul:
    penalty: FoulPenalty = choice(FoulPenalty, FoulPenalty.SCOOPED, "What a fouled hand pays.")
    fixed_units: int = integer(
        0, 0, MAX_UNITS, "Units a fouled hand pays each opponent under FIXED."
    )
    pays_opponent_royalties: bool = boolean(
        False, "Whether under FIXED the fouled hand also pays the opponent's royalties."
    )


NATURAL_NAME_PATTERN = re.compile(r"[A-Z][A-Z0-9_]{0,39}")


class HouseNatural(str):
    """The name of a natural a house defines in its profile (RULES.md §16.1): a ``str`` with the
    ``value`` and ``label`` a catalogue ``Natural`` has, so both read alike."""

    __slots__ = ()

    @property
    def value(self) -> str:
        return str(self)

    @property
    def label(self) -> str:
        """'ONE_RED_ONE' reads 'One red one'."""
        return self.replace("_", " ").capitalize()


@dataclass(frozen=True, slots=True)
class NaturalEntry:
    """A natural the profile plays. ``definition`` is the house's own (``None``: the catalogue's
    definition of ``natural``)."""

    natural: Natural | HouseNatural = external(
        "string",
        "A catalogue natural or a house natural's name (capital letters, digits and _, "
        "at most 40), which then needs a definition.",
    )
    rank: int = integer(None, 0, 1000, "Its rank: a higher rank beats a lower one.")
    units: int = integer(None, 0, MAX_UNITS, "What it collects, in units.")
    definition: Definition | None = part(
        Definition,
        "The natural as data (RULES.md §16.1): every clause set must hold; none: the "
        "catalogue's definition.",
        None,
    )

    @property
    def effective_definition(self) -> Definition:
        if self.definition is not None:
            return self.definition
        definition = builtin_definition(self.natural)
        assert definition is not None  # a name outside the catalogue is read with a definition
        return definition


@dataclass(frozen=True)
class Naturals:
    require_declaration: bool = boolean(True, "Whether a natural must be declared to count.")
    vs_foul: VsFoul = choice(
        VsFoul, VsFoul.GREATER_OF_NATURAL_AND_FOUL, "What a fouled player pays a natural."
    )
    table: tuple[NaturalEntry, ...] = repeated(
        NaturalEntry,
        MAX_NATURAL_ENTRIES,
        "The naturals this profile plays, one entry per natural; none when empty.",
    )
    quads_as_two_pairs: bool = boolean(
        True, "Whether a four of a kind fills two groups of 2 in rankGroups.", omit_default=True
    )
    equal_rank: NaturalTie = choice(
        NaturalTie,
        NaturalTie.PUSH,
        "How two naturals of equal rank settle.",
        omit_default=True,
        short_spelling=True,
    )
    by_natural: Mapping[str, NaturalEntry] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    predicates: Mapping[str, Predicate] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    best_first: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_natural", {e.natural: e for e in self.table})
        # Which natural a hand holding several is settled with: the higher rank, then more
        # units, then the catalogue's order (house naturals after it, in the table's order).
        catalogue: dict[str, int] = {n.value: i for i, n in enumerate(Natural)}
        object.__setattr__(
            self,
            "best_first",
            tuple(
                e.natural
                for e in sorted(
                    self.table,
                    key=lambda e: (
                        -e.rank,
                        -e.units,
                        catalogue.get(e.natural, len(catalogue)),
                        self.table.index(e),
                    ),
                )
            ),
        )
        predicates: dict[str, Predicate] = {}
        for e in self.table:
            if e.definition is None:
                predicates[e.natural] = builtin_predicate(e.natural, self.quads_as_two_pairs)  # type: ignore[arg-type]
            else:
                predicates[e.natural] = compile_definition(e.definition, self.quads_as_two_pairs)
        object.__setattr__(self, "predicates", predicates)


@dataclass(frozen=True, slots=True)
class Deck:
    """Jokers (RULES.md §16.3): how many the deck holds (0-2) and whether one may stand for a card
    that is already at the table."""

    jokers: int = integer(0, 0, 2, "How many jokers the deck holds; a joker is written Xj.")
    joker_duplicates: bool = boolean(
        False, "Whether a joker may stand for a card already at the table.", omit_default=True
    )


@dataclass(frozen=True, slots=True)
class Surrender:
    allowed: bool = boolean(False, "Whether a player may surrender.")
    units: int = integer(0, 0, MAX_UNITS, "What a surrender pays each opponent, in units.")
    pays_fouled: bool = boolean(True, "Whether a surrendered player also pays a fouled opponent.")


@dataclass(frozen=True, slots=True)
class Money:
    unit_value: int = integer(
        100,
        1,
        MAX_UNIT_VALUE,
        "Minor currency units per scoring unit; a request's unitValue overrides it.",
        wide=True,
    )
    # written only when it is not XXX: profiles that name no currency keep their digests
    currency: str = text(
        NO_CURRENCY,
        3,
        "The currency of the money amounts: an active ISO 4217 "
        "code (XXX: no currency involved); a request's currency overrides it.",
        omit_default=True,
    )


@dataclass(frozen=True, slots=True)
class Caps:
    losses: bool = boolean(False, "Whether a player can lose no more than his stack.")
    wins: bool = boolean(
        False, "Whether a player can win no more than his stack from each opponent."
    )
    basis: CapBasis = choice(CapBasis, CapBasis.HAND_START, "The stack a cap is measured against.")
    order: CapOrder = choice(CapOrder, CapOrder.BUTTON_FIRST, "The order pairs are capped in.")


@dataclass(frozen=True, slots=True)
class Rake:
    mode: RakeMode = choice(RakeMode, RakeMode.NONE, "How the house takes its rake.")
    per_player_fee: int = integer(
        0, 0, MAX_FEE, "The fee each player pays under PER_PLAYER, in minor units.", wide=True
    )
    commission_bps: int = integer(
        0, 0, 10_000, "The commission under COMMISSION, in basis points of a winner's net."
    )
    commission_cap: int = integer(
        0,
        0,
        MAX_FEE,
        "The largest commission per player per hand, in minor units; 0: no cap.",
        wide=True,
    )


@dataclass(frozen=True, slots=True)
class Ranking:
    wheel: Wheel = choice(Wheel, Wheel.LOWEST, "Where A-2-3-4-5 ranks among straights.")
    row_tie: RowTie = choice(RowTie, RowTie.PUSH, "How two equal rows are settled.")
    suit_order: tuple[Suit, ...] = repeated(
        Suit, len(Suit), "The four suits, best first.", DEFAULT_SUIT_ORDER
    )
    suit_order_tiebreak: bool = boolean(
        False, "Whether suitOrder breaks ties between otherwise equal hands."
    )


@dataclass(frozen=True, slots=True)
class HandThreshold:
    """'This hand or better': a class, optionally narrowed to a main rank (pair of queens)."""

    hand_class: HandClass = choice(HandClass, None, "The class of the hand.")
    rank: Rank | None = card_rank("The lowest rank of that class.", None)

    def met_by(self, hand: HandRank) -> bool:
        return _at_least(hand, self.hand_class, self.rank)


def _at_least(hand: HandRank, hand_class: HandClass, rank: Rank | None) -> bool:
    floor = (hand_class.order, (rank.value_int,) if rank else ())
    return (hand.category, hand.ranks) >= floor


@dataclass(frozen=True, slots=True)
class ProgressiveEntry:
    """A front hand that deals more cards: a threshold's fields inline (as in the proto), and
    the cards."""

    hand_class: HandClass = choice(HandClass, None, "The class of the front hand.")
    rank: Rank | None = card_rank("The lowest rank of that class.", None)
    cards: int = integer(14, 13, 52, "The cards dealt in Fantasyland for it.")

    def met_by(self, hand: HandRank) -> bool:
        return _at_least(hand, self.hand_class, self.rank)


@dataclass(frozen=True, slots=True)
class FantasylandStay:
    front: HandThreshold | None = part(
        HandThreshold,
        "The front row's threshold; none when left out.",
        HandThreshold(HandClass.THREE_OF_A_KIND),
    )
    middle: HandThreshold | None = part(
        HandThreshold,
        "The middle row's threshold; none when left out.",
        HandThreshold(HandClass.FULL_HOUSE),
    )
    back: HandThreshold | None = part(
        HandThreshold,
        "The back row's threshold; none when left out.",
        HandThreshold(HandClass.FOUR_OF_A_KIND),
    )


def _progressive_json(entries: tuple[ProgressiveEntry, ...]) -> list[dict[str, Any]]:
    """Written weakest first (a profile holds them strongest first: the first one met wins)."""
    return [
        write_part(e)
        for e in sorted(
            entries, key=lambda e: (e.hand_class.order, e.rank.value_int if e.rank else 0)
        )
    ]


@dataclass(frozen=True, slots=True)
class Fantasyland:
    enabled: bool = boolean(False, "Whether Fantasyland is played.")
    entry: HandThreshold = part(
        HandThreshold,
        "The weakest front hand that enters.",
        HandThreshold(HandClass.PAIR, Rank.QUEEN),
    )
    entry_cards: int = integer(14, 13, 52, "The cards dealt on entry.")
    progressive: tuple[ProgressiveEntry, ...] = repeated(
        ProgressiveEntry,
        MAX_PROGRESSIVE_ENTRIES,
        "Stronger front hands that deal more cards, one entry per front threshold.",
        write=_progressive_json,
    )
    stay: FantasylandStay = part(
        FantasylandStay, "What keeps a player in Fantasyland: any one row meeting its threshold."
    )
    stay_cards: int = integer(14, 13, 52, "The cards dealt to a player who stays.")


@dataclass(frozen=True)
class RuleProfile:
    """A complete house rule profile. Build with ``profile_from_dict`` or ``load_preset``."""

    name: str = text("", 64, "The profile's name: a preset's or a house profile's.", required=True)
    version: str = text("1", 64, "The profile's version.")
    description: str = text("", 2000, "Free text for people.")
    scoring: Scoring = part(Scoring, "Row units, majority and scoop bonuses.")
    royalties: Royalties = part(Royalties, "Royalties.")
    foul: Foul = part(Foul, "Foul penalties.")
    naturals: Naturals = part(Naturals, "Naturals.")
    surrender: Surrender = part(Surrender, "Surrender.")
    money: Money = part(Money, "The stake per unit and its currency.")
    caps: Caps = part(Caps, "Stack caps.")
    rake: Rake = part(Rake, "Rake.")
    ranking: Ranking = part(Ranking, "Hand ranking options.")
    fantasyland: Fantasyland = part(Fantasyland, "Fantasyland, for Open-Face profiles.")
    deck: Deck = part(Deck, "Jokers; left out: the standard 52 cards.", omit_default=True)
