"""A root's validation findings, kept in the render cache between runs.

What ``kzgit validate`` finds in a root is a function of:

* what the root renders: its resources with their source files and former names
  (the digest of the render cache's ``resources`` entry payload);
* the files a finding may point into (:class:`kzgit.validate.locate.Locator` reads the
  root's files as the dependency graph reaches them, and the resources' own files), by
  content;
* the schemas: the validation settings, the bundled Kubernetes schema files of the
  installed package, and every CRD in force (rendered by any root, or a ``crds`` file);
* kzgit's own code.

The key is all of those, so a hit is what validating again would find.  Schemas found
through ``schema-locations`` templates are read as kinds need them, which no key
covers: with ``schema-locations`` set, findings are not cached.  The findings are
stored before "a missing schema is listed once per kind" is applied across roots.
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from kzgit.sha import sha256
from kzgit.validate import Finding

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.config import ValidatePolicy
    from kzgit.hooks import Workspace
    from kzgit.rendercache import Store
    from kzgit.validate import Validator

FORMAT = 1


def schema_state(policy: "ValidatePolicy", validator: "Validator") -> Optional[str]:
    """What the schemas of this run are, as a key part; None when they cannot be keyed."""
    if policy.schema_locations:
        return None
    from kzgit.rendercache import code_fingerprint   # start-up: loaded only by the runs that need it
    from kzgit.validate.kubernetes import schema_dir   # start-up: loaded only by the runs that need it
    settings = {n: getattr(policy, n) for n in policy.fields()}
    settings.pop("source", None)   # where the settings came from, not what they say
    files: List[Any] = []
    root = schema_dir()
    if root is not None:
        for name in sorted(os.listdir(root)):
            for leaf in ("_definitions.json",):
                try:
                    st = os.stat(os.path.join(root, name, leaf))
                except OSError:
                    continue
                files.append([name, st.st_size, st.st_mtime_ns])
    parts = {"format": FORMAT, "kzgit": code_fingerprint(), "settings": settings,
             "version": validator.version, "kubernetes": [root, files],
             "crds": validator.crds.fingerprint(), "cel": _cel_runtime()}
    return sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _cel_runtime() -> Optional[str]:
    """The CEL runtime's release: CEL findings are its answers, so another release validates
    again (None where it is not installed: every rule is then skipped, and said so)."""
    from importlib import metadata   # start-up: loaded only by the runs that need it
    try:
        return metadata.version("cel-expr-python")
    except metadata.PackageNotFoundError:
        return None


def key_for(ws: "Workspace", root: str, digest: str, sources: List[str], state: str) -> Optional[str]:
    """The key of ``root``'s findings (None: the root is not a kustomization of the graph,
    e.g. one in an excluded directory named on the command line: what it reaches is unknown)."""
    from kzgit.rendercache.reads import blob_id   # start-up: loaded only by the runs that need it
    if root not in ws.graph.nodes:
        return None
    reach = ws.graph.reach(root)
    files = sorted(set(reach.files) | set(sources))
    blobs = []
    known = ws.memo("blob ids")   # a base's files are read by every root of the run
    for f in files:
        if f not in known:
            data = ws.read(f)
            known[f] = blob_id(data) if data is not None else None
        blobs.append([f, known[f]])
    parts = {"state": state, "root": root, "top": ws.build_root, "resources": digest, "files": blobs,
             "kdirs": sorted(reach.kustomization_dirs)}
    return sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def load(store: "Store", key: str) -> Optional[Tuple[List[Finding], int]]:
    """The stored findings of ``key`` and how many resources were validated, else None."""
    def accept(header: Dict[str, Any], _: bytes) -> Optional[Tuple[List[Finding], int]]:
        try:
            return [Finding(**f) for f in header["findings"]], int(header["validated"])
        except (KeyError, TypeError, ValueError):
            return None   # not an entry this code wrote
    return store.lookup(key, accept)


def save(store: "Store", key: str, findings: List[Finding], count: int) -> None:
    """Store ``findings`` (best effort, as every cache entry)."""
    store.write(key, {"trace": None, "findings": [{n: getattr(f, n) for n in f.fields()} for f in findings],
                      "validated": count}, b"")


def source_files(ws: "Workspace", sources: List[str]) -> List[str]:
    """The repository-relative paths of resource files inside the workspace."""
    out = []
    for s in sorted(set(sources)):
        rel = ws.relative(s) if s else None
        if rel is not None:
            out.append(rel)
    return out
