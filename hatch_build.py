"""Hatchling build hook: the software-integrity manifest of the wheel.

Writes ``cpsettle_service/_manifest.json`` into the wheel (never into the source tree: the file is
generated in a temporary directory and added with ``build_data["force_include"]``). It lists every
file the wheel ships in the three packages (``cpsettle_service``, ``cpsettle_client``,
``cpsettle``), by its path relative to site-packages, with its SHA-256::

    {"engine_digest": "<hex>", "files": [{"path": "cpsettle/__init__.py", "sha256": "<hex>"}, ...],
     "format": 1, "name": "cpsettle", "version": "0.1.0"}

The file is written as its own canonical JSON (keys sorted, separators ``,`` and ``:``, UTF-8, no
trailing newline), so the manifest digest -- SHA-256 of the canonical JSON -- is also the plain
``sha256sum`` of the file. Nothing time- or machine-dependent goes in: the same source gives the
same manifest digest on every machine. ``finalize`` re-reads the finished wheel and fails the build
if the manifest does not describe it exactly.

Editable installs get no manifest: they run the source tree itself (the ``.pth`` file points at
``service/``, ...), which changes at every edit, and the service's check looks beside the package it
imported -- the source tree -- so it reports a development install. See docs/INTEGRITY.md.

The definitions (canonical JSON, which files are the engine, the engine digest) are the run-time
check's own: this hook loads ``service/cpsettle_service/proof/integrity.py`` (standard library only)
from the source tree, so the two cannot drift apart; tests/integrity checks that they agree with
``scripts/manifest-digest`` (the auditor's tool) too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import zipfile
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MANIFEST_FORMAT = 1
MANIFEST_PATH = "cpsettle_service/_manifest.json"
PACKAGES = ("cpsettle", "cpsettle_client", "cpsettle_service")


def _load_integrity() -> Any:
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "service",
        "cpsettle_service",
        "proof",
        "integrity.py",
    )
    spec = importlib.util.spec_from_file_location("_cpsettle_integrity_for_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_integrity = _load_integrity()
canonical_json = _integrity.canonical_json
engine_digest = _integrity._engine_digest_of


def _shipped(path: str) -> bool:
    parts = path.split("/")
    return (
        parts[0] in PACKAGES
        and len(parts) > 1
        and path != MANIFEST_PATH
        and "__pycache__" not in parts
        and not path.endswith(".pyc")
    )


_sha256_file = _integrity._sha256_file


CATALOGS = "clients/python/cpsettle_client/i18n/locale"  # the client's gettext catalogs


def compile_catalogs(root: str) -> dict[str, str]:
    """Compile every ``messages.po`` of the client's catalogs into the ``messages.mo`` beside it
    (git-ignored; what ``scripts/catalogs compile`` does) and return them as force-include
    entries (source -> path in the wheel), so the manifest below lists them like any file."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    out: dict[str, str] = {}
    base = os.path.join(root, CATALOGS)
    for lang in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        po = os.path.join(base, lang, "LC_MESSAGES", "messages.po")
        if not os.path.isfile(po):
            continue
        with open(po, "rb") as f:
            catalog = read_po(f, locale=lang)
        mo = po[:-3] + ".mo"
        with open(mo, "wb") as f:
            write_mo(f, catalog)
        out[mo] = f"cpsettle_client/i18n/locale/{lang}/LC_MESSAGES/messages.mo"
    return out


class IntegrityManifestHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._tmpdir: str | None = None
        self._manifest: dict[str, Any] | None = None
        # the catalogs first: an editable install runs the tree (the .mo beside the .po), a
        # wheel ships them, listed in the manifest
        catalogs = compile_catalogs(self.root)
        if version != "standard":
            return  # editable: runs the source tree, see the module docstring
        build_data["force_include"].update(catalogs)
        builder = self.build_config.builder
        sources: dict[str, str] = {}
        # Exactly the files the wheel builder will add (project selection + force-include,
        # including what earlier hooks asked for), before our own manifest is added.
        with self.build_config.set_build_data(build_data):
            for included in builder.recurse_included_files():
                dist = included.distribution_path.replace(os.sep, "/")
                if _shipped(dist):
                    sources[dist] = included.path
        if not any(p.startswith("cpsettle_service/") for p in sources):
            raise RuntimeError("integrity manifest: no cpsettle_service files selected")
        files = [{"path": p, "sha256": _sha256_file(sources[p])} for p in sorted(sources)]
        manifest = {
            "format": MANIFEST_FORMAT,
            "name": self.metadata.core.name,
            "version": self.metadata.version,
            "engine_digest": engine_digest([(f["path"], f["sha256"]) for f in files]),
            "files": files,
        }
        self._tmpdir = tempfile.mkdtemp(prefix="cpsettle-manifest-")
        target = os.path.join(self._tmpdir, "_manifest.json")
        with open(target, "wb") as f:
            f.write(canonical_json(manifest))
        build_data["force_include"][target] = MANIFEST_PATH
        self._manifest = manifest
        digest = hashlib.sha256(canonical_json(manifest)).hexdigest()
        self.app.display_info(f"integrity manifest: {len(files)} files, digest {digest}")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        try:
            if self._manifest is not None:
                self._verify(artifact_path, self._manifest)
        finally:
            if self._tmpdir:
                shutil.rmtree(self._tmpdir, ignore_errors=True)

    @staticmethod
    def _verify(wheel: str, manifest: dict[str, Any]) -> None:
        """The finished wheel ships exactly the listed bytes (catches a file changed mid-build)."""
        with zipfile.ZipFile(wheel) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            if MANIFEST_PATH not in names or z.read(MANIFEST_PATH) != canonical_json(manifest):
                raise RuntimeError(f"integrity manifest: {MANIFEST_PATH} missing from {wheel}")
            actual = {n: hashlib.sha256(z.read(n)).hexdigest() for n in names if _shipped(n)}
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
        if actual != listed:
            wrong = sorted(set(actual.items()) ^ set(listed.items()))
            raise RuntimeError(f"integrity manifest does not match the wheel {wheel}: {wrong[:5]}")
