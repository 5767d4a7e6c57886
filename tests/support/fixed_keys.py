"""Fixed Ed25519 TEST keys for tests and test vectors. NEVER FOR PRODUCTION: anyone can read them.

Each key's seed is SHA-256 of a public sentence, so the keys (and every signature made with
them) are the same on every machine; ``tests/vectors`` is built with the first one.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def fixed_test_key(n: int = 1) -> bytes:
    """Test key ``n`` as PKCS#8 PEM (the form CPSETTLE_SIGNING_KEY_FILE holds)."""
    seed = hashlib.sha256(f"cpsettle TEST key {n}: never for production".encode()).digest()
    return Ed25519PrivateKey.from_private_bytes(seed).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
