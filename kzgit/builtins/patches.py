"""patches, patchesStrategicMerge, patchesJson6902.

PatchTransformer, PatchStrategicMergeTransformer, PatchJson6902Transformer
(api/internal/builtins/*.go, kustomize api/v0.18.0; the changes of later releases are
switched beside their rule, see :mod:`kzgit.versions`).  A ``patches`` entry is
strategic-merge (YAML documents) or JSON6902 (a list of operations), never
both; without a target each strategic-merge document patches the resource
whose id (current or any previous) equals the patch's id.
"""
from __future__ import annotations

import json

from kzgit.builtins.common import note_unmatched
from kzgit.errors import BuildError, KzgitError
from kzgit.versions import DEFAULT, V5_7, V5_8, parse
from kzgit.loader import Loader
from kzgit.resource import ResId, ResMap, Resource, split_api_version
from kzgit.resource.factory import objects_from_bytes, validate_object
from kzgit.resource.selector import Selector
from kzgit.yamlio import load_yaml11
from kzgit.yamlio.tree import DupKeys, undecodable

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple


def _patch_id(p: Dict[str, Any]) -> ResId:
    av = p.get("apiVersion")
    g, v = split_api_version(av if isinstance(av, str) else "")
    md: Dict[str, Any] = p["metadata"] if isinstance(p.get("metadata"), dict) else {}
    return ResId(g, v, str(p.get("kind") or ""), str(md.get("name") or ""), str(md.get("namespace") or ""))


def _get_by_id(m: ResMap, rid: ResId) -> Resource:
    matches = m.get_by_id_any(rid)
    if len(matches) == 1:
        return matches[0]
    what = "no matches" if not matches else "multiple matches"
    raise BuildError(f"{what} for Id {rid}; failed to find unique target for patch {rid}")


def _apply_sm(res: Resource, patch: Dict[str, Any], allow_name: bool, allow_kind: bool) -> None:
    """Resource.ApplySmPatch: merge, then restore name/kind (unless allowed) and namespace."""
    from kzgit import openapi   # start-up: only the builds that need it pay for it
    from kzgit.patch.smp import merge   # start-up: only the builds that need it pay for it
    n, ns, k = res.name, res.namespace, res.kind
    if allow_name or allow_kind:
        res.store_prev_id()
    schema = openapi.schema_for(res.api_version, res.kind)
    if res.origin is not None or res.transformations:
        # the patch sees (and may delete, with its metadata or annotations) the build
        # annotations kustomize holds during the build, as a JSON 6902 patch does
        out = _with_build_annotations(res, lambda obj: merge(obj, patch, schema))
    else:
        out = merge(res.obj, patch, schema)
    if not out:
        res.obj = {}
        return
    res.obj = out
    if not allow_kind:
        res.obj["kind"] = k
    if not allow_name:
        res.metadata["name"] = n
    if ns:
        res.metadata["namespace"] = ns
    elif isinstance(res.obj.get("metadata"), dict):
        res.obj["metadata"].pop("namespace", None)


def _apply_sm_to(m: ResMap, targets: List[Resource], patch: Dict[str, Any], allow_name: bool, allow_kind: bool) -> None:
    """resWrangler.ApplySmPatch: the patch takes each target's apiVersion, keeps its own kind."""
    patch = _labels_last_wins(patch)
    for res in targets:
        p = dict(patch)
        p["apiVersion"] = res.api_version
        _apply_sm(res, p, allow_name, allow_kind)
    m.replace_items([r for r in m.resources() if r.obj])


def _labels_last_wins(patch: Dict[str, Any]) -> Dict[str, Any]:
    """resWrangler.ApplySmPatch copies the patch with CopyMergeMetaDataFieldsFrom, which
    re-sets its labels and annotations from GetLabels/GetAnnotations, maps decoded from the
    node: of a key written twice there, the last value wins (elsewhere the first does)."""
    md = patch.get("metadata")
    if not isinstance(md, dict):
        return patch
    fixed = {f: v.last_wins() for f in ("labels", "annotations")
             if (v := md.get(f)).__class__ is DupKeys}
    if not fixed:
        return patch
    return {**patch, "metadata": {**md, **fixed}}


