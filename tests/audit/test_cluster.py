"""``cpsettle audit --cluster``: a sharded history (a folder, or S3 on a real S3-compatible
server: moto's, in a subprocess) audited on a Dask cluster gives the single-process report, and
a worker killed mid-run costs only time."""

from __future__ import annotations

import gzip
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cpsettle_client.cli import main
from tests.audit.conftest import load_generator, read_report

pytest.importorskip("distributed", reason="the [cluster] extra: pip install -e '.[cluster]'")
pytest.importorskip("s3fs", reason="the [cluster] extra")

HANDS = 3000
SHARDS = 12


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


def without_refs(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "ref"} for e in entries]


class History:
    def __init__(self, root: Path) -> None:
        lines, self.key = load_generator().generate(HANDS, seed=41, mistakes=18, invalid=8)
        self.whole = root / "whole.jsonl"
        self.whole.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.folder = root / "day"
        self.folder.mkdir()
        size = -(-HANDS // SHARDS)
        self.files: list[Path] = []
        for i in range(SHARDS):
            data = ("\n".join(lines[i * size : (i + 1) * size]) + "\n").encode()
            if i % 3 == 1:  # some shards gzip-compressed
                path = self.folder / f"part-{i:04d}.jsonl.gz"
                path.write_bytes(gzip.compress(data))
            else:
                path = self.folder / f"part-{i:04d}.jsonl"
                path.write_bytes(data)
            self.files.append(path)
        (self.folder / "README.txt").write_text("not a shard: skipped\n")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return History(tmp_path_factory.mktemp("sharded"))


def audit(tmp_path: Path, name: str, *argv: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / f"{name}.json"
    code = main(["audit", *argv, "--report", str(out), "--progress", "none"])
    return code, read_report(out)


@pytest.fixture(scope="module")
def single(history: History, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The single-process report of the sharded folder (the same tasks, in this process)."""
    code, report = audit(
        tmp_path_factory.mktemp("single"), "single", str(history.folder), "--local"
    )
    assert code == 1
    return report


def test_a_folder_of_shards_reads_as_one_history(
    history: History, single: dict[str, Any], tmp_path: Path
) -> None:
    code, whole = audit(tmp_path, "whole", str(history.whole), "--local")
    assert code == 1
    assert single["summary"] == whole["summary"] and single["summary"]["handsRead"] == HANDS
    assert single["shards"] == SHARDS and single["mode"] == "local"
    # the same hands at the same lines; only the refs name the shard and its own line
    assert without_refs(single["differences"]) == without_refs(whole["differences"])
    assert without_refs(single["invalid"]) == without_refs(whole["invalid"])
    assert (single["byTable"], single["byDealer"]) == (whole["byTable"], whole["byDealer"])
    size = -(-HANDS // SHARDS)
    for d in single["differences"]:
        shard, line = d["ref"].rsplit(":", 1)
        assert shard == history.files[(d["line"] - 1) // size].name
        assert int(line) == (d["line"] - 1) % size + 1


def test_a_local_cluster_gives_the_single_process_report(
    history: History, single: dict[str, Any], tmp_path: Path
) -> None:
    code, report = audit(
        tmp_path,
        "cluster",
        str(history.folder),
        "--cluster",
        "local",
        "--workers",
        "2",
        "--batch",
        "50",
    )
    assert code == 1
    assert report["mode"] == "cluster" and report["cluster"] == "local"
    assert findings(report) == findings(single)


def test_joining_a_running_scheduler(
    history: History, single: dict[str, Any], tmp_path: Path
) -> None:
    """--cluster ADDRESS: the scheduler and its worker are someone else's (here, this test's)."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        code, report = audit(tmp_path, "joined", str(history.folder), "--cluster", address)
        assert len(cluster.workers) == 1  # the audit left the cluster as it found it
    assert code == 1
    assert report["cluster"] == address
    assert findings(report) == findings(single)


# --------------------------------------------------------------------------- S3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    """moto's S3-compatible server in a subprocess, on a port of its own."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def s3_history(s3_server: str, history: History, monkeypatch: pytest.MonkeyPatch) -> str:
    """The shards in a bucket, and the AWS settings that reach it (workers inherit them)."""
    import s3fs

    for key, value in (
        ("AWS_ENDPOINT_URL", s3_server),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(key, value)
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3_server})
    if not fs.exists("audits"):
        fs.mkdir("audits")
        for path in history.files:
            fs.put_file(str(path), f"audits/2026-11-29/{path.name}")
    s3fs.S3FileSystem.clear_instance_cache()
    return "s3://audits/2026-11-29/"


def test_shards_in_s3_on_a_local_cluster(
    s3_history: str, single: dict[str, Any], tmp_path: Path
) -> None:
    code, report = audit(tmp_path, "s3", s3_history, "--cluster", "local", "--workers", "2")
    assert code == 1
    assert report["source"] == s3_history.rstrip("/") and report["shards"] == SHARDS
    assert findings(report) == findings(single)
    assert [d["ref"] for d in report["differences"]] == [d["ref"] for d in single["differences"]]


def _workers_of(pid: int) -> list[int]:
    """The Dask worker processes the audit ``pid`` started (spawned children of it)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"spawn" in cmdline and b"resource_tracker" not in cmdline:
            found.append(int(entry))
    return found


def test_a_worker_killed_mid_run_costs_only_time(
    s3_history: str, single: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "killed.json"
    # every hand the full way (--no-quick): the run lasts long enough to kill a worker in it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cpsettle_client.cli",
            "audit",
            s3_history,
            "--cluster",
            "local",
            "--workers",
            "2",
            "--batch",
            "25",
            "--no-quick",
            "--report",
            str(out),
            "--progress",
            "lines",
            "--progress-interval",
            "0.05",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stderr is not None
    try:
        # the first progress line: a shard is done, so both workers are settling shards
        first = proc.stderr.readline()
        assert b"hands" in first and proc.poll() is None, first
        workers = _workers_of(proc.pid)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        killed_at = time.monotonic()
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"complete: lines 1 to 3,000" in stdout
    assert time.monotonic() > killed_at
    assert proc.returncode == 1 and out.exists(), stderr.decode()[-3000:]
    report = read_report(out)
    assert report["complete"] is True
    assert findings(report) == findings(single)
