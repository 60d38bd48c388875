"""``vars`` to ``replacements``, as ``kustomize edit fix --vars`` converts them, done right.

``kustomize/commands/edit/fix/convert.go`` ConvertVarsToReplacements (v5.5.0 .. v5.8.1): for
each var, every string holding ``$(NAME)`` in the files the kustomization reads (its
resources, through its bases, and its patch files) becomes a replacement target (the field's
path; for a string holding more than the reference, a ``delimiter`` and an ``index``:
constructFieldOptions), the var's ``objref``/``fieldref`` becomes the source, and
``$(NAME)`` in those files becomes ``NAME_PLACEHOLDER``.  Where kustomize goes wrong, kzgit
refuses, naming the var, instead of writing a kustomization that renders otherwise:

* a reference not delimited on both sides by the same character (``http://$(HOST):80``:
  kustomize errors out), or one whose placeholder the delimiter would cut (a ``_`` or a
  character of the var's name as delimiter: kustomize writes a target that misses);
* a string holding the reference twice (kustomize's target replaces one of them);
* files of bases below the first level: kustomize joins their paths to the wrong directory
  (filesTouchedByKustomize passes the base's own path, not the joined one) and misses them;
  kzgit follows them from the right directory;
* a strategic-merge patch file's reference: kustomize selects every resource (the patch has no
  target), and the replacement fails on the first one without the field; kzgit selects the
  resource the patch names;
* kustomize also empties ``replacements`` before adding the converted ones; kzgit appends.

What no text check can see (a ``$(NAME)`` in a field vars never substitute, a var a base
declares for its overlay) the proof (:mod:`kzgit.fix.proof`) sees: the rendering differs and
the whole conversion is left undone.
"""
from __future__ import annotations

import posixpath

import yaml

from kzgit.errors import YamlError
from kzgit.fix._text import Unsupported
from kzgit.yamlio import load_documents, load_yaml11

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple

    ReadText = Callable[[str], Optional[str]]
    """Repo-relative path -> the file's text, or None when it is not a readable file."""
    KustomizationOf = Callable[[str], Optional[str]]
    """Repo-relative directory -> its kustomization file, or None."""


def _looks_remote(ref: str) -> bool:
    from kzgit.remote import looks_remote   # start-up: only --vars reads references
    return looks_remote(ref)


def _as_list(v: Any) -> List[Any]:
    return list(v) if isinstance(v, list) else []


def touched_files(kdir: str, k: Dict[str, Any], read: ReadText, kustomization_of: KustomizationOf,
                  seen: Optional[set] = None) -> List[Tuple[str, Optional[Dict[str, Any]]]]:
    """The files a kustomization reads resources and patches from, through its bases: (path,
    the patch entry when it is a patch file)."""
    seen = set() if seen is None else seen
    out: List[Tuple[str, Optional[Dict[str, Any]]]] = []

    def join(ref: str) -> str:
        return posixpath.normpath(posixpath.join("" if kdir == "." else kdir, ref))

    for r in _as_list(k.get("resources")) + _as_list(k.get("bases")):
        if not isinstance(r, str) or _looks_remote(r):
            continue
        p = join(r)
        kf = kustomization_of(p)
        if kf is not None:
            if p in seen:
                continue
            seen.add(p)
            text = read(kf)
            # the budgeted loader, as a build reads it: an alias bomb fails fast
            try:
                sub = load_yaml11(text, kf) if text else None
            except YamlError:
                sub = None
            if isinstance(sub, dict):
                out += touched_files(p, sub, read, kustomization_of, seen)
            continue
        out.append((p, None))
    patches = [e for e in _as_list(k.get("patches")) + _as_list(k.get("patchesJson6902")) if isinstance(e, dict)]
    patches += [{"path": e} for e in _as_list(k.get("patchesStrategicMerge"))
                if isinstance(e, str) and "\n" not in e]
    for e in patches:
        if isinstance(e.get("path"), str):
            out.append((join(e["path"]), e))
    return out


def _field_options(name: str, value: str, where: str) -> Dict[str, Any]:
    """convert.go constructFieldOptions, refusing what would not convert to the same."""
    ref = f"$({name})"
    placeholder = f"{name}_PLACEHOLDER"
    if value.count(ref) > 1:
        raise Unsupported(f"var {name}: {ref} appears twice in one string ({where})")
    if value == ref:
        return {}
    i = value.index(ref)
    if i == 0:
        delimiter, index = value[len(ref)], 0
    elif i + len(ref) >= len(value):
        delimiter = value[i - 1]
        index = len(value.split(delimiter)) - 1
    else:
        pre, post = value[i - 1], value[i + len(ref)]
        if pre != post:
            raise Unsupported(f"var {name}: {ref} is not delimited in {value!r} ({where}); "
                              "a replacement cannot write part of a string")
        delimiter = pre
        index = value.split(delimiter).index(ref)
    parts = value.replace(ref, placeholder).split(delimiter)
    if index >= len(parts) or parts[index] != placeholder:
        raise Unsupported(f"var {name}: {ref} in {value!r} ({where}) cannot be cut out with "
                          f"the delimiter {delimiter!r}")
    opts: Dict[str, Any] = {"delimiter": delimiter}
    if index:
        opts["index"] = index
    return opts


