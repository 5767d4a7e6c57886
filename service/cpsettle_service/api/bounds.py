"""What a request may hold, checked on counts and lengths before any item is read.

A request within the message-size limit can still hold 200,000 dead cards or 12,000 players;
validating each item (and reporting each as a violation) cost up to 1.5 s of server CPU. The
rules allow far less (RULES.md §2, §15), so counts past these bounds are refused at once with one
violation each, and the domain only ever validates a table of at most the rules' size.

The bounds are the rules' own (a table seats 2-4 players; a hand is 13 cards; a deck is 52
cards) or, for identifiers, generous limits written in the proto comments.
"""

from __future__ import annotations

from typing import Any

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..domain.profile.model import RuleProfile
from ..domain.reading.schema import maximum

MAX_PLAYERS = 4  # RULES.md §15: 2 to 4 players
MAX_HAND_CARDS = 13  # a row, or a player's loose cards, holds at most one whole hand
MAX_DEAD_CARDS = 52  # one deck (RULES.md §2)
MAX_PAIRS = MAX_PLAYERS * (MAX_PLAYERS - 1) // 2  # 6 pairs at a table of 4
# Proposed payouts: one per player or pair, and as many again, so that a dealer's mistaken
# names are still reported one by one (an unknown player is the domain's violation).
MAX_PROPOSED = 2 * MAX_PLAYERS
MAX_PROPOSED_PAIRS = 2 * MAX_PAIRS
MAX_ID_CHARS = 128  # hand, table, round, dealer and player ids
MAX_NAME_CHARS = maximum(RuleProfile, "name")  # a preset's name, bounded as a profile's is
# A maximal valid profile (every table at its bound, DECISIONS.md decision 23) is about 11 KB
# as a RuleProfile and 30 KB as overrides (a Struct); an inline profile or overrides past this
# cannot be valid and is refused before it is decoded.
MAX_PROFILE_BYTES = 48 * 1024
# The largest a valid Settle, ValidatePayouts or EvaluateArrangement request can be: an inline
# profile and overrides at their bound (96 KiB) and a table at the bounds above (under 8 KiB).
# Larger bytes are refused before they are parsed: parsing 200,000 dead cards alone took 9 ms.
MAX_REQUEST_BYTES = 128 * 1024

_IDS = (
    ("handId", "hand_id"),
    ("tableId", "table_id"),
    ("roundId", "round_id"),
    ("dealerId", "dealer_id"),
)


def _count(
    out: list[Violation], path: str, n: int, limit: int, what: str, code: ViolationCode
) -> bool:
    if n > limit:
        out.append(Violation(path, f"holds {n} {what}; at most {limit} are allowed", code))
        return False
    return True


def _length(out: list[Violation], path: str, value: str, limit: int) -> None:
    if len(value) > limit:
        out.append(
            Violation(
                path,
                f"is {len(value)} characters long; at most {limit} are allowed",
                ViolationCode.OTHER,
            )
        )


def _profile_size(out: list[Violation], msg: Any) -> None:
    for name, path in (("profile", "profile"), ("profile_overrides", "profileOverrides")):
        if msg.HasField(name):
            size = getattr(msg, name).ByteSize()
            if size > MAX_PROFILE_BYTES:
                out.append(
                    Violation(
                        path,
                        f"is {size} bytes; a valid profile is at most {MAX_PROFILE_BYTES}",
                        ViolationCode.PROFILE,
                    )
                )


def _cards(out: list[Violation], path: str, cards: Any) -> None:
    _count(out, path, len(cards), MAX_HAND_CARDS, "cards", ViolationCode.ROW_SIZE)


def _settle_request_fits(req: Any) -> bool:
    """True when no count or length of a ``SettleRequest`` (without an inline profile or
    overrides) is past its bound: the usual case, answered without writing a single path (on
    every Settle, the paths cost as much as the rest of the request's mapping)."""
    if (
        len(req.players) > MAX_PLAYERS
        or len(req.dead_cards) > MAX_DEAD_CARDS
        or len(req.preset) > MAX_NAME_CHARS
        or req.HasField("profile")
        or req.HasField("profile_overrides")
    ):
        return False
    if (
        max(len(req.hand_id), len(req.table_id), len(req.round_id), len(req.dealer_id))
        > MAX_ID_CHARS
    ):
        return False
    for p in req.players:
        a = p.arrangement
        if (
            len(p.player_id) > MAX_ID_CHARS
            or max(len(p.cards), len(a.front), len(a.middle), len(a.back)) > MAX_HAND_CARDS
        ):
            return False
    return True


def settle_request_problems(req: Any) -> list[Violation]:
    """Every count and length of a ``SettleRequest`` past its bound (the items unread)."""
    if _settle_request_fits(req):
        return []
    out: list[Violation] = []
    for path, name in _IDS:
        _length(out, path, getattr(req, name), MAX_ID_CHARS)
    _length(out, "preset", req.preset, MAX_NAME_CHARS)
    _count(out, "deadCards", len(req.dead_cards), MAX_DEAD_CARDS, "cards", ViolationCode.OTHER)
    _profile_size(out, req)
    players = req.players
    if _count(out, "players", len(players), MAX_PLAYERS, "players", ViolationCode.PLAYER_COUNT):
        for i, p in enumerate(players):
            at = f"players[{i}]"
            _length(out, f"{at}.playerId", p.player_id, MAX_ID_CHARS)
            _cards(out, f"{at}.cards", p.cards)
            a = p.arrangement
            for row, cards in (("front", a.front), ("middle", a.middle), ("back", a.back)):
                _cards(out, f"{at}.arrangement.{row}", cards)
    return out


def check_settle_request(req: Any) -> None:
    """Raise ``InvalidInput`` when a ``SettleRequest`` holds more than the rules allow."""
    problems = settle_request_problems(req)
    if problems:
        raise InvalidInput(problems)


def check_proposals(items: Any, path: str) -> None:
    """The bounds of proposed or recorded payouts (``ProposedPayout``: one per player)."""
    out: list[Violation] = []
    if _count(out, path, len(items), MAX_PROPOSED, "payouts", ViolationCode.PLAYER_COUNT):
        for i, p in enumerate(items):
            _length(out, f"{path}[{i}].playerId", p.player_id, MAX_ID_CHARS)
    if out:
        raise InvalidInput(out)


def check_pairs(pairs: Any) -> None:
    """The bounds of a ``ValidatePayoutsRequest``'s proposed pair payouts."""
    out: list[Violation] = []
    if _count(out, "proposedPairs", len(pairs), MAX_PROPOSED_PAIRS, "pairs", ViolationCode.OTHER):
        for i, p in enumerate(pairs):
            _length(out, f"proposedPairs[{i}].first", p.first, MAX_ID_CHARS)
            _length(out, f"proposedPairs[{i}].second", p.second, MAX_ID_CHARS)
    if out:
        raise InvalidInput(out)


def check_evaluate_request(req: Any) -> None:
    """The bounds of an ``EvaluateArrangementRequest``."""
    out: list[Violation] = []
    _length(out, "preset", req.preset, MAX_NAME_CHARS)
    _profile_size(out, req)
    _cards(out, "cards", req.cards)
    a = req.arrangement
    for row, cards in (("front", a.front), ("middle", a.middle), ("back", a.back)):
        _cards(out, f"arrangement.{row}", cards)
    if out:
        raise InvalidInput(out)
