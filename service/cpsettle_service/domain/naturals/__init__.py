"""Naturals (RULES.md §8, §16.1): the catalogue (``catalogue``), the clauses a house natural is
defined with (``vocabulary``) and the facts of 13 cards the checks read (``facts``).

>>> from cpsettle_service.domain.cards import parse_cards
>>> from cpsettle_service.domain.naturals import Natural, holds
>>> holds(Natural.DRAGON, parse_cards("2s 3h 4d 5c 6s 7h 8d 9c Ts Jh Qd Kc As"))
True
"""

from .catalogue import (
    BUILTIN_DEFINITIONS,
    PREDICATES,
    SPLIT_NATURALS,
    Natural,
    builtin_definition,
    builtin_predicate,
    find_split,
    holds,
    naturals_held,
)
from .facts import HandFacts, MultisetFacts, hand_facts, multiset_facts
from .vocabulary import (
    MAX_GROUP,
    Definition,
    Predicate,
    RowClass,
    RowsClause,
    compile_definition,
    definition_from_dict,
    definition_to_dict,
    read_definition,
)

__all__ = [
    "BUILTIN_DEFINITIONS",
    "MAX_GROUP",
    "PREDICATES",
    "SPLIT_NATURALS",
    "Definition",
    "HandFacts",
    "MultisetFacts",
    "Natural",
    "Predicate",
    "RowClass",
    "RowsClause",
    "builtin_definition",
    "builtin_predicate",
    "compile_definition",
    "definition_from_dict",
    "definition_to_dict",
    "find_split",
    "hand_facts",
    "holds",
    "multiset_facts",
    "naturals_held",
    "read_definition",
]
