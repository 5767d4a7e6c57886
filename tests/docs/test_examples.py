"""The README runs: every JSON and shell example in README.md and docs/*.md is executed.

A block is a fenced code block (```json, ```sh, ```bash, ```shell, ```console, or one without a
language) or an indented one (four spaces, after a blank line, outside a list). A block that is
illustration only (a synopsis with placeholders, a schematic with "…") is marked so by the HTML
comment ``<!-- illustration -->`` on the line before it; every other block runs:

- a JSON block is read strictly (no key twice) and settled as a ``SettleRequest`` by the engine
  (``LocalService``, the CLI's ``--local``): it must settle, without a single violation;
- a shell block runs in bash (``set -euo pipefail``) in a scratch directory holding the
  checkout's ``examples/`` and ``table.json`` (the README's first request), with ``cpsettle`` on
  PATH and a real server: ``localhost:50051`` in the text is its gRPC address (and
  ``$CPSETTLE_SERVER``), ``localhost:8080`` its HTTP/JSON address. It must exit 0.

So an example that stops working fails CI, and a new example is run unless it says it is not
meant to be. docs/RUNBOOK.md's commands are run by tests/ops/test_runbook.py instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.strict_json import loads as strict_loads
from cpsettle_service.api.jsonform import read_json_message
from cpsettle_service.local import LocalService
from tests.conftest import ServerHandle, stop_server
from tests.hardening.support import start_tcp_server
from tests.http.support import free_port

ROOT = Path(__file__).resolve().parents[2]
# docs/RUNBOOK.md's commands run in tests/ops/test_runbook.py, against a stand-in kubectl
# serving two real servers' logs and a real Prometheus: the cluster they are written for.
RUN_ELSEWHERE = {"RUNBOOK.md"}
DOCS = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in RUN_ELSEWHERE),
]
ILLUSTRATION = "<!-- illustration -->"
SHELL = {"", "sh", "bash", "shell", "console"}
FENCE = re.compile(r"^```(\w*)\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based, the block's first line (its fence)
    kind: str  # "json" or "shell"
    text: str
    illustration: bool

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The JSON and shell code blocks of a Markdown file, in order."""
    lines = path.read_text("utf-8").splitlines()
    out: list[Block] = []
    i = 0
    in_list = False

    def marked(start: int) -> bool:
        """Whether the line before ``start`` (blank lines skipped) is the illustration mark."""
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        return j >= 0 and lines[j].strip() == ILLUSTRATION

    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            lang = fence.group(1).lower()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            body = "\n".join(lines[i + 1 : end]) + "\n"
            kind = (
                "json"
                if lang == "json"
                else ("shell" if lang in SHELL and (lang or is_shell(body)) else "")
            )
            if kind:
                out.append(Block(path, i + 1, kind, body, marked(i)))
            i = end + 1
            continue
        if line.strip() and not line.startswith(" "):
            in_list = bool(LIST_ITEM.match(line))
        if (
            line.startswith("    ")
            and line.strip()
            and not in_list
            and (i == 0 or not lines[i - 1].strip())
        ):
            start = i
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                i += 1
            body_lines = [text[4:] for text in lines[start:i]]
            while body_lines and not body_lines[-1].strip():
                body_lines.pop()
            body = "\n".join(body_lines) + "\n"
            if is_shell(body):
                out.append(Block(path, start + 1, "shell", body, marked(start)))
            continue
        i += 1
    return out


COMMANDS = {
    "cpsettle",
    "cpsettle-server",
    "curl",
    "kubectl",
    "python",
    "python3",
    "pip",
    "npm",
    "npx",
    "node",
    "docker",
    "jq",
    "nice",
    "bash",
    "sh",
    "git",
    "openssl",
    "buf",
    "uv",
}


def is_shell(text: str) -> bool:
    """Whether a block is a shell example: its first command is a program (``COMMANDS``) or a
    path (``scripts/…``, ``./…``). A formula or a PromQL query is neither JSON nor shell."""
    for line in text.splitlines():
        words = line.strip().removeprefix("$ ").split()
        if not words or words[0].startswith("#"):
            continue
        first = words[0]
        return first in COMMANDS or "/" in first
    return False


ALL = [b for path in DOCS for b in blocks(path)]
RUN = [b for b in ALL if not b.illustration]


def test_the_readme_examples_are_found() -> None:
    readme = [b for b in ALL if b.path.name == "README.md"]
    assert sum(b.kind == "json" for b in readme) >= 1
    assert sum(b.kind == "shell" and not b.illustration for b in readme) >= 2
    # the curl call of the HTTP section is among those that run
    assert any("curl" in b.text and not b.illustration for b in readme)


@pytest.mark.parametrize("block", [b for b in RUN if b.kind == "json"], ids=lambda b: b.name)
def test_json_examples_settle(block: Block) -> None:
    data = strict_loads(block.text)
    request = read_json_message(json.dumps(data), pb.SettleRequest())
    settlement = LocalService().settle(request).settlement
    assert settlement.settlement_id and len(settlement.players) == len(request.players)


def first_request() -> str:
    readme = [b for b in ALL if b.path.name == "README.md" and b.kind == "json"]
    return readme[0].text


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    from tests.client.test_retry_and_rebalance import pem_key

    handle = start_tcp_server(
        http_port=free_port(), signing_key=pem_key(), signing_key_id="docs-key"
    )
    yield handle
    stop_server(handle)


@pytest.mark.parametrize("block", [b for b in RUN if b.kind == "shell"], ids=lambda b: b.name)
def test_shell_examples_run(block: Block, server: ServerHandle, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "table.json").write_text(first_request())
    grpc_address = server.address
    http_address = f"127.0.0.1:{server.running.http_port}"
    script = block.text.replace("localhost:50051", grpc_address).replace(
        "localhost:8080", http_address
    )
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        CPSETTLE_SERVER=grpc_address,
        PYTHONPATH=os.pathsep.join(str(ROOT / d) for d in ("service", "proto", "clients/python")),
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (
        f"{block.name} exited {done.returncode}:\n{script}\n--- stdout\n{done.stdout}"
        f"\n--- stderr\n{done.stderr}"
    )
