"""``settle(table, profile)``: the itemized settlement of one hand (RULES.md §4-11).

Every line carries a sentence a floor supervisor can read. Units are the scoring points; money
is integer minor units. Players' net money plus the table's rake is exactly zero, checked before
a settlement is returned.
"""

from __future__ import annotations

from enum import StrEnum
from itertools import combinations
from typing import NamedTuple, Sequence, cast

from .caps import cap_payment, settlement_order
from .cards import CANONICAL, CARD_BY_SPELLING, CARD_INDEX, Card, Suit
from .errors import Collector, InvalidInput, Violation
from .hands import HandClass, HandRank, evaluate_five, evaluate_three, highest_card
from .naturals import Natural, holds, naturals_held
from .profile import (
    MAX_MONEY,
    FoulPenalty,
    NaturalEntry,
    RakeMode,
    RowTie,
    RoyaltyMode,
    RuleProfile,
    VsFoul,
)
from .rows import ROWS, Row
from .table import AuditContext, PlayerInput, Table

MAX_PLAYERS = 4
MIN_PLAYERS = 2


class Status(StrEnum):
    """How a player's hand takes part in the settlement."""

    REGULAR = "REGULAR"
    FOULED = "FOULED"
    NATURAL = "NATURAL"
    SURRENDERED = "SURRENDERED"


class FoulReason(StrEnum):
    FRONT_ABOVE_MIDDLE = "FRONT_ABOVE_MIDDLE"
    MIDDLE_ABOVE_BACK = "MIDDLE_ABOVE_BACK"
    FALSE_DECLARATION = "FALSE_DECLARATION"


class PairKind(StrEnum):
    """What decided a pair: rows compared, a foul, a natural, a surrender, or nothing to settle."""

    ROWS = "ROWS"
    FOUL = "FOUL"
    NATURAL = "NATURAL"
    SURRENDER = "SURRENDER"
    NONE = "NONE"


class ItemKind(StrEnum):
    ROW = "ROW"
    MAJORITY_BONUS = "MAJORITY_BONUS"
    SCOOP_BONUS = "SCOOP_BONUS"
    ROYALTIES = "ROYALTIES"
    FOUL_PENALTY = "FOUL_PENALTY"
    NATURAL = "NATURAL"
    SURRENDER = "SURRENDER"
    SCOOP_MULTIPLIER = "SCOOP_MULTIPLIER"
    HOME_RUN_MULTIPLIER = "HOME_RUN_MULTIPLIER"
    NO_SCORE = "NO_SCORE"


class EvaluatedRow(NamedTuple):
    """One row of one player's arrangement."""

    row: Row
    cards: tuple[str, ...]
    hand: HandRank
    royalty: int


class RowResult(NamedTuple):
    """One row compared between the pair's two players. ``units`` is for the first player."""

    row: Row
    first: EvaluatedRow | None
    second: EvaluatedRow | None
    winner: str  # player id, or "" for a push
    units: int
    first_player: str
    second_player: str
    fouled: str = ""  # the id of a fouled player who loses the row without comparison
    tie_break: str = ""  # "As Ad": the highest cards that broke a tie by suit

    @property
    def text(self) -> str:
        """E.g. "Back: A's full house, kings full of threes, beats B's ace-high flush — A +1"."""
        return row_text(self.row, self.first_player, self.second_player, self.winner,
                        self.first, self.second, self.units, self.fouled, self.tie_break)


def row_text(row: Row, a: str, b: str, winner: str, first: EvaluatedRow | None,
             second: EvaluatedRow | None, units: int, fouled: str, tie_break: str) -> str:
    """The sentence of one row compared between ``a`` and ``b`` (see ``RowResult``)."""
    label = _ROW_LABEL[row]
    if not winner:
        assert first is not None and second is not None
        return f"{label}: {a}'s {first.hand.clause} ties {b}'s {second.hand.phrase} — push"
    if winner == a:
        wr, loser, lr = first, b, second
    else:
        wr, loser, lr = second, a, first
    value = units if units > 0 else -units
    if fouled:
        hand = f"{winner}'s {wr.hand.phrase}" if wr else f"{winner}'s hand"
        return f"{label}: {hand} wins against {loser}'s fouled hand — {winner} +{value}"
    assert wr is not None and lr is not None
    if tie_break:
        cw, cl = tie_break.split() if winner == a else tie_break.split()[::-1]
        return (f"{label}: {winner}'s {wr.hand.clause} beats {loser}'s {lr.hand.phrase} "
                f"(equal by rank; highest card {cw} against {cl}) — {winner} +{value}")
    return (f"{label}: {winner}'s {wr.hand.clause} beats {loser}'s {lr.hand.phrase} — "
            f"{winner} +{value}")


_ROW_LABEL = {row: row.label for row in ROWS}


class LineItem(NamedTuple):
    """A bonus, penalty, royalty or multiplier line of a pair; ``units`` for the first player.

    The sentence is ``fmt`` filled with ``args`` (``str.format``), built when read.
    """

    kind: ItemKind
    units: int
    fmt: str
    args: tuple[object, ...] = ()

    @property
    def text(self) -> str:
        return self.fmt.format(*self.args) if self.args else self.fmt


class PairResult(NamedTuple):
    first: str
    second: str
    kind: PairKind
    items: tuple[LineItem, ...]
    units: int  # for the first player; the second gets exactly the negative
    owed: int  # money the loser owed before caps (>= 0)
    paid: int  # money that moved after caps (>= 0)
    payer: str
    payee: str
    cap: str  # "", "PAYER_STACK", "PAYEE_STACK" or "PAYER_STACK+PAYEE_STACK"
    # The rows, compactly (``rows`` builds the itemized view on access): who won each row
    # (+1 first, -1 second, 0 push), the units each row moved for the first player, both
    # players' evaluated rows, the fouled player's id, and suit tie-break cards per row.
    row_signs: tuple[int, ...] = ()
    row_units: tuple[int, ...] = ()
    first_rows: tuple[EvaluatedRow, ...] = ()
    second_rows: tuple[EvaluatedRow, ...] = ()
    fouled: str = ""
    tie_breaks: tuple[str, ...] = ()

    @property
    def rows(self) -> tuple[RowResult, ...]:
        """Each row compared, with both hands, the winner, the units and a sentence."""
        out = []
        fr, sr = self.first_rows, self.second_rows
        a, b = self.first, self.second
        for i, sign in enumerate(self.row_signs):
            winner = a if sign > 0 else b if sign < 0 else ""
            out.append(RowResult(
                ROWS[i], fr[i] if fr else None, sr[i] if sr else None, winner,
                self.row_units[i], a, b, self.fouled,
                self.tie_breaks[i] if self.tie_breaks else "",
            ))
        return tuple(out)

    @property
    def text(self) -> str:
        """The money line: who owes whom, and what a cap cut."""
        if not self.units:
            return f"{self.first} and {self.second} settle 0"
        payer, payee = self.payer, self.payee
        out = f"{payer} owes {payee} {abs(self.units)} units = {self.owed}"
        if not self.cap:
            return out + f"; {payer} pays {self.paid}"
        limit = {
            "PAYER_STACK": f"{payer}'s stack",
            "PAYEE_STACK": f"{payee}'s stack",
        }.get(self.cap, f"{payer}'s and {payee}'s stacks")
        return out + f"; capped by {limit}: {payer} pays {self.paid}"

    @property
    def money_for_first(self) -> int:
        return self.paid if self.payee == self.first else -self.paid


