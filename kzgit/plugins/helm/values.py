"""The values file kustomize hands to helm: the chart's values merged with ``valuesInline``
as kyaml's merge2 merges nodes (HelmChartInflationGenerator.go createNewMergedValuesFile)."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import yaml

from kzgit.errors import BuildError, KzgitError
from kzgit.patch.smp import merge
from kzgit.plugins.helm.chart import HelmChart
from kzgit.yamlio import dump, load_documents
from kzgit.yamlio.load import split_documents
from kzgit.yamlio.tree import copy_tree

__all__ = ["values_bytes"]


def values_bytes(c: HelmChart, load_values_file: Callable[[], bytes]) -> bytes:
    """copyValuesFile, or createNewMergedValuesFile when valuesInline is not empty."""
    if not c.values_inline:
        return load_values_file()
    # valuesInline went through encoding/json into interface{}: every number is a float64
    inline = _as_go_float64(c.values_inline)
    if c.values_merge == "replace":
        # yaml.Marshal(ValuesInline): sigs.k8s.io/yaml, keys sorted
        return dump(inline).encode("utf-8")
    chart_values, view = _first_document(load_values_file(), c)
    if chart_values is None:
        chart_values = {}
    if not isinstance(chart_values, dict):
        raise BuildError(f"{c.label()}: could not merge values: the values file "
                         f"'{c.values_file}' is not a YAML mapping")
    chart_values = view.prune(chart_values)
    # merge2.Merge(src, dest) lets src win: override = the inline values win,
    # merge = the chart's values win
    try:
        if c.values_merge == "override":
            merged = merge(chart_values, inline, _NO_SCHEMA)
            view.drop_aliases(merged)
        else:
            view.refuse_aliases_in(inline)
            merged = merge(inline, chart_values, _NO_SCHEMA)
            view.drop_aliases(merged)   # an inline null there goes too
    except KzgitError as e:
        raise BuildError(f"{c.label()}: could not merge values: {e}") from None
    return dump(merged if merged is not None else {}).encode("utf-8")


def _as_go_float64(v: Any) -> Any:
    """Integers beyond float64's exact range lose precision, as in Go (they print rounded)."""
    if isinstance(v, dict):
        return {k: _as_go_float64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_go_float64(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
        return float(v)
    return v


Path = Tuple[str, ...]


class _KyamlView:
    """What kyaml's merge walker sees of the chart's values that a decoded value does not show.

    merge2 walks YAML *nodes*: a map value that is an alias (``*x``) is neither a map, a list
    nor a scalar to the walker, so the field is dropped, and ``<<: *x`` merge keys are dropped
    with it (their keys never were fields of the map); with ``valuesMerge: merge`` an inline
    value at such a field is a "wrong node kind" error.  Aliases inside lists survive (lists
    are replaced whole).  [verified with kubectl v1.32]
    """

    def __init__(self) -> None:
        self.aliases: List[Path] = []               # map fields whose value is an alias
        self.own_keys: Dict[Path, List[str]] = {}   # maps with an alias merge key: their own keys

    @classmethod
    def of(cls, text: str) -> "_KyamlView":
        view = cls()
        try:
            root = yaml.compose(text, Loader=yaml.CSafeLoader)
        except (yaml.YAMLError, RecursionError):
            return view
        if root is not None:
            try:
                view._visit(root, (), set())
            except RecursionError:
                return cls()
        return view

    def _visit(self, node: Any, path: Optional[Path], seen: "set[int]") -> None:
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            own: List[str] = []
            merge_alias = False
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                if id(k) not in seen:
                    self._visit(k, None, seen)
                is_alias = id(v) in seen
                if key == "<<" and k.tag == "tag:yaml.org,2002:merge":
                    merge_alias = merge_alias or is_alias
                    if not is_alias:
                        self._visit(v, None, seen)
                    continue
                if key is not None:
                    own.append(key)
                sub = path + (key,) if path is not None and key is not None else None
                if is_alias:
                    if sub is not None:
                        self.aliases.append(sub)
                else:
                    self._visit(v, sub, seen)
            if merge_alias and path is not None:
                self.own_keys[path] = own
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if id(item) not in seen:
                    self._visit(item, None, seen)

    @staticmethod
    def _parent(d: Any, path: Path) -> Any:
        for key in path[:-1]:
            if not isinstance(d, dict):
                return None
            d = _get_str_key(d, key)
        return d if isinstance(d, dict) else None

    def prune(self, values: Dict[str, Any]) -> Dict[str, Any]:
        if not self.aliases and not self.own_keys:
            return values
        values = copy_tree(values)
        for path, own in self.own_keys.items():
            m = values if not path else _get_str_key(self._parent(values, path) or {}, path[-1])
            if isinstance(m, dict):
                for key in [k for k in m if str(k) not in own]:
                    del m[key]
        self.drop_aliases(values)
        return values

    def drop_aliases(self, values: Any) -> None:
        for path in self.aliases:
            parent = self._parent(values, path)
            if parent is not None:
                for key in [k for k in parent if str(k) == path[-1]]:
                    del parent[key]

    def refuse_aliases_in(self, inline: Dict[str, Any]) -> None:
        for path in self.aliases:
            parent = self._parent(inline, path)
            if parent is not None and _get_str_key(parent, path[-1]) is not None:
                raise BuildError(f"wrong node kind: the chart's values have an alias (*anchor) "
                                 f"at '{'.'.join(path)}' where valuesInline sets a value")


def _get_str_key(d: Dict[Any, Any], key: str) -> Any:
    if key in d:
        return d[key]
    for k, v in d.items():
        if str(k) == key:
            return v
    return None


# merge2.Merge looks the schema up from the apiVersion/kind of the values (none, in practice);
# smp.merge does the same when given None.  Known difference: kustomize passes MergeOptions{}
# (lists grow by appending) where smp.merge prepends, as patches do; that only changes the
# order of schema-driven associative lists, i.e. embedded Kubernetes objects in values.
_NO_SCHEMA: Any = None


def _first_document(data: bytes, c: HelmChart) -> Tuple[Any, _KyamlView]:
    """kyaml.Parse: the first YAML document (go-yaml v3); no document at all is io.EOF."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    meaningful = [ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    if not meaningful:
        raise BuildError(f"{c.label()}: could not parse values file into rnode: EOF "
                         f"('{c.values_file}' is empty)")
    try:
        parts = split_documents(text, c.values_file)
        for part, _line in parts:
            if any(ln.strip() and not ln.lstrip().startswith("#") and ln.strip() != "---"
                   for ln in part.split("\n")):
                docs = load_documents(part, c.values_file)
                view = _KyamlView.of(part) if "*" in part else _KyamlView()
                return (docs[0] if docs else None), view
    except KzgitError as e:
        raise BuildError(f"{c.label()}: could not parse values file into rnode: {e}") from None
    return None, _KyamlView()

