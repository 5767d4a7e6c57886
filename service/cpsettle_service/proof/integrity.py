"""Software integrity: the build manifest check, the engine digest and the attestation HMAC.

Standard library only. The wheel carries ``cpsettle_service/_manifest.json`` (written by the build
hook ``hatch_build.py``): the SHA-256 of every shipped file of ``cpsettle_service``,
``cpsettle_client`` and ``cpsettle``, by path relative to site-packages. The *manifest digest* is
SHA-256 of the manifest's canonical JSON (``json.dumps(m, sort_keys=True, separators=(",", ":"))``
encoded as UTF-8). See docs/INTEGRITY.md.

- ``check_installation()`` re-hashes the installed files against the manifest (start-up check and
  the on-demand RPC). A source checkout or an editable install has no manifest: it is reported as a
  development install, with no problems; the server decides whether to accept that.
- ``engine_digest()`` identifies the rules engine that settled a hand: the same value for a source
  checkout and an installed wheel of the same code.
- ``attest(nonce, manifest_digest)`` answers a verifier's challenge: HMAC-SHA256 keyed by the
  verifier's random nonce over the manifest digest.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "ENGINE_VERSION",
    "IntegrityReport",
    "attest",
    "canonical_json",
    "check_installation",
    "engine_digest",
]

MANIFEST_NAME = "_manifest.json"
MANIFEST_FORMAT = 1
PACKAGES = ("cpsettle", "cpsettle_client", "cpsettle_service")
NONCE_MIN_BYTES = 16
NONCE_MAX_BYTES = 64

_PACKAGE_DIR = Path(os.path.abspath(__file__)).parents[1]  # .../site-packages/cpsettle_service
_SITE_ROOT = _PACKAGE_DIR.parent
_ENGINE_DIR = "cpsettle_service/domain/"
_PRESETS_DIR = "cpsettle_service/domain/profile/presets/"


def _package_version() -> str:
    try:
        return metadata.version("cpsettle")
    except metadata.PackageNotFoundError:
        return "0.1.0"


PACKAGE_VERSION: str = _package_version()
ENGINE_VERSION: str = "cpsettle-engine/" + PACKAGE_VERSION


@dataclass(frozen=True)
class IntegrityReport:
    manifest_digest: str  # "" when there is no manifest (development install)
    files_checked: int
    problems: tuple[str, ...]
    development: bool

    @property
    def intact(self) -> bool:
        return not self.problems


def canonical_json(value: Any) -> bytes:
    """The manifest digest is SHA-256 of these bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _is_engine_file(path: str) -> bool:
    """``cpsettle_service/domain/**/*.py`` and the presets,
    ``cpsettle_service/domain/profile/presets/*.json``."""
    if not path.startswith(_ENGINE_DIR) or "/__pycache__/" in path:
        return False
    if path.endswith(".py"):
        return True
    rest = path[len(_PRESETS_DIR) :]
    return path.startswith(_PRESETS_DIR) and rest.endswith(".json") and "/" not in rest


def _engine_digest_of(pairs: list[tuple[str, str]]) -> str:
    """SHA-256 over ``path NUL sha256 LF`` of each engine file, sorted by path."""
    h = hashlib.sha256()
    for path, sha in sorted(p for p in pairs if _is_engine_file(p[0])):
        h.update(f"{path}\0{sha}\n".encode())
    return h.hexdigest()


def _walk_files(site_root: Path, top: str) -> list[str]:
    """Every entry under ``site_root/top`` (paths relative to site_root), ``__pycache__`` left out.

    Directories that are symlinks are listed as entries, not followed.
    """
    out: list[str] = []
    base = site_root / top
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = Path(dirpath).relative_to(site_root).as_posix()
        keep = []
        for d in dirnames:
            if d == "__pycache__":
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                out.append(f"{rel_dir}/{d}")
            else:
                keep.append(d)
        dirnames[:] = keep
        out.extend(f"{rel_dir}/{f}" for f in filenames)
    return out


def _engine_digest_of_tree(site_root: Path) -> str:
    pairs = [
        (rel, _sha256_file(site_root / rel))
        for rel in _walk_files(site_root, "cpsettle_service/domain")
        if _is_engine_file(rel) and (site_root / rel).is_file()
    ]
    return _engine_digest_of(pairs)


