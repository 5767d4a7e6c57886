"""Checking a table before it is settled (RULES.md §15): one path for every player.

``validate`` names every problem of the request at once (``InvalidInput``) or returns each
player's working state with his cards in canonical text. A good hand costs one C-level
``map`` over its cards; only a hand with a problem is walked card by card to name each one.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards.cards import CANONICAL, CARD_BY_SPELLING, CARD_INDEX, JOKER, JOKER_SPELLINGS, is_joker
from ..errors import Collector, ViolationCode
from ..naturals.catalogue import Natural
from ..profile.currencies import currency_problem
from ..profile.model import MAX_UNIT_VALUE, RuleProfile
from .results import Status
from .table import PlayerInput, Table
from .working import PlayerState

MAX_PLAYERS = 4
MIN_PLAYERS = 2

ROW_KEYS = (("front", 3), ("middle", 5), ("back", 5))  # an arrangement's rows and their sizes

_CANON: dict[str, str] = {spelling: str(card) for spelling, card in CARD_BY_SPELLING.items()}
_CANON_OF = _CANON.__getitem__  # any spelling -> the canonical text; KeyError otherwise
# With jokers in the deck (RULES.md §16.3): the joker's spellings too, as index 52 / ``Xj``.
JOKER_INDEX = len(CANONICAL)
_CANON_J: dict[str, str] = {**_CANON, **{spelling: JOKER for spelling in JOKER_SPELLINGS}}
_CANON_J_OF = _CANON_J.__getitem__
_INDEX_J: dict[str, int] = {**CARD_INDEX, **{spelling: JOKER_INDEX for spelling in JOKER_SPELLINGS}}
_CANONICAL_J = (*CANONICAL, JOKER)


def check_cards(
    errors: Collector,
    seen: dict[int, str] | None,
    path: str,
    cards: Sequence[str],
    size: int | None,
    out: list[str],
    jokers: bool = False,
) -> None:
    """Report each card that is not a card (and, with ``seen``, each one used twice).

    ``out`` receives the canonical text of each good card. With ``jokers`` (the profile's deck
    holds some) ``Xj`` is a card, never a repeat; how many a table holds is counted elsewhere.
    """
    if size is not None and len(cards) != size:
        errors.add(path, f"must hold {size} cards, got {len(cards)}", ViolationCode.ROW_SIZE)
    index_of = _INDEX_J if jokers else CARD_INDEX
    for j, text in enumerate(cards):
        index = index_of.get(text)
        if index is None:
            index = index_of.get(text.strip()) if isinstance(text, str) else None
        where = f"{path}[{j}]"
        if index is None:
            if seen is None:
                if is_joker(text):
                    errors.add(
                        where,
                        f"{text!r} is a joker, and this profile's deck holds none (deck.jokers)",
                        ViolationCode.MALFORMED_CARD,
                    )
                    continue
                errors.add(
                    where,
                    f"{text!r} is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), "
                    "suits s h d c (or ♠ ♥ ♦ ♣)",
                    ViolationCode.MALFORMED_CARD,
                )
            continue
        if seen is not None and index != JOKER_INDEX:
            first = seen.get(index)
            if first is not None:
                errors.add(
                    where,
                    f"{CANONICAL[index]} is already used at {first}: one deck per table",
                    ViolationCode.DUPLICATE_CARD,
                )
            else:
                seen[index] = where
        out.append(_CANONICAL_J[index])


def canonical_cards(
    cards: Sequence[str], size: int, jokers: bool = False
) -> tuple[str, ...] | None:
    """The cards in canonical text when there are ``size`` known cards, else None."""
    if len(cards) != size:
        return None
    try:  # map() runs in C: no bytecode per card
        return tuple(map(_CANON_J_OF if jokers else _CANON_OF, cards))
    except (KeyError, TypeError):
        return None


def _card_inputs(table: Table) -> list[tuple[str, Sequence[str]]]:
    """Every card list of the table with its field path, in request order."""
    out: list[tuple[str, Sequence[str]]] = []
    for i, inp in enumerate(table.players):
        for key, _ in ROW_KEYS:
            cards = getattr(inp, key)
            if cards is not None:
                out.append((f"players[{i}].arrangement.{key}", cards))
        if inp.cards is not None:
            out.append((f"players[{i}].cards", inp.cards))
    out.append(("deadCards", table.dead_cards))
    return out


def _check_player(errors: Collector, i: int, inp: PlayerInput, profile: RuleProfile) -> PlayerState:
    """Check one player's hand (``i``: his index in the request, for field paths)."""
    p = PlayerState(inp)
    jokers = profile.deck.jokers > 0
    if inp.stack is not None and inp.stack < 0:
        errors.add(
            f"players[{i}].stack", f"must be 0 or more, got {inp.stack}", ViolationCode.STACK
        )
    declared = inp.declared_natural
    if declared and declared not in profile.naturals.by_natural:
        if declared not in Natural.__members__:
            errors.add(
                f"players[{i}].declaredNatural",
                f"{declared!r} is not a known natural",
                ViolationCode.NATURAL,
            )
        else:
            errors.add(
                f"players[{i}].declaredNatural",
                f"{declared} is not played under profile {profile.name!r}",
                ViolationCode.NATURAL,
            )
    f, m, b, loose = inp.front, inp.middle, inp.back, inp.cards
    arranged = f is not None or m is not None or b is not None
    if inp.surrender:
        p.status = Status.SURRENDERED
        if not profile.surrender.allowed:
            errors.add(
                f"players[{i}].surrender",
                f"profile {profile.name!r} does not allow surrender",
                ViolationCode.SURRENDER,
            )
        if declared:
            errors.add(
                f"players[{i}]",
                "a player cannot both surrender and declare a natural",
                ViolationCode.SURRENDER,
            )
    elif not arranged and loose is None:
        errors.add(
            f"players[{i}]",
            "needs an arrangement, 13 cards with a declared natural, or a surrender",
            ViolationCode.SURRENDER,
        )
    if arranged:
        if loose is not None:
            errors.add(
                f"players[{i}]",
                "send either an arrangement or 13 cards, not both",
                ViolationCode.OTHER,
            )
        cards = (
            canonical_cards(f + m + b, 13, jokers)
            if f is not None
            and m is not None
            and b is not None
            and len(f) == 3
            and len(m) == 5
            and len(b) == 5
            else None
        )
        if cards is None:
            named: list[str] = []
            for key, size in ROW_KEYS:
                row_cards = getattr(inp, key)
                path = f"players[{i}].arrangement.{key}"
                if row_cards is None:
                    errors.add(path, f"is required ({size} cards)", ViolationCode.OTHER)
                    continue
                check_cards(errors, None, path, row_cards, size, named, jokers)
            cards = tuple(named)
        p.cards13 = cards
    if loose is not None:
        cards = canonical_cards(loose, 13, jokers)
        if cards is None:
            named = []
            check_cards(errors, None, f"players[{i}].cards", loose, 13, named, jokers)
            cards = tuple(named)
        if not arranged:
            p.cards13 = cards
        if not inp.surrender and not declared and profile.naturals.require_declaration:
            errors.add(
                f"players[{i}].cards",
                "13 loose cards need a declared natural under this profile; "
                "otherwise send an arrangement",
                ViolationCode.NATURAL,
            )
    return p


