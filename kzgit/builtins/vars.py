"""The ``vars:`` field: ``$(NAME)`` references filled from resource fields.

::

    vars:
    - name: SERVICE_NAME
      objref: {kind: Service, name: web, apiVersion: v1}
      fieldref: {fieldPath: metadata.name}     # the default

Two phases, as in kustomize (api/internal/accumulator/resaccumulator.go):

1. per kustomization level, after its transformers, :meth:`VarSet.merge_vars`
   binds each var to the one resource its ``objref`` names (GVK and name
   exactly, namespace too when given; current or any previous id) and adds it
   to the set (a duplicate name is an error);
2. once, at the end of the build, :func:`resolve_vars` reads every var's value
   from the *final* bound resource and substitutes ``$(NAME)`` in strings at
   the var-reference field specs (api/filters/refvar).
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from kzgit.errors import BuildError
from kzgit.resource import Gvk, ResId, ResMap, Resource, split_api_version
from kzgit.builtins.fieldpath import (
    MISSING, FieldPathError, Slot, convert_slice_index, lookup, smarter_path_splitter, walk_fieldspec,
)
from kzgit.yamlio.tree import spelled

__all__ = ["Var", "VarSet", "resolve_vars", "do_replacements"]

FIELD = "vars"
DEFAULT_FIELD_PATH = "metadata.name"


class Var:
    """One entry of ``vars:``, defaulted as api/types/var.go ``Defaulting`` does."""

    __slots__ = ("name", "group", "version", "kind", "obj_name", "namespace", "field_path", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise BuildError("vars: each entry must be a mapping")
        self.raw = raw
        self.name = str(raw.get("name") or "")
        objref = raw.get("objref") or {}
        if not isinstance(objref, Mapping):
            objref = {}

        def s(k: str) -> str:
            v = objref.get(k)
            return "" if v is None else str(v)
        self.group, self.version, self.kind = s("group"), s("version"), s("kind")
        api_version = s("apiVersion")
        if api_version:
            # var.go Target.GVK: apiVersion overrides group/version when it parses.
            parts = api_version.split("/")
            if len(parts) == 2:
                self.group, self.version = parts
            elif len(parts) == 1:
                self.version = parts[0]
        self.obj_name = s("name")
        self.namespace = s("namespace")
        fieldref = raw.get("fieldref") or {}
        fp = fieldref.get("fieldPath") if isinstance(fieldref, Mapping) else None
        self.field_path = str(fp) if fp else DEFAULT_FIELD_PATH

    @property
    def target_id(self) -> ResId:
        return ResId(self.group, self.version, self.kind, self.obj_name, self.namespace)

    def __str__(self) -> str:
        return self.go_string()

    def go_string(self, gvk_parsed: bool = True, defaulted: bool = True) -> str:
        """Go's ``%v`` of types.Var as kustomize's messages show it:
        ``{NAME Kind.version.group {fieldPath}}`` (the objref prints as its
        promoted ``Gvk.String()``).  Before ``Defaulting`` the apiVersion is not
        yet split into group/version and the fieldPath is not defaulted.
        """
        if gvk_parsed:
            gvk = Gvk(self.group, self.version, self.kind)
        else:
            raw_ref = self.raw.get("objref")
            objref: Mapping[str, Any] = raw_ref if isinstance(raw_ref, Mapping) else {}
            gvk = Gvk(str(objref.get("group") or ""), str(objref.get("version") or ""), self.kind)
        raw_fp = self.raw.get("fieldref")
        fp = self.field_path if defaulted else (
            str(raw_fp.get("fieldPath") or "") if isinstance(raw_fp, Mapping) else "")
        return f"{{{self.name} {gvk} {{{fp}}}}}"


class VarSet:
    """The vars accumulated so far, each bound to the resource it reads.

    kustomize records the binding as a var name on the resource
    (``Resource.AppendRefVarName``); kzgit keeps it here, by object identity,
    with the id the resource had when it was bound as a fallback for
    resources the pipeline replaced by copies.
    """

    def __init__(self) -> None:
        self._vars: Dict[str, Var] = {}
        self._bound: Dict[str, Tuple[Resource, ResId]] = {}

    def __len__(self) -> int:
        return len(self._vars)

    def __contains__(self, name: str) -> bool:
        return name in self._vars

    def names(self) -> List[str]:
        return sorted(self._vars)

    def vars(self) -> List[Var]:
        """Vars sorted by name (VarSet.AsSlice)."""
        return [self._vars[n] for n in sorted(self._vars)]

    def add(self, var: Var) -> None:
        """VarSet.Merge: a second var of the same name is an error."""
        if var.name in self._vars:
            raise BuildError(f"var '{var.name}' already encountered")
        self._vars[var.name] = var

    def merge_set(self, other: "VarSet") -> None:
        """Merge a sub-kustomization's set (ResAccumulator.MergeAccumulator)."""
        for v in other._vars.values():
            self.add(v)
        for name, b in other._bound.items():
            self._bound.setdefault(name, b)

    def merge_vars(self, resmap: ResMap, incoming: Iterable[Mapping[str, Any]], source: str = "") -> None:
        """ResAccumulator.MergeVars: bind then add this level's ``vars:``."""
        parsed = [v if isinstance(v, Var) else Var(v) for v in incoming]
        # kusttarget.go wraps MergeVars errors: "merging vars %v" of the raw list.
        prefix = "merging vars [" + " ".join(v.go_string(False, False) for v in parsed) + "]: "
        for v in parsed:
            tid = v.target_id
            if tid.namespace:
                # The objref's Gvk never knows it is cluster-scoped (its
                # isClusterScoped is unexported and unset, api/types/var.go), so
                # a namespaced objref never matches a cluster-scoped resource,
                # whose effective namespace is the sentinel (resid.go Equals).
                want_ns = tid.namespace

                def match(i: ResId, t: ResId = tid, ns: str = want_ns) -> bool:
                    return (i.name, i.gvk) == (t.name, t.gvk) and i.effective_namespace() == ns
            else:
                # No namespace: GvknEquals, a wildcard on the namespace.
                def match(i: ResId, t: ResId = tid, ns: str = "") -> bool:  # ns: unused
                    return (i.name, i.gvk) == (t.name, t.gvk)
            matched = resmap.get_matching_any_id(match)
            if len(matched) > 1:
                raise BuildError(f"{prefix}found {len(matched)} resId matches for var "
                                 f"{v.go_string(True, False)} (unable to disambiguate)")
            if len(matched) == 1:
                self._bound.setdefault(v.name, (matched[0], matched[0].cur_id()))
        for v in parsed:
            try:
                self.add(v)
            except BuildError as e:
                raise BuildError(f"{prefix}{e}") from None

    # Names the pipeline (kzgit/builder/pipeline.py) calls.
    def merge(self, incoming: Iterable[Mapping[str, Any]], resmap: ResMap, source: str = "") -> None:
        """Alias of :meth:`merge_vars` with the pipeline's argument order."""
        self.merge_vars(resmap, incoming, source)

    def absorb(self, other: "VarSet") -> None:
        """Alias of :meth:`merge_set` (MergeAccumulator: duplicates are errors)."""
        self.merge_set(other)

    def bound_resource(self, resmap: ResMap, name: str) -> Optional[Resource]:
        b = self._bound.get(name)
        if b is None:
            return None
        res, rid = b
        for r in resmap.resources():
            if r is res:
                return r
        for r in resmap.resources():
            if any(i.key() == rid.key() for i in r.all_ids()):
                return r
        return None


