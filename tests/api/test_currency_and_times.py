"""The currency (ISO 4217) beside the stake, and times as google.protobuf.Timestamp, through a
real server and the project's client (docs/AUDIT.md, "The currency and its minor units")."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import grpc
import pytest

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, SettlementError
from cpsettle_service.domain.profile.currencies import MINOR_UNITS, NO_CURRENCY
from cpsettle_service.domain.profile.parse import profile_from_dict, profile_to_dict
from cpsettle_service.profile_files import load_preset
from cpsettle_service.proof.keys import KeySet, signing_key_from_pem
from cpsettle_service.proof.times import time_text
from cpsettle_service.proof.verify import verify
from tests.conftest import start_server, stop_server
from tests.support.fixed_keys import fixed_test_key
from tests.support.tables import table

KEY = signing_key_from_pem(fixed_test_key(1), "k-time")


@pytest.fixture(scope="module")
def house_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SettlementClient]:
    """A signing replica with a house profile in euros from its profile directory, and a key
    set whose retired key has a closed window."""
    folder = tmp_path_factory.mktemp("house")
    profile = profile_to_dict(load_preset("western"))
    profile.update(name="house-eur", description="western, in euros")
    profile["money"] = {"unitValue": "250", "currency": "EUR"}
    (folder / "profiles").mkdir()
    (folder / "profiles" / "house-eur.json").write_text(json.dumps(profile), "utf-8")
    key_file = folder / "key.pem"
    key_file.write_bytes(fixed_test_key(1))
    retired = signing_key_from_pem(fixed_test_key(3), "k-retired")
    (folder / "keys.json").write_text(
        json.dumps(
            {
                "keys": [
                    {
                        "keyId": "k-retired",
                        "algorithm": "SIGNATURE_ALGORITHM_ED25519",
                        "publicKey": retired.public.raw.hex(),
                        "notBefore": "2025-01-01T00:00:00Z",
                        "notAfter": "2025-12-31T23:59:59.999Z",
                    }
                ]
            }
        ),
        "utf-8",
    )
    handle = start_server(
        folder / "house.sock",
        profile_dir=str(folder / "profiles"),
        signing_key_file=str(key_file),
        signing_key_id="k-time",
        verification_keys_file=str(folder / "keys.json"),
    )
    try:
        with SettlementClient(handle.address, timeout=10) as c:
            yield c
    finally:
        stop_server(handle)


def test_the_settlement_names_the_currency_default_profile_and_request(
    house_client: SettlementClient,
) -> None:
    # nobody names one: XXX, "no currency involved" (the presets carry none)
    plain = house_client.settle(table("western")).settlement
    assert plain.currency == NO_CURRENCY == "XXX"
    # the house profile's, from the profile directory
    house = house_client.settle(table("house-eur")).settlement
    assert (house.currency, house.unit_value) == ("EUR", 250)
    # the request's overrides the profile's, as unitValue does; the rules stay the same
    yen = house_client.settle(table("house-eur", currency="JPY", unitValue=1)).settlement
    assert (yen.currency, yen.unit_value) == ("JPY", 1)
    assert yen.profile.digest == house.profile.digest
    assert [p.net_units for p in yen.players] == [p.net_units for p in house.players]
    assert [p.net_money for p in yen.players] == [p.net_units for p in yen.players]
    # another currency is another request: another request digest and settlement id
    assert len({s.request_digest for s in (house, yen)}) == 2
    assert len({s.settlement_id for s in (house, yen)}) == 2
    # and a profile override sets it too
    over = house_client.settle(
        table("western", profileOverrides={"money": {"currency": "KWD"}})
    ).settlement
    assert over.currency == "KWD"


@pytest.mark.parametrize(
    "code, reason",
    [
        ("EURO", "three upper-case letters"),
        ("eur", "three upper-case letters"),
        ("ABC", "not an active ISO 4217"),
        ("HRK", "not an active ISO 4217"),  # withdrawn 2023
    ],
)
def test_a_wrong_currency_code_is_invalid_argument_naming_the_field(
    client: SettlementClient, code: str, reason: str
) -> None:
    with pytest.raises(SettlementError) as e:
        client.settle(table("western", currency=code))
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in e.value.violations] == ["currency"]
    assert e.value.metadata["violationCodes"] == "currency"  # the ErrorInfo's machine code
    assert reason in e.value.violations[0].reason


def test_a_wrong_currency_in_a_profile_names_its_path_with_every_other_problem(
    client: SettlementClient,
) -> None:
    with pytest.raises(SettlementError) as e:
        client.settle(
            table("western", profileOverrides={"money": {"currency": "DOLLARS", "unitValue": 0}})
        )
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    fields = sorted(v.field for v in e.value.violations)
    assert "profileOverrides.money.currency" in fields
    assert "profileOverrides.money.unitValue" in fields


def test_the_signature_covers_the_currency(house_client: SettlementClient) -> None:
    s = house_client.settle(table("house-eur")).settlement
    keys = KeySet().with_current(KEY)
    assert verify(s, keys) == []
    paid = pb.Settlement()
    paid.CopyFrom(s)
    paid.currency = "USD"  # same numbers, another currency
    assert [f.what for f in verify(paid, keys)] == ["settlement_digest", "signature"]


def test_the_time_of_issue_is_a_timestamp_in_whole_milliseconds(
    house_client: SettlementClient,
) -> None:
    before = time.time()
    s = house_client.settle(table("western")).settlement
    after = time.time()
    assert s.HasField("issued_at")
    assert s.issued_at.nanos % 1_000_000 == 0
    assert int(before) <= s.issued_at.seconds <= after
    # its JSON form is RFC 3339 and reads back to the same instant
    again = pb.Settlement()
    again.issued_at.FromJsonString(s.issued_at.ToJsonString())
    assert again.issued_at == s.issued_at
    assert time_text(s.issued_at.seconds, s.issued_at.nanos)[:19] == time.strftime(
        "%Y-%m-%dT%H:%M:%S", time.gmtime(s.issued_at.seconds)
    )
    # a millisecond later is another signed time: the signature no longer holds
    keys = KeySet().with_current(KEY)
    assert verify(s, keys) == []
    s.issued_at.nanos += 1_000_000
    assert [f.what for f in verify(s, keys)] == ["signature"]
    s.issued_at.nanos += 1  # finer than a millisecond: no signed text can cover it
    assert [f.what for f in verify(s, keys)] == ["file"]


def test_key_windows_are_timestamps_through_the_rpc(house_client: SettlementClient) -> None:
    answer = house_client.verification_keys()
    by_id = {k.key_id: k for k in answer.keys}
    retired, current = by_id["k-retired"], by_id["k-time"]
    assert (retired.not_before.seconds, retired.not_before.nanos) == (1_735_689_600, 0)
    assert (retired.not_after.seconds, retired.not_after.nanos) == (1_767_225_599, 999_000_000)
    assert not current.HasField("not_before") and not current.HasField("not_after")  # open
    keys = KeySet.from_proto(answer)
    assert keys.get("k-retired").window() == (  # type: ignore[union-attr]
        "[2025-01-01T00:00:00.000Z, 2025-12-31T23:59:59.999Z]"
    )
    # what the replica signs now verifies under the published set; the retired key's window
    # closed before it: a settlement it signed now would be outside it
    s = house_client.settle(table("western")).settlement
    assert verify(s, keys) == []


def test_profile_digests_change_only_where_a_profile_names_a_currency() -> None:
    western = profile_to_dict(load_preset("western"))
    assert "currency" not in western["money"]  # the default is left out of the JSON form
    stated = json.loads(json.dumps(western))
    stated["money"]["currency"] = "XXX"
    assert profile_to_dict(profile_from_dict(stated)) == western  # so is XXX said aloud
    stated["money"]["currency"] = "EUR"
    assert profile_to_dict(profile_from_dict(stated))["money"] == {
        "unitValue": 100,
        "currency": "EUR",
    }


def test_the_currency_table_is_iso_4217_shaped() -> None:
    assert all(len(c) == 3 and c.isupper() and c.isalpha() for c in MINOR_UNITS)
    assert (MINOR_UNITS["JPY"], MINOR_UNITS["USD"], MINOR_UNITS["KWD"]) == (0, 2, 3)
    assert MINOR_UNITS["XXX"] is None and MINOR_UNITS["XTS"] is None
    assert 170 <= len(MINOR_UNITS) <= 190


def test_module_doctests() -> None:
    import doctest

    from cpsettle_service.domain.profile import currencies
    from cpsettle_service.proof import times

    for module in (currencies, times):
        result = doctest.testmod(module)
        assert result.attempted >= 2 and result.failed == 0, module.__name__
