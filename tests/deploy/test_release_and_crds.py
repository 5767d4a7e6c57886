"""scripts/release (the prod overlay pulls the released image by digest), the alerts' runbook
links from the prometheus-rules component's one setting, and .ci/validate-crds (the custom
resources against their vendored CRDs' schemas: it must reject what the API server would)."""

from __future__ import annotations

import copy
import importlib.machinery
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.deploy.test_manifests import DEPLOY, REPO, build_variant, container, kustomize, one

DIGEST = "sha256:" + "ab12" * 16


def release(deploy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "release"), *args, "--deploy", str(deploy)],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture()
def deploy(tmp_path: Path) -> Path:
    copy_ = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy_)
    return copy_


def version() -> str:
    import tomllib

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def test_the_committed_prod_overlay_pulls_by_digest() -> None:
    image = container(build_variant("prod"))["image"]
    assert image.endswith("@sha256:" + "0" * 64)  # the placeholder until the first release
    assert "@" not in container(build_variant("dev"))["image"]


def test_a_release_pins_prod_by_digest_and_dev_by_tag(deploy: Path) -> None:
    before = (deploy / "overlays" / "prod" / "kustomization.yaml").read_text()
    done = release(deploy, version(), DIGEST, "--image", "registry.casino.example/cpsettle")
    assert done.returncode == 0, done.stderr
    prod = kustomize(deploy / "overlays" / "prod")
    assert container(prod)["image"] == f"registry.casino.example/cpsettle:{version()}@{DIGEST}"
    dev = kustomize(deploy / "overlays" / "dev")
    assert container(dev)["image"] == f"registry.casino.example/cpsettle:{version()}"
    after = (deploy / "overlays" / "prod" / "kustomization.yaml").read_text()
    comments = [line for line in before.splitlines() if line.lstrip().startswith("#")]
    assert comments and all(c in after.splitlines() for c in comments)  # comments kept
    # the next release replaces the entry, it does not add one
    other = "sha256:" + "cd34" * 16
    assert release(deploy, version(), other).returncode == 0
    assert container(kustomize(deploy / "overlays" / "prod"))["image"].endswith(other)
    text = (deploy / "overlays" / "prod" / "kustomization.yaml").read_text()
    assert len(re.findall(r"^\s+digest:", text, flags=re.M)) == 1
    assert "registry.casino.example/cpsettle" in text


@pytest.mark.parametrize(
    "args, why",
    [
        (("0.1.0", "sha256:abc"), "not a sha256 digest"),
        (("0.1.0", "md5:" + "a" * 64), "not a sha256 digest"),
        (("0.1.0", "sha256:" + "0" * 64), "placeholder"),
        (("9.9.9", DIGEST), "not pyproject.toml's version"),
        (("latest", DIGEST), "not a release version"),
        (("0.1.0",), "give the digest"),
    ],
)
def test_a_release_refuses(deploy: Path, args: tuple[str, ...], why: str) -> None:
    args = tuple(version() if a == "0.1.0" else a for a in args)
    before = (deploy / "overlays" / "prod" / "kustomization.yaml").read_text()
    done = release(deploy, *args)
    assert done.returncode == 2 and why in done.stderr, done.stderr
    assert (deploy / "overlays" / "prod" / "kustomization.yaml").read_text() == before


# --------------------------------------------------------------------------- runbook links


def test_runbook_links_follow_the_components_one_setting(deploy: Path) -> None:
    setting = deploy / "components" / "prometheus-rules" / "runbook-url.yaml"
    doc = yaml.safe_load(setting.read_text())
    doc["data"]["baseUrl"] = "https://wiki.casino.example/ops/cpsettle-runbook.html"
    setting.write_text(yaml.safe_dump(doc))
    docs = kustomize(deploy / "components" / "prometheus-rules", [])
    alerts = [
        r for g in one(docs, "PrometheusRule")["spec"]["groups"] for r in g["rules"] if "alert" in r
    ]
    source = yaml.safe_load(
        (REPO / "deploy" / "components" / "prometheus-rules" / "prometheusrule.yaml").read_text()
    )
    assert [a["alert"] for a in alerts] == [
        r["alert"] for g in source["spec"]["groups"] for r in g["rules"] if "alert" in r
    ]
    assert len(alerts) >= 16
    for a in alerts:
        assert a["annotations"]["runbook_url"] == (
            f"https://wiki.casino.example/ops/cpsettle-runbook.html#{a['alert'].lower()}"
        )
    # the setting itself is kustomize's local configuration: never applied to the cluster
    variant = build_variant("prod-monitoring")
    assert not [d for d in variant if d["metadata"]["name"] == "cpsettle-runbook-url"]


# --------------------------------------------------------------------------- CRD schemas


