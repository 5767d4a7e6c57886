"""A real witness (``cpsettle-witness serve`` as a child process) and a real PostgreSQL server
(Debian's ``postgresql``, started by the test in a temporary directory) for tests/record."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.server_process import ROOT

PG_BIN = (
    next(
        (
            p
            for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
            if (p / "initdb").exists()
        ),
        None,
    )
    if Path("/usr/lib/postgresql").exists()
    else None
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_witness(
    tmp: Path,
    key_pem: Path,
    log_keys: Path,
    database: str,
    port: int | None = None,
    *,
    database_file: bool = False,
    name: str = "witness.test/w1",
) -> tuple[subprocess.Popen[bytes], str]:
    """``cpsettle-witness serve`` on 127.0.0.1; its URL once it answers. ``database_file``:
    the database's URL given in a file (``CPSETTLE_WITNESS_DATABASE_FILE``, as deploy/ does)."""
    port = port or free_port()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
        CPSETTLE_WITNESS_KEY_FILE=str(key_pem),
        CPSETTLE_WITNESS_LOG_KEYS_FILE=str(log_keys),
        CPSETTLE_WITNESS_PORT=str(port),
        CPSETTLE_WITNESS_NAME=name,
    )
    if database_file:
        url_file = tmp / f"witness-{port}.database"
        url_file.write_text(database + "\n")
        env["CPSETTLE_WITNESS_DATABASE_FILE"] = str(url_file)
    else:
        env["CPSETTLE_WITNESS_DATABASE"] = database
    log = open(tmp / f"witness-{port}.log", "ab")  # noqa: SIM115 — the child owns it
    proc = subprocess.Popen(
        [sys.executable, "-m", "cpsettle_service.witness.service", "serve"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"the witness exited {proc.returncode}: "
                + (tmp / f"witness-{port}.log").read_text()
            )
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("the witness did not answer")


def export(url: str) -> dict[str, Any]:
    """The witness's export: its JSON document."""
    with urllib.request.urlopen(url + "/export", timeout=10) as answer:
        doc: dict[str, Any] = json.loads(answer.read())
    return doc


@contextmanager
def postgres(tmp: Path) -> Iterator[str]:
    """A PostgreSQL server of its own (unix socket only, in ``tmp``), as an unprivileged user
    when the tests run as root; its connection URL."""
    assert PG_BIN is not None, "PostgreSQL is not installed (apt-get install postgresql)"
    # a directory of its own the server's user can reach (pytest's are private to root)
    home = Path(tempfile.mkdtemp(prefix="cpsettle-pg-"))
    data, run = home / "data", home / "run"
    run.mkdir()
    user = None
    if os.getuid() == 0:
        user = pwd.getpwnam("postgres" if _has_user("postgres") else "nobody")
        for p in (home, run):
            os.chown(p, user.pw_uid, user.pw_gid)

    def as_user() -> None:
        if user is not None:
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    def run_pg(*args: str) -> None:
        subprocess.run(
            [str(PG_BIN / args[0]), *args[1:]],
            check=True,
            preexec_fn=as_user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=120,
        )

    port = free_port()
    run_pg("initdb", "-D", str(data), "-U", "witness", "-A", "trust", "--no-sync")
    run_pg(
        "pg_ctl",
        "-D",
        str(data),
        "-w",
        "-l",
        str(home / "pg.log"),
        "-o",
        f"-k {run} -p {port} -c listen_addresses='' -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql://witness@/postgres?host={run}&port={port}"
    finally:
        run_pg("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(home, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
