#!/usr/bin/env python3
"""Regenerate ``kzgit/openapi/k8s-1.21.json``, the merge-key data SMP needs.

kustomize v5.5.0 (kyaml api/v0.18.0) compiles in the Kubernetes v1.21.2 OpenAPI
document (``kyaml/openapi/kubernetesapi/v1_21_2/swagger.pb``) plus the small
``kyaml/openapi/kustomizationapi/swagger.json``.  Strategic merge only reads a
handful of things from it (``kyaml/openapi/openapi.go``): the GVK index
(``x-kubernetes-group-version-kind``), ``properties`` / ``additionalProperties``
/ ``items`` / ``$ref`` to walk down, ``type`` (``Elements()`` requires
``array``), and the list extensions ``x-kubernetes-patch-strategy``,
``x-kubernetes-patch-merge-key``, ``x-kubernetes-list-map-keys`` (plus
``x-kubernetes-list-type``, kept for reference).

The Kubernetes 1.21 definitions are taken from the ``kubernetes-validate``
1.21.0 sdist (``v1.21.0-local/_definitions.json``), the same upstream swagger
(merge keys did not change between 1.21.0 and 1.21.2).  The output keeps the
swagger ``definitions`` shape, pruned to what SMP needs, so that the same code
reads it and a user's custom ``openapi: {path: …}`` file.

Usage: ``python scripts/gen_openapi.py`` (needs network for one
``pip download``); writes the JSON file and a ``.sha256`` beside it, and the index
``kzgit.openapi`` reads to parse only the definitions a merge asks for
(``k8s-1.21.index.json``; ``--index`` rewrites just that from the JSON file).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

PACKAGE = "kubernetes-validate"
VERSION = "1.21.0"
MEMBER = (
    f"kubernetes-validate-{VERSION}/src/kubernetes_validate/"
    "kubernetes-json-schema/v1.21.0-local/_definitions.json"
)
OUT = Path(__file__).resolve().parent.parent / "kzgit" / "openapi" / "k8s-1.21.json"

#: kustomize's ``kyaml/openapi/kustomizationapi/swagger.json`` at api/v0.18.0,
#: always parsed after the Kubernetes (or custom) schema by ``initSchema``.
KUSTOMIZATION_API: Dict[str, Any] = {
    "io.k8s.api.apps.v1.Kustomization": {
        "type": "object",
        "properties": {
            "configMapGenerator": {
                "type": "array",
                "items": {"$ref": "#/definitions/io.k8s.api.apps.v1.ConfigMapArgs"},
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
            "secretGenerator": {
                "type": "array",
                "items": {"$ref": "#/definitions/io.k8s.api.apps.v1.SecretArgs"},
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
        },
        "x-kubernetes-group-version-kind": [
            {"group": "kustomize.config.k8s.io", "kind": "Kustomization", "version": "v1beta1"}
        ],
    },
    "io.k8s.api.apps.v1.ConfigMapArgs": {
        "type": "object",
        "x-kubernetes-group-version-kind": [
            {"group": "kustomize.config.k8s.io", "kind": "ConfigMapArgs", "version": "v1beta1"}
        ],
    },
    "io.k8s.api.apps.v1.SecretArgs": {
        "type": "object",
        "x-kubernetes-group-version-kind": [
            {"group": "kustomize.config.k8s.io", "kind": "SecretArgs", "version": "v1beta1"}
        ],
    },
}

_EXTENSIONS = (
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
)


def compact_schema(s: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Keep from one schema what merge2 can read; None when nothing is left.

    A property reduced to nothing (a plain string, int…) behaves for SMP exactly
    like an absent one: scalars ignore the schema and a list without a patch
    strategy is replaced either way (``kyaml/yaml/schema/schema.go``).
    """
    out: Dict[str, Any] = {}
    if "$ref" in s:
        out["$ref"] = s["$ref"]
    for ext in _EXTENSIONS:
        if ext in s:
            out[ext] = s[ext]
    if isinstance(s.get("items"), dict):
        items = compact_schema(s["items"])
        if items is not None:
            out["items"] = items
    if isinstance(s.get("additionalProperties"), dict):
        ap = compact_schema(s["additionalProperties"])
        if ap is not None:
            out["additionalProperties"] = ap
    props: Dict[str, Any] = {}
    for name, sub in sorted((s.get("properties") or {}).items()):
        c = compact_schema(sub)
        if c is not None:
            props[name] = c
    if props:
        out["properties"] = props
    if not out:
        return None
    if s.get("type") == "array" or s.get("type") == ["array"]:
        out["type"] = "array"
    return out


#: API groups the upstream swagger lists but a v1.21.2 cluster does not serve.
_UNSERVED_GROUPS = ("admission.k8s.io", "imagepolicy.k8s.io")


def _served(gvk: Dict[str, Any]) -> bool:
    """Whether kustomize's schema (fetched from a kind v1.21.2 cluster, where
    no alpha API is enabled) knows this GVK.  Checked with kubectl: a
    ``node.k8s.io/v1alpha1`` RuntimeClass's finalizers are replaced, the
    ``v1beta1`` one's merged."""
    return "alpha" not in str(gvk.get("version")) and gvk.get("group") not in _UNSERVED_GROUPS


def build(definitions: Dict[str, Any], provenance: Dict[str, Any]) -> Dict[str, Any]:
    """Return the compact document for ``definitions`` (a swagger map)."""
    defs: Dict[str, Any] = {}
    for name, d in sorted(definitions.items()):
        c = compact_schema(d) or {}
        gvks = [g for g in d.get("x-kubernetes-group-version-kind") or [] if _served(g)]
        if gvks:
            c["x-kubernetes-group-version-kind"] = gvks
        if c:
            defs[name] = c
    return {"provenance": provenance, "definitions": defs, "kustomization": KUSTOMIZATION_API}


def main() -> int:
    """Download the sdist, extract the definitions, write the data file."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             f"{PACKAGE}=={VERSION}", "-d", tmp],
            check=True,
        )
        sdist = next(Path(tmp).glob("*.tar.gz"))
        sdist_sha = hashlib.sha256(sdist.read_bytes()).hexdigest()
        with tarfile.open(sdist) as tf:
            f = tf.extractfile(MEMBER)
            assert f is not None
            raw = f.read()
    provenance = {
        "package": PACKAGE,
        "version": VERSION,
        "sdist": sdist.name,
        "sdist_sha256": sdist_sha,
        "file": MEMBER,
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "also": "kustomize api/v0.18.0 kyaml/openapi/kustomizationapi/swagger.json (merge keys)",
        "generator": "scripts/gen_openapi.py",
    }
    doc = build(json.loads(raw)["definitions"], provenance)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"
    OUT.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    OUT.with_name(OUT.name + ".sha256").write_text(f"{digest}  {OUT.name}\n", encoding="utf-8")
    write_index(text)
    return 0


def write_index(text: str) -> None:
    """Write ``k8s-1.21.index.json``: where each definition is in ``text`` (kzgit.openapi._index)."""
    sys.path.insert(0, str(OUT.parent.parent.parent))
    from kzgit.openapi._index import make_index
    index = json.dumps(make_index(text), sort_keys=True, separators=(",", ":")) + "\n"
    OUT.with_name("k8s-1.21.index.json").write_text(index, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--index"]:
        write_index(OUT.read_text(encoding="utf-8"))
        raise SystemExit(0)
    raise SystemExit(main())
