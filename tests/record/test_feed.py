"""The witness feed (proof/feed.py) against a real witness (``cpsettle-witness serve``, SQLite):
a log line written before the feed was added skews no proof, an outage of any
length is caught up by itself in bounded memory (no "gap"), and a checkpoint the witness took
whose answer was lost (a proxy that drops the answers) is moved on from, not stuck on. Each
ends with ``cpsettle audit-log verify`` of the log's lines against the witness's export."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from cpsettle_service.proof.feed import WitnessFeed
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from cpsettle_service.proof.log import Log
from tests.support.fixed_keys import fixed_test_key
from tests.support.witness import export, free_port, start_witness

REPLICA_KEY = fixed_test_key(1)


class Replica:
    """A Log as the server makes one (signed checkpoints, lines kept in memory), its feed."""

    def __init__(self, url: str, checkpoint_every: int = 1000, before: int = 0) -> None:
        self.lines: list[str] = []
        self.log = Log(
            lambda e: json.dumps(e, separators=(",", ":")),
            lambda: "t",
            checkpoint_every,
            write=self.lines.append,
        )
        self.log.set_signer(signing_key_from_pem(REPLICA_KEY))
        for i in range(before):  # written before the feed exists (signing.key_exposed, say)
            self.log.emit({"event": "early", "n": i})
        self.feed = WitnessFeed(url, timeout=5)
        self.log.add_feed(self.feed)
        self.log.checkpoint("start")

    def write(self, n: int, tag: str = "line") -> None:
        for i in range(n):
            self.log.emit({"event": tag, "n": i})

    def checkpoints(self) -> list[dict[str, Any]]:
        return [e for e in map(json.loads, self.lines) if e["event"] == "audit.checkpoint"]


@pytest.fixture()
def witness(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    (tmp_path / "witness.pem").write_bytes(fixed_test_key(3))
    keys = tmp_path / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(REPLICA_KEY)).to_json())
    proc, url = start_witness(
        tmp_path, tmp_path / "witness.pem", keys, str(tmp_path / "witness.sqlite3")
    )
    yield tmp_path, url
    stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def witnessed(url: str, origin: str) -> dict[str, Any]:
    """The witness's record of the log (size -1: none)."""
    found: list[dict[str, Any]] = [e for e in export(url)["logs"] if e["origin"] == origin]
    assert len(found) <= 1
    return found[0] if found else {"size": -1}


def wait_cosigned(url: str, r: Replica, seconds: float = 30) -> None:
    """Until the witness holds the replica's newest checkpoint."""
    want = r.checkpoints()[-1]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        entry = witnessed(url, r.log.origin)
        if entry["size"] == want["size"]:
            assert entry["root"] == want["root"]
            return
        time.sleep(0.05)
    raise AssertionError(f"the witness holds {entry['size']} lines, not {want['size']}")


