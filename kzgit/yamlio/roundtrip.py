"""ruamel.yaml in round-trip mode, for the commands that edit a file in place and keep all that
is not theirs (``kzgit localize``, ``kzgit fix``): they parse with it to learn where each key and
value is, and splice their edits into the original text."""
from __future__ import annotations

from ruamel.yaml import YAML

__all__ = ["round_trip", "indent_of"]


def round_trip() -> YAML:
    """A round-trip reader that keeps quotes and, as kustomize's reader, duplicate keys."""
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.allow_duplicate_keys = True
    return y


def indent_of(line: str) -> int:
    """The spaces a line starts with."""
    return len(line) - len(line.lstrip(" "))
