"""The largest profiles the rules allow: every table at its bound, every text at its length."""

from __future__ import annotations

from typing import Any

from cpsettle_service.domain.hands import HandClass
from cpsettle_service.domain.naturals import Natural
from cpsettle_service.domain.profile import FRONT_CLASSES, load_preset, profile_to_dict

RANKS = "23456789TJQKA"


def maximal_profile(n: int) -> dict[str, Any]:
    """A valid profile holding the most the rules allow, distinct for each ``n``: every royalty
    entry (296), every progressive threshold (42), every natural, a 2,000-character description."""
    data = profile_to_dict(load_preset("ofc"))
    data["name"] = f"max-{n:08d}-" + "n" * 50
    data["description"] = f"{n:08d}" + "d" * 1992
    table = []
    for row in ("FRONT", "MIDDLE", "BACK"):
        classes = FRONT_CLASSES if row == "FRONT" else set(HandClass)
        for hc in sorted(classes, key=lambda c: c.order):
            table.append({"row": row, "handClass": hc.value, "units": 1 + n % 1000})
            if hc is not HandClass.ROYAL_FLUSH:
                table += [{"row": row, "handClass": hc.value, "rank": r, "units": 2}
                          for r in RANKS]
    data["royalties"] = {"mode": "ON_WIN_ADDED", "table": table}
    progressive = []
    for hc in sorted(FRONT_CLASSES, key=lambda c: c.order):
        progressive.append({"handClass": hc.value, "cards": 14})
        progressive += [{"handClass": hc.value, "rank": r, "cards": 15} for r in RANKS]
    data["fantasyland"]["progressive"] = progressive
    data["naturals"]["table"] = [{"natural": x.value, "rank": i, "units": 3 + i}
                                 for i, x in enumerate(Natural)]
    return data
