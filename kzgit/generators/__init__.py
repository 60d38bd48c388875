"""configMapGenerator / secretGenerator (api/internal/generators, api/kv/kv.go, kyaml/yaml/datamap.go)."""
from __future__ import annotations

import base64
import os

from kzgit.errors import BuildError
from kzgit.loader import Loader
from kzgit.resource import Resource

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple


def _literal(src: str) -> Tuple[str, str]:
    # kv.go parseLiteralSource: a leading '=' is invalid; split on the first '='; strip one
    # pair of matching quotes
    if "=" not in src or src.startswith("="):
        raise BuildError(f"invalid literal source {src}, expected key=value")
    k, v = src.split("=", 1)
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1]
    return k, v


def _env_file(data: bytes, path: str, secret: bool = False) -> List[Tuple[str, str]]:
    """kv.go keyValuesFromLines: lines as bufio.Scanner cuts them (a trailing CR dropped, the
    last line's too), each valid UTF-8, one BOM stripped from line 1, leading space trimmed,
    blank and '#' lines skipped, split on the first '='; a line whose key is empty ("=2")
    is skipped too (its pair has no key)."""
    out = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            if secret:   # a Secret's line is its value: never in a message (kzgit.diff.redact)
                raise BuildError(f"line {i + 1} has invalid utf8 bytes (a Secret's: not shown)") from None
            # Go's %d of the line's bytes, then the line as text
            shown = raw.decode("utf-8", "surrogateescape")
            raise BuildError(f"line [{' '.join(str(b) for b in raw)}] has invalid utf8 bytes : "
                             f"{shown}") from None
        if i == 0 and line.startswith("\ufeff"):
            line = line[1:]
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        k, sep, v = line.partition("=")
        if not k:
            continue
        # key validation is a no-op in kustomize (api/internal/validate/fieldvalidator.go)
        out.append((k, v))
    return out


def _file_source(src: str) -> Tuple[str, str]:
    # kv.go parseFileSource: [key=]path; more than one '=' is an error
    if "=" not in src:
        return os.path.basename(src), src
    parts = src.split("=")
    if len(parts) != 2:
        raise BuildError(f"key names or file paths cannot contain '=': {src}")
    k, p = parts
    if not k:
        raise BuildError(f"key name for file path {p} missing")
    if not p:
        raise BuildError(f"file path for key name {k} missing")
    return k, p


def _go_list(items: List[Any]) -> str:
    """Go's ``%v`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def _hidden(literal: Any) -> str:
    """A Secret's literal source as messages show it: its key, never its value."""
    key, sep, _ = str(literal).partition("=")
    return f"{key}=<redacted>" if sep and key else "<redacted>"


def load_pairs(args: Dict[str, Any], loader: Loader, secret: bool = False) -> List[Tuple[str, bytes | str]]:
    """The key/value pairs of a generator, in kustomize's order: env files, literals, files.

    Errors carry kustomize's prefixes (api/kv/kv.go Load, api/internal/generators/utils.go
    makeValidatedDataMap): ``loading KV pairs: env source files: [a.env]: ...``.  For a
    ``secret`` they show the keys of literal sources, not their values (kustomize quotes
    them whole; kzgit's messages reach CI logs, see :mod:`kzgit.diff.redact`).
    """
    pairs: List[Tuple[str, Any]] = []
    envs = args.get("envs") or []
    literals = args.get("literals") or []
    files = args.get("files") or []
    try:
        try:
            for env in envs:
                pairs.extend(_env_file(loader.load(env), env, secret))
        except BuildError as e:
            raise BuildError(f"env source files: {_go_list(envs)}: {e}") from None
        try:
            pairs.extend(_literal(lit) for lit in literals)
        except BuildError as e:
            if secret:
                bad = next((lit for lit in literals if "=" not in str(lit) or str(lit).startswith("=")), "")
                raise BuildError(f"literal sources {_go_list([_hidden(x) for x in literals])}: "
                                 f"invalid literal source {_hidden(bad)}, expected key=value") from None
            raise BuildError(f"literal sources {_go_list(literals)}: {e}") from None
        try:
            for fs in files:
                k, p = _file_source(fs)
                pairs.append((k, loader.load(p)))
        except BuildError as e:
            raise BuildError(f"file sources: {_go_list(files)}: {e}") from None
    except BuildError as e:
        raise BuildError(f"loading KV pairs: {e}") from None
    seen = set()
    for k, _ in pairs:
        if k in seen:
            # utils.go says "configmap" for secrets too
            raise BuildError(f"configmap {args.get('name') or ''} illegally repeats the key `{k}`")
        seen.add(k)
    return pairs