class Fantasyland(NamedTuple):
    """Fantasyland next hand: whether the player qualifies, and the cards he is dealt."""

    qualifies: bool
    cards: int
    fmt: str
    args: tuple[object, ...] = ()

    @property
    def text(self) -> str:
        return self.fmt.format(*self.args)


class PlayerResult(NamedTuple):
    player_id: str
    seat: int
    status: Status
    rows: tuple[EvaluatedRow, ...]
    royalty_total: int
    fouled: bool
    foul_reasons: tuple[FoulReason, ...]
    natural: Natural | None
    declared_natural: str
    surrendered: bool
    stack: int | None
    net_units: int
    money_before_rake: int
    rake: int
    net_money: int
    fantasyland: Fantasyland | None

    @property
    def text(self) -> str:
        pid = self.player_id
        text = f"{pid}: {_signed(self.net_units)} units, {_signed(self.net_money)} after caps"
        if self.rake:
            text += f" and {self.rake} rake"
        if self.fouled:
            text += "; fouled (" + ", ".join(_REASON_TEXT[r] for r in self.foul_reasons) + ")"
        elif self.natural is not None:
            text += f"; natural: {_natural_label(self.natural)}"
        elif self.surrendered:
            text += "; surrendered"
        return text


class Settlement(NamedTuple):
    context: AuditContext
    profile: RuleProfile
    unit_value: int
    button_seat: int
    order: tuple[str, ...]
    players: tuple[PlayerResult, ...]  # in settlement order
    pairs: tuple[PairResult, ...]  # in settlement order
    rake: int

    @property
    def text(self) -> tuple[str, ...]:
        lines = [p.text for p in self.players]
        if self.rake:
            lines.append(f"Rake: {self.rake} to the house")
        return tuple(lines)

    def player(self, player_id: str) -> PlayerResult:
        for p in self.players:
            if p.player_id == player_id:
                return p
        raise KeyError(player_id)



_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__ (hot path)

# Enum members as module constants: a class-attribute lookup on an Enum costs ~10x a global.
_STATUS_REGULAR = Status.REGULAR
_STATUS_FOULED = Status.FOULED
_STATUS_NATURAL = Status.NATURAL
_STATUS_SURRENDERED = Status.SURRENDERED
_PAIRKIND_ROWS = PairKind.ROWS
_PAIRKIND_FOUL = PairKind.FOUL
_PAIRKIND_NATURAL = PairKind.NATURAL
_PAIRKIND_SURRENDER = PairKind.SURRENDER
_PAIRKIND_NONE = PairKind.NONE
_ITEMKIND_MAJORITY_BONUS = ItemKind.MAJORITY_BONUS
_ITEMKIND_SCOOP_BONUS = ItemKind.SCOOP_BONUS
_ITEMKIND_ROYALTIES = ItemKind.ROYALTIES
_ITEMKIND_FOUL_PENALTY = ItemKind.FOUL_PENALTY
_ITEMKIND_NATURAL = ItemKind.NATURAL
_ITEMKIND_SURRENDER = ItemKind.SURRENDER
_ITEMKIND_SCOOP_MULTIPLIER = ItemKind.SCOOP_MULTIPLIER
_ITEMKIND_HOME_RUN_MULTIPLIER = ItemKind.HOME_RUN_MULTIPLIER
_ITEMKIND_NO_SCORE = ItemKind.NO_SCORE
_ROYALTYMODE_NONE = RoyaltyMode.NONE
_ROYALTYMODE_ALWAYS = RoyaltyMode.ALWAYS
_ROYALTYMODE_ON_WIN_ADDED = RoyaltyMode.ON_WIN_ADDED
_ROYALTYMODE_ON_WIN_REPLACES = RoyaltyMode.ON_WIN_REPLACES
_ROWTIE_SUIT_OF_HIGHEST_CARD = RowTie.SUIT_OF_HIGHEST_CARD
_FOULPENALTY_FIXED = FoulPenalty.FIXED
_RAKEMODE_PER_PLAYER = RakeMode.PER_PLAYER
_RAKEMODE_COMMISSION = RakeMode.COMMISSION
_VSFOUL_GREATER_OF_NATURAL_AND_FOUL = VsFoul.GREATER_OF_NATURAL_AND_FOUL
_FOULREASON_FRONT_ABOVE_MIDDLE = FoulReason.FRONT_ABOVE_MIDDLE
_FOULREASON_MIDDLE_ABOVE_BACK = FoulReason.MIDDLE_ABOVE_BACK
_FOULREASON_FALSE_DECLARATION = FoulReason.FALSE_DECLARATION
_ROW_FRONT = Row.FRONT
_ROW_MIDDLE = Row.MIDDLE
_ROW_BACK = Row.BACK


# --------------------------------------------------------------------------- validation


class _Player:
    """Working state of one player while settling.

    Slots, every one set in ``__init__``: CPython 3.11 specializes reads and writes of slots,
    whereas an attribute left to a class-level default is looked up the slow way on each read.
    """

    __slots__ = ("input", "pid", "stack", "status", "rows", "royalties", "royalty_total",
                 "foul_reasons", "natural", "natural_entry", "cards13", "received", "paid",
                 "strengths", "values", "net_units", "rake", "evaluated")

    def __init__(self, inp: PlayerInput) -> None:
        self.input = inp
        self.pid = inp.player_id
        self.stack = inp.stack  # the money the caps use (less a per-player fee)
        self.status: Status = _STATUS_REGULAR
        self.rows: tuple[EvaluatedRow, ...] = ()
        self.royalties: tuple[int, ...] = _NO_ROYALTIES
        self.royalty_total = 0
        self.foul_reasons: tuple[FoulReason, ...] = ()
        self.natural: Natural | None = None
        self.natural_entry: NaturalEntry | None = None
        # canonical card strings (front, middle, back); replaced, never mutated
        self.cards13: Sequence[str] = ()
        self.received = 0  # money received and paid in the pairs so far (a caps.Ledger)
        self.paid = 0
        self.strengths: tuple[int, ...] = ()
        self.values: tuple[int, ...] = _NO_ROYALTIES
        self.net_units = 0
        self.rake = 0
        self.evaluated = False  # rows already evaluated while validating


_NO_ROYALTIES = (0, 0, 0)
_ROW_KEYS = (("front", _ROW_FRONT), ("middle", _ROW_MIDDLE), ("back", _ROW_BACK))


def _check_cards(
    errors: Collector,
    seen: dict[int, str] | None,
    path: str,
    cards: Sequence[str],
    size: int | None,
    out: list[str],
) -> None:
    """Report each card that is not a card (and, with ``seen``, each one used twice).

    ``out`` receives the canonical text of each good card.
    """
    if size is not None and len(cards) != size:
        errors.add(path, f"must hold {size} cards, got {len(cards)}")
    for j, text in enumerate(cards):
        idx = CARD_INDEX.get(text)
        if idx is None:
            idx = CARD_INDEX.get(text.strip()) if isinstance(text, str) else None
        where = f"{path}[{j}]"
        if idx is None:
            if seen is None:
                errors.add(
                    where,
                    f"{text!r} is not a card: write rank then suit, ranks 2-9 T J Q K A (or 10), "
                    "suits s h d c (or ♠ ♥ ♦ ♣)",
                )
            continue
        if seen is not None:
            first = seen.get(idx)
            if first is not None:
                errors.add(
                    where, f"{CANONICAL[idx]} is already used at {first}: one deck per table"
                )
            else:
                seen[idx] = where
        out.append(CANONICAL[idx])


