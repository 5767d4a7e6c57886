"""The rules engine: pure Python, the standard library only (RULES.md). No I/O, no clock, no
protobuf: a request's data in, a settlement's data out.

The wings, each using only those below it:

==============  ===================================================================
``settle``      a hand settled: table, validation, evaluation, jokers, fouls,
                royalties, pairs, money, payouts, results (RULES.md §4-11, §16.3)
``profile``     rule profiles: the model, its JSON form, the registry, currencies
``naturals``    the catalogue, the clauses of house naturals, the facts of 13 cards
``reading``     the strict JSON reader and the declared fields with their bounds
``cards``       cards, rows and hands
``errors``      ``InvalidInput`` with every violation, and the base of every error
==============  ===================================================================

This face offers what the service and the clients call; each wing's own face offers the rest.
"""

from .errors import CpsettleError, InvalidInput, Violation, ViolationCode
from .profile import (
    ProfileRegistry,
    RegisteredProfile,
    RuleProfile,
    apply_overrides,
    profile_from_dict,
    profile_to_dict,
)
from .settle import (
    AuditContext,
    HandEvaluation,
    PayoutReport,
    PlayerInput,
    ProfileChoice,
    Settlement,
    Table,
    check_payouts,
    evaluate_hand,
    request_from_dict,
    resolve_profile,
    settle,
)

__all__ = [
    "AuditContext",
    "CpsettleError",
    "HandEvaluation",
    "InvalidInput",
    "PayoutReport",
    "PlayerInput",
    "ProfileChoice",
    "ProfileRegistry",
    "RegisteredProfile",
    "RuleProfile",
    "Settlement",
    "Table",
    "Violation",
    "ViolationCode",
    "apply_overrides",
    "check_payouts",
    "evaluate_hand",
    "profile_from_dict",
    "profile_to_dict",
    "request_from_dict",
    "resolve_profile",
    "settle",
]
