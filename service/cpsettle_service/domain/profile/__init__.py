"""Rule profiles (RULES.md §12, §17): the model (``model``), its JSON form read and written
(``parse``), the registry of profiles offered by name (``registry``) and the currencies a table
may play in (``currencies``). The presets themselves are data: ``presets/*.json``.

>>> from cpsettle_service.domain.profile import apply_overrides, profile_from_dict
>>> house = profile_from_dict({"name": "house", "caps": {"losses": True, "wins": True}})
>>> capped = apply_overrides(house, {"caps": {"wins": False}}).caps
>>> (capped.losses, capped.wins)
(True, False)
"""

from .currencies import MINOR_UNITS, NO_CURRENCY, currency_problem
from .model import (
    DEFAULT_SUIT_ORDER,
    FRONT_CLASSES,
    MAX_MONEY,
    MAX_NATURAL_ENTRIES,
    MAX_UNIT_VALUE,
    CapBasis,
    CapOrder,
    Caps,
    Deck,
    Foul,
    FoulPenalty,
    HouseNatural,
    Money,
    NaturalEntry,
    Naturals,
    NaturalTie,
    RakeMode,
    RowTie,
    Royalties,
    RoyaltyMode,
    RuleProfile,
    Scoring,
    Surrender,
    VsFoul,
)
from .parse import EXTENSION_DEFAULTS, apply_overrides, profile_from_dict, profile_to_dict
from .registry import ProfileRegistry, RegisteredProfile

__all__ = [
    "DEFAULT_SUIT_ORDER",
    "EXTENSION_DEFAULTS",
    "FRONT_CLASSES",
    "MAX_MONEY",
    "MAX_NATURAL_ENTRIES",
    "MAX_UNIT_VALUE",
    "MINOR_UNITS",
    "NO_CURRENCY",
    "CapBasis",
    "CapOrder",
    "Caps",
    "Deck",
    "Foul",
    "FoulPenalty",
    "HouseNatural",
    "Money",
    "NaturalEntry",
    "NaturalTie",
    "Naturals",
    "ProfileRegistry",
    "RakeMode",
    "RegisteredProfile",
    "Royalties",
    "RoyaltyMode",
    "RowTie",
    "RuleProfile",
    "Scoring",
    "Surrender",
    "VsFoul",
    "apply_overrides",
    "currency_problem",
    "profile_from_dict",
    "profile_to_dict",
]
