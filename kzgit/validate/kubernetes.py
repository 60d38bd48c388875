"""The Kubernetes schemas kzgit ships: ``kzgit/validate/k8s/``, one file per minor release.

Each ``vX.Y.json.gz`` is the ``_definitions.json`` of the ``kubernetes-validate`` package
(Apache-2.0) for that release, the JSON schemas generated from the release's OpenAPI
document (every definition, each top-level kind tagged with ``x-kubernetes-group-version-kind``),
without descriptions: ``scripts/gen_k8s_schemas.py`` makes them from the package's wheel and
records the wheel, the source files and their checksums in ``k8s/PROVENANCE.json``.  The strict
form (``additionalProperties: false`` on every object with declared fields) is derived when
asked for (:func:`strict_form`; the script checks it equals the package's ``-strict`` files).
kzgit once read these files from the installed package; shipping them as compact data keeps the
hook environment small (the package is 72 MB) and the default release kzgit's own
(:data:`DEFAULT_VERSION`), not whatever release pip resolved.  The package stays a test
dependency: the differential test compares kzgit's verdicts with its validator.
"""
from __future__ import annotations

import functools
import gzip
import json
import os
import re
from typing import Any, Dict, Optional, Tuple

from kzgit.errors import UsageError
from kzgit.validate.schema import Check, Compiler, SchemaError
from kzgit.validate.deprecations import release_key

#: The default ``kubernetes-version``: kzgit's own, changed deliberately in a kzgit release
#: (docs/commands/validate.md), never by what a package manager resolved.
DEFAULT_VERSION = "1.37"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s")
_FILE_RE = re.compile(r"^v(\d+)\.(\d+)\.json\.gz$")
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# How refs in the package's files name the definitions document.
_SELF_NAMES = ("/api/_definitions.json", "_definitions.json")


def schema_dir() -> Optional[str]:
    """The directory of the shipped schemas (None if a broken install lost it)."""
    return DATA if os.path.isdir(DATA) else None


@functools.lru_cache(maxsize=None)
def versions() -> Tuple[str, ...]:
    """The Kubernetes minor releases the shipped schemas cover, oldest first ("1.25", ...)."""
    root = schema_dir()
    if root is None:
        return ()
    found = []
    for name in os.listdir(root):
        m = _FILE_RE.match(name)
        if m:
            found.append(f"{m.group(1)}.{m.group(2)}")
    return tuple(sorted(found, key=release_key))


def newest() -> Optional[str]:
    """The default ``kubernetes-version`` (:data:`DEFAULT_VERSION`; None without schemas)."""
    vs = versions()
    return DEFAULT_VERSION if DEFAULT_VERSION in vs else (vs[-1] if vs else None)


def without_descriptions(node: Any) -> Any:
    """A schema without its ``description`` annotations, as the shipped data are (a property
    named ``description`` is a schema object, not a string, and stays)."""
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def strict_form(node: Any) -> Any:
    """The strict schemas of a definitions document: every object schema that declares
    ``properties`` and no ``additionalProperties`` closed (kubernetes-validate's ``-strict``)."""
    if isinstance(node, dict):
        out = {k: (strict_form(v) if k != "properties" else
                   {pk: strict_form(pv) for pk, pv in v.items()} if isinstance(v, dict) else v)
               for k, v in node.items()}
        if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [strict_form(v) for v in node]
    return node


def normalize_version(value: str, source: str) -> str:
    """``1.29``, ``v1.29`` or ``1.29.3`` -> ``1.29``, or a UsageError naming ``source``."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", value.strip())
    vs = versions()
    if not vs:
        raise UsageError(f"{source}: no Kubernetes schemas are installed",
                         tip="kzgit's data directory kzgit/validate/k8s is missing: reinstall kzgit")
    if m is None or f"{int(m.group(1))}.{int(m.group(2))}" not in vs:
        raise UsageError(f"{source}: unknown Kubernetes version {value!r}",
                         tip=f"the bundled schemas cover {vs[0]} to {vs[-1]}")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


@functools.lru_cache(maxsize=None)
def _definitions(version: str, strict: bool) -> Dict[str, Any]:
    if strict:
        return strict_form(_definitions(version, False))
    path = os.path.join(DATA, f"v{version}.json.gz")
    try:
        with open(path, "rb") as f:
            doc = json.loads(gzip.decompress(f.read()))
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"{path}: cannot read the Kubernetes schemas: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("$defs"), dict):
        raise UsageError(f"{path}: not a schema definitions file")
    return doc


@functools.lru_cache(maxsize=None)
def kinds(version: str) -> Dict[Tuple[str, str], str]:
    """(apiVersion, kind) -> definition name, for every kind ``version`` serves."""
    out: Dict[Tuple[str, str], str] = {}
    for name, d in _definitions(version, False)["$defs"].items():
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
            raise UsageError(f"kzgit's schema for Kubernetes {self.version}: {e}") from None

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
