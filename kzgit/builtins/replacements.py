"""The ``replacements:`` field: copy a value from one resource into others.

::

    replacements:
    - source:                    # exactly one resource must match
        kind: ConfigMap          # group, version, kind, name, namespace
        name: env
        fieldPath: data.HOST     # default metadata.name
        options: {delimiter: ".", index: 0}
      targets:
      - select: {kind: Deployment, labelSelector: "app=web"}
        reject: [{name: legacy}]
        fieldPaths: [spec.template.spec.containers.[name=web].env.[name=HOST].value]
        options: {delimiter: ":", index: 1, create: true}

Reproduces api/filters/replacement/replacement.go (kustomize api/v0.18.0).
Selection matches a resource's current or any previous id; selectors are
exact strings (not regexes), but list parts ``[k=v]`` of a *target* path are
unanchored regexes (kyaml/yaml/match.go).  A scalar copied into a scalar
target keeps the target's type; a created field is typed from the copied text.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from kzgit.builtins.common import note_unmatched
from kzgit.errors import BuildError
from kzgit.kustomization import schema
from kzgit.yamlio import load_yaml11
from kzgit.yamlio.gostruct import GoDecodeError, ListOf, decode_json
from kzgit.resource import ResId, ResMap, Resource
from kzgit.resource.labels import parse_label_selector
from kzgit.versions import DEFAULT, V5_7, V5_8, parse
from kzgit.resource.selector import anchored, metadata_texts
from kzgit.yamlio.gostruct import go_json_kind
from kzgit.yamlio.tree import SharedStr, SpelledDict, canonical_text, node_kind, share_update, spelled
from kzgit.builtins.fieldpath import (
    CREATED, MISSING, CopySlot, FieldPathError, Scalar, Slot, decode, is_scalar,
    lookup, path_match, scalar_of, smarter_path_splitter,
)

__all__ = ["apply_replacements", "resolve_entries", "DEFAULT_FIELD_PATH"]

FIELD = "replacements"
DEFAULT_FIELD_PATH = "metadata.name"  # api/types/replacement.go DefaultReplacementFieldPath


class _Value:
    """The source node: a Python value, or for scalars its go-yaml (text, tag)."""

    def __init__(self, value: Any, text: Optional[str] = None) -> None:
        self.value = value
        self.scalar: Optional[Scalar] = scalar_of(value) if is_scalar(value) else None
        # The source text when the loader kept it (1.10, 010, a date): kyaml copies the
        # node's Value into string targets and delimited values (see SpelledDict).
        self.spelled = text is not None and self.scalar is not None
        if self.spelled:
            assert self.scalar is not None
            self.scalar = Scalar(text, self.scalar.tag)  # type: ignore[arg-type]

    @classmethod
    def untagged(cls, text: str) -> "_Value":
        """yaml.NewScalarRNode(text): a scalar node without a tag (``sourceValue``), whose type
        a new field resolves from its text and an existing field keeps."""
        v = cls(decode(Scalar(text, "")))
        v.scalar, v.spelled = Scalar(text, ""), True
        return v

    @property
    def kind(self) -> str:
        return node_kind(self.value)

    def text(self) -> str:
        """go-yaml ``Value`` of the node: empty for maps and sequences."""
        return self.scalar.text if self.scalar is not None else ""

    def materialize(self) -> Any:
        """The node as a Python value (whole-node copy, tag kept)."""
        if self.scalar is not None:
            return self.value if self.spelled else decode(self.scalar)
        return copy.deepcopy(self.value)


def _opts(d: Any) -> Dict[str, Any]:
    return d if isinstance(d, dict) else {}


def _resid_of(sel: Mapping[str, Any]) -> ResId:
    def s(k: str) -> str:
        v = sel.get(k)
        return "" if v is None else str(v)
    return ResId(s("group"), s("version"), s("kind"), s("name"), s("namespace"))


def _options_string(o: Optional[Mapping[str, Any]]) -> str:
    """api/types/replacement.go FieldOptions.String."""
    if not o or (not o.get("delimiter") and not o.get("create")):
        return ""
    return f"{o.get('delimiter') or ''}({_index(o)}), create={'true' if o.get('create') else 'false'}"


def _source_string(src: Mapping[str, Any]) -> str:
    """api/types/replacement.go SourceSelector.String: ``<resid>[:<fieldPath>][:<options>]``."""
    parts = [str(_resid_of(src))]
    if src.get("fieldPath"):
        parts.append(str(src["fieldPath"]))
    o = _options_string(src.get("options"))
    if o:
        parts.append(o)
    return ":".join(parts)


def _is_selected_by(rid: ResId, sel: ResId) -> bool:
    """kyaml resid.ResId.IsSelectedBy: exact strings, empty selector fields match."""
    return rid.is_selected_by(sel)


# reflect.Kind names of what encoding/json decodes into an interface{}
_GO_KIND = {str: "string", bool: "bool", int: "float64", float: "float64", type(None): "invalid"}


def resolve_entries(entries: List[Any], load: Callable[[str], bytes],
                    version: Tuple[int, int, int] = parse(DEFAULT)) -> List[Any]:
    """ReplacementTransformerPlugin.Config (api/internal/builtins/ReplacementTransformer.go):
    the ``replacements:`` entries (decoded ``types.ReplacementField``) with each ``path:``
    entry replaced by the replacements its file holds.

    The file is read as sigs.k8s.io/yaml.Unmarshal reads it: its first document, a list of
    replacements or one, decoded into ``types.Replacement`` (unknown fields ignored, a value of
    the wrong type an error).  An entry giving both a path and a source or targets is an error.
    """
    out: List[Any] = []
    for e in entries:
        e = e if isinstance(e, dict) else {}
        path = e.get("path")
        if not path:
            out.append({k: v for k, v in e.items() if k != "path"})
            continue
        if e.get("source") is not None or e.get("targets"):
            raise BuildError("cannot specify both path and inline replacement")
        doc = load_yaml11(load(path), path)
        if not isinstance(doc, (list, dict)):
            kind = _GO_KIND.get(type(doc), "string")   # a date is a string in JSON
            raise BuildError(f"unsupported replacement type encountered within replacement path: {kind}")
        try:
            replacement = schema(version)["Replacement"]   # the release's fields (sourceValue)
            decoded = decode_json(doc, ListOf(replacement) if isinstance(doc, list) else replacement,
                                  to_target=True)
        except GoDecodeError as err:
            raise BuildError(f"error unmarshaling JSON: while decoding JSON: {err}") from None
        out.extend(decoded if isinstance(doc, list) else [decoded])
    return out


def apply_replacements(resmap: ResMap, replacements: List[Dict[str, Any]], source: str,
                       version: Tuple[int, int, int] = parse(DEFAULT)) -> None:
    """Apply kustomization ``replacements`` (already loaded from ``path:``) to ``resmap`` as
    Kustomize ``version`` does.

    ``source`` names the kustomization file for error messages.
    """
    for r in replacements:
        try:
            unmatched = _apply_one(resmap, r, version)
        except BuildError as e:
            raise BuildError(f"{source}: {FIELD}: {e}") from None
        if unmatched:
            for select in unmatched:
                note_unmatched(FIELD, source, select)
    resmap.invalidate()


def _apply_one(resmap: ResMap, r: Mapping[str, Any], version: Tuple[int, int, int]) -> List[Any]:
    """Apply one replacement; the ``select`` of each target that selected no resource
    (kustomize passes silently there: kzgit lint's replacement-matches-nothing)."""
    if not isinstance(r, Mapping):
        raise BuildError("replacements must specify a source and at least one target")
    src = r.get("source")
    targets = r.get("targets")
    # sourceValue (5.7, kustomize 6c2797001): a static value instead of a source resource; a
    # release before it has none (its kustomization refuses the field, a path: file drops it)
    static = r.get("sourceValue") if version >= V5_7 else None
    # kustomize re-marshals the field into the plugin's config with
    # `omitempty`, so an empty targets list is the same as none.
    if (src is None and static is None) or not targets:
        raise BuildError("replacements must specify a source and at least one target")
    if static is not None and src is not None:
        raise BuildError("value and resource selectors are mutually exclusive")
    if static is not None:
        value = _Value.untagged(str(static))
    elif not isinstance(src, Mapping):
        raise BuildError("replacement source must be a mapping")
    else:
        value = _get_replacement(resmap, src)
    if not isinstance(targets, list):
        raise BuildError("replacement targets must be a list")
    unmatched = []
    for t in targets:
        t = t if isinstance(t, Mapping) else {}
        if not _apply_target(resmap, value, t, version):
            unmatched.append(t.get("select"))
    return unmatched


# --------------------------------------------------------------------------- source
def _get_replacement(resmap: ResMap, src: Mapping[str, Any]) -> _Value:
    res = _select_source(resmap, src)
    field_path = str(src.get("fieldPath") or DEFAULT_FIELD_PATH)
    parts = smarter_path_splitter(field_path, ".")
    try:
        node = lookup(res.obj, parts)
    except FieldPathError as e:
        raise BuildError(f"error looking up replacement source: {e}") from None
    if _nil_or_empty(node):
        raise BuildError(f"fieldPath `{field_path}` is missing for replacement source {_resid_of(src)}")
    text = None
    if is_scalar(node) and parts:
        # a map field: its source text, if the loader kept one
        parent = lookup(res.obj, parts[:-1])
        if isinstance(parent, dict) and parent.get(parts[-1].strip(), MISSING) is node:
            text = spelled(parent, parts[-1].strip())
    return _refine(_opts(src.get("options")), _Value(node, text))


def _nil_or_empty(node: Any) -> bool:
    """kyaml RNode.IsNilOrEmpty: missing, null, ``{}`` or ``[]`` (not ``""``)."""
    return node is MISSING or node is None or node == {} or node == []


def _select_source(resmap: ResMap, src: Mapping[str, Any]) -> Resource:
    sel = _resid_of(src)
    matches: List[Resource] = []
    for res in resmap.resources():
        if any(_is_selected_by(i, sel) for i in res.all_ids()):
            if matches:
                raise BuildError(f"multiple matches for selector {_source_string(src)}")
            matches.append(res)
    if not matches:
        raise BuildError(f"nothing selected by {_source_string(src)}")
    return matches[0]


def _refine(options: Mapping[str, Any], v: _Value) -> _Value:
    """replacement.go getRefinedValue: pick ``options.index`` of the split source."""
    delim = options.get("delimiter")
    if not delim:
        return v
    if v.scalar is None:
        raise BuildError("delimiter option can only be used with scalar nodes")
    parts = v.scalar.text.split(str(delim))
    idx = _index(options)
    if idx >= len(parts) or idx < 0:
        raise BuildError(f"options.index {idx} is out of bounds for value {v.scalar.text}")
    out = _Value(v.value)
    out.scalar = Scalar(parts[idx], v.scalar.tag)
    return out


# --------------------------------------------------------------------------- targets
def _apply_target(resmap: ResMap, value: _Value, t: Mapping[str, Any],
                  version: Tuple[int, int, int]) -> bool:
    """Copy ``value`` into the resources the target selects; whether it selected any."""
    select = t.get("select")
    if select is None:
        raise BuildError("target must specify resources to select")
    select = select if isinstance(select, Mapping) else {}
    rejects = [x for x in (t.get("reject") or []) if isinstance(x, Mapping)]
    field_paths = t.get("fieldPaths") or [DEFAULT_FIELD_PATH]
    options = _opts(t.get("options"))
    sel_id = _resid_of(select)
    reject_ids = [_resid_of(x) for x in rejects]
    selected = False
    if version >= V5_8:
        # select and reject are anchored regular expressions, the namespace compared as
        # written (kustomize 7c04cbb23, PR #5863: types.NewTargetSelectorRegex)
        selects = _regex_selector(sel_id)
        rejected = [_regex_selector(r) for r in reject_ids if r != ResId("", "", "", "", "")]
        for res in resmap.resources():
            if not _select_by_anno_and_label(res, select, rejects):
                continue
            ids = res.all_ids()
            if any(r(i) for r in rejected for i in ids):
                continue
            if any(selects(i) for i in ids):
                selected = True
                _copy_value_to_target(res, value, [str(p) for p in field_paths], options, version)
        return selected
    for res in resmap.resources():
        if not _select_by_anno_and_label(res, select, rejects):
            continue
        ids = res.all_ids()
        if any(_is_selected_by(i, sel_id) for i in ids) and not _contains_reject_id(reject_ids, ids):
            selected = True
            _copy_value_to_target(res, value, [str(p) for p in field_paths], options, version)
    return selected


def _regex_selector(sel: ResId) -> Callable[[ResId], bool]:
    """types.SelectorRegex: each non-empty field of ``sel`` an anchored regular expression that
    the id's field (its namespace as written: no "default" for none) must match."""
    try:
        fields = [(f, anchored(getattr(sel, f), f))
                  for f in ("group", "version", "kind", "name", "namespace")]
    except BuildError as e:
        raise BuildError(f"error creating target selector: {e}") from None
    wanted = [(f, rx) for f, rx in fields if rx is not None]
    return lambda rid: all(rx.test(getattr(rid, f)) for f, rx in wanted)


def _select_by_anno_and_label(res: Resource, select: Mapping[str, Any],
                              rejects: List[Mapping[str, Any]]) -> bool:
    # replacement.go selectByAnnoAndLabel: a reject's label/annotation part
    # rejects on its own, independent of the reject's id part.
    if not _matches_anno_and_label(res, select):
        return False
    for rj in rejects:
        if not rj.get("annotationSelector") and not rj.get("labelSelector"):
            continue
        if _matches_anno_and_label(res, rj):
            return False
    return True


def _metadata_map(res: Resource, field: str) -> Mapping[str, Any]:
    # Read without Resource.labels(), which would add an empty metadata.
    md = res.obj.get("metadata")
    v = md.get(field) if isinstance(md, dict) else None
    return v if isinstance(v, dict) else {}


def _matches_anno_and_label(res: Resource, sel: Mapping[str, Any]) -> bool:
    # matchesAnnoAndLabelSelector parses (and may fail on) both before combining them
    anno = label_selector_matches(str(sel.get("annotationSelector") or ""), _metadata_map(res, "annotations"))
    label = label_selector_matches(str(sel.get("labelSelector") or ""), _metadata_map(res, "labels"))
    return anno and label


def _contains_reject_id(reject_ids: List[ResId], ids: List[ResId]) -> bool:
    for r in reject_ids:
        if r == ResId("", "", "", "", ""):
            continue
        if any(_is_selected_by(i, r) for i in ids):
            return True
    return False


def _retrieval_error(fp: str, create: bool) -> str:
    if create:
        return f'unable to find or create field "{fp}" in replacement target'
    return f'unable to find field "{fp}" in replacement target'


def _copy_value_to_target(res: Resource, value: _Value, field_paths: List[str],
                          options: Mapping[str, Any], version: Tuple[int, int, int]) -> None:
    create = bool(options.get("create"))
    into_scalars = version >= V5_8
    for fp in field_paths:
        if create and not into_scalars and fp.startswith("metadata.annotations."):
            md = res.obj.get("metadata")
            if isinstance(md, dict) and "annotations" in md and md["annotations"] is None:
                # up to 5.7.1, kio.ByteReader set (and later cleared) its index annotations
                # on every resource read, which turned a null metadata.annotations into a
                # mapping: a created annotation lands there [verified with kubectl 1.32,
                # 1.33 and 1.35; 1.36 leaves the null, so the value goes nowhere]
                md["annotations"] = {}
        if into_scalars:
            # 5.8: a path may continue inside a scalar holding JSON or YAML (kzgit.builtins.structured)
            from kzgit.builtins.structured import set_in_structured_data   # start-up: 5.8 only
            if set_in_structured_data(res.obj, value, fp, value.kind if create else None):
                continue
        try:
            slots = path_match(res.obj, smarter_path_splitter(fp, "."), value.kind if create else None,
                               None, into_scalars)
        except FieldPathError as e:
            raise BuildError(f"{_retrieval_error(fp, create)}: {e}") from None
        if not slots:
            raise BuildError(_retrieval_error(fp, create))
        for slot in slots:
            if isinstance(slot, CopySlot):
                # kyaml sets the node of a parsed copy, never written back: only the checks
                # setFieldValue makes before setting can fail
                if options.get("delimiter") and not is_scalar(slot[0][slot[1]]):
                    raise BuildError("delimiter option can only be used with scalar nodes")
                continue
            _set_field_value(options, slot, value, res.obj)


def _set_field_value(options: Mapping[str, Any], slot: Slot, value: _Value, root: Any = None) -> None:
    """replacement.go setFieldValue; ``root`` is the target resource (for shared nodes)."""
    container, key = slot
    target = container[key]
    shared = target if target.__class__ is SharedStr else None
    new_text: Optional[str] = None
    delim = options.get("delimiter")
    if delim:
        delim = str(delim)
        if not is_scalar(target):
            raise BuildError("delimiter option can only be used with scalar nodes")
        own = spelled(container, key) if isinstance(container, dict) else None
        tv = (scalar_of(target).text if own is None else own).split(delim)
        v = value.text()
        idx = _index(options)
        if idx < 0:
            tv = [v, *tv]
        elif idx >= len(tv):
            tv.append(v)
        else:
            tv[idx] = v
        new_text = delim.join(tv)
    if is_scalar(target):
        # Only the text is copied: the target keeps its tag, so an int
        # written into a string field stays a string ("leave any type intact").
        text = new_text if new_text is not None else value.text()
        tag = "" if target is CREATED else scalar_of(target).tag
        if target is CREATED and new_text is None and value.spelled:
            container[key] = value.materialize()  # a new node: the source's, tag and all
        else:
            container[key] = decode(Scalar(text, tag))
        if shared is not None and root is not None:
            # the node's value is set in place: places sharing it change too (SharedStr)
            container[key] = share_update(root, shared, container[key])
        if isinstance(container, SpelledDict):
            # the new node's text, for the annotations' final re-set
            if canonical_text(container[key]) != text:
                container.spelling[key] = (text, container[key])
            else:
                container.spelling.pop(key, None)
    else:
        if new_text is not None and value.scalar is not None:
            container[key] = decode(Scalar(new_text, value.scalar.tag))
        else:
            container[key] = value.materialize()


def _index(options: Mapping[str, Any]) -> int:
    """``options.index`` as encoding/json decodes it into FieldOptions.Index (an int)."""
    v = options.get("index")
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise BuildError(f"json: cannot unmarshal {go_json_kind(v)} into Go struct field FieldOptions.index of type int")
    return int(v)


# --------------------------------------------------------------------------- selectors
def label_selector_matches(selector: str, labels: Mapping[str, Any]) -> bool:
    """k8s.io/apimachinery labels.Parse(selector).Matches(labels) (kyaml MatchesLabelSelector),
    parsed by :func:`kzgit.resource.selector.parse_label_selector`; values are compared as the
    text of each value, as kyaml's GetLabels reads them (:func:`metadata_texts`)."""
    return parse_label_selector(selector)(metadata_texts(labels))