def _var_value(res: Resource, var: Var) -> Any:
    """rnode.go GetFieldValue: maps and lists come back whole, scalars typed."""
    parts = convert_slice_index(smarter_path_splitter(var.field_path, "."))
    try:
        v = lookup(res.obj, parts)
    except FieldPathError:
        v = MISSING
    if v is MISSING:
        raise BuildError(f"field specified in var '{var}' not found in corresponding resource")
    text = _source_text(res.obj, parts, v)
    if v is None:
        return "null" if text is None else text  # default branch: yn.Value of a null node
    if text is not None and not isinstance(v, (bool, float)):
        if isinstance(v, str):
            return text  # a timestamp: the default branch gives the node's text
        # an int: strconv.Atoi of the text, decimal only (010 is 10, 0x10 an error)
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise BuildError(f'strconv.Atoi: parsing "{text}": invalid syntax')
        return int(text, 10)
    return v


def _source_text(obj: Any, parts: List[str], v: Any) -> Optional[str]:
    """The text the loader kept for the map field at ``parts`` (see SpelledDict)."""
    if isinstance(v, (dict, list)) or not parts:
        return None
    try:
        parent = lookup(obj, parts[:-1])
    except FieldPathError:
        return None
    key = parts[-1].strip()
    if isinstance(parent, dict) and key in parent and parent[key] is v:
        return spelled(parent, key)
    return None


