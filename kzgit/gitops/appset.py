"""Argo CD ApplicationSets: the list and git-directories generators, expanded offline.

Sources (argoproj/argo-cd, ``master`` of 2026-08):

- ``applicationset/generators/list.go``: each element a parameter set; without
  ``goTemplate`` every value must be a string (``values`` a map of strings, flattened as
  ``values.<key>``).
- ``applicationset/generators/git.go`` (directories): every directory of the repository
  (``reposerver/repository/repository.go`` GetGitDirectories: the walk's order, hidden
  directories skipped) matched by ``path.Match`` against ``directories[].path``; one matching an ``exclude: true``
  entry is left out whatever else includes it (``filterApps``); parameters ``path``,
  ``path.basename``, ``path.basenameNormalized`` (``utils.SanitizeName``), ``path[N]``, or
  with ``goTemplate`` a ``path`` map (``path``, ``basename``, ``basenameNormalized``,
  ``segments``); ``pathParamPrefix``.
- ``applicationset/generators/git.go`` (files): the files ``git ls-files -- PATTERN`` lists
  (wildcards cross ``/``), excludes removed, sorted; each a YAML/JSON object or a list of them,
  flattened to ``a.b`` keys (``fmt`` ``%v`` values) without ``goTemplate``; ``path``,
  ``path.basename``, ``path.filename``, ``path.basenameNormalized``,
  ``path.filenameNormalized``, ``path[N]`` (or the ``path`` map with ``segments``).
- ``applicationset/utils/utils.go`` ``Render``: without ``goTemplate``, fasttemplate with
  ``{{`` ``}}``, the tag trimmed, an unknown tag left as written; with ``goTemplate``, Go's
  text/template with Sprig's functions (:mod:`kzgit.gitops.gotemplate`) and
  ``goTemplateOptions``.
- ``applicationset/controllers/template/patch.go``: ``templatePatch``, rendered as the template
  is, merged into each Application.

- ``applicationset/generators/matrix.go``: two of those, the second reading each parameter set
  of the first, every pair merged; ``merge.go``: sets overridden by merge key.
- ``generator_spec_processor.go`` ``mergeGeneratorTemplate``: a generator's own template over
  the ApplicationSet's; ``Transform``: a generator's ``selector`` over its flattened parameters.

Anything else (the ``clusters``, ``scmProvider``, ``pullRequest``, ``clusterDecisionResource``
and ``plugin`` generators, a template function whose result depends
on the clock, chance or the network, named templates) leaves the ApplicationSet listed as not
expanded, with why.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.gitops.govalues import go_print
from kzgit.gitops.sprig import sanitize_name
from kzgit.gitops.model import ARGOCD, App, Doc, as_dict

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
    from kzgit.gitops.catalog import Catalog

_CLUSTER_GENERATORS = ("clusters", "clusterDecisionResource")
_OTHER_GENERATORS = ("matrix", "merge", "scmProvider", "pullRequest", "plugin")   # deeper


class NotExpanded(Exception):
    """Why kzgit does not expand an ApplicationSet (its ``str()``): listed, with why."""


class Refused(NotExpanded):
    """What Argo CD refuses too (a malformed spec, a template or a file that does not parse):
    the ApplicationSet controller generates nothing and sets its ErrorOccurred condition
    (applicationset_controller.go); one finding at the ApplicationSet."""


def expand(catalog: Catalog, appset: App) -> List[App]:
    """The Applications ``appset`` generates; none (and ``appset.reason``) when kzgit cannot."""
    try:
        apps = _expand(catalog, appset)
    except NotExpanded as e:
        appset.expanded = False
        appset.reason = str(e)
        appset.renderer = "not expanded"
        if isinstance(e, Refused):
            appset.error = f"{appset.file}:{appset.line}: {e}"
        return []
    appset.expanded = True
    appset.renderer = f"applicationset: {len(apps)} applications"
    return apps


def _expand(catalog: Catalog, appset: App) -> List[App]:
    spec = appset.obj.get("spec")
    if not isinstance(spec, dict):
        raise Refused("malformed: spec is missing")
    go = spec.get("goTemplate") is True
    options = spec.get("goTemplateOptions") or []
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise Refused("malformed: spec.goTemplateOptions is not a list of strings")
    patch = spec.get("templatePatch")
    if patch is not None and not isinstance(patch, str):
        raise Refused("malformed: spec.templatePatch is not a string")
    template = spec.get("template")
    if not isinstance(template, dict):
        raise Refused("malformed: spec.template is missing")
    gens = spec.get("generators")
    if not isinstance(gens, list) or not gens:
        raise Refused("malformed: spec.generators is missing")
    params: List[Tuple[Dict[str, Any], Dict[str, Any]]] = []
    for g in gens:
        own = _own_template(g)
        # generator_spec_processor.go mergeGeneratorTemplate: the generator's own template,
        # its empty fields filled from the ApplicationSet's (mergo.Merge without override)
        merged = _filled(own, template) if own else template
        params.extend((merged, p) for p in _generator_params(catalog, g, go, 0, options))
    out: List[App] = []
    for tmpl, p in params:
        rendered = as_dict(_render(tmpl, p, go, options))
        if patch:
            rendered = _patched(rendered, _string(patch, p, go, options))
        meta: Dict[str, Any] = dict(as_dict(rendered.get("metadata")))
        meta.setdefault("namespace", appset.namespace)
        obj: Dict[str, Any] = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                               "metadata": meta, "spec": as_dict(rendered.get("spec"))}
        doc = Doc(obj, appset.file, appset.line, appset.doc.text)
        child = App(ARGOCD, obj, doc, parent=appset.parent)
        child.appset = str(appset.extra.setdefault("ref", f"#{id(appset)}"))
        out.append(child)
    return out


def _selector(spec: Any) -> Callable[[Dict[str, str]], bool]:
    """A generator's ``selector`` over its flattened parameters: applicationset/utils
    selector.go ``LabelSelectorAsSelector`` (label values unrestricted; ``matchLabels`` are
    equalities, ``matchExpressions`` In, NotIn, Exists, DoesNotExist), each requirement
    ``Matches`` as labels.Requirement does."""
    if not isinstance(spec, dict):
        raise Refused("error parsing label selector: not a map")
    reqs: List[Tuple[str, str, List[str]]] = []
    labels = spec.get("matchLabels") or {}
    exprs = spec.get("matchExpressions") or []
    if not isinstance(labels, dict) or not isinstance(exprs, list):
        raise Refused("error parsing label selector: malformed")
    for k, v in labels.items():
        reqs.append((str(k), "In", [str(v)]))
    for e in exprs:
        e = as_dict(e)
        op = str(e.get("operator") or "")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise Refused(f"error parsing label selector: {op!r} is not a valid pod selector "
                          "operator")
        values = [str(v) for v in e.get("values") or []]
        if op in ("In", "NotIn") and not values:
            raise Refused("error parsing label selector: values: Invalid value: []: for "
                          "'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and values:
            raise Refused("error parsing label selector: values: Invalid value: "
                          f"{values}: values set must be empty for exists and does not exist")
        reqs.append((str(e.get("key") or ""), op, values))
    from kzgit.resource.labels import qualified_name_errors   # start-up: only a selector
    for key, _, _ in reqs:
        errs = qualified_name_errors(key)   # selector.go validateLabelKey
        if errs:
            raise Refused(f'error parsing label selector: key: Invalid value: "{key}": '
                          + "; ".join(errs))

    def matches(flat: Dict[str, str]) -> bool:
        for key, op, values in reqs:
            present = key in flat
            if op == "In" and not (present and flat[key] in values):
                return False
            if op == "NotIn" and present and flat[key] in values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
        return True
    return matches


def _flat_labels(params: Dict[str, Any]) -> Dict[str, str]:
    """generator_spec_processor.go ``flattenParameters``: nested maps and lists flattened with
    dots (github.com/jeremywohl/flatten DotStyle: ``path.segments.0``), each leaf ``%v``."""
    out: Dict[str, str] = {}

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, dict) and v:
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else str(k), x)
        elif isinstance(v, list) and v:
            for i, x in enumerate(v):
                walk(f"{prefix}.{i}" if prefix else str(i), x)
        else:
            out[prefix] = _go_v(v)
    walk("", params)
    return out


def _own_template(g: Any) -> Optional[Dict[str, Any]]:
    """A top-level generator's own ``template`` (``list.template``, ``git.template``,
    ``matrix.template``, ...: each generator's ``GetTemplate``)."""
    if not isinstance(g, dict):
        return None
    for kind, body in g.items():
        if kind not in ("selector", "values") and isinstance(body, dict):
            own = body.get("template")
            return own if isinstance(own, dict) and own else None
    return None


