"""One line a person reads first, before kustomize's own error chain.

kustomize's message for a missing resource or patch is a chain of several hundred
characters (``accumulating resources: accumulation err='...': must build at directory:
...``) that kzgit keeps word for word: people search for those words and scripts match
them.  A *lead* (:attr:`kzgit.errors.KzgitError.lead`) names, in one line, the
kustomization file, the field (``resources``, ``patches[2].path``) and the path; the CLI
and the hooks print it above the chain (:func:`kzgit.errors.full_message`).  The first
lead set wins, so the kustomization nearest the problem is the one named.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.errors import KzgitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Optional

# The loader's words for a path that is not there (kustomize's evalsymlink/lstat failure).
_MISSING = "no such file or directory"
_YAML_LINE = re.compile(r"\byaml: line (\d+): (.*)")
# The load restrictor's words (api/internal/loader/fileloader.go RestrictionRootOnly).
_OUTSIDE = "is not in or below"
# git's own reason, its first "fatal:" line (later ones are generic: "Could not read from
# remote repository."), and an HTTP status.
_FATAL = re.compile(r"fatal: ([^\n]*)")
_HTTP = re.compile(r"HTTP Error: status code \d+ \([^)]*\)")


def at(kfile: str, text: Optional[bytes], *parts: Any, item: Optional[str] = None) -> str:
    """``kfile:LINE``: the line of the deepest of ``parts`` (``"patches", 2, "path"``) in the
    kustomization's ``text``; with ``item``, of the entry of the list at ``parts`` that is
    ``item``.  Just ``kfile`` when the text is not at hand or not YAML."""
    if text is None:
        return kfile
    from kzgit.yamlio.lines import deepest_line, parse_with_lines   # start-up: errors only
    tree = parse_with_lines(text.decode("utf-8", "replace"))
    keys = [str(p) for p in parts]
    if item is not None:
        node = tree
        for k in keys:
            if isinstance(node, list) and k.isdigit() and int(k) < len(node):
                node = node[int(k)]
            else:
                node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, list) and item in node:
            keys.append(str(node.index(item)))
    line = deepest_line(tree, keys) if tree is not None else None
    return f"{kfile}:{line}" if line else kfile


def outside(err: KzgitError, where: str, path: str) -> KzgitError:
    """Lead for a file the load restrictor refused: where it is named, the path, and the two
    ways to allow it (the flag, and the setting a pre-commit user edits)."""
    return err.with_lead(
        f"{where}: '{path}' is outside the kustomization's directory, which the load restrictor "
        f"forbids (LoadRestrictionsRootOnly); allow it with --load-restrictor LoadRestrictionsNone "
        f"or load-restrictor = \"LoadRestrictionsNone\" in .kzgit.toml (granted in your "
        f"~/.config/kzgit/config.toml or by kzgit trust)")


def resource(err: KzgitError, kfile: str, path: str, field: str = "resources",
             text: Optional[bytes] = None) -> KzgitError:
    """Lead for a ``resources`` entry that is neither a file nor a kustomization directory."""
    where = f"{at(kfile, text, field, item=path)}: {field}"
    if _OUTSIDE in err.message:
        return outside(err, where, path)
    if _MISSING in err.message:
        return err.with_lead(f"{where}: '{path}' does not exist")
    return err


def yaml_resource(err: KzgitError, kfile: str, path: str, field: str = "resources",
                  text: Optional[bytes] = None) -> KzgitError:
    """Lead for a ``resources`` file that is not valid YAML: the entry, the line, the problem."""
    if err.lead is not None:
        return err
    m = _YAML_LINE.search(err.message)
    what = f"line {m.group(1)}: {m.group(2)}" if m else err.message.splitlines()[0]
    return err.with_lead(f"{at(kfile, text, field, item=path)}: {field}: '{path}' is not valid YAML: {what}")


def generator(err: KzgitError, kfile: str, field: str, index: int, args: Any,
              text: Optional[bytes] = None) -> KzgitError:
    """Lead for a ``configMapGenerator``/``secretGenerator`` entry whose ``envs``, ``env`` or
    ``files`` names a file the load restrictor refuses: the first such entry (a path that
    leaves the kustomization's directory)."""
    if err.lead is not None or _OUTSIDE not in err.message or not isinstance(args, dict):
        return err
    for key in ("envs", "env", "files"):
        entries = args.get(key)
        for entry in (entries if isinstance(entries, list) else [entries]):
            if not isinstance(entry, str):
                continue
            path = entry.split("=", 1)[1] if key == "files" and "=" in entry else entry
            norm = posixpath.normpath(path)
            if norm.startswith("../") or norm == ".." or posixpath.isabs(norm):
                where = at(kfile, text, field, index, key, item=entry if key != "env" else None)
                return outside(err, f"{where}: {field}[{index}].{key}", path)
    return err


def remote(err: KzgitError, kfile: str, field: str, ref: str) -> KzgitError:
    """Lead for a remote ``resources``/``components`` entry that cannot be fetched: the entry
    and the cause in one line (git's ``fatal:`` line, or the HTTP status) instead of the whole
    command line and stderr."""
    if err.lead is not None:
        return err
    from kzgit.remote import redact   # start-up: only a failed fetch needs it
    msg = err.message
    cause = ""
    m = _FATAL.search(msg)
    if m:
        cause = m.group(1).strip()
    else:
        m = _HTTP.search(msg)
        cause = m.group(0) if m else msg.splitlines()[0] if msg else ""
    if len(cause) > 200:
        cause = cause[:197] + "..."
    return err.with_lead(f"{kfile}: {field}: cannot fetch '{redact(ref)}'" + (f": {cause}" if cause else ""))


def patch(err: KzgitError, kfile: str, field: str, index: int, entry: Any,
          load: Callable[[str], bytes], text: Optional[bytes] = None) -> KzgitError:
    """Lead for the ``field[index]`` patch entry (``patches``, ``patchesJson6902``)."""
    if err.lead is not None or not isinstance(entry, dict):
        return err
    path = entry.get("path")
    path = path if isinstance(path, str) and path else None
    sub = "path" if path else "patch"
    where = f"{at(kfile, text, field, index)}: {field}[{index}]"
    at_text = f"{at(kfile, text, field, index, sub)}: {field}[{index}].{sub}"
    return _patch_lead(err, at_text, where, path, entry.get("patch"), load)


def strategic_merge(err: KzgitError, kfile: str, index: int, entry: str, inline: bool,
                    load: Callable[[str], bytes], text: Optional[bytes] = None) -> KzgitError:
    """Lead for the ``patchesStrategicMerge[index]`` entry (a file path, or an inline patch)."""
    if err.lead is not None:
        return err
    where = f"{at(kfile, text, 'patchesStrategicMerge', index)}: patchesStrategicMerge[{index}]"
    return _patch_lead(err, where, where, None if inline else entry, entry if inline else None, load)


def _patch_lead(err: KzgitError, at_text: str, at_entry: str, path: Optional[str], inline: Any,
                load: Callable[[str], bytes]) -> KzgitError:
    """``at_text`` names where the patch text is (``patches[2].path``), ``at_entry`` the entry."""
    msg = err.message
    if path and _OUTSIDE in msg:
        return outside(err, at_text, path)
    if path and _MISSING in msg:
        return err.with_lead(f"{at_text}: '{path}' does not exist")
    what = f"the patch file '{path}'" if path else "the inline patch"
    if msg.startswith("no resource matches") or "failed to find unique target for patch" in msg:
        return err.with_lead(f"{at_entry}: {what} matches no resource")
    problem = _yaml_problem(path, inline, load) if (
        "unable to parse SM or JSON patch" in msg or "yaml:" in msg) else None
    if problem:
        return err.with_lead(f"{at_text}: {what} is not valid YAML: {problem}")
    if "unable to parse SM or JSON patch" in msg:
        return err.with_lead(f"{at_text}: {what} is neither a strategic-merge patch (resources "
                             "with kind and metadata.name) nor a list of JSON 6902 operations")
    return err


def _yaml_problem(path: Optional[str], inline: Any, load: Callable[[str], bytes]) -> Optional[str]:
    """``line N: what`` of the YAML error in a patch (a line of the inline text for an inline
    patch), or None when it parses."""
    from kzgit.yamlio import load_documents   # start-up: only the builds that need it pay for it
    try:
        data = load(path) if path else str(inline or "").encode("utf-8")
        load_documents(data, path or "inline patch")
    except KzgitError as e:
        m = _YAML_LINE.search(e.message)
        if m:
            return f"line {m.group(1)}: {m.group(2)}"
        return e.message.splitlines()[0] if e.message else None
    return None
