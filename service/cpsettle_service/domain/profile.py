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
from .errors import Collector, InvalidInput, Violation, ViolationCode
from .hands import HandClass, HandRank, Wheel
from .natural_vocabulary import (
    Definition,
    Predicate,
    compile_definition,
    definition_to_dict,
    read_definition,
)
from .naturals import Natural, builtin_definition, builtin_predicate
from .reader import Reader, json_name, parse_enum, read_wire_enum
from .rows import ROWS, Row


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


@dataclass(frozen=True, slots=True)
class HomeRun:
    min_players: int = 4
    multiplier: int = 1


@dataclass(frozen=True, slots=True)
class Scoring:
    row_unit: int = 1
    majority_bonus: int = 0
    majority_bonus_on_scoop: bool = False
    scoop_bonus: int = 0
    scoop_multiplier: int = 1
    home_run: HomeRun = HomeRun()


@dataclass(frozen=True, slots=True)
class RoyaltyEntry:
    row: Row
    hand_class: HandClass
    rank: Rank | None
    units: int


@dataclass(frozen=True)
class Royalties:
    """The royalty table and how it is paid. ``units(row, hand)`` prices one row."""

    mode: RoyaltyMode = RoyaltyMode.NONE
    table: tuple[RoyaltyEntry, ...] = ()
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
    penalty: FoulPenalty = FoulPenalty.SCOOPED
    fixed_units: int = 0
    pays_opponent_royalties: bool = False


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

    natural: Natural | HouseNatural
    rank: int
    units: int
    definition: Definition | None = None

    @property
    def effective_definition(self) -> Definition:
        if self.definition is not None:
            return self.definition
        definition = builtin_definition(self.natural)
        assert definition is not None  # a name outside the catalogue is read with a definition
        return definition


@dataclass(frozen=True)
class Naturals:
    require_declaration: bool = True
    vs_foul: VsFoul = VsFoul.GREATER_OF_NATURAL_AND_FOUL
    table: tuple[NaturalEntry, ...] = ()
    quads_as_two_pairs: bool = True
    equal_rank: NaturalTie = NaturalTie.PUSH
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

    jokers: int = 0
    joker_duplicates: bool = False


@dataclass(frozen=True, slots=True)
class Surrender:
    allowed: bool = False
    units: int = 0
    pays_fouled: bool = True


@dataclass(frozen=True, slots=True)
class Money:
    unit_value: int = 100


@dataclass(frozen=True, slots=True)
class Caps:
    losses: bool = False
    wins: bool = False
    basis: CapBasis = CapBasis.HAND_START
    order: CapOrder = CapOrder.BUTTON_FIRST


@dataclass(frozen=True, slots=True)
class Rake:
    mode: RakeMode = RakeMode.NONE
    per_player_fee: int = 0
    commission_bps: int = 0
    commission_cap: int = 0


@dataclass(frozen=True, slots=True)
class Ranking:
    wheel: Wheel = Wheel.LOWEST
    row_tie: RowTie = RowTie.PUSH
    suit_order: tuple[Suit, ...] = DEFAULT_SUIT_ORDER
    suit_order_tiebreak: bool = False


@dataclass(frozen=True, slots=True)
class HandThreshold:
    """'This hand or better': a class, optionally narrowed to a main rank (pair of queens)."""

    hand_class: HandClass
    rank: Rank | None = None

    def met_by(self, hand: HandRank) -> bool:
        floor = (self.hand_class.order, (self.rank.value_int,) if self.rank else ())
        return (hand.category, hand.ranks) >= floor


@dataclass(frozen=True, slots=True)
class ProgressiveEntry:
    threshold: HandThreshold
    cards: int


@dataclass(frozen=True, slots=True)
class FantasylandStay:
    front: HandThreshold | None = HandThreshold(HandClass.THREE_OF_A_KIND)
    middle: HandThreshold | None = HandThreshold(HandClass.FULL_HOUSE)
    back: HandThreshold | None = HandThreshold(HandClass.FOUR_OF_A_KIND)


