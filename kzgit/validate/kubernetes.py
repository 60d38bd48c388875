"""The Kubernetes schemas: the data the ``kubernetes-validate`` package ships.

``kubernetes-validate`` (Apache-2.0) bundles, per Kubernetes minor release, the
JSON schemas generated from that release's OpenAPI document, in a normal and a
``-strict`` form (the latter with ``additionalProperties: false`` on every
object with declared fields): ``kubernetes-json-schema/v1.29.0-local[-strict]/``.
kzgit reads its ``_definitions.json`` (every definition, each top-level kind
tagged with ``x-kubernetes-group-version-kind``) and never imports the package:
its validator is the slow path kzgit replaces, and importing it would load
``jsonschema`` on every hook run.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from typing import Any, Dict, Optional, Tuple

from kzgit.errors import UsageError
from kzgit.validate.schema import Check, Compiler, SchemaError
from kzgit.validate.deprecations import release_key

PACKAGE = "kubernetes-validate"
_DIR_RE = re.compile(r"^v(\d+)\.(\d+)\.\d+-local$")
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# How refs in the package's files name the definitions document.
_SELF_NAMES = ("/api/_definitions.json", "_definitions.json")


@functools.lru_cache(maxsize=None)
def schema_root() -> Optional[str]:
    """The package's schema directory, found without importing the package (None if absent)."""
    try:
        spec = importlib.util.find_spec("kubernetes_validate")
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        d = os.path.join(loc, "kubernetes-json-schema")
        if os.path.isdir(d):
            return d
    return None


@functools.lru_cache(maxsize=None)
def versions() -> Tuple[str, ...]:
    """The Kubernetes minor releases the bundled schemas cover, oldest first ("1.25", ...)."""
    root = schema_root()
    if root is None:
        return ()
    found = []
    for name in os.listdir(root):
        m = _DIR_RE.match(name)
        if m:
            found.append(f"{m.group(1)}.{m.group(2)}")
    return tuple(sorted(found, key=release_key))


def newest() -> Optional[str]:
    """The default ``kubernetes-version``: the newest release the schemas cover."""
    vs = versions()
    return vs[-1] if vs else None


def normalize_version(value: str, source: str) -> str:
    """``1.29``, ``v1.29`` or ``1.29.3`` -> ``1.29``, or a UsageError naming ``source``."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", value.strip())
    vs = versions()
    if not vs:
        raise UsageError(f"{source}: no Kubernetes schemas are installed",
                         tip=f"install the '{PACKAGE}' package (a kzgit dependency)")
    if m is None or f"{int(m.group(1))}.{int(m.group(2))}" not in vs:
        raise UsageError(f"{source}: unknown Kubernetes version {value!r}",
                         tip=f"the bundled schemas cover {vs[0]} to {vs[-1]}")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


@functools.lru_cache(maxsize=None)
def _definitions(version: str, strict: bool) -> Dict[str, Any]:
    root = schema_root()
    assert root is not None
    path = os.path.join(root, f"v{version}.0-local{'-strict' if strict else ''}", "_definitions.json")
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read the Kubernetes schemas: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("$defs"), dict):
        raise UsageError(f"{path}: not a schema definitions file")
    return doc


@functools.lru_cache(maxsize=None)
def kinds(version: str) -> Dict[Tuple[str, str], str]:
    """(apiVersion, kind) -> definition name, for every kind ``version`` serves."""
    out: Dict[Tuple[str, str], str] = {}
    for name, d in _definitions(version, True)["$defs"].items():
        for gvk in d.get("x-kubernetes-group-version-kind") or ():
            key = (_api_version(gvk.get("group", ""), gvk.get("version", "")), gvk.get("kind", ""))
            # a kind tagged on several definitions (List kinds, DeleteOptions) keeps its own
            if key not in out or name.rsplit(".", 1)[-1] == key[1]:
                out[key] = name
    return out


def _version_rank(v: str) -> Tuple[int, int, int]:
    """Kubernetes API version priority: GA above beta above alpha, then the numbers."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


class KubernetesSchemas:
    """The compiled schemas of one release, shared by every resource and root of a run."""

    def __init__(self, version: str, strict: bool) -> None:
        self.version = version
        self.strict = strict
        self._compiler_: Optional[Compiler] = None
        self._checks: Dict[Tuple[str, str], Optional[Check]] = {}

    @property
    def doc(self) -> Dict[str, Any]:
        """The release's definitions, read when a resource is first checked: a warm run whose
        findings all come from the render cache never reads them (a few megabytes of JSON)."""
        return _definitions(self.version, self.strict)

    @property
    def _compiler(self) -> Compiler:
        if self._compiler_ is None:
            self._compiler_ = Compiler(self.doc, "json", strict=False, self_names=_SELF_NAMES)
        return self._compiler_

    def check_for(self, api_version: str, kind: str) -> Optional[Check]:
        """The compiled check of a kind, or None when this release does not serve it."""
        key = (api_version, kind)
        if key not in self._checks:
            name = kinds(self.version).get(key)
            self._checks[key] = None if name is None else self.definition(name)
        return self._checks[key]

    def definition(self, name: str) -> Check:
        """The compiled check of a definition by name (ObjectMeta for custom resources)."""
        try:
            return self._compiler.compile({"$ref": f"#/$defs/{name}"})
        except SchemaError as e:  # the package's data is broken: not the user's fault
            raise UsageError(f"{PACKAGE} schema for Kubernetes {self.version}: {e}") from None

    def unknown_kind(self, api_version: str, kind: str) -> Optional[Tuple[str, str, str]]:
        """Why a kind of one of Kubernetes' own groups that no release serves is refused, as
        (code, JSON pointer, message) with a did-you-mean; None for a group Kubernetes does not
        serve (a custom resource's)."""
        group, _, version = api_version.rpartition("/")
        served = kinds(self.version)
        in_group = {k: av for (av, k) in served if av.rpartition("/")[0] == group}
        if not in_group:
            return None
        if kind in in_group:   # a version the group does not have (apps/v2)
            return ("not-served", "/apiVersion",
                    f"{kind} {api_version} is not served by Kubernetes {self.version} "
                    f"(no release serves version {version} of it; use {in_group[kind]})")
        import difflib   # start-up: only for a misspelt kind
        close = difflib.get_close_matches(kind, sorted(in_group), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else ""
        return ("unknown-kind", "/kind", f"Kubernetes {self.version} has no kind {kind} in "
                f"{group or 'the core group'} ({api_version}){hint}")

    def not_served(self, api_version: str, kind: str) -> Optional[str]:
        """Why a kind other releases serve is refused by this one, pluto-style; None if no release does."""
        served = [v for v in versions() if (api_version, kind) in kinds(v)]
        if not served or self.version in served:
            return None
        pinned = release_key(self.version)
        if release_key(served[-1]) < pinned:
            when = f"served up to {served[-1]}"
        elif release_key(served[0]) > pinned:
            when = f"served from {served[0]}"
        else:
            when = "served by " + ", ".join(served)
        group = api_version.rpartition("/")[0]
        others = [av for (av, k) in kinds(self.version) if k == kind and av.rpartition("/")[0] == group]
        msg = f"{kind} {api_version} is not served by Kubernetes {self.version} ({when}"
        if others:
            best = max(others, key=lambda av: _version_rank(av.rpartition("/")[2]))
            msg += f"; use {best}"
        return msg + ")"
