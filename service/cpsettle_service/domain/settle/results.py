"""What a settlement says: the result types and the sentences they read as.

Every result is an immutable ``NamedTuple`` built by keyword (a test walks the domain's source
and fails on a positional build or a field left out, so a new field is named at every build
site). The sentences are built when read: the hot path stores a format and its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from enum import StrEnum
from types import MappingProxyType
from typing import NamedTuple

from ..cards.cards import JOKER, Rank
from ..cards.hands import HandRank
from ..cards.rows import ROWS, Row
from ..naturals.catalogue import Natural
from ..profile.model import HouseNatural, RuleProfile
from .table import AuditContext


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


# The members the settlement reads on every hand, as plain names. Python 3.11's EnumType has a
# __getattr__, so ``Status.REGULAR`` is a slow, unspecialized lookup (20x a global); settling a
# table makes about 80 of them: measured by ``python bench/bench_settle_instructions.py`` at
# 66,000 instructions a table, a fifth of a warm settlement. Code off the per-hand path uses
# the enums directly.
REGULAR, FOULED, NATURAL, SURRENDERED = (
    Status.REGULAR,
    Status.FOULED,
    Status.NATURAL,
    Status.SURRENDERED,
)
KIND_ROWS, KIND_FOUL, KIND_NONE = PairKind.ROWS, PairKind.FOUL, PairKind.NONE
MAJORITY_BONUS, SCOOP_BONUS, ROYALTIES = (
    ItemKind.MAJORITY_BONUS,
    ItemKind.SCOOP_BONUS,
    ItemKind.ROYALTIES,
)
FRONT_ABOVE_MIDDLE, MIDDLE_ABOVE_BACK = (
    FoulReason.FRONT_ABOVE_MIDDLE,
    FoulReason.MIDDLE_ABOVE_BACK,
)


class EvaluatedRow(NamedTuple):
    """One row of one player's arrangement: its cards as sent (a joker as ``Xj``), the card each
    joker stands for (RULES.md §16.3), and the hand of the resolved cards."""

    row: Row
    cards: tuple[str, ...]
    hand: HandRank
    royalty: int
    joker_cards: tuple[str, ...] = ()

    @property
    def resolved_cards(self) -> tuple[str, ...]:
        """The cards with each joker replaced by the card it stands for."""
        if not self.joker_cards:
            return self.cards
        stands_for = iter(self.joker_cards)
        return tuple([next(stands_for) if c == JOKER else c for c in self.cards])


def _noting_jokers(r: EvaluatedRow | None) -> EvaluatedRow | None:
    """The row with its hand's phrase naming what each joker stands for ("pair of queens, two
    kicker (Xj as Qh)"), for the sentences only: a private copy of the shared hand."""
    if r is None or not r.joker_cards:
        return r
    hand = replace(r.hand)
    phrase = f"{hand.phrase} ({jokers_text(r.joker_cards)})"
    object.__setattr__(hand, "phrase", phrase)
    object.__setattr__(hand, "clause", phrase + "," if "," in phrase else phrase)
    return r._replace(hand=hand)


def jokers_text(stands_for: tuple[str, ...]) -> str:
    """'Xj as Qh', 'Xj as Qh, Xj as 2c'."""
    return ", ".join(f"{JOKER} as {c}" for c in stands_for)


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
        return row_text(
            self.row,
            self.first_player,
            self.second_player,
            self.winner,
            self.first,
            self.second,
            self.units,
            self.fouled,
            self.tie_break,
        )


def row_text(
    row: Row,
    a: str,
    b: str,
    winner: str,
    first: EvaluatedRow | None,
    second: EvaluatedRow | None,
    units: int,
    fouled: str,
    tie_break: str,
) -> str:
    """The sentence of one row compared between ``a`` and ``b`` (see ``RowResult``)."""
    label = _ROW_LABEL[row]
    if (first is not None and first.joker_cards) or (second is not None and second.joker_cards):
        first, second = _noting_jokers(first), _noting_jokers(second)
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
        return (
            f"{label}: {winner}'s {wr.hand.clause} beats {loser}'s {lr.hand.phrase} (equal by "
            f"rank; highest card {cw} against {cl}) — {winner} +{value}"
        )
    return (
        f"{label}: {winner}'s {wr.hand.clause} beats {loser}'s {lr.hand.phrase} — {winner} +{value}"
    )


_ROW_LABEL = {row: row.label for row in ROWS}


