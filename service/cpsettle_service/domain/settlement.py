"""``settle(table, profile)``: the itemized settlement of one hand (spec sections 4-11).

Every line carries a sentence a floor supervisor can read. Units are the scoring points; money
is integer minor units. Players' net money plus the table's rake is exactly zero, checked before
a settlement is returned.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple, Sequence

from .caps import Ledger, cap_payment, settlement_order
from .cards import CANONICAL, CARD_INDEX, DECK, Card
from .errors import Collector, InvalidInput
from .hands import HandClass, HandRank, evaluate_five, evaluate_three, highest_card
from .naturals import Natural, holds, naturals_held
from .profile import (
    FoulPenalty,
    NaturalEntry,
    RakeMode,
    RoyaltyMode,
    RowTie,
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
        label = self.row.label
        a, b = self.first_player, self.second_player
        if not self.winner:
            assert self.first is not None and self.second is not None
            return f"{label}: {a}'s {_name(self.first.hand)} ties {b}'s {_name(self.second.hand)} — push"
        if self.winner == a:
            w, wr, l, lr = a, self.first, b, self.second
        else:
            w, wr, l, lr = b, self.second, a, self.first
        value = abs(self.units)
        if self.fouled:
            hand = f"{w}'s {_name(wr.hand)}" if wr else f"{w}'s hand"
            return f"{label}: {hand} wins against {l}'s fouled hand — {w} +{value}"
        assert wr is not None and lr is not None
        note = ""
        if self.tie_break:
            cw, cl = self.tie_break.split() if self.winner == a else self.tie_break.split()[::-1]
            note = f" (equal by rank; highest card {cw} against {cl})"
        return f"{label}: {w}'s {_name(wr.hand)} beats {l}'s {_name(lr.hand)}{note} — {w} +{value}"


class LineItem(NamedTuple):
    """A bonus, penalty, royalty or multiplier line of a pair; ``units`` for the first player."""

    kind: ItemKind
    units: int
    text: str


class PairResult(NamedTuple):
    first: str
    second: str
    kind: PairKind
    rows: tuple[RowResult, ...]
    items: tuple[LineItem, ...]
    units: int  # for the first player; the second gets exactly the negative
    owed: int  # money the loser owed before caps (>= 0)
    paid: int  # money that moved after caps (>= 0)
    payer: str
    payee: str
    cap: str  # "", "PAYER_STACK", "PAYEE_STACK" or "PAYER_STACK+PAYEE_STACK"

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
    qualifies: bool
    cards: int
    text: str


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


# --------------------------------------------------------------------------- validation


class _Player:
    """Working state of one player while settling."""

    __slots__ = (
        "input",
        "pid",
        "status",
        "rows",
        "royalties",
        "royalty_total",
        "foul_reasons",
        "natural",
        "natural_entry",
        "cards13",
        "ledger",
    )

    def __init__(self, inp: PlayerInput) -> None:
        self.input = inp
        self.pid = inp.player_id
        self.status = Status.REGULAR
        self.rows: tuple[EvaluatedRow, ...] = ()
        self.royalties = (0, 0, 0)
        self.royalty_total = 0
        self.foul_reasons: list[FoulReason] = []
        self.natural: Natural | None = None
        self.natural_entry: NaturalEntry | None = None
        self.cards13: list[int] = []
        self.ledger = Ledger(inp.stack)


_ROW_KEYS = (("front", Row.FRONT), ("middle", Row.MIDDLE), ("back", Row.BACK))


def _check_cards(
    errors: Collector,
    seen: dict[int, str] | None,
    path: str,
    cards: Sequence[str],
    size: int | None,
    out: list[int],
) -> None:
    """Report each card that is not a card (and, with ``seen``, each one used twice)."""
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
                errors.add(where, f"{CANONICAL[idx]} is already used at {first}: one deck per table")
            else:
                seen[idx] = where
        out.append(idx)


_CI = CARD_INDEX.get


def _fast_cards(cards: Sequence[str], out: list[int]) -> bool:
    """The common case in one pass: every card known. False sends the caller to the slow path."""
    idxs = [_CI(c) for c in cards]
    if None in idxs:
        return False
    out.extend(idxs)  # type: ignore[arg-type]  # no None, checked above
    return True


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
    path: str,
    inp: PlayerInput,
    profile: RuleProfile,
) -> _Player:
    """Check one player's hand; cards go into ``seen`` for the table's one-deck check."""
    p = _Player(inp)
    if inp.stack is not None and inp.stack < 0:
        errors.add(f"{path}.stack", f"must be 0 or more, got {inp.stack}")
    declared = inp.declared_natural
    if declared:
        if declared not in Natural.__members__:
            errors.add(f"{path}.declaredNatural", f"{declared!r} is not a known natural")
        elif Natural(declared) not in profile.naturals.by_natural:
            errors.add(
                f"{path}.declaredNatural",
                f"{declared} is not played under profile {profile.name!r}",
            )
    forms = sum((inp.has_arrangement, inp.cards is not None))
    if inp.surrender:
        p.status = Status.SURRENDERED
        if not profile.surrender.allowed:
            errors.add(f"{path}.surrender", f"profile {profile.name!r} does not allow surrender")
        if declared:
            errors.add(path, "a player cannot both surrender and declare a natural")
    elif forms == 0:
        errors.add(path, "needs an arrangement, 13 cards with a declared natural, or a surrender")
    if forms > 1:
        errors.add(path, "send either an arrangement or 13 cards, not both")
    if inp.has_arrangement:
        f, m, b = inp.front, inp.middle, inp.back
        if not (
            f is not None and m is not None and b is not None
            and len(f) == 3 and len(m) == 5 and len(b) == 5
            and _fast_cards((*f, *m, *b), p.cards13)
        ):
            p.cards13.clear()
            for key, row in _ROW_KEYS:
                cards = getattr(inp, key)
                rpath = f"{path}.arrangement.{key}"
                if cards is None:
                    errors.add(rpath, f"is required ({row.size} cards)")
                    continue
                _check_cards(errors, None, rpath, cards, row.size, p.cards13)
    if inp.cards is not None:
        if not (len(inp.cards) == 13 and _fast_cards(inp.cards, p.cards13)):
            p.cards13.clear()
            _check_cards(errors, None, f"{path}.cards", inp.cards, 13, p.cards13)
        if not inp.surrender and not declared and profile.naturals.require_declaration:
            errors.add(
                f"{path}.cards",
                "13 loose cards need a declared natural under this profile; "
                "otherwise send an arrangement",
            )
    return p


def _validate(table: Table, profile: RuleProfile) -> list[_Player]:
    errors = Collector()
    n = len(table.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        errors.add("players", f"a table settles {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n}")
    if table.button_seat is not None and table.button_seat < 0:
        errors.add("buttonSeat", f"must be a seat number (0 or more), got {table.button_seat}")
    seats: dict[int, str] = {}
    ids: dict[str, str] = {}
    players: list[_Player] = []
    for i, inp in enumerate(table.players):
        path = f"players[{i}]"
        pid = inp.player_id
        if not pid:
            errors.add(f"{path}.playerId", "is required")
        elif len(pid) > 64 or not pid.isprintable():
            errors.add(f"{path}.playerId", "must be 1-64 printable characters")
        elif pid in ids:
            errors.add(f"{path}.playerId", f"{pid!r} is also the id of {ids[pid]}")
        else:
            ids[pid] = path
        if inp.seat < 0:
            errors.add(f"{path}.seat", f"must be 0 or more, got {inp.seat}")
        elif inp.seat in seats:
            errors.add(f"{path}.seat", f"seat {inp.seat} is also taken by {seats[inp.seat]}")
        else:
            seats[inp.seat] = path
        players.append(_validate_player(errors, path, inp, profile))
    dead: list[int] = []
    if not _fast_cards(table.dead_cards, dead):
        _check_cards(errors, None, "deadCards", table.dead_cards, None, dead)
    used = [i for p in players for i in p.cards13]
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
    if p.status is Status.SURRENDERED:
        return
    naturals = profile.naturals
    declared = inp.declared_natural
    detect = not naturals.require_declaration and naturals.table
    cards = [DECK[i] for i in p.cards13] if (declared or detect) else []
    if declared:
        natural = Natural(declared)
        if holds(natural, cards):
            if naturals.require_declaration:
                p.natural = natural
            else:
                p.natural = _best_natural(cards, profile)
            p.status = Status.NATURAL
        else:
            p.status = Status.FOULED
            p.foul_reasons.append(FoulReason.FALSE_DECLARATION)
    elif detect:
        best = _best_natural(cards, profile)
        if best is not None:
            p.natural = best
            p.status = Status.NATURAL
        elif not inp.has_arrangement:
            errors.add(
                f"players[{index}].cards",
                "these 13 cards make no natural this profile plays; send an arrangement",
            )
            return
    if p.natural is not None:
        p.natural_entry = naturals.by_natural[p.natural]
    if not inp.has_arrangement or p.status is Status.NATURAL:
        return
    wheel = profile.ranking.wheel
    idx = p.cards13
    front = (CANONICAL[idx[0]], CANONICAL[idx[1]], CANONICAL[idx[2]])
    middle = tuple([CANONICAL[i] for i in idx[3:8]])
    back = tuple([CANONICAL[i] for i in idx[8:13]])
    hf = evaluate_three(front)
    hm = evaluate_five(middle, wheel)
    hb = evaluate_five(back, wheel)
    if p.status is Status.REGULAR:
        if hf > hm:
            p.foul_reasons.append(FoulReason.FRONT_ABOVE_MIDDLE)
        if hm > hb or (
            profile.ranking.suit_order_tiebreak
            and hm.strength == hb.strength
            and hm.hand_class in _SUITED_CLASSES
            and _suit_beats(middle, hm, back, hb, profile.ranking.suit_order)
        ):
            p.foul_reasons.append(FoulReason.MIDDLE_ABOVE_BACK)
        if p.foul_reasons:
            p.status = Status.FOULED
    if p.status is Status.REGULAR:
        royalties = profile.royalties
        if royalties.mode is RoyaltyMode.NONE:
            p.royalties = (0, 0, 0)
        else:
            p.royalties = (
                royalties.units(Row.FRONT, hf),
                royalties.units(Row.MIDDLE, hm),
                royalties.units(Row.BACK, hb),
            )
        p.royalty_total = sum(p.royalties)
    r = p.royalties
    p.rows = (
        EvaluatedRow(Row.FRONT, front, hf, r[0]),
        EvaluatedRow(Row.MIDDLE, middle, hm, r[1]),
        EvaluatedRow(Row.BACK, back, hb, r[2]),
    )


_SUITED_CLASSES = frozenset(
    {HandClass.STRAIGHT, HandClass.FLUSH, HandClass.STRAIGHT_FLUSH, HandClass.ROYAL_FLUSH}
)


def _suit_rank(card: Card, suit_order: Sequence[object]) -> int:
    """0 for the best suit."""
    return list(suit_order).index(card.suit)


def _suit_beats(
    a_cards: Sequence[str], a: HandRank, b_cards: Sequence[str], b: HandRank, order: Sequence[object]
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


def _name(hand: HandRank) -> str:
    n = hand.name
    return n[0].lower() + n[1:]


def _signed(units: int) -> str:
    return f"+{units}" if units > 0 else str(units)


def _natural_label(n: Natural) -> str:
    return n.label[0].lower() + n.label[1:]


_REASON_TEXT = {
    FoulReason.FRONT_ABOVE_MIDDLE: "front above middle",
    FoulReason.MIDDLE_ABOVE_BACK: "middle above back",
    FoulReason.FALSE_DECLARATION: "declared a natural the cards do not make",
}


def _foul_text(p: _Player) -> str:
    return ", ".join(_REASON_TEXT[r] for r in p.foul_reasons)


# --------------------------------------------------------------------------- pairs


class _Pair:
    __slots__ = ("a", "b", "kind", "rows", "items", "units", "scoop_by")

    def __init__(self, a: _Player, b: _Player) -> None:
        self.a = a
        self.b = b
        self.kind = PairKind.NONE
        self.rows: tuple[RowResult, ...] = ()
        self.items: list[LineItem] = []
        self.units = 0
        self.scoop_by: _Player | None = None


def _row_value(profile: RuleProfile, royalty: int) -> int:
    mode = profile.royalties.mode
    unit = profile.scoring.row_unit
    if mode is RoyaltyMode.ON_WIN_ADDED:
        return unit + royalty
    if mode is RoyaltyMode.ON_WIN_REPLACES:
        return max(unit, royalty)
    return unit


def _compare_rows(pair: _Pair, profile: RuleProfile) -> None:
    """Rows, majority and scoop bonuses, royalties; ``a`` or ``b`` may be fouled (SCOOPED)."""
    a, b = pair.a, pair.b
    a_fouled = a.status is Status.FOULED
    b_fouled = b.status is Status.FOULED
    row_tie = profile.ranking.row_tie
    suit_order = profile.ranking.suit_order
    won = lost = 0
    score = 0
    results: list[RowResult] = []
    a_rows, b_rows = a.rows, b.rows
    apid, bpid = a.pid, b.pid
    fouled = apid if a_fouled else bpid if b_fouled else ""
    mode = profile.royalties.mode
    unit = profile.scoring.row_unit
    plain = mode is RoyaltyMode.NONE or mode is RoyaltyMode.ALWAYS
    for i, row in enumerate(ROWS):
        ra = a_rows[i] if a_rows else None
        rb = b_rows[i] if b_rows else None
        tie_break = ""
        if b_fouled:
            sign = 1
        elif a_fouled:
            sign = -1
        else:
            sa, sb = ra.hand.strength, rb.hand.strength  # type: ignore[union-attr]
            sign = 1 if sa > sb else -1 if sa < sb else 0
            if sign == 0 and row_tie is RowTie.SUIT_OF_HIGHEST_CARD:
                assert ra is not None and rb is not None
                ca = highest_card(ra.cards, ra.hand, suit_order)
                cb = highest_card(rb.cards, rb.hand, suit_order)
                sign = 1 if _suit_rank(ca, suit_order) < _suit_rank(cb, suit_order) else -1
                tie_break = f"{CANONICAL[ca.index]} {CANONICAL[cb.index]}"
        if sign > 0:
            won += 1
            value = unit if plain else _row_value(profile, a.royalties[i])
            score += value
            results.append(RowResult(row, ra, rb, apid, value, apid, bpid, fouled, tie_break))
        elif sign < 0:
            lost += 1
            value = unit if plain else _row_value(profile, b.royalties[i])
            score -= value
            results.append(RowResult(row, ra, rb, bpid, -value, apid, bpid, fouled, tie_break))
        else:
            results.append(RowResult(row, ra, rb, "", 0, apid, bpid))
    pair.rows = tuple(results)
    items = pair.items
    scoring = profile.scoring
    if scoring.majority_bonus:
        if won > lost and (won < 3 or scoring.majority_bonus_on_scoop):
            score += scoring.majority_bonus
            items.append(
                LineItem(
                    ItemKind.MAJORITY_BONUS,
                    scoring.majority_bonus,
                    f"Majority bonus: {a.pid} won {won} rows to {lost} — {a.pid} "
                    f"+{scoring.majority_bonus}",
                )
            )
        elif lost > won and (lost < 3 or scoring.majority_bonus_on_scoop):
            score -= scoring.majority_bonus
            items.append(
                LineItem(
                    ItemKind.MAJORITY_BONUS,
                    -scoring.majority_bonus,
                    f"Majority bonus: {b.pid} won {lost} rows to {won} — {b.pid} "
                    f"+{scoring.majority_bonus}",
                )
            )
    if scoring.scoop_bonus and (won == 3 or lost == 3):
        winner = a.pid if won == 3 else b.pid
        bonus = scoring.scoop_bonus if won == 3 else -scoring.scoop_bonus
        score += bonus
        items.append(
            LineItem(
                ItemKind.SCOOP_BONUS,
                bonus,
                f"Scoop bonus: {winner} won all three rows — {winner} +{scoring.scoop_bonus}",
            )
        )
    if profile.royalties.mode is RoyaltyMode.ALWAYS:
        diff = a.royalty_total - b.royalty_total
        if a.royalty_total or b.royalty_total:
            score += diff
            lead = a.pid if diff > 0 else b.pid
            tail = f"{lead} +{abs(diff)}" if diff else "even"
            items.append(
                LineItem(
                    ItemKind.ROYALTIES,
                    diff,
                    f"Royalties: {a.pid} {a.royalty_total}, {b.pid} {b.royalty_total} — {tail}",
                )
            )
    if won == 3:
        pair.scoop_by = a
    elif lost == 3:
        pair.scoop_by = b
    pair.units = score
    pair.kind = PairKind.FOUL if (a_fouled or b_fouled) else PairKind.ROWS


def _fixed_foul(pair: _Pair, fouled: _Player, other: _Player, profile: RuleProfile) -> int:
    """Units the fouled player pays under FIXED, with line items (from ``other``'s side)."""
    foul = profile.foul
    sign = 1 if other is pair.a else -1
    units = foul.fixed_units
    pair.items.append(
        LineItem(
            ItemKind.FOUL_PENALTY,
            sign * foul.fixed_units,
            f"Foul: {fouled.pid}'s hand is fouled ({_foul_text(fouled)}); he pays {other.pid} the "
            f"fixed penalty — {other.pid} +{foul.fixed_units}",
        )
    )
    if (
        foul.pays_opponent_royalties
        and profile.royalties.mode is not RoyaltyMode.NONE
        and other.royalty_total
    ):
        units += other.royalty_total
        pair.items.append(
            LineItem(
                ItemKind.ROYALTIES,
                sign * other.royalty_total,
                f"Royalties: {fouled.pid} also pays {other.pid}'s royalties of "
                f"{other.royalty_total} — {other.pid} +{other.royalty_total}",
            )
        )
    return units


def _scooped_penalty(profile: RuleProfile) -> int:
    """What a scooped regular hand pays, without royalties (clarification 14.6)."""
    s = profile.scoring
    units = 3 * s.row_unit + s.scoop_bonus
    if s.majority_bonus_on_scoop:
        units += s.majority_bonus
    return units * s.scoop_multiplier


def _settle_pair(pair: _Pair, profile: RuleProfile) -> None:
    a, b = pair.a, pair.b
    sa, sb = a.status, b.status
    items = pair.items
    # Surrender first: a surrendered hand is never compared.
    if sa is Status.SURRENDERED or sb is Status.SURRENDERED:
        pair.kind = PairKind.SURRENDER
        if sa is sb:
            items.append(LineItem(ItemKind.NO_SCORE, 0, f"Both {a.pid} and {b.pid} surrendered — 0"))
            return
        s, o = (a, b) if sa is Status.SURRENDERED else (b, a)
        if o.status is Status.FOULED and not profile.surrender.pays_fouled:
            items.append(
                LineItem(
                    ItemKind.NO_SCORE,
                    0,
                    f"Surrender: {s.pid} surrendered, but {o.pid}'s fouled hand collects nothing — 0",
                )
            )
            return
        units = profile.surrender.units
        pair.units = units if o is a else -units
        items.append(
            LineItem(
                ItemKind.SURRENDER,
                pair.units,
                f"Surrender: {s.pid} surrendered and pays {o.pid} {units} — {o.pid} +{units}",
            )
        )
        return
    if sa is Status.NATURAL or sb is Status.NATURAL:
        pair.kind = PairKind.NATURAL
        _settle_natural(pair, profile)
        return
    if sa is Status.FOULED and sb is Status.FOULED:
        pair.kind = PairKind.FOUL
        items.append(
            LineItem(ItemKind.NO_SCORE, 0, f"Both {a.pid} and {b.pid} fouled — they settle 0")
        )
        return
    if (sa is Status.FOULED or sb is Status.FOULED) and profile.foul.penalty is FoulPenalty.FIXED:
        pair.kind = PairKind.FOUL
        fouled, other = (a, b) if sa is Status.FOULED else (b, a)
        units = _fixed_foul(pair, fouled, other, profile)
        pair.units = units if other is a else -units
        pair.scoop_by = other  # a fouled player counts as scooped (DECISIONS 3)
        return
    _compare_rows(pair, profile)
    if sa is Status.FOULED or sb is Status.FOULED:
        fouled = a if sa is Status.FOULED else b
        items.insert(
            0,
            LineItem(
                ItemKind.FOUL_PENALTY,
                0,
                f"Foul: {fouled.pid}'s hand is fouled ({_foul_text(fouled)}), so it loses every "
                "row",
            ),
        )


def _settle_natural(pair: _Pair, profile: RuleProfile) -> None:
    a, b = pair.a, pair.b
    items = pair.items
    if a.status is Status.NATURAL and b.status is Status.NATURAL:
        ea, eb = a.natural_entry, b.natural_entry
        assert ea is not None and eb is not None
        if ea.rank == eb.rank:
            items.append(
                LineItem(
                    ItemKind.NO_SCORE,
                    0,
                    f"Natural: {a.pid}'s {_natural_label(ea.natural)} and {b.pid}'s "
                    f"{_natural_label(eb.natural)} rank equal — 0",
                )
            )
            return
        w, l, e = (a, b, ea) if ea.rank > eb.rank else (b, a, eb)
        pair.units = e.units if w is a else -e.units
        le = l.natural_entry
        assert le is not None
        items.append(
            LineItem(
                ItemKind.NATURAL,
                pair.units,
                f"Natural: {w.pid}'s {_natural_label(e.natural)} outranks {l.pid}'s "
                f"{_natural_label(le.natural)} — {w.pid} +{e.units}",
            )
        )
        return
    n, o = (a, b) if a.status is Status.NATURAL else (b, a)
    e = n.natural_entry
    assert e is not None
    units = e.units
    if o.status is Status.FOULED:
        if profile.foul.penalty is FoulPenalty.FIXED:
            penalty = profile.foul.fixed_units
        else:
            penalty = _scooped_penalty(profile)
        if profile.naturals.vs_foul is VsFoul.GREATER_OF_NATURAL_AND_FOUL and penalty > units:
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
    items.append(LineItem(ItemKind.NATURAL, pair.units, text))


def _apply_multipliers(pairs: list[_Pair], players: list[_Player], profile: RuleProfile) -> None:
    scoring = profile.scoring
    if scoring.scoop_multiplier != 1:
        for pair in pairs:
            if pair.scoop_by is not None and pair.units:
                before = pair.units
                pair.units *= scoring.scoop_multiplier
                w = pair.scoop_by.pid
                pair.items.append(
                    LineItem(
                        ItemKind.SCOOP_MULTIPLIER,
                        pair.units - before,
                        f"Scoop ×{scoring.scoop_multiplier}: {w} scooped — "
                        f"{_signed(abs(before))} becomes {_signed(abs(pair.units))} for {w}",
                    )
                )
    hr = scoring.home_run
    if hr.multiplier == 1 or len(players) < hr.min_players:
        return
    for h in players:
        if h.status is not Status.REGULAR:
            continue
        mine = [p for p in pairs if p.a is h or p.b is h]
        if all(p.scoop_by is h for p in mine):
            for pair in mine:
                before = pair.units
                pair.units *= hr.multiplier
                pair.items.append(
                    LineItem(
                        ItemKind.HOME_RUN_MULTIPLIER,
                        pair.units - before,
                        f"Home run ×{hr.multiplier}: {h.pid} scooped every opponent — "
                        f"{_signed(abs(before))} becomes {_signed(abs(pair.units))} for {h.pid}",
                    )
                )


# --------------------------------------------------------------------------- settle


def _fantasyland(p: _Player, profile: RuleProfile) -> Fantasyland | None:
    fl = profile.fantasyland
    if not fl.enabled:
        return None
    if p.status is not Status.REGULAR:
        return Fantasyland(False, 0, f"{p.pid} does not qualify for Fantasyland ({p.status.value.lower()} hand)")
    front, middle, back = (r.hand for r in p.rows)
    if p.input.in_fantasyland:
        stay = fl.stay
        for row, t, hand in (("front", stay.front, front), ("middle", stay.middle, middle), ("back", stay.back, back)):
            if t is not None and t.met_by(hand):
                return Fantasyland(
                    True, fl.stay_cards,
                    f"{p.pid} stays in Fantasyland with {_name(hand)} in the {row} — "
                    f"{fl.stay_cards} cards next hand",
                )
        return Fantasyland(False, 0, f"{p.pid} leaves Fantasyland: no stay condition met")
    if not fl.entry.met_by(front):
        return Fantasyland(False, 0, f"{p.pid} does not qualify for Fantasyland ({_name(front)} in front)")
    cards = fl.entry_cards
    for entry in fl.progressive:  # strongest threshold first
        if entry.threshold.met_by(front):
            cards = entry.cards
            break
    return Fantasyland(
        True, cards, f"{p.pid} qualifies for Fantasyland with {_name(front)} in front — {cards} cards"
    )


def settle(table: Table, profile: RuleProfile) -> Settlement:
    """Settle one hand. Raises ``InvalidInput`` (every violation) and never settles partly."""
    players = _validate(table, profile)
    errors = Collector()
    for i, p in enumerate(players):
        _evaluate(p, profile, errors, i)
    errors.raise_if_any()

    seats = [p.input.seat for p in players]
    button = table.button_seat if table.button_seat is not None else min(seats)
    order = [players[i] for i in settlement_order(seats, button, profile.caps.order)]

    pairs: list[_Pair] = []
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            pair = _Pair(order[i], order[j])
            _settle_pair(pair, profile)
            pairs.append(pair)
    _apply_multipliers(pairs, order, profile)

    # Money: per-player fee first, then the pairs in button order under the caps.
    unit_value = profile.money.unit_value
    rake_mode = profile.rake.mode
    rake_paid = {p.pid: 0 for p in order}
    if rake_mode is RakeMode.PER_PLAYER:
        fee = profile.rake.per_player_fee
        for p in order:
            st = p.ledger.stack
            paid = fee if st is None else min(fee, st)
            rake_paid[p.pid] = paid
            if st is not None:
                p.ledger.stack = st - paid
    caps = profile.caps
    capped = caps.losses or caps.wins
    results: list[PairResult] = []
    net_units = {p.pid: 0 for p in order}
    for pair in pairs:
        a, b = pair.a, pair.b
        units = pair.units
        net_units[a.pid] += units
        net_units[b.pid] -= units
        owed = abs(units) * unit_value
        if units > 0:
            payer, payee = b, a
        else:
            payer, payee = a, b
        if owed and capped:
            paid, cut = cap_payment(owed, payer.ledger, payee.ledger, caps)
        else:
            paid, cut = owed, ""
        payer.ledger.paid += paid
        payee.ledger.received += paid
        if units:
            payer_id, payee_id = payer.pid, payee.pid
        else:
            payer_id = payee_id = ""
        results.append(
            PairResult(
                a.pid, b.pid, pair.kind, pair.rows, tuple(pair.items), units, owed, paid,
                payer_id, payee_id, cut,
            )
        )

    money = {p.pid: p.ledger.received - p.ledger.paid for p in order}
    if rake_mode is RakeMode.COMMISSION:
        bps, cap = profile.rake.commission_bps, profile.rake.commission_cap
        for pid, m in money.items():
            if m > 0:
                c = m * bps // 10_000
                rake_paid[pid] = min(c, cap) if cap > 0 else c
    total_rake = sum(rake_paid.values())

    player_results: list[PlayerResult] = []
    fantasyland = profile.fantasyland.enabled
    for p in order:
        pid = p.pid
        net = money[pid] - rake_paid[pid]
        status = p.status
        player_results.append(
            PlayerResult(
                pid, p.input.seat, status, p.rows, p.royalty_total, status is Status.FOULED,
                tuple(p.foul_reasons), p.natural, p.input.declared_natural,
                status is Status.SURRENDERED, p.input.stack, net_units[pid], money[pid],
                rake_paid[pid], net, _fantasyland(p, profile) if fantasyland else None,
            )
        )
    if sum(pr.net_money for pr in player_results) + total_rake != 0:  # pragma: no cover
        raise AssertionError("settlement does not balance: nets plus rake must sum to zero")
    return Settlement(
        context=table.context,
        profile=profile,
        unit_value=unit_value,
        button_seat=button,
        order=tuple(p.pid for p in order),
        players=tuple(player_results),
        pairs=tuple(results),
        rake=total_rake,
    )


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
    forms = sum((inp.has_arrangement, inp.cards is not None))
    if forms != 1:
        errors.add("arrangement", "send either an arrangement or 13 cards")
    if inp.has_arrangement:
        for key, row in _ROW_KEYS:
            cards = getattr(inp, key)
            if cards is None:
                errors.add(f"arrangement.{key}", f"is required ({row.size} cards)")
            else:
                _check_cards(errors, None, f"arrangement.{key}", cards, row.size, p.cards13)
                _check_cards(errors, seen, f"arrangement.{key}", cards, None, [])
    elif inp.cards is not None:
        _check_cards(errors, None, "cards", inp.cards, 13, p.cards13)
        _check_cards(errors, seen, "cards", inp.cards, None, [])
    errors.raise_if_any()
    cards = [DECK[i] for i in p.cards13]
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
        fouled=p.status is Status.FOULED,
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
            errors.add(f"proposedPairs[{key[0]},{key[1]}]", "is not a pair of players at this table")
    errors.raise_if_any()
    checks = []
    for p in settlement.players:
        lines = [p.text] + [
            f"{pr.first} v {pr.second}: {pr.text}"
            for pr in settlement.pairs
            if p.player_id in (pr.first, pr.second)
        ]
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
