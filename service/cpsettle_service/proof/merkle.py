"""RFC 6962 Merkle trees (RFC 9162 section 2.1): leaf and node hashes, the tree head, inclusion
and consistency proofs and their verification (docs/AUDIT.md, "The verifiable log").

- a leaf's hash is ``SHA-256(0x00 || leaf)``, an inner node's ``SHA-256(0x01 || left ||
  right)``; the empty tree's root is ``SHA-256("")``;
- a tree of ``n`` leaves splits at ``k``, the largest power of two below ``n``.

``CompactRange`` is what a writer keeps to append in O(1) amortized and give the root in
O(log n): the roots of the perfect subtrees the leaves so far decompose into; ``Range`` is the
same for leaves from any index on, and ``consistency`` proves a tree from two of them (what the
witness feed keeps). ``Tree`` holds every leaf hash of a log read back (a verifier's view) and
makes proofs in O(log n) hashes from its cached levels. ``verify_inclusion`` and
``verify_consistency`` are RFC 9162's algorithms (2.1.3.2 and 2.1.4.2), checked against
transparency-dev/merkle's vectors (tests/vectors/merkle).

>>> leaf_hash(b"").hex()[:16]
'6e340b9cffb37a98'
>>> r = CompactRange()
>>> for leaf in (b"", b"\\x00"): _ = r.append(leaf_hash(leaf))
>>> r.root().hex()[:16]
'fac54203e7cc696c'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from ..errors import ProofError

__all__ = [
    "EMPTY_ROOT",
    "CompactRange",
    "ProofError",
    "Range",
    "Tree",
    "consistency",
    "consistency_path",
    "inclusion_path",
    "leaf_hash",
    "node_hash",
    "verify_consistency",
    "verify_inclusion",
]

EMPTY_ROOT = hashlib.sha256(b"").digest()
_sha256 = hashlib.sha256


def leaf_hash(leaf: bytes) -> bytes:
    return _sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


class CompactRange:
    """The perfect subtrees ``[0, size)`` decomposes into, largest first: appending a leaf
    merges equal neighbours (one node hash per merge, one on average), the root folds them from
    the right (O(log n))."""

    __slots__ = ("size", "_nodes")

    def __init__(self, size: int = 0, nodes: Sequence[bytes] = ()) -> None:
        if len(nodes) != bin(size).count("1"):
            raise ValueError(
                f"a range of {size} leaves has {bin(size).count('1')} nodes, got {len(nodes)}"
            )
        self.size = size
        self._nodes = list(nodes)

    def append(self, h: bytes) -> int:
        """Append the leaf whose hash is ``h``; its index."""
        index = self.size
        nodes = self._nodes
        nodes.append(h)
        n = index
        while n & 1:  # each trailing one of the old size is a subtree to merge with
            right = nodes.pop()
            nodes[-1] = _sha256(b"\x01" + nodes[-1] + right).digest()
            n >>= 1
        self.size = index + 1
        return index

    def root(self) -> bytes:
        nodes = self._nodes
        if not nodes:
            return EMPTY_ROOT
        r = nodes[-1]
        for left in reversed(nodes[:-1]):
            r = _sha256(b"\x01" + left + r).digest()
        return r

    def nodes(self) -> list[tuple[int, int, bytes]]:
        """``(start, size, hash)`` of each subtree, left to right."""
        out, start = [], 0
        sizes = [1 << b for b in range(self.size.bit_length() - 1, -1, -1) if self.size >> b & 1]
        for size, h in zip(sizes, self._nodes, strict=True):
            out.append((start, size, h))
            start += size
        return out

    def copy(self) -> CompactRange:
        return CompactRange(self.size, self._nodes)


class Tree:
    """Every leaf hash of a tree (in order), with the perfect subtrees' hashes cached by level:
    the root of any prefix and any proof cost O(log n) hashes once the levels are built."""

    def __init__(self, leaf_hashes: Sequence[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [list(leaf_hashes)]
        self._build(0)

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def append(self, h: bytes) -> int:
        index = len(self.levels[0])
        self.levels[0].append(h)
        self._build(index)
        return index

    def _build(self, start: int) -> None:
        level = 0
        while True:
            below = self.levels[level]
            if len(below) < 2:
                return
            if level + 1 == len(self.levels):
                self.levels.append([])
            above = self.levels[level + 1]
            first = min(len(above), start // 2)
            del above[first:]
            for i in range(first, len(below) // 2):
                above.append(node_hash(below[2 * i], below[2 * i + 1]))
            level += 1
            start = first

    def hash(self, start: int, end: int) -> bytes:
        """The Merkle tree hash of the leaves ``[start, end)``."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0 and start % n == 0:  # a perfect, aligned subtree: cached
            return self.levels[n.bit_length() - 1][start // n]
        k = _split(n)
        return node_hash(self.hash(start, start + k), self.hash(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        return self.hash(0, self.size if size is None else size)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        """RFC 6962 PATH(index, D[0:size]): leaf sibling first, root's child last."""
        if not 0 <= index < size <= self.size:
            raise ProofError(f"no leaf {index} in a tree of {size} (of {self.size}) leaves")
        return inclusion_path(self.hash, index, size)

    def consistency(self, old: int, new: int) -> list[bytes]:
        """RFC 6962 PROOF(old, D[0:new]) (empty when old is 0 or old == new)."""
        if not 0 <= old <= new <= self.size:
            raise ProofError(
                f"no consistency proof from {old} to {new} leaves (the tree has {self.size})"
            )
        return consistency_path(self.hash, old, new)


class Range:
    """The compact range of the leaves ``[begin, end)`` (transparency-dev/merkle's
    ``compact.Range``): the fewest perfect, aligned subtrees that cover them, left to right,
    ``(start, size, hash)`` each -- at most two per level, so O(log n) hashes however many
    leaves. Appending a leaf, or the range that follows, merges equal aligned neighbours.

    What a log writer keeps to prove its tree consistent with an older one: RFC 6962's
    consistency proof from ``m`` leaves to ``n`` is made of subtrees of ``[0, m)`` and of
    ``[m, n)`` alone (``consistency``), so the compact ranges of the two are enough, and no leaf
    hash need be kept (tests/record/test_merkle.py checks it at every ``m < n`` up to 130).

    >>> r = Range(3)
    >>> for i in range(3, 8): r.append(leaf_hash(bytes([i])))
    >>> [(start, size) for start, size, _ in r.nodes()]
    [(3, 1), (4, 4)]
    """

    __slots__ = ("begin", "end", "_nodes")

    def __init__(self, begin: int = 0) -> None:
        self.begin = self.end = begin
        self._nodes: list[tuple[int, int, bytes]] = []

    @classmethod
    def of(cls, tree: CompactRange) -> Range:
        """The range ``[0, tree.size)``."""
        r = cls()
        r._nodes = tree.nodes()
        r.end = tree.size
        return r

    def append(self, h: bytes) -> None:
        """Append the leaf whose hash is ``h`` (at index ``end``)."""
        self._push(self.end, 1, h)

    def extend(self, other: Range) -> None:
        """Append ``other``, the range that starts where this one ends."""
        if other.begin != self.end:
            raise ValueError(f"a range ending at {self.end} cannot take one from {other.begin}")
        for start, size, h in other._nodes:
            self._push(start, size, h)
        self.end = other.end

    def _push(self, start: int, size: int, h: bytes) -> None:
        nodes = self._nodes
        nodes.append((start, size, h))
        self.end = start + size
        while len(nodes) > 1:
            left_start, left_size, left = nodes[-2]
            if left_size != size or left_start % (2 * size):
                break  # not two halves of one aligned subtree
            nodes[-2:] = [(left_start, 2 * size, node_hash(left, nodes[-1][2]))]
            start, size = left_start, 2 * size

    def nodes(self) -> list[tuple[int, int, bytes]]:
        return list(self._nodes)

    def copy(self) -> Range:
        r = Range(self.begin)
        r.end, r._nodes = self.end, list(self._nodes)
        return r

    def __len__(self) -> int:
        """The hashes it holds."""
        return len(self._nodes)

    def root(self) -> bytes:
        """The Merkle tree hash of its leaves (for a range from 0: the tree's root)."""
        if not self._nodes:
            return EMPTY_ROOT
        r = self._nodes[-1][2]
        for _, _, left in reversed(self._nodes[:-1]):
            r = node_hash(left, r)
        return r


def consistency(old: CompactRange | Range, new: Range) -> list[bytes]:
    """RFC 6962 PROOF(m, D[0:n]) from the compact ranges of ``[0, m)`` (``old``) and ``[m, n)``
    (``new``): each hash it takes is a run of their subtrees (an ``n`` side node is the right
    fold of the subtrees under it)."""
    base = Range.of(old) if isinstance(old, CompactRange) else old
    if base.begin != 0 or new.begin != base.end:
        raise ProofError(
            f"ranges [{base.begin}, {base.end}) and [{new.begin}, {new.end}) do not make one tree"
        )
    nodes = base.nodes() + new.nodes()

    def hash_of(start: int, end: int) -> bytes:
        parts = [h for s, n, h in nodes if s >= start and s + n <= end]
        covered = sum(n for s, n, _ in nodes if s >= start and s + n <= end)
        if covered != end - start or not parts:
            raise ProofError(f"leaves [{start}, {end}) are not whole subtrees of the ranges")
        r = parts[-1]
        for left in reversed(parts[:-1]):
            r = node_hash(left, r)
        return r

    return consistency_path(hash_of, base.end, new.end)


def inclusion_path(hash_of: Callable[[int, int], bytes], index: int, size: int) -> list[bytes]:
    """RFC 6962 PATH, with ``hash_of(start, end)`` the hash of a range of leaves."""
    out: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            out.append(hash_of(start + k, end))
            end = start + k
        else:
            out.append(hash_of(start, start + k))
            start += k
    out.reverse()
    return out


def consistency_path(hash_of: Callable[[int, int], bytes], old: int, new: int) -> list[bytes]:
    """RFC 6962 PROOF(old, D[0:new]) = SUBPROOF(old, D[0:new], true), iteratively."""
    if old == 0 or old == new:
        return []
    out: list[bytes] = []
    start, end, m, whole = 0, new, old, True
    while True:
        n = end - start
        if m == n:
            if not whole:
                out.append(hash_of(start, end))
            break
        k = _split(n)
        if m <= k:
            out.append(hash_of(start + k, end))
            end = start + k
        else:
            out.append(hash_of(start, start + k))
            start, m, whole = start + k, m - k, False
    out.reverse()
    return out


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 2.1.3.2; raises ProofError unless ``leaf`` (a leaf hash) is at ``index`` of the
    tree of ``size`` leaves whose root is ``root``."""
    if not 0 <= index < size:
        raise ProofError(f"index {index} is outside a tree of {size} leaves")
    if len(leaf) != 32 or len(root) != 32:
        raise ProofError("a leaf hash and a root are 32 bytes")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if len(p) != 32:
            raise ProofError("a proof hash is not 32 bytes")
        if sn == 0:
            raise ProofError("the proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than the tree is deep")
    if r != root:
        raise ProofError("the proof does not lead to the root")


def verify_consistency(
    old: int, new: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes
) -> None:
    """RFC 9162 2.1.4.2; raises ProofError unless the tree of ``old`` leaves with root
    ``old_root`` is a prefix of the tree of ``new`` leaves with root ``new_root``."""
    if not 0 <= old <= new:
        raise ProofError(f"old size {old} is larger than new size {new}")
    if old == 0:  # every tree extends the empty one: callers take that case themselves
        raise ProofError("a consistency proof from the empty tree proves nothing")
    if old == new:
        if proof:
            raise ProofError("equal sizes take an empty proof")
        if old_root != new_root:
            raise ProofError("equal sizes with different roots")
        return
    if not proof:
        raise ProofError("the proof is empty")
    if any(len(p) != 32 for p in proof):
        raise ProofError("a proof hash is not 32 bytes")
    path = list(proof)
    if old & (old - 1) == 0:  # a perfect old tree: its root starts the path
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than the tree is deep")
    if fr != old_root:
        raise ProofError("the proof does not lead to the old root")
    if sr != new_root:
        raise ProofError("the proof does not lead to the new root")
