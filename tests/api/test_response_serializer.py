"""One response serializer for every unary RPC: Settle's answer arrives as bytes the wire writer
already wrote, the others as messages the runtime serializes. A server started here (not the
session's, whose handlers were built before any test ran) answers both kinds, and each answer
agrees with the others.
"""

from __future__ import annotations

from pathlib import Path

from cpsettle_client.client import SettlementClient
from cpsettle_service.profile_files import builtin_registry
from cpsettle_service.proof.digests import content_bytes, sha256_hex
from tests.conftest import start_server, stop_server
from tests.support.tables import table


def test_a_new_server_answers_with_written_bytes_and_with_messages(tmp_path: Path) -> None:
    handle = start_server(tmp_path / "serializer.sock")
    try:
        with SettlementClient(handle.address, timeout=10) as client:
            s = client.settle(table("western")).settlement  # bytes from the wire writer
            listing = client.list_profiles()  # messages from here on
            profile = client.get_profile("western")
            payouts = client.validate_payouts(
                table("western"), {p.player_id: p.net_money for p in s.players}
            )
    finally:
        stop_server(handle)
    assert s.settlement_digest == sha256_hex(content_bytes(s))
    assert sorted(p.name for p in listing.profiles) == sorted(builtin_registry().names())
    assert profile.summary.digest == s.profile.digest
    assert payouts.all_match
    assert payouts.settlement.settlement_id == s.settlement_id  # the same hand, the same id
