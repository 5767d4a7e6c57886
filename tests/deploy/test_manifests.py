"""Invariants of the container image recipe and the Kubernetes manifests.

Runs without kustomize or kubectl: a small model of the kustomize features that
deploy/ uses (resources, components, configMapGenerator, strategic-merge
patches from files, images, namespace) builds base, overlays and the
component variants straight from the files, so every invariant below is
asserted on every run.

When .ci/check-deploy has rendered the same variants with the real kustomize
(into $CPSETTLE_DEPLOY_RENDERED, default <tmp>/cpsettle-check-deploy/rendered)
and deploy/ has not changed since, the invariants are asserted on that output
too, and the model's output is compared with it, so the model cannot drift from
kustomize unnoticed. Those tests are skipped, with the reason, otherwise.

Needs PyYAML (test extra "PyYAML>=6.0.1").
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from cpsettle_service.profile_files import builtin_registry, with_directory

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DOCKERFILE = REPO / "Dockerfile"

RENDERED_ENV = "CPSETTLE_DEPLOY_RENDERED"
RENDERED_DEFAULT = Path(tempfile.gettempdir()) / "cpsettle-check-deploy" / "rendered"
STAMP = "INPUTS.sha256"

APP = "cpsettle"
GRPC_PORT = 50051
METRICS_PORT = 9464
HTTP_PORT = 8080  # HTTP/JSON (Connect) beside gRPC
HEALTH_PORT = 50052  # plaintext, grpc.health.v1 only: what the kubelet's probes call
READINESS_SERVICE = "cpsettle.v1.SettlementService"
LIVENESS_SERVICE = "liveness"
UID = 10001

# name -> (overlay directory, components added on top, namespace of the variant)
# .ci/check-deploy renders the same variants; keep the two lists in step.
VARIANTS: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "base": ("base", (), None),
    "dev": ("overlays/dev", (), "cpsettle-dev"),
    "prod": ("overlays/prod", (), "cpsettle"),
    "prod-monitoring": (
        "overlays/prod",
        (
            "components/servicemonitor",
            "components/prometheus-rules",
            "components/grafana-dashboard",
        ),
        "cpsettle",
    ),
    "prod-caller-tokens": ("overlays/prod", ("components/caller-tokens",), "cpsettle"),
    "prod-cert-manager": ("overlays/prod", ("components/cert-manager",), "cpsettle"),
    "prod-tracing": ("overlays/prod", ("components/tracing",), "cpsettle"),
    "prod-bulk-audit": ("overlays/prod", ("components/bulk-audit",), "cpsettle"),
    "prod-reaudit": ("overlays/prod", ("components/reaudit",), "cpsettle"),
    "prod-witness": ("overlays/prod", ("components/witness",), "cpsettle"),
}
PROD_VARIANTS = (
    "prod",
    "prod-monitoring",
    "prod-caller-tokens",
    "prod-cert-manager",
    "prod-tracing",
    "prod-bulk-audit",
    "prod-reaudit",
    "prod-witness",
)
REAUDIT = "cpsettle-reaudit"  # the re-audit component's DaskJob (and its reports' claim)
BULK = "cpsettle-bulk-audit"  # the bulk re-audit component's Deployment, Service, NetworkPolicy
RUNBOOK = REPO / "docs" / "RUNBOOK.md"


# --------------------------------------------------------------------------- #
# A small model of kustomize                                                   #
# --------------------------------------------------------------------------- #

SUPPORTED_KEYS = {
    "apiVersion",
    "kind",
    "namespace",
    "resources",
    "components",
    "configMapGenerator",
    "patches",
    "images",
    "replacements",
}
LOCAL_CONFIG = "config.kubernetes.io/local-config"

# Strategic-merge keys of the lists that deploy/ patches (Kubernetes' own keys).
MERGE_KEYS = {
    "containers": ("name",),
    "initContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "ports": ("containerPort", "port"),
    "topologySpreadConstraints": ("topologyKey",),
    "imagePullSecrets": ("name",),
}


def load_all(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def load_one(path: Path) -> dict[str, Any]:
    docs = load_all(path)
    assert len(docs) == 1, f"{path}: expected one YAML document, found {len(docs)}"
    return docs[0]


def _merge_key(field: str, items: list[Any]) -> str | None:
    for key in MERGE_KEYS.get(field, ()):
        if items and all(isinstance(i, dict) and key in i for i in items):
            return key
    return None


def strategic_merge(base: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge of the subset that deploy/ uses."""
    if isinstance(patch, dict):
        assert "$patch" not in patch, f"unsupported $patch directive inside {field!r}"
        if not isinstance(base, dict):
            return copy.deepcopy(patch)
        out = dict(base)
        for k, v in patch.items():
            out[k] = strategic_merge(base.get(k), v, k) if k in base else copy.deepcopy(v)
        return out
    if isinstance(patch, list) and isinstance(base, list):
        key = _merge_key(field, base + patch)
        if key is None:
            return copy.deepcopy(patch)  # lists without a merge key are replaced
        merged = list(base)
        for item in patch:
            for i, existing in enumerate(merged):
                if existing[key] == item[key]:
                    merged[i] = strategic_merge(existing, item, field)
                    break
            else:
                merged.append(copy.deepcopy(item))
        return merged
    return copy.deepcopy(patch)


def _same_resource(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["kind"] == b["kind"] and a["metadata"]["name"] == b["metadata"]["name"])


def _set_image(image: str, rule: dict[str, Any]) -> str:
    name = image.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    if name != rule["name"]:
        return image
    new = rule.get("newName", name)
    if "digest" in rule and "newTag" in rule:
        return f"{new}:{rule['newTag']}@{rule['digest']}"  # kustomize keeps both
    if "digest" in rule:
        return f"{new}@{rule['digest']}"
    if "newTag" in rule:
        return f"{new}:{rule['newTag']}"
    return image.replace(name, new, 1)


