"""kzgit.record: plain records behave as the dataclasses they replace."""
from __future__ import annotations

import copy
import os
import pickle
import stat
from pathlib import Path

import pytest

from kzgit.atomic import new_temp_file
from kzgit.options import BuildOptions, BuildResult
from kzgit.record import FrozenRecord, Record
from kzgit.remote._repospec import RepoSpec


class Point(Record):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Other(Record):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Frozen(FrozenRecord):
    __slots__ = ("a",)

    def __init__(self, a: str) -> None:
        object.__setattr__(self, "a", a)


def test_repr_equality_and_fields_are_a_dataclass_s() -> None:
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Point(1) == Point(1, 0) and Point(1) != Point(2)
    assert Point(1) != Other(1)   # another class is never equal, as with dataclasses
    assert Point.fields() == ("x", "y")
    with pytest.raises(TypeError):
        hash(Point(1))            # mutable and compared by value: unhashable


def test_replace_copies_and_refuses_unknown_fields() -> None:
    p = Point(1, 2)
    q = p.replace(y=5)
    assert (p, q) == (Point(1, 2), Point(1, 5))
    with pytest.raises(TypeError, match="no field 'z'"):
        p.replace(z=1)


def test_records_pickle_and_copy() -> None:
    for obj in (Point(1, [2]), Frozen("a"), BuildOptions(env=["A=1"]),
                RepoSpec(raw="r", host="file://", org_repo="/x", ref="main")):
        assert pickle.loads(pickle.dumps(obj)) == obj
        assert copy.copy(obj) == obj and copy.deepcopy(obj) == obj


def test_frozen_records_cannot_change_and_hash_by_value() -> None:
    f = Frozen("a")
    with pytest.raises(AttributeError):
        f.a = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.a
    assert hash(f) == hash(Frozen("a")) and {f: 1}[Frozen("a")] == 1
    assert f.replace(a="b") == Frozen("b") and f.a == "a"


def test_build_options_defaults_are_fresh_lists() -> None:
    a, b = BuildOptions(), BuildOptions()
    a.env.append("X=1")
    assert b.env == [] and a != b
    assert BuildResult([]).warnings == [] and BuildResult([]).warnings is not BuildResult([]).warnings
    assert "fs" in BuildOptions.fields() and BuildOptions(reorder="none").replace(fs=None).reorder == "none"


def test_new_temp_file_is_private_new_and_unique(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        made = [new_temp_file(str(tmp_path), ".t-") for _ in range(20)]
    finally:
        os.umask(old)
    for fd, _ in made:
        os.close(fd)
    paths = [p for _, p in made]
    assert len(set(paths)) == 20
    assert all(os.path.basename(p).startswith(".t-") and os.path.dirname(p) == str(tmp_path) for p in paths)
    assert {stat.S_IMODE(os.stat(p).st_mode) for p in paths} == {0o600}
