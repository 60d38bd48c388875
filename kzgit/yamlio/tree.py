"""Copying loaded documents.

Loaded YAML is plain ``dict``/``list`` trees over immutable scalars, so a
structural copy is all a deep copy has to do.  ``copy.deepcopy`` keeps a memo
of every object for shared references and costs several times more; on a
3,000-resource build the copies made for patches and cached bases are on the
hot path.  Aliased nodes become independent copies, which is what a later
in-place edit of one of them needs (kyaml expands aliases before editing).
"""
from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, List, Optional, Tuple


def copy_tree(value: Any) -> Any:
    """A copy of ``value`` sharing no dict or list with it."""
    if isinstance(value, dict):
        out = {k: (copy_tree(v) if isinstance(v, _CONTAINERS) else v) for k, v in value.items()}
        if value.__class__ is SpelledDict:
            sd = SpelledDict(out)
            sd.spelling = dict(value.spelling)
            return sd
        if value.__class__ is DupKeys:
            dk = DupKeys(out)
            dk.spelling = dict(value.spelling)
            dk.duplicates = list(value.duplicates)
            dk.last = dict(value.last)
            dk.last_spelling = dict(value.last_spelling)
            return dk
        return out
    if isinstance(value, list):
        return [copy_tree(v) if isinstance(v, _CONTAINERS) else v for v in value]
    return value


_CONTAINERS = (dict, list)

# kyaml's node kinds, spelled as its errors print them ("expected ScalarNode but got ...").
MAPPING, SEQUENCE, SCALAR = "MappingNode", "SequenceNode", "ScalarNode"


def node_kind(value: Any) -> str:
    """The kind of the yaml.Node a decoded value stands for (a null is a scalar node)."""
    if isinstance(value, dict):
        return MAPPING
    if isinstance(value, list):
        return SEQUENCE
    return SCALAR