def _sm_docs(data: bytes, source: str) -> Optional[List[Dict[str, Any]]]:
    """RF().SliceFromBytes: the patch's documents (empty ones dropped), None when they do not
    parse as resources."""
    try:
        return _sm_objects(data, source)
    except KzgitError:
        return None


def _sm_objects(data: bytes, source: str) -> List[Dict[str, Any]]:
    """The strategic-merge patch documents of ``data``, each a resource with kind and name
    (factory.go resourcesFromRNodes → DropLocalNodes → GetValidatedMetadata)."""
    docs = objects_from_bytes(data, source, first_wins=True)
    for d in docs:
        validate_object(d, source)
    return docs


def _json_ops(data: bytes, source: str) -> Tuple[bool, List[Any]]:
    """jsonPatchFromBytes (api/internal/builtins/PatchTransformer.go): (parsed, operations).

    Text starting with ``[`` is JSON; anything else goes through yaml.YAMLToJSON, which reads
    the first YAML document only (a second ``---`` document is ignored, as kustomize ignores
    it).  jsonpatch.DecodePatch then wants a JSON array of objects, or ``null`` (a comment, an
    empty document: no operations).
    """
    if not data:
        return False, []  # "empty json patch operations"
    try:
        if data[:1] == b"[":
            # encoding/json replaces invalid UTF-8 in strings with U+FFFD
            ops = json.loads(data.decode("utf-8", "replace"))
        else:
            ops = load_yaml11(data, source)
    except (ValueError, KzgitError):
        return False, []
    if ops is None:
        return True, []
    if not isinstance(ops, list) or not all(op is None or isinstance(op, dict) for op in ops):
        return False, []
    return True, ops


def patch(m: ResMap, entry: Dict[str, Any], loader: Loader, kfile: str,
          version: Tuple[int, int, int] = parse(DEFAULT)) -> None:
    """One ``patches`` entry (PatchTransformer) as Kustomize ``version`` applies it."""
    text = (entry.get("patch") or "").strip()
    path = entry.get("path") or ""
    if not text and not path:
        raise BuildError(f"{kfile}: must specify one of patch and path in patches entry {entry}")
    if text and path:
        raise BuildError(f"{kfile}: patch and path can't be set at the same time in patches entry {entry}")
    source = path or f"inline patch in {kfile}"
    # the file's bytes as they are (Go keeps them in a string without decoding): the YAML
    # readers then decode UTF-8 or, after a byte-order mark, UTF-16
    data = loader.load(path) if path else text.encode("utf-8")
    # PatchTransformer.Config: the text must parse as exactly one of the two kinds, checked
    # when the entry is configured, whatever its target selects
    sm = _sm_docs(data, source)
    json_ok, ops = _json_ops(data, source)
    both = sm is not None and json_ok
    if version >= V5_7:
        # an effectively empty patch (comments, blank lines, `---`, `[]`, `null`) qualifies as
        # neither: both parses must give something (kustomize 31b37540e, PR #5771)
        both = both and bool(sm) and bool(ops)
    if both:
        raise BuildError(f"{source}: illegally qualifies as both an SM and JSON patch")
    if sm is None and not json_ok:
        raise BuildError(f"{kfile}: unable to parse SM or JSON patch from {source}")
    options = entry.get("options") or {}
    target = entry.get("target")
    if sm:
        allow_name, allow_kind = bool(options.get("allowNameChange")), bool(options.get("allowKindChange"))
        if target is not None:
            if len(sm) > 1:
                raise BuildError(f"Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {source}")
            sel = Selector(target, kfile)
            _apply_sm_to(m, _select(m, sel, "patches", kfile), sm[0], allow_name, allow_kind)
            return
        for i, p in enumerate(sm):
            if version < V5_7 and i and any(not r.obj for r in m.resources()):
                # a document deleted its resource, whose nil node stays in the map until the
                # entry is done: finding the next document's target reads every resource's id
                # and kustomize before 5.7 dereferences the nil node (kustomize dd08aec23,
                # PR #5859, skips it since)
                raise BuildError(f"{source}: a `$patch: delete` document followed by another in "
                                 "one patch: Kustomize before 5.7 fails here (a Go panic: invalid "
                                 "memory address or nil pointer dereference, in kyaml)")
            rid = _patch_id(p)
            try:
                res = _get_by_id(m, rid)
            except BuildError as e:
                raise BuildError(f"no resource matches strategic merge patch \"{rid}\": {e}") from None
            _apply_sm(res, p, allow_name, allow_kind)
        m.replace_items([r for r in m.resources() if r.obj])
        return
    if sm is not None and version >= V5_8:
        # Transform runs JSON 6902 only with operations it decoded, and it decodes none once
        # the text parsed as (no) strategic-merge documents: a no-op, target or not
        # (kustomize 24ea1b951 "call json6902 only when needed", PR #5990, 5.8.1)
        return
    # Transform: no strategic-merge documents (an empty one counts as none) → JSON 6902
    if target is None:
        raise BuildError(f"must specify a target for JSON patch {source}")
    selected = _select(m, Selector(target, kfile), "patches", kfile)
    if not json_ok and data and selected:
        # patchjson6902.Filter decodes the patch text again for each selected resource
        # (without jsonPatchFromBytes's emptiness check: an empty text is no operation)
        raise BuildError(f"{source}: json: cannot unmarshal the patch into a list of JSON 6902 operations")
    _json6902(m, selected, ops, source)