_CANON: dict[str, str] = {spelling: str(card) for spelling, card in CARD_BY_SPELLING.items()}
_CI = _CANON.get  # any spelling -> the canonical text, or None
_CANON_OF = _CANON.__getitem__  # any spelling -> the canonical text; KeyError otherwise


def _card_inputs(table: Table) -> list[tuple[str, Sequence[str]]]:
    """Every card list of the table with its field path, in request order."""
    out: list[tuple[str, Sequence[str]]] = []
    for i, inp in enumerate(table.players):
        for key, _ in _ROW_KEYS:
            cards = getattr(inp, key)
            if cards is not None:
                out.append((f"players[{i}].arrangement.{key}", cards))
        if inp.cards is not None:
            out.append((f"players[{i}].cards", inp.cards))
    out.append(("deadCards", table.dead_cards))
    return out


def _validate_player(
    errors: Collector,
    i: int,
    inp: PlayerInput,
    profile: RuleProfile,
) -> _Player:
    """Check one player's hand (``i``: his index in the request, for field paths)."""
    p = _Player(inp)
    if inp.stack is not None and inp.stack < 0:
        errors.add(f"players[{i}].stack", f"must be 0 or more, got {inp.stack}")
    declared = inp.declared_natural
    if declared:
        if declared not in Natural.__members__:
            errors.add(f"players[{i}].declaredNatural", f"{declared!r} is not a known natural")
        elif Natural(declared) not in profile.naturals.by_natural:
            errors.add(
                f"players[{i}].declaredNatural",
                f"{declared} is not played under profile {profile.name!r}",
            )
    f, m, b, loose = inp.front, inp.middle, inp.back, inp.cards
    arranged = f is not None or m is not None or b is not None
    if inp.surrender:
        p.status = _STATUS_SURRENDERED
        if not profile.surrender.allowed:
            errors.add(
                f"players[{i}].surrender", f"profile {profile.name!r} does not allow surrender"
            )
        if declared:
            errors.add(f"players[{i}]", "a player cannot both surrender and declare a natural")
    elif not arranged and loose is None:
        errors.add(
            f"players[{i}]",
            "needs an arrangement, 13 cards with a declared natural, or a surrender",
        )
    if arranged:
        if loose is not None:
            errors.add(f"players[{i}]", "send either an arrangement or 13 cards, not both")
        idxs = (
            [_CI(c) for c in f + m + b]
            if f is not None and m is not None and b is not None
            and len(f) == 3 and len(m) == 5 and len(b) == 5
            else [None]
        )
        if None in idxs:
            idxs = []
            for key, row in _ROW_KEYS:
                cards = getattr(inp, key)
                rpath = f"players[{i}].arrangement.{key}"
                if cards is None:
                    errors.add(rpath, f"is required ({row.size} cards)")
                    continue
                _check_cards(errors, None, rpath, cards, row.size, idxs)
        p.cards13 = idxs  # type: ignore[assignment]  # None only on the error path
    if loose is not None:
        idxs = [_CI(c) for c in loose] if len(loose) == 13 else [None]
        if None in idxs:
            idxs = []
            _check_cards(errors, None, f"players[{i}].cards", loose, 13, idxs)
        if not arranged:
            p.cards13 = idxs  # type: ignore[assignment]
        if not inp.surrender and not declared and profile.naturals.require_declaration:
            errors.add(
                f"players[{i}].cards",
                "13 loose cards need a declared natural under this profile; "
                "otherwise send an arrangement",
            )
    return p


def _arranged_player(inp: PlayerInput, profile: RuleProfile, plan: _Plan) -> _Player | None:
    """The common case in one step: an arranged hand of 13 known cards, checked and evaluated.

    None for anything else (wrong sizes, unknown cards): the caller then takes the detailed
    path, which names every problem.
    """
    try:  # map() runs in C: no bytecode per card; a missing row is a TypeError
        front = tuple(map(_CANON_OF, inp.front))  # type: ignore[arg-type]
        middle = tuple(map(_CANON_OF, inp.middle))  # type: ignore[arg-type]
        back = tuple(map(_CANON_OF, inp.back))  # type: ignore[arg-type]
    except (KeyError, TypeError):
        return None
    p = _Player(inp)
    p.cards13 = front + middle + back
    try:
        _evaluate_rows(p, profile, plan, front, middle, back)
    except ValueError:  # a row of the wrong size, or a card twice in one row
        return None
    p.evaluated = True
    return p