@dataclass(frozen=True, slots=True)
class Fantasyland:
    enabled: bool = False
    entry: HandThreshold = HandThreshold(HandClass.PAIR, Rank.QUEEN)
    entry_cards: int = 14
    progressive: tuple[ProgressiveEntry, ...] = ()
    stay: FantasylandStay = FantasylandStay()
    stay_cards: int = 14


@dataclass(frozen=True)
class RuleProfile:
    """A complete house rule profile. Build with ``profile_from_dict`` or ``load_preset``."""

    name: str
    version: str = "1"
    description: str = ""
    scoring: Scoring = Scoring()
    royalties: Royalties = Royalties()
    foul: Foul = Foul()
    naturals: Naturals = Naturals()
    surrender: Surrender = Surrender()
    money: Money = Money()
    caps: Caps = Caps()
    rake: Rake = Rake()
    ranking: Ranking = Ranking()
    fantasyland: Fantasyland = Fantasyland()
    deck: Deck = Deck()


# --------------------------------------------------------------------------- reading


def _bounded(errors: Collector, r: Reader, key: str, limit: int) -> list[tuple[str, Any]]:
    """A list field's items, or none (and one problem) when it holds more than ``limit``."""
    items = r.items(key)
    if len(items) > limit:
        errors.add(r.at(key), f"holds {len(items)} entries; at most {limit} can differ",
                   ViolationCode.PROFILE)
        return []
    return items


def _rank(errors: Collector, path: str, value: object) -> Rank | None:
    if isinstance(value, str):
        text = "T" if value == "10" else value.upper()
        try:
            return Rank(text)
        except ValueError:
            pass
    errors.add(path, f"must be a rank (2-9, T, J, Q, K, A); got {value!r}", ViolationCode.PROFILE)
    return None


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
    if not r.has("handClass"):
        errors.add(r.at("handClass"), "is required", ViolationCode.PROFILE)
    rank = _rank(errors, r.at("rank"), r.raw("rank")) if r.has("rank") else None
    r.finish()
    return HandThreshold(hand_class, rank)


def _scoring(r: Reader) -> Scoring:
    hr = r.obj("homeRun")
    home_run = HomeRun(
        min_players=hr.integer("minPlayers", 4, minimum=2, maximum=4),
        multiplier=hr.integer("multiplier", 1, minimum=1, maximum=100),
    )
    hr.finish()
    s = Scoring(
        row_unit=r.integer("rowUnit", 1, minimum=0, maximum=1_000_000),
        majority_bonus=r.integer("majorityBonus", 0, minimum=0, maximum=1_000_000),
        majority_bonus_on_scoop=r.boolean("majorityBonusOnScoop", False),
        scoop_bonus=r.integer("scoopBonus", 0, minimum=0, maximum=1_000_000),
        scoop_multiplier=r.integer("scoopMultiplier", 1, minimum=1, maximum=100),
        home_run=home_run,
    )
    r.finish()
    return s


def _royalties(errors: Collector, r: Reader, deck: Deck) -> Royalties:
    mode = r.enum("mode", RoyaltyMode, RoyaltyMode.NONE)
    entries: list[RoyaltyEntry] = []
    seen: dict[tuple[Row, HandClass, Rank | None], str] = {}
    for path, item in _bounded(errors, r, "table", MAX_ROYALTY_ENTRIES):
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        row = e.enum("row", Row, Row.BACK)
        hand_class = e.enum("handClass", HandClass, HandClass.HIGH_CARD)
        for key in ("row", "handClass", "units"):
            if not e.has(key):
                errors.add(e.at(key), "is required", ViolationCode.PROFILE)
        rank = _rank(errors, e.at("rank"), e.raw("rank")) if e.has("rank") else None
        units = e.integer("units", 0, minimum=0, maximum=1_000_000)
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
    require = r.boolean("requireDeclaration", True)
    vs_foul = r.enum("vsFoul", VsFoul, VsFoul.GREATER_OF_NATURAL_AND_FOUL)
    quads_as_two_pairs = r.boolean("quadsAsTwoPairs", True)
    equal_rank = read_wire_enum(r, "equalRank", NaturalTie, "NATURAL_TIE_", NaturalTie.PUSH)
    entries: list[NaturalEntry] = []
    seen: dict[str, str] = {}
    for path, item in _bounded(errors, r, "table", MAX_NATURAL_ENTRIES):
        before = len(errors.violations)
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        for key in ("natural", "rank", "units"):
            if not e.has(key):
                errors.add(e.at(key), "is required", ViolationCode.PROFILE)
        definition = read_definition(errors, e.at("definition"), e.raw("definition")) if e.has(
            "definition") else e.raw("definition")
        natural = _natural_name(errors, e, e.has("definition")) if e.has("natural") else (
            Natural.DRAGON)
        rank = e.integer("rank", 0, minimum=0, maximum=1000)
        units = e.integer("units", 0, minimum=0, maximum=1_000_000)
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


