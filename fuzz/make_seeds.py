"""Write the hand-made seed inputs of ``fuzz/fuzz_settle.py`` into a corpus directory.

    python fuzz/make_seeds.py [fuzz/corpus]

Raw seeds are ``b"\\x00" + SettleRequest wire bytes`` (every example table, the invalid example
and a few edge cases); structured seeds are ``b"\\x01" + bytes`` for the FuzzedDataProvider.
Files are named ``seed-*``; the fuzzer's own finds (sha1 names) sit beside them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("service", "proto", "clients/python"):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

from cpsettle.v1 import settlement_pb2 as pb  # noqa: E402
from cpsettle_client.client import request_from_json  # noqa: E402

RAW, STRUCTURED = b"\x00", b"\x01"


def load(path: Path) -> pb.SettleRequest:
    return request_from_json(json.loads(path.read_text("utf-8")))


def seeds() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted((ROOT / "examples" / "tables").glob("*.json")):
        out[f"seed-raw-{path.stem}"] = RAW + load(path).SerializeToString()
    for path in sorted((ROOT / "examples" / "invalid").glob("*.json")):
        out[f"seed-raw-invalid-{path.stem}"] = RAW + load(path).SerializeToString()

    western = load(ROOT / "examples" / "tables" / "western.json")
    out["seed-raw-empty-request"] = RAW
    out["seed-raw-not-protobuf"] = RAW + b"\xff\xff\xff\xff\x0f"
    out["seed-raw-truncated"] = RAW + western.SerializeToString()[:-7]

    one = pb.SettleRequest()
    one.CopyFrom(western)
    del one.players[1:]
    out["seed-raw-one-player"] = RAW + one.SerializeToString()

    natural = pb.SettleRequest()
    natural.CopyFrom(western)
    p = natural.players[0]
    p.cards.extend(
        list(p.arrangement.front) + list(p.arrangement.middle) + list(p.arrangement.back)
    )
    p.ClearField("arrangement")
    p.declared_natural = "SIX_PAIRS"
    natural.players[1].ClearField("arrangement")
    natural.players[1].surrender = True
    natural.players[2].in_fantasyland = True
    out["seed-raw-natural-surrender-fantasyland"] = RAW + natural.SerializeToString()

    over = pb.SettleRequest()
    over.CopyFrom(western)
    over.profile_overrides.update(
        {"caps": {"wins": False}, "rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 500}}
    )
    over.unit_value = 25
    over.dead_cards.append("2h")
    out["seed-raw-overrides-stake-dead-card"] = RAW + over.SerializeToString()

    for i, payload in enumerate((b"", b"\x00" * 16, b"\xff" * 16, bytes(range(64)))):
        out[f"seed-structured-{i}"] = STRUCTURED + payload
    return out


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "fuzz" / "corpus"
    target.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (target / name).write_bytes(data)
    print(f"wrote {len(seeds())} seeds to {target}")


if __name__ == "__main__":
    main()