def _find(node: Any, name: str, path: List[str], where: str,
          out: List[Tuple[str, Dict[str, Any]]]) -> None:
    """convert.go findVarName: every string holding ``$(NAME)``, with its field path."""
    if isinstance(node, dict):
        for key, value in node.items():
            item = str(key).strip()
            _find(value, name, path + ([f"[{item}]"] if "." in item else [item]), where, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _find(value, name, path + [str(i)], where, out)
    elif isinstance(node, str) and f"$({name})" in node:
        fp = ".".join(path)
        out.append((fp, _field_options(name, node, f"{where}, {fp}")))


def _split_api_version(api: str) -> Tuple[str, str]:
    """resid.ParseGroupVersion."""
    if "/" in api:
        group, version = api.split("/", 1)
        return group, version
    return "", api


def _selector(doc: Any) -> Dict[str, Any]:
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    group, version = _split_api_version(str(doc.get("apiVersion") or "")) if isinstance(doc, dict) else ("", "")
    sel = {"group": group, "version": version, "kind": doc.get("kind") if isinstance(doc, dict) else "",
           "name": meta.get("name"), "namespace": meta.get("namespace")}
    return {k: v for k, v in sel.items() if v}


def _patch_selector(patch: Dict[str, Any], doc: Any) -> Dict[str, Any]:
    """convert.go writePatchTargets: the patch's target, where the patch applies.  A patch
    without a target (a strategic-merge patch) applies to the resource it names itself: that
    resource is selected (kustomize selects every resource, and the replacement then fails on
    those without the field: "unable to find field")."""
    if not patch.get("target"):
        return _selector(doc)
    sel = dict(patch.get("target") or {})
    options = patch.get("options") or {}
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    if options.get("allowNameChange") and meta.get("name"):
        sel["name"] = meta["name"]
    if options.get("allowKindChange") and isinstance(doc, dict) and doc.get("kind"):
        sel["kind"] = doc["kind"]
    if meta.get("namespace"):
        sel["namespace"] = meta["namespace"]
    return sel


def convert(kpath: str, k: Dict[str, Any], read: ReadText, kustomization_of: KustomizationOf
            ) -> Tuple[List[Dict[str, Any]], Dict[str, Tuple[str, str]]]:
    """The replacements for the kustomization ``k`` at ``kpath``'s ``vars``, and the files whose
    references become placeholders (path -> (old text, new text)).  Unsupported names the var
    that cannot be converted."""
    kdir = posixpath.dirname(kpath) or "."
    files = touched_files(kdir, k, read, kustomization_of)
    texts: Dict[str, str] = {}
    for path, _ in files:
        if path not in texts:
            text = read(path)
            if text is not None:
                texts[path] = text
    original = dict(texts)
    replacements: List[Dict[str, Any]] = []
    for var in _as_list(k.get("vars")):
        if not isinstance(var, dict) or not isinstance(var.get("name"), str):
            raise Unsupported("a vars entry without a name")
        name = var["name"]
        objref = var.get("objref") or {}
        fieldref = var.get("fieldref") or {}
        targets: List[Dict[str, Any]] = []
        for path, patch in files:
            if path not in texts:
                continue
            try:
                docs = load_documents(texts[path], path)   # budgeted, as a build reads it
            except YamlError:
                continue   # convert.go getNodesFromFile: a file that does not parse is skipped
            for doc in docs:
                found: List[Tuple[str, Dict[str, Any]]] = []
                _find(doc, name, [], path, found)
                for fp, opts in found:
                    target: Dict[str, Any] = {"select": _patch_selector(patch, doc) if patch is not None
                                              else _selector(doc), "fieldPaths": [fp]}
                    if opts:
                        target["options"] = opts
                    targets.append(target)
        for path in texts:
            texts[path] = texts[path].replace(f"$({name})", f"{name}_PLACEHOLDER")
        if not targets:
            continue   # a var nothing references substitutes nothing
        group, version = _split_api_version(str(objref.get("apiVersion") or ""))
        source = {"group": group, "version": version, "kind": objref.get("kind"),
                  "name": objref.get("name"), "namespace": objref.get("namespace"),
                  "fieldPath": fieldref.get("fieldPath") or fieldref.get("fieldpath")}
        replacements.append({"source": {k2: v for k2, v in source.items() if v}, "targets": targets})
    changed = {p: (original[p], t) for p, t in texts.items() if t != original[p]}
    return replacements, changed


def emit(replacements: List[Dict[str, Any]], indent: int, newline: str) -> List[str]:
    """The replacement entries as block YAML lines, list items at column ``indent``."""
    text = yaml.safe_dump(replacements, default_flow_style=False, sort_keys=False, width=1 << 16)
    return [" " * indent + ln + newline if ln else newline for ln in text.splitlines()]