def _deck(r: Reader) -> Deck:
    deck = Deck(
        jokers=r.integer("jokers", 0, minimum=0, maximum=2),
        joker_duplicates=r.boolean("jokerDuplicates", False),
    )
    r.finish()
    return deck


def _ranking(errors: Collector, r: Reader) -> Ranking:
    wheel = r.enum("wheel", Wheel, Wheel.LOWEST)
    row_tie = r.enum("rowTie", RowTie, RowTie.PUSH)
    suit_order = DEFAULT_SUIT_ORDER
    items = _bounded(errors, r, "suitOrder", len(Suit))
    if items:
        suits = [parse_enum(errors, p, Suit, v, Suit.SPADE, ViolationCode.PROFILE)
                 for p, v in items]
        if len(suits) != 4 or len(set(suits)) != 4:
            errors.add(r.at("suitOrder"), "must list each of the four suits once",
                       ViolationCode.PROFILE)
        else:
            suit_order = tuple(suits)
    tiebreak = r.boolean("suitOrderTiebreak", False)
    r.finish()
    return Ranking(wheel, row_tie, suit_order, tiebreak)


def _fantasyland(errors: Collector, r: Reader) -> Fantasyland:
    default = Fantasyland()
    enabled = r.boolean("enabled", False)
    entry = _threshold(errors, r, "entry", default.entry) or default.entry
    entry_cards = r.integer("entryCards", 14, minimum=13, maximum=52)
    progressive: list[ProgressiveEntry] = []
    for path, item in _bounded(errors, r, "progressive", MAX_PROGRESSIVE_ENTRIES):
        e = Reader(errors, path, item, ViolationCode.PROFILE)
        hand_class = e.enum("handClass", HandClass, HandClass.PAIR)
        if not e.has("handClass"):
            errors.add(e.at("handClass"), "is required", ViolationCode.PROFILE)
        rank = _rank(errors, e.at("rank"), e.raw("rank")) if e.has("rank") else None
        cards = e.integer("cards", 14, minimum=13, maximum=52)
        e.finish()
        if hand_class not in FRONT_CLASSES:
            errors.add(e.at("handClass"), f"a FRONT row cannot make {hand_class.value}",
                       ViolationCode.PROFILE)
        progressive.append(ProgressiveEntry(HandThreshold(hand_class, rank), cards))
    if r.has("stay"):
        s = r.obj("stay")
        stay = FantasylandStay(
            front=_threshold(errors, s, "front", None),
            middle=_threshold(errors, s, "middle", None),
            back=_threshold(errors, s, "back", None),
        )
        s.finish()
    else:
        r.raw("stay")
        stay = default.stay
    if entry.hand_class not in FRONT_CLASSES:
        errors.add(r.at("entry.handClass"), f"a FRONT row cannot make {entry.hand_class.value}",
                   ViolationCode.PROFILE)
    stay_cards = r.integer("stayCards", 14, minimum=13, maximum=52)
    r.finish()
    # The best qualifying progressive entry is the strongest threshold the front meets.
    ordered = tuple(
        sorted(
            progressive,
            key=lambda p: (p.threshold.hand_class.order,
                           p.threshold.rank.value_int if p.threshold.rank else 0),
            reverse=True,
        )
    )
    return Fantasyland(enabled, entry, entry_cards, ordered, stay, stay_cards)


