"""RFC 6962 hashing and proofs (proof/merkle.py) against transparency-dev/merkle's vectors and
its reference tree, and the proofs made here against the verifiers, at every size up to 70."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from cpsettle_service.proof.merkle import (
    EMPTY_ROOT,
    CompactRange,
    ProofError,
    Range,
    Tree,
    consistency,
    leaf_hash,
    node_hash,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "merkle"
# transparency-dev/merkle testonly/constants.go: LeafInputs() and RootHashes()
LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def _b(text: str) -> bytes:
    return base64.b64decode(text)


def _cases(kind: str) -> list[Path]:
    return sorted((VECTORS / kind).rglob("*.json"))


def test_the_vectors_are_there() -> None:
    assert len(_cases("inclusion")) > 80 and len(_cases("consistency")) > 90


@pytest.mark.parametrize("path", _cases("inclusion"), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_inclusion_vectors(path: Path) -> None:
    v = json.loads(path.read_text())
    args = (
        _b(v["leafHash"]),
        v["leafIdx"],
        v["treeSize"],
        [_b(p) for p in v["proof"] or []],
        _b(v["root"]),
    )
    if v["wantErr"]:
        with pytest.raises(ProofError):
            verify_inclusion(*args)
    else:
        verify_inclusion(*args)


@pytest.mark.parametrize("path", _cases("consistency"), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_consistency_vectors(path: Path) -> None:
    v = json.loads(path.read_text())
    args = (
        v["size1"],
        v["size2"],
        [_b(p) for p in v["proof"] or []],
        _b(v["root1"]),
        _b(v["root2"]),
    )
    if v["wantErr"]:
        with pytest.raises(ProofError):
            verify_consistency(*args)
    else:
        verify_consistency(*args)


def _reference_root(hashes: list[bytes]) -> bytes:
    """RFC 6962 MTH, recursively, as the RFC writes it."""
    if not hashes:
        return EMPTY_ROOT
    if len(hashes) == 1:
        return hashes[0]
    k = 1 << ((len(hashes) - 1).bit_length() - 1)
    return node_hash(_reference_root(hashes[:k]), _reference_root(hashes[k:]))


def test_roots_of_the_reference_leaves() -> None:
    r, tree = CompactRange(), Tree()
    assert r.root().hex() == ROOTS[0] == tree.root().hex()
    for n, leaf in enumerate(LEAVES, 1):
        r.append(leaf_hash(leaf))
        tree.append(leaf_hash(leaf))
        assert r.root().hex() == ROOTS[n] == tree.root().hex() == tree.root(n).hex()
    assert [tree.root(n).hex() for n in range(9)] == ROOTS


def test_every_proof_made_here_verifies_and_a_wrong_one_does_not() -> None:
    hashes = [leaf_hash(i.to_bytes(4, "big")) for i in range(70)]
    tree = Tree(hashes)
    for n in range(1, 71):
        root = tree.root(n)
        assert root == _reference_root(hashes[:n])
        for i in range(n):
            proof = tree.inclusion(i, n)
            assert len(proof) <= n.bit_length()
            verify_inclusion(hashes[i], i, n, proof, root)
            with pytest.raises(ProofError):
                verify_inclusion(hashes[(i + 1) % 70], i, n, proof, root)
        for m in range(1, n + 1):
            proof = tree.consistency(m, n)
            verify_consistency(m, n, proof, tree.root(m), root)
            if 0 < m < n:
                with pytest.raises(ProofError):
                    verify_consistency(m, n, proof, tree.root(m), tree.root(n - 1))


def _decomposition(begin: int, end: int) -> list[tuple[int, int]]:
    """The aligned perfect subtrees that cover [begin, end), fewest first principles: from the
    left, the largest subtree aligned at each position that still fits."""
    out, p = [], begin
    while p < end:
        size = p & -p if p else 1 << 62
        while p + size > end:
            size >>= 1
        out.append((p, size))
        p += size
    return out


def test_a_range_is_the_compact_range_and_appends_or_extends_alike() -> None:
    hashes = [leaf_hash(i.to_bytes(4, "big")) for i in range(80)]
    tree = Tree(hashes)
    for begin in range(40):
        r = Range(begin)
        for end in range(begin + 1, 80):
            r.append(hashes[end - 1])
            want = _decomposition(begin, end)
            assert [(s, n) for s, n, _ in r.nodes()] == want
            assert [h for _, _, h in r.nodes()] == [tree.hash(s, s + n) for s, n in want]
            assert len(r) <= 2 * end.bit_length()
            if end % 7 == 0:  # the same range made of two: extend
                split = (begin + end) // 2
                left, right = Range(begin), Range(split)
                for i in range(begin, split):
                    left.append(hashes[i])
                for i in range(split, end):
                    right.append(hashes[i])
                left.extend(right)
                assert left.nodes() == r.nodes() and (left.begin, left.end) == (begin, end)
    whole = Range()
    for h in hashes:
        whole.append(h)
    assert whole.root() == tree.root() and Range.of(CompactRange()).root() == EMPTY_ROOT
    with pytest.raises(ValueError):
        Range(3).extend(Range(5))


def test_two_compact_ranges_prove_what_the_whole_tree_proves() -> None:
    """RFC 6962's consistency proof from m to n, made from the compact ranges [0, m) and
    [m, n) only, is the whole tree's: at every m < n up to 130 (so the witness feed need keep
    no leaf hash)."""
    hashes = [leaf_hash(i.to_bytes(4, "big")) for i in range(130)]
    tree = Tree(hashes)
    for m in range(1, 130):
        old = CompactRange()
        for h in hashes[:m]:
            old.append(h)
        new = Range(m)
        for n in range(m + 1, 131):
            new.append(hashes[n - 1])
            assert consistency(old, new) == tree.consistency(m, n), (m, n)
        assert consistency(old, Range(m)) == []
    with pytest.raises(ProofError):
        consistency(CompactRange(), Range(2))


def test_bad_sizes_are_refused() -> None:
    tree = Tree([leaf_hash(b"a")])
    with pytest.raises(ProofError):
        tree.inclusion(1, 1)
    with pytest.raises(ProofError):
        tree.consistency(2, 1)
    with pytest.raises(ValueError):
        CompactRange(3, [EMPTY_ROOT])
