"""Turning file bytes into resources (api/resource/factory.go, kyaml/kio/byteio_reader.go)."""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.yamlio.tree import undecodable
from kzgit.openapi import note_resource_type
from kzgit.resource import Resource, scalar_text
from kzgit.yamlio import load_documents

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional


def _list_items(doc: Dict[str, Any], source: str) -> Optional[List[Any]]:
    """The items of a ``FooList`` document, None when ``doc`` is no such list."""
    kind = doc.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in doc):
        return None
    why = undecodable(doc)
    if why is not None:
        # factory.go inlineAnyEmbeddedLists decodes the list (RNode.Map)
        raise BuildError(f"{source}: trouble expanding list of {kind}: {why}")
    items = doc.get("items")
    if items is None:
        return []   # "an empty list"
    if not isinstance(items, list):
        raise BuildError(f"{source}: items of {kind} must be a list")
    return items


def objects_from_bytes(data: bytes, source: str, first_wins: bool = False) -> List[Dict[str, Any]]:
    """The objects of a file (``List`` kinds inlined); ``first_wins``: a strategic-merge
    patch, where a duplicate key is no error (see :func:`kzgit.yamlio.load_documents`).

    As api/resource/factory.go inlineAnyEmbeddedLists: the documents are a queue, and a
    list's items join its end, so they come after the file's other documents (what
    ``--reorder none`` shows); an item that is null or empty is dropped (dropBadNodes:
    IsNilOrEmpty), as is an empty document.
    """
    queue: List[Any] = list(load_documents(data, source, first_wins=first_wins))
    docs: List[Dict[str, Any]] = []
    i = 0
    while i < len(queue):
        doc = queue[i]
        i += 1
        if doc is None or (not doc and isinstance(doc, (dict, list))):
            continue   # a file holding `[]`, a null list item: no resource, not an error
        if not isinstance(doc, dict):
            # kyaml finds no metadata in a scalar or a list of scalars (GetValidatedMetadata);
            # kustomize's words first, then what the document is
            kind = "a list" if isinstance(doc, list) else "a scalar"
            raise BuildError(f"{source}: missing Resource metadata ({kind}, not a mapping)")
        items = _list_items(doc, source)
        if items is None:
            docs.append(doc)
        else:
            queue.extend(items)
    return docs


def resources_from_bytes(data: bytes, source: str) -> List[Resource]:
    """The resources of a file.  A key written twice is no error yet: kyaml keeps the nodes
    (its lookups find the first key) and kustomize fails only when it decodes the resource
    (a JSON 6902 patch, the output), by which time a patch may have removed one of them and
    the annotations have been re-set from a map (see kzgit.builder.finish)."""
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
