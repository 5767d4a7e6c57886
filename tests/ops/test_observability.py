"""Operations: the real metrics endpoint after real calls, logs, house profiles from a directory."""

from __future__ import annotations

import io
import json
import re
import signal
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.domain.profile.parse import profile_to_dict
from cpsettle_service.observability.logging import configure, get_logger
from cpsettle_service.profile_files import load_preset
from tests.conftest import EXAMPLES, LOGS
from tests.support.server_process import start, wait_serving


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def scrape_settled(port: int, calls: int) -> dict[str, float]:
    """Scrape once the server has finished its books on ``calls`` RPCs.

    A client has its answer before the server's interceptor records the call as handled and
    leaves ``cpsettle_rpcs_in_flight``: a scrape right after the last call can race it on a
    busy machine. Wait (5 s at most) until every started call is handled, then scrape.
    """
    import time

    deadline = time.monotonic() + 5
    while True:
        samples = scrape(port)
        handled = metric(samples, "grpc_server_handled_total")
        if (
            handled >= calls and metric(samples, "cpsettle_rpcs_in_flight") == 0
        ) or time.monotonic() > deadline:
            return samples
        time.sleep(0.05)


def metric(samples: dict[str, float], name: str, **labels: str) -> float:
    total = 0.0
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base != name:
            continue
        if all(f'{k}="{v}"' in rest for k, v in labels.items()):
            total += value
    return total


