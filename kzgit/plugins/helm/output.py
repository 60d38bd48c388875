"""What kustomize makes of ``helm template``'s output (HelmChartInflationGenerator.go Generate)."""
from __future__ import annotations

from typing import List

from kzgit.errors import BuildError, KzgitError
from kzgit.konfig.general import LOCAL_CONFIG_ANNOTATION as LOCAL_CONFIG
from kzgit.resource import ResMap, Resource
from kzgit.resource.factory import resources_from_bytes, validate_object
from kzgit.yamlio import load_documents

__all__ = ["parse_output"]


def parse_output(stdout: bytes, label: str) -> List[Resource]:
    """Generate's reading of helm's stdout.

    First as any resource file (NewResMapFromBytes: ``*List`` kinds expanded, every document
    needs kind and name, ids unique); when that fails, kustomize re-reads the documents without
    expanding lists and drops ``config.kubernetes.io/local-config`` ones (ResourcesFromRNodes);
    when that fails too, the error is reported.
    """
    source = f"helm template output for {label}"
    try:
        resources = resources_from_bytes(stdout, source)
        ResMap(resources)  # may not add resource with an already registered id
        return resources
    except KzgitError as first:
        first_err: KzgitError = first
    try:
        docs = load_documents(stdout, source)
    except KzgitError as e:
        raise BuildError(f"{label}: error reading helm output: {e}") from None
    out: List[Resource] = []
    try:
        for d in docs:
            if not d:
                continue
            if not isinstance(d, dict):
                raise BuildError(f"missing Resource metadata (a document of {source} is not a mapping)")
            validate_object(d, source)
            md = d.get("metadata") or {}
            ann = md.get("annotations") if isinstance(md, dict) else None
            if isinstance(ann, dict) and LOCAL_CONFIG in ann and ann[LOCAL_CONFIG] != "false":
                continue
            out.append(Resource(d, source))
        ResMap(out)
    except KzgitError as e:
        raise BuildError(f"{label}: could not parse rnode slice into resource map: {e}") from None
    if not docs:
        raise BuildError(f"{label}: could not parse bytes into resource map: {first_err}") from None
    return out
