"""Name hash suffixes (api/hasher/hasher.go, api/internal/builtins/HashTransformer.go)."""
from __future__ import annotations


from kzgit.errors import UnsupportedError
from kzgit.resource import ResMap, Resource
from kzgit.yamlio import go_json_dumps

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict


# hasher.go encode(): sha256 hex, first 10 chars, then these substitutions so the
# suffix never looks like a number or a bad word.
_SUBST = str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"})


def _data(obj: Dict[str, Any]) -> Any:
    # hasher.go getNodeValues: a missing field hashes as "", a present map (even
    # an empty one, as a generated Secret without entries has) as that map.
    v = obj.get("data")
    return v if isinstance(v, dict) else (v or "")


def _hash_obj(r: Resource) -> Dict[str, Any]:
    obj = r.obj
    # The name is always "" -- hasher.go looks up the single key "metadata/name",
    # which never exists (a quirk kzgit keeps so the suffixes match).
    if r.kind == "ConfigMap":
        m: Dict[str, Any] = {"kind": "ConfigMap", "name": "", "data": _data(obj)}
        if isinstance(obj.get("binaryData"), dict):
            m["binaryData"] = obj["binaryData"]
        return m
    if r.kind == "Secret":
        m = {"kind": "Secret", "type": obj.get("type") or "", "name": "", "data": _data(obj)}
        if isinstance(obj.get("stringData"), dict):
            m["stringData"] = obj["stringData"]
        return m
    raise UnsupportedError(
        f"kzgit cannot compute kustomize's name hash for kind {r.kind} ({r.cur_id()}): kustomize hashes "
        "the raw YAML node of such resources, which is not reproducible")


def hash_suffix(r: Resource) -> str:
    text = go_json_dumps(_hash_obj(r))
    from kzgit.sha import sha256   # start-up: its hash modules load for generated resources only
    return sha256(text.encode("utf-8")).hexdigest()[:10].translate(_SUBST)


def add_hashes(resmap: ResMap) -> None:
    for r in resmap.resources():
        if r.needs_hash:
            h = hash_suffix(r)
            r.store_prev_id()
            r.name = f"{r.name}-{h}"
    resmap.invalidate()
