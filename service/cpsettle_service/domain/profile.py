"""Rule profiles: every number a house can change (RULES.md §3-12), as immutable data.

A profile is read from, and written to, one JSON form (camelCase keys; the proto3 JSON form of
``cpsettle.v1.RuleProfile``): preset files, inline profiles, ``GetProfile`` and the CLI all use
it. Reading reports every problem at once (``InvalidInput``).

>>> p = load_preset("western")
>>> (p.scoring.majority_bonus, p.surrender.units, p.caps.losses)
(1, 3, True)
>>> apply_overrides(p, {"caps": {"wins": False}}).caps.wins
False
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from .cards import Rank, Suit
from .currencies import NO_CURRENCY, currency_problem
from .errors import Collector, InvalidInput, Violation, ViolationCode
from .hands import HandClass, HandRank, Wheel
from .natural_vocabulary import (
    Definition,
    Predicate,
    compile_definition,
    read_definition,
)
from .naturals import Natural, builtin_definition, builtin_predicate
from .reader import Reader, parse_enum, read_card_rank
from .rows import ROWS, Row
from .schema import (
    Spec,
    boolean,
    card_rank,
    choice,
    external,
    field_reader,
    integer,
    lines,
    maximum,
    part,
    read_field,
    read_part,
    repeated,
    required,
    spec,
    specs,
    text,
    write_json,
    write_part,
)


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
    min_players: int = integer(4, 2, 4, "The fewest players at the table for a home run to "
                               "count.")
    multiplier: int = integer(1, 1, 100, "What a home run multiplies the scooper's pair scores "
                              "by.")


@dataclass(frozen=True, slots=True)
class Scoring:
    row_unit: int = integer(1, 0, MAX_UNITS, "Units for each row won.")
    majority_bonus: int = integer(0, 0, MAX_UNITS, "Units for winning two rows of three.")
    majority_bonus_on_scoop: bool = boolean(False, "Whether a scoop also earns the majority "
                                            "bonus.")
    scoop_bonus: int = integer(0, 0, MAX_UNITS, "Units for winning all three rows.")
    scoop_multiplier: int = integer(1, 1, 100, "What a scoop multiplies the pair's row units "
                                    "by.")
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
        RoyaltyEntry, MAX_ROYALTY_ENTRIES, "What each hand is worth; a hand not listed is "
        "worth 0. One entry per row, class and rank (or none).")
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
    fixed_units: int = integer(0, 0, MAX_UNITS, "Units a fouled hand pays each opponent under "
                               "FIXED.")
    pays_opponent_royalties: bool = boolean(False, "Whether under FIXED the fouled hand also "
                                            "pays the opponent's royalties.")


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
        "string", "A catalogue natural or a house natural's name (capital letters, digits and _, "
        "at most 40), which then needs a definition.")
    rank: int = integer(None, 0, 1000, "Its rank: a higher rank beats a lower one.")
    units: int = integer(None, 0, MAX_UNITS, "What it collects, in units.")
    definition: Definition | None = part(
        Definition, "The natural as data (RULES.md §16.1): every clause set must hold; none: the "
        "catalogue's definition.", None)

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
    vs_foul: VsFoul = choice(VsFoul, VsFoul.GREATER_OF_NATURAL_AND_FOUL,
                             "What a fouled player pays a natural.")
    table: tuple[NaturalEntry, ...] = repeated(
        NaturalEntry, MAX_NATURAL_ENTRIES, "The naturals this profile plays, one entry per "
        "natural; none when empty.")
    quads_as_two_pairs: bool = boolean(True, "Whether a four of a kind fills two groups of 2 in "
                                       "rankGroups.", omit_default=True)
    equal_rank: NaturalTie = choice(NaturalTie, NaturalTie.PUSH, "How two naturals of equal rank "
                                    "settle.", omit_default=True, short_spelling=True)
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
        object.__setattr__(self, "best_first", tuple(e.natural for e in sorted(
            self.table, key=lambda e: (-e.rank, -e.units,
                                       catalogue.get(e.natural, len(catalogue)),
                                       self.table.index(e)))))
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
    joker_duplicates: bool = boolean(False, "Whether a joker may stand for a card already at "
                                     "the table.", omit_default=True)


@dataclass(frozen=True, slots=True)
class Surrender:
    allowed: bool = boolean(False, "Whether a player may surrender.")
    units: int = integer(0, 0, MAX_UNITS, "What a surrender pays each opponent, in units.")
    pays_fouled: bool = boolean(True, "Whether a surrendered player also pays a fouled "
                                "opponent.")


@dataclass(frozen=True, slots=True)
class Money:
    unit_value: int = integer(100, 1, MAX_UNIT_VALUE, "Minor currency units per scoring unit; a "
                              "request's unitValue overrides it.", wide=True)
    # written only when it is not XXX: profiles that name no currency keep their digests
    currency: str = text(NO_CURRENCY, 3, "The currency of the money amounts: an active ISO 4217 "
                         "code (XXX: no currency involved); a request's currency overrides it.",
                         omit_default=True)


@dataclass(frozen=True, slots=True)
class Caps:
    losses: bool = boolean(False, "Whether a player can lose no more than his stack.")
    wins: bool = boolean(False, "Whether a player can win no more than his stack from each "
                         "opponent.")
    basis: CapBasis = choice(CapBasis, CapBasis.HAND_START, "The stack a cap is measured "
                             "against.")
    order: CapOrder = choice(CapOrder, CapOrder.BUTTON_FIRST, "The order pairs are capped in.")


@dataclass(frozen=True, slots=True)
class Rake:
    mode: RakeMode = choice(RakeMode, RakeMode.NONE, "How the house takes its rake.")
    per_player_fee: int = integer(0, 0, MAX_FEE, "The fee each player pays under PER_PLAYER, in "
                                  "minor units.", wide=True)
    commission_bps: int = integer(0, 0, 10_000, "The commission under COMMISSION, in basis "
                                  "points of a winner's net.")
    commission_cap: int = integer(0, 0, MAX_FEE, "The largest commission per player per hand, "
                                  "in minor units; 0: no cap.", wide=True)


@dataclass(frozen=True, slots=True)
class Ranking:
    wheel: Wheel = choice(Wheel, Wheel.LOWEST, "Where A-2-3-4-5 ranks among straights.")
    row_tie: RowTie = choice(RowTie, RowTie.PUSH, "How two equal rows are settled.")
    suit_order: tuple[Suit, ...] = repeated(Suit, len(Suit), "The four suits, best first.",
                                            DEFAULT_SUIT_ORDER)
    suit_order_tiebreak: bool = boolean(False, "Whether suitOrder breaks ties between otherwise "
                                        "equal hands.")


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
        HandThreshold, "The front row's threshold; none when left out.",
        HandThreshold(HandClass.THREE_OF_A_KIND))
    middle: HandThreshold | None = part(
        HandThreshold, "The middle row's threshold; none when left out.",
        HandThreshold(HandClass.FULL_HOUSE))
    back: HandThreshold | None = part(
        HandThreshold, "The back row's threshold; none when left out.",
        HandThreshold(HandClass.FOUR_OF_A_KIND))


def _progressive_json(entries: tuple[ProgressiveEntry, ...]) -> list[dict[str, Any]]:
    """Written weakest first (a profile holds them strongest first: the first one met wins)."""
    return [write_part(e) for e in sorted(entries, key=lambda e: (
        e.hand_class.order, e.rank.value_int if e.rank else 0))]


@dataclass(frozen=True, slots=True)
class Fantasyland:
    enabled: bool = boolean(False, "Whether Fantasyland is played.")
    entry: HandThreshold = part(HandThreshold, "The weakest front hand that enters.",
                                HandThreshold(HandClass.PAIR, Rank.QUEEN))
    entry_cards: int = integer(14, 13, 52, "The cards dealt on entry.")
    progressive: tuple[ProgressiveEntry, ...] = repeated(
        ProgressiveEntry, MAX_PROGRESSIVE_ENTRIES, "Stronger front hands that deal more cards, "
        "one entry per front threshold.", write=_progressive_json)
    stay: FantasylandStay = part(FantasylandStay, "What keeps a player in Fantasyland: any one "
                                 "row meeting its threshold.")
    stay_cards: int = integer(14, 13, 52, "The cards dealt to a player who stays.")


@dataclass(frozen=True)
class RuleProfile:
    """A complete house rule profile. Build with ``profile_from_dict`` or ``load_preset``."""

    name: str = text("", 64, "The profile's name: a preset's or a house profile's.",
                     required=True)
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


# --------------------------------------------------------------------------- reading
#
# A part of scalars and enums is read by ``read_part`` alone; the tables, thresholds and the
# checks across fields are read here, each bound taken from the part's declaration.


def _currency(errors: Collector, m: Reader) -> str:
    """``money.currency``: three letters, and an active ISO 4217 code (currencies.py)."""
    before = len(errors.violations)
    code = m.string("currency", NO_CURRENCY, max_length=maximum(Money, "currency"))
    if len(errors.violations) > before:  # not a string, or too long: named already
        return NO_CURRENCY
    problem = currency_problem(code)
    if problem is not None:
        errors.add(m.at("currency"), problem, ViolationCode.CURRENCY)
        return NO_CURRENCY
    return code


def _bounded(errors: Collector, r: Reader, s: Spec) -> list[tuple[str, Any]]:
    """A list field's items, or none (and one problem) when it holds more than it may."""
    items = r.items(s.json)
    if s.maximum is not None and len(items) > s.maximum:
        errors.add(r.at(s.json), f"holds {len(items)} entries; at most {s.maximum} can differ",
                   ViolationCode.PROFILE)
        return []
    return items


