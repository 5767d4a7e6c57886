"""The ``cpsettle`` command as an operator runs it: a child process whose output is read as the
bytes a terminal would get."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# What a terminal acts on: C0 controls but the newline, DEL, C1 controls, the bidi embeddings,
# overrides and isolates, the line and paragraph separators.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


# What the installed ``cpsettle`` script runs (``-m cpsettle_client.cli`` would load the module a
# second time as __main__, with a second CliError class).
COMMAND = (sys.executable, "-c", "from cpsettle_client.cli import entry; entry()")


def environment() -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
    )


def cli(*argv: str, timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """``cpsettle ARGV...`` in a child process; stdout and stderr as bytes."""
    return subprocess.run(
        [*COMMAND, *argv],
        check=False,
        capture_output=True,
        env=environment(),
        timeout=timeout,
        **kwargs,
    )


def spawn(*argv: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*COMMAND, *argv], env=environment(), **kwargs)


def raw_controls(data: bytes) -> list[str]:
    """Every character of ``data`` (UTF-8) a terminal would act on, as found."""
    return RAW_CONTROL.findall(data.decode("utf-8"))
