"""namePrefix / nameSuffix: PrefixTransformer, SuffixTransformer (api/internal/builtins/PrefixTransformer.go).

The prefix goes on every field the specs select (default ``metadata/name``);
CRDs, APIServices and Namespaces are skipped (``prefixFieldSpecsToSkip``).
Each renamed resource records the prefix and its previous id for name
references.  As in kustomize the gvk test uses the resource's *original* id.
"""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.resource import Gvk, ResMap
from kzgit.resource.fieldspec import apply_fieldspec
from kzgit.yamlio.tree import SCALAR, node_kind
from kzgit.builtins.common import fieldspecs_from_config

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict

_SKIP = [Gvk("", "", "CustomResourceDefinition"), Gvk("apiregistration.k8s.io", "", "APIService"),
         Gvk("", "", "Namespace")]


def _run(resmap: ResMap, config: Dict[str, Any], key: str, where: str) -> None:
    affix = config.get(key) or ""
    if not isinstance(affix, str):
        raise BuildError(f"{where}: '{key}' must be a string")
    if config.get("fieldSpecs") is None:
        raise BuildError(f"{where}: fieldSpecs is not expected to be nil")
    specs = fieldspecs_from_config(config, where=where)
    for r in resmap.resources():
        org = r.org_id()
        if any(org.gvk.is_selected(s) for s in _SKIP):
            continue
        for fs in specs:
            if not org.gvk.is_selected(Gvk(fs.group, fs.version, fs.kind)):
                continue
            if fs.path == "metadata/name":
                (r.prefixes if key == "prefix" else r.suffixes).append(affix)
                if affix:
                    r.store_prev_id()
            # CreateKind ScalarNode (api/filters/prefix/prefix.go): a spec with create adds it
            apply_fieldspec(r.obj, fs, _affixer(affix, key == "prefix"), SCALAR, r.cur_id)
    resmap.invalidate()


def _affixer(affix: str, front: bool) -> Callable[[Any], str]:
    """The setter: filtersutil.SetScalar (api/filters/prefix, suffix) goes through
    yaml.FieldSetter, whose ErrorIfInvalid refuses a mapping or a sequence; a null takes the
    affix alone.  The walker hands over a scalar's text as written (p-0123, not p-83)."""
    def fn(v: Any) -> str:
        if isinstance(v, (dict, list)):
            raise BuildError(f"wrong node kind: expected {SCALAR} but got {node_kind(v)}")
        text = "" if v is None else str(v)
        return affix + text if front else text + affix
    return fn


def prefix(resmap: ResMap, config: Dict[str, Any], where: str = "PrefixTransformer") -> None:
    _run(resmap, config, "prefix", where)


def suffix(resmap: ResMap, config: Dict[str, Any], where: str = "SuffixTransformer") -> None:
    _run(resmap, config, "suffix", where)