def example(name: str) -> dict[str, Any]:
    data = json.loads((EXAMPLES / "tables" / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


def test_metrics_move_after_real_calls(tmp_path: Path) -> None:
    port = free_port()
    sock = tmp_path / "m.sock"
    proc = start(
        sock, tmp_path / "m.log", CPSETTLE_METRICS_PORT=str(port), CPSETTLE_HOST="127.0.0.1"
    )
    try:
        wait_serving(f"unix://{sock}", proc)
        before = scrape(port)
        with SettlementClient(f"unix://{sock}") as c:
            western = example("western")  # stacks: caps cut some pairs
            for _ in range(3):
                c.settle(western)
            c.settle(example("classic-1-6"))  # naturals
            c.settle(example("two-four"))  # fouls
            s = c.settle(example("one-six")).settlement
            nets = {
                p.player_id: p.net_money + (1 if i == 0 else 0) for i, p in enumerate(s.players)
            }
            c.validate_payouts(example("one-six"), nets)
            bad = example("one-six")
            bad["players"][0]["arrangement"]["front"][0] = "Zz"
            with pytest.raises(SettlementError):
                c.settle(bad)
        after = scrape_settled(port, int(metric(before, "grpc_server_handled_total")) + 8)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)

    def moved(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    svc = "cpsettle.v1.SettlementService"
    assert moved("grpc_server_started_total", grpc_service=svc, grpc_method="Settle") == 7
    assert moved("grpc_server_handled_total", grpc_method="Settle", grpc_code="OK") == 6
    assert (
        moved("grpc_server_handled_total", grpc_method="Settle", grpc_code="INVALID_ARGUMENT") == 1
    )
    assert moved("grpc_server_handling_seconds_count", grpc_method="Settle") == 7
    assert moved("cpsettle_settlements_total", profile="western") == 3
    assert moved("cpsettle_settlements_total", profile="one-six") == 2  # Settle + Validate
    assert moved("cpsettle_fouls_total") >= 2
    assert moved("cpsettle_naturals_total") >= 1
    assert moved("cpsettle_caps_applied_total") >= 3
    assert moved("cpsettle_payout_mismatches_total") == 1
    assert moved("cpsettle_validation_errors_total", reason="malformed_card") == 1
    assert metric(after, "cpsettle_rpcs_in_flight") == 0
    assert metric(after, "cpsettle_build_info") == 1
    # never an id as a label value
    labels = " ".join(after)
    for forbidden in ("golden", "example-", "playerId", 'player="', 'table="', 'hand="'):
        assert forbidden not in labels


def test_one_canonical_json_line_per_rpc(client: SettlementClient) -> None:
    request = example("one-six")
    request["handId"] = "canonical-line-hand"
    client.settle(request)
    # a delivered settlement's one line is its audit event, with the call's context
    lines = [e for e in LOGS.events() if e.get("hand_id") == "canonical-line-hand"]
    assert [e["event"] for e in lines] == ["settlement.issued"]
    assert lines[0]["rpc"] == "Settle" and lines[0]["timestamp"].endswith("Z")
    # any other call: its rpc line
    before = len([e for e in LOGS.events("rpc") if e.get("method") == "ListProfiles"])
    client.list_profiles()
    lines = LOGS.wait_events("rpc", lambda e: e.get("method") == "ListProfiles", before + 1)
    assert len(lines) == before + 1
    line = lines[-1]
    assert line["code"] == "OK" and line["rpc"] == "ListProfiles"
    assert line["duration_ms"] >= 0 and line["level"] == "info"
    assert line["timestamp"].endswith("Z")
    # and a failed Settle: its rpc line beside the rejection's own
    request["handId"] = "canonical-line-bad"
    request["players"][0]["arrangement"]["front"][0] = "Zz"
    with pytest.raises(SettlementError):
        client.settle(request)
    lines = LOGS.wait_events("rpc", lambda e: e.get("hand_id") == "canonical-line-bad", 1)
    assert len(lines) == 1 and lines[0]["code"] == "INVALID_ARGUMENT"


def test_console_output_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    try:
        configure("info", "auto", stream=stream)
        get_logger("t").info("hello", method="Settle")
    finally:
        configure("info", "json", stream=LOGS)
    text = stream.getvalue()
    assert "hello" in text and "method=Settle" in text and not text.lstrip().startswith("{")


def test_house_profiles_from_a_directory(tmp_path: Path) -> None:
    house = profile_to_dict(load_preset("western"))
    house.update(name="house-western-500", version="7")
    house["money"]["unitValue"] = 500
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "house.json").write_text(json.dumps(house))
    sock = tmp_path / "h.sock"
    proc = start(sock, tmp_path / "h.log", CPSETTLE_PROFILE_DIR=str(profiles))
    try:
        wait_serving(f"unix://{sock}", proc)
        with SettlementClient(f"unix://{sock}") as c:
            listing = {p.name: p for p in c.list_profiles().profiles}
            request = example("western")
            request["preset"] = "house-western-500"
            s = c.settle(request).settlement
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    entry = listing["house-western-500"]
    assert entry.source == str(profiles / "house.json") and entry.version == "7"
    assert len(entry.digest) == 64 and listing["western"].source == "builtin"
    assert s.unit_value == 500 and s.profile.source == str(profiles / "house.json")


def test_an_invalid_house_profile_stops_the_service(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    bad = profile_to_dict(load_preset("one-six"))
    bad["name"] = "broken"
    bad["scoring"]["rowUnit"] = -2
    bad["caps"]["basis"] = "SOMETIMES"
    (profiles / "broken.json").write_text(json.dumps(bad))
    proc = start(tmp_path / "x.sock", CPSETTLE_PROFILE_DIR=str(profiles))
    code = proc.wait(timeout=30)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert code == 2
    event = next(json.loads(line) for line in out.splitlines() if "profiles.invalid" in line)
    problems = " ".join(event["problems"])
    assert "broken.json.scoring.rowUnit" in problems and "broken.json.caps.basis" in problems
    assert re.search(r"SOMETIMES", problems)


def test_standard_library_logs_come_out_as_json_lines() -> None:
    import logging

    stream = io.StringIO()
    try:
        configure("info", "json", stream=stream)
        logging.getLogger("grpc._cython.cygrpc").error("ExecuteBatchError in core")
    finally:
        configure("info", "json", stream=LOGS)
    line = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert line["event"] == "ExecuteBatchError in core" and line["level"] == "error"
    assert line["logger"] == "grpc._cython.cygrpc" and line["timestamp"].endswith("Z")


def test_values_orjson_refuses_still_make_a_json_line() -> None:
    from cpsettle_service.observability.logging import get_logger

    stream = io.StringIO()
    try:
        configure("info", "json", stream=stream)
        get_logger("t").info("odd", big=2**70, keys={1: "one"}, obj=object())
        get_logger("t").info("plain", units=-3)
    finally:
        configure("info", "json", stream=LOGS)
    odd, plain = (json.loads(line) for line in stream.getvalue().splitlines())
    assert odd["big"] == 2**70 and odd["keys"] == {"1": "one"} and "object" in odd["obj"]
    assert plain["units"] == -3 and plain["event"] == "plain"


def test_grpc_late_response_race_is_one_plain_info_line() -> None:
    import logging

    class ExecuteBatchError(Exception):
        pass

    stream = io.StringIO()
    try:
        configure("info", "json", stream=stream)
        try:
            raise ExecuteBatchError("Failed execute_batch")
        except ExecuteBatchError:
            logging.getLogger("grpc._cython.cygrpc").exception("ExecuteBatchError raised in core")
    finally:
        configure("info", "json", stream=LOGS)
    text = stream.getvalue()
    line = json.loads(text.strip().splitlines()[-1])
    assert line["level"] == "info" and "already ended" in line["event"]
    assert "Traceback" not in text
