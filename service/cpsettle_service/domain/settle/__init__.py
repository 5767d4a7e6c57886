"""Settling a hand (RULES.md §4-11, §16.3): the table, then each room in the order ``settle``
runs it — validation, evaluation (jokers first), pairs, money — and the results with their
sentences; ``check_payouts`` holds a dealer's proposed payouts against a settlement.

>>> from cpsettle_service.domain.settle import request_from_dict, resolve_profile, settle
>>> from cpsettle_service.profile_files import builtin_registry
>>> table, choice = request_from_dict({"preset": "one-six", "players": [
...     {"playerId": "A", "seat": 1, "arrangement": {"front": ["Qc", "Qd", "2h"],
...      "middle": ["9c", "9d", "9h", "2c", "3d"], "back": ["Ts", "Js", "Qs", "Ks", "As"]}},
...     {"playerId": "B", "seat": 2, "arrangement": {"front": ["2d", "3c", "5d"],
...      "middle": ["6s", "6h", "7d", "8c", "Tc"], "back": ["Jh", "Jd", "Qh", "Kh", "4c"]}}]})
>>> settlement = settle(table, resolve_profile(choice, builtin_registry()))
>>> [p.net_units for p in settlement.players]  # A wins all three rows: 3 + the scoop bonus 3
[6, -6]
"""

from .evaluation import HandEvaluation, evaluate_hand
from .payouts import PairCheck, PayoutCheck, PayoutReport, check_payouts, pair_explanation
from .results import (
    EvaluatedRow,
    FantasylandResult,
    FoulReason,
    HeldNatural,
    ItemKind,
    LineItem,
    PairKind,
    PairResult,
    PlayerResult,
    RowResult,
    Settlement,
    Status,
    row_text,
)
from .settlement import settle
from .table import (
    AuditContext,
    PlayerInput,
    ProfileChoice,
    Table,
    request_from_dict,
    resolve_profile,
)
from .validation import MAX_PLAYERS, MIN_PLAYERS

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "AuditContext",
    "EvaluatedRow",
    "FantasylandResult",
    "FoulReason",
    "HandEvaluation",
    "HeldNatural",
    "ItemKind",
    "LineItem",
    "PairCheck",
    "PairKind",
    "PairResult",
    "PayoutCheck",
    "PayoutReport",
    "PlayerInput",
    "PlayerResult",
    "ProfileChoice",
    "RowResult",
    "Settlement",
    "Status",
    "Table",
    "check_payouts",
    "evaluate_hand",
    "pair_explanation",
    "request_from_dict",
    "resolve_profile",
    "row_text",
    "settle",
]