def resolve_vars(resmap: ResMap, varset: VarSet, fieldspec_rows: Sequence[Sequence[Any]]) -> List[str]:
    """ResAccumulator.ResolveVars: substitute every bound var; return warnings.

    ``fieldspec_rows`` are ``[group, version, kind, path, create]`` rows
    (defaults from ``kzgit.konfig.default_fieldspec_rows("varReference")``
    plus ``configurations:``).
    """
    values: Dict[str, Any] = {}
    for var in varset.vars():
        res = varset.bound_resource(resmap, var.name)
        if res is None:
            raise BuildError(f"var '{var}' cannot be mapped to a field in the set of known resources")
        values[var.name] = _var_value(res, var)
    if not values:
        return []
    counts: Dict[str, int] = {}

    def mapping(key: str) -> Any:
        if key in values:
            v = values[key]
            if isinstance(v, (str, int, float, bool)):
                counts[key] = counts.get(key, 0) + 1
                return v
        return f"$({key})"

    for res in resmap.resources():
        for row in fieldspec_rows:
            group, version, kind, path = (str(x or "") for x in row[:4])
            create = bool(row[4]) if len(row) > 4 else False
            if kind and kind != res.kind:
                continue
            g, v = split_api_version(res.api_version)
            if (group and group != g) or (version and version != v):
                continue
            try:
                walk_fieldspec(res.obj, path, lambda slot: _set(slot, mapping), create, None)
            except (FieldPathError, BuildError) as e:
                raise BuildError(f"considering field '{path}' of object {res.cur_id()}: {e}") from None
    resmap.invalidate()
    unused = [n for n in values if n not in counts]
    if unused:
        # refvartransformer.go logs this with log.Printf; map order is random there.
        return [f"well-defined vars that were never replaced: {','.join(sorted(unused))}"]
    return []


def _set(slot: Slot, mapping: Any) -> None:
    """refvar.go Filter.set: strings, string values of a map, or a list of strings."""
    container, key = slot
    node = container[key]
    if node is None:
        return
    if isinstance(node, str):
        container[key] = do_replacements(node, mapping)
    elif isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                raise BuildError(f"invalid map key: value='{k}', tag='!!{type(k).__name__}'")
            if isinstance(v, str):
                node[k] = do_replacements(v, mapping)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            if not isinstance(item, str):
                raise BuildError("invalid value type expect a string")
            node[i] = do_replacements(item, mapping)


def _go_format(v: Any) -> str:
    """Go ``fmt.Sprintf("%v", v)`` for the primitive values a var may hold."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        # fmt %v: shortest digits, %f form for exponents in [-4, 21)
        if v == int(v) and abs(v) < 1e21:
            return str(int(v))
        return repr(v)
    return str(v)


def do_replacements(text: str, mapping: Any) -> Any:
    """api/filters/refvar/expand.go DoReplacements.

    ``$(NAME)`` is replaced; if the whole string is one reference the mapped
    value keeps its type.  ``$$`` is an escaped ``$``; an unclosed ``$(`` and a
    lone ``$`` stay literal.
    """
    buf: List[str] = []
    checkpoint = 0
    cursor = 0
    n = len(text)
    while cursor < n:
        if text[cursor] == "$" and cursor + 1 < n:
            buf.append(text[checkpoint:cursor])
            read, is_var, advance = _try_read_variable_name(text[cursor + 1:])
            if is_var:
                mapped = mapping(read)
                if text == f"$({read})":
                    return mapped
                buf.append(_go_format(mapped))
            else:
                buf.append(read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(buf) + text[checkpoint:]


def _try_read_variable_name(s: str) -> Tuple[str, bool, int]:
    if s[0] == "$":
        return s[0:1], False, 1
    if s[0] == "(":
        for i in range(1, len(s)):
            if s[i] == ")":
                return s[1:i], True, i + 1
        return "$(", False, 1
    return "$" + s[0], False, 1
