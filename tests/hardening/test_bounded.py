"""Memory and CPU are bounded for any input (issue #13), against a real server process.

- Profiles hold no more than the rules allow (DECISIONS.md decision 23), and the profile cache
  is bounded by bytes: 1,000 distinct maximal valid profiles leave the RSS bounded.
- A request within the size limit but absurd in bulk is refused on its counts, before its items
  are read: one violation per absurd count, a bounded list in the BadRequest saying how many
  were left out, and one increment of the validation metric per request.
- Ids have a length limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError, request_from_json
from tests.hardening.hostile import bulk_requests, maximal_profile
from tests.hardening.live import Server, bad_request, rejected
from tests.hardening.support import rss_kib, stop_process
from tests.support.tables import table


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("bounded"))
    yield s
    stop_process(s.proc)


# --------------------------------------------------------------------------- profiles


@pytest.mark.parametrize(
    "entries,path,bound",
    [
        # the attack: refused before it is parsed (an entry is 6 bytes since the hand class
        # is an enum: 24,000 of them, like the 16,000 with string classes, pass 128 KiB)
        (24_000, "request", "at most 131072"),
        (10_000, "profile", "at most 49152"),  # within a valid request's size, not a profile's
        (43, "profile.fantasyland.progressive", "at most 42"),  # one past what the rules allow
    ],
)
def test_a_table_past_the_rules_size_is_refused(
    server: Server, entries: int, path: str, bound: str
) -> None:
    data = maximal_profile(0)
    data["fantasyland"]["progressive"] = [{"handClass": "HAND_CLASS_PAIR", "cards": 14}] * entries
    request = table(profile=data)
    del request["preset"]
    with SettlementClient(server.address) as c, pytest.raises(SettlementError) as e:
        c.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in e.value.violations] == [path]
    assert bound in e.value.violations[0].reason


def test_maximal_profiles_leave_memory_bounded(server: Server) -> None:
    """200 profiles as the issue sent them (16,000 progressive entries then, 24,000 now that a
    hand class is an enum; about 2 MB each when cached; 190 took a process from 115 to 588 MB),
    then 1,000 distinct maximal valid profiles:
    the RSS grows less than 64 MiB past its warm level. The first are refused now; the others
    are settled and cached, within the cache's byte budget."""
    base = table()
    del base["preset"]
    with SettlementClient(server.address, timeout=60) as c:

        def settle(profile: dict[str, Any]) -> pb.SettleResponse:
            return c.settle(request_from_json({**base, "profile": profile}))

        for n in range(100):  # warm: the code paths, the allocator's arenas
            settle(maximal_profile(n))
        warm = rss_kib(server.proc.pid)
        for n in range(200):
            padded = maximal_profile(10_000 + n)
            padded["fantasyland"]["progressive"] = [
                {"handClass": "HAND_CLASS_PAIR", "cards": 14}
            ] * 24_000
            with pytest.raises(SettlementError):
                settle(padded)
        for n in range(100, 1_100):
            assert settle(maximal_profile(n)).settlement.profile.source == "inline"
        grown = rss_kib(server.proc.pid) - warm
    assert grown < 64 * 1024, f"RSS grew {grown} KiB"


# --------------------------------------------------------------------------- bulk requests


@pytest.mark.parametrize("case", list(bulk_requests()))
def test_absurd_counts_are_refused_before_the_items_are_read(server: Server, case: str) -> None:
    method, request = bulk_requests()[case]
    assert request.ByteSize() < 1024 * 1024
    before = server.scrape()
    with grpc.insecure_channel(server.address) as channel:
        call: grpc.UnaryUnaryMultiCallable[Message, bytes] = channel.unary_unary(
            f"/cpsettle.v1.SettlementService/{method}",
            request_serializer=type(request).SerializeToString,
        )
        error = rejected(call, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    violations = bad_request(error).field_violations
    # one violation for the absurd count, not one per item
    assert len(violations) == 1, [v.field for v in violations]
    assert "at most" in violations[0].description
    after = server.scrape()
    moved = sum(
        after.get(k, 0) - before.get(k, 0)
        for k in after
        if k.startswith("cpsettle_validation_errors_total{")
    )
    assert moved == 1, "one increment per rejected request"


def test_a_bounded_number_of_violations_says_how_many_were_left_out(server: Server) -> None:
    """A request with more problems than the BadRequest lists ends with the count left out."""
    overrides = {f"junk{i}": i for i in range(1_500)}  # 1,500 unknown fields, within 48 KiB
    with SettlementClient(server.address) as c, pytest.raises(SettlementError) as e:
        c.settle(table(profileOverrides=overrides))
    violations = e.value.violations
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert len(violations) <= 51
    assert violations[-1].field == "request"
    left_out = int(violations[-1].reason.split()[0])
    assert left_out + len(violations) - 1 == 1_500
    assert e.value.message.startswith("1500 problems")


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("field", ["handId", "tableId", "roundId", "dealerId", "playerId"])
def test_ids_have_a_length_limit(server: Server, field: str) -> None:
    request = table()
    if field == "playerId":
        request["players"][0]["playerId"] = "p" * 100_000
        path = "players[0].playerId"
    else:
        request[field] = "h" * 100_000
        path = field
    with SettlementClient(server.address) as c, pytest.raises(SettlementError) as e:
        c.settle(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in e.value.violations] == [path]
    assert "at most 128" in e.value.violations[0].reason
    # an id of the limit's length is fine
    request = table(handId="h" * 128)
    with SettlementClient(server.address) as c:
        assert c.settle(request).settlement.context.hand_id == "h" * 128
    assert max(len(line) for line in server.log.read_bytes().splitlines()) < 64 * 1024