def _read_profile(errors: Collector, path: str, data: object) -> RuleProfile:
    r = Reader(errors, path, data, ViolationCode.PROFILE)
    name = r.string("name", "", max_length=64)
    if not name and r.ok:
        errors.add(r.at("name"), "is required", ViolationCode.PROFILE)
    version = r.string("version", "1", max_length=64)
    description = r.string("description", "", max_length=2000)
    scoring = _scoring(r.obj("scoring"))
    deck = _deck(r.obj("deck"))
    royalties = _royalties(errors, r.obj("royalties"), deck)
    f = r.obj("foul")
    foul = Foul(
        penalty=f.enum("penalty", FoulPenalty, FoulPenalty.SCOOPED),
        fixed_units=f.integer("fixedUnits", 0, minimum=0, maximum=1_000_000),
        pays_opponent_royalties=f.boolean("paysOpponentRoyalties", False),
    )
    f.finish()
    naturals = _naturals(errors, r.obj("naturals"), deck)
    s = r.obj("surrender")
    surrender = Surrender(
        allowed=s.boolean("allowed", False),
        units=s.integer("units", 0, minimum=0, maximum=1_000_000),
        pays_fouled=s.boolean("paysFouled", True),
    )
    s.finish()
    m = r.obj("money")
    money = Money(m.integer("unitValue", 100, minimum=1, maximum=MAX_UNIT_VALUE))
    m.finish()
    c = r.obj("caps")
    caps = Caps(
        losses=c.boolean("losses", False),
        wins=c.boolean("wins", False),
        basis=c.enum("basis", CapBasis, CapBasis.HAND_START),
        order=c.enum("order", CapOrder, CapOrder.BUTTON_FIRST),
    )
    c.finish()
    k = r.obj("rake")
    rake = Rake(
        mode=k.enum("mode", RakeMode, RakeMode.NONE),
        per_player_fee=k.integer("perPlayerFee", 0, minimum=0, maximum=10**12),
        commission_bps=k.integer("commissionBps", 0, minimum=0, maximum=10_000),
        commission_cap=k.integer("commissionCap", 0, minimum=0, maximum=10**12),
    )
    k.finish()
    ranking = _ranking(errors, r.obj("ranking"))
    fantasyland = _fantasyland(errors, r.obj("fantasyland"))
    r.finish()
    return RuleProfile(
        name, version, description, scoring, royalties, foul, naturals, surrender, money, caps,
        rake, ranking, fantasyland, deck,
    )


def profile_from_dict(data: object, path: str = "profile") -> RuleProfile:
    """A profile from its JSON form; raises ``InvalidInput`` naming every problem."""
    errors = Collector()
    profile = _read_profile(errors, path, data)
    errors.raise_if_any()
    return profile


# --------------------------------------------------------------------------- writing


def _threshold_dict(t: HandThreshold) -> dict[str, Any]:
    d: dict[str, Any] = {"handClass": json_name(t.hand_class)}
    if t.rank is not None:
        d["rank"] = t.rank.value
    return d


