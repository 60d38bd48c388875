"""The fields of the resource model's tuples (:class:`~kzgit.resource.Gvk`,
:class:`~kzgit.resource.ResId`, :class:`~kzgit.resource.fieldspec.FieldSpec`), which subclass
these to add their methods.

Type checkers see ``typing.NamedTuple`` classes; at run time they are the
``collections.namedtuple`` classes ``typing.NamedTuple`` would make, so that a build does not
import typing (tests/cli/test_cli_startup.py).
"""
from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import NamedTuple

    class GvkFields(NamedTuple):
        group: str
        version: str
        kind: str

    class ResIdFields(NamedTuple):
        group: str
        version: str
        kind: str
        name: str
        namespace: str

    class FieldSpecFields(NamedTuple):
        group: str
        version: str
        kind: str
        path: str
        create: bool
else:
    GvkFields = collections.namedtuple("Gvk", "group version kind")
    ResIdFields = collections.namedtuple("ResId", "group version kind name namespace")
    FieldSpecFields = collections.namedtuple("FieldSpec", "group version kind path create")