def encode_base64(b: bytes) -> str:
    """kyaml datamap.go encodeBase64: wrapped at 70 chars, each line ending in \\n when wrapped."""
    enc = base64.b64encode(b).decode("ascii")
    if len(enc) < 70:
        return enc
    return "".join(enc[i:i + 70] + "\n" for i in range(0, len(enc), 70))


def _as_bytes(v: Any) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8")


def merge_options(local: Optional[Dict[str, Any]], glob: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """types.MergeGlobalOptionsIntoLocal: local keys win; booleans OR-ed."""
    local, glob = local or {}, glob or {}
    labels = dict(glob.get("labels") or {})
    labels.update(local.get("labels") or {})
    ann = dict(glob.get("annotations") or {})
    ann.update(local.get("annotations") or {})
    return {"labels": labels, "annotations": ann,
            "disableNameSuffixHash": bool(local.get("disableNameSuffixHash") or glob.get("disableNameSuffixHash")),
            "immutable": bool(local.get("immutable") or glob.get("immutable"))}


def _base(kind: str, args: Dict[str, Any], opts: Dict[str, Any]) -> Dict[str, Any]:
    if not args.get("name"):
        # generators/utils.go makeBaseNode (the wording says configmap for Secrets too)
        raise BuildError("a configmap must have a name")
    md: Dict[str, Any] = {"name": args["name"]}
    if args.get("namespace"):
        md["namespace"] = args["namespace"]
    if opts["labels"]:
        md["labels"] = {k: opts["labels"][k] for k in sorted(opts["labels"])}
    if opts["annotations"]:
        md["annotations"] = {k: opts["annotations"][k] for k in sorted(opts["annotations"])}
    return {"apiVersion": "v1", "kind": kind, "metadata": md}


def _finish(obj: Dict[str, Any], args: Dict[str, Any], opts: Dict[str, Any], source: str) -> Resource:
    if opts["immutable"]:
        obj["immutable"] = True
    r = Resource(obj, source)
    r.needs_hash = not opts["disableNameSuffixHash"]
    # types.NewGenerationBehavior: anything but merge/replace is "unspecified", i.e. create
    behavior = args.get("behavior") or "create"
    r.behavior = behavior if behavior in ("merge", "replace") else "create"
    return r


def make_configmap(args: Dict[str, Any], loader: Loader, global_opts: Optional[Dict[str, Any]], source: str) -> Resource:
    opts = merge_options(args.get("options"), global_opts)
    obj = _base("ConfigMap", args, opts)
    data: Dict[str, str] = {}
    binary: Dict[str, str] = {}
    for k, v in load_pairs(args, loader):
        if isinstance(v, bytes):
            try:
                data[k] = v.decode("utf-8")
            except UnicodeDecodeError:
                binary[k] = encode_base64(v)
        else:
            data[k] = v
    if data:
        obj["data"] = data
    if binary:
        obj["binaryData"] = binary
    return _finish(obj, args, opts, source)


def make_secret(args: Dict[str, Any], loader: Loader, global_opts: Optional[Dict[str, Any]], source: str) -> Resource:
    opts = merge_options(args.get("options"), global_opts)
    obj = _base("Secret", args, opts)
    obj["type"] = args.get("type") or "Opaque"
    obj["data"] = {k: encode_base64(_as_bytes(v)) for k, v in load_pairs(args, loader, secret=True)}
    return _finish(obj, args, opts, source)