def _filled(dest: Any, base: Any) -> Any:
    """mergo.Merge(dest, base): each empty value of ``dest`` (missing, "", 0, false, an empty
    list or map) taken from ``base``, maps merged key by key, the rest of ``dest`` kept."""
    if isinstance(dest, dict) and isinstance(base, dict):
        out = dict(dest)
        for k, v in base.items():
            out[k] = _filled(out[k], v) if k in out else v
        return out
    if dest is None or dest == "" or dest is False or dest == [] or dest == {} or \
            (isinstance(dest, (int, float)) and not isinstance(dest, bool) and dest == 0):
        return base
    return dest


def _patched(app: Dict[str, Any], patch_text: str) -> Dict[str, Any]:
    """The Application with its rendered ``templatePatch`` applied, as
    applicationset/controllers/template/patch.go ``applyTemplatePatch`` does: the YAML read as
    JSON, a strategic merge patch against the Application type (whose fields declare no merge
    keys: maps merge, lists are replaced, null removes), and ``spec.project`` kept as the
    template set it (a patch may not move an Application to another project)."""
    from kzgit.errors import KzgitError   # start-up: templatePatch only
    from kzgit.yamlio import load_yaml11   # start-up
    try:
        doc = load_yaml11(patch_text)
    except KzgitError as e:
        raise Refused(f"templatePatch is not YAML: {e}") from None
    if doc is None:
        return app
    if not isinstance(doc, dict):
        raise Refused("invalid templatePatch: not a mapping")
    out = _merge_patch(app, doc)
    project = as_dict(app.get("spec")).get("project")
    spec = as_dict(out.get("spec"))
    if project is None:
        spec.pop("project", None)
    else:
        spec["project"] = project
    out["spec"] = spec
    return out