def verify(tmp: Path, url: str, r: Replica, capsys: pytest.CaptureFixture[str]) -> None:
    """``cpsettle audit-log verify`` of the replica's lines with the witness's export and
    pinned key: every check ran, nothing is wrong (exit 0)."""
    (tmp / "run.log").write_text("".join(r.lines))
    exported = export(url)
    (tmp / "export.json").write_text(json.dumps(exported))
    (tmp / "witness.vkey").write_text(exported["witness"]["vkey"] + "\n")
    capsys.readouterr()
    code = main(
        [
            "audit-log",
            "verify",
            str(tmp / "run.log"),
            "--keys",
            str(tmp / "keys.json"),
            "--witness",
            str(tmp / "export.json"),
            "--witness-key",
            str(tmp / "witness.vkey"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out


def test_a_line_written_before_the_feed_was_added_skews_no_proof(
    witness: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Once, a warning logged before the feed was added (``signing.key_exposed``)
    left the feed one leaf short, so every proof after the first checkpoint failed (422) and
    the witness never moved on. The feed starts from the log as it is."""
    tmp, url = witness
    r = Replica(url, checkpoint_every=5, before=3)
    assert json.loads(r.lines[0])["index"] == 0 and json.loads(r.lines[3])["size"] == 3
    wait_cosigned(url, r)
    for _ in range(6):  # checkpoints at 9, 15, 21, ...: each sent with a proof from the last
        r.write(5)
        wait_cosigned(url, r)
    r.log.checkpoint("shutdown")
    assert r.feed.close(20), "the witness did not cosign the last checkpoint"
    last = r.checkpoints()[-1]
    entry = witnessed(url, r.log.origin)
    assert (entry["size"], entry["root"]) == (last["size"], last["root"])
    assert len(r.checkpoints()) >= 8  # start, six by count, shutdown: all with proofs from >0
    verify(tmp, url, r, capsys)


def test_a_witness_away_for_any_number_of_lines_is_caught_up_in_bounded_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The witness is down while 30,000 lines and 30 checkpoints go by: the feed keeps the
    lines of one checkpoint interval and a few subtree hashes, never 32 bytes a line; when the
    witness comes up on its address, the newest checkpoint goes with one proof from size 0
    (the run's registration never arrived) and the record is whole."""
    (tmp_path / "witness.pem").write_bytes(fixed_test_key(3))
    keys = tmp_path / "keys.json"
    keys.write_text(KeySet().with_current(signing_key_from_pem(REPLICA_KEY)).to_json())
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    r = Replica(url, checkpoint_every=1000)
    held = []
    for _ in range(30):
        r.write(1000)
        # once the feed's thread has folded the lines up to the newest checkpoint in: the
        # lines since it (one, its own) and the subtrees, where the old feed held every line
        deadline = time.monotonic() + 10
        while r.feed.held_hashes() > 100 and time.monotonic() < deadline:
            time.sleep(0.01)
        held.append(r.feed.held_hashes())
    assert r.feed.pending_lines == r.log.size  # nothing cosigned
    assert max(held) <= 100, held
    proc, url = start_witness(
        tmp_path, tmp_path / "witness.pem", keys, str(tmp_path / "witness.sqlite3"), port=port
    )
    try:
        r.write(10)
        r.log.checkpoint("interval")
        assert r.feed.close(60), "the feed did not catch up"
        assert r.feed.pending_lines == 1  # the last checkpoint's own line
        entry = witnessed(url, r.log.origin)
        assert entry["size"] == r.checkpoints()[-1]["size"] == r.log.size - 1
        verify(tmp_path, url, r, capsys)
    finally:
        stop(proc)


class LosingProxy:
    """Passes add-checkpoint calls to the witness and, for the first ``lose`` of them, drops
    the witness's answer (the connection closes): the witness took the checkpoint, the
    replica never heard."""

    def __init__(self, target: str, lose: int) -> None:
        self.lose, self.lost, self.target = lose, 0, target
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = urllib.request.Request(proxy.target + self.path, data=body, method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=10) as answer:
                        status, text = answer.status, answer.read()
                except urllib.error.HTTPError as e:
                    status, text = e.code, e.read()
                if status == 200 and proxy.lost < proxy.lose:
                    proxy.lost += 1
                    self.close_connection = True  # the answer is lost
                    return
                self.send_response(status)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_checkpoint_taken_whose_answer_was_lost_is_moved_on_from(
    witness: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The witness cosigns, the answer never arrives: the next call (with the old size) is
    told 409 and the witness's size, which the feed sent, so it goes on from there."""
    tmp, url = witness
    proxy = LosingProxy(url, lose=3)
    try:
        r = Replica(proxy.url, checkpoint_every=7)
        for _ in range(5):
            r.write(7)
            time.sleep(0.3)
        r.log.checkpoint("shutdown")
        assert r.feed.close(30), "the feed is stuck on an answer it never got"
        assert proxy.lost == 3
        entry = witnessed(url, r.log.origin)
        assert entry["size"] == r.checkpoints()[-1]["size"]
        verify(tmp, url, r, capsys)
    finally:
        proxy.close()