def _select(m: ResMap, sel: Selector, field: str, kfile: str) -> List[Resource]:
    """What ``sel`` selects; an empty selection is told to a listener (kzgit lint's
    patch-matches-nothing, :func:`kzgit.builtins.common.note_unmatched`), never an error."""
    got = sel.select(m)
    if not got:
        note_unmatched(field, kfile, sel.spec)
    return got


def _json6902(m: ResMap, selected: List[Resource], ops: List[Any], source: str) -> None:
    from kzgit.patch.json6902 import apply   # start-up: only the builds that need it pay for it
    touches = _touches_annotations(ops)
    for res in selected:
        why = undecodable(res.obj)
        if why is not None:
            # patchjson6902.Filter patches the resource's JSON (RNode.MarshalJSON decodes it
            # into a Go map): a key still written twice, a .inf, fails there
            raise BuildError(f"{res.cur_id()}: {why}")
        res.store_prev_id()
        if touches:
            # StorePreviousId writes the previous-id annotations before the patch runs
            # (api/resource/resource.go), so the patch always finds an annotations map;
            # transformJson6902 puts internal annotations back after it
            res.obj = _with_build_annotations(res, lambda obj: apply(obj, ops, source),
                                              _previous_id_annotations(res)) or {}
        else:
            res.obj = apply(res.obj, ops, source)
    m.invalidate()


def _touches_annotations(ops: List[Any]) -> bool:
    """Whether an operation's ``path`` or ``from`` reaches ``metadata.annotations`` or above."""
    for op in ops:
        if not isinstance(op, dict):
            continue
        for key in ("path", "from"):
            p = op.get(key)
            if isinstance(p, str) and (p in ("", "/", "/metadata") or p.startswith("/metadata/annotations")):
                return True
    return False


def _previous_id_annotations(res: Resource) -> Dict[str, str]:
    """The internal annotations kustomize's StorePreviousId leaves (resource.go)."""
    ids = res.prev_ids
    return {
        "internal.config.kubernetes.io/previousNames": ",".join(i.name for i in ids),
        "internal.config.kubernetes.io/previousKinds": ",".join(i.kind for i in ids),
        "internal.config.kubernetes.io/previousNamespaces": ",".join(i.namespace or "default" for i in ids),
    }


