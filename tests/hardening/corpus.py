"""A deterministic corpus of Settle payloads that the service must answer INVALID_ARGUMENT.

Every payload is either bytes that do not decode as a ``SettleRequest`` (checked here, so a
cut or a flipped byte that happens to leave a valid message is not counted), or a decodable
message whose content is wrong by construction: absurd counts, huge strings, negative numbers,
unknown names, a required field sent with the wrong wire type, a broken table.
"""

from __future__ import annotations

import copy
import random
import string
from collections.abc import Callable, Iterator
from typing import Any

from google.protobuf.message import DecodeError

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import request_from_json
from tests.hardening.support import length_delimited, tag, varint
from tests.support.tables import ARRANGEMENTS, table

Payload = tuple[str, bytes]

# Under the test server's 1 MiB limit (with room for the frame): these must be *parsed*.
MAX_PAYLOAD = 1024 * 1024 - 64

ENUM_FIELDS = [  # inline-profile enum settings: an unknown number is refused
    ("royalties", "mode"),
    ("foul", "penalty"),
    ("naturals", "vsFoul"),
    ("caps", "basis"),
    ("caps", "order"),
    ("rake", "mode"),
    ("ranking", "wheel"),
    ("ranking", "rowTie"),
]
NUMBER_FIELDS = [  # profile numbers that must not be negative
    ("scoring", "rowUnit"),
    ("scoring", "majorityBonus"),
    ("scoring", "scoopBonus"),
    ("scoring", "scoopMultiplier"),
    ("foul", "fixedUnits"),
    ("surrender", "units"),
    ("money", "unitValue"),
    ("rake", "perPlayerFee"),
    ("rake", "commissionBps"),
    ("rake", "commissionCap"),
    ("fantasyland", "entryCards"),
    ("fantasyland", "stayCards"),
]


def _decodes(data: bytes) -> bool:
    try:
        pb.SettleRequest.FromString(data)
    except (DecodeError, ValueError, RuntimeError):
        return False
    return True


def _word(rng: random.Random, lo: int = 1, hi: int = 24) -> str:
    alphabet = string.ascii_letters + string.digits + "_-♠♥é\u00a0"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


