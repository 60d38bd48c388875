"""Turning file bytes into resources (api/resource/factory.go, kyaml/kio/byteio_reader.go)."""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.yamlio.tree import undecodable
from kzgit.openapi import note_resource_type
from kzgit.resource import Resource, scalar_text
from kzgit.yamlio import load_documents

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List


def _flatten(doc: Any, source: str, out: List[Dict[str, Any]]) -> None:
    if not doc and isinstance(doc, (dict, list)):
        # api/resource/factory.go dropBadNodes skips IsNilOrEmpty nodes: an empty map or
        # sequence document (a file holding `[]`) is no resource, not an error.
        return
    if not isinstance(doc, dict):
        raise BuildError(f"{source}: expected a YAML mapping for a resource, got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        why = undecodable(doc)
        if why is not None:
            # factory.go inlineAnyEmbeddedLists decodes the list (RNode.Map)
            raise BuildError(f"{source}: trouble expanding list of {kind}: {why}")
        items = doc.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            raise BuildError(f"{source}: items of {kind} must be a list")
        for it in items:
            _flatten(it, source, out)
        return
    out.append(doc)


def objects_from_bytes(data: bytes, source: str, first_wins: bool = False) -> List[Dict[str, Any]]:
    """The objects of a file (``List`` kinds inlined); ``first_wins``: a strategic-merge
    patch, where a duplicate key is no error (see :func:`kzgit.yamlio.load_documents`)."""
    docs: List[Dict[str, Any]] = []
    for d in load_documents(data, source, first_wins=first_wins):
        _flatten(d, source, docs)
    return docs


def resources_from_bytes(data: bytes, source: str) -> List[Resource]:
    """The resources of a file.  A key written twice is no error yet: kyaml keeps the nodes
    (its lookups find the first key) and kustomize fails only when it decodes the resource
    (a JSON 6902 patch, the output), by which time a patch may have removed one of them and
    the annotations have been re-set from a map (see kzgit.build.finish)."""
    out = []
    for obj in objects_from_bytes(data, source, first_wins=True):
        validate_object(obj, source)
        res = Resource(obj, source)
        # kyaml resid.NewGvk asks IsNamespaceScoped, which may delay a builtin schema parse
        note_resource_type(res.api_version, res.kind)
        out.append(res)
    return out


def validate_object(obj: Dict[str, Any], source: str) -> None:
    """kyaml GetValidatedMetadata: kind and metadata.name are required.

    Both are read as kyaml reads them (the scalar's text), so a mapping or a sequence there
    counts as missing (kyaml/yaml/rnode.go GetValidatedMetadata).  ``source`` names the file
    the object was read from ("" for a resource a build step made or changed).
    """
    kind = scalar_text(obj, "kind")
    md = obj.get("metadata")
    where = f" (in {source})" if source else ""
    if not kind:
        raise BuildError(f"missing Resource metadata: kind is required{where}")
    if kind.endswith("List"):
        return  # "A list doesn't require a name." (GetValidatedMetadata)
    if not isinstance(md, dict) or not scalar_text(md, "name"):
        raise BuildError(f"missing metadata.name in object {{{obj.get('apiVersion', '')} {kind}}}{where}")