def _require(errors: Collector, e: Reader, cls: type) -> None:
    """'is required' for each field of a table entry that ``cls`` declares required."""
    for key in required(cls):
        if not e.has(key):
            errors.add(e.at(key), "is required", ViolationCode.PROFILE)


def _threshold(
    errors: Collector, parent: Reader, key: str, default: HandThreshold | None
) -> HandThreshold | None:
    """A ``{"handClass", "rank"?}`` threshold; ``default`` when the key is absent."""
    if not parent.has(key):
        parent.raw(key)
        return default
    r = parent.obj(key)
    if not r.ok:
        return default
    hand_class = r.enum("handClass", HandClass, HandClass.HIGH_CARD)
    _require(errors, r, HandThreshold)
    rank = read_card_rank(errors, r.at("rank"), r.raw("rank")) if r.has("rank") else None
    r.finish()
    return HandThreshold(hand_class, rank)


def _royalties(errors: Collector, r: Reader, deck: Deck) -> Royalties:
    mode = read_field(r, spec(Royalties, "mode"))
    read_units = field_reader(spec(RoyaltyEntry, "units"))
    keys = required(RoyaltyEntry)
    entries: list[RoyaltyEntry] = []
    seen: dict[tuple[Row, HandClass, Rank | None], str] = {}
    for path, item in _bounded(errors, r, spec(Royalties, "table")):
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        row = e.enum("row", Row, Row.BACK)
        hand_class = e.enum("handClass", HandClass, HandClass.HIGH_CARD)
        for key in keys:  # (_require, inline: up to 324 entries)
            if not e.has(key):
                errors.add(e.at(key), "is required", ViolationCode.PROFILE)
        rank = read_card_rank(errors, e.at("rank"), e.raw("rank")) if e.has("rank") else None
        units = read_units(e)
        e.finish()
        if not e.ok:
            continue
        if row is Row.FRONT and hand_class not in FRONT_CLASSES:
            errors.add(e.at("handClass"), f"a {row.value} row cannot make {hand_class.value}",
                       ViolationCode.PROFILE)
        if rank is not None and hand_class is HandClass.ROYAL_FLUSH:
            errors.add(e.at("rank"), "a royal flush has no rank to narrow", ViolationCode.PROFILE)
        if hand_class is HandClass.FIVE_OF_A_KIND and not (deck.jokers and deck.joker_duplicates):
            errors.add(e.at("handClass"), "five of a kind needs jokers that may duplicate a card "
                       "(deck.jokers, deck.jokerDuplicates): no row can make it",
                       ViolationCode.PROFILE)
        entry_key = (row, hand_class, rank)
        if entry_key in seen:
            errors.add(path, f"duplicates the royalty entry at {seen[entry_key]}",
                       ViolationCode.PROFILE)
        else:
            seen[entry_key] = path
        entries.append(RoyaltyEntry(row, hand_class, rank, units))
    r.finish()
    return Royalties(mode, tuple(entries))


