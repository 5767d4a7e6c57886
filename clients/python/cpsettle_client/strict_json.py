"""JSON read strictly: an object that names a key twice is an error, not a silent choice.

Python's ``json`` keeps the last of two equal keys; other readers keep the first. A stored
settlement with ``"netMoney": "999999"`` before the real ``netMoney`` therefore verifies here
while a first-key reader sees the forged amount. Every JSON the CLI reads (requests,
settlements, history lines, checkpoints) goes through ``loads``, which refuses it and names the
key and where it sits::

    >>> try:
    ...     loads('{"players": [{"seat": 1, "netMoney": "999999", "netMoney": "-300"}]}')
    ... except DuplicateKey as e:
    ...     print(e)
    duplicate key "netMoney" in players[0]: a reader that keeps the first and one that keeps the last would see different values
"""

from __future__ import annotations

import json
from typing import Any

from .escape import shown


class DuplicateKey(ValueError):
    """An object names ``key`` twice; ``path`` is where the object sits ('' at the top)."""

    def __init__(self, key: str, path: str = "") -> None:
        self.key = key
        self.path = path
        where = f" in {shown(path)}" if path else " at the top level"
        super().__init__(
            f"duplicate key {json.dumps(key, ensure_ascii=True)}{where}: a reader "
            "that keeps the first and one that keeps the last would see different "
            "values"
        )


class _Twice(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Twice(key)
            seen.add(key)
    return out


class _Marked(dict[str, Any]):
    """An object of the second, locating read: which of its keys came twice."""

    twice: str | None = None


def _marking(pairs: list[tuple[str, Any]]) -> _Marked:
    out = _Marked(pairs)
    if len(out) != len(pairs):
        out.twice = next(k for i, (k, _) in enumerate(pairs) if any(k == j for j, _ in pairs[:i]))
    return out


def _locate(value: Any, path: str) -> DuplicateKey | None:
    """The first (in document order) object with a duplicate key, as a DuplicateKey."""
    if isinstance(value, _Marked):
        if value.twice is not None:
            return DuplicateKey(value.twice, path)
        for k, v in value.items():
            found = _locate(v, f"{path}.{k}" if path else k)
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _locate(v, f"{path}[{i}]")
            if found:
                return found
    return None


def loads(text: str | bytes) -> Any:
    """``json.loads`` that raises ``DuplicateKey`` (a ``ValueError``) for a repeated key."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _Twice as e:
        # Rare: read again, marking, to say where the object sits.
        found = _locate(json.loads(text, object_pairs_hook=_marking), "")
        raise found or DuplicateKey(e.key) from None