def _check_tree(
    site_root: Path, manifest_path: Path, loaded_engine_digest: str | None = None
) -> IntegrityReport:
    """The check itself, on any directory laid out like site-packages (tests use it directly).

    ``loaded_engine_digest``: the engine digest of the code this process imported, compared with the
    manifest's (catches engine files changed before start and put back since).
    """
    try:
        raw = manifest_path.read_bytes()
    except FileNotFoundError:
        return IntegrityReport("", 0, (), True)
    except OSError as e:
        return IntegrityReport("", 0, (f"manifest: unreadable: {e.strerror}",), False)
    try:
        manifest = json.loads(raw)
        digest = hashlib.sha256(canonical_json(manifest)).hexdigest()
    except (ValueError, RecursionError):
        return IntegrityReport("", 0, ("manifest: not valid JSON",), False)
    problems: list[str] = []
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        return IntegrityReport(digest, 0, (f"manifest: unsupported format {fmt!r}",), False)
    if not isinstance(entries, list) or not entries:
        return IntegrityReport(digest, 0, ("manifest: no file list",), False)
    manifest_rel = manifest_path.relative_to(site_root).as_posix()
    listed: set[str] = set()
    checked = 0
    for entry in entries:
        path = entry.get("path") if isinstance(entry, dict) else None
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not isinstance(sha, str):
            problems.append(f"manifest: bad entry {entry!r:.80}")
            continue
        parts = path.split("/")
        if (
            parts[0] not in PACKAGES
            or len(parts) < 2
            or any(p in ("", ".", "..") for p in parts)
            or "\\" in path
            or path == manifest_rel
        ):
            problems.append(f"manifest: path outside the packages: {path!r:.120}")
            continue
        if path in listed:
            problems.append(f"manifest: duplicate entry {path}")
            continue
        listed.add(path)
        checked += 1
        file = site_root / path
        try:
            st = os.lstat(file)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
                problems.append(f"not a regular file: {path}")
            elif _sha256_file(file) != sha:
                problems.append(f"modified: {path}")
        except FileNotFoundError:
            problems.append(f"missing: {path}")
        except OSError as e:
            problems.append(f"unreadable: {path} ({e.strerror})")
    # Anything else in the package directories is tampering too: Python imports an added module,
    # a sourceless .pyc or an extension module, and the presets are found by listing their folder.
    # (Bytecode caches in __pycache__ are written at run time and are left out.)
    for top in PACKAGES:
        for rel in _walk_files(site_root, top):
            if rel not in listed and rel != manifest_rel:
                problems.append(f"unlisted: {rel}")
    expected_engine = manifest.get("engine_digest")
    if not isinstance(expected_engine, str):
        problems.append("manifest: no engine_digest")
    elif loaded_engine_digest is not None and loaded_engine_digest != expected_engine:
        problems.append("engine: the code loaded at start differs from the manifest")
    return IntegrityReport(digest, checked, tuple(sorted(set(problems))), False)


_ENGINE_DIGEST = _engine_digest_of_tree(_SITE_ROOT)  # the engine files as found at import


def check_installation() -> IntegrityReport:
    """Re-hash the installed package files against the manifest built with the wheel."""
    return _check_tree(_SITE_ROOT, _PACKAGE_DIR / MANIFEST_NAME, _ENGINE_DIGEST)


def engine_digest() -> str:
    """SHA-256 identifying the installed rules engine (domain code and presets); see the docs."""
    return _ENGINE_DIGEST


def attest(nonce: bytes, manifest_digest: str) -> str:
    """Hex HMAC-SHA256, keyed by the verifier's nonce, over the manifest digest (ASCII hex)."""
    if not isinstance(nonce, (bytes, bytearray)):
        raise TypeError("nonce must be bytes")
    if not NONCE_MIN_BYTES <= len(nonce) <= NONCE_MAX_BYTES:
        raise ValueError(
            f"nonce must be {NONCE_MIN_BYTES} to {NONCE_MAX_BYTES} bytes, got {len(nonce)}"
        )
    return hmac.new(bytes(nonce), manifest_digest.encode("ascii"), hashlib.sha256).hexdigest()