def _natural_name(errors: Collector, e: Reader, has_definition: bool) -> Natural | HouseNatural:
    value = e.raw("natural")
    if isinstance(value, str) and value in Natural.__members__:
        return Natural(value)
    if not isinstance(value, str) or not NATURAL_NAME_PATTERN.fullmatch(value):
        errors.add(e.at("natural"), "must be a catalogue natural ("
                   + ", ".join(n.value for n in Natural) + ") or a house natural's name: capital "
                   f"letters, digits and _, at most 40, starting with a letter; got {value!r}",
                   ViolationCode.PROFILE)
    elif not has_definition:
        errors.add(e.at("natural"), f"{value!r} is not in the catalogue: a house natural needs a "
                   "definition", ViolationCode.PROFILE)
    return HouseNatural(value if isinstance(value, str) else "")


def _naturals(errors: Collector, r: Reader, deck: Deck) -> Naturals:
    require = read_field(r, spec(Naturals, "require_declaration"))
    vs_foul = read_field(r, spec(Naturals, "vs_foul"))
    quads_as_two_pairs = read_field(r, spec(Naturals, "quads_as_two_pairs"))
    equal_rank = read_field(r, spec(Naturals, "equal_rank"))
    read_rank = field_reader(spec(NaturalEntry, "rank"))
    read_units = field_reader(spec(NaturalEntry, "units"))
    entries: list[NaturalEntry] = []
    seen: dict[str, str] = {}
    for path, item in _bounded(errors, r, spec(Naturals, "table")):
        before = len(errors.violations)
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        _require(errors, e, NaturalEntry)
        definition = read_definition(errors, e.at("definition"), e.raw("definition")) if e.has(
            "definition") else e.raw("definition")
        natural = _natural_name(errors, e, e.has("definition")) if e.has("natural") else (
            Natural.DRAGON)
        rank = read_rank(e)
        units = read_units(e)
        e.finish()
        if not e.ok or len(errors.violations) > before:
            continue
        effective = definition or builtin_definition(natural)
        if effective is not None and effective.largest_group > 4:
            needed = effective.largest_group - 4
            if not deck.joker_duplicates or deck.jokers < needed:
                errors.add(e.at("definition" if definition else "natural"),
                           f"a rank group of {effective.largest_group} needs {needed} joker(s) "
                           "that may duplicate a card (deck.jokers, deck.jokerDuplicates): no "
                           "hand can make it", ViolationCode.PROFILE)
        if natural in seen and e.has("natural"):
            errors.add(path, f"duplicates the natural at {seen[natural]}", ViolationCode.PROFILE)
        seen.setdefault(natural, path)
        entries.append(NaturalEntry(natural, rank, units, definition or None))
    r.finish()
    return Naturals(require, vs_foul, tuple(entries), quads_as_two_pairs, equal_rank)