def validator() -> ModuleType:
    pytest.importorskip("jsonschema", reason="jsonschema (test extra) not installed")
    path = REPO / ".ci" / "validate-crds"
    loader = importlib.machinery.SourceFileLoader("validate_crds", str(path))
    spec = importlib.util.spec_from_loader("validate_crds", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def custom_objects() -> list[dict[str, Any]]:
    docs = build_variant("prod-monitoring") + build_variant("prod-cert-manager")
    return [d for d in docs if d["kind"] in ("ServiceMonitor", "PrometheusRule", "Certificate")]


def test_the_custom_resources_match_their_crds() -> None:
    v = validator()
    schemas = v.load_crds(REPO / ".ci" / "crds")
    objects = custom_objects()
    assert {d["kind"] for d in objects} == {"ServiceMonitor", "PrometheusRule", "Certificate"}
    problems, checked = v.problems(objects, schemas)
    assert problems == [] and checked == 3


def broken(kind: str, change: Any) -> dict[str, Any]:
    [doc] = [copy.deepcopy(d) for d in custom_objects() if d["kind"] == kind]
    change(doc)
    return doc


@pytest.mark.parametrize(
    "kind, change, expected",
    [
        (
            "PrometheusRule",
            lambda d: d["spec"]["groups"][1]["rules"][0].update(fore="5m"),
            "'fore' was unexpected",
        ),
        (
            "PrometheusRule",
            lambda d: d["spec"]["groups"][1]["rules"][0].update({"for": "5 min"}),
            "does not match",
        ),
        (
            "ServiceMonitor",
            lambda d: d["spec"]["endpoints"][0].update(interval=30),
            "is not of type 'string'",
        ),
        ("ServiceMonitor", lambda d: d["spec"].update(endpoint=[]), "'endpoint' was unexpected"),
        ("Certificate", lambda d: d["spec"]["privateKey"].update(algorithm="DSA"), "is not one of"),
        ("Certificate", lambda d: d["spec"].pop("issuerRef"), "'issuerRef' is a required property"),
        ("Certificate", lambda d: d.update(apiVersion="cert-manager.io/v2"), "not a served kind"),
    ],
)
def test_the_crd_check_rejects(kind: str, change: Any, expected: str) -> None:
    v = validator()
    problems, _ = v.problems([broken(kind, change)], v.load_crds(REPO / ".ci" / "crds"))
    assert problems and any(expected in p for p in problems), problems


# --------------------------------------------------------------------------- the image's SBOM


def sbom_image() -> ModuleType:
    path = REPO / ".ci" / "sbom-image"
    loader = importlib.machinery.SourceFileLoader("sbom_image", str(path))
    spec = importlib.util.spec_from_loader("sbom_image", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


BASE_PACKAGES = DEPLOY / "image" / "base-packages.txt"
PYTHON_SBOM = {
    "bomFormat": "CycloneDX",
    "specVersion": "1.6",
    "components": [
        {"type": "library", "name": "grpcio", "version": "1.85.1", "purl": "pkg:pypi/grpcio@1.85.1"}
    ],
}


def test_the_sbom_lists_the_base_images_debian_packages_and_cpython() -> None:
    s = sbom_image()
    dockerfile = (REPO / "Dockerfile").read_text()
    merged = s.merge(copy.deepcopy(PYTHON_SBOM), dockerfile, BASE_PACKAGES.read_text())
    by_name = {c["name"]: c for c in merged["components"]}
    assert by_name["grpcio"]["purl"] == "pkg:pypi/grpcio@1.85.1"  # Python's, kept
    debian = [c for c in merged["components"] if c.get("purl", "").startswith("pkg:deb/")]
    assert len(debian) > 80  # a slim Debian base: about a hundred packages
    # what the service links against at run time is there, as a Debian scanner reads it
    for name in (
        "libc6",
        "libssl3",
        "zlib1g",
        "libffi8",
        "libsqlite3-0",
        "ca-certificates",
        "tzdata",
        "netbase",
    ):
        assert by_name[name]["purl"].startswith(f"pkg:deb/debian/{name}@"), name
        assert "distro=debian-12" in by_name[name]["purl"]
    assert by_name["libssl3"]["purl"].endswith("&upstream=openssl")
    [base] = re.findall(r"^FROM (\S+)$", dockerfile, flags=re.M)
    version = re.match(r"python:(\d+\.\d+\.\d+)-", base).group(1)  # type: ignore[union-attr]
    assert by_name["cpython"]["version"] == version
    assert {"name": "cpsettle:base_image", "value": base} in merged["metadata"]["properties"]


def test_a_new_base_image_needs_its_package_list() -> None:
    s = sbom_image()
    dockerfile = (REPO / "Dockerfile").read_text()
    moved = re.sub(r"@sha256:[0-9a-f]{64}", "@sha256:" + "1" * 64, dockerfile)
    with pytest.raises(ValueError, match="read the new base's packages"):
        s.merge(copy.deepcopy(PYTHON_SBOM), moved, BASE_PACKAGES.read_text())
    unpinned = re.sub(r"@sha256:[0-9a-f]{64}", "", dockerfile)
    with pytest.raises(ValueError, match="must be python"):
        s.merge(copy.deepcopy(PYTHON_SBOM), unpinned, BASE_PACKAGES.read_text())