def kustomize(directory: Path, docs: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Build a Kustomization, or apply a Component to `docs`."""
    k = load_one(directory / "kustomization.yaml")
    unsupported = set(k) - SUPPORTED_KEYS
    assert not unsupported, (
        f"{directory}: kustomization uses {sorted(unsupported)}, which this test's model "
        "of kustomize does not implement; extend the model in tests/deploy/test_manifests.py"
    )
    out = list(docs or [])
    for r in k.get("resources", []):
        p = directory / r
        out += kustomize(p) if p.is_dir() else load_all(p)
    for c in k.get("components", []):
        comp = directory / c
        assert load_one(comp / "kustomization.yaml")["kind"] == "Component"
        out = kustomize(comp, out)
    for gen in k.get("configMapGenerator", []):
        assert set(gen) <= {"name", "files", "options"}, f"unsupported generator keys in {gen}"
        # disableNameSuffixHash needs nothing here: the comparison with kustomize drops hashes.
        assert set(gen.get("options", {})) <= {"labels", "disableNameSuffixHash"}, gen
        cm: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": gen["name"]},
            "data": {
                Path(f).name: (directory / f).read_text(encoding="utf-8") for f in gen["files"]
            },
        }
        labels = gen.get("options", {}).get("labels")
        if labels:
            cm["metadata"]["labels"] = dict(labels)
        out.append(cm)
    for entry in k.get("patches", []):
        if "target" in entry:  # a JSON patch (RFC 6902) of the target
            assert set(entry) == {"path", "target"} and set(entry["target"]) == {"kind", "name"}, (
                entry
            )
            [target] = [
                d
                for d in out
                if d["kind"] == entry["target"]["kind"]
                and d["metadata"]["name"] == entry["target"]["name"]
            ]
            json_patch(target, yaml.safe_load((directory / entry["path"]).read_text()))
            continue
        assert set(entry) == {"path"}, (
            f"{directory}: only `- path: FILE` patches and JSON patches with a target are "
            f"modelled: {entry}"
        )
        patch = load_one(directory / entry["path"])
        targets = [d for d in out if _same_resource(d, patch)]
        assert len(targets) == 1, f"{directory / entry['path']} matches {len(targets)} resources"
        if patch.get("$patch") == "delete":
            out.remove(targets[0])
            continue
        i = out.index(targets[0])
        out[i] = strategic_merge(targets[0], patch)
    for rule in k.get("images", []):
        for d in out:
            for c in pod_spec(d).get("containers", []) if d["kind"] in WORKLOADS else []:
                c["image"] = _set_image(c["image"], rule)
    for replacement in k.get("replacements", []):
        _replace(out, replacement)
    if k["kind"] == "Kustomization":
        out = without_local_config(out)
    if "namespace" in k:
        for d in out:
            d["metadata"]["namespace"] = k["namespace"]
    return out


def json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    """RFC 6902, the subset deploy/ uses: ``add`` (a list's ``-`` appends)."""
    for op in ops:
        assert set(op) == {"op", "path", "value"} and op["op"] == "add", op
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in op["path"].split("/")[1:]
        ]
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node.insert(len(node) if last == "-" else int(last), copy.deepcopy(op["value"]))
        else:
            node[last] = copy.deepcopy(op["value"])


def without_local_config(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kustomize reads local-config objects (replacement sources) and leaves them out."""
    return [d for d in docs if d["metadata"].get("annotations", {}).get(LOCAL_CONFIG) != "true"]


def _field(node: Any, path: list[str]) -> list[tuple[Any, str]]:
    """(parent, key) of every field at ``path`` ("*": each item of a list); missing: none."""
    if not path:
        return []
    head, rest = path[0], path[1:]
    if head == "*":
        children = list(node) if isinstance(node, list) else []
    elif isinstance(node, dict) and head in node:
        if not rest:
            return [(node, head)]
        children = [node[head]]
    else:
        return []
    return [hit for child in children for hit in _field(child, rest)]


def _replace(docs: list[dict[str, Any]], r: dict[str, Any]) -> None:
    """kustomize's replacements, the subset deploy/ uses: one source field, targets selected
    by kind and name, field paths with "*", and a delimiter/index to replace part of a value."""
    assert set(r) == {"source", "targets"}, r
    src = r["source"]
    [source] = [
        d for d in docs if d["kind"] == src["kind"] and d["metadata"]["name"] == src["name"]
    ]
    [(parent, key)] = _field(source, src["fieldPath"].split("."))
    value = parent[key]
    for target in r["targets"]:
        assert set(target) <= {"select", "fieldPaths", "options"}, target
        options = target.get("options", {})
        assert set(options) <= {"delimiter", "index"}, options
        for d in docs:
            sel = target["select"]
            if d["kind"] != sel["kind"] or d["metadata"]["name"] != sel["name"]:
                continue
            for path in target["fieldPaths"]:
                for parent, key in _field(d, path.split(".")):
                    if "delimiter" in options:
                        parts = parent[key].split(options["delimiter"])
                        parts[options.get("index", 0)] = value
                        parent[key] = options["delimiter"].join(parts)
                    else:
                        parent[key] = value


def build_variant(name: str) -> list[dict[str, Any]]:
    overlay, components, namespace = VARIANTS[name]
    docs = kustomize(DEPLOY / overlay)
    for c in components:
        docs = kustomize(DEPLOY / c, docs)
    docs = without_local_config(docs)
    if components and namespace:
        for d in docs:
            d["metadata"]["namespace"] = namespace
    return docs


# --------------------------------------------------------------------------- #
# Rendered output of .ci/check-deploy                                          #
# --------------------------------------------------------------------------- #


def deploy_inputs_digest() -> str:
    """Same digest as .ci/check-deploy writes to rendered/INPUTS.sha256."""
    h = hashlib.sha256()
    for p in sorted(DEPLOY.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(REPO).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\n")
    return h.hexdigest()


def rendered_dir() -> tuple[Path | None, str]:
    d = Path(os.environ.get(RENDERED_ENV) or RENDERED_DEFAULT)
    stamp = d / STAMP
    if not stamp.is_file():
        return None, f"no kustomize output in {d}: run .ci/check-deploy (or set {RENDERED_ENV})"
    if stamp.read_text().strip() != deploy_inputs_digest():
        return None, f"kustomize output in {d} is older than deploy/: run .ci/check-deploy again"
    return d, ""


def rendered(name: str) -> list[dict[str, Any]]:
    d, reason = rendered_dir()
    if d is None:
        pytest.skip(reason)
    path = d / f"{name}.yaml"
    assert path.is_file(), f"{path} missing: .ci/check-deploy and VARIANTS disagree"
    return load_all(path)


# --------------------------------------------------------------------------- #
# Helpers                                                                      #
# --------------------------------------------------------------------------- #

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"}


def pod_spec(d: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = d["spec"]["template"]["spec"]
    return spec


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def all_of(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    containers = pod_spec(one(docs, "Deployment"))["containers"]
    assert [c["name"] for c in containers] == [APP], "one container per pod"
    first: dict[str, Any] = containers[0]
    return first


def env(docs: list[dict[str, Any]]) -> dict[str, str]:
    items = container(docs)["env"]
    names = [e["name"] for e in items]
    assert len(names) == len(set(names)), f"duplicate env names: {names}"
    for e in items:
        assert isinstance(e.get("value"), str), f"env {e['name']} must be a literal string"
    return {e["name"]: e["value"] for e in items}


def volume(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    vols = {v["name"]: v for v in pod_spec(one(docs, "Deployment"))["volumes"]}
    assert name in vols, f"volume {name} missing"
    found: dict[str, Any] = vols[name]
    return found


def mounts(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["mountPath"]: m for m in container(docs)["volumeMounts"]}


def subset(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def pre_stop_seconds(c: dict[str, Any]) -> int:
    pre = c.get("lifecycle", {}).get("preStop")
    if not pre:
        return 0
    if "sleep" in pre:
        return int(pre["sleep"]["seconds"])
    cmd = pre["exec"]["command"]
    assert cmd[0] == "sleep" and len(cmd) == 2, f"preStop must be a plain sleep: {cmd}"
    return int(cmd[1])


# --------------------------------------------------------------------------- #
# Invariants, asserted on the model's output and on kustomize's                #
# --------------------------------------------------------------------------- #


def check_probes(docs: list[dict[str, Any]]) -> None:
    c = container(docs)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    # The probes call the plaintext health-only port the service opens at CPSETTLE_HEALTH_PORT
    # (the kubelet's gRPC probes cannot speak TLS; the gRPC port may).
    health_port = int(env(docs)["CPSETTLE_HEALTH_PORT"])
    assert ports["health"] == health_port == HEALTH_PORT != ports["grpc"]
    services = {}
    for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = c.get(kind)
        if kind == "startupProbe" and probe is None:
            continue
        assert probe, f"{kind} missing"
        assert set(probe) & {"grpc", "httpGet", "tcpSocket", "exec"} == {"grpc"}, (
            f"{kind} must be a native gRPC probe"
        )
        assert probe["grpc"]["port"] == health_port, f"{kind} must call the health port"
        services[kind] = probe["grpc"].get("service")
        for field in ("periodSeconds", "timeoutSeconds", "failureThreshold"):
            assert field in probe, f"{kind}.{field} must be set"
        for field, value in probe.items():
            if field != "grpc":
                assert is_int(value) and value >= 0, f"{kind}.{field}={value!r} is not a number"
        assert probe["timeoutSeconds"] < probe["periodSeconds"] or kind == "startupProbe"
    assert services["readinessProbe"] == READINESS_SERVICE
    assert services["livenessProbe"] == LIVENESS_SERVICE
    assert services["readinessProbe"] != services["livenessProbe"]
    assert c["livenessProbe"].get("successThreshold", 1) == 1  # required by the API
    if "startupProbe" in services:
        # Startup must not wait for readiness (which drops while draining).
        assert services["startupProbe"] == LIVENESS_SERVICE


def check_security(docs: list[dict[str, Any]]) -> None:
    spec = pod_spec(one(docs, "Deployment"))
    pod = spec["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert is_int(pod["runAsUser"]) and pod["runAsUser"] == UID
    assert is_int(pod["runAsGroup"]) and pod["runAsGroup"] != 0
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    for c in spec["containers"] + spec.get("initContainers", []):
        sc = c["securityContext"]
        assert sc["runAsNonRoot"] is True
        assert sc.get("runAsUser", pod["runAsUser"]) == UID
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc.get("privileged", False) is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert not sc["capabilities"].get("add")
        assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        assert not spec.get(host)
    # Writable /tmp on an otherwise read-only root filesystem.
    assert "emptyDir" in volume(docs, "tmp") and "/tmp" in mounts(docs)


def check_service_account(docs: list[dict[str, Any]]) -> None:
    sa = one(docs, "ServiceAccount")
    spec = pod_spec(one(docs, "Deployment"))
    assert sa["automountServiceAccountToken"] is False
    assert spec["automountServiceAccountToken"] is False
    assert spec["serviceAccountName"] == sa["metadata"]["name"]


def check_selectors(docs: list[dict[str, Any]]) -> None:
    dep = one(docs, "Deployment")
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    selector = dep["spec"]["selector"]
    assert set(selector) == {"matchLabels"}
    assert subset(selector["matchLabels"], pod_labels), "Deployment selector vs pod labels"
    services = all_of(docs, "Service")
    assert services
    for svc in services:
        assert subset(svc["spec"]["selector"], pod_labels), f"Service {svc['metadata']['name']}"
    pdb = one(docs, "PodDisruptionBudget")
    assert set(pdb["spec"]["selector"]) == {"matchLabels"}
    assert subset(pdb["spec"]["selector"]["matchLabels"], pod_labels), "PDB selector"
    np = one(docs, "NetworkPolicy")
    assert set(np["spec"]["podSelector"]) == {"matchLabels"}
    assert subset(np["spec"]["podSelector"]["matchLabels"], pod_labels), "NetworkPolicy selector"
    for t in pod_spec(dep)["topologySpreadConstraints"]:
        assert subset(t["labelSelector"]["matchLabels"], pod_labels), t["topologyKey"]
    for sm in all_of(docs, "ServiceMonitor"):
        main = [s for s in services if s["metadata"]["name"] == APP]
        assert len(main) == 1
        assert subset(sm["spec"]["selector"]["matchLabels"], main[0]["metadata"]["labels"])
        # Must not also pick the headless Service (every pod would be scraped twice).
        others = [s for s in services if s is not main[0]]
        for s in others:
            labels = s["metadata"]["labels"]
            picked = subset(sm["spec"]["selector"]["matchLabels"], labels)
            has_metrics = any(p["name"] == "metrics" for p in s["spec"]["ports"])
            assert not (picked and has_metrics), s["metadata"]["name"]
        port_names = {p["name"] for p in main[0]["spec"]["ports"]}
        for ep in sm["spec"]["endpoints"]:
            assert ep["port"] in port_names and ep["path"] == "/metrics"


def check_pdb_hpa(docs: list[dict[str, Any]], hpa_required: bool) -> None:
    dep = one(docs, "Deployment")
    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    # Exactly one of the two, and never a budget that forbids every eviction.
    assert ("maxUnavailable" in pdb["spec"]) != ("minAvailable" in pdb["spec"])
    if "maxUnavailable" in pdb["spec"]:
        assert pdb["spec"]["maxUnavailable"] not in (0, "0%")
    hpas = all_of(docs, "HorizontalPodAutoscaler")
    if hpa_required:
        assert len(hpas) == 1
    # With an autoscaler the Deployment must not set replicas (every apply would
    # scale back to it); without one it must.
    assert ("replicas" in dep["spec"]) == (not hpas), "spec.replicas and the HPA"
    for hpa in hpas:
        assert hpa["apiVersion"] == "autoscaling/v2"
        ref = hpa["spec"]["scaleTargetRef"]
        assert ref == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": dep["metadata"]["name"],
        }
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        [metric] = hpa["spec"]["metrics"]
        assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
        assert metric["resource"]["target"]["type"] == "Utilization"
        # Utilization is relative to the request, so a request must be set.
        assert "cpu" in container(docs)["resources"]["requests"]


def check_termination(docs: list[dict[str, Any]]) -> None:
    spec = pod_spec(one(docs, "Deployment"))
    grace = int(env(docs)["CPSETTLE_GRACE_SECONDS"])
    grace_period = spec["terminationGracePeriodSeconds"]
    assert is_int(grace_period)
    # The kubelet counts the preStop hook against the grace period too.
    assert grace_period > grace + pre_stop_seconds(container(docs)), (
        f"terminationGracePeriodSeconds={grace_period} must exceed "
        f"preStop + CPSETTLE_GRACE_SECONDS={grace}"
    )
    # A draining server may report NOT_SERVING for every service: liveness must
    # not give up (and restart the container) before the drain is over.
    live = container(docs)["livenessProbe"]
    assert live["failureThreshold"] * live["periodSeconds"] > grace


def check_network_policy(docs: list[dict[str, Any]]) -> None:
    np = one(docs, "NetworkPolicy")
    assert "Ingress" in np["spec"]["policyTypes"]
    rules = np["spec"]["ingress"]
    seen: dict[str, set[tuple[str, int]]] = {}
    for rule in rules:
        assert rule.get("from"), "an ingress rule without `from` admits every source"
        assert rule.get("ports"), "an ingress rule without `ports` admits every port"
        for peer in rule["from"]:
            assert set(peer) == {"namespaceSelector"}, f"unexpected peer {peer}"
        namespaces = {
            p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
            for p in rule["from"]
        }
        ports = {(p.get("protocol", "TCP"), p["port"]) for p in rule["ports"]}
        for ns in namespaces:
            seen.setdefault(ns, set()).update(ports)
    # the HTTP/JSON port where the pods serve it (the live ones; bulk audits are gRPC streams)
    serves_http = any(p["name"] == "http" for p in container(docs)["ports"])
    assert seen == {
        "table-software": {("TCP", GRPC_PORT)} | ({("TCP", HTTP_PORT)} if serves_http else set()),
        "monitoring": {("TCP", METRICS_PORT)},
    }
    e = env(docs)
    if (
        "Egress" in np["spec"]["policyTypes"]
        and "CPSETTLE_OTEL_ENDPOINT" not in e
        and "CPSETTLE_WITNESS_URL" not in e
    ):
        assert np["spec"].get("egress", []) == []  # no tracing, no witness: no connection out


def check_ports_and_services(docs: list[dict[str, Any]]) -> None:
    c = container(docs)
    ports = {p["name"]: (p["containerPort"], p.get("protocol", "TCP")) for p in c["ports"]}
    assert ports == {
        "grpc": (GRPC_PORT, "TCP"),
        "metrics": (METRICS_PORT, "TCP"),
        "health": (HEALTH_PORT, "TCP"),
        "http": (HTTP_PORT, "TCP"),
    }
    e = env(docs)
    assert e["CPSETTLE_HTTP_PORT"] == str(HTTP_PORT)
    # clients rebalance: connections age out (with grace) and idle ones are pinged
    assert 60 <= float(e["CPSETTLE_MAX_CONNECTION_AGE_SECONDS"]) <= 1800
    assert float(e["CPSETTLE_MAX_CONNECTION_AGE_GRACE_SECONDS"]) > 0
    assert float(e["CPSETTLE_KEEPALIVE_TIME_SECONDS"]) >= 10
    assert e["CPSETTLE_HTTP_CORS_ORIGINS"] == "", "CORS is off unless a house turns it on"
    assert e["CPSETTLE_PORT"] == str(GRPC_PORT)
    assert e["CPSETTLE_METRICS_PORT"] == str(METRICS_PORT)
    assert e["CPSETTLE_HOST"] == "0.0.0.0"
    services = {s["metadata"]["name"]: s for s in all_of(docs, "Service")}
    main = {p["name"]: p for p in services[APP]["spec"]["ports"]}
    assert main["grpc"]["port"] == GRPC_PORT and main["grpc"]["targetPort"] == "grpc"
    assert main["metrics"]["port"] == METRICS_PORT and main["metrics"]["targetPort"] == "metrics"
    assert main["http"]["port"] == HTTP_PORT and main["http"]["targetPort"] == "http"
    for s in services.values():
        for p in s["spec"]["ports"]:
            assert p["targetPort"] in ports, (
                f"Service {s['metadata']['name']} targets {p['targetPort']}"
            )
            # The health port is for the kubelet only: no Service and no NetworkPolicy rule
            # (check_network_policy) leads to it.
            assert p["targetPort"] != "health" and p["port"] != HEALTH_PORT


def check_config(docs: list[dict[str, Any]]) -> None:
    e = env(docs)
    required = {
        "CPSETTLE_HOST",
        "CPSETTLE_PORT",
        "CPSETTLE_METRICS_PORT",
        "CPSETTLE_HEALTH_PORT",
        "CPSETTLE_MAX_CONCURRENT_RPCS",
        "CPSETTLE_MAX_MESSAGE_BYTES",
        "CPSETTLE_LOG_LEVEL",
        "CPSETTLE_GRACE_SECONDS",
        "CPSETTLE_PROFILE_DIR",
        "CPSETTLE_SIGNING_KEY_FILE",
        "CPSETTLE_SIGNING_KEY_ID",
        "CPSETTLE_REQUIRE_SIGNING_KEY",
        "CPSETTLE_REFLECTION",
    }
    assert required <= set(e), f"missing env: {sorted(required - set(e))}"
    assert not [n for n in e if not n.startswith("CPSETTLE_")]
    for n in (
        "CPSETTLE_MAX_CONCURRENT_RPCS",
        "CPSETTLE_MAX_MESSAGE_BYTES",
        "CPSETTLE_GRACE_SECONDS",
    ):
        assert e[n].isdigit() and int(e[n]) > 0, n
    assert e["CPSETTLE_REQUIRE_SIGNING_KEY"] in ("true", "false")
    assert e["CPSETTLE_REFLECTION"] == "false"
    assert e["CPSETTLE_LOG_LEVEL"] in ("debug", "info", "warning", "error")
    m = mounts(docs)
    # House profiles from the generated ConfigMap.
    assert e["CPSETTLE_PROFILE_DIR"] == "/etc/cpsettle/profiles"
    assert m["/etc/cpsettle/profiles"]["readOnly"] is True
    cm_name = volume(docs, m["/etc/cpsettle/profiles"]["name"])["configMap"]["name"]
    [cm] = [d for d in all_of(docs, "ConfigMap") if d["metadata"]["name"] == cm_name]
    assert cm["data"], "no house profile"
    for key, text in cm["data"].items():
        assert key.endswith(".json")
        assert json.loads(text)["name"] == key.removesuffix(".json")
    # Signing key: file from the Secret `cpsettle-signing-key`, key `key`.
    assert e["CPSETTLE_SIGNING_KEY_FILE"] == "/etc/cpsettle/signing/key"
    assert m["/etc/cpsettle/signing"]["readOnly"] is True
    secret = volume(docs, m["/etc/cpsettle/signing"]["name"])["secret"]
    assert secret["secretName"] == "cpsettle-signing-key"
    assert {"key": "key", "path": "key"} in secret["items"]
    # No secret material in the manifests.
    assert not all_of(docs, "Secret")
    for item in container(docs)["env"]:
        assert "valueFrom" not in item


def check_workload(docs: list[dict[str, Any]], cores: float = 1.0) -> None:
    dep = one(docs, "Deployment")
    spec = pod_spec(dep)
    c = container(docs)
    # Image by tag or digest, never `latest` or untagged.
    image = c["image"]
    if "@sha256:" not in image:
        name, _, tag = image.rpartition(":")
        assert name and "/" not in tag and tag, f"image without tag: {image}"
        assert tag != "latest", image
    assert c["imagePullPolicy"] in ("IfNotPresent", "Always")
    for section in ("requests", "limits"):
        for res in ("cpu", "memory"):
            assert res in c["resources"][section], f"resources.{section}.{res}"
    # One Python process settles on one core: the pod requests that core and is limited to it
    # (README.md and deploy/README.md say so; test_docs_state_the_cpu_request). The bulk-audit
    # pods settle streams in one worker process per core of their limit: they ask for ``cores``.
    assert cpu_cores(c["resources"]["requests"]["cpu"]) == cores
    assert cpu_cores(c["resources"]["limits"]["cpu"]) == cores
    hosts = [
        t for t in spec["topologySpreadConstraints"] if t["topologyKey"] == "kubernetes.io/hostname"
    ]
    assert len(hosts) == 1 and hosts[0]["maxSkew"] == 1
    strategy = dep["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxUnavailable"] == 0


def cpu_cores(quantity: Any) -> float:
    text = str(quantity)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def check_all(docs: list[dict[str, Any]], hpa_required: bool) -> None:
    check_probes(docs)
    check_security(docs)
    check_service_account(docs)
    check_selectors(docs)
    check_pdb_hpa(docs, hpa_required)
    check_termination(docs)
    check_network_policy(docs)
    check_ports_and_services(docs)
    check_config(docs)
    check_workload(docs)


def check_bulk_audit(docs: list[dict[str, Any]], live: list[dict[str, Any]]) -> None:
    """deploy/components/bulk-audit: its own pods, which no live object selects, held to the
    live Deployment's rules (probes, security, config, ports, termination)."""
    bulk = [d for d in docs if d["metadata"]["name"] == BULK]
    assert sorted(d["kind"] for d in bulk) == ["Deployment", "NetworkPolicy", "Service"]
    dep = one(bulk, "Deployment")
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    for d in live:  # the live Service, PDB, HPA and NetworkPolicy leave the bulk pods alone
        selector = d.get("spec", {}).get("selector")
        if d["kind"] == "Service":
            assert not subset(selector, pod_labels), d["metadata"]["name"]
        elif d["kind"] == "PodDisruptionBudget":
            assert not subset(selector["matchLabels"], pod_labels)
    assert subset(one(bulk, "Service")["spec"]["selector"], pod_labels)
    assert subset(one(bulk, "NetworkPolicy")["spec"]["podSelector"]["matchLabels"], pod_labels)
    as_live = [dep, one(bulk, "Service"), one(bulk, "NetworkPolicy")] + [
        d for d in live if d["kind"] in ("ServiceAccount", "ConfigMap")
    ]
    for check in (
        check_probes,
        check_security,
        check_service_account,
        check_termination,
        check_network_policy,
        check_config,
    ):
        check(as_live)
    check_workload(as_live, cores=2.0)
    e = env(as_live)
    assert int(e["CPSETTLE_MAX_CONCURRENT_STREAMS"]) > 0
    # streams settled in worker processes, one per core of the limit, at the server's priority
    assert e["CPSETTLE_STREAM_WORKERS"] == "0" and e["CPSETTLE_STREAM_WORKER_NICE"] == "0"
    assert e["CPSETTLE_REQUIRE_SIGNING_KEY"] == "true"
    assert volume(as_live, "signing-key")["secret"]["optional"] is False


def check_reaudit(docs: list[dict[str, Any]]) -> None:
    """deploy/components/reaudit: a DaskJob valid by the operator's CRD schema, whose job runs
    ``cpsettle audit --cluster`` against the scheduler the operator names, and writes its report
    to the claim it mounts; every container non-root, read-only, bounded."""
    job = one(docs, "DaskJob")
    assert job["apiVersion"] == "kubernetes.dask.org/v1" and job["metadata"]["name"] == REAUDIT
    assert crd_problems(job) == []
    claim = one(docs, "PersistentVolumeClaim")
    spec = job["spec"]
    pod = spec["job"]["spec"]
    runner = pod["containers"][0]
    args = runner["args"]
    assert args[:3] == ["cpsettle", "audit", "$(CPSETTLE_REAUDIT_HISTORY)"]
    assert args[args.index("--cluster") + 1] == "$(DASK_SCHEDULER_ADDRESS)"
    report = args[args.index("--report") + 1]
    mount = {m["name"]: m["mountPath"] for m in runner["volumeMounts"]}
    assert report.startswith(mount["reports"] + "/")
    assert {v["name"]: v for v in pod["volumes"]}["reports"]["persistentVolumeClaim"][
        "claimName"
    ] == claim["metadata"]["name"]
    cluster = spec["cluster"]["spec"]
    workers = cluster["worker"]
    assert workers["replicas"] == 80  # 10 nodes x 8 cores, one process a core
    assert args[args.index("--workers") + 1] == str(workers["replicas"])
    worker = workers["spec"]["containers"][0]
    assert worker["args"][:2] == ["dask", "worker"]
    assert worker["args"][worker["args"].index("--nthreads") + 1] == "1"
    scheduler = cluster["scheduler"]["spec"]["containers"][0]
    assert scheduler["args"] == ["dask", "scheduler"]
    assert {p["containerPort"] for p in scheduler["ports"]} == {8786, 8787}
    for pod_spec_ in (pod, workers["spec"], cluster["scheduler"]["spec"]):
        assert pod_spec_["securityContext"]["runAsNonRoot"] is True
        assert pod_spec_["automountServiceAccountToken"] is False
        for c in pod_spec_["containers"]:
            assert c["image"] == runner["image"]  # one image: the same code everywhere
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"]
            assert sc["capabilities"]["drop"] == ["ALL"]
            assert c["resources"]["limits"]["cpu"] == c["resources"]["requests"]["cpu"] == "1"


def crd_problems(doc: dict[str, Any]) -> list[str]:
    """``doc`` against its vendored CRD (.ci/crds), by .ci/validate-crds."""
    import importlib.machinery
    import importlib.util

    pytest.importorskip("jsonschema", reason="jsonschema (test extra) not installed")
    path = REPO / ".ci" / "validate-crds"
    loader = importlib.machinery.SourceFileLoader("validate_crds", str(path))
    spec = importlib.util.spec_from_loader("validate_crds", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    found, checked = module.problems([doc], module.load_crds(REPO / ".ci" / "crds"))
    assert checked == 1
    return list(found)


def test_the_reaudit_job_is_checked_against_the_operator_schema() -> None:
    """The schema check can fail: a misspelt field and a wrong type are both named."""
    job = load_one(DEPLOY / "components" / "reaudit" / "daskjob.yaml")
    assert crd_problems(job) == []
    job["spec"]["cluster"]["spec"]["worker"]["replica"] = 3
    job["spec"]["job"]["spec"]["containers"][0]["args"] = "cpsettle audit"
    found = crd_problems(job)
    assert len(found) == 2
    assert "'replica' was unexpected" in found[0] and "is not of type 'array'" in found[1]


def check_witness(docs: list[dict[str, Any]], live: list[dict[str, Any]]) -> None:
    """The witness: its own Deployment and Service, the same image, non-root, its database URL
    from a Secret; the live replicas send it their checkpoints."""
    [dep] = [
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "cpsettle-witness"
    ]
    [svc] = [
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "cpsettle-witness"
    ]
    pod = dep["spec"]["template"]["spec"]
    [c] = pod["containers"]
    assert c["command"] == ["cpsettle-witness", "serve"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    names = {e["name"]: e for e in c["env"]}
    # the database URL holds a password: a Secret mounted as a file, never an env value
    assert "CPSETTLE_WITNESS_DATABASE" not in names
    path = names["CPSETTLE_WITNESS_DATABASE_FILE"]["value"]
    [mount] = [m for m in c["volumeMounts"] if path.startswith(m["mountPath"] + "/")]
    [vol] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert vol["secret"]["secretName"] == "cpsettle-witness-database" and mount["readOnly"]
    assert [i["path"] for i in vol["secret"]["items"]] == [path.rsplit("/", 1)[1]]
    assert svc["spec"]["ports"][0]["port"] == 8780
    assert env(live)["CPSETTLE_WITNESS_URL"] == "http://cpsettle-witness:8780"
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    live_labels = one(live, "Deployment")["spec"]["template"]["metadata"]["labels"]
    # the witness admits the live replicas on its port, nothing else
    [np] = [
        d
        for d in docs
        if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "cpsettle-witness"
    ]
    assert subset(np["spec"]["podSelector"]["matchLabels"], pod_labels)
    assert sorted(np["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    [rule] = np["spec"]["ingress"]
    [peer] = rule["from"]
    assert set(peer) == {"podSelector"} and subset(peer["podSelector"]["matchLabels"], live_labels)
    assert not subset(peer["podSelector"]["matchLabels"], pod_labels)
    assert rule["ports"] == [{"protocol": "TCP", "port": 8780}]
    out = {(p["protocol"], p["port"]) for r in np["spec"]["egress"] for p in r["ports"]}
    assert out == {("UDP", 53), ("TCP", 53), ("TCP", 5432)}
    # the live replicas may reach the witness's pods (and DNS), nothing else
    live_np = one(live, "NetworkPolicy")
    reach: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in live_np["spec"]["egress"]:
        assert r.get("to") and r.get("ports"), "an egress rule open to everything"
        for peer in r["to"]:
            for p in r["ports"]:
                reach.setdefault((p["protocol"], p["port"]), []).append(peer)
    assert set(reach) == {("UDP", 53), ("TCP", 53), ("TCP", 8780)}
    [to_witness] = reach[("TCP", 8780)]
    assert subset(to_witness["podSelector"]["matchLabels"], pod_labels)


def check_variant(name: str, docs: list[dict[str, Any]]) -> None:
    if name == "prod-reaudit":
        check_reaudit([d for d in docs if d["metadata"]["name"].startswith(REAUDIT)])
        docs = [d for d in docs if not d["metadata"]["name"].startswith(REAUDIT)]
    if name == "prod-bulk-audit":
        live = [d for d in docs if d["metadata"]["name"] != BULK]
        check_bulk_audit(docs, live)
        docs = live
    if name == "prod-witness":
        live = [d for d in docs if d["metadata"]["name"] != "cpsettle-witness"]
        check_witness(docs, live)
        docs = live
    check_all(docs, hpa_required=name != "dev")
    namespace = VARIANTS[name][2]
    for d in docs:
        assert d["metadata"].get("namespace") == namespace, (
            f"{d['kind']}/{d['metadata']['name']} in namespace {d['metadata'].get('namespace')!r}"
        )
    dep = one(docs, "Deployment")
    e = env(docs)
    signing = volume(docs, "signing-key")["secret"]
    if name == "dev":
        assert dep["spec"]["replicas"] == 1
        assert not all_of(docs, "HorizontalPodAutoscaler")
        assert e["CPSETTLE_LOG_LEVEL"] == "debug"
        assert e["CPSETTLE_REQUIRE_SIGNING_KEY"] == "false"
        assert signing["optional"] is True
    if name in PROD_VARIANTS:
        hpa = one(docs, "HorizontalPodAutoscaler")
        assert dep["spec"].get("replicas", hpa["spec"]["minReplicas"]) >= 2
        assert hpa["spec"]["minReplicas"] >= 2
        assert e["CPSETTLE_LOG_LEVEL"] == "info"
        assert e["CPSETTLE_REQUIRE_SIGNING_KEY"] == "true"
        assert signing["optional"] is False
        tls = volume(docs, "tls")["secret"]
        assert tls["secretName"] == "cpsettle-tls" and tls["optional"] is False
        assert mounts(docs)["/etc/cpsettle/tls"]["name"] == "tls"
        assert mounts(docs)["/etc/cpsettle/tls"]["readOnly"] is True
        zones = [
            t
            for t in pod_spec(dep)["topologySpreadConstraints"]
            if t["topologyKey"] == "topology.kubernetes.io/zone"
        ]
        assert len(zones) == 1 and zones[0]["whenUnsatisfiable"] == "ScheduleAnyway"
    tls_env = {k for k in e if k.startswith("CPSETTLE_TLS_")}
    if name in PROD_VARIANTS:
        check_prod_tls(docs)
        # secure by default: callers authenticate with client certificates (mutual TLS)
        assert tls_env == {
            "CPSETTLE_TLS_CERT_FILE",
            "CPSETTLE_TLS_KEY_FILE",
            "CPSETTLE_TLS_CLIENT_CA_FILE",
        }
        assert e["CPSETTLE_REQUIRE_CALLER_AUTH"] == "true"
        # the image by digest (scripts/release writes it)
        assert re.fullmatch(r"[^@\s]+:[^@/\s]+@sha256:[0-9a-f]{64}", container(docs)["image"])
    else:
        assert not tls_env
    tokens = name == "prod-caller-tokens"
    assert ("CPSETTLE_AUTH_TOKENS_FILE" in e) == tokens
    if tokens:
        assert e["CPSETTLE_AUTH_TOKENS_FILE"] == "/etc/cpsettle/callers/tokens"
        assert mounts(docs)["/etc/cpsettle/callers"]["readOnly"] is True
        assert volume(docs, "caller-tokens")["secret"]["secretName"] == "cpsettle-caller-tokens"
    tracing = name == "prod-tracing"
    assert ("CPSETTLE_OTEL_ENDPOINT" in e) == tracing
    if tracing:
        check_tracing_egress(docs, e["CPSETTLE_OTEL_ENDPOINT"])
    certificates = all_of(docs, "Certificate")
    assert bool(certificates) == (name == "prod-cert-manager")
    if certificates:
        check_certificate(one(docs, "Certificate"), docs)
    monitoring = name == "prod-monitoring"
    assert bool(all_of(docs, "ServiceMonitor")) == monitoring
    assert bool(all_of(docs, "PrometheusRule")) == monitoring
    dashboards = [
        d
        for d in all_of(docs, "ConfigMap")
        if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
    ]
    assert bool(dashboards) == monitoring
    if monitoring:
        check_prometheus_rule(one(docs, "PrometheusRule"))
        [dashboard] = dashboards
        check_dashboard(dashboard)


def check_tracing_egress(docs: list[dict[str, Any]], endpoint: str) -> None:
    """With tracing on, egress is DNS and the collector's port, nothing else."""
    np = one(docs, "NetworkPolicy")
    assert "Egress" in np["spec"]["policyTypes"]
    port = int(endpoint.rsplit(":", 1)[1])
    allowed = set()
    for rule in np["spec"]["egress"]:
        assert rule.get("to") and rule.get("ports"), "an egress rule open to everything"
        for p in rule["ports"]:
            allowed.add((p["protocol"], p["port"]))
    assert allowed == {("UDP", 53), ("TCP", 53), ("TCP", port)}
    collector_ns = endpoint.split("//", 1)[1].split(".")[1]
    namespaces = {
        peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
        for rule in np["spec"]["egress"]
        for peer in rule["to"]
    }
    assert namespaces == {"kube-system", collector_ns}


def check_certificate(cert: dict[str, Any], docs: list[dict[str, Any]]) -> None:
    """cert-manager keeps the Secret the pods mount, for the names the callers dial, renewed
    well before the 14 days of CpsettleCertificateExpiresSoon."""
    spec = cert["spec"]
    assert spec["secretName"] == volume(docs, "tls")["secret"]["secretName"]
    namespace = cert["metadata"]["namespace"]
    for service in all_of(docs, "Service"):
        assert f"{service['metadata']['name']}.{namespace}.svc.cluster.local" in spec["dnsNames"]

    def hours(text: str) -> int:
        assert text.endswith("h"), text
        return int(text[:-1])

    assert hours(spec["duration"]) > hours(spec["renewBefore"]) >= 14 * 24 + 7 * 24
    assert spec["privateKey"]["rotationPolicy"] == "Always"
    assert "server auth" in spec["usages"]


def check_prod_tls(docs: list[dict[str, Any]]) -> None:
    """The gRPC port serves TLS with the certificate of the `cpsettle-tls` Secret; the probes
    call the plaintext health-only port (tests/ops/test_health_port.py runs the real server
    with this environment and calls the probes' services on that port)."""
    e = env(docs)
    tls_dir = "/etc/cpsettle/tls"
    assert mounts(docs)[tls_dir]["name"] == "tls"
    secret = volume(docs, "tls")["secret"]
    assert secret["secretName"] == "cpsettle-tls" and secret["optional"] is False
    # The keys of a kubernetes.io/tls Secret (cert-manager writes ca.crt beside them).
    assert e["CPSETTLE_TLS_CERT_FILE"] == f"{tls_dir}/tls.crt"
    assert e["CPSETTLE_TLS_KEY_FILE"] == f"{tls_dir}/tls.key"
    if "CPSETTLE_TLS_CLIENT_CA_FILE" in e:
        assert e["CPSETTLE_TLS_CLIENT_CA_FILE"] == f"{tls_dir}/ca.crt"
    assert "items" not in secret or {i["key"] for i in secret["items"]} >= {"tls.crt", "tls.key"}
    c = container(docs)
    probe_ports = {
        c[k]["grpc"]["port"] for k in ("startupProbe", "readinessProbe", "livenessProbe")
    }
    assert probe_ports == {int(e["CPSETTLE_HEALTH_PORT"])}
    assert int(e["CPSETTLE_PORT"]) not in probe_ports, "probes cannot speak TLS"


def runbook_anchors() -> set[str]:
    """GitHub's anchors of the runbook's headings (lower case, spaces to dashes)."""
    out = set()
    for line in RUNBOOK.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^a-z0-9 _-]", "", title).replace(" ", "-"))
    return out


ALERTS = {
    "CpsettleErrorRatioHigh",
    "CpsettleLatencyP99High",
    "CpsettlePayoutMismatchRate",
    "CpsettleEngineDigestMismatch",
    "CpsettleSigningDisabled",
    "CpsettleWitnessUnreachable",
    "CpsettleAuditLogStuck",
    "CpsettleNearConcurrencyLimit",
    "CpsettleNotReady",
    "CpsettleTargetDown",
    "CpsettleNoReplicaUp",
    "CpsettleCertificateExpiresSoon",
    "CpsettleAvailabilityBudgetBurn",
    "CpsettleAvailabilityBudgetBurnSlow",
    "CpsettleLatencyBudgetBurn",
    "CpsettleLatencyBudgetBurnSlow",
}
RUNBOOK_URL = DEPLOY / "components" / "prometheus-rules" / "runbook-url.yaml"


def runbook_base_url() -> str:
    """The component's one setting: where docs/RUNBOOK.md is published."""
    url: str = load_one(RUNBOOK_URL)["data"]["baseUrl"]
    return url


def check_prometheus_rule(rule: dict[str, Any]) -> None:
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    alerts = [r for r in rules if "alert" in r]
    assert {a["alert"] for a in alerts} == ALERTS
    # recording rules (the SLO ratios) carry no annotations for the replacement to touch
    assert all("annotations" not in r for r in rules if "record" in r)
    anchors = runbook_anchors()
    base = runbook_base_url()
    assert re.fullmatch(r"https://[^#\s]+", base), base
    for a in alerts:
        assert a["labels"]["severity"] in ("critical", "warning"), a["alert"]
        assert a["annotations"]["summary"] and a["annotations"]["description"], a["alert"]
        # absolute, from the component's one setting (kustomize replaces the part before #)
        url, _, anchor = a["annotations"]["runbook_url"].partition("#")
        assert url == base and anchor == a["alert"].lower(), a["alert"]
        assert anchor in anchors, f"docs/RUNBOOK.md has no section {a['alert']}"


def check_dashboard(cm: dict[str, Any]) -> None:
    [text] = cm["data"].values()
    dashboard = json.loads(text)
    assert dashboard["uid"] == "cpsettle" and dashboard["title"]
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert len(queries) >= 15 and all(q.strip() for q in queries)
    # Every panel reads the Prometheus chosen in the dashboard's datasource variable.
    for p in dashboard["panels"]:
        if p["type"] != "row":
            assert p["datasource"]["uid"] == "${datasource}", p["title"]


# --------------------------------------------------------------------------- #
# Tests                                                                        #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_from_files(name: str) -> None:
    """Base, overlays and component variants, built by the model from deploy/."""
    check_variant(name, build_variant(name))


def test_base_files_directly() -> None:
    """The base invariants, read from the base's own files with no model at all."""
    base = DEPLOY / "base"
    docs = [
        d
        for f in sorted(base.glob("*.yaml"))
        if f.name != "kustomization.yaml"
        for d in load_all(f)
    ]
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(
        [
            "Deployment",
            "HorizontalPodAutoscaler",
            "NetworkPolicy",
            "PodDisruptionBudget",
            "Service",
            "Service",
            "ServiceAccount",
        ]
    )
    listed = load_one(base / "kustomization.yaml")["resources"]
    assert sorted(listed) == sorted(
        f.name for f in base.glob("*.yaml") if f.name != "kustomization.yaml"
    )
    # The profile ConfigMap is generated; add a stand-in so check_all sees it.
    data: dict[str, str] = {}
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cpsettle-house-profiles"},
        "data": data,
    }
    for f in sorted((base / "profiles").glob("*.json")):
        data[f.name] = f.read_text(encoding="utf-8")
    check_all([*docs, cm], hpa_required=True)
    assert one(docs, "HorizontalPodAutoscaler")["spec"]["minReplicas"] >= 2
    assert volume(docs, "signing-key")["secret"]["optional"] is True
    assert env(docs)["CPSETTLE_REQUIRE_SIGNING_KEY"] == "false"


def test_house_profile_example() -> None:
    path = DEPLOY / "base" / "profiles" / "house-western-500.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    assert profile["name"] == "house-western-500"
    assert profile["money"]["unitValue"] == 500
    preset = REPO / "service" / "cpsettle_service" / "domain" / "presets" / "western.json"
    if preset.is_file():
        assert set(profile) == set(json.loads(preset.read_text(encoding="utf-8"))), (
            "the example house profile no longer has the preset's sections: copy western.json again"
        )


@pytest.mark.parametrize("name", list(VARIANTS))
def test_service_accepts_the_environment(name: str) -> None:
    """The service's own settings parser takes every variant's environment."""
    config = pytest.importorskip("cpsettle_service.config", reason="service package not importable")
    for dep in all_of(build_variant(name), "Deployment"):  # the bulk-audit one as well
        if dep["metadata"]["name"] == "cpsettle-witness":
            continue  # another program: its settings are CPSETTLE_WITNESS_* (check_witness)
        settings = config.Settings.from_env(env([dep]))
        assert settings.port == GRPC_PORT and settings.metrics_port == METRICS_PORT
        assert settings.host == "0.0.0.0" and settings.health_port == HEALTH_PORT
        if dep["metadata"]["name"] == BULK:
            continue  # the prod overlay's TLS patch is the live Deployment's
        assert bool(settings.tls_cert_file) == (name in PROD_VARIANTS)
        assert bool(settings.tls_client_ca_file) == (name in PROD_VARIANTS)
        assert settings.require_caller_auth == (name in PROD_VARIANTS)


def test_house_profiles_load_in_the_service() -> None:
    """A profile the service rejects would stop every pod at start-up (exit 2)."""
    pytest.importorskip("cpsettle_service.domain.profile", reason="service package not importable")
    registry = with_directory(builtin_registry(), str(DEPLOY / "base" / "profiles"))
    assert "house-western-500" in set(registry.names())


def test_overlays_and_components_are_all_covered() -> None:
    on_disk = {
        p.parent.relative_to(DEPLOY).as_posix() for p in DEPLOY.glob("*/**/kustomization.yaml")
    }
    on_disk |= {"base"}
    covered = {v[0] for v in VARIANTS.values()} | {c for v in VARIANTS.values() for c in v[1]}
    assert on_disk == covered, "add new overlays/components to VARIANTS (and .ci/check-deploy)"


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile() -> None:
    ins = _dockerfile_instructions()
    froms = [rest for word, rest in ins if word == "FROM"]
    assert len(froms) >= 2, "multi-stage build"
    for f in froms:
        image = f.split()[0]
        assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", image), image
    final = ins[max(i for i, (w, _) in enumerate(ins) if w == "FROM") :]
    words = [w for w, _ in final]
    assert ("USER", str(UID)) in final, "numeric non-root USER"
    assert words.index("USER") > max(i for i, w in enumerate(words) if w == "RUN")
    exposed = {p for w, rest in final if w == "EXPOSE" for p in rest.split()}
    assert exposed == {str(GRPC_PORT), str(METRICS_PORT), str(HEALTH_PORT), str(HTTP_PORT)}
    [entry] = [rest for w, rest in final if w == "ENTRYPOINT"]
    assert json.loads(entry) == ["cpsettle-server"], "exec form, so the server is PID 1"
    assert "CMD" not in words
    assert ("HEALTHCHECK", "NONE") in final
    # Only the venv comes from the builder; no pip cache, no compilers.
    copies = [rest for w, rest in final if w == "COPY"]
    assert copies == ["--from=builder /opt/cpsettle /opt/cpsettle"]
    builder = ins[: max(i for i, (w, _) in enumerate(ins) if w == "FROM")]
    assert any(w == "ENV" and "PIP_NO_CACHE_DIR=1" in rest for w, rest in builder)
    # Dependencies only from the hash-pinned lock; the project's wheel adds none of its own.
    installs = [
        rest
        for w, rest in builder
        if w == "RUN"
        for rest in rest.split("&&")
        if " install " in f" {rest} "
    ]
    assert installs and all(
        ("--require-hashes" in i and "-r requirements.lock" in i) or "--no-deps" in i
        for i in installs
    ), installs
    assert any("--require-hashes" in i for i in installs)
    assert ("COPY", "requirements.lock ./") in builder
    for w, rest in ins:
        if w == "RUN":
            assert not re.search(
                r"\b(apt-get|apt|gcc|build-essential)\b", " ".join(shlex.split(rest))
            )


def test_dockerignore_keeps_the_context_small() -> None:
    lines = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*", "allow-list: ignore everything, then re-include"
    copied = {"pyproject.toml", "requirements.lock", "README.md", "service/", "clients/", "proto/"}
    assert copied <= {line.removeprefix("!") for line in lines if line.startswith("!")}


# ---- on kustomize's own output (from .ci/check-deploy) ----------------------


def _normalize(docs: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    """Key by kind/name; drop the ConfigMap hash suffix; sort merge-keyed lists."""
    text = json.dumps(docs)
    for d in docs:
        if d["kind"] == "ConfigMap":
            name = d["metadata"]["name"]
            base = re.sub(r"-[a-z0-9]{10}$", "", name)
            text = text.replace(f'"{name}"', f'"{base}"')
    docs = json.loads(text)

    def walk(node: Any, field: str = "") -> Any:
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            items = [walk(i, field) for i in node]
            key = _merge_key(field, items)
            return sorted(items, key=lambda i: str(i[key])) if key else items
        return node

    return {(d["kind"], d["metadata"]["name"]): walk(d) for d in docs}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_rendered_by_kustomize(name: str) -> None:
    check_variant(name, rendered(name))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_model_matches_kustomize(name: str) -> None:
    real = _normalize(rendered(name))
    model = _normalize(build_variant(name))
    assert sorted(model) == sorted(real)
    for key in real:
        assert model[key] == real[key], f"{key}: the test's kustomize model differs from kustomize"


def test_the_lock_pins_every_dependency_with_hashes() -> None:
    """requirements.lock (scripts/lock) pins each of pyproject's dependencies at a version its
    specifier allows, and every pinned package carries hashes (pip --require-hashes needs
    them all). .ci/supply-chain installs it for real."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = (REPO / "requirements.lock").read_text(encoding="utf-8")
    entries = re.findall(
        r"^([A-Za-z0-9_.-]+)==([^\s;]+)(?: ; [^\\\n]+)? \\\n"
        r"((?:    --hash=sha256:[0-9a-f]{64}.*\n)+)",
        text,
        flags=re.M,
    )
    pins = {canonicalize_name(name): version for name, version, _ in entries}
    requirement_lines = [line for line in text.splitlines() if re.match(r"^[A-Za-z0-9]", line)]
    assert len(requirement_lines) == len(entries) > 5, "a pin without hashes"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # the image carries the OTLP exporter (the `otel` extra), off until CPSETTLE_OTEL_ENDPOINT
    for dep in project["dependencies"] + project["optional-dependencies"]["otel"]:
        req = Requirement(dep)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock: run scripts/lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {req.name}=={pins[name]}, pyproject wants {req.specifier}"
        )


def test_docs_state_the_cpu_request() -> None:
    """The READMEs give the pod's CPU request and limit as the manifests set them."""
    c = container(build_variant("prod"))
    assert cpu_cores(c["resources"]["requests"]["cpu"]) == 1.0
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    deploy_readme = " ".join((DEPLOY / "README.md").read_text(encoding="utf-8").split())
    assert "requests one CPU (limit one CPU)" in readme
    assert "the container requests one CPU and is limited to one" in deploy_readme
    assert "500m" not in readme and "0.5 CPU" not in deploy_readme