def _suit_order(errors: Collector, r: Reader) -> tuple[Suit, ...]:
    s = spec(Ranking, "suit_order")
    items = _bounded(errors, r, s)
    if not items:
        return DEFAULT_SUIT_ORDER
    suits = [parse_enum(errors, p, Suit, v, Suit.SPADE, ViolationCode.PROFILE) for p, v in items]
    if len(suits) != 4 or len(set(suits)) != 4:
        errors.add(r.at(s.json), "must list each of the four suits once", ViolationCode.PROFILE)
        return DEFAULT_SUIT_ORDER
    return tuple(suits)


def _fantasyland(errors: Collector, r: Reader) -> Fantasyland:
    default = Fantasyland()
    enabled = read_field(r, spec(Fantasyland, "enabled"))
    entry = _threshold(errors, r, "entry", default.entry) or default.entry
    entry_cards = read_field(r, spec(Fantasyland, "entry_cards"))
    read_cards = field_reader(spec(ProgressiveEntry, "cards"))
    progressive: list[ProgressiveEntry] = []
    for path, item in _bounded(errors, r, spec(Fantasyland, "progressive")):
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        hand_class = e.enum("handClass", HandClass, HandClass.PAIR)
        _require(errors, e, ProgressiveEntry)
        rank = read_card_rank(errors, e.at("rank"), e.raw("rank")) if e.has("rank") else None
        cards = read_cards(e)
        e.finish()
        if hand_class not in FRONT_CLASSES:
            errors.add(e.at("handClass"), f"a FRONT row cannot make {hand_class.value}",
                       ViolationCode.PROFILE)
        progressive.append(ProgressiveEntry(hand_class, rank, cards))
    if r.has("stay"):
        s = r.obj("stay")
        stay = FantasylandStay(*(_threshold(errors, s, key, None) for key in (
            f.json for f in specs(FantasylandStay))))
        s.finish()
    else:
        r.raw("stay")
        stay = default.stay
    if entry.hand_class not in FRONT_CLASSES:
        errors.add(r.at("entry.handClass"), f"a FRONT row cannot make {entry.hand_class.value}",
                   ViolationCode.PROFILE)
    stay_cards = read_field(r, spec(Fantasyland, "stay_cards"))
    r.finish()
    # The best qualifying progressive entry is the strongest threshold the front meets.
    ordered = tuple(
        sorted(
            progressive,
            key=lambda p: (p.hand_class.order, p.rank.value_int if p.rank else 0),
            reverse=True,
        )
    )
    return Fantasyland(enabled, entry, entry_cards, ordered, stay, stay_cards)


