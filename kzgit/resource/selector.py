"""Patch/replacement target selection (api/types/selector.go, api/resmap/reswrangler.go Select)
and Kubernetes label selectors (k8s.io/apimachinery/pkg/labels, the string syntax)."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional

from kzgit.errors import BuildError
from kzgit.resource import ResMap, Resource
from kzgit.yamlio.tree import canonical_text, spelled

Predicate = Callable[[Dict[str, str]], bool]
_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|[^\s!=(),]+)")



# One requirement of a selector, bound to its key (and values) with functools.partial.
def _has(key: str, labels: Mapping[str, Any]) -> bool:
    return key in labels


def _lacks(key: str, labels: Mapping[str, Any]) -> bool:
    return key not in labels


def _equals(key: str, value: str, labels: Mapping[str, Any]) -> bool:
    return labels.get(key) == value


def _differs(key: str, value: str, labels: Mapping[str, Any]) -> bool:
    return labels.get(key) != value


def _in(key: str, values: FrozenSet[str], labels: Mapping[str, Any]) -> bool:
    return labels.get(key) in values


def _not_in(key: str, values: FrozenSet[str], labels: Mapping[str, Any]) -> bool:
    return labels.get(key) not in values


def parse_label_selector(text: str) -> Predicate:
    """The label selector string syntax: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``,
    ``a notin (x)``, ``a``, ``!a``, joined by commas."""
    toks = [m.group(1) for m in _TOKEN.finditer(text or "")]
    preds: List[Predicate] = []
    i = 0

    def bad(msg: str) -> BuildError:
        return BuildError(f"unable to parse requirement: {msg} in selector '{text}'")

    while i < len(toks):
        t = toks[i]
        if t == ",":
            i += 1
            continue
        if t == "!":
            key = toks[i + 1] if i + 1 < len(toks) else ""
            if not key or key in "(),=!":
                raise bad("missing key after '!'")
            preds.append(functools.partial(_lacks, key))
            i += 2
            continue
        key = t
        op = toks[i + 1] if i + 1 < len(toks) else None
        if op in ("=", "=="):
            val = toks[i + 2] if i + 2 < len(toks) and toks[i + 2] != "," else ""
            preds.append(functools.partial(_equals, key, val))
            i += 3 if val else 2
        elif op == "!=":
            val = toks[i + 2] if i + 2 < len(toks) and toks[i + 2] != "," else ""
            preds.append(functools.partial(_differs, key, val))
            i += 3 if val else 2
        elif op in ("in", "notin"):
            if i + 2 >= len(toks) or toks[i + 2] != "(":
                raise bad(f"expected '(' after '{op}'")
            j, vals = i + 3, set()
            while j < len(toks) and toks[j] != ")":
                if toks[j] != ",":
                    vals.add(toks[j])
                j += 1
            if j >= len(toks):
                raise bad("expected ')'")
            if op == "in":
                preds.append(functools.partial(_in, key, frozenset(vals)))
            else:
                preds.append(functools.partial(_not_in, key, frozenset(vals)))
            i = j + 1
        elif op is None or op == ",":
            preds.append(functools.partial(_has, key))
            i += 1
        else:
            raise bad(f"unexpected '{op}'")
    return lambda labels: all(p(labels) for p in preds)


def _anchor(pattern: Optional[str], field: str) -> Optional["re.Pattern[str]"]:
    if not pattern:
        return None
    try:
        return re.compile("^(?:" + pattern + ")$")
    except re.error as e:
        raise BuildError(f"invalid regular expression for {field} '{pattern}': {e}") from None


def metadata_texts(d: Mapping[str, Any]) -> Dict[str, str]:
    """Labels or annotations as kyaml's GetLabels/GetAnnotations give them to a selector:
    each value's node text (rnode.go getMapFromMeta), so ``true`` is "true", ``010`` stays
    "010" and a mapping or sequence is ""."""
    out: Dict[str, str] = {}
    for k, v in d.items():
        if isinstance(v, str):
            text = spelled(d, k)  # a date keeps its text, not its RFC 3339 form
            out[str(k)] = v if text is None else text
        elif isinstance(v, (dict, list)):
            out[str(k)] = ""
        else:
            text = spelled(d, k)
            out[str(k)] = canonical_text(v) if text is None else text
    return out


class Selector:
    """A ``target:`` of patches: regexes on gvk/name/namespace plus label/annotation selectors."""

    def __init__(self, spec: Dict[str, Any], where: str = "") -> None:
        if not isinstance(spec, dict):
            raise BuildError(f"{where}: target must be a mapping")
        self.spec = spec
        self.group = _anchor(spec.get("group"), "group")
        self.version = _anchor(spec.get("version"), "version")
        self.kind = _anchor(spec.get("kind"), "kind")
        self.name = _anchor(spec.get("name"), "name")
        self.namespace = _anchor(spec.get("namespace"), "namespace")
        self.labels = parse_label_selector(spec["labelSelector"]) if spec.get("labelSelector") else None
        self.annotations = parse_label_selector(spec["annotationSelector"]) if spec.get("annotationSelector") else None

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.spec.items() if v)

    def matches(self, r: Resource) -> bool:
        cur, org = r.cur_id(), r.org_id()
        if self.namespace and not (self.namespace.match(org.effective_namespace())
                                   or self.namespace.match(cur.effective_namespace())):
            return False
        if self.name and not (self.name.match(org.name) or self.name.match(cur.name)):
            return False
        g = r.gvk
        if self.group and not self.group.match(g.group):
            return False
        if self.version and not self.version.match(g.version):
            return False
        if self.kind and not self.kind.match(g.kind):
            return False
        if self.labels and not self.labels(metadata_texts(r.labels())):
            return False
        if self.annotations and not self.annotations(metadata_texts(r.annotations())):
            return False
        return True

    def select(self, resmap: ResMap) -> List[Resource]:
        return [r for r in resmap.resources() if self.matches(r)]
