"""A JSON object that names a key twice is refused wherever the CLI reads JSON, with the key and
where it sits: a forged ``"netMoney"`` before the real one must not verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpsettle_client import strict_json
from tests.conftest import EXAMPLES
from tests.hardening.cli_process import cli

TABLE = EXAMPLES / "tables" / "one-six.json"


@pytest.fixture(scope="module")
def settlement_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    done = cli("settle", str(TABLE), "--local", "--output", "json")
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def forge_net_money(text: str) -> str:
    """A second netMoney before the first player's real one: last-key readers see the real one."""
    first = text.index('"netMoney"')
    return text[:first] + '"netMoney": "999999",\n      ' + text[first:]


def test_verify_refuses_a_settlement_with_a_forged_duplicate_amount(
    settlement_text: str, tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    good.write_text(settlement_text)
    done = cli("verify", str(good))  # unsigned: the signature's verdict depends on keys given
    assert b"duplicate" not in done.stdout + done.stderr and b" - file:" not in done.stdout

    forged = tmp_path / "forged.json"
    forged.write_text(forge_net_money(settlement_text))
    assert json.loads(forged.read_text()) == json.loads(settlement_text)  # Python keeps the last
    done = cli("verify", str(forged))
    out = done.stdout.decode()
    assert done.returncode == 1, out
    assert "FAILED" in out
    assert 'duplicate key "netMoney" in settlement.players[0]' in out

    done = cli("replay", str(TABLE), str(forged), "--local")
    assert done.returncode == 2
    assert 'duplicate key "netMoney" in settlement.players[0]' in done.stderr.decode()


def test_a_key_set_with_a_duplicate_key_is_refused(settlement_text: str, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(settlement_text)
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": [], "currentKeyId": "real", "currentKeyId": "forged"}')
    done = cli("verify", str(good), "--keys", str(keys))
    assert done.returncode == 2
    assert b"duplicate key currentKeyId" in done.stderr


def test_a_request_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    text = TABLE.read_text()
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"unitValue": 25', '"unitValue": 2500, "unitValue": 25', 1))
    for command in (["settle"], ["validate"]):
        done = cli(*command, str(path), "--local")
        assert done.returncode == 2
        err = done.stderr.decode()
        assert f'{path}: duplicate key "unitValue" at the top level' in err
        assert "Traceback" not in err
    done = cli("settle", "-", "--local", input=path.read_bytes())
    assert done.returncode == 2 and b'duplicate key "unitValue"' in done.stderr


def test_a_history_line_with_a_duplicate_key_is_an_invalid_hand(tmp_path: Path) -> None:
    request = json.loads(TABLE.read_text())
    good = json.dumps({**request, "recordedPayouts": {"A": 0}})
    payouts = '"recordedPayouts": {"A": 999, "A": 0'
    twice = good.replace('"recordedPayouts": {"A": 0', payouts)
    assert twice != good
    history = tmp_path / "day.jsonl"
    history.write_text(json.dumps(request) + "\n" + twice + "\n")
    report = tmp_path / "r.json"
    done = cli("audit", str(history), "--local", "--progress", "none", "--report", str(report))
    assert done.returncode == 1
    data = strict_json.loads(report.read_text())
    assert data["summary"]["handsRead"] == 2 and data["summary"]["invalidHands"] == 1
    invalid = data["invalid"][0]
    assert invalid["line"] == 2 and invalid["handId"] == request["handId"]
    assert invalid["violations"] == [
        {
            "field": "line",
            "reason": (
                'duplicate key "A" in recordedPayouts: a reader that keeps the first and one '
                "that keeps "
                "the last would see different values"
            ),
        }
    ]


def test_a_checkpoint_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    history = tmp_path / "day.jsonl"
    history.write_text(TABLE.read_text().replace("\n", "") + "\n")
    report = tmp_path / "r.json"
    checkpoint = tmp_path / "r.json.checkpoint"
    checkpoint.write_text(
        '{"format": "cpsettle.audit-checkpoint/v1", "nextLine": 1, "nextLine": 2}'
    )
    done = cli("audit", str(history), "--local", "--report", str(report), "--resume")
    assert done.returncode == 2
    assert b'duplicate key "nextLine" at the top level' in done.stderr


def test_the_locating_read_names_the_first_duplicate_in_document_order() -> None:
    with pytest.raises(strict_json.DuplicateKey) as e:
        strict_json.loads('{"a": [{"x": 1}, {"y": {"k": 1, "k": 2}}], "b": 1}')
    assert (e.value.key, e.value.path) == ("k", "a[1].y")
    with pytest.raises(strict_json.DuplicateKey) as e:
        strict_json.loads('{"a\\u001b": {"k": 1, "k": 2}}')
    assert e.value.path == "a\u001b" and "in a\\x1b:" in str(e.value)  # shown escaped
    assert strict_json.loads('{"a": {"k": 1}, "b": {"k": 2}}') == {"a": {"k": 1}, "b": {"k": 2}}
