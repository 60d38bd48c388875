"""Plain record classes: what ``dataclasses`` gives kzgit, without importing it.

``import dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``):
about a tenth of the CPU time of a small ``kzgit build``, paid by every run.  The
records on the path of every build (the build's options and result, the render
cache's answer, a plugin's helpers) derive from :class:`Record` instead: each lists
its fields in ``__slots__`` and writes its own ``__init__`` (so type checkers see the
signature); the base adds the rest, with ``dataclasses``' semantics.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover - a TypeVar bound by name costs a compile() at import
    from typing import Any, Tuple
    from typing import TypeVar
    R = TypeVar("R", bound="Record")


class Record:
    """``repr``, equality (same class, equal fields in order) and :meth:`replace`."""

    __slots__: Tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    @classmethod
    def fields(cls) -> Tuple[str, ...]:
        """The field names, in declaration order (``dataclasses.fields``)."""
        return cls.__slots__

    def _values(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __getstate__(self) -> Tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: Tuple[Any, ...]) -> None:   # pickle and copy, frozen or not
        for n, v in zip(self.__slots__, state):
            object.__setattr__(self, n, v)

    def replace(self: R, **changes: Any) -> R:
        """A copy with ``changes`` applied (``dataclasses.replace``; fields only)."""
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {sorted(unknown)[0]!r}")
        new = object.__new__(type(self))
        for n in self.__slots__:
            object.__setattr__(new, n, changes[n] if n in changes else getattr(self, n))
        return new


class FrozenRecord(Record):
    """A :class:`Record` that cannot change once made, and is hashable (a frozen dataclass).

    Its ``__init__`` sets fields with ``object.__setattr__``.
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__qualname__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__qualname__}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())