def _validate(table: Table, profile: RuleProfile, plan: _Plan) -> list[_Player]:
    """Every player checked; arranged hands are evaluated on the way (see _arranged_player)."""
    errors = Collector()
    detect = plan.detect_naturals
    n = len(table.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        errors.add("players", f"a table settles {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n}")
    if table.button_seat is not None and table.button_seat < 0:
        errors.add("buttonSeat", f"must be a seat number (0 or more), got {table.button_seat}")
    seats: dict[int, int] = {}
    ids: dict[str, int] = {}
    players: list[_Player] = []
    used: list[str] = []
    for i, inp in enumerate(table.players):
        pid = inp.player_id
        if pid in ids or not pid or len(pid) > 64 or not pid.isprintable():
            if not pid:
                errors.add(f"players[{i}].playerId", "is required")
            elif pid in ids:
                errors.add(
                    f"players[{i}].playerId", f"{pid!r} is also the id of players[{ids[pid]}]"
                )
            else:
                errors.add(f"players[{i}].playerId", "must be 1-64 printable characters")
        else:
            ids[pid] = i
        seat = inp.seat
        if seat < 0:
            errors.add(f"players[{i}].seat", f"must be 0 or more, got {seat}")
        elif seat in seats:
            errors.add(f"players[{i}].seat", f"seat {seat} is also taken by players[{seats[seat]}]")
        else:
            seats[seat] = i
        p = None
        if (
            inp.front is not None
            and not (inp.declared_natural or inp.surrender or detect)
            and inp.cards is None
            and (inp.stack is None or inp.stack >= 0)
        ):
            p = _arranged_player(inp, profile, plan)
        if p is None:
            p = _validate_player(errors, i, inp, profile)
        players.append(p)
        used += p.cards13
    if table.dead_cards:
        found = [_CI(c) for c in table.dead_cards]
        dead: list[str] = []
        if None in found:
            _check_cards(errors, None, "deadCards", table.dead_cards, None, dead)
        else:
            dead = cast("list[str]", found)  # every one a card: no None in it
        used += dead
    if len(set(used)) != len(used):  # one deck per table: name every repeat and its first use
        first: dict[int, str] = {}
        for where, cards in _card_inputs(table):
            _check_cards(errors, first, where, cards, None, [])
    errors.raise_if_any()
    return players


# --------------------------------------------------------------------------- evaluation


def _evaluate(p: _Player, profile: RuleProfile, errors: Collector, index: int) -> None:
    inp = p.input
    if p.status is _STATUS_SURRENDERED:
        return
    plan = _plan(profile)
    declared = inp.declared_natural
    detect = plan.detect_naturals
    if not declared and not detect:
        if inp.front is not None:
            _evaluate_rows(p, profile, plan)
        else:
            errors.add(
                f"players[{index}].cards",
                "13 loose cards without a declared natural: send an arrangement",
            )
        return
    naturals = profile.naturals
    cards = [CARD_BY_SPELLING[c] for c in p.cards13]
    if declared:
        natural = Natural(declared)
        if holds(natural, cards):
            if naturals.require_declaration:
                p.natural = natural
            else:
                p.natural = _best_natural(cards, profile)
            p.status = _STATUS_NATURAL
        else:
            p.status = _STATUS_FOULED
            p.foul_reasons += (_FOULREASON_FALSE_DECLARATION,)
    elif detect:
        best = _best_natural(cards, profile)
        if best is not None:
            p.natural = best
            p.status = _STATUS_NATURAL
        elif not inp.has_arrangement:
            errors.add(
                f"players[{index}].cards",
                "these 13 cards make no natural this profile plays; send an arrangement",
            )
            return
    if p.natural is not None:
        p.natural_entry = naturals.by_natural[p.natural]
    if p.status is _STATUS_NATURAL or inp.front is None:
        return
    _evaluate_rows(p, profile, plan)


def _evaluate_rows(p: _Player, profile: RuleProfile, plan: _Plan,
                   front: tuple[str, ...] | None = None, middle: tuple[str, ...] = (),
                   back: tuple[str, ...] = ()) -> None:
    """Rows, foul check, royalties and row values of an arranged hand (its rows, canonical,
    or read from ``p.cards13``)."""
    wheel = plan.wheel
    if front is None:
        c = p.cards13
        front, middle, back = tuple(c[:3]), tuple(c[3:8]), tuple(c[8:])
    hf = evaluate_three(front)
    hm = evaluate_five(middle, wheel)
    hb = evaluate_five(back, wheel)
    if p.status is _STATUS_REGULAR:
        if hf.order_key > hm.order_key:  # hf > hm on the one scale (RULES.md §4)
            p.foul_reasons += (_FOULREASON_FRONT_ABOVE_MIDDLE,)
        if hm.strength > hb.strength or (
            plan.suit_tiebreak
            and hm.strength == hb.strength
            and hm.hand_class in _SUITED_CLASSES
            and _suit_beats(middle, hm, back, hb, profile.ranking.suit_order)
        ):
            p.foul_reasons += (_FOULREASON_MIDDLE_ABOVE_BACK,)
        if p.foul_reasons:
            p.status = _STATUS_FOULED
    if p.status is _STATUS_REGULAR:
        if plan.royalties_none:
            p.values = plan.plain_values
        else:
            # a row's royalty depends only on the row and the hand: cached per profile
            cf, cm, cb = plan.row_cache
            try:
                r0, r1, r2 = cf[hf.strength], cm[hm.strength], cb[hb.strength]
            except KeyError:
                r0, r1, r2 = _royalties(profile, plan, hf, hm, hb)
            if r0 or r1 or r2:
                key = p.royalties = (r0, r1, r2)
                p.royalty_total = r0 + r1 + r2
                values = plan.values_cache.get(key)
                if values is None:
                    values = plan.values_cache[key] = _row_values(profile, key)
                p.values = values
            else:  # royalties (0, 0, 0) and their total 0 are _Player's defaults
                p.values = plan.plain_values
    p.strengths = (hf.strength, hm.strength, hb.strength)
    r = p.royalties
    p.rows = (
        _new(EvaluatedRow, (_ROW_FRONT, front, hf, r[0])),
        _new(EvaluatedRow, (_ROW_MIDDLE, middle, hm, r[1])),
        _new(EvaluatedRow, (_ROW_BACK, back, hb, r[2])),
    )


def _royalties(profile: RuleProfile, plan: _Plan, hf: HandRank, hm: HandRank,
               hb: HandRank) -> tuple[int, int, int]:
    """Each row's royalty, read from and added to the plan's per-row caches."""
    out = []
    for cache, row, hand in zip(plan.row_cache, ROWS, (hf, hm, hb)):
        units = cache.get(hand.strength)
        if units is None:
            units = cache[hand.strength] = profile.royalties.units(row, hand)
        out.append(units)
    return out[0], out[1], out[2]


_SUITED_CLASSES = frozenset(
    {HandClass.STRAIGHT, HandClass.FLUSH, HandClass.STRAIGHT_FLUSH, HandClass.ROYAL_FLUSH}
)


def _suit_rank(card: Card, suit_order: Sequence[Suit | str]) -> int:
    """0 for the best suit."""
    return list(suit_order).index(card.suit)


def _suit_beats(
    a_cards: Sequence[str], a: HandRank, b_cards: Sequence[str], b: HandRank,
    order: Sequence[Suit | str],
) -> bool:
    """Whether hand a's highest card has a better suit than hand b's (equal hands by rank)."""
    return _suit_rank(highest_card(a_cards, a, order), order) < _suit_rank(
        highest_card(b_cards, b, order), order
    )


def _best_natural(cards: Sequence[Card], profile: RuleProfile) -> Natural | None:
    by_natural = profile.naturals.by_natural
    held = [n for n in naturals_held(cards) if n in by_natural]
    if not held:
        return None
    catalogue = list(Natural)
    return max(
        held, key=lambda n: (by_natural[n].rank, by_natural[n].units, -catalogue.index(n))
    )


# --------------------------------------------------------------------------- texts


def _signed(units: int) -> str:
    return f"+{units}" if units > 0 else str(units)


def _natural_label(n: Natural) -> str:
    return n.label[0].lower() + n.label[1:]


_REASON_TEXT = {
    _FOULREASON_FRONT_ABOVE_MIDDLE: "front above middle",
    _FOULREASON_MIDDLE_ABOVE_BACK: "middle above back",
    _FOULREASON_FALSE_DECLARATION: "declared a natural the cards do not make",
}


def _foul_text(p: _Player) -> str:
    return ", ".join(_REASON_TEXT[r] for r in p.foul_reasons)


# --------------------------------------------------------------------------- pairs


class _Pair:
    """Working state of one pair (slots, as for _Player)."""

    __slots__ = ("a", "b", "items", "kind", "signs", "row_units", "tie_breaks", "units",
                 "scoop_by")

    def __init__(self, a: _Player, b: _Player) -> None:
        self.a = a
        self.b = b
        self.items: list[LineItem] = []
        self.kind: PairKind = _PAIRKIND_NONE
        self.signs: tuple[int, ...] = ()
        self.row_units: tuple[int, ...] = ()
        self.tie_breaks: tuple[str, ...] = ()
        self.units = 0
        self.scoop_by: _Player | None = None


def _row_values(profile: RuleProfile, royalties: tuple[int, ...]) -> tuple[int, ...]:
    """What each row pays its winner (section 6: value_X(row) under the royalty mode)."""
    mode = profile.royalties.mode
    unit = profile.scoring.row_unit
    r0, r1, r2 = royalties
    if mode is _ROYALTYMODE_ON_WIN_ADDED:
        return (unit + r0, unit + r1, unit + r2)
    if mode is _ROYALTYMODE_ON_WIN_REPLACES:
        return (max(unit, r0), max(unit, r1), max(unit, r2))
    return (unit, unit, unit)


_MAJORITY = "Majority bonus: {0} won {1} rows to {2} — {0} +{3}"
_SCOOP = "Scoop bonus: {0} won all three rows — {0} +{1}"
_ROYALTIES_FIRST = "Royalties: {0} {1}, {2} {3} — {0} +{4}"
_ROYALTIES_SECOND = "Royalties: {0} {1}, {2} {3} — {2} +{4}"
_ROYALTIES_EVEN = "Royalties: {0} {1}, {2} {3} — even"


class _Plan:
    """The settings the hot path reads, flattened once per profile."""

    __slots__ = ("majority_bonus", "majority_on_scoop", "scoop_bonus", "always", "row_tie_suit",
                 "suit_order", "wheel", "royalties_none", "detect_naturals", "suit_tiebreak",
                 "unit_value", "capped", "fantasyland", "plain_values", "row_cache",
                 "multipliers", "entry_cache", "values_cache")

    def __init__(self, profile: RuleProfile) -> None:
        scoring = profile.scoring
        self.majority_bonus = scoring.majority_bonus
        self.majority_on_scoop = scoring.majority_bonus_on_scoop
        self.scoop_bonus = scoring.scoop_bonus
        self.always = profile.royalties.mode is RoyaltyMode.ALWAYS
        self.royalties_none = profile.royalties.mode is RoyaltyMode.NONE
        self.row_tie_suit = profile.ranking.row_tie is RowTie.SUIT_OF_HIGHEST_CARD
        self.suit_order = profile.ranking.suit_order
        self.suit_tiebreak = profile.ranking.suit_order_tiebreak
        self.wheel = profile.ranking.wheel
        self.detect_naturals = bool(
            not profile.naturals.require_declaration and profile.naturals.table
        )
        self.unit_value = profile.money.unit_value
        self.capped = profile.caps.losses or profile.caps.wins
        self.fantasyland = profile.fantasyland.enabled
        self.multipliers = scoring.scoop_multiplier != 1 or scoring.home_run.multiplier != 1
        # front strength -> (Fantasyland cards, 0: none; the front's phrase)
        self.entry_cache: dict[int, tuple[int, str]] = {}
        # the rows' royalties -> what each row pays its winner (few distinct triples)
        self.values_cache: dict[tuple[int, ...], tuple[int, ...]] = {}
        unit = scoring.row_unit
        self.plain_values = (unit, unit, unit)
        # strength -> royalty, per row (front, middle, back); at most 7,462 entries each
        self.row_cache: tuple[dict[int, int], ...] = ({}, {}, {})


_PLANS: dict[int, tuple[RuleProfile, _Plan]] = {}


def _plan(profile: RuleProfile) -> _Plan:
    """The profile's plan, cached by identity (profiles are immutable)."""
    hit = _PLANS.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    if len(_PLANS) > 1024:
        _PLANS.clear()
    plan = _Plan(profile)
    _PLANS[id(profile)] = (profile, plan)
    return plan


def _break_ties_by_suit(pair: _Pair, profile: RuleProfile) -> tuple[int, ...]:
    """Row strengths with equal rows decided by the suit of each hand's highest card.

    Records the deciding cards on the pair (``row_tie = SUIT_OF_HIGHEST_CARD``).
    """
    a, b = pair.a, pair.b
    suit_order = _plan(profile).suit_order
    xs, ys = list(a.strengths), list(b.strengths)
    ties = ["", "", ""]
    for i in (0, 1, 2):
        if xs[i] == ys[i]:
            ra, rb = a.rows[i], b.rows[i]
            ca = highest_card(ra.cards, ra.hand, suit_order)
            cb = highest_card(rb.cards, rb.hand, suit_order)
            a_better = _suit_rank(ca, suit_order) < _suit_rank(cb, suit_order)
            xs[i], ys[i] = (1, 0) if a_better else (0, 1)
            ties[i] = f"{CANONICAL[ca.index]} {CANONICAL[cb.index]}"
    pair.tie_breaks = tuple(ties)
    return (*xs, *ys)


_LOSES_EVERY_ROW = (-1, -1, -1)  # as row strengths: below every hand
_WINS_EVERY_ROW = (0, 0, 0)


def _compare_regular(pair: _Pair, a: _Player, b: _Player, profile: RuleProfile, plan: _Plan,
                     xs: tuple[int, ...] | None = None, ys: tuple[int, ...] = ()) -> None:
    """Each row compared, then majority and scoop bonuses and royalties (ALWAYS).

    ``xs``/``ys`` stand in for the players' row strengths when one hand is fouled (it loses
    every row). Written as branches: CPython 3.11 specializes a comparison that feeds a jump,
    not one whose bool is used as a number.
    """
    if xs is None:
        x0, x1, x2 = a.strengths
        y0, y1, y2 = b.strengths
        if (x0 == y0 or x1 == y1 or x2 == y2) and plan.row_tie_suit:
            x0, x1, x2, y0, y1, y2 = _break_ties_by_suit(pair, profile)
    else:
        x0, x1, x2 = xs
        y0, y1, y2 = ys
    va, vb = a.values, b.values
    won = lost = 0
    if x0 > y0:
        s0, u0, won = 1, va[0], 1
    elif x0 < y0:
        s0, u0, lost = -1, -vb[0], 1
    else:
        s0 = u0 = 0
    if x1 > y1:
        s1, u1, won = 1, va[1], won + 1
    elif x1 < y1:
        s1, u1, lost = -1, -vb[1], lost + 1
    else:
        s1 = u1 = 0
    if x2 > y2:
        s2, u2, won = 1, va[2], won + 1
    elif x2 < y2:
        s2, u2, lost = -1, -vb[2], lost + 1
    else:
        s2 = u2 = 0
    pair.signs = (s0, s1, s2)
    pair.row_units = (u0, u1, u2)
    pair.kind = _PAIRKIND_ROWS
    score = u0 + u1 + u2
    items = pair.items
    bonus = plan.majority_bonus
    if bonus:
        if won > lost and (won < 3 or plan.majority_on_scoop):
            score += bonus
            items.append(_new(LineItem, (
                _ITEMKIND_MAJORITY_BONUS, bonus, _MAJORITY, (a.pid, won, lost, bonus))))
        elif lost > won and (lost < 3 or plan.majority_on_scoop):
            score -= bonus
            items.append(_new(LineItem, (
                _ITEMKIND_MAJORITY_BONUS, -bonus, _MAJORITY, (b.pid, lost, won, bonus))))
    if won == 3:
        pair.scoop_by = a
        bonus = plan.scoop_bonus
        if bonus:
            items.append(_new(LineItem, (_ITEMKIND_SCOOP_BONUS, bonus, _SCOOP, (a.pid, bonus))))
            score += bonus
    elif lost == 3:
        pair.scoop_by = b
        bonus = plan.scoop_bonus
        if bonus:
            items.append(_new(LineItem, (_ITEMKIND_SCOOP_BONUS, -bonus, _SCOOP, (b.pid, bonus))))
            score -= bonus
    if plan.always:
        ra, rb = a.royalty_total, b.royalty_total
        if ra or rb:
            diff = ra - rb
            score += diff
            items.append(_new(LineItem, (
                _ITEMKIND_ROYALTIES, diff,
                _ROYALTIES_FIRST if diff > 0 else _ROYALTIES_SECOND if diff else _ROYALTIES_EVEN,
                (a.pid, ra, b.pid, rb, diff if diff > 0 else -diff))))
    pair.units = score


def _compare_rows(pair: _Pair, profile: RuleProfile, plan: _Plan | None = None) -> None:
    """Rows, majority and scoop bonuses, royalties; ``a`` or ``b`` may be fouled (SCOOPED)."""
    a, b = pair.a, pair.b
    if plan is None:
        plan = _plan(profile)
    if a.status is _STATUS_FOULED:  # a fouled hand loses every row, to the other's row values
        _compare_regular(pair, a, b, profile, plan, _LOSES_EVERY_ROW, _WINS_EVERY_ROW)
        pair.kind = _PAIRKIND_FOUL
    elif b.status is _STATUS_FOULED:
        _compare_regular(pair, a, b, profile, plan, _WINS_EVERY_ROW, _LOSES_EVERY_ROW)
        pair.kind = _PAIRKIND_FOUL
    else:
        _compare_regular(pair, a, b, profile, plan)


def _fixed_foul(pair: _Pair, fouled: _Player, other: _Player, profile: RuleProfile) -> int:
    """Units the fouled player pays under FIXED, with line items (from ``other``'s side)."""
    foul = profile.foul
    sign = 1 if other is pair.a else -1
    units = foul.fixed_units
    pair.items.append(
        LineItem(
            _ITEMKIND_FOUL_PENALTY,
            sign * foul.fixed_units,
            f"Foul: {fouled.pid}'s hand is fouled ({_foul_text(fouled)}); he pays {other.pid} the "
            f"fixed penalty — {other.pid} +{foul.fixed_units}",
        )
    )
    if (
        foul.pays_opponent_royalties
        and profile.royalties.mode is not _ROYALTYMODE_NONE
        and other.royalty_total
    ):
        units += other.royalty_total
        pair.items.append(
            LineItem(
                _ITEMKIND_ROYALTIES,
                sign * other.royalty_total,
                f"Royalties: {fouled.pid} also pays {other.pid}'s royalties of "
                f"{other.royalty_total} — {other.pid} +{other.royalty_total}",
            )
        )
    return units


def _scooped_penalty(profile: RuleProfile) -> int:
    """What a scooped regular hand pays, without royalties (RULES.md §14.6)."""
    s = profile.scoring
    units = 3 * s.row_unit + s.scoop_bonus
    if s.majority_bonus_on_scoop:
        units += s.majority_bonus
    return units * s.scoop_multiplier


def _settle_pair(pair: _Pair, profile: RuleProfile) -> None:
    a, b = pair.a, pair.b
    sa, sb = a.status, b.status
    if sa is _STATUS_REGULAR and sb is _STATUS_REGULAR:  # the common case first
        _compare_rows(pair, profile)
        return
    items = pair.items
    # Surrender first: a surrendered hand is never compared.
    if sa is _STATUS_SURRENDERED or sb is _STATUS_SURRENDERED:
        pair.kind = _PAIRKIND_SURRENDER
        if sa is sb:
            items.append(
                LineItem(_ITEMKIND_NO_SCORE, 0, f"Both {a.pid} and {b.pid} surrendered — 0")
            )
            return
        s, o = (a, b) if sa is _STATUS_SURRENDERED else (b, a)
        if o.status is _STATUS_FOULED and not profile.surrender.pays_fouled:
            items.append(
                LineItem(
                    _ITEMKIND_NO_SCORE,
                    0,
                    f"Surrender: {s.pid} surrendered, but {o.pid}'s fouled hand collects "
                    "nothing — 0",
                )
            )
            return
        units = profile.surrender.units
        pair.units = units if o is a else -units
        items.append(
            LineItem(
                _ITEMKIND_SURRENDER,
                pair.units,
                f"Surrender: {s.pid} surrendered and pays {o.pid} {units} — {o.pid} +{units}",
            )
        )
        return
    if sa is _STATUS_NATURAL or sb is _STATUS_NATURAL:
        pair.kind = _PAIRKIND_NATURAL
        _settle_natural(pair, profile)
        return
    if sa is _STATUS_FOULED and sb is _STATUS_FOULED:
        pair.kind = _PAIRKIND_FOUL
        items.append(
            LineItem(_ITEMKIND_NO_SCORE, 0, f"Both {a.pid} and {b.pid} fouled — they settle 0")
        )
        return
    if (
        (sa is _STATUS_FOULED or sb is _STATUS_FOULED)
        and profile.foul.penalty is _FOULPENALTY_FIXED
    ):
        pair.kind = _PAIRKIND_FOUL
        fouled, other = (a, b) if sa is _STATUS_FOULED else (b, a)
        units = _fixed_foul(pair, fouled, other, profile)
        pair.units = units if other is a else -units
        pair.scoop_by = other  # a fouled player counts as scooped (DECISIONS 3)
        return
    _compare_rows(pair, profile)
    if sa is _STATUS_FOULED or sb is _STATUS_FOULED:
        fouled = a if sa is _STATUS_FOULED else b
        items.insert(
            0,
            LineItem(
                _ITEMKIND_FOUL_PENALTY,
                0,
                f"Foul: {fouled.pid}'s hand is fouled ({_foul_text(fouled)}), so it loses every "
                "row",
            ),
        )


def _settle_natural(pair: _Pair, profile: RuleProfile) -> None:
    a, b = pair.a, pair.b
    items = pair.items
    if a.status is _STATUS_NATURAL and b.status is _STATUS_NATURAL:
        ea, eb = a.natural_entry, b.natural_entry
        assert ea is not None and eb is not None
        if ea.rank == eb.rank:
            items.append(
                LineItem(
                    _ITEMKIND_NO_SCORE,
                    0,
                    f"Natural: {a.pid}'s {_natural_label(ea.natural)} and {b.pid}'s "
                    f"{_natural_label(eb.natural)} rank equal — 0",
                )
            )
            return
        w, loser, we = (a, b, ea) if ea.rank > eb.rank else (b, a, eb)
        pair.units = we.units if w is a else -we.units
        le = loser.natural_entry
        assert le is not None
        items.append(
            LineItem(
                _ITEMKIND_NATURAL,
                pair.units,
                f"Natural: {w.pid}'s {_natural_label(we.natural)} outranks {loser.pid}'s "
                f"{_natural_label(le.natural)} — {w.pid} +{we.units}",
            )
        )
        return
    n, o = (a, b) if a.status is _STATUS_NATURAL else (b, a)
    e = n.natural_entry
    assert e is not None
    units = e.units
    if o.status is _STATUS_FOULED:
        if profile.foul.penalty is _FOULPENALTY_FIXED:
            penalty = profile.foul.fixed_units
        else:
            penalty = _scooped_penalty(profile)
        if profile.naturals.vs_foul is _VSFOUL_GREATER_OF_NATURAL_AND_FOUL and penalty > units:
            units = penalty
            why = f"the foul penalty of {penalty} is more than the natural's {e.units}"
        else:
            why = f"the natural's {e.units}"
        text = (
            f"Natural: {n.pid}'s {_natural_label(e.natural)} against {o.pid}'s fouled hand "
            f"({_foul_text(o)}); {o.pid} pays {why} — {n.pid} +{units}"
        )
    else:
        text = (
            f"Natural: {n.pid}'s {_natural_label(e.natural)} wins automatically against "
            f"{o.pid} — {n.pid} +{units}"
        )
    pair.units = units if n is a else -units
    items.append(LineItem(_ITEMKIND_NATURAL, pair.units, text))


def _apply_multipliers(pairs: list[_Pair], players: list[_Player], profile: RuleProfile) -> None:
    scoring = profile.scoring
    if scoring.scoop_multiplier != 1:
        for pair in pairs:
            if pair.scoop_by is not None and pair.units:
                before = pair.units
                pair.units *= scoring.scoop_multiplier
                pair.items.append(_new(LineItem, (
                    _ITEMKIND_SCOOP_MULTIPLIER,
                    pair.units - before,
                    "Scoop ×{0}: {1} scooped — +{2} becomes +{3} for {1}",
                    (scoring.scoop_multiplier, pair.scoop_by.pid, abs(before), abs(pair.units)),
                )))
    hr = scoring.home_run
    if hr.multiplier == 1 or len(players) < hr.min_players:
        return
    # A home run: a regular hand that scooped every one of its pairs. A player is in
    # len(players) - 1 pairs, and only his own pairs can name him, so counting is enough; at
    # most one player can have scooped everyone.
    scoops: dict[_Player, int] = {}
    for pair in pairs:
        by = pair.scoop_by
        if by is not None:
            scoops[by] = scoops.get(by, 0) + 1
    everyone = len(players) - 1
    for h, count in scoops.items():
        if count == everyone and h.status is _STATUS_REGULAR:
            for pair in pairs:
                if pair.a is not h and pair.b is not h:
                    continue
                before = pair.units
                pair.units *= hr.multiplier
                pair.items.append(_new(LineItem, (
                    _ITEMKIND_HOME_RUN_MULTIPLIER,
                    pair.units - before,
                    "Home run ×{0}: {1} scooped every opponent — +{2} becomes +{3} for {1}",
                    (hr.multiplier, h.pid, abs(before), abs(pair.units)),
                )))


# --------------------------------------------------------------------------- settle


_FL_NOT_QUALIFIED = "{0} does not qualify for Fantasyland ({1} in front)"
_FL_QUALIFIED = "{0} qualifies for Fantasyland with {1} in front — {2} cards"


def _fantasyland(p: _Player, profile: RuleProfile, plan: _Plan | None = None
                 ) -> Fantasyland | None:
    fl = profile.fantasyland
    if not fl.enabled:
        return None
    if p.status is not _STATUS_REGULAR:
        return _new(Fantasyland, (False, 0, "{0} does not qualify for Fantasyland ({1} hand)",
                                  (p.pid, p.status.value.lower())))
    if p.input.in_fantasyland:
        stay = fl.stay
        for i, t in enumerate((stay.front, stay.middle, stay.back)):
            hand = p.rows[i].hand
            if t is not None and t.met_by(hand):
                return _new(Fantasyland, (
                    True, fl.stay_cards,
                    "{0} stays in Fantasyland with {1} in the {2} — {3} cards next hand",
                    (p.pid, hand.phrase, ROWS[i].value.lower(), fl.stay_cards)))
        return _new(Fantasyland, (False, 0, "{0} leaves Fantasyland: no stay condition met",
                                  (p.pid,)))
    # The entry decision depends on the front only: cached per front strength, with its phrase.
    cache = (plan or _plan(profile)).entry_cache
    hit = cache.get(p.strengths[0])
    if hit is None:
        front = p.rows[0].hand
        cards = 0
        if fl.entry.met_by(front):
            cards = fl.entry_cards
            for entry in fl.progressive:  # strongest threshold first
                if entry.threshold.met_by(front):
                    cards = entry.cards
                    break
        hit = cache[front.strength] = (cards, front.phrase)
    cards, phrase = hit
    if not cards:
        return _new(Fantasyland, (False, 0, _FL_NOT_QUALIFIED, (p.pid, phrase)))
    return _new(Fantasyland, (True, cards, _FL_QUALIFIED, (p.pid, phrase, cards)))


def _fouled_id(a: _Player, b: _Player) -> str:
    return a.pid if a.status is _STATUS_FOULED else b.pid if b.status is _STATUS_FOULED else ""


# (seats, button, cap order) -> the settlement order's indexes: few seatings recur at a table
_ORDERS: dict[tuple[tuple[int, ...], int, object], list[int]] = {}


def settle(table: Table, profile: RuleProfile) -> Settlement:
    """Settle one hand. Raises ``InvalidInput`` (every violation) and never settles partly."""
    plan = _plan(profile)
    players = _validate(table, profile, plan)
    if not all([p.evaluated for p in players]):
        errors = Collector()
        for i, p in enumerate(players):
            if not p.evaluated:
                _evaluate(p, profile, errors, i)
        errors.raise_if_any()

    seats = tuple([p.input.seat for p in players])
    button = table.button_seat if table.button_seat is not None else min(seats)
    key = (seats, button, profile.caps.order)
    indexes = _ORDERS.get(key)
    if indexes is None:
        if len(_ORDERS) >= 4096:
            _ORDERS.clear()
        indexes = _ORDERS[key] = settlement_order(seats, button, profile.caps.order)
    order = [players[i] for i in indexes]

    pairs: list[_Pair] = []
    for a, b in combinations(order, 2):  # every pair, in settlement order
        pair = _Pair(a, b)
        if a.status is _STATUS_REGULAR and b.status is _STATUS_REGULAR:
            _compare_regular(pair, a, b, profile, plan)
        else:
            _settle_pair(pair, profile)
        pairs.append(pair)
    if plan.multipliers:
        _apply_multipliers(pairs, order, profile)

    # Money: per-player fee first, then the pairs in button order under the caps.
    unit_value = plan.unit_value
    rake_mode = profile.rake.mode
    if rake_mode is _RAKEMODE_PER_PLAYER:
        fee = profile.rake.per_player_fee
        for p in order:
            st = p.stack
            p.rake = fee if st is None else min(fee, st)
            if st is not None:
                p.stack = st - p.rake
    caps = profile.caps
    capped = plan.capped
    results: list[PairResult] = []
    for pair in pairs:
        a, b = pair.a, pair.b
        units = pair.units
        a.net_units += units
        b.net_units -= units
        kind = pair.kind
        if units:
            if units > 0:
                payer, payee, owed = b, a, units * unit_value
            else:
                payer, payee, owed = a, b, -units * unit_value
            payer_id, payee_id = payer.pid, payee.pid
            if owed > MAX_MONEY:
                raise InvalidInput([Violation(
                    "unitValue",
                    f"{payer_id} would owe {payee_id} {abs(units):,} units x {unit_value:,} = "
                    f"{owed:,} minor units, beyond the 64-bit money range; lower the stake or "
                    "the profile's multipliers",
                )])
            if not capped:  # paid in full: a player's money is then his net units x stake
                paid, cut = owed, ""
            else:
                if payer.stack is not None or payee.stack is not None:
                    paid, cut = cap_payment(owed, payer, payee, caps)
                else:
                    paid, cut = owed, ""
                payer.paid += paid
                payee.received += paid
        else:
            owed = paid = 0
            payer_id = payee_id = cut = ""
        signed = pair.signs
        results.append(
            _new(PairResult, (
                a.pid, b.pid, kind, tuple(pair.items), units, owed, paid, payer_id, payee_id, cut,
                signed, pair.row_units, a.rows if signed else (), b.rows if signed else (),
                _fouled_id(a, b) if kind is _PAIRKIND_FOUL else "", pair.tie_breaks))
        )

    if rake_mode is _RAKEMODE_COMMISSION:
        bps, cap = profile.rake.commission_bps, profile.rake.commission_cap
        for p in order:
            m = p.received - p.paid if capped else p.net_units * unit_value
            if m > 0:
                c = m * bps // 10_000
                p.rake = min(c, cap) if cap > 0 else c
    total_rake = 0
    total_net = 0
    player_results: list[PlayerResult] = []
    fantasyland = plan.fantasyland
    for p in order:
        money = p.received - p.paid if capped else p.net_units * unit_value
        if not -MAX_MONEY <= money <= MAX_MONEY:
            raise InvalidInput([Violation(
                "unitValue",
                f"{p.pid}'s net of {money:,} minor units is beyond the 64-bit money range; "
                "lower the stake or the profile's multipliers",
            )])
        net = money - p.rake
        total_rake += p.rake
        total_net += net
        status = p.status
        inp = p.input
        player_results.append(
            _new(PlayerResult, (
                p.pid, inp.seat, status, p.rows, p.royalty_total, status is _STATUS_FOULED,
                p.foul_reasons, p.natural, inp.declared_natural,
                status is _STATUS_SURRENDERED, inp.stack, p.net_units, money, p.rake, net,
                _fantasyland(p, profile, plan) if fantasyland else None,
            ))
        )
    if total_net + total_rake != 0:  # pragma: no cover
        raise AssertionError("settlement does not balance: nets plus rake must sum to zero")
    return _new(Settlement, (
        table.context, profile, unit_value, button, tuple([p.pid for p in order]),
        tuple(player_results), tuple(results), total_rake,
    ))


class HandEvaluation(NamedTuple):
    """One arrangement (or 13 cards) seen on its own, before the reveal."""

    rows: tuple[EvaluatedRow, ...]
    royalty_total: int
    fouled: bool
    foul_reasons: tuple[FoulReason, ...]
    naturals: tuple[Natural, ...]  # every catalogue natural the cards make
    playable_naturals: tuple[Natural, ...]  # those the profile plays, best first
    fantasyland: Fantasyland | None


def evaluate_hand(inp: PlayerInput, profile: RuleProfile) -> HandEvaluation:
    """Rows, royalties, foul, naturals and Fantasyland of one hand (no opponents).

    ``inp`` carries an arrangement or 13 loose cards; ``InvalidInput`` names every problem.
    """
    errors = Collector()
    seen: dict[int, str] = {}
    p = _Player(PlayerInput(inp.player_id or "player", 0, inp.front, inp.middle, inp.back,
                            in_fantasyland=inp.in_fantasyland))
    idxs: list[str] = []
    forms = sum((inp.has_arrangement, inp.cards is not None))
    if forms != 1:
        errors.add("arrangement", "send either an arrangement or 13 cards")
    if inp.has_arrangement:
        for key, row in _ROW_KEYS:
            cards = getattr(inp, key)
            if cards is None:
                errors.add(f"arrangement.{key}", f"is required ({row.size} cards)")
            else:
                _check_cards(errors, None, f"arrangement.{key}", cards, row.size, idxs)
                _check_cards(errors, seen, f"arrangement.{key}", cards, None, [])
    elif inp.cards is not None:
        _check_cards(errors, None, "cards", inp.cards, 13, idxs)
        _check_cards(errors, seen, "cards", inp.cards, None, [])
    errors.raise_if_any()
    p.cards13 = idxs
    cards = [CARD_BY_SPELLING[c] for c in p.cards13]
    held = naturals_held(cards)
    by_natural = profile.naturals.by_natural
    catalogue = list(Natural)
    playable = sorted(
        (n for n in held if n in by_natural),
        key=lambda n: (-by_natural[n].rank, -by_natural[n].units, catalogue.index(n)),
    )
    if inp.has_arrangement:
        # Rows are judged as arranged: a natural is only settled when declared (or detected).
        required = profile.naturals.require_declaration
        p_profile = profile if required else _without_naturals(profile)
        _evaluate(p, p_profile, errors, 0)
    fl = _fantasyland(p, profile) if inp.has_arrangement else None
    return HandEvaluation(
        rows=p.rows,
        royalty_total=p.royalty_total,
        fouled=p.status is _STATUS_FOULED,
        foul_reasons=tuple(p.foul_reasons),
        naturals=tuple(n for n in catalogue if n in held),
        playable_naturals=tuple(playable),
        fantasyland=fl,
    )


def _without_naturals(profile: RuleProfile) -> RuleProfile:
    from dataclasses import replace

    from .profile import Naturals

    return replace(profile, naturals=Naturals(True, profile.naturals.vs_foul, ()))


class PayoutCheck(NamedTuple):
    player_id: str
    expected: int
    proposed: int
    difference: int  # proposed - expected
    explanation: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return self.difference == 0


class PairCheck(NamedTuple):
    first: str
    second: str
    expected: int  # money for the first player after caps
    proposed: int
    difference: int
    explanation: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return self.difference == 0


class PayoutReport(NamedTuple):
    players: tuple[PayoutCheck, ...]
    pairs: tuple[PairCheck, ...]

    @property
    def all_match(self) -> bool:
        return all(c.matches for c in self.players) and all(c.matches for c in self.pairs)

    @property
    def mismatches(self) -> tuple[PayoutCheck, ...]:
        return tuple(c for c in self.players if not c.matches)


def pair_explanation(pair: PairResult) -> tuple[str, ...]:
    """The lines behind a pair's amount: rows, items, then the money and caps."""
    return tuple([r.text for r in pair.rows] + [i.text for i in pair.items] + [pair.text])


def check_payouts(
    settlement: Settlement,
    proposed: dict[str, int],
    proposed_pairs: dict[tuple[str, str], int] | None = None,
) -> PayoutReport:
    """Compare a dealer's proposed nets (and, optionally, per-pair amounts) with the settlement.

    Every player must have a proposal; unknown players or pairs are ``InvalidInput``.
    """
    errors = Collector()
    ids = [p.player_id for p in settlement.players]
    for pid in proposed:
        if pid not in ids:
            errors.add(f"proposed[{pid}]", f"{pid!r} is not a player at this table")
    for pid in ids:
        if pid not in proposed:
            errors.add(f"proposed[{pid}]", f"no proposed payout for {pid!r}")
    pairs_by_key = {}
    for pr in settlement.pairs:
        pairs_by_key[(pr.first, pr.second)] = (pr, 1)
        pairs_by_key[(pr.second, pr.first)] = (pr, -1)
    for key in proposed_pairs or {}:
        if key not in pairs_by_key:
            errors.add(
                f"proposedPairs[{key[0]},{key[1]}]", "is not a pair of players at this table"
            )
    errors.raise_if_any()
    checks = []
    pair_lines = [(pr.first, pr.second, f"{pr.first} v {pr.second}: {pr.text}")
                  for pr in settlement.pairs]  # each pair's sentence once, for both players
    for p in settlement.players:
        pid = p.player_id
        lines = [p.text] + [text for a, b, text in pair_lines if pid == a or pid == b]
        want = proposed[p.player_id]
        checks.append(
            PayoutCheck(p.player_id, p.net_money, want, want - p.net_money, tuple(lines))
        )
    pair_checks = []
    for (first, second), want in (proposed_pairs or {}).items():
        pr, sign = pairs_by_key[(first, second)]
        expected = sign * pr.money_for_first
        pair_checks.append(
            PairCheck(first, second, expected, want, want - expected, pair_explanation(pr))
        )
    return PayoutReport(tuple(checks), tuple(pair_checks))


__all__ = [
    "HandEvaluation",
    "PairCheck",
    "PayoutCheck",
    "PayoutReport",
    "check_payouts",
    "evaluate_hand",
    "pair_explanation",
    "FoulReason",
    "InvalidInput",
    "ItemKind",
    "LineItem",
    "PairKind",
    "PairResult",
    "PlayerResult",
    "RowResult",
    "Settlement",
    "Status",
    "settle",
]
