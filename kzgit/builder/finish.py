"""What Kustomizer.Run does to the accumulated resources before printing them (kustomize
api/krusty/kustomizer.go after makeCustomizedResMap): drop local-config resources, sort,
the managed-by label, annotations re-set as strings, origin annotations."""
from __future__ import annotations

import json

from kzgit.options import BuildOptions
from kzgit.resource.origin import annotate_origins
from kzgit.builtins.sorting import apply_sort
from kzgit.errors import BuildError
from kzgit.konfig.general import LOCAL_CONFIG_ANNOTATION as LOCAL_CONFIG
from kzgit.konfig.general import MANAGED_BY_LABEL
from kzgit.versions import managed_by
from kzgit.resource import Resource
from kzgit.resource.factory import validate_object
from kzgit.resource.selector import metadata_texts
from kzgit.yamlio import plain_scalar_is_string
from kzgit.yamlio.tree import DupKeys, LazyError, spelled, undecodable

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List

__all__ = ["finish"]


def finish(resources: List[Resource], sort_options: Any, build_metadata: List[str],
           options: BuildOptions) -> List[Resource]:
    """The output resources of a build, in order, as Kustomizer.Run leaves them."""
    kept = []
    for r in resources:
        if r.obj:
            # kusttarget.go IgnoreLocal → factory.go DropLocalNodes validates every resource
            # again after the last transformer: one a replacement or patch left without a
            # kind or a scalar name fails here
            validate_object(r.obj, "")
        ann = r.annotations()
        if LOCAL_CONFIG in ann:
            # factory.go DropLocalNodes decodes the annotations into strings: a null is "",
            # a scalar its text (a bare false is "false"); only "false" keeps the resource.
            v = ann[LOCAL_CONFIG]
            if v is None or metadata_texts(ann)[LOCAL_CONFIG] != "false":
                continue
        kept.append(r)
    resources = apply_sort(kept, sort_options, options.reorder)
    build_md = build_metadata
    if options.enable_managedby_label or "managedByLabel" in build_md:
        value = managed_by(options.kustomize_version)
        for r in resources:
            labels = r.metadata.get("labels")
            if not isinstance(labels, dict):
                labels = r.metadata["labels"] = {}
            labels[MANAGED_BY_LABEL] = value
    for r in resources:
        _stringify_annotations(r)
        _check_annotation_keys(r)
        _check_decodable(r)
    annotate_origins(resources, "originAnnotations" in build_md, "transformerAnnotations" in build_md)
    return resources


def _check_annotation_keys(r: Resource) -> None:
    """kustomize fails on an annotation key that reads as a non-string YAML scalar.

    kyaml rebuilds every resource's annotations with plain keys, and the final conversion
    to a Go map then meets a ``true``, ``1`` or ``null`` key: ``json: unsupported type:
    map[interface {}]interface {}`` (reproduced with kubectl kustomize v5.5.0, quoted keys
    in the source included).  Label keys fail the same way only where a label transformer
    rewrote the map; kzgit does not reproduce that half.
    """
    ann = r.metadata.get("annotations")
    if not isinstance(ann, dict):
        return
    for k in ann:
        if not plain_scalar_is_string(str(k)):
            raise BuildError(
                f"{r.cur_id()}: annotation key {json.dumps(str(k))} reads as a non-string YAML "
                "value; kustomize cannot serialise it (json: unsupported type: "
                "map[interface {}]interface {}); quoting does not help")


def _check_decodable(r: Resource) -> None:
    """A key written twice in a resource file, or a scalar that cannot be decoded (``.inf``,
    ``!!int f``), is kept until the output (kyaml holds nodes, and its lookups find the first
    key, read the text); printing decodes each resource into a Go map, which fails then
    (yaml.v3 "mapping key already defined"; resource.go AsYAML).  The annotations were re-set
    from a map before (last value wins), so a key written twice there never fails."""
    why = undecodable(r.obj)
    if why is not None:
        raise BuildError(f"{r.cur_id()}: {why}")


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"  # a null without source text came from JSON (a JSON 6902 patch)
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v))
    return str(v)


def _stringify_annotations(r: Resource) -> None:
    """Resource.RemoveBuildAnnotations re-sets a non-empty annotation map through
    SetAnnotations(map[string]string): every value comes out as a string."""
    md = r.obj.get("metadata")
    if not isinstance(md, dict) or "annotations" not in md:
        return
    if md.__class__ is DupKeys:
        # annotations written twice: GetAnnotations reads the last, and setMapInMetadata
        # clears the first field and re-sets the one left
        md.clear_first("annotations")
    ann = md["annotations"]
    if ann == {} or not isinstance(ann, dict):
        # Kustomizer.Run's RemoveOriginAnnotations re-sets every resource's annotations
        # (Resource.SetOrigin: SetAnnotations(GetAnnotations())), and GetAnnotations reads
        # a null, a scalar or an empty sequence as no annotations: the field is cleared
        # (kyaml rnode.go setMapInMetadata) [verified with kubectl v1.32]
        del md["annotations"]
        return
    if ann.__class__ is DupKeys:
        # GetAnnotations decodes the node into a map: of a key written twice the last wins
        ann = md["annotations"] = ann.last_wins()
    for k, v in ann.items():
        text = spelled(ann, k)  # rnode.go getMapFromMeta reads each value's text
        if text is not None:
            ann[k] = text
        elif v.__class__ is LazyError:
            ann[k] = str(v)     # its text, never decoded
        elif isinstance(v, (dict, list)):
            ann[k] = ""  # a mapping or sequence node's Value
        elif not isinstance(v, str):
            ann[k] = _scalar_text(v)
