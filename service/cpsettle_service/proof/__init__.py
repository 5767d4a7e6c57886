"""Proof: what makes a settlement provable later, and what checks it (docs/AUDIT.md).

==============  ===================================================================
``seal``        the seal written onto each settlement: ids, digests, time, signature
``digests``     the digest and id formulas, the profile digest among them
``events``      the audit log's events about settlements
``log``         the audit log itself: a chain of lines, signed heads, its sinks
``verify``      checking a stored settlement against the published keys
``keys``        Ed25519 signing keys and the published key sets
``times``       the fixed-width millisecond time a signature covers
``integrity``   the installed build's manifest and the engine digest
==============  ===================================================================

Checking a settlement someone kept (the JSON form ``cpsettle settle --output json`` writes):

>>> from cpsettle.v1 import settlement_pb2 as pb
>>> from cpsettle_service.proof.keys import KeySet
>>> from cpsettle_service.proof.verify import verify
>>> stored = pb.Settlement(settlement_id="0" * 64)  # (a real one comes from a file)
>>> [str(f).split(":")[0] for f in verify(stored, KeySet())]
['settlement_id', 'settlement_digest', 'signature']

This face imports none of its rooms: ``integrity`` must load on its own (standard library
only), before the engine whose files it checks, so that a damaged install is reported rather
than failing to import.
"""

__all__ = ["digests", "events", "integrity", "keys", "log", "seal", "times", "verify"]