def _read_profile(errors: Collector, path: str, data: object) -> RuleProfile:
    r = Reader(errors, path, data, ViolationCode.PROFILE)
    before = len(errors.violations)
    name = read_field(r, spec(RuleProfile, "name"))
    if not name and r.ok and len(errors.violations) == before:  # (a bad name is named once)
        errors.add(r.at("name"), "is required", ViolationCode.PROFILE)
    version = read_field(r, spec(RuleProfile, "version"))
    description = read_field(r, spec(RuleProfile, "description"))
    scoring = read_part(r.obj("scoring"), Scoring)
    # The deck first: which royalties and naturals can occur depends on its jokers.
    deck = read_part(r.obj("deck"), Deck)
    royalties = _royalties(errors, r.obj("royalties"), deck)
    foul = read_part(r.obj("foul"), Foul)
    naturals = _naturals(errors, r.obj("naturals"), deck)
    surrender = read_part(r.obj("surrender"), Surrender)
    money = read_part(r.obj("money"), Money, {"currency": lambda m: _currency(errors, m)})
    caps = read_part(r.obj("caps"), Caps)
    rake = read_part(r.obj("rake"), Rake)
    ranking = read_part(r.obj("ranking"), Ranking, {"suit_order": lambda k: _suit_order(errors,
                                                                                        k)})
    fantasyland = _fantasyland(errors, r.obj("fantasyland"))
    r.finish()
    return RuleProfile(
        name=name, version=version, description=description, scoring=scoring,
        royalties=royalties, foul=foul, naturals=naturals, surrender=surrender, money=money,
        caps=caps, rake=rake, ranking=ranking, fantasyland=fantasyland, deck=deck,
    )


def profile_from_dict(data: object, path: str = "profile") -> RuleProfile:
    """A profile from its JSON form; raises ``InvalidInput`` naming every problem."""
    errors = Collector()
    profile = _read_profile(errors, path, data)
    errors.raise_if_any()
    return profile


# --------------------------------------------------------------------------- writing


