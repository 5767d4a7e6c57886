"""Checking at engine speed: a line read, mapped straight to the domain, settled and compared.

A re-audit needs each hand's correct nets, and the itemized evidence only where the recorded
payouts differ or the hand is invalid. So a local audit first tries every line the quick way:

1. ``orjson`` reads the line (4.5 µs of CPU a line of the generated day; msgspec 4.9, the
   standard library's ``json`` 9.0, ``strict_json`` with its duplicate-key check 18: orjson,
   already a dependency, is the fastest here);
2. ``plain_table`` maps the JSON object straight to the domain's ``Table`` (no
   ``SettleRequest`` message, no ``json_format``), but only when it has the plain shape that
   ``SettleRequest``'s JSON reading and ``api.mapping`` provably read the same way: known
   camelCase keys, values of exactly the right JSON type, numbers in their proto field's
   range, counts and lengths within ``api.bounds``, no ``null``, no inline ``profile``;
3. the profile comes from the servicer's own resolver (``LocalService.profile_for``: overrides
   as the same ``Struct``), the engine settles (``settle``: sentences are built only when
   read), and each player's ``netMoney`` is compared with the recorded amount.

A hand whose every player was paid exactly its net (or that carries no recorded payouts) adds
one to the counts and the tallies of its table and dealer, and nothing else: that is all the
report says of it. Anything else: a line the quick way cannot read exactly as the full way would
(not UTF-8, not JSON, a duplicate key, an unusual shape), a hand the engine refuses, a payout
that differs, a player missing from the payouts, is handed back (``None``) and goes through the
full way, ``reading.prepare`` and ``LocalService.settle_batch``: the servicer's own stream code,
which writes the settlement's bytes, seals it and explains each difference, exactly as before.
So the report is the same whichever way a line went (``tests/audit/test_quick.py`` holds the two
ways to it on every preset, invalid lines and planted mistakes included).

A duplicate key: ``orjson`` keeps the last of two equal keys where the full way refuses the
line. Every key of a JSON object is a string followed by optional white space and a colon, and
each such ``"``, white space, ``:`` ends at a colon of its own, so the line holds at least as
many of them as it names keys, and as many as the objects read hold keys only if no key came
twice; otherwise the line takes the full way. (The usual line, with no colon but those after
keys, is told by two ``bytes.count``.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from cpsettle_service.domain.profile import RuleProfile
    from cpsettle_service.local import LocalService, Table

RECORDED_FIELD = "recordedPayouts"
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

# SettleRequest's fields in their JSON (camelCase) names; ``profile`` (an inline RuleProfile)
# is left to the full way.
_TOP = frozenset(
    {
        "handId",
        "tableId",
        "roundId",
        "dealerId",
        "preset",
        "profileOverrides",
        "unitValue",
        "buttonSeat",
        "players",
        "deadCards",
        "currency",
        RECORDED_FIELD,
    }
)
_PLAYER = frozenset(
    {
        "playerId",
        "seat",
        "arrangement",
        "cards",
        "declaredNatural",
        "surrender",
        "stack",
        "inFantasyland",
    }
)
_ROWS = frozenset({"front", "middle", "back"})
_KEY_END = re.compile(rb'"[ \t\r\n]*:')

# the bounds of api/bounds.py (imported once the engine is)
_MAX_ID = 128
_MAX_NAME = 64
_MAX_PLAYERS = 4
_MAX_HAND = 13
_MAX_DEAD = 52


def _bounds() -> None:
    global _MAX_ID, _MAX_NAME, _MAX_PLAYERS, _MAX_HAND, _MAX_DEAD
    from cpsettle_service.api import bounds

    _MAX_ID, _MAX_NAME = bounds.MAX_ID_CHARS, bounds.MAX_NAME_CHARS
    _MAX_PLAYERS, _MAX_HAND, _MAX_DEAD = (
        bounds.MAX_PLAYERS,
        bounds.MAX_HAND_CARDS,
        bounds.MAX_DEAD_CARDS,
    )


class _NotPlain(Exception):
    """The line takes the full way."""


def _int(value: Any, bounds: tuple[int, int]) -> int:
    if type(value) is not int or not bounds[0] <= value <= bounds[1]:
        raise _NotPlain
    return value


def _text(value: Any, limit: int | None = _MAX_ID) -> str:
    if type(value) is not str or (limit is not None and len(value) > limit):
        raise _NotPlain
    return value


_STR = {str}


def _cards(value: Any, limit: int | None = None) -> tuple[str, ...]:
    """A row or a hand of cards: a list of at most ``limit`` (a hand's 13) strings (``None``, a
    number: not plain). The types are gathered in C (``set(map(type, …))``): a loop here cost a
    tenth of mapping a hand."""
    if (
        type(value) is not list
        or len(value) > (_MAX_HAND if limit is None else limit)
        or (value and set(map(type, value)) != _STR)
    ):
        raise _NotPlain
    return tuple(value)


def _keys(value: Any) -> int:
    """How many keys the objects in ``value`` hold, all the way down."""
    if type(value) is dict:
        return len(value) + sum(_keys(v) for v in value.values())
    if type(value) is list:
        return sum(_keys(v) for v in value)
    return 0


def _amount(value: Any) -> int:
    """A recorded amount as ``reading.prepare`` reads it (an integer, or digits in a string),
    within int64 (the ``ProposedPayout`` it would become)."""
    if type(value) is str:
        try:
            value = int(value.strip())
        except ValueError:
            raise _NotPlain from None
    return _int(value, INT64)


class QuickChecker:
    """``check`` one line the quick way; profiles resolved once per preset and overrides."""

    def __init__(self, service: LocalService) -> None:
        from cpsettle_service.local import AuditContext, PlayerInput, Table

        _bounds()
        self.service = service
        self._table, self._player, self._context = Table, PlayerInput, AuditContext
        self._profiles: dict[tuple[str, bytes | None], RuleProfile] = {}

    def _profile(self, preset: str, overrides: Any) -> RuleProfile:
        key = (
            preset,
            None if overrides is None else orjson.dumps(overrides, option=orjson.OPT_SORT_KEYS),
        )
        profile = self._profiles.get(key)
        if profile is None:
            try:
                profile = self.service.profile_for(preset, overrides)
            except Exception:  # refused: the full way says why
                raise _NotPlain from None
            if len(self._profiles) >= 256:
                self._profiles.clear()
            self._profiles[key] = profile
        return profile

    def plain_table(self, data: dict[str, Any]) -> tuple[Table, str, Any, int]:
        """(table, preset, overrides, how many keys its objects hold, all the way down) of a
        plain ``SettleRequest`` object; ``_NotPlain`` otherwise. ``recordedPayouts`` is not
        read here (its keys are counted)."""
        keys = len(data)
        if not data.keys() <= _TOP or None in data.values():
            raise _NotPlain
        get = data.get
        overrides = get("profileOverrides")
        if overrides is not None:
            if type(overrides) is not dict:
                raise _NotPlain
            keys += _keys(overrides)
        recorded = get(RECORDED_FIELD)
        if type(recorded) is dict:
            keys += len(recorded)
        players_in = get("players", [])
        if type(players_in) is not list or len(players_in) > _MAX_PLAYERS:
            raise _NotPlain
        players = []
        new_player = self._player
        for p in players_in:
            if type(p) is not dict:
                raise _NotPlain
            keys += len(p)
            if not p.keys() <= _PLAYER or None in p.values():
                raise _NotPlain
            front = middle = back = None
            arrangement = p.get("arrangement")
            if arrangement is not None:
                if type(arrangement) is not dict:
                    raise _NotPlain
                keys += len(arrangement)
                if not arrangement.keys() <= _ROWS:
                    raise _NotPlain
                front = _cards(arrangement.get("front", []))
                middle = _cards(arrangement.get("middle", []))
                back = _cards(arrangement.get("back", []))
            cards = p.get("cards")
            stack = p.get("stack")
            surrender = p.get("surrender", False)
            in_fantasyland = p.get("inFantasyland", False)
            if type(surrender) is not bool or type(in_fantasyland) is not bool:
                raise _NotPlain
            players.append(
                new_player(  # PlayerInput's fields in order (positional: faster)
                    _text(p.get("playerId", "")),  # player_id
                    _int(p.get("seat", 0), INT32),  # seat
                    front,
                    middle,
                    back,
                    # cards: an empty repeated field is no field (api.mapping reads [] as none)
                    _cards(cards) or None if cards is not None else None,
                    _text(p.get("declaredNatural", ""), None),  # declared_natural
                    surrender,
                    None if stack is None else _int(stack, INT64),  # stack
                    in_fantasyland,
                )
            )
        dead = get("deadCards")
        unit = get("unitValue")
        button = get("buttonSeat")
        table = self._table(
            players=tuple(players),
            button_seat=None if button is None else _int(button, INT32),
            dead_cards=() if dead is None else _cards(dead, _MAX_DEAD),
            context=self._context(
                _text(get("handId", "")),
                _text(get("tableId", "")),
                _text(get("roundId", "")),
                _text(get("dealerId", "")),
            ),
            unit_value=None if unit is None else _int(unit, INT64),
            currency=_text(get("currency", ""), None),
        )
        return table, _text(get("preset", ""), _MAX_NAME), overrides, keys

    def check(self, raw: bytes) -> tuple[str, str, bool] | None:
        """(table id, dealer id, whether payouts were recorded) of a hand settled and matched
        (or settled, none recorded); ``None``: the line takes the full way."""
        try:
            data = orjson.loads(raw)
            if type(data) is not dict:
                return None
            table, preset, overrides, keys = self.plain_table(data)
            recorded = data.get(RECORDED_FIELD)
            paid: dict[str, int] | None = None
            if recorded is not None:
                if type(recorded) is not dict:
                    return None
                paid = {pid: _amount(v) for pid, v in recorded.items()} if recorded else None
            # No key twice (see the module's docstring).
            colons = raw.count(b'":')
            if (colons != keys or raw.count(b":") != colons) and len(_KEY_END.findall(raw)) != keys:
                return None
            settlement = self.service.settle_table(table, self._profile(preset, overrides))
        except (_NotPlain, orjson.JSONDecodeError):
            return None
        except Exception:  # refused by the engine: the full way says why
            return None
        if paid is not None:
            players = settlement.players
            if len(paid) != len(players):
                return None
            for p in players:
                if paid.get(p.player_id) != p.net_money:
                    return None
        ctx = table.context
        return ctx.table_id, ctx.dealer_id, paid is not None
