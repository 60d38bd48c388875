"""Which step of a build set each field of each resource: the record ``kzgit explain`` reads.

kustomize tracks provenance per resource at most (``buildMetadata: [originAnnotations,
transformerAnnotations]`` names a resource's first file and the transformers that touched
it); a value's history needs more.  While a :class:`Tracer` is set (:data:`TRACER`), the
pipeline runs every phase of a build (the resources of one file, one generator entry, one
transformer entry, the name references, the hash suffixes...) through :meth:`Tracer.phase`:
each resource's fields are flattened before and after, and every leaf the phase added or
changed gets the phase's :class:`Step`.  A resource first seen in a phase was made by it.

The record is kept beside the build, never in it: the output is byte for byte what the
build prints without a tracer.  Nothing is recorded (and nothing costs) without one.
"""
from __future__ import annotations

import contextlib
import contextvars
import json

from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union
    from kzgit.resource import Resource
    Path = Tuple[Union[str, int], ...]

__all__ = ["TRACER", "Step", "Tracer", "flatten", "item_keys", "made", "path_text", "phase"]


class Step(Record):
    """One phase of a build: what ran (``kind``: ``resource``, ``generator``, ``patch``,
    a builtin transformer's kustomization field, ``nameReference``, ``hashSuffix``,
    ``plugin``...), configured where (the kustomization file, its field and entry index), and
    for a file it read (a resource file, a patch file) that file."""

    __slots__ = ("kind", "kfile", "field", "index", "file", "detail")

    def __init__(self, kind: str, kfile: str = "", field: str = "", index: Optional[int] = None,
                 file: str = "", detail: str = "") -> None:
        self.kind = kind
        self.kfile = kfile      # absolute path of the kustomization that configured it
        self.field = field      # its field: "patches", "images", "resources"...
        self.index = index      # the entry of that field, when the field is a list
        self.file = file        # absolute path of the file the step read, if any
        self.detail = detail    # what else names it (a generator's name, a plugin's kind)


class Tracer:
    """The history of every leaf of every resource of one build, by resource object."""

    def __init__(self) -> None:
        self._last: Dict[int, Dict[Path, Any]] = {}          # id(resource) -> its flattened fields
        self._text: Dict[int, str] = {}                      # id(resource) -> its JSON, to skip the unchanged
        self._keep: Dict[int, Resource] = {}                 # ids stay valid while kept here
        self.history: Dict[int, Dict[Path, List[Step]]] = {}

    @contextlib.contextmanager
    def phase(self, resources: Callable[[], Iterable[Resource]], step: Step) -> Iterator[None]:
        """Attribute to ``step`` what changes in ``resources()`` (asked before and after: a
        phase may add resources) while the block runs.  Every change of a resource happens in a
        phase, so only resources not seen yet are read before it."""
        self.settle([r for r in resources() if id(r) not in self._last])
        yield
        self.settle(resources(), step)

    def settle(self, resources: Iterable[Resource], step: Optional[Step] = None) -> None:
        """Record every leaf of ``resources`` that differs from what was last seen (all of a
        resource seen for the first time) as set by ``step`` (None: before any phase, "unknown")."""
        for r in list(resources):
            key = id(r)
            # the JSON text first (C speed): a resource the phase did not touch is not flattened
            text = json.dumps(r.obj, default=str)
            if self._text.get(key) == text and key in self._last:
                continue
            self._text[key] = text
            flat = flatten(r.obj)
            before = self._last.get(key)
            hist = self.history.setdefault(key, {})
            self._keep[key] = r
            if step is not None or before is None:
                made = step if step is not None else Step("unknown")
                for p, v in flat.items():
                    if before is None or p not in before or before[p] != v or type(before[p]) is not type(v):
                        hist.setdefault(p, []).append(made)
            self._last[key] = flat

    def replaced(self, old: Resource, new: Resource) -> None:
        """``new`` (a generator's output, recorded by :func:`made`) took ``old``'s place, merged
        or replaced: a leaf keeps ``old``'s history, and the generator's step is added where
        it changed or added the value."""
        own = self.history.get(id(new), {})
        before = self._last.get(id(old), {})
        merged = {p: list(s) for p, s in self.history.get(id(old), {}).items()}
        flat = flatten(new.obj)
        for p, v in flat.items():
            if p not in before or before[p] != v or type(before[p]) is not type(v):
                merged.setdefault(p, []).extend(own.get(p, []))
        self.history[id(new)] = merged
        self._last[id(new)] = flat
        self._text[id(new)] = json.dumps(new.obj, default=str)
        self._keep[id(new)] = new

    def of(self, r: Resource) -> Dict[Path, List[Step]]:
        """The history of ``r``'s leaves, oldest step first."""
        return self.history.get(id(r), {})


#: The tracer of the running build, set by ``kzgit explain`` only.
TRACER: "contextvars.ContextVar[Optional[Tracer]]" = contextvars.ContextVar("kzgit_tracer", default=None)


@contextlib.contextmanager
def phase(resources: Callable[[], Iterable[Resource]], step: Step) -> Iterator[None]:
    """:meth:`Tracer.phase` of the running tracer, or nothing at all without one."""
    t = TRACER.get()
    if t is None:
        yield
        return
    with t.phase(resources, step):
        yield


def made(resources: Iterable[Resource], step: Step) -> None:
    """``resources`` (new) were made by ``step``, when a tracer runs."""
    t = TRACER.get()
    if t is not None:
        t.settle(resources, step)


def flatten(obj: Any, prefix: Path = ()) -> Dict[Path, Any]:
    """Every leaf of ``obj`` by path: a mapping's key, a list item's index, or ``[name=x]``
    (kustomize's field-path form) when every item is a mapping with a distinct ``name``, so a
    container keeps its path when another is added before it.  An empty mapping or list is a
    leaf (its value)."""
    out: Dict[Path, Any] = {}
    _flatten(obj, prefix, out)
    return out


def _flatten(obj: Any, prefix: Path, out: Dict[Path, Any]) -> None:
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            _flatten(v, prefix + (str(k),), out)
    elif isinstance(obj, list) and obj:
        for key, v in zip(item_keys(obj), obj):
            _flatten(v, prefix + (key,), out)
    else:
        out[prefix] = obj


def item_keys(items: List[Any]) -> List[Union[str, int]]:
    """The path part of each item of a list: ``[name=x]`` when every item is a mapping with a
    distinct string ``name`` (kustomize's field-path form), else its index."""
    names = [x.get("name") for x in items if isinstance(x, dict)]
    if len(names) == len(items) and all(isinstance(n, str) for n in names) \
            and len(set(names)) == len(names):
        return [f"[name={n}]" for n in names]
    return list(range(len(items)))


def path_text(path: Path) -> str:
    """A path as kustomize writes field paths: ``spec.template.spec.containers.[name=web].image``
    (a list index as ``0``)."""
    return ".".join(str(p) for p in path)