def table_cards(players: Sequence[PlayerState], table: Table) -> list[str]:
    """Every card text at a validated table, canonical (players' cards, then dead cards)."""
    used = [c for p in players for c in p.cards13]
    return used + [_CANON_J_OF(c.strip()) for c in table.dead_cards]


def validate(table: Table, profile: RuleProfile) -> list[PlayerState]:
    """Every player checked, in request order; ``InvalidInput`` names every problem."""
    errors = Collector()
    n = len(table.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        errors.add(
            "players",
            f"a table settles {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n}",
            ViolationCode.PLAYER_COUNT,
        )
    if table.button_seat is not None and table.button_seat < 0:
        errors.add(
            "buttonSeat",
            f"must be a seat number (0 or more), got {table.button_seat}",
            ViolationCode.BUTTON_SEAT,
        )
    unit_value = table.unit_value
    if unit_value is not None and not 1 <= unit_value <= MAX_UNIT_VALUE:
        errors.add(
            "unitValue",
            f"must be 1 to {MAX_UNIT_VALUE:,} minor units, got {unit_value}",
            ViolationCode.OTHER,
        )
    if table.currency:
        problem = currency_problem(table.currency)
        if problem is not None:
            errors.add("currency", problem, ViolationCode.CURRENCY)
    seats: dict[int, int] = {}
    ids: dict[str, int] = {}
    players: list[PlayerState] = []
    used: list[str] = []
    for i, inp in enumerate(table.players):
        pid = inp.player_id
        if pid in ids or not pid or len(pid) > 64 or not pid.isprintable():
            if not pid:
                errors.add(f"players[{i}].playerId", "is required", ViolationCode.OTHER)
            elif pid in ids:
                errors.add(
                    f"players[{i}].playerId",
                    f"{pid!r} is also the id of players[{ids[pid]}]",
                    ViolationCode.DUPLICATE_SEAT_OR_ID,
                )
            else:
                errors.add(
                    f"players[{i}].playerId",
                    "must be 1-64 printable characters",
                    ViolationCode.OTHER,
                )
        else:
            ids[pid] = i
        seat = inp.seat
        if seat < 0:
            errors.add(f"players[{i}].seat", f"must be 0 or more, got {seat}", ViolationCode.OTHER)
        elif seat in seats:
            errors.add(
                f"players[{i}].seat",
                f"seat {seat} is also taken by players[{seats[seat]}]",
                ViolationCode.DUPLICATE_SEAT_OR_ID,
            )
        else:
            seats[seat] = i
        p = _check_player(errors, i, inp, profile)
        players.append(p)
        used += p.cards13
    jokers = profile.deck.jokers
    if table.dead_cards:
        dead = canonical_cards(table.dead_cards, len(table.dead_cards), jokers > 0)
        if dead is None:
            named: list[str] = []
            check_cards(errors, None, "deadCards", table.dead_cards, None, named, jokers > 0)
            dead = tuple(named)
        used += dead
    if jokers and JOKER in used:  # RULES.md §16.3: at most deck.jokers in all, never a repeat
        held = used.count(JOKER)
        if held > jokers:
            errors.add(
                "players",
                f"the table holds {held} jokers; the profile's deck has {jokers} (deck.jokers)",
                ViolationCode.DUPLICATE_CARD,
            )
        used = [c for c in used if c != JOKER]
    if len(set(used)) != len(used):  # one deck per table: name every repeat and its first use
        first: dict[int, str] = {}
        for where, cards in _card_inputs(table):
            check_cards(errors, first, where, cards, None, [], jokers > 0)
    errors.raise_if_any()
    return players