class Corpus:
    def __init__(self, seed: int = 20261130) -> None:
        self.rng = random.Random(seed)
        self.base_json = table()
        self.base = request_from_json(self.base_json).SerializeToString()
        from cpsettle_service.domain.profile.parse import profile_to_dict
        from cpsettle_service.profile_files import load_preset

        self.profile_json = profile_to_dict(load_preset("western"))
        self.inline = self._inline_profile_request()

    # ------------------------------------------------------------------ bytes that don't decode

    def random_bytes(self) -> bytes:
        while True:
            data = self.rng.randbytes(self.rng.randint(1, 600))
            if not _decodes(data):  # the few that decode (as unknown fields) are checked below
                return data

    def random_bytes_that_decode(self) -> bytes:
        """Random field soup that happens to decode: unknown fields, no table at all."""
        rng = self.rng
        out = bytearray()
        for _ in range(rng.randint(1, 12)):
            field = rng.choice([12, 13, 15, 99, 1000, 536870911])
            kind = rng.choice([0, 1, 2, 5])
            out += tag(field, kind)
            if kind == 0:
                out += varint(rng.getrandbits(64))
            elif kind == 1:
                out += rng.randbytes(8)
            elif kind == 5:
                out += rng.randbytes(4)
            else:
                blob = rng.randbytes(rng.randint(0, 64))
                out += varint(len(blob)) + blob
        return bytes(out)

    def truncated(self) -> bytes:
        source = self.base if self.rng.random() < 0.7 else self.inline
        while True:
            cut = self.rng.randint(1, len(source) - 1)
            if not _decodes(source[:cut]):
                return source[:cut]

    def corrupted(self) -> bytes:
        while True:
            data = bytearray(self.base)
            for _ in range(self.rng.randint(1, 6)):
                i = self.rng.randrange(len(data))
                action = self.rng.random()
                if action < 0.5:
                    data[i] = self.rng.randrange(256)
                elif action < 0.75:
                    data[i:i] = self.rng.randbytes(self.rng.randint(1, 8))
                else:
                    del data[i : i + self.rng.randint(1, 8)]
            if not _decodes(bytes(data)):
                return bytes(data)

    # ------------------------------------------------------------------ wrong wire types

    def wrong_wire_type(self) -> bytes:
        """A required field re-encoded with another wire type (proto: it becomes unknown)."""
        rng = self.rng
        request = pb.SettleRequest.FromString(self.base)

        def wrong(field: int) -> bytes:
            kind = rng.choice([0, 1, 5])
            return (
                tag(field, kind)
                + {
                    0: varint(rng.getrandbits(rng.choice([7, 32, 64]))),
                    1: rng.randbytes(8),
                    5: rng.randbytes(4),
                }[kind]
            )

        target = rng.choice(["preset", "players", "arrangement", "card"])
        if target == "preset":
            request.ClearField("preset")
            return request.SerializeToString() + wrong(5)
        if target == "players":
            players = list(request.players)
            request.ClearField("players")
            keep = rng.randint(0, 1)  # a table needs 2 players: at most one survives
            out = request.SerializeToString()
            for i, p in enumerate(players):
                out += length_delimited(10, p.SerializeToString()) if i < keep else wrong(10)
            return out
        victim = rng.randrange(len(request.players))
        players = list(request.players)
        request.ClearField("players")
        out = request.SerializeToString()
        for i, p in enumerate(players):
            if i != victim:
                out += length_delimited(10, p.SerializeToString())
                continue
            if target == "arrangement":  # the player is left with no hand at all
                p.ClearField("arrangement")
                body = p.SerializeToString() + wrong(3)
            else:  # one card of a row: the row is one card short
                row_field = rng.choice([1, 2, 3])
                rows = [
                    list(p.arrangement.front),
                    list(p.arrangement.middle),
                    list(p.arrangement.back),
                ]
                arrangement = b""
                for number, cards in enumerate(rows, 1):
                    drop = rng.randrange(len(cards)) if number == row_field else -1
                    for j, card in enumerate(cards):
                        arrangement += (
                            wrong(number) if j == drop else length_delimited(number, card.encode())
                        )
                p.ClearField("arrangement")
                body = p.SerializeToString() + length_delimited(3, arrangement)
            out += length_delimited(10, body)
        return out

    # ------------------------------------------------------------------ absurd content

    def _inline_profile_request(self) -> bytes:
        request = copy.deepcopy(self.base_json)
        del request["preset"]
        request["profile"] = copy.deepcopy(self.profile_json)
        return request_from_json(request).SerializeToString()

    def _message(self, mutate: Callable[[dict[str, Any]], None]) -> bytes:
        request = copy.deepcopy(self.base_json)
        mutate(request)
        data = request_from_json(request).SerializeToString()
        assert len(data) <= MAX_PAYLOAD, len(data)
        return data

    def _with_profile(self, mutate: Callable[[dict[str, Any]], None]) -> bytes:
        def change(request: dict[str, Any]) -> None:
            del request["preset"]
            request["profile"] = copy.deepcopy(self.profile_json)
            mutate(request["profile"])

        return self._message(change)

    def absurd_count(self) -> bytes:
        rng = self.rng
        n = rng.choice([5, 13, 52, 500, 2000, 5000])
        kind = rng.choice(["players", "row", "dead", "royalties", "suits", "loose"])
        if kind == "players":  # more players than a table seats, every one with a real hand

            def players(r: dict[str, Any]) -> None:
                hands = list(ARRANGEMENTS.values())
                r["players"] = [
                    {"playerId": f"p{i}", "seat": i, "arrangement": hands[i % 4]} for i in range(n)
                ]

            return self._message(players)
        if kind == "row":

            def row(r: dict[str, Any]) -> None:
                r["players"][rng.randrange(4)]["arrangement"][
                    rng.choice(["front", "middle", "back"])
                ] = ["2h"] * n

            return self._message(row)
        if kind == "dead":
            return self._message(lambda r: r.update(deadCards=["Ks"] * n))
        if kind == "royalties":
            return self._with_profile(
                lambda p: p["royalties"].update(
                    mode="ROYALTY_MODE_ALWAYS",
                    table=[{"row": "ROW_FRONT", "handClass": "HAND_CLASS_FLUSH", "units": 1}] * n,
                )
            )
        if kind == "suits":
            return self._with_profile(lambda p: p["ranking"].update(suitOrder=["SUIT_SPADE"] * n))

        def loose(r: dict[str, Any]) -> None:
            r["players"][0] = {
                "playerId": "A",
                "seat": 1,
                "cards": ["As"] * n,
                "declaredNatural": "DRAGON",
            }

        return self._message(loose)

    def huge_string(self) -> bytes:
        rng = self.rng
        text = rng.choice("XQ♠é") * rng.choice([1_000, 20_000, 100_000, 200_000])
        where = rng.choice(
            [
                "card",
                "player",
                "preset",
                "natural",
                "dead",
                "enum",
                "suit",
                "override-key",
                "hand+card",
            ]
        )
        if where == "card":
            return self._message(
                lambda r: r["players"][0]["arrangement"]["back"].__setitem__(2, text)
            )
        if where == "player":
            return self._message(lambda r: r["players"][1].update(playerId=text))
        if where == "preset":
            return self._message(lambda r: r.update(preset=text))
        # closed sets are enums: a string reaches them through profileOverrides (a Struct) only
        if where == "natural":
            return self._message(
                lambda r: r.update(
                    profileOverrides={
                        "naturals": {"table": [{"natural": text, "rank": 1, "units": 3}]}
                    }
                )
            )
        if where == "dead":
            return self._message(lambda r: r.update(deadCards=[text]))
        if where == "enum":
            section, key = rng.choice(ENUM_FIELDS)
            return self._message(lambda r: r.update(profileOverrides={section: {key: text}}))
        if where == "suit":
            return self._message(
                lambda r: r.update(
                    profileOverrides={
                        "ranking": {"suitOrder": ["SUIT_SPADE", "SUIT_HEART", "SUIT_CLUB", text]}
                    }
                )
            )
        if where == "override-key":
            return self._message(lambda r: r.update(profileOverrides={"caps": {text: True}}))

        def both(r: dict[str, Any]) -> None:  # a huge audit id alone is allowed; the card isn't
            r["handId"] = text
            r["players"][3]["arrangement"]["front"][0] = "1x"

        return self._message(both)

    def negative(self) -> bytes:
        rng = self.rng
        small = -rng.choice([1, 2, 7, 100, 2**31])
        big = -rng.choice([1, 10**9, 2**62, 2**63])
        where = rng.choice(["seat", "stack", "unitValue", "button", "profile", "override"])
        if where == "seat":
            return self._message(
                lambda r: r["players"][rng.randrange(4)].update(seat=max(small, -(2**31)))
            )
        if where == "stack":
            return self._message(lambda r: r["players"][rng.randrange(4)].update(stack=big))
        if where == "unitValue":
            return self._message(lambda r: r.update(unitValue=rng.choice([0, big])))
        if where == "button":
            return self._message(lambda r: r.update(buttonSeat=max(small, -(2**31))))
        section, key = rng.choice(NUMBER_FIELDS)
        value = max(small, -(2**31))
        if where == "profile":
            return self._with_profile(lambda p: p.setdefault(section, {}).update({key: value}))
        return self._message(lambda r: r.update(profileOverrides={section: {key: value}}))

    def unknown_name(self) -> bytes:
        rng = self.rng
        word = "ZZ" + _word(rng)  # never a card, preset, natural or enum value
        number = 1000 + rng.randrange(10**6)  # a value no cpsettle.v1 enum has
        where = rng.choice(
            [
                "preset",
                "natural",
                "card",
                "dead",
                "enum",
                "hand-class",
                "natural-table",
                "suit",
                "override-key",
                "override-type",
            ]
        )
        if where == "preset":
            return self._message(lambda r: r.update(preset=word.lower()))
        if where == "natural":

            def natural(r: dict[str, Any]) -> None:
                r["players"][0] = {
                    "playerId": "A",
                    "seat": 1,
                    "declaredNatural": word,
                    "cards": [c for row in ARRANGEMENTS["A"].values() for c in row],
                }

            return self._message(natural)
        if where == "card":
            return self._message(
                lambda r: r["players"][rng.randrange(4)]["arrangement"]["middle"].__setitem__(
                    rng.randrange(5), word[: rng.randint(1, 4)]
                )
            )
        if where == "dead":
            return self._message(lambda r: r.update(deadCards=[word[:3]]))
        if where == "enum":
            section, key = rng.choice(ENUM_FIELDS)
            return self._with_profile(lambda p: p.setdefault(section, {}).update({key: number}))
        if where == "hand-class":
            return self._with_profile(
                lambda p: p["royalties"].update(
                    mode="ROYALTY_MODE_ALWAYS",
                    table=[{"row": "ROW_BACK", "handClass": number, "units": 2}],
                )
            )
        if where == "natural-table":
            return self._with_profile(
                lambda p: p["naturals"].update(table=[{"natural": word, "rank": 1, "units": 3}])
            )
        if where == "suit":
            return self._with_profile(
                lambda p: p["ranking"].update(
                    suitOrder=["SUIT_SPADE", "SUIT_HEART", "SUIT_CLUB", number]
                )
            )
        if where == "override-key":
            return self._message(lambda r: r.update(profileOverrides={word: {"x": 1}}))
        return self._message(lambda r: r.update(profileOverrides={"caps": {"wins": word}}))

    def broken_table(self) -> bytes:
        rng = self.rng
        kind = rng.choice(
            [
                "duplicate-card",
                "row-size",
                "one-player",
                "no-players",
                "seat",
                "player-id",
                "empty-id",
                "no-hand",
                "surrender-and-natural",
                "cards-without-natural",
                "preset-and-profile",
                "no-preset",
            ]
        )
        if kind == "duplicate-card":

            def dup(r: dict[str, Any]) -> None:
                a, b = rng.sample(range(4), 2)
                taken = r["players"][b]["arrangement"]["front"][0]
                r["players"][a]["arrangement"]["back"][0] = taken

            return self._message(dup)
        if kind == "row-size":
            return self._message(
                lambda r: r["players"][rng.randrange(4)]["arrangement"]["front"].pop()
            )
        if kind == "one-player":
            return self._message(lambda r: r.update(players=r["players"][:1]))
        if kind == "no-players":
            return self._message(lambda r: r.update(players=[]))
        if kind == "seat":
            return self._message(lambda r: r["players"][1].update(seat=r["players"][0]["seat"]))
        if kind == "player-id":
            return self._message(lambda r: r["players"][2].update(playerId="A"))
        if kind == "empty-id":
            return self._message(lambda r: r["players"][3].update(playerId=""))
        if kind == "no-hand":
            return self._message(lambda r: r["players"][0].pop("arrangement"))
        if kind == "surrender-and-natural":  # (a surrender with its cards sent is allowed)
            return self._message(
                lambda r: r["players"][0].update(surrender=True, declaredNatural="DRAGON")
            )
        if kind == "cards-without-natural":

            def cards(r: dict[str, Any]) -> None:
                p = r["players"][1]
                p["cards"] = [c for row in p.pop("arrangement").values() for c in row]

            return self._message(cards)
        if kind == "preset-and-profile":
            return self._message(lambda r: r.update(profile=copy.deepcopy(self.profile_json)))
        return self._message(lambda r: r.pop("preset"))

    # ------------------------------------------------------------------ the mix

    PLAN: tuple[tuple[str, int], ...] = (
        ("random_bytes", 2400),
        ("random_bytes_that_decode", 100),
        ("truncated", 1500),
        ("corrupted", 1500),
        ("wrong_wire_type", 1000),
        ("absurd_count", 40),
        ("huge_string", 60),
        ("negative", 1000),
        ("unknown_name", 1100),
        ("broken_table", 1300),
    )

    def payloads(self) -> Iterator[Payload]:
        for kind, count in self.PLAN:
            make = getattr(self, kind)
            for _ in range(count):
                yield kind, make()
