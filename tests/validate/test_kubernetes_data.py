"""The Kubernetes schemas kzgit ships (kzgit/validate/k8s): checksums, default release, and
equality with their source, the kubernetes-validate package (when the test extra has it)."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
import pytest

from kzgit.validate import kubernetes

DATA = Path(kubernetes.DATA)
PROVENANCE = json.loads((DATA / "PROVENANCE.json").read_text("utf-8"))


def test_every_file_has_its_recorded_checksum() -> None:
    files = sorted(p.name for p in DATA.glob("v*.json.gz"))
    assert files == sorted(r["file"] for r in PROVENANCE["releases"].values())
    for release, row in PROVENANCE["releases"].items():
        assert hashlib.sha256((DATA / row["file"]).read_bytes()).hexdigest() == row["sha256"], release
    assert PROVENANCE["package"] == "kubernetes-validate" and PROVENANCE["wheel_sha256"]


def test_the_default_release_is_kzgits_own() -> None:
    assert kubernetes.DEFAULT_VERSION in kubernetes.versions()
    assert kubernetes.newest() == kubernetes.DEFAULT_VERSION
    assert kubernetes.versions()[0] == "1.25" and len(kubernetes.versions()) == len(PROVENANCE["releases"])


_strip = kubernetes.without_descriptions


@pytest.mark.parametrize("release", sorted(PROVENANCE["releases"]))
def test_equal_to_the_package(release: str) -> None:
    import kubernetes_validate
    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    src = os.path.join(root, f"v{release}.0-local", "_definitions.json")
    if not os.path.exists(src):
        pytest.skip(f"the installed kubernetes-validate has no {release}")
    raw = Path(src).read_bytes()
    shipped = json.loads(gzip.decompress((DATA / f"v{release}.json.gz").read_bytes()))
    if hashlib.sha256(raw).hexdigest() == PROVENANCE["releases"][release]["source_sha256"]:
        assert shipped == _strip(json.loads(raw))
    strict = json.loads(Path(root, f"v{release}.0-local-strict", "_definitions.json").read_bytes())
    # the strict form kzgit derives is the package's, whatever its version
    assert kubernetes.strict_form(_strip(json.loads(raw))) == _strip(strict)


@pytest.mark.parametrize("release", sorted(PROVENANCE["releases"]))
def test_no_release_has_cel_rules_yet(release: str) -> None:
    # kzgit evaluates x-kubernetes-validations of CRDs only: Kubernetes' own schemas have none
    # in the shipped releases. A release that adds some fails here, so that they get wired to
    # kzgit.validate.cel rather than silently ignored.
    doc = json.loads(gzip.decompress((DATA / f"v{release}.json.gz").read_bytes()))

    def rules(node: object) -> int:
        if isinstance(node, dict):
            here = isinstance(node.get("x-kubernetes-validations"), list)
            return here + sum(rules(v) for k, v in node.items() if k != "properties") + \
                sum(rules(v) for v in (node.get("properties") or {}).values()
                    if isinstance(node.get("properties"), dict))
        if isinstance(node, list):
            return sum(rules(v) for v in node)
        return 0
    assert rules(doc["$defs"]) == 0
