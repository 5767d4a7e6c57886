"""A rule profile's JSON form, read and written (RULES.md §12, §17): camelCase keys, the proto3
JSON form of ``cpsettle.v1.RuleProfile``. Preset files, inline profiles, ``GetProfile`` and the
CLI all use it. Reading reports every problem at once (``InvalidInput``); writing gives the
complete form, the options of RULES.md §16 only where they differ from their defaults.

>>> p = profile_from_dict({"name": "house", "caps": {"losses": True, "wins": True}})
>>> apply_overrides(p, {"caps": {"wins": False}}).caps.wins
False
>>> profile_from_dict(profile_to_dict(p)) == p
True
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..cards.cards import Rank, Suit
from ..cards.hands import HandClass
from ..cards.rows import Row
from ..errors import Collector, InvalidInput, Violation, ViolationCode
from ..naturals.catalogue import Natural, builtin_definition
from ..naturals.vocabulary import read_definition
from ..reading.reader import Reader, parse_enum, read_card_rank
from ..reading.schema import (
    Spec,
    field_reader,
    lines,
    maximum,
    read_field,
    read_part,
    required,
    spec,
    specs,
    write_json,
    write_part,
)
from .currencies import NO_CURRENCY, currency_problem
from .model import (
    DEFAULT_SUIT_ORDER,
    FRONT_CLASSES,
    NATURAL_NAME_PATTERN,
    Caps,
    Deck,
    Fantasyland,
    FantasylandStay,
    Foul,
    HandThreshold,
    HouseNatural,
    Money,
    NaturalEntry,
    Naturals,
    ProgressiveEntry,
    Rake,
    Ranking,
    Royalties,
    RoyaltyEntry,
    RuleProfile,
    Scoring,
    Surrender,
)

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
        errors.add(
            r.at(s.json),
            f"holds {len(items)} entries; at most {s.maximum} can differ",
            ViolationCode.PROFILE,
        )
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
            errors.add(
                e.at("handClass"),
                f"a {row.value} row cannot make {hand_class.value}",
                ViolationCode.PROFILE,
            )
        if rank is not None and hand_class is HandClass.ROYAL_FLUSH:
            errors.add(e.at("rank"), "a royal flush has no rank to narrow", ViolationCode.PROFILE)
        if hand_class is HandClass.FIVE_OF_A_KIND and not (deck.jokers and deck.joker_duplicates):
            errors.add(
                e.at("handClass"),
                "five of a kind needs jokers that may duplicate a card "
                "(deck.jokers, deck.jokerDuplicates): no row can make it",
                ViolationCode.PROFILE,
            )
        entry_key = (row, hand_class, rank)
        if entry_key in seen:
            errors.add(
                path, f"duplicates the royalty entry at {seen[entry_key]}", ViolationCode.PROFILE
            )
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
        errors.add(
            e.at("natural"),
            "must be a catalogue natural ("
            + ", ".join(n.value for n in Natural)
            + ") or a house natural's name: capital "
            f"letters, digits and _, at most 40, starting with a letter; got {value!r}",
            ViolationCode.PROFILE,
        )
    elif not has_definition:
        errors.add(
            e.at("natural"),
            f"{value!r} is not in the catalogue: a house natural needs a definition",
            ViolationCode.PROFILE,
        )
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
        definition = (
            read_definition(errors, e.at("definition"), e.raw("definition"))
            if e.has("definition")
            else e.raw("definition")
        )
        natural = (
            _natural_name(errors, e, e.has("definition")) if e.has("natural") else (Natural.DRAGON)
        )
        rank = read_rank(e)
        units = read_units(e)
        e.finish()
        if not e.ok or len(errors.violations) > before:
            continue
        effective = definition or builtin_definition(natural)
        if effective is not None and effective.largest_group > 4:
            needed = effective.largest_group - 4
            if not deck.joker_duplicates or deck.jokers < needed:
                errors.add(
                    e.at("definition" if definition else "natural"),
                    f"a rank group of {effective.largest_group} needs {needed} joker(s) "
                    "that may duplicate a card (deck.jokers, deck.jokerDuplicates): no "
                    "hand can make it",
                    ViolationCode.PROFILE,
                )
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
            errors.add(
                e.at("handClass"),
                f"a FRONT row cannot make {hand_class.value}",
                ViolationCode.PROFILE,
            )
        progressive.append(ProgressiveEntry(hand_class, rank, cards))
    if r.has("stay"):
        s = r.obj("stay")
        stay = FantasylandStay(
            *(_threshold(errors, s, key, None) for key in (f.json for f in specs(FantasylandStay)))
        )
        s.finish()
    else:
        r.raw("stay")
        stay = default.stay
    if entry.hand_class not in FRONT_CLASSES:
        errors.add(
            r.at("entry.handClass"),
            f"a FRONT row cannot make {entry.hand_class.value}",
            ViolationCode.PROFILE,
        )
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
    ranking = read_part(r.obj("ranking"), Ranking, {"suit_order": lambda k: _suit_order(errors, k)})
    fantasyland = _fantasyland(errors, r.obj("fantasyland"))
    r.finish()
    return RuleProfile(
        name=name,
        version=version,
        description=description,
        scoring=scoring,
        royalties=royalties,
        foul=foul,
        naturals=naturals,
        surrender=surrender,
        money=money,
        caps=caps,
        rake=rake,
        ranking=ranking,
        fantasyland=fantasyland,
        deck=deck,
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
                out.update(
                    (sub.path, write_json(sub.spec, sub.spec.default))
                    for sub in lines(line.spec.part, line.path + ".")
                )
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
