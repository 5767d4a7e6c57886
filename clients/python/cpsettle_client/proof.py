"""``cpsettle verify`` and ``cpsettle replay``: check a stored settlement's proof, settle again.

A stored settlement is the JSON the service returned (a ``SettleResponse`` — ``cpsettle settle
--output json`` — or a bare ``Settlement``), or its binary protobuf encoding.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb

VARYING = ("issuedAt", "signature")  # the only fields outside the digests


class ProofError(ValueError):
    """A file that cannot be read as a settlement at all (itself a finding)."""


def load_settlement(data: bytes) -> pb.Settlement:
    """A Settlement from stored bytes: JSON (response or bare settlement) or binary protobuf."""
    text: str | None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ProofError(f"not valid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ProofError("not a settlement object")
        if "settlement" in obj and isinstance(obj["settlement"], dict) and len(obj) == 1:
            obj = obj["settlement"]
        try:
            return json_format.ParseDict(obj, pb.Settlement())
        except json_format.ParseError as e:
            raise ProofError(f"not a settlement: {e}") from None
    try:
        msg = pb.Settlement.FromString(data)
    except Exception as e:  # noqa: BLE001 — any decoding failure is a finding
        raise ProofError(f"not a settlement: {e}") from None
    if msg.SerializeToString(deterministic=True) != data:
        raise ProofError("the binary settlement is not in its canonical encoding")
    return msg


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Every leaf that differs between two JSON-shaped values, as 'path: old -> new'."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            if not path and key in VARYING:
                continue
            sub = f"{path}.{key}" if path else key
            if key not in old:
                out.append(f"{sub}: (absent) -> {json.dumps(new[key], ensure_ascii=False)[:120]}")
            elif key not in new:
                out.append(f"{sub}: {json.dumps(old[key], ensure_ascii=False)[:120]} -> (absent)")
            else:
                out.extend(differences(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(f"{sub}: (absent) -> {json.dumps(new[i], ensure_ascii=False)[:120]}")
            elif i >= len(new):
                out.append(f"{sub}: {json.dumps(old[i], ensure_ascii=False)[:120]} -> (absent)")
            else:
                out.extend(differences(old[i], new[i], sub))
        return out
    if old != new:
        return [f"{path}: {json.dumps(old, ensure_ascii=False)} -> "
                f"{json.dumps(new, ensure_ascii=False)}"]
    return []


def settlement_dict(s: pb.Settlement) -> dict[str, Any]:
    return json_format.MessageToDict(s)
