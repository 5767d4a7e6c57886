"""The request bounds' quick check (no paths written) agrees with the full one at every bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.api import bounds

B = bounds
Grow = Callable[[pb.SettleRequest], None]  # a change to a request


def request() -> pb.SettleRequest:
    req = pb.SettleRequest(preset="western", hand_id="h")
    for i in range(3):
        p = req.players.add(player_id=f"p{i}", seat=i)
        p.arrangement.front.extend(["As"] * 3)
    return req


def ids(n: int, field: str) -> Grow:
    return lambda r: setattr(r, field, "x" * n)


def player(n: int, what: str) -> Grow:
    def grow(r: pb.SettleRequest) -> None:
        p = r.players[1]
        if what == "player_id":
            p.player_id = "x" * n
        elif what == "cards":
            p.cards.extend(["Ks"] * n)
        else:
            row = getattr(p.arrangement, what)
            del row[:]
            row.extend(["Ks"] * n)

    return grow


def players(n: int) -> Grow:
    def grow(r: pb.SettleRequest) -> None:
        for i in range(n - 3):
            r.players.add(player_id=f"q{i}", seat=10 + i)

    return grow


# (what, set to the bound, set one past it, the violation's path)
CASES = [
    *[(f, ids(B.MAX_ID_CHARS, f), ids(B.MAX_ID_CHARS + 1, f), path) for path, f in B._IDS],
    ("preset", ids(B.MAX_NAME_CHARS, "preset"), ids(B.MAX_NAME_CHARS + 1, "preset"), "preset"),
    (
        "dead cards",
        lambda r: r.dead_cards.extend(["2c"] * B.MAX_DEAD_CARDS),
        lambda r: r.dead_cards.extend(["2c"] * (B.MAX_DEAD_CARDS + 1)),
        "deadCards",
    ),
    ("players", players(B.MAX_PLAYERS), players(B.MAX_PLAYERS + 1), "players"),
    (
        "player id",
        player(B.MAX_ID_CHARS, "player_id"),
        player(B.MAX_ID_CHARS + 1, "player_id"),
        "players[1].playerId",
    ),
    *[
        (
            row,
            player(B.MAX_HAND_CARDS, row),
            player(B.MAX_HAND_CARDS + 1, row),
            f"players[1].{'cards' if row == 'cards' else 'arrangement.' + row}",
        )
        for row in ("cards", "front", "middle", "back")
    ],
]


@pytest.mark.parametrize("what, at, past, path", CASES, ids=[c[0] for c in CASES])
def test_each_bound_holds_at_its_limit_and_is_named_past_it(
    what: str, at: Grow, past: Grow, path: str
) -> None:
    ok = request()
    at(ok)
    assert bounds.settle_request_problems(ok) == []
    bad = request()
    past(bad)
    assert [v.field for v in bounds.settle_request_problems(bad)] == [path]


def test_an_inline_profile_is_measured() -> None:
    req = request()
    req.profile.name = "x" * (B.MAX_PROFILE_BYTES + 1)
    assert [v.field for v in bounds.settle_request_problems(req)] == ["profile"]
    req.profile.name = "house"
    assert bounds.settle_request_problems(req) == []