def profile_to_dict(p: RuleProfile) -> dict[str, Any]:
    """The complete JSON form (``schema.write_part``); ``profile_from_dict(profile_to_dict(p))
    == p``."""
    return write_part(p)


def _extension_defaults() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in lines(RuleProfile):
        if line.spec.omit_default and "[]" not in line.path:  # (a table entry's are its own)
            if line.spec.part is None:
                out[line.path] = write_json(line.spec, line.spec.default)
            else:
                out.update((sub.path, write_json(sub.spec, sub.spec.default))
                           for sub in lines(line.spec.part, line.path + "."))
    return out


# The options of RULES.md §16 are written only when they differ from their defaults
# (``omit_default`` in their declarations), so that a profile which does not use them has the
# same JSON form -- and the same digest, hence the same settlement ids -- as before they existed.
EXTENSION_DEFAULTS: dict[str, Any] = _extension_defaults()
"""Where an extension option is left out of the JSON form, and the value that means."""


def _merge(base: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def apply_overrides(
    profile: RuleProfile, overrides: Mapping[str, Any], path: str = "profileOverrides"
) -> RuleProfile:
    """The profile with a partial profile laid on top (objects merge, lists and values replace).

    The result is validated as a whole; problems are reported under ``path``.
    """
    if not isinstance(overrides, Mapping):
        raise InvalidInput([Violation(path, "must be an object", ViolationCode.PROFILE)])
    return profile_from_dict(_merge(profile_to_dict(profile), overrides), path)


# --------------------------------------------------------------------------- presets

_PRESET_PACKAGE = "cpsettle_service.domain.presets"


@cache
def preset_names() -> tuple[str, ...]:
    """The names of the built-in presets, sorted."""
    files = resources.files(_PRESET_PACKAGE).iterdir()
    return tuple(sorted(f.name[: -len(".json")] for f in files if f.name.endswith(".json")))


@cache
def load_preset(name: str) -> RuleProfile:
    """A built-in preset by name; ``KeyError`` for an unknown name."""
    if name not in preset_names():
        raise KeyError(name)
    text = resources.files(_PRESET_PACKAGE).joinpath(f"{name}.json").read_text("utf-8")
    return profile_from_dict(json.loads(text), f"preset {name}")


@dataclass(frozen=True, slots=True)
class RegisteredProfile:
    profile: RuleProfile
    source: str  # "builtin" or the file it was loaded from


class ProfileRegistry:
    """The profiles a service offers by name: the built-in presets plus house profiles."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Mapping[str, RegisteredProfile]) -> None:
        self._entries = dict(entries)

    @classmethod
    def builtin(cls) -> ProfileRegistry:
        return cls({n: RegisteredProfile(load_preset(n), "builtin") for n in preset_names()})

    def with_directory(self, directory: str) -> ProfileRegistry:
        """This registry plus every ``*.json`` profile in ``directory``.

        Raises ``InvalidInput`` naming the file and every problem; a house profile may not
        reuse the name of another profile.
        """
        from pathlib import Path

        entries = dict(self._entries)
        problems: list[Violation] = []
        for path in sorted(Path(directory).glob("*.json")):
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as e:
                problems.append(Violation(str(path), f"cannot be read as JSON: {e}",
                                          ViolationCode.PROFILE))
                continue
            try:
                profile = profile_from_dict(data, str(path))
            except InvalidInput as e:
                problems.extend(e.violations)
                continue
            if profile.name in entries:
                problems.append(
                    Violation(f"{path}.name", f"profile {profile.name!r} is already defined "
                              f"({entries[profile.name].source})", ViolationCode.PROFILE)
                )
                continue
            entries[profile.name] = RegisteredProfile(profile, str(path))
        if problems:
            raise InvalidInput(problems)
        return ProfileRegistry(entries)

    def get(self, name: str) -> RuleProfile | None:
        entry = self._entries.get(name)
        return entry.profile if entry else None

    def entry(self, name: str) -> RegisteredProfile | None:
        return self._entries.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._entries))

    def entries(self) -> tuple[RegisteredProfile, ...]:
        return tuple(self._entries[n] for n in self.names())