class LineItem(NamedTuple):
    """A bonus, penalty, royalty or multiplier line of a pair; ``units`` for the first player.

    The sentence is ``fmt`` filled with ``args`` (``str.format``), built when read. A multiplier
    line's first argument is its multiplier; a line between two naturals compared card by card
    is ``NATURAL_BY_CARDS`` or ``NATURAL_SAME_CARDS`` (``multiplier`` and ``cards_compared``
    read them for the settlement's structured fields).
    """

    kind: ItemKind
    units: int
    fmt: str
    args: tuple[object, ...] = ()

    @property
    def text(self) -> str:
        return self.fmt.format(*self.args) if self.args else self.fmt

    @property
    def multiplier(self) -> int:
        """A multiplier line's multiplier (RULES.md §7); 0 for another line."""
        if self.kind is ItemKind.SCOOP_MULTIPLIER or self.kind is ItemKind.HOME_RUN_MULTIPLIER:
            m = self.args[0]
            assert isinstance(m, int)
            return m
        return 0

    @property
    def cards_compared(self) -> tuple[int, str, str] | None:
        """Two naturals of equal rank compared card by card (RULES.md §16.2): the first card from
        the top whose ranks differ (0: none) and its rank in the first and the second player's
        natural; None for any other line."""
        if self.fmt == NATURAL_BY_CARDS:
            card, won, lost, first_won = self.args[4], self.args[5], self.args[6], self.args[8]
            assert isinstance(card, int) and isinstance(won, Rank) and isinstance(lost, Rank)
            return (card, won.value, lost.value) if first_won else (card, lost.value, won.value)
        if self.fmt == NATURAL_SAME_CARDS:
            return (0, "", "")
        return None


# Two naturals of equal rank compared card by card (RULES.md §16.2): the winner's id and natural,
# the loser's, the card (from 1), the winner's and the loser's rank there (``Rank``s), the units;
# and (not in the sentence) whether the winner is the pair's first player.
NATURAL_BY_CARDS = (
    "Natural: {0}'s {1} and {2}'s {3} rank equal; compared from the top, card {4} "
    "is {5.word} against {6.word} — {0} +{7}"
)
# ... and found equal card for card: the two ids and naturals, in pair order.
NATURAL_SAME_CARDS = "Natural: {0}'s {1} and {2}'s {3} and their cards rank the same — 0"


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
            out.append(
                RowResult(
                    row=ROWS[i],
                    first=fr[i] if fr else None,
                    second=sr[i] if sr else None,
                    winner=winner,
                    units=self.row_units[i],
                    first_player=a,
                    second_player=b,
                    fouled=self.fouled,
                    tie_break=self.tie_breaks[i] if self.tie_breaks else "",
                )
            )
        return tuple(out)

    @property
    def row_texts(self) -> tuple[str, ...]:
        """Each row's sentence, in row order: what ``rows[i].text`` says, without building the
        itemized rows (the wire writer takes these finished sentences)."""
        fr, sr = self.first_rows, self.second_rows
        a, b = self.first, self.second
        units, ties, fouled = self.row_units, self.tie_breaks, self.fouled
        return tuple(
            [
                row_text(
                    ROWS[i],
                    a,
                    b,
                    a if sign > 0 else b if sign < 0 else "",
                    fr[i] if fr else None,
                    sr[i] if sr else None,
                    units[i],
                    fouled,
                    ties[i] if ties else "",
                )
                for i, sign in enumerate(self.row_signs)
            ]
        )

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


class FantasylandResult(NamedTuple):
    """Fantasyland next hand: whether the player qualifies, and the cards he is dealt; whether
    he played this hand there (so it was judged for staying), and the row that kept him."""

    qualifies: bool
    cards: int
    fmt: str
    args: tuple[object, ...] = ()
    in_fantasyland: bool = False
    row: Row | None = None

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
    natural: Natural | HouseNatural | None
    declared_natural: str
    surrendered: bool
    stack: int | None
    net_units: int
    money_before_rake: int
    rake: int
    net_money: int
    fantasyland: FantasylandResult | None

    @property
    def text(self) -> str:
        pid = self.player_id
        text = f"{pid}: {_signed(self.net_units)} units, {_signed(self.net_money)} after caps"
        if self.rake:
            text += f" and {self.rake} rake"
        if self.fouled:
            text += f"; fouled ({foul_text(self.foul_reasons)})"
        elif self.natural is not None:
            text += f"; natural: {natural_label(self.natural)}"
        elif self.surrendered:
            text += "; surrendered"
        return text


class HeldNatural(NamedTuple):
    """What a natural hand's sentences say beyond its name: its rank and what it collects under
    the profile (RULES.md §8, §16.2), and the card each of its jokers stands for (§16.3)."""

    rank: int
    units: int
    joker_cards: tuple[str, ...]


NO_NATURALS: Mapping[str, HeldNatural] = MappingProxyType({})


class Settlement(NamedTuple):
    context: AuditContext
    profile: RuleProfile
    unit_value: int
    button_seat: int
    order: tuple[str, ...]
    players: tuple[PlayerResult, ...]  # in settlement order
    pairs: tuple[PairResult, ...]  # in settlement order
    rake: int
    currency: str  # ISO 4217: what the money amounts (minor units) are counted in
    naturals: Mapping[str, HeldNatural]  # by player id, each natural hand's (most have none)

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


