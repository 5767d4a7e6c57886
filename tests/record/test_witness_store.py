"""The witness on PostgreSQL (a real server, started here) and on SQLite: the same protocol
answers, the record durable across a restart, and two racing advances never roll a log back."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cpsettle_service.proof.feed import add_checkpoint_body
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from cpsettle_service.proof.merkle import Tree, leaf_hash
from cpsettle_service.proof.note import Checkpoint, NoteKey, sign
from cpsettle_service.witness.store import Store
from tests.support.fixed_keys import fixed_test_key
from tests.support.server_process import ROOT
from tests.support.witness import PG_BIN, export, postgres, start_witness

ORIGIN = "cpsettle.audit/" + "a" * 32


def _post(url: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(url + "/add-checkpoint", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _checkpoint(tree: Tree, size: int, key_pem: bytes = fixed_test_key(1)) -> str:
    key = signing_key_from_pem(key_pem)
    cp = Checkpoint(ORIGIN, size, tree.root(size))
    return sign(cp.text(), NoteKey.from_private(ORIGIN, key.private))


def _protocol(tmp: Path, database: str, database_file: bool = False) -> None:
    (tmp / "w.pem").write_bytes(fixed_test_key(3))
    keys = tmp / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(fixed_test_key(1))).to_json())
    tree = Tree([leaf_hash(str(i).encode()) for i in range(20)])
    proc, url = start_witness(tmp, tmp / "w.pem", keys, database, database_file=database_file)
    try:
        assert _post(url, add_checkpoint_body(0, [], _checkpoint(tree, 0)))[0] == 200
        status, body = _post(url, add_checkpoint_body(0, [], _checkpoint(tree, 7)))
        assert status == 200 and body.startswith("\u2014 witness.test/w1 ")
        # not the size it holds: 409 with its size
        assert _post(url, add_checkpoint_body(3, tree.consistency(3, 9), _checkpoint(tree, 9))) == (
            409,
            "7\n",
        )
        # a proof that does not verify: 422
        bad = tree.consistency(7, 12)
        bad[0] = bytes(32)
        assert _post(url, add_checkpoint_body(7, bad, _checkpoint(tree, 12)))[0] == 422
        # signed by a key the witness does not trust: 403; an origin it does not serve: 404
        assert (
            _post(
                url,
                add_checkpoint_body(
                    7, tree.consistency(7, 12), _checkpoint(tree, 12, fixed_test_key(2))
                ),
            )[0]
            == 403
        )
        other = _checkpoint(tree, 12).replace(ORIGIN, "elsewhere/x")
        assert _post(url, add_checkpoint_body(7, [], other))[0] in (403, 404)
        assert (
            _post(url, add_checkpoint_body(7, tree.consistency(7, 12), _checkpoint(tree, 12)))[0]
            == 200
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    proc, url = start_witness(
        tmp,
        tmp / "w.pem",
        keys,
        database,  # restarted: it remembers
        database_file=database_file,
    )
    try:
        doc = export(url)
        (entry,) = doc["logs"]
        assert entry["size"] == 12 and entry["root"] == base64.b64encode(tree.root(12)).decode()
        assert _post(url, add_checkpoint_body(0, [], _checkpoint(tree, 14))) == (409, "12\n")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def test_the_protocol_on_sqlite(tmp_path: Path) -> None:
    _protocol(tmp_path, str(tmp_path / "w.sqlite3"))


@pytest.mark.skipif(PG_BIN is None, reason="PostgreSQL is not installed (.ci/run installs it)")
def test_the_protocol_on_postgresql(tmp_path: Path) -> None:
    """As deployed: the database's URL (its password) read from a file, a mounted Secret."""
    with postgres(tmp_path) as url:
        _protocol(tmp_path, url, database_file=True)


def test_the_database_is_named_once_and_its_file_must_hold_it(tmp_path: Path) -> None:
    """``CPSETTLE_WITNESS_DATABASE_FILE``: the URL in a file; beside the variable, or empty,
    or unreadable, the witness refuses to start (exit 2, saying why)."""
    (tmp_path / "w.pem").write_bytes(fixed_test_key(3))
    keys = tmp_path / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(fixed_test_key(1))).to_json())
    named = tmp_path / "url"
    named.write_text(str(tmp_path / "from-file.sqlite3") + "\n")
    empty = tmp_path / "empty"
    empty.write_text("\n")
    base = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
        CPSETTLE_WITNESS_KEY_FILE=str(tmp_path / "w.pem"),
        CPSETTLE_WITNESS_LOG_KEYS_FILE=str(keys),
    )
    base.pop("CPSETTLE_WITNESS_DATABASE", None)

    def vkey(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cpsettle_service.witness.service", "vkey"],
            env={**base, **env},
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )

    done = vkey(CPSETTLE_WITNESS_DATABASE_FILE=str(named))
    assert done.returncode == 0 and done.stdout.startswith("cpsettle-witness+"), done.stderr
    assert (tmp_path / "from-file.sqlite3").exists()  # the database the file names
    assert not (tmp_path / "witness.sqlite3").exists()
    for env, why in (
        (
            dict(CPSETTLE_WITNESS_DATABASE_FILE=str(named), CPSETTLE_WITNESS_DATABASE="x.db"),
            "one or the other",
        ),
        (dict(CPSETTLE_WITNESS_DATABASE_FILE=str(empty)), "is empty"),
        (dict(CPSETTLE_WITNESS_DATABASE_FILE=str(tmp_path / "absent")), "absent"),
    ):
        done = vkey(**env)
        assert done.returncode == 2 and why in done.stderr, done.stderr


def _race(store: Store) -> None:
    assert store.advance(ORIGIN, 0, 5, "r5", "n5") is None
    results: list[int | None] = []
    threads = [
        threading.Thread(
            target=lambda n=n: results.append(store.advance(ORIGIN, 5, n, f"r{n}", f"n{n}"))
        )
        for n in (8, 9, 10, 11)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(None) == 1  # one advance won; the others were told its size
    latest = store.latest(ORIGIN)
    assert latest is not None and all(r in (None, latest.size) for r in results)
    assert [h[0] for h in store.history(ORIGIN)] == [5, latest.size]


def test_racing_advances_never_roll_back_sqlite(tmp_path: Path) -> None:
    _race(Store(str(tmp_path / "race.sqlite3")))


@pytest.mark.skipif(PG_BIN is None, reason="PostgreSQL is not installed (.ci/run installs it)")
def test_racing_advances_never_roll_back_postgresql(tmp_path: Path) -> None:
    with postgres(tmp_path) as url:
        store = Store(url)
        try:
            _race(store)
        finally:
            store.close()
    json.dumps({})