class SpelledDict(dict):
    """A mapping that remembers the source text of some plain scalar values.

    kzgit keeps typed values, kustomize keeps yaml nodes, and two steps of a
    build read a node's *text*:

    * kyaml ``merge2.go`` ``VisitMap`` (every strategic merge patch): a null
      the patch does not mention survives only when its text is not empty
      (``x: null`` and ``x: ~`` stay, a bare ``x:`` goes);
    * ``Resource.RemoveBuildAnnotations`` at the end of a build re-sets the
      annotations from ``GetAnnotations`` (``rnode.go getMapFromMeta``), i.e.
      from each value's text: ``1.50``, ``0x10``, ``~`` and ``2021-01-01`` stay
      as written, where the value would print ``1.5``, ``16``, ``null`` and
      ``2021-01-01T00:00:00Z``.

    The loader makes one only for a mapping with such a value (one whose text
    :func:`canonical_text` would not give back), so most mappings are plain
    dicts.  ``spelling`` maps a key to ``(text, value when loaded)``;
    :func:`spelled` returns the text only while the value is unchanged.
    Copies made with :func:`copy_tree` or ``copy.deepcopy`` keep it; JSON
    patches rebuild plain dicts, as kustomize rebuilds the node from JSON.
    """

    __slots__ = ("spelling",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spelling: Dict[Any, Tuple[str, Any]] = {}


class DupKeys(SpelledDict):
    """A strategic-merge patch's mapping that held a key twice (the first value kept).

    kyaml keeps the patch as a node: lookups find the first key, so a merge into an existing
    mapping takes the first value, but a mapping the patch adds whole keeps both keys, and
    kustomize fails when it later decodes the resource.  ``duplicates`` holds that error.
    Its ``spelling`` holds the texts of the first values (what a merge copies), ``last`` and
    ``last_spelling`` the last ones (what :meth:`last_wins` gives).
    """

    __slots__ = ("duplicates", "last", "last_spelling")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.duplicates: List[str] = []
        self.last: Dict[str, Any] = {}  # a duplicated key's last value
        self.last_spelling: Dict[Any, Tuple[str, Any]] = {}  # and its text, as ``spelling``

    def clear_first(self, key: Any) -> bool:
        """kyaml FieldClearer removes the first field of that name: the last one is left, no
        longer written twice.  False when ``key`` is not a duplicated key."""
        if key not in self.last:
            return False
        self[key] = self.last.pop(key)
        if key in self.last_spelling:
            self.spelling[key] = self.last_spelling.pop(key)
        else:
            self.spelling.pop(key, None)
        needle = f"mapping key {json.dumps(key, ensure_ascii=False)} already"
        self.duplicates = [d for d in self.duplicates if needle not in d]
        return True

    def last_wins(self) -> Dict[Any, Any]:
        """The mapping as a decoder into a Go map reads it: the last value of each key, each
        value's text kept (GetAnnotations reads the texts)."""
        out = SpelledDict({**self, **self.last})
        out.spelling = {k: t for k, t in self.spelling.items() if k not in self.last}
        out.spelling.update(self.last_spelling)
        return out


class LazyError(str):
    """A scalar kyaml keeps as a node but kustomize cannot decode: ``.inf``/``.nan`` (no JSON
    number) or an explicit tag its text does not fit (``!!int f``).

    kustomize fails only when it decodes the resource (a JSON 6902 patch, the output), so a
    resource that is dropped first, or whose value a transformer rewrites (a name prefix),
    builds.  Until then the value reads as its text, as kyaml reads ``Node.Value``;
    ``error`` is the message decoding gives.
    """

    __slots__ = ("error",)
    error: str

    def __new__(cls, text: str, error: str) -> "LazyError":
        self = super().__new__(cls, text)
        self.error = error
        return self


def undecodable(value: Any) -> Optional[str]:
    """Why decoding ``value`` into Go values fails (a key still written twice, a
    :class:`LazyError`), or None."""
    if value.__class__ is LazyError:
        return str(value.error)
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if v.__class__ is DupKeys and v.duplicates:
                return v.duplicates[0]
            items: Iterable[Any] = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        for x in items:
            if isinstance(x, (dict, list)):
                stack.append(x)
            elif x.__class__ is LazyError:
                return str(x.error)
    return None


def canonical_text(v: Any) -> str:
    """The text kzgit would give a loaded scalar value back (``None`` → ``null``)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        # as the annotation stringification prints a float without its text
        return str(int(v)) if v.is_integer() else repr(v)
    return str(v)


def spelled(d: Any, key: Any) -> Optional[str]:
    """The source text of ``d[key]`` when ``d`` recorded one and the value is unchanged."""
    if not isinstance(d, SpelledDict):
        return None
    s = d.spelling.get(key)
    if s is None or key not in d:
        return None
    v = d[key]
    if v is s[1] or (type(v) is type(s[1]) and v == s[1]):
        return s[0]
    return None


class SharedStr(str):
    """A label or annotation value that one transformer pass wrote at several places of a
    resource.

    kyaml builds that value's node once per resource and key (``filtersutil.SetEntry``) and
    ``FieldSetter`` appends the same node wherever the field is new, so ``metadata.labels`` and
    ``spec.selector`` share it.  Setting the field in place later (``SetYNode``: another labels
    or annotations pass, a strategic merge patch, a replacement) then changes every place at
    once; kubectl: a base's ``commonLabels: {env: a}`` and an overlay's ``labels`` without
    selectors, ``env: b``, give a selector ``env: b``.  A JSON patch rebuilds the resource from
    JSON and ends the sharing.  Instances stand for the node by identity: :func:`share_update`
    rewrites all places holding one.
    """

    __slots__ = ()


def share_update(root: Any, old: SharedStr, new: Any) -> Any:
    """Replace, everywhere in ``root``, the value ``old`` (by identity) with ``new``; a str
    becomes a fresh :class:`SharedStr` so the places stay shared.  Returns what was written."""
    if isinstance(new, str):
        new = SharedStr(new)
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if v is old:
                    node[k] = new
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if v is old:
                    node[i] = new
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return new