# --------------------------------------------------------------------------- factories
#
# One factory per result type the settlement builds on every hand, the positional build in
# exactly one place: each factory's parameters are its type's fields, in order and without
# defaults (a test compares them), so a new field is a TypeError at every build site until the
# site supplies it, never a shifted or missing field. Build sites name every field by keyword.
#
# The two 16-field types take their two identifying fields positionally (``/``): CPython 3.11
# compiles a call whose positional arguments plus twice its keywords exceed 30 into a call
# through a dict (``CALL_FUNCTION_EX``), which cost 8,600 instructions a call against 1,100
# for the same call with 14 keywords; a test keeps every build site under that line.

_new = tuple.__new__


def evaluated_row(
    *, row: Row, cards: tuple[str, ...], hand: HandRank, royalty: int, joker_cards: tuple[str, ...]
) -> EvaluatedRow:
    return _new(EvaluatedRow, (row, cards, hand, royalty, joker_cards))


def line_item(*, kind: ItemKind, units: int, fmt: str, args: tuple[object, ...]) -> LineItem:
    return _new(LineItem, (kind, units, fmt, args))


def pair_result(
    first: str,
    second: str,
    /,
    *,
    kind: PairKind,
    items: tuple[LineItem, ...],
    units: int,
    owed: int,
    paid: int,
    payer: str,
    payee: str,
    cap: str,
    row_signs: tuple[int, ...],
    row_units: tuple[int, ...],
    first_rows: tuple[EvaluatedRow, ...],
    second_rows: tuple[EvaluatedRow, ...],
    fouled: str,
    tie_breaks: tuple[str, ...],
) -> PairResult:
    return _new(
        PairResult,
        (
            first,
            second,
            kind,
            items,
            units,
            owed,
            paid,
            payer,
            payee,
            cap,
            row_signs,
            row_units,
            first_rows,
            second_rows,
            fouled,
            tie_breaks,
        ),
    )


def fantasyland_result(
    *,
    qualifies: bool,
    cards: int,
    fmt: str,
    args: tuple[object, ...],
    in_fantasyland: bool,
    row: Row | None,
) -> FantasylandResult:
    return _new(FantasylandResult, (qualifies, cards, fmt, args, in_fantasyland, row))


def player_result(
    player_id: str,
    seat: int,
    /,
    *,
    status: Status,
    rows: tuple[EvaluatedRow, ...],
    royalty_total: int,
    fouled: bool,
    foul_reasons: tuple[FoulReason, ...],
    natural: Natural | HouseNatural | None,
    declared_natural: str,
    surrendered: bool,
    stack: int | None,
    net_units: int,
    money_before_rake: int,
    rake: int,
    net_money: int,
    fantasyland: FantasylandResult | None,
) -> PlayerResult:
    return _new(
        PlayerResult,
        (
            player_id,
            seat,
            status,
            rows,
            royalty_total,
            fouled,
            foul_reasons,
            natural,
            declared_natural,
            surrendered,
            stack,
            net_units,
            money_before_rake,
            rake,
            net_money,
            fantasyland,
        ),
    )


def settlement_result(
    *,
    context: AuditContext,
    profile: RuleProfile,
    unit_value: int,
    button_seat: int,
    order: tuple[str, ...],
    players: tuple[PlayerResult, ...],
    pairs: tuple[PairResult, ...],
    rake: int,
    currency: str,
    naturals: Mapping[str, HeldNatural],
) -> Settlement:
    return _new(
        Settlement,
        (
            context,
            profile,
            unit_value,
            button_seat,
            order,
            players,
            pairs,
            rake,
            currency,
            naturals,
        ),
    )


FACTORIES: dict[type, Callable[..., object]] = {
    EvaluatedRow: evaluated_row,
    LineItem: line_item,
    PairResult: pair_result,
    FantasylandResult: fantasyland_result,
    PlayerResult: player_result,
    Settlement: settlement_result,
}


# --------------------------------------------------------------------------- sentences


def _signed(units: int) -> str:
    return f"+{units}" if units > 0 else str(units)


def natural_label(n: Natural | HouseNatural) -> str:
    """The natural's name inside a sentence ("three flushes")."""
    return n.label[0].lower() + n.label[1:]


REASON_TEXT = {
    FoulReason.FRONT_ABOVE_MIDDLE: "front above middle",
    FoulReason.MIDDLE_ABOVE_BACK: "middle above back",
    FoulReason.FALSE_DECLARATION: "declared a natural the cards do not make",
}


def foul_text(reasons: tuple[FoulReason, ...]) -> str:
    """The foul reasons as a clause ("front above middle, middle above back")."""
    return ", ".join(REASON_TEXT[r] for r in reasons)
