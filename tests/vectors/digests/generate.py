"""Writes the digest vectors (tests/vectors/digests/*.json) from the real service and CLI.

    python tests/vectors/digests/generate.py [OUT_DIR]     (default: this folder)

Each vector starts from what an auditor holds and gives what docs/AUDIT.md, "Reproducing the
digests from what you hold", makes of it:

- ``profile-*``: a profile as ``cpsettle profiles NAME --output json`` prints it (``cli``, the
  exact text), as ``GetProfile`` answers it (``getProfile``: the response in protobuf's JSON),
  for a house profile the file the operator wrote (``file``), and for a request's overrides the
  request (``request``); ``expected``: the digest form (canonical JSON text) and the digest;
- ``request-*``: a request's JSON (``request``); ``expected``: its bytes (hex) and
  ``requestDigest``;
- ``id-v1-0.1.0``: a settlement as 0.1.0 issued it; written once (0.1.0 wrote it: this script
  keeps it as it is), ``expected`` the v1 id's text and the id.

The house profiles are in ``house/`` (the service loads them as ``CPSETTLE_PROFILE_DIR``). Nothing
here depends on the time or the engine's code, so the same service writes the same files;
tests/proof/test_digest_vectors.py checks the service still does.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
for sub in ("service", "proto", "clients/python", "."):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

from google.protobuf import json_format

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.cli import main
from cpsettle_client.client import request_from_json
from cpsettle_service.api.profiles import ProfileResolver
from cpsettle_service.api.servicer import SettlementServicer
from cpsettle_service.domain.profile import profile_to_dict
from cpsettle_service.profile_files import builtin_registry, with_directory
from cpsettle_service.proof.digests import sha256_hex
from cpsettle_service.proof.seal import Sealer

HERE = Path(__file__).resolve().parent
HOUSE = HERE / "house"
EXAMPLES = ROOT / "examples" / "tables"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _servicer() -> SettlementServicer:
    return SettlementServicer(
        ProfileResolver(with_directory(builtin_registry(), str(HOUSE))), Sealer(None)
    )


def cli_profile(name: str) -> str:
    """``cpsettle profiles NAME --output json --local --profile-dir house/``: its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["profiles", name, "--output", "json", "--local", "--profile-dir", str(HOUSE)])
    assert code == 0, code
    return out.getvalue()


def get_profile(name: str) -> dict[str, Any]:
    """GetProfile's answer in protobuf's JSON, as a printer writes it (empty fields left out)."""
    response = _servicer().profile_response(name)
    return where_held(json_format.MessageToDict(response))


def where_held(get_profile: dict[str, Any]) -> dict[str, Any]:
    """A GetProfile answer with its summary's ``source`` (the file the service loaded a house
    profile from: a path of the machine it ran on) written from this folder, ``house/…``."""
    summary = get_profile.get("summary", {})
    source = summary.get("source", "")
    if source.startswith(str(HOUSE) + "/"):
        summary["source"] = "house/" + source[len(str(HOUSE)) + 1 :]
    return get_profile


def settle(request: dict[str, Any]) -> pb.Settlement:
    return _servicer().settle_response(request_from_json(request)).settlement


def profile_vector(
    name: str, description: str, profile: str, request: dict[str, Any] | None = None
) -> dict[str, Any]:
    holds: dict[str, Any] = {"cli": cli_profile(profile), "getProfile": get_profile(profile)}
    if (HOUSE / f"{profile}.json").exists():
        holds["file"] = json.loads((HOUSE / f"{profile}.json").read_text("utf-8"))
    if request is not None:
        holds["request"] = request
        s = settle(request)
        digest_form = _resolved(request)
        assert s.profile.digest == sha256_hex(digest_form.encode("utf-8"))
    else:
        digest_form = canonical(_digest_form(profile))
    return {
        "name": name,
        "description": description,
        "holds": holds,
        "expected": {
            "digestForm": digest_form,
            "profileDigest": sha256_hex(digest_form.encode("utf-8")),
        },
    }


def _digest_form(name: str) -> dict[str, Any]:
    profile = with_directory(builtin_registry(), str(HOUSE)).get(name)
    assert profile is not None, name
    return profile_to_dict(profile)


def _resolved(request: dict[str, Any]) -> str:
    from cpsettle_service.domain.profile.parse import apply_overrides

    base = with_directory(builtin_registry(), str(HOUSE)).get(request["preset"])
    assert base is not None
    return canonical(profile_to_dict(apply_overrides(base, request["profileOverrides"])))


