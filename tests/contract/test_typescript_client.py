"""A TypeScript client generated from the .proto files calls a real server over TCP.

clients/ts/src/contract-check.ts settles a table, validates the settlement's own payouts and a
shifted pair of them, evaluates an arrangement as dealt and a fouled one, and reads the
google.rpc.BadRequest of an invalid request from the grpc-status-details-bin trailer; it asserts
what holds for any table (the hand id echoed, units and money summing to zero, the violations'
field paths) and prints what it saw. Here its answers are checked against the project's Python
client on the same server: the same settlement id, nets and violations, in any language.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.proof.times import time_text
from tests.conftest import ServerHandle, start_server, stop_server
from tests.support.node import build_ts_client

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "examples" / "tables"


@pytest.fixture(scope="module")
def ts_dist() -> Path:
    return build_ts_client()


@pytest.fixture(scope="module")
def tcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """The service on 127.0.0.1 and a free port (Node's HTTP/2 client speaks TCP)."""
    handle = start_server(tmp_path_factory.mktemp("ts") / "unused.sock", unix_socket="",
                          host="127.0.0.1", port=0)
    handle.address = f"127.0.0.1:{handle.running.port}"
    yield handle
    stop_server(handle)


def invalid_copy(request: dict) -> dict:
    """What contract-check.ts sends as its invalid request: a short front, a card dealt twice."""
    bad = json.loads(json.dumps(request))
    first, second = bad["players"][0]["arrangement"], bad["players"][1]["arrangement"]
    first["front"] = first["front"][:2]
    second["back"][0] = first["back"][0]
    return bad


@pytest.mark.parametrize("table", ["one-six", "western", "ofc"])
def test_typescript_client_against_a_real_server(ts_dist: Path, tcp_server: ServerHandle,
                                                 table: str) -> None:
    path = TABLES / f"{table}.json"
    started = time.time()
    done = subprocess.run(["node", str(ts_dist / "contract-check.js"), tcp_server.address,
                           str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"contract-check.ts failed:\n{done.stdout}\n{done.stderr}"
    seen = json.loads(done.stdout)
    ended = time.time()
    # the Timestamp as the TypeScript client read it: whole milliseconds, during the call, and
    # the same instant as its fixed-width text (docs/AUDIT.md)
    issued = seen["issuedAt"]
    seconds, nanos = int(issued["seconds"]), issued["nanos"]
    assert nanos % 1_000_000 == 0 and int(started) <= seconds <= ended
    assert issued["text"] == time_text(seconds, nanos)
    assert seen["currency"] == "XXX"  # the examples name no currency; the presets neither

    request = json.loads(path.read_text())
    with SettlementClient(tcp_server.address, timeout=10) as python:
        settlement = python.settle(request).settlement
        assert seen["handId"] == request["handId"]
        assert seen["settlementId"] == settlement.settlement_id
        assert seen["nets"] == {p.player_id: str(p.net_money) for p in settlement.players}
        assert seen["allMatch"] == [True, False]

        rules = {"preset": request["preset"]}
        dealt = python.evaluate({**rules, "arrangement": request["players"][0]["arrangement"]})
        assert seen["evaluated"]["asDealt"] == {
            "fouled": dealt.fouled, "royaltyTotal": dealt.royalty_total,
            "names": [row.name for row in dealt.rows]}
        assert seen["evaluated"]["fouled"]["fouled"] is True

        with pytest.raises(SettlementError) as error:
            python.settle(invalid_copy(request))
    assert seen["violations"] == [
        {"field": v.field, "description": v.reason} for v in error.value.violations]
    assert len(seen["violations"]) == 2
