"""Patch/replacement target selection (api/types/selector.go, api/resmap/reswrangler.go Select);
label selector strings are parsed by :mod:`kzgit.resource.labels`."""
from __future__ import annotations

from kzgit.errors import BuildError
from kzgit.resource import ResMap, Resource
from kzgit.yamlio.tree import DupKeys, canonical_text, spelled

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Mapping, Optional
    from kzgit.resource.labels import Predicate

__all__ = ["Selector", "metadata_texts", "anchored"]


def anchored(pattern: Optional[str], field: str) -> Optional[Any]:
    """A selector field as kustomize compiles it, ``^(?:pattern)$`` with Go's ``regexp``
    (api/types/selector.go NewSelectorRegex), run by RE2 (:mod:`kzgit.gore`); None when
    empty.  A pattern Go refuses fails with kubectl's words, which quote the anchored form:
    ``error parsing regexp: missing closing ]: `[0-9)$```."""
    return _anchor(pattern, field)


def _anchor(pattern: Optional[str], field: str) -> Optional[Any]:
    if not pattern:
        return None
    from kzgit import gore   # start-up: only a build with a target selector loads RE2
    try:
        # Go's $ never matches before a final newline (a kind written "ConfigMap\n"): RE2's
        # neither, without (?m)
        return gore.compile("^(?:" + pattern + ")$")
    except gore.RegexError as e:
        raise BuildError(str(e)) from None


def metadata_texts(d: Mapping[str, Any]) -> Dict[str, str]:
    """Labels or annotations as kyaml's GetLabels/GetAnnotations give them to a selector:
    each value's node text (rnode.go getMapFromMeta), so ``true`` is "true", ``010`` stays
    "010" and a mapping or sequence is "".  Of a key written twice the last value counts,
    as in any map decoded from the node."""
    if d.__class__ is DupKeys:
        d = d.last_wins()
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
        # resWrangler.Select parses the label and annotation selectors for each resource that
        # got past namespace, name and gvk (Resource.MatchesLabelSelector): a selector that
        # does not parse fails only when some resource reaches it.
        self._label_text = spec.get("labelSelector") or ""
        self._annotation_text = spec.get("annotationSelector") or ""
        self._labels: Optional[Predicate] = None
        self._annotations: Optional[Predicate] = None

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.spec.items() if v)

    def matches(self, r: Resource) -> bool:
        cur, org = r.cur_id(), r.org_id()
        if self.namespace and not (self.namespace.test(org.effective_namespace())
                                   or self.namespace.test(cur.effective_namespace())):
            return False
        if self.name and not (self.name.test(org.name) or self.name.test(cur.name)):
            return False
        g = r.gvk
        if self.group and not self.group.test(g.group):
            return False
        if self.version and not self.version.test(g.version):
            return False
        if self.kind and not self.kind.test(g.kind):
            return False
        if self._label_text:
            if self._labels is None:
                # start-up: the selector grammar is loaded by the builds that use one
                from kzgit.resource.labels import parse_label_selector
                self._labels = parse_label_selector(self._label_text)
            if not self._labels(metadata_texts(r.labels())):
                return False
        if self._annotation_text:
            if self._annotations is None:
                from kzgit.resource.labels import parse_label_selector   # start-up: as above
                self._annotations = parse_label_selector(self._annotation_text)
            if not self._annotations(metadata_texts(r.annotations())):
                return False
        return True

    def select(self, resmap: ResMap) -> List[Resource]:
        return [r for r in resmap.resources() if self.matches(r)]
