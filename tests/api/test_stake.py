"""The stake on the wire: requestDigest and the settlement's unit value cover it; the profile
digest (format v2, docs/AUDIT.md) covers the rules without the table's stake."""

from __future__ import annotations

from cpsettle_client.client import SettlementClient
from tests.support.tables import table


def test_the_profile_digest_is_the_same_at_every_stake(client: SettlementClient) -> None:
    preset = client.get_profile("western").summary
    seen = {}
    for stake in (None, 25, 500):
        request = table("western") if stake is None else table("western", unitValue=stake)
        response = client.settle(request)
        s = response.settlement
        assert s.unit_value == (stake or 100)
        assert s.profile.digest == preset.digest
        assert all(p.owed == abs(p.units) * s.unit_value for p in s.pairs)
        seen[stake] = (s.request_digest, s.settlement_id)
    assert len({d for d, _ in seen.values()}) == 3  # the request digest covers the stake
    assert len({i for _, i in seen.values()}) == 3
