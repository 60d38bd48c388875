"""The real CRDs and examples under ``tests/validate/data/realcrds`` (provenance in its README),
loaded into a :class:`~kzgit.validate.Validator` as a repository's ``crds`` would be."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

from kzgit.config import ValidatePolicy
from kzgit.validate import Issue, Validator
from kzgit.yamlio import load_documents

DATA = Path(__file__).parent / "data" / "realcrds"
PROJECTS = ("gateway-api", "kueue", "cert-manager", "cluster-api")


def validator(*projects: str, strict: bool = True, version: str = "1.33") -> Validator:
    v = Validator(ValidatePolicy(kubernetes_version=version, strict=strict))
    for proj in projects or PROJECTS:
        for f in sorted((DATA / proj).rglob("*.yaml.gz")):
            for doc in load_documents(gzip.decompress(f.read_bytes()), str(f)):
                v.crds.add(doc, f.name)
    return v


def examples(project: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(file relative to the project, resource) for every example resource of a project."""
    for f in sorted((DATA / project).rglob("*.yaml")):
        for doc in load_documents(f.read_bytes(), str(f)):
            if isinstance(doc, dict):
                yield str(f.relative_to(DATA / project)), doc


def errors(v: Validator, obj: Dict[str, Any]) -> List[Issue]:
    return [i for i in v.check(obj) or [] if i.severity == "error"]