def profile_to_dict(p: RuleProfile) -> dict[str, Any]:
    """The complete JSON form; ``profile_from_dict(profile_to_dict(p)) == p``."""

    def royalty(e: RoyaltyEntry) -> dict[str, Any]:
        d: dict[str, Any] = {"row": json_name(e.row), "handClass": json_name(e.hand_class)}
        if e.rank is not None:
            d["rank"] = e.rank.value
        d["units"] = e.units
        return d

    fl = p.fantasyland
    stay: dict[str, Any] = {}
    for key in ("front", "middle", "back"):
        t = getattr(fl.stay, key)
        if t is not None:
            stay[key] = _threshold_dict(t)
    return {
        "name": p.name,
        "version": p.version,
        "description": p.description,
        "scoring": {
            "rowUnit": p.scoring.row_unit,
            "majorityBonus": p.scoring.majority_bonus,
            "majorityBonusOnScoop": p.scoring.majority_bonus_on_scoop,
            "scoopBonus": p.scoring.scoop_bonus,
            "scoopMultiplier": p.scoring.scoop_multiplier,
            "homeRun": {
                "minPlayers": p.scoring.home_run.min_players,
                "multiplier": p.scoring.home_run.multiplier,
            },
        },
        "royalties": {
            "mode": json_name(p.royalties.mode),
            "table": [royalty(e) for e in p.royalties.table],
        },
        "foul": {
            "penalty": json_name(p.foul.penalty),
            "fixedUnits": p.foul.fixed_units,
            "paysOpponentRoyalties": p.foul.pays_opponent_royalties,
        },
        "naturals": _naturals_dict(p.naturals),
        "surrender": {
            "allowed": p.surrender.allowed,
            "units": p.surrender.units,
            "paysFouled": p.surrender.pays_fouled,
        },
        "money": {"unitValue": p.money.unit_value},
        "caps": {
            "losses": p.caps.losses,
            "wins": p.caps.wins,
            "basis": json_name(p.caps.basis),
            "order": json_name(p.caps.order),
        },
        "rake": {
            "mode": json_name(p.rake.mode),
            "perPlayerFee": p.rake.per_player_fee,
            "commissionBps": p.rake.commission_bps,
            "commissionCap": p.rake.commission_cap,
        },
        "ranking": {
            "wheel": json_name(p.ranking.wheel),
            "rowTie": json_name(p.ranking.row_tie),
            "suitOrder": [json_name(s) for s in p.ranking.suit_order],
            "suitOrderTiebreak": p.ranking.suit_order_tiebreak,
        },
        "fantasyland": {
            "enabled": fl.enabled,
            "entry": _threshold_dict(fl.entry),
            "entryCards": fl.entry_cards,
            "progressive": [
                {**_threshold_dict(e.threshold), "cards": e.cards}
                for e in sorted(
                    fl.progressive,
                    key=lambda e: (e.threshold.hand_class.order,
                                   e.threshold.rank.value_int if e.threshold.rank else 0),
                )
            ],
            "stay": stay,
            "stayCards": fl.stay_cards,
        },
        **_deck_dict(p.deck),
    }


# The options of RULES.md §16 are written only when they differ from their defaults, so that
# a profile which does not use them has the same JSON form -- and the same digest, hence the
# same settlement ids -- as before they existed.
EXTENSION_DEFAULTS: dict[str, Any] = {
    "naturals.quadsAsTwoPairs": True,
    "naturals.equalRank": "NATURAL_TIE_PUSH",
    "deck.jokers": 0,
    "deck.jokerDuplicates": False,
}
"""Where an extension option is left out of the JSON form, and the value that means."""


def _naturals_dict(n: Naturals) -> dict[str, Any]:
    table = []
    for e in n.table:
        entry: dict[str, Any] = {"natural": e.natural.value, "rank": e.rank, "units": e.units}
        if e.definition is not None:
            entry["definition"] = definition_to_dict(e.definition)
        table.append(entry)
    out: dict[str, Any] = {
        "requireDeclaration": n.require_declaration,
        "vsFoul": json_name(n.vs_foul),
        "table": table,
    }
    if not n.quads_as_two_pairs:
        out["quadsAsTwoPairs"] = False
    if n.equal_rank is not NaturalTie.PUSH:
        out["equalRank"] = json_name(n.equal_rank)
    return out


def _deck_dict(d: Deck) -> dict[str, Any]:
    if d == Deck():
        return {}
    out: dict[str, Any] = {"jokers": d.jokers}
    if d.joker_duplicates:
        out["jokerDuplicates"] = True
    return {"deck": out}


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
