"""Make the source tree importable when the package is not installed (development runs)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("service", "clients/python", "proto"):
    path = str(ROOT / sub)
    if path not in sys.path:
        sys.path.insert(0, path)
