"""api/fair.py: who a caller is, and the fair gate's turns (docs/DECISIONS.md 41 and 43)."""

from __future__ import annotations

import asyncio

import pytest

from cpsettle_service.api.fair import CALLER, FairGate, WaitBudget, caller_of, peer_host


@pytest.mark.parametrize(
    "peer,host",
    [
        ("ipv4:10.0.0.7:51234", "ipv4:10.0.0.7"),
        ("ipv6:[::1]:5000", "ipv6:[::1]"),
        ("ipv6:[2001:db8::2]:443", "ipv6:[2001:db8::2]"),
        ("unix:/tmp/s.sock", "unix:/tmp/s.sock"),
        ("unix:", "unix:"),
    ],
)
def test_a_caller_without_a_token_is_its_address_without_the_port(peer: str, host: str) -> None:
    assert peer_host(peer) == host


class Context:
    def __init__(self, peer: str) -> None:
        self._peer = peer

    def peer(self) -> str:
        return self._peer


def test_a_token_names_the_caller_whatever_its_address() -> None:
    assert caller_of(Context("ipv4:10.0.0.7:1")) == caller_of(Context("ipv4:10.0.0.7:2"))
    token = CALLER.set("tables")
    try:
        assert caller_of(Context("ipv4:10.0.0.7:1")) == "token:tables"
        assert caller_of(Context("ipv4:10.0.0.8:1")) == "token:tables"
    finally:
        CALLER.reset(token)


def test_turns_go_round_robin_and_a_flooder_gives_way() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        gate = FairGate(1, WaitBudget(4), RuntimeError)
        served: list[str] = []
        refused: list[str] = []
        release = asyncio.Event()

        async def call(caller: str, name: str) -> None:
            try:
                async with gate.turn(caller):
                    served.append(name)
                    if name == "first":
                        await release.wait()
            except RuntimeError:
                refused.append(name)

        tasks = [asyncio.ensure_future(call("a", "first"))]
        await asyncio.sleep(0)
        for n in range(4):  # a queues four: the budget is full
            tasks.append(asyncio.ensure_future(call("a", f"a{n}")))
        await asyncio.sleep(0)
        tasks.append(asyncio.ensure_future(call("a", "a4")))  # a's own: refused
        tasks.append(asyncio.ensure_future(call("b", "b0")))  # takes a3's place
        tasks.append(asyncio.ensure_future(call("c", "c0")))  # takes a2's place
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*tasks)
        assert gate.free == 1 and gate.budget.waiting == 0
        return served, refused

    served, refused = asyncio.run(scenario())
    assert refused == ["a4", "a3", "a2"]
    assert served == ["first", "a0", "b0", "c0", "a1"]
