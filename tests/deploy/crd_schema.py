"""Custom resources against their CRD's schema, offline: the re-audit's DaskJob against the
Dask Kubernetes operator's CRD (vendored in third_party/dask-kubernetes-operator).

``kubernetes-validate`` knows the built-in kinds only. A CRD's ``openAPIV3Schema`` is a JSON
Schema (with Kubernetes' ``x-kubernetes-*`` markers); it is read here as one, made strict as
``kubernetes-validate --strict`` is for the built-in kinds (an object with ``properties`` takes
no other key, unless it is marked ``x-kubernetes-preserve-unknown-fields``), and checked with
``jsonschema``.

    python tests/deploy/crd_schema.py RENDERED.yaml...   (from .ci/check-deploy: exit 1 on a
                                                          problem, 0 when every custom resource
                                                          of a known CRD is valid)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CRDS = (REPO / "third_party" / "dask-kubernetes-operator" / "daskjob.yaml",)


def strict(schema: Any) -> Any:
    """The schema with unknown fields refused and int-or-string spelled as JSON Schema."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k not in ("enum", "default", "example") else v
           for k, v in schema.items()}
    if "properties" in out and not out.get("x-kubernetes-preserve-unknown-fields") \
            and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if out.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the strict JSON Schema of each served version of the CRDs."""
    out = {}
    for path in CRDS:
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                root = dict(version["schema"]["openAPIV3Schema"])
                # what every object has beside its CRD's own fields
                root["properties"] = {"apiVersion": {"type": "string"},
                                      "kind": {"type": "string"},
                                      "metadata": {"type": "object"},
                                      **root.get("properties", {})}
                out[(f"{group}/{version['name']}", kind)] = strict(root)
    return out


def problems(doc: dict[str, Any], known: dict[tuple[str, str], dict[str, Any]] | None = None
             ) -> list[str]:
    """What is wrong with ``doc`` by its CRD's schema (``[]``: valid, or not a known CRD)."""
    import jsonschema

    known = schemas() if known is None else known
    schema = known.get((doc.get("apiVersion", ""), doc.get("kind", "")))
    if schema is None:
        return []
    validator = jsonschema.Draft7Validator(schema)
    return [f"{doc['kind']}/{doc['metadata']['name']}: "
            f"{'.'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def main(paths: list[str]) -> int:
    known = schemas()
    found = 0
    errors: list[str] = []
    for path in paths:
        for doc in yaml.safe_load_all(Path(path).read_text(encoding="utf-8")):
            if doc and (doc.get("apiVersion"), doc.get("kind")) in known:
                found += 1
                errors += [f"{Path(path).name}: {p}" for p in problems(doc, known)]
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{found} custom resources checked against {len(known)} CRD schemas, "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