def _with_build_annotations(res: Resource, fn: Callable[[Dict[str, Any]], Optional[Dict[str, Any]]],
                            internal: Optional[Dict[str, str]] = None) -> Optional[Dict[str, Any]]:
    """A patch on a resource whose build metadata kustomize would hold as annotations.

    With ``buildMetadata`` set, kustomize keeps the origin and transformations as real
    annotations during the build (api/resource/resource.go SetOrigin, AddTransformation), so
    a patch sees them: ``add /metadata/annotations/x`` works on a resource without
    annotations, and replacing or removing the map drops them (the PatchJson6902Transformer
    then becomes the origin).  kzgit keeps them as attributes: put them in for the patch,
    take them out after.
    """
    from kzgit.resource.origin import ORIGIN, TRANSFORMATIONS, origin_text, transformations_text   # start-up: only the builds that need it pay for it
    injected: Dict[str, str] = {}
    if res.origin is not None:
        injected[ORIGIN] = origin_text(res.origin)
    if res.transformations:
        injected[TRANSFORMATIONS] = transformations_text(res.transformations)
    import copy   # start-up: only the builds that need it pay for it
    # shallow copies that keep what a SpelledDict remembers (the texts a later step reads)
    obj = copy.copy(res.obj)
    md = obj.get("metadata")
    md = copy.copy(md) if isinstance(md, dict) else {}
    ann = md.get("annotations")
    ann = copy.copy(ann) if isinstance(ann, dict) else {}
    ann.update(injected)
    ann.update(internal or {})
    md["annotations"] = ann
    obj["metadata"] = md
    out = fn(obj)
    if not out:
        return out
    out_md = out.get("metadata")
    out_ann = out_md.get("annotations") if isinstance(out_md, dict) else None
    kept = set()
    if isinstance(out_ann, dict):
        for key in injected:
            if key in out_ann:
                out_ann.pop(key)
                kept.add(key)
        for key in internal or {}:
            if out_ann.pop(key, None) is not None:
                kept.add(key)
        if not out_ann and kept and isinstance(out_md, dict):
            # kyaml ClearAnnotation drops the emptied map
            out_md.pop("annotations")
    if ORIGIN not in kept:
        res.origin = None
    if TRANSFORMATIONS not in kept:
        res.transformations = []
    return out


def patch_strategic_merge(m: ResMap, entries: List[str], loader: Loader, kfile: str,
                          on_error: Optional[Callable[[KzgitError, int, bool], KzgitError]] = None,
                          content: str = "") -> None:
    """The deprecated ``patchesStrategicMerge`` field: file paths or inline YAML strings.
    ``on_error(err, index, inline)`` may reword an error of entry ``index`` (a lead).
    ``content``: a PatchStrategicMergeTransformer's ``patches``, always patch text, never a
    path (PatchStrategicMergeTransformer.go Config: SliceFromBytes, whose error is the build's:
    ``patches: 42`` is "missing Resource metadata", not a file named 42); its index follows
    the entries'."""
    def failed(e: KzgitError, i: int, inline: bool) -> KzgitError:
        return on_error(e, i, inline) if on_error is not None else e

    patches: List[Tuple[Dict[str, Any], int, bool]] = []
    for i, e in enumerate(entries):
        docs = _sm_docs(e.encode("utf-8", "surrogateescape"), f"inline patch in {kfile}")
        inline = docs is not None
        if docs is None:
            try:
                docs = _sm_objects(loader.load(e), e)
            except KzgitError as err:
                raise failed(err, i, False) from None
        patches.extend((d, i, inline) for d in docs)
    if content:
        try:
            docs = _sm_objects(content.encode("utf-8", "surrogateescape"), f"inline patch in {kfile}")
        except KzgitError as err:
            raise failed(err, len(entries), True) from None
        patches.extend((d, len(entries), True) for d in docs)
        entries = entries + [content]
    if not patches:
        # Go's %v of the []string (an empty entry, a null item, prints as nothing)
        raise BuildError(f"{kfile}: patch appears to be empty; files=[{' '.join(entries)}]")
    for p, i, inline in patches:
        try:
            res = _get_by_id(m, _patch_id(p))
            _apply_sm_to(m, [res], p, False, False)
        except KzgitError as err:
            raise failed(err, i, inline) from None


def patch_json6902(m: ResMap, entry: Dict[str, Any], loader: Loader, kfile: str) -> None:
    """One deprecated ``patchesJson6902`` entry."""
    target = entry.get("target")
    path = entry.get("path") or ""
    text = entry.get("patch") or ""
    if target is None:
        raise BuildError(f"{kfile}: must specify a target for patch {text or path}")
    source = path or f"inline patch in {kfile}"
    data = loader.load(path) if path else text.encode("utf-8")
    json_ok, ops = _json_ops(data.strip(), source)
    if not json_ok:
        raise BuildError(f"{source}: unable to parse JSON patch operations")
    if not ops:
        # PatchJson6902Transformer.Config: "patch appears to be empty"
        raise BuildError(f"{source}: patch appears to be empty")
    _json6902(m, _select(m, Selector(target, kfile), "patchesJson6902", kfile), ops, source)
