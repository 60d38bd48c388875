"""Argo CD ApplicationSets: the list and git-directories generators, expanded offline.

Sources (argoproj/argo-cd, ``master`` of 2026-08):

- ``applicationset/generators/list.go``: each element a parameter set; without
  ``goTemplate`` every value must be a string (``values`` a map of strings, flattened as
  ``values.<key>``).
- ``applicationset/generators/git.go`` (directories): every directory of the repository
  matched by ``path.Match`` against ``directories[].path``; one matching an ``exclude: true``
  entry is left out whatever else includes it (``filterApps``); parameters ``path``,
  ``path.basename``, ``path.basenameNormalized`` (``utils.SanitizeName``), ``path[N]``, or
  with ``goTemplate`` a ``path`` map (``path``, ``basename``, ``basenameNormalized``,
  ``segments``); ``pathParamPrefix``.
- ``applicationset/utils/utils.go`` ``Render``: without ``goTemplate``, fasttemplate with
  ``{{`` ``}}``, the tag trimmed, an unknown tag left as written; with ``goTemplate``, Go
  text/template: kzgit reads plain field references (``{{.path.basename}}``) and ``{{index
  .path.segments N}}`` only.

Anything else (the ``clusters``, ``matrix``, ``merge``, ``scmProvider``, ``pullRequest``,
``clusterDecisionResource`` and ``plugin`` generators, a generator-level ``template``,
``templatePatch``, any template function or pipeline) leaves the ApplicationSet listed as not
expanded, with why.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.gitops.model import ARGOCD, App, Doc, as_dict

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List
    from kzgit.gitops.catalog import Catalog

_CLUSTER_GENERATORS = ("clusters", "clusterDecisionResource")
_OTHER_GENERATORS = ("matrix", "merge", "scmProvider", "pullRequest", "plugin")


class NotExpanded(Exception):
    """Why an ApplicationSet is not expanded (its ``str()``)."""


def sanitize_name(name: str) -> str:
    """applicationset/utils SanitizeName."""
    name = re.sub(r"[^-a-z0-9.]", "-", name.lower())[:253]
    return name.strip("-.")


def expand(catalog: Catalog, appset: App) -> List[App]:
    """The Applications ``appset`` generates; none (and ``appset.reason``) when kzgit cannot."""
    try:
        apps = _expand(catalog, appset)
    except NotExpanded as e:
        appset.expanded = False
        appset.reason = str(e)
        appset.renderer = "not expanded"
        return []
    appset.expanded = True
    appset.renderer = f"applicationset: {len(apps)} applications"
    return apps


def _expand(catalog: Catalog, appset: App) -> List[App]:
    spec = appset.obj.get("spec")
    if not isinstance(spec, dict):
        raise NotExpanded("malformed: spec is missing")
    go = spec.get("goTemplate") is True
    if spec.get("templatePatch"):
        raise NotExpanded("templatePatch is not expanded by kzgit")
    template = spec.get("template")
    if not isinstance(template, dict):
        raise NotExpanded("malformed: spec.template is missing")
    gens = spec.get("generators")
    if not isinstance(gens, list) or not gens:
        raise NotExpanded("malformed: spec.generators is missing")
    params: List[Dict[str, Any]] = []
    for g in gens:
        if not isinstance(g, dict):
            raise NotExpanded("malformed generator")
        if g.get("template"):
            raise NotExpanded("a generator-level template is not expanded by kzgit")
        kinds = [k for k in g if k not in ("selector", "values")]
        kind = kinds[0] if kinds else "?"
        if kind == "list":
            params.extend(_list_params(g["list"], go))
        elif kind == "git":
            params.extend(_git_params(catalog, g["git"], go))
        elif kind in _CLUSTER_GENERATORS:
            raise NotExpanded(f"the {kind} generator needs the cluster's state")
        elif kind in _OTHER_GENERATORS:
            raise NotExpanded(f"the {kind} generator is not expanded by kzgit")
        else:
            raise NotExpanded(f"unknown generator {kind!r}")
    out: List[App] = []
    for p in params:
        rendered = as_dict(_render(template, p, go))
        meta: Dict[str, Any] = dict(as_dict(rendered.get("metadata")))
        meta.setdefault("namespace", appset.namespace)
        obj: Dict[str, Any] = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                               "metadata": meta, "spec": as_dict(rendered.get("spec"))}
        doc = Doc(obj, appset.file, appset.line, appset.doc.text)
        child = App(ARGOCD, obj, doc, parent=appset.parent)
        child.appset = str(appset.extra.setdefault("ref", f"#{id(appset)}"))
        out.append(child)
    return out


def _list_params(gen: Any, go: bool) -> List[Dict[str, Any]]:
    if not isinstance(gen, dict):
        raise NotExpanded("malformed list generator")
    out: List[Dict[str, Any]] = []
    for el in gen.get("elements") or []:
        if not isinstance(el, dict):
            raise NotExpanded("error unmarshling list element")
        if go:
            out.append(el)
            continue
        params: Dict[str, Any] = {}
        for k, v in el.items():
            if k == "values":
                if not isinstance(v, dict):
                    raise NotExpanded("error parsing values map")
                for vk, vv in v.items():
                    if not isinstance(vv, str):
                        raise NotExpanded("error parsing value as string")
                    params[f"values.{vk}"] = vv
            elif not isinstance(v, str):
                raise NotExpanded(f"list element {k}: error parsing value as string")
            else:
                params[k] = v
        out.append(params)
    if gen.get("elementsYaml"):
        raise NotExpanded("list elementsYaml is not expanded by kzgit")
    return out


def _git_params(catalog: Catalog, gen: Any, go: bool) -> List[Dict[str, Any]]:
    from kzgit.gitops.gomatch import BadPattern, match   # start-up
    from kzgit.gitops.urls import normalise   # start-up: as the module's own, loaded where it is used
    if not isinstance(gen, dict):
        raise NotExpanded("malformed git generator")
    url = str(gen.get("repoURL") or "")
    if normalise(url) not in catalog.repo.urls:
        raise NotExpanded(f"the git generator reads {url or '(no repoURL)'}, not this repository")
    if gen.get("files"):
        raise NotExpanded("the git files generator is not expanded by kzgit")
    dirs = gen.get("directories")
    if not isinstance(dirs, list) or not dirs:
        raise NotExpanded("malformed git generator: no directories")
    if gen.get("values"):
        raise NotExpanded("git generator values are not expanded by kzgit")
    all_dirs = sorted({posixpath.dirname(f) for f in catalog.repo.files} |
                      {d for f in catalog.repo.files for d in _ancestors(f)})
    chosen = []
    for d in all_dirs:
        if not d:
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


def _ancestors(f: str) -> List[str]:
    parts = f.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


# -- templates -------------------------------------------------------------------------------

_FAST_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_GO_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.DOTALL)
_GO_FIELD = re.compile(r"^\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$")
_GO_INDEX = re.compile(r"^index\s+\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s+(\d+)$")


def _render(value: Any, params: Dict[str, Any], go: bool) -> Any:
    if isinstance(value, dict):
        return {(_string(k, params, go) if isinstance(k, str) else k): _render(v, params, go)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, params, go) for v in value]
    if isinstance(value, str):
        return _string(value, params, go)
    return value


def _string(text: str, params: Dict[str, Any], go: bool) -> str:
    if "{{" not in text:
        return text
    if not go:
        def fast(m: "re.Match[str]") -> str:
            tag = m.group(1).strip()
            got = params.get(tag)
            return m.group(0) if not tag or got is None else str(got)
        return _FAST_TAG.sub(fast, text)
    out: List[str] = []
    pos = 0
    for m in _GO_ACTION.finditer(text):
        before = text[pos:m.start()]
        if m.group(1):
            before = before.rstrip()
        out.append(before)
        pos = m.end()
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
        out.append(_go_value(m.group(2).strip(), params))
    out.append(text[pos:])
    return "".join(out)


def _lookup(path: str, params: Dict[str, Any]) -> Any:
    cur: Any = params
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _go_value(action: str, params: Dict[str, Any]) -> str:
    m = _GO_FIELD.match(action)
    if m:
        v = _lookup(m.group(1), params)
        return "<no value>" if v is None else _go_text(v)
    m = _GO_INDEX.match(action)
    if m:
        seq = _lookup(m.group(1), params)
        i = int(m.group(2))
        if not isinstance(seq, list) or i >= len(seq):
            raise NotExpanded(f"template {{{{{action}}}}}: index out of range")
        return _go_text(seq[i])
    raise NotExpanded(f"template {{{{{action}}}}} uses a function or pipeline kzgit does not "
                      "expand")


def _go_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, dict)):
        raise NotExpanded("template prints a list or a map")
    return str(v)
