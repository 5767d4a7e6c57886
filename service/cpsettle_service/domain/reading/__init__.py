"""Reading JSON in: the strict reader that names every problem with its path
(``reader``), and the declared fields of a profile's parts with their bounds (``schema``).

Both are shared by the profile and the naturals' definitions; nothing here knows a rule.
"""

from .reader import Reader, describe, json_name, parse_enum, read_card_rank

__all__ = ["Reader", "describe", "json_name", "parse_enum", "read_card_rank"]
