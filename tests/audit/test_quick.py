"""The quick check (audit/quick.py) and the full way give the same report, line for line."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.audit import running
from cpsettle_client.audit.outcome import Outcome
from cpsettle_client.cli import main
from tests.audit.conftest import load_generator, read_report

PRESETS = {
    "western",
    "eastern",
    "shisanshui",
    "classic-1-6",
    "one-six",
    "one-two",
    "two-four",
    "ofc",
    "ofc-descubierto",
}


def findings(report: dict[str, Any]) -> tuple[Any, ...]:
    return (
        report["summary"],
        report["differences"],
        report["invalid"],
        report["byTable"],
        report["byDealer"],
        report["stoppedAfterLine"],
        report["complete"],
    )


@pytest.fixture(scope="module")
def mixed_day(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    lines, key = load_generator().generate(900, seed=29, mistakes=27, invalid=16)
    path = tmp_path_factory.mktemp("quick") / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, key


@pytest.mark.parametrize("workers", ["1", "2"])
def test_both_ways_give_the_same_report_on_every_preset(
    mixed_day: tuple[Path, dict[str, Any]], tmp_path: Path, workers: str
) -> None:
    path, key = mixed_day
    assert set(key["presets"]) == PRESETS
    reports = {}
    for name, extra in (("quick", []), ("full", ["--no-quick"])):
        out = tmp_path / f"{name}.json"
        code = main(
            [
                "audit",
                str(path),
                "--local",
                "--workers",
                workers,
                "--report",
                str(out),
                "--progress",
                "none",
                *extra,
            ]
        )
        assert code == 1
        reports[name] = read_report(out)
    quick, full = reports["quick"], reports["full"]
    assert findings(quick) == findings(full)
    assert quick["summary"]["handsWithDifferences"] == 27
    assert quick["summary"]["invalidHands"] == 16
    assert {d["line"] for d in quick["differences"]} == {m["line"] for m in key["mistakes"]}


@pytest.fixture(scope="module")
def engine() -> None:
    running._init_local({"profile_dir": None, "signing_key_file": None})


def test_the_quick_check_settles_the_plain_hands_itself(
    engine: None, mixed_day: tuple[Path, dict[str, Any]]
) -> None:
    path, key = mixed_day
    assert running._quick is not None
    odd = {m["line"] for m in key["mistakes"]} | {m["line"] for m in key["invalid"]}
    lines = path.read_bytes().splitlines()
    quick = [n for n, raw in enumerate(lines, 1) if running._quick.check(raw) is not None]
    assert set(quick).isdisjoint(odd)  # a difference or an invalid hand never passes quickly
    assert len(quick) == len(lines) - len(odd)  # and every other hand of the day does


def _outcome(audit: Callable[..., Outcome], lines: list[bytes]) -> dict[str, Any]:
    out = dataclasses.asdict(audit("h.jsonl", 1, len(lines), list(enumerate(lines, 1))))
    del out["settlements"]  # the HTML's settlements (their issuedAt differs run to run)
    return out


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], bytes]:
    def make(hand: dict[str, Any]) -> bytes:
        change(hand)
        return json.dumps(hand, separators=(",", ":")).encode()

    return make


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], bytes]:
    def change(hand: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = hand
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return _edit(change)


def _text(edit: Callable[[str], str]) -> Callable[[dict[str, Any]], bytes]:
    return lambda hand: edit(json.dumps(hand, separators=(",", ":"))).encode()


def _first_pid(hand: dict[str, Any]) -> str:
    return str(hand["players"][0]["playerId"])


# Lines a quick reader could read otherwise than the full way: each goes both ways.
UNUSUAL: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "snake-case key": _text(lambda t: t.replace('"handId"', '"hand_id"')),
    "stack null": _set("players.0.stack", None),
    "seat a float": _set("players.0.seat", 1.0),
    "seat text": _set("players.0.seat", "1"),
    "seat past int32": _set("players.0.seat", 2**40),
    "stack past int64": _set("players.0.stack", 2**70),
    "unit value text": _set("unitValue", "100"),
    "unit value zero": _set("unitValue", 0),
    "button null": _set("buttonSeat", None),
    "empty arrangement": _set("players.0.arrangement", {}),
    "empty cards": _set("players.0.cards", []),
    "surrender text": _set("players.0.surrender", "true"),
    "fantasyland a number": _set("players.0.inFantasyland", 1),
    "natural a number": _set("players.0.declaredNatural", 5),
    "long hand id": _set("handId", "h" * 200),
    "id of 128": _set("tableId", "t" * 128),
    "five players": _edit(lambda h: h["players"].append(dict(h["players"][0], seat=9))),
    "inline profile": _set("profile", {"name": "x"}),
    "empty overrides": _set("profileOverrides", {}),
    "overrides": _set(
        "profileOverrides", {"rake": {"mode": "RAKE_MODE_PER_PLAYER", "perPlayerFee": 5}}
    ),
    "bad overrides": _set("profileOverrides", {"rake": {"mode": "NO_SUCH_MODE"}}),
    "currency": _set("currency", "EUR"),
    "dead cards null": _set("deadCards", None),
    "dead card a number": _set("deadCards", [5]),
    "amounts as text": _edit(
        lambda h: h.update(recordedPayouts={k: str(v) for k, v in h["recordedPayouts"].items()})
    ),
    "amount text with spaces": _edit(
        lambda h: h["recordedPayouts"].update(
            {_first_pid(h): f" {h['recordedPayouts'][_first_pid(h)]} "}
        )
    ),
    "amount past int64": _edit(lambda h: h["recordedPayouts"].update({_first_pid(h): 2**70})),
    "amount a float": _edit(lambda h: h["recordedPayouts"].update({_first_pid(h): 1.0})),
    "no payouts": _edit(lambda h: h.pop("recordedPayouts")),
    "empty payouts": _set("recordedPayouts", {}),
    "payouts null": _set("recordedPayouts", None),
    "an extra player paid": _edit(lambda h: h["recordedPayouts"].update({"ZZ": 0})),
    "a player missing": _edit(lambda h: h["recordedPayouts"].pop(_first_pid(h))),
    "key twice": _text(lambda t: '{"tableId":"T99",' + t[1:]),
    "key twice, space before the colon": _text(lambda t: '{"tableId" :"T99",' + t[1:]),
    "key twice inside": _text(lambda t: t.replace('"seat":', '"seat":3,"seat":', 1)),
    "spaces around colons": _text(lambda t: t.replace('":', '" : ')),
    "colon in an id": _set("roundId", "R:1"),
    "quote and colon in an id": _set("roundId", 'R":1'),
    "escaped card": _text(
        lambda t: re.sub(r'"front":\["(.)', lambda m: f'"front":["\\u{ord(m[1]):04x}', t, count=1)
    ),
    "NaN": _text(lambda t: t.replace('"unitValue":', '"unitValue":NaN,"x":', 1)),
    "big number": _text(lambda t: t.replace('"unitValue":', f'"unitValue":1{"0" * 30},"u":', 1)),
    "byte order mark": lambda h: b"\xef\xbb\xbf" + json.dumps(h).encode(),
    "not an object": lambda h: b"[1, 2]",
    "lone surrogate": _set("dealerId", "\ud800"),
}


def test_unusual_lines_give_the_same_outcome_both_ways(
    engine: None, mixed_day: tuple[Path, dict[str, Any]]
) -> None:
    path, key = mixed_day
    odd = {m["line"] for m in key["mistakes"]} | {m["line"] for m in key["invalid"]}
    plain = [
        json.loads(raw) for n, raw in enumerate(path.read_bytes().splitlines(), 1) if n not in odd
    ]
    # a player with rows, one with 13 cards (a declared natural) and one who surrendered
    samples = [
        next(h for h in plain if "arrangement" in h["players"][0]),
        next(h for h in plain if "cards" in h["players"][0]),
        next(h for h in plain if h["players"][0].get("surrender")),
    ]
    assert running._quick is not None
    took_full = set()
    for name, make in UNUSUAL.items():
        for sample in samples:
            raw = make(json.loads(json.dumps(sample)))
            quick, full = (
                _outcome(running.audit_chunk, [raw]),
                _outcome(running.audit_chunk_full, [raw]),
            )
            assert quick == full, (name, raw)
            if running._quick.check(raw) is None:
                took_full.add(name)
    # the lines whose key came twice, and the inline profile, always take the full way
    assert {
        "key twice",
        "key twice, space before the colon",
        "key twice inside",
        "inline profile",
        "byte order mark",
        "NaN",
    } <= took_full
    # and the plain variations do not
    assert (
        not {
            "amounts as text",
            "id of 128",
            "colon in an id",
            "no payouts",
            "spaces around colons",
            "escaped card",
        }
        & took_full
    )