def request_vector(name: str, description: str, request: dict[str, Any]) -> dict[str, Any]:
    message = request_from_json(request)
    data = message.SerializeToString(deterministic=True)
    s = settle(request)
    assert s.request_digest == sha256_hex(data)
    return {
        "name": name,
        "description": description,
        "holds": {"request": request},
        "expected": {"bytesHex": data.hex(), "requestDigest": sha256_hex(data)},
    }


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text("utf-8"))  # type: ignore[no-any-return]


# The overrides of a table on the house's western: keys that are prefixes of their neighbours
# (majorityBonus / majorityBonusOnScoop, entry / entryCards, suitOrder / suitOrderTiebreak:
# the map order of "The request's bytes"), numbers as a Struct holds them, an int64 as a string,
# null, an empty list, an enum's zero value and short spelling, ranks in lower case.
OVERRIDES: dict[str, Any] = {
    "scoring": {"majorityBonusOnScoop": False, "majorityBonus": 2, "scoopBonus": 3.0},
    "rake": {"mode": "RAKE_MODE_COMMISSION", "commissionBps": 250, "commissionCap": "500"},
    "fantasyland": {
        "entryCards": 15,
        "entry": {"handClass": "HAND_CLASS_PAIR", "rank": "k"},
        "progressive": [
            {"handClass": "HAND_CLASS_THREE_OF_A_KIND", "cards": 17},
            {"handClass": "HAND_CLASS_PAIR", "rank": "a"},
        ],
        "stay": {"front": {"handClass": "HAND_CLASS_THREE_OF_A_KIND"}},
    },
    "naturals": {"equalRank": "COMPARE_CARDS", "vsFoul": "VS_FOUL_UNSPECIFIED"},
    "money": {"currency": None},
    "ranking": {"suitOrder": [], "suitOrderTiebreak": True},
}


def overrides_request() -> dict[str, Any]:
    request = example("western")
    request.update(
        handId="digest-overrides",
        tableId="table-ß",
        preset="house-western-stakes",
        profileOverrides=copy.deepcopy(OVERRIDES),
        unitValue="250",
        currency="EUR",
    )
    return request


def plain_request() -> dict[str, Any]:
    """Western, with every presence case of a request: an optional int32 and int64 set to 0
    (the button seat, a stack), dead cards, a surrender, a declared natural's 13 cards."""
    request = example("western")
    request.update(
        handId="digest-plain-\u00e9t\u00e9", buttonSeat=0, currency="JPY", deadCards=["qS", "10h"]
    )
    players = request["players"]
    players[0]["stack"] = "0"
    players[1] = {"playerId": "B", "seat": 3, "surrender": True}
    players[2] = {
        "playerId": "C",
        "seat": 6,
        "declaredNatural": "SIX_PAIRS",
        "cards": ["9s", "9h", "8s", "8h", "7c", "7s", "5s", "5h", "Tc", "Td", "Kh", "Ks", "9d"],
    }
    return request


def inline_request() -> dict[str, Any]:
    """The §16 house profile sent inline as the operator wrote it (but for two enum values a
    message does not take), with overrides on top."""
    request = example("shisanshui")
    profile = json.loads((HOUSE / "house-jokers-16.json").read_text("utf-8"))
    # the message's enums take neither a short spelling nor ""
    profile["naturals"]["equalRank"] = "NATURAL_TIE_COMPARE_CARDS"
    profile["naturals"]["table"][3]["definition"]["rows"]["middle"] = "ROW_CLASS_UNSPECIFIED"
    request.update(
        handId="digest-inline-16",
        profile=profile,
        profileOverrides={"deck": {"jokerDuplicates": True}, "caps": {}},
    )
    request.pop("preset", None)
    return request


def build() -> dict[str, dict[str, Any]]:
    vectors = [
        profile_vector("profile-preset-western", "a preset: the western profile", "western"),
        profile_vector(
            "profile-house-16",
            "a house profile that uses the options of RULES.md "
            "§16 (jokers, house naturals, equal naturals, a currency)",
            "house-jokers-16",
        ),
        profile_vector(
            "profile-house-overrides",
            "a house profile with a table's overrides: "
            "the request names the house profile and overrides part of it; the "
            "digest is the settlement's profile.digest",
            "house-western-stakes",
            overrides_request(),
        ),
        request_vector(
            "request-plain",
            "a preset request: optional fields set to 0, dead "
            "cards, a surrender, a declared natural",
            plain_request(),
        ),
        request_vector(
            "request-overrides",
            "a house profile and overrides whose keys are "
            "prefixes of their neighbours (the map order)",
            overrides_request(),
        ),
        request_vector(
            "request-inline-16",
            "an inline profile of RULES.md §16 with overrides",
            inline_request(),
        ),
    ]
    return {v["name"]: v for v in vectors}


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, v in build().items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(v, indent=1, ensure_ascii=False) + "\n", "utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for p in write(out):
        print(p)
