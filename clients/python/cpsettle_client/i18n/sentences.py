"""The settlement's sentences in the reader's language, rendered from its structured fields
(docs/VIEWS.md, "Languages"; the words: docs/GLOSSARY.md).

The signed settlement says every sentence in English (a row's outcome, a line item, a pair's
money, a player's result, Fantasyland, the totals); those bytes never change. Here each sentence
is said again from the fields the settlement carries beside it — the rows' hands and winners,
the items' kinds, units, multipliers and card comparisons, the players' statuses, royalties,
naturals and Fantasyland (RULES.md §5-11, §16) — through the gettext catalogs: one message per
sentence kind and variant, CLDR's plural rules, numbers, money and lists (Babel).

**A translation is shown only when the same fields say the signed English byte for byte.** Each
sentence is rendered twice from the fields: in English, with the signed text's conventions
(plain integers, minor units, hands as lowercase phrases), and in the reader's language. If the
English differs from the signed sentence — a settlement of an engine from before these fields,
or one edited by hand — the signed English is shown, marked as English, never a translation
that might say something else. ``english`` renders every sentence of a settlement in English
(the tests compare it with the signed text on every golden case and on random tables).

The pages' script does the same in the browser (views/assets/sentences.js, the same messages);
a test compares the two renderers on every golden case in every language.

>>> from cpsettle_client.i18n import Language
>>> from cpsettle.v1 import settlement_pb2 as pb
>>> s = pb.Settlement(order=["A", "B"], currency="EUR", players=[
...     pb.PlayerResult(player_id="A", status=pb.PLAYER_STATUS_REGULAR, net_units=2,
...                     net_money=200, text="A: +2 units, +200 after caps"),
...     pb.PlayerResult(player_id="B", status=pb.PLAYER_STATUS_REGULAR, net_units=-2,
...                     net_money=-200, text="B: -2 units, -200 after caps")])
>>> Sentences(s, Language.get("es")).player(s.players[0])
Sentence(text='A: +2 unidades, +2,00\\xa0€ tras los límites', lang='es')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from babel.lists import format_list

from cpsettle.v1 import profile_pb2
from cpsettle.v1 import settlement_pb2 as pb

from . import labels as _labels
from .catalogs import DEFAULT
from .language import N_, Language

SIGNED = "en"  # the language of the signed sentences
JOKER = "Xj"  # a joker as a settlement writes it (RULES.md §16.3)
_RANK_VALUE = {r: i + 2 for i, r in enumerate("23456789TJQKA")}
_RANK_LETTER = {v: r for r, v in _RANK_VALUE.items()}
# Each rank's word and plural (the catalogs translate them; English: the hands' names).
_RANK_WORDS = {
    "2": (N_("two"), N_("twos")),
    "3": (N_("three"), N_("threes")),
    "4": (N_("four"), N_("fours")),
    "5": (N_("five"), N_("fives")),
    "6": (N_("six"), N_("sixes")),
    "7": (N_("seven"), N_("sevens")),
    "8": (N_("eight"), N_("eights")),
    "9": (N_("nine"), N_("nines")),
    "T": (N_("ten"), N_("tens")),
    "J": (N_("jack"), N_("jacks")),
    "Q": (N_("queen"), N_("queens")),
    "K": (N_("king"), N_("kings")),
    "A": (N_("ace"), N_("aces")),
}
_FOUL_REASONS = {
    pb.FOUL_REASON_FRONT_ABOVE_MIDDLE: N_("front above middle"),
    pb.FOUL_REASON_MIDDLE_ABOVE_BACK: N_("middle above back"),
    pb.FOUL_REASON_FALSE_DECLARATION: N_("declared a natural the cards do not make"),
}


@dataclass(frozen=True)
class Sentence:
    """A sentence as shown: its text and the language it is in (a BCP 47 tag)."""

    text: str
    lang: str


# --------------------------------------------------------------------------- words


class Say:
    """One language's words for the sentences. In the signed language (English) numbers and
    money are plain integers and hands are phrases, as the signed sentences write them;
    elsewhere numbers and money follow CLDR (money in the settlement's currency)."""

    def __init__(self, lang: Language, currency: str) -> None:
        self.lang = lang
        self.currency = currency or "XXX"
        self.signed = lang.code == SIGNED
        self._translations = lang.catalog.translations

    def _(self, message: str, /, **args: str) -> str:
        text = self._translations.gettext(message)
        return text.format(**args) if args else text

    def ngettext(self, singular: str, plural: str, count: int, /, **args: str) -> str:
        """The form for ``count`` (the catalog's plural rule); ``{n}`` is ``count``."""
        text = self._translations.ngettext(singular, plural, abs(count))
        return text.format(n=self.num(abs(count)), **args)

    def num(self, value: int) -> str:
        return str(value) if self.signed else self.lang.number(value)

    def plus(self, value: int) -> str:
        """A gain with its sign ("+3", "-2", "0")."""
        if self.signed:
            return f"+{value}" if value > 0 else str(value)
        return self.lang.number(value, signed=True)

    def money(self, minor: int, signed: bool = False) -> str:
        if self.signed:
            return f"+{minor}" if signed and minor > 0 else str(minor)
        return self.lang.money(minor, self.currency, signed=signed)

    def join(self, items: list[str]) -> str:
        """A list: "a, b" in the signed sentences, CLDR's list pattern elsewhere ("a y b")."""
        if self.signed or len(items) < 2:
            return ", ".join(items)
        text: str = format_list(items, locale=self.lang.locale)
        return text

    def label(self, code: str) -> str:
        return self.lang.label(code)

    def rank(self, letter: str, plural: bool = False) -> str:
        return self._(_RANK_WORDS[letter][1 if plural else 0])

    def row(self, row: int) -> str:
        """A row's name ("Back", "Trasera")."""
        return self.label(_labels.value_name(profile_pb2.Row, row))

    def reasons(self, reasons: Any) -> str:
        return self.join([self._(_FOUL_REASONS[r]) for r in reasons if r in _FOUL_REASONS])

    def jokers(self, stands_for: Any) -> str:
        """What each joker stands for: "Xj as Qh, Xj as 2c"."""
        return self.join([self._("{joker} as {card}", joker=JOKER, card=c) for c in stands_for])


# --------------------------------------------------------------------------- hands


def resolved_cards(row: pb.EvaluatedRow) -> list[str]:
    """The row's cards with each joker replaced by the card it stands for (in order)."""
    stands_for = iter(row.joker_cards)
    return [next(stands_for, c) if c.upper() == JOKER.upper() else c for c in row.cards]


def _by_count(cards: list[str]) -> list[tuple[int, int]]:
    """(count, rank value) of each rank among the cards, most cards first, then highest."""
    counts: dict[int, int] = {}
    for c in cards:
        v = _RANK_VALUE.get(c[:-1].upper().replace("10", "T"), 0)
        counts[v] = counts.get(v, 0) + 1
    return sorted(((n, v) for v, n in counts.items()), reverse=True)


def hand_name(say: Say, row: pb.EvaluatedRow) -> str:
    """The hand's name from its class and cards ("Full house, kings full of threes"), as the
    engine names it (RULES.md §3; cards/hands.py), in ``say``'s language."""
    groups = _by_count(resolved_cards(row))
    ranks = [_RANK_LETTER.get(v, "?") for _, v in groups]
    top = ranks[0] if ranks else "?"
    cls = row.hand_class
    word = say.rank
    straight = (profile_pb2.HAND_CLASS_STRAIGHT, profile_pb2.HAND_CLASS_STRAIGHT_FLUSH)
    if cls in straight and set(ranks) == set("A2345"):
        top = "5"  # the wheel is five high
    if cls == profile_pb2.HAND_CLASS_HIGH_CARD:
        name = say._("High card, {rank}", rank=word(top))
    elif cls == profile_pb2.HAND_CLASS_PAIR:
        name = say._(
            "Pair of {ranks}, {kicker} kicker",
            ranks=word(top, True),
            kicker=word(ranks[1] if len(ranks) > 1 else "?"),
        )
    elif cls == profile_pb2.HAND_CLASS_TWO_PAIR:
        name = say._("Two pair, {high} and {low}", high=word(top, True), low=word(ranks[1], True))
    elif cls == profile_pb2.HAND_CLASS_THREE_OF_A_KIND:
        name = say._("Three of a kind, {ranks}", ranks=word(top, True))
    elif cls == profile_pb2.HAND_CLASS_STRAIGHT:
        name = say._("Straight, {rank} high", rank=word(top))
    elif cls == profile_pb2.HAND_CLASS_FLUSH:
        name = say._("{rank}-high flush", rank=word(top))
    elif cls == profile_pb2.HAND_CLASS_FULL_HOUSE:
        name = say._(
            "Full house, {ranks} full of {other}", ranks=word(top, True), other=word(ranks[1], True)
        )
    elif cls == profile_pb2.HAND_CLASS_FOUR_OF_A_KIND:
        name = say._("Four of a kind, {ranks}", ranks=word(top, True))
    elif cls == profile_pb2.HAND_CLASS_STRAIGHT_FLUSH:
        name = say._("Straight flush, {rank} high", rank=word(top))
    elif cls == profile_pb2.HAND_CLASS_ROYAL_FLUSH:
        name = say._("Royal flush")
    elif cls == profile_pb2.HAND_CLASS_FIVE_OF_A_KIND:
        name = say._("Five of a kind, {ranks}", ranks=word(top, True))
    else:
        raise KeyError(cls)
    return name[:1].upper() + name[1:]


def _phrase(say: Say, row: pb.EvaluatedRow | None, jokers: bool = True) -> str:
    """A hand inside a sentence: the name as a phrase ("full house, kings full of threes"), with
    what its jokers stand for; in a translation the name as it is."""
    if row is None:
        raise KeyError("no row")
    name = hand_name(say, row)
    if say.signed:
        name = name[:1].lower() + name[1:]
    if jokers and row.joker_cards:
        name += f" ({say.jokers(row.joker_cards)})"
    return name


def _clause(say: Say, phrase: str) -> str:
    """A phrase as a sentence's subject: one with its own comma gets a closing one."""
    return phrase + "," if say.signed and "," in phrase else phrase


# --------------------------------------------------------------------------- the settlement


class Facts:
    """The settlement's players by id, what each sentence reads beside its own message."""

    def __init__(self, s: pb.Settlement) -> None:
        self.s = s
        self.players = {p.player_id: p for p in s.players}

    def player(self, pid: str) -> pb.PlayerResult:
        return self.players[pid]

    def natural(self, say: Say, pid: str, jokers: bool = True) -> str:
        """A natural as a sentence names it ("three flushes", "dragon (Xj as As)")."""
        p = self.player(pid)
        name = say.label(p.natural)
        if say.signed:
            name = name[:1].lower() + name[1:]
        if jokers and p.natural_joker_cards:
            name += f" ({say.jokers(p.natural_joker_cards)})"
        return name


def _fouled(f: Facts, pr: pb.PairResult) -> tuple[str, str]:
    """The pair's fouled player and the other one."""
    if f.player(pr.first).fouled:
        return pr.first, pr.second
    if f.player(pr.second).fouled:
        return pr.second, pr.first
    raise KeyError("no fouled player")


def _scooper(f: Facts, pr: pb.PairResult) -> str:
    """Who scooped the pair: the winner of every row, or the other of a fouled hand."""
    winners = {r.winner for r in pr.rows}
    if pr.rows and len(winners) == 1 and "" not in winners:
        return winners.pop()
    return _fouled(f, pr)[1]


def row_sentence(say: Say, f: Facts, pr: pb.PairResult, r: pb.RowResult) -> str:
    """A row compared (RULES.md §5): "Back: A's full house, …, beats B's … — A +1"."""
    a, b = pr.first, pr.second
    row = say.row(r.row)
    first = r.first if r.HasField("first") else None
    second = r.second if r.HasField("second") else None
    if not r.winner:
        fp = _phrase(say, first)
        return say._(
            "{row}: {first}'s {first_hand} ties {second}'s {second_hand} — push",
            row=row,
            first=a,
            second=b,
            first_hand=_clause(say, fp),
            second_hand=_phrase(say, second),
        )
    winner = r.winner
    loser = b if winner == a else a
    won, lost = (first, second) if winner == a else (second, first)
    units = say.num(abs(r.units))
    if pr.kind == pb.PAIR_KIND_FOUL:
        if won is None:
            return say._(
                "{row}: {winner}'s hand wins against {loser}'s fouled hand — {winner} +{units}",
                row=row,
                winner=winner,
                loser=loser,
                units=units,
            )
        return say._(
            "{row}: {winner}'s {hand} wins against {loser}'s fouled hand — {winner} +{units}",
            row=row,
            winner=winner,
            loser=loser,
            hand=_phrase(say, won),
            units=units,
        )
    wp = _phrase(say, won)
    args = dict(
        row=row,
        winner=winner,
        loser=loser,
        winner_hand=_clause(say, wp),
        loser_hand=_phrase(say, lost),
        units=units,
    )
    if len(r.tie_break_cards) == 2:
        cards = list(r.tie_break_cards) if winner == a else list(r.tie_break_cards)[::-1]
        return say._(
            "{row}: {winner}'s {winner_hand} beats {loser}'s {loser_hand} (equal by rank; "
            "highest card {winner_card} against {loser_card}) — {winner} +{units}",
            winner_card=cards[0],
            loser_card=cards[1],
            **args,
        )
    return say._(
        "{row}: {winner}'s {winner_hand} beats {loser}'s {loser_hand} — {winner} +{units}", **args
    )


def item_sentence(say: Say, f: Facts, pr: pb.PairResult, item: pb.LineItem) -> str:
    """A line of a pair (RULES.md §5-9, §16.2): bonuses, royalties, fouls, naturals,
    surrenders, multipliers, and the lines that score nothing."""
    a, b = pr.first, pr.second
    u = item.units
    units = say.num(abs(u))
    w, o = (a, b) if u > 0 else (b, a)
    kind = item.kind
    if kind == pb.LINE_ITEM_KIND_MAJORITY_BONUS:
        won = sum(r.winner == w for r in pr.rows)
        lost = sum(r.winner == o for r in pr.rows)
        return say.ngettext(
            "Majority bonus: {player} won {n} rows to {lost} — {player} +{units}",
            "Majority bonus: {player} won {n} rows to {lost} — {player} +{units}",
            won,
            player=w,
            lost=say.num(lost),
            units=units,
        )
    if kind == pb.LINE_ITEM_KIND_SCOOP_BONUS:
        return say._(
            "Scoop bonus: {player} won all three rows — {player} +{units}", player=w, units=units
        )
    if kind == pb.LINE_ITEM_KIND_ROYALTIES:
        if not pr.rows:  # a fixed foul penalty's: the fouled hand pays the other's royalties
            fouled, other = _fouled(f, pr)
            return say._(
                "Royalties: {fouled} also pays {other}'s royalties of {units} — {other} +{units}",
                fouled=fouled,
                other=other,
                units=units,
            )
        args = dict(
            first=a,
            second=b,
            first_royalties=say.num(f.player(a).royalty_total),
            second_royalties=say.num(f.player(b).royalty_total),
        )
        if not u:
            return say._(
                "Royalties: {first} {first_royalties}, {second} {second_royalties} — even", **args
            )
        return say._(
            "Royalties: {first} {first_royalties}, {second} {second_royalties} — {player} +{units}",
            player=w,
            units=units,
            **args,
        )
    if kind == pb.LINE_ITEM_KIND_FOUL_PENALTY:
        fouled, other = _fouled(f, pr)
        reasons = say.reasons(f.player(fouled).foul_reasons)
        if pr.rows:
            return say._(
                "Foul: {fouled}'s hand is fouled ({reasons}), so it loses every row",
                fouled=fouled,
                reasons=reasons,
            )
        return say._(
            "Foul: {fouled}'s hand is fouled ({reasons}); he pays {other} the fixed "
            "penalty — {other} +{units}",
            fouled=fouled,
            other=other,
            reasons=reasons,
            units=units,
        )
    if kind == pb.LINE_ITEM_KIND_NATURAL:
        return _natural(say, f, pr, item, units)
    if kind == pb.LINE_ITEM_KIND_SURRENDER:
        s = a if f.player(a).surrendered else b
        return say._(
            "Surrender: {player} surrendered and pays {other} {units} — {other} +{units}",
            player=s,
            other=b if s == a else a,
            units=units,
        )
    if kind in (pb.LINE_ITEM_KIND_SCOOP_MULTIPLIER, pb.LINE_ITEM_KIND_HOME_RUN_MULTIPLIER):
        m = item.multiplier
        if m < 2:
            raise KeyError("no multiplier")
        before = abs(u) // (m - 1)
        args = dict(
            multiplier=say.num(m),
            player=_scooper(f, pr),
            before=say.num(before),
            after=say.num(before * m),
        )
        if kind == pb.LINE_ITEM_KIND_SCOOP_MULTIPLIER:
            return say._(
                "Scoop ×{multiplier}: {player} scooped — +{before} becomes +{after} for {player}",
                **args,
            )
        return say._(
            "Home run ×{multiplier}: {player} scooped every opponent — +{before} becomes "
            "+{after} for {player}",
            **args,
        )
    if kind == pb.LINE_ITEM_KIND_NO_SCORE:
        pa, pb_ = f.player(a), f.player(b)
        if pa.surrendered and pb_.surrendered:
            return say._("Both {first} and {second} surrendered — 0", first=a, second=b)
        if pa.surrendered or pb_.surrendered:
            s = a if pa.surrendered else b
            return say._(
                "Surrender: {player} surrendered, but {other}'s fouled hand collects nothing — 0",
                player=s,
                other=b if s == a else a,
            )
        if pa.natural and pb_.natural:
            args = dict(
                first=a, second=b, first_natural=f.natural(say, a), second_natural=f.natural(say, b)
            )
            if item.HasField("cards_compared"):
                return say._(
                    "Natural: {first}'s {first_natural} and {second}'s {second_natural} "
                    "and their cards rank the same — 0",
                    **args,
                )
            return say._(
                "Natural: {first}'s {first_natural} and {second}'s {second_natural} rank equal — 0",
                **args,
            )
        return say._("Both {first} and {second} fouled — they settle 0", first=a, second=b)
    raise KeyError(kind)


def _natural(say: Say, f: Facts, pr: pb.PairResult, item: pb.LineItem, units: str) -> str:
    """A natural's line (RULES.md §8, §16.2): who collects is the natural (of two, the higher
    rank, or the higher card where they compared), whatever the units (a natural may be worth
    0)."""
    a, b = pr.first, pr.second
    pa, pb_ = f.player(a), f.player(b)
    c = item.cards_compared
    if pa.natural and pb_.natural:
        if item.HasField("cards_compared"):
            first_wins = _RANK_VALUE[c.first_rank] > _RANK_VALUE[c.second_rank]
        else:
            first_wins = pa.natural_rank > pb_.natural_rank
        w, o = (a, b) if first_wins else (b, a)
        args = dict(
            winner=w,
            loser=o,
            winner_natural=f.natural(say, w),
            loser_natural=f.natural(say, o),
            units=units,
        )
        if item.HasField("cards_compared"):
            ranks = (c.first_rank, c.second_rank) if w == a else (c.second_rank, c.first_rank)
            return say._(
                "Natural: {winner}'s {winner_natural} and {loser}'s {loser_natural} rank "
                "equal; compared from the top, card {card} is {winner_rank} against "
                "{loser_rank} — {winner} +{units}",
                card=say.num(c.card),
                winner_rank=say.rank(ranks[0]),
                loser_rank=say.rank(ranks[1]),
                **args,
            )
        return say._(
            "Natural: {winner}'s {winner_natural} outranks {loser}'s {loser_natural} — "
            "{winner} +{units}",
            **args,
        )
    w, o = (a, b) if pa.natural else (b, a)
    pw, po = f.player(w), f.player(o)
    if po.fouled:
        args = dict(
            player=w,
            natural=f.natural(say, w),
            other=o,
            reasons=say.reasons(po.foul_reasons),
            units=units,
        )
        if abs(item.units) == pw.natural_units:
            return say._(
                "Natural: {player}'s {natural} against {other}'s fouled hand ({reasons}); "
                "{other} pays the natural's {units} — {player} +{units}",
                **args,
            )
        return say._(
            "Natural: {player}'s {natural} against {other}'s fouled hand ({reasons}); "
            "{other} pays the foul penalty of {units}, more than the natural's "
            "{natural_units} — {player} +{units}",
            natural_units=say.num(pw.natural_units),
            **args,
        )
    return say._(
        "Natural: {player}'s {natural} wins automatically against {other} — {player} +{units}",
        player=w,
        natural=f.natural(say, w),
        other=o,
        units=units,
    )


def pair_sentence(say: Say, f: Facts, pr: pb.PairResult) -> str:
    """Who owes whom, and what a stack cut (RULES.md §10)."""
    if not pr.units:
        return say._("{first} and {second} settle 0", first=pr.first, second=pr.second)
    args = dict(payer=pr.payer, payee=pr.payee, owed=say.money(pr.owed), paid=say.money(pr.paid))
    # The plural forms below say "units" for every number in English, as the signed sentences
    # do (their words never change); a translation gives each plural form its own grammar.
    if pr.cap == pb.CAP_UNSPECIFIED:
        return say.ngettext(
            # TRANSLATORS: {owed} and {paid} are money in the settlement's currency.
            "{payer} owes {payee} {n} units = {owed}; {payer} pays {paid}",
            "{payer} owes {payee} {n} units = {owed}; {payer} pays {paid}",
            pr.units,
            **args,
        )
    if pr.cap == pb.CAP_PAYER_STACK:
        return say.ngettext(
            "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s stack: {payer} pays "
            "{paid}",
            "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s stack: {payer} pays "
            "{paid}",
            pr.units,
            **args,
        )
    if pr.cap == pb.CAP_PAYEE_STACK:
        return say.ngettext(
            "{payer} owes {payee} {n} units = {owed}; capped by {payee}'s stack: {payer} pays "
            "{paid}",
            "{payer} owes {payee} {n} units = {owed}; capped by {payee}'s stack: {payer} pays "
            "{paid}",
            pr.units,
            **args,
        )
    return say.ngettext(
        "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s and {payee}'s stacks: "
        "{payer} pays {paid}",
        "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s and {payee}'s stacks: "
        "{payer} pays {paid}",
        pr.units,
        **args,
    )


def player_sentence(say: Say, f: Facts, p: pb.PlayerResult) -> str:
    """A player's result: units, money after caps, rake, and why (RULES.md §4, §8-10)."""
    text = say.ngettext(
        "{player}: {units} units, {money} after caps",
        "{player}: {units} units, {money} after caps",
        p.net_units,
        player=p.player_id,
        units=say.plus(p.net_units),
        money=say.money(p.net_money, signed=True),
    )
    if p.rake:
        text = say._("{text} and {rake} rake", text=text, rake=say.money(p.rake))
    if p.fouled:
        return say._("{text}; fouled ({reasons})", text=text, reasons=say.reasons(p.foul_reasons))
    if p.natural:
        return say._(
            "{text}; natural: {natural}",
            text=text,
            natural=f.natural(say, p.player_id, jokers=False),
        )
    if p.surrendered:
        return say._("{text}; surrendered", text=text)
    return text


def fantasyland_sentence(
    say: Say, pid: str, status: int, rows: Any, fl: pb.FantasylandResult
) -> str:
    """Fantasyland next hand (RULES.md §11): entering, staying, leaving, or not."""
    if status == pb.PLAYER_STATUS_FOULED:
        return say._("{player} does not qualify for Fantasyland (fouled hand)", player=pid)
    if status == pb.PLAYER_STATUS_NATURAL:
        return say._("{player} does not qualify for Fantasyland (natural hand)", player=pid)
    if status == pb.PLAYER_STATUS_SURRENDERED:
        return say._("{player} does not qualify for Fantasyland (surrendered hand)", player=pid)
    by_row = {r.row: r for r in rows}
    if fl.in_fantasyland:
        if not fl.qualifies:
            return say._("{player} leaves Fantasyland: no stay condition met", player=pid)
        hand = _phrase(say, by_row.get(fl.row), jokers=False)
        if fl.row == profile_pb2.ROW_FRONT:
            return say.ngettext(
                "{player} stays in Fantasyland with {hand} in the front — {n} cards next hand",
                "{player} stays in Fantasyland with {hand} in the front — {n} cards next hand",
                fl.cards,
                player=pid,
                hand=hand,
            )
        if fl.row == profile_pb2.ROW_MIDDLE:
            return say.ngettext(
                "{player} stays in Fantasyland with {hand} in the middle — {n} cards next hand",
                "{player} stays in Fantasyland with {hand} in the middle — {n} cards next hand",
                fl.cards,
                player=pid,
                hand=hand,
            )
        if fl.row == profile_pb2.ROW_BACK:
            return say.ngettext(
                "{player} stays in Fantasyland with {hand} in the back — {n} cards next hand",
                "{player} stays in Fantasyland with {hand} in the back — {n} cards next hand",
                fl.cards,
                player=pid,
                hand=hand,
            )
        raise KeyError(fl.row)
    front = _phrase(say, by_row.get(profile_pb2.ROW_FRONT), jokers=False)
    if fl.qualifies:
        return say.ngettext(
            "{player} qualifies for Fantasyland with {hand} in front — {n} cards",
            "{player} qualifies for Fantasyland with {hand} in front — {n} cards",
            fl.cards,
            player=pid,
            hand=front,
        )
    return say._(
        "{player} does not qualify for Fantasyland ({hand} in front)", player=pid, hand=front
    )


def rake_sentence(say: Say, rake: int) -> str:
    return say._("Rake: {rake} to the house", rake=say.money(rake))


# --------------------------------------------------------------------------- shown


class Sentences:
    """The sentences of one settlement for a reader of ``lang``: each rendered from the
    fields, shown translated only when the fields say the signed English exactly."""

    def __init__(self, s: pb.Settlement, lang: Language) -> None:
        self.s = s
        self.lang = lang
        self.facts = Facts(s)
        self.say = Say(lang, s.currency)
        self.english = Say(lang if lang.code == SIGNED else Language.get(DEFAULT), s.currency)

    def _shown(self, signed: str, render: Callable[[Say], str]) -> Sentence:
        if self.lang.code == SIGNED:
            return Sentence(signed, SIGNED)
        try:
            if render(self.english) != signed:
                return Sentence(signed, SIGNED)
            return Sentence(render(self.say), self.lang.tag)
        except (KeyError, IndexError, ValueError, ZeroDivisionError):
            return Sentence(signed, SIGNED)  # fields that say nothing we know: the signed text

    def row(self, pr: pb.PairResult, r: pb.RowResult) -> Sentence:
        return self._shown(r.text, lambda say: row_sentence(say, self.facts, pr, r))

    def item(self, pr: pb.PairResult, item: pb.LineItem) -> Sentence:
        return self._shown(item.text, lambda say: item_sentence(say, self.facts, pr, item))

    def pair(self, pr: pb.PairResult) -> Sentence:
        return self._shown(pr.text, lambda say: pair_sentence(say, self.facts, pr))

    def player(self, p: pb.PlayerResult) -> Sentence:
        return self._shown(p.text, lambda say: player_sentence(say, self.facts, p))

    def hand(self, row: pb.EvaluatedRow) -> Sentence:
        """A row's hand by name ("Full de reyes y treses")."""
        return self._shown(row.name, lambda say: hand_name(say, row))

    def fantasyland(self, p: pb.PlayerResult) -> Sentence:
        return self._shown(
            p.fantasyland.text,
            lambda say: fantasyland_sentence(say, p.player_id, p.status, p.rows, p.fantasyland),
        )

    def totals(self) -> list[Sentence]:
        """Settlement.text: each player's sentence, then the rake's."""
        out = [self.player(p) for p in self.s.players]
        for text in list(self.s.text)[len(out) :]:
            out.append(self._shown(text, lambda say: rake_sentence(say, self.s.rake)))
        return out

    def pair_lines(self, pr: pb.PairResult) -> list[Sentence]:
        """A pair's explanation, as ValidatePayouts gives it: rows, items, the money line."""
        return (
            [self.row(pr, r) for r in pr.rows]
            + [self.item(pr, i) for i in pr.items]
            + [self.pair(pr)]
        )

    def explanation(self, pid: str) -> list[Sentence]:
        """A player's explanation, as ValidatePayouts gives it: his sentence, then each of his
        pairs' money line ("A v B: …")."""
        p = self.facts.players.get(pid)
        out = [self.player(p)] if p is not None else []
        for pr in self.s.pairs:
            if pid in (pr.first, pr.second):
                said = self.pair(pr)
                out.append(
                    Sentence(
                        self.lang._(
                            "{first} v {second}: {sentence}",
                            first=pr.first,
                            second=pr.second,
                            sentence=said.text,
                        )
                        if said.lang != SIGNED
                        else f"{pr.first} v {pr.second}: {said.text}",
                        said.lang,
                    )
                )
        return out


def all_sentences(s: pb.Settlement, lang: Language) -> list[Sentence]:
    """Every sentence of ``s`` as shown to a reader of ``lang``: each pair's rows, items and
    money line; each player's hands by name, his sentence and Fantasyland; the totals (the order
    of sentences.js's ``allSentences``, which a test compares with this)."""
    said = Sentences(s, lang)
    out: list[Sentence] = []
    for pr in s.pairs:
        out += said.pair_lines(pr)
    for p in s.players:
        out += [said.hand(r) for r in p.rows]
        out.append(said.player(p))
        if p.HasField("fantasyland"):
            out.append(said.fantasyland(p))
    return out + said.totals()


def evaluation_fantasyland(e: pb.EvaluateArrangementResponse, lang: Language) -> Sentence:
    """An EvaluateArrangement answer's Fantasyland sentence (the hand's owner is "player")."""
    signed = e.fantasyland.text
    if lang.code == SIGNED:
        return Sentence(signed, SIGNED)
    status = pb.PLAYER_STATUS_FOULED if e.fouled else pb.PLAYER_STATUS_REGULAR
    english = Say(Language.get(DEFAULT), "")
    try:
        if fantasyland_sentence(english, "player", status, e.rows, e.fantasyland) != signed:
            return Sentence(signed, SIGNED)
        return Sentence(
            fantasyland_sentence(Say(lang, ""), lang._("player"), status, e.rows, e.fantasyland),
            lang.tag,
        )
    except (KeyError, IndexError, ValueError):
        return Sentence(signed, SIGNED)


def english(s: pb.Settlement) -> Iterator[tuple[str, str, str]]:
    """Every sentence of ``s`` rendered in English from its fields alone, beside the signed
    one: (where, rendered, signed). What the tests hold to the signed text byte for byte."""
    say = Say(Language.get(DEFAULT), s.currency)
    f = Facts(s)
    for pr in s.pairs:
        where = f"{pr.first} v {pr.second}"
        for r in pr.rows:
            yield f"{where} row {r.row}", row_sentence(say, f, pr, r), r.text
        for i, item in enumerate(pr.items):
            yield f"{where} item {i}", item_sentence(say, f, pr, item), item.text
        yield where, pair_sentence(say, f, pr), pr.text
    for p in s.players:
        for hand in p.rows:
            yield f"{p.player_id} hand {hand.row}", hand_name(say, hand), hand.name
        yield p.player_id, player_sentence(say, f, p), p.text
        if p.HasField("fantasyland"):
            yield (
                f"{p.player_id} Fantasyland",
                fantasyland_sentence(say, p.player_id, p.status, p.rows, p.fantasyland),
                p.fantasyland.text,
            )
    players = [player_sentence(say, f, p) for p in s.players]
    rake = [rake_sentence(say, s.rake)] if s.rake else []
    for i, (rendered, signed) in enumerate(zip(players + rake, s.text, strict=True)):
        yield f"text {i}", rendered, signed


__all__ = [
    "JOKER",
    "SIGNED",
    "Facts",
    "Say",
    "Sentence",
    "Sentences",
    "all_sentences",
    "english",
    "evaluation_fantasyland",
    "fantasyland_sentence",
    "hand_name",
    "item_sentence",
    "pair_sentence",
    "player_sentence",
    "rake_sentence",
    "resolved_cards",
    "row_sentence",
]
