"""Field-spec paths split as kyaml's PathSplitter splits them (kzgit.resource.fieldspec)."""
from __future__ import annotations

import pytest

from kzgit.resource.fieldspec import split_path


@pytest.mark.parametrize("path, segments", [
    ("spec/template/metadata/labels", ["spec", "template", "metadata", "labels"]),
    ("spec/containers[]/image", ["spec", "containers[]", "image"]),
    ("a//b/", ["a", "", "b", ""]),                          # empty segments are kept
    ("", [""]),
    ("metadata/annotations/example.com\\/owner", ["metadata", "annotations", "example.com/owner"]),
    ("a\\b/c", ["a\\b", "c"]),                              # a backslash escapes "/" only
    ("x\\/", ["x/"]),
])
def test_split_path(path: str, segments: list) -> None:
    assert split_path(path) == segments