def _merge_patch(base: Any, patch: Any) -> Any:
    if not isinstance(patch, dict) or not isinstance(base, dict):
        return patch
    if patch.get("$patch") == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    out = dict(base)
    for k, v in patch.items():
        if k == "$patch":
            continue
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge_patch(base.get(k), v)
    return out


def _generator_params(catalog: Catalog, g: Any, go: bool, nested: int,
                      options: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """One generator's parameter sets; ``nested``: how deep in matrices and merges it is (a
    child of one may be another, whose children may not: Argo CD's nested and terminal
    generators)."""
    if not isinstance(g, dict):
        raise Refused("malformed generator")
    if g.get("template"):
        raise NotExpanded("a generator-level template is not expanded by kzgit")
    selector = g.get("selector")
    if selector is not None:
        wanted = _selector(selector)
        rest = {k: v for k, v in g.items() if k != "selector"}
        return [p for p in _generator_params(catalog, rest, go, nested, options)
                if wanted(_flat_labels(p))]
    kinds = [k for k in g if k not in ("selector", "values")]
    kind = kinds[0] if kinds else "?"
    if kind == "list":
        return _list_params(g["list"], go)
    if kind == "git":
        return _git_params(catalog, g["git"], go, options)
    if kind == "matrix" and nested < 2:
        return _matrix_params(catalog, g["matrix"], go, options, nested + 1)
    if kind == "merge" and nested < 2:
        return _merge_params(catalog, g["merge"], go, options, nested + 1)
    if kind in _CLUSTER_GENERATORS:
        raise NotExpanded(f"the {kind} generator needs the cluster's state")
    if kind in _OTHER_GENERATORS:
        raise NotExpanded(f"the {kind} generator is not expanded by kzgit"
                          + (" (inside a matrix or a merge)" if nested else ""))
    raise NotExpanded(f"unknown generator {kind!r}")


def _matrix_params(catalog: Catalog, gen: Any, go: bool, options: Sequence[str] = (),
                   depth: int = 1) -> List[Dict[str, Any]]:
    """applicationset/generators/matrix.go: for each parameter set of the first child, the
    second child with that set's parameters in its strings (``InterpolateGenerator``:
    ``{{.path.path}}/config.json``), and each pair merged: with ``goTemplate`` deeply, the
    first's values winning (``mergo.Merge`` with override); without, as
    ``utils.CombineStringMaps`` (a key both give with different values is an error)."""
    children = gen.get("generators") if isinstance(gen, dict) else None
    if not isinstance(children, list) or len(children) != 2:
        raise Refused("a matrix needs exactly two generators")
    out = []
    for a in _generator_params(catalog, children[0], go, depth, options):
        second = _render(children[1], a, go, options) if a else children[1]
        for b in _generator_params(catalog, second, go, depth, options):
            if not go:
                for k in sorted(set(a) & set(b)):
                    if str(a[k]) != str(b[k]):
                        raise Refused(f"error combining matrix parameters: found duplicate "
                                      f"key {k} with different value, a: {a[k]} ,b: {b[k]}")
            out.append(_merged(b, a))
    return out


def _merge_params(catalog: Catalog, gen: Any, go: bool, options: Sequence[str] = (),
                  depth: int = 1) -> List[Dict[str, Any]]:
    """applicationset/generators/merge.go: the first generator's parameter sets, each updated
    by the set of every later generator that has the same values of ``mergeKeys`` (deeply with
    ``goTemplate``, key by key without); a merge key shared by two sets of one generator is an
    error. Argo CD returns the sets in a Go map's (random) order; kzgit keeps the first
    generator's."""
    import json   # start-up: only a merge generator
    children = gen.get("generators") if isinstance(gen, dict) else None
    keys = gen.get("mergeKeys") if isinstance(gen, dict) else None
    if not isinstance(children, list) or len(children) < 2:
        raise Refused("a merge needs at least two generators")
    if not isinstance(keys, list) or not keys:
        raise Refused("error getting param sets by merge key: no merge keys were specified")

    def by_key(sets: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
        out: Dict[str, Dict[str, Any]] = {}
        for p in sets:
            key = json.dumps({str(k): p.get(str(k)) for k in keys}, sort_keys=True,
                             separators=(",", ":"))
            if key in out:
                raise Refused("error getting param sets by merge key: the parameters "
                              f"generated by a child generator are not unique by the given "
                              f"mergeKeys. Duplicate key was {key}")
            out[key] = p
        return out
    base = by_key(_generator_params(catalog, children[0], go, depth, options))
    for child in children[1:]:
        overrides = by_key(_generator_params(catalog, child, go, depth, options))
        for key, params in base.items():
            if key in overrides:
                base[key] = _merged(params, overrides[key]) if go else {**params, **overrides[key]}
    return list(base.values())


def _merged(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    """``a`` with ``b`` merged in, maps deeply, ``b`` winning."""
    out = dict(a)
    for k, v in b.items():
        out[k] = _merged(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def _json_numbers(value: Any) -> Any:
    """A parameter as Argo CD holds it: decoded from JSON into ``any``, so every number is a
    float64 (a list element's ``replicas: 3`` prints ``3``, a ``1000000`` prints ``1e+06``,
    and ``eq .replicas 3`` compares a float64 with an int: Go's error)."""
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_numbers(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _list_params(gen: Any, go: bool) -> List[Dict[str, Any]]:
    if not isinstance(gen, dict):
        raise Refused("malformed list generator")
    out: List[Dict[str, Any]] = []
    for el in gen.get("elements") or []:
        if not isinstance(el, dict):
            raise Refused("error unmarshling list element")
        if go:
            out.append(_json_numbers(el))
            continue
        params: Dict[str, Any] = {}
        for k, v in el.items():
            if k == "values":
                if not isinstance(v, dict):
                    raise Refused("error parsing values map")
                for vk, vv in v.items():
                    if not isinstance(vv, str):
                        raise Refused("error parsing value as string")
                    params[f"values.{vk}"] = vv
            elif not isinstance(v, str):
                raise Refused(f"list element {k}: error parsing value as string")
            else:
                params[k] = v
        out.append(params)
    text = gen.get("elementsYaml")
    if text:
        # list.go: elementsYaml (often rendered by a matrix's first generator) is unmarshalled
        # from YAML through JSON and its elements appended as they are, in either syntax
        from kzgit.errors import KzgitError   # start-up: only elementsYaml
        from kzgit.yamlio import load_yaml11   # start-up: as above
        try:
            more = load_yaml11(str(text))
        except KzgitError as e:
            raise Refused(f"error unmarshling decoded ElementsYaml {e}") from None
        if more is not None and (not isinstance(more, list)
                                 or not all(isinstance(m, dict) for m in more)):
            raise Refused("error unmarshling decoded ElementsYaml: not a list of maps")
        out.extend(_json_numbers(m) for m in more or [])
    return out


def _git_params(catalog: Catalog, gen: Any, go: bool, options: Sequence[str] = ()
                ) -> List[Dict[str, Any]]:
    """The git generator's parameter sets, each with its ``values`` (rendered with the set's
    own parameters: applicationset/generators/value_interpolation.go ``appendTemplatedValues``;
    ``values.KEY``, or a ``values`` map with ``goTemplate``)."""
    sets = _git_param_sets(catalog, gen, go)
    values = gen.get("values") if isinstance(gen, dict) else None
    if values is None:
        return sets
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise Refused("malformed git generator: values is not a map of strings")
    for params in sets:
        rendered = {str(k): _string(v, params, go, options) for k, v in values.items()}
        if go:
            params["values"] = rendered
        else:
            params.update({f"values.{k}": v for k, v in rendered.items()})
    return sets


def _git_param_sets(catalog: Catalog, gen: Any, go: bool) -> List[Dict[str, Any]]:
    from kzgit.gitops.gomatch import BadPattern, match   # start-up
    from kzgit.gitops.urls import normalise   # start-up: as the module's own, loaded where it is used
    if not isinstance(gen, dict):
        raise Refused("malformed git generator")
    url = str(gen.get("repoURL") or "")
    if normalise(url) not in catalog.repo.urls:
        raise NotExpanded(f"the git generator reads {url or '(no repoURL)'}, not this repository")
    if gen.get("files"):
        if gen.get("directories"):
            raise Refused("malformed git generator: both files and directories")
        return _git_files_params(catalog, gen, go)
    dirs = gen.get("directories")
    if not isinstance(dirs, list) or not dirs:
        raise Refused("malformed git generator: no directories")
    # GetGitDirectories: filepath.WalkDir's order (a directory's subtree before its next
    # sibling), hidden directories skipped with all below them (the repo-server's default)
    all_dirs = sorted({d for f in catalog.repo.files for d in _ancestors(f)},
                      key=lambda d: d.split("/"))
    chosen = []
    for d in all_dirs:
        if not d or any(seg.startswith(".") for seg in d.split("/")):
            continue
        inc = exc = False
        for item in dirs:
            if not isinstance(item, dict):
                continue
            try:
                hit = match(str(item.get("path") or ""), d)
            except BadPattern:
                continue
            if hit and item.get("exclude") is True:
                exc = True
            elif hit:
                inc = True
        if inc and not exc:
            chosen.append(d)
    prefix = str(gen.get("pathParamPrefix") or "")
    out = []
    for d in chosen:
        base = posixpath.basename(d)
        if go:
            p = {"path": d, "basename": base, "basenameNormalized": sanitize_name(base),
                 "segments": d.split("/")}
            out.append({prefix: {"path": p}} if prefix else {"path": p})
        else:
            name = f"{prefix}.path" if prefix else "path"
            params: Dict[str, Any] = {name: d, f"{name}.basename": base,
                                      f"{name}.basenameNormalized": sanitize_name(base)}
            for i, seg in enumerate(d.split("/")):
                if seg:
                    params[f"{name}[{i}]"] = seg
            out.append(params)
    return out


def _pathspec(pattern: str) -> "re.Pattern[str]":
    """A git pathspec as ``git ls-files -- PATTERN`` matches it (argo-cd util/git/client.go
    LsFiles, the default globbing): wildcards match across ``/`` (fnmatch without
    FNM_PATHNAME), and a pattern naming a directory matches every file below it."""
    import fnmatch   # start-up: only ApplicationSets with a git files generator
    if not any(c in pattern for c in "*?["):
        return re.compile(re.escape(pattern.rstrip("/")) + r"(?:/.*)?", re.DOTALL)
    return re.compile(fnmatch.translate(pattern))


def _go_v(value: Any) -> str:
    """Go's ``fmt.Sprintf("%v", v)`` of a value decoded from JSON (numbers are float64)."""
    return go_print(_json_numbers(value))


def _flatten(obj: Any, prefix: str, out: Dict[str, str]) -> None:
    """jeremywohl/flatten DotStyle: nested keys joined by '.', list items by their index."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    empty = True
    for k, v in items:
        empty = False
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, (dict, list)) and v:
            _flatten(v, key, out)
        else:
            out[key] = _go_v(v)
    if empty and prefix:
        out[prefix] = _go_v(obj)


def _git_files_params(catalog: Catalog, gen: Dict[str, Any], go: bool) -> List[Dict[str, Any]]:
    """applicationset/generators/git.go generateParamsForGitFiles: the files the include
    patterns match minus those an exclude pattern matches, sorted; each a YAML or JSON object
    (or a list of them) of parameters, with the file's path ones."""
    from kzgit.yamlio import load_yaml11   # start-up: as _pathspec
    from kzgit.errors import KzgitError   # start-up: as _pathspec
    items = [i for i in gen["files"] if isinstance(i, dict) and isinstance(i.get("path"), str)]
    inc = [_pathspec(i["path"]) for i in items if i.get("exclude") is not True]
    exc = [_pathspec(i["path"]) for i in items if i.get("exclude") is True]
    chosen = sorted(f for f in catalog.repo.files if any(r.fullmatch(f) for r in inc)
                    and not any(r.fullmatch(f) for r in exc))
    prefix = str(gen.get("pathParamPrefix") or "")
    out: List[Dict[str, Any]] = []
    for f in chosen:
        data = catalog.repo.read(f) or b""
        try:
            parsed = load_yaml11(data, f) if data.strip() else {}
        except KzgitError as e:
            raise Refused(f"unable to process file '{f}': unable to parse file: {e}") from None
        objects = [parsed] if isinstance(parsed, dict) else parsed if isinstance(parsed, list) \
            else None
        if objects is None or not all(isinstance(o, dict) for o in objects):
            raise Refused(f"unable to process file '{f}': not an object or a list of them")
        d = posixpath.dirname(f) or "."
        base, filename = posixpath.basename(d), posixpath.basename(f)
        for o in objects:
            if go:
                params: Dict[str, Any] = _json_numbers(dict(o))
                p = {"path": d, "basename": base, "filename": filename,
                     "basenameNormalized": sanitize_name(base),
                     "filenameNormalized": sanitize_name(filename), "segments": d.split("/")}
                if prefix:
                    params[prefix] = {"path": p}
                else:
                    params["path"] = p
            else:
                flat: Dict[str, str] = {}
                _flatten(o, "", flat)
                params = dict(flat)
                name = f"{prefix}.path" if prefix else "path"
                params.update({name: d, f"{name}.basename": base, f"{name}.filename": filename,
                               f"{name}.basenameNormalized": sanitize_name(base),
                               f"{name}.filenameNormalized": sanitize_name(filename)})
                for i, seg in enumerate(d.split("/")):
                    if seg:
                        params[f"{name}[{i}]"] = seg
            out.append(params)
    return out


def _ancestors(f: str) -> List[str]:
    parts = f.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


# -- templates -------------------------------------------------------------------------------

_FAST_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


def _render(value: Any, params: Dict[str, Any], go: bool, options: Sequence[str] = ()) -> Any:
    if isinstance(value, dict):
        return {(_string(k, params, go, options) if isinstance(k, str) else k):
                _render(v, params, go, options) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, params, go, options) for v in value]
    if isinstance(value, str):
        return _string(value, params, go, options)
    return value


def _string(text: str, params: Dict[str, Any], go: bool, options: Sequence[str] = ()) -> str:
    if "{{" not in text:
        return text
    if not go:
        def fast(m: "re.Match[str]") -> str:
            tag = m.group(1).strip()
            got = params.get(tag)
            # fasttemplate: only a string parameter replaces its tag (utils.go Replace)
            return got if tag and isinstance(got, str) else m.group(0)
        return _FAST_TAG.sub(fast, text)
    from kzgit.gitops.gotemplate import TemplateError, render   # start-up: goTemplate only
    from kzgit.gitops.govalues import NotSupported   # start-up: as above
    try:
        return render(text, params, options)
    except NotSupported as e:
        raise NotExpanded(f"template {_quoted(text)}: {e}") from None
    except TemplateError as e:
        # Argo CD generates no Application when one template fails (the ApplicationSet's
        # ErrorOccurred condition): a finding, with the template and Go's words
        raise Refused(f"template {_quoted(text)}: {e}") from None


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")
