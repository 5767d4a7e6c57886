"""One language's plugins of the root buf.gen.yaml, as a template for `buf generate --template`,
so that tests generate exactly what a client team's `buf generate` would, into a test's folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.node import ROOT, node_tools


def generate(language: str, out: Path, **overrides: Any) -> Path:
    """Runs buf.gen.yaml's plugins for ``language`` (those writing gen/<language>) into
    ``out/<language>``; ``overrides`` replace keys of each plugin (e.g. ``protoc_path``)."""
    config = yaml.safe_load((ROOT / "buf.gen.yaml").read_text())
    target = out / language
    plugins = [
        {**plugin, **{k: v for k, v in overrides.items() if k in plugin}, "out": str(target)}
        for plugin in config["plugins"]
        if plugin["out"] == f"gen/{language}"
    ]
    assert plugins, f"buf.gen.yaml has no plugin writing gen/{language}"
    template = {**config, "plugins": plugins}
    # Local plugins are found on PATH: the test's interpreter's bin/ holds mypy-protobuf's.
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        PYTHON=sys.executable,
    )
    done = subprocess.run(
        [str(node_tools() / "buf"), "generate", "--template", json.dumps(template)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    if done.returncode != 0:
        pytest.fail(f"buf generate ({language}) failed:\n{done.stdout}\n{done.stderr}")
    return target
