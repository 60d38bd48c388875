"""What a Flux source artifact leaves out: fluxcd/pkg sourceignore (go-git's gitignore
matching), with its default patterns, .sourceignore files in subdirectories and spec.ignore."""
from __future__ import annotations

from typing import Dict, Optional

import pytest

from kzgit.gitops.sourceignore import excluded_path, repository_matcher


def matcher(files: Dict[str, str], spec_ignore: Optional[str] = None):  # type: ignore[no-untyped-def]
    data = {k: v.encode() for k, v in files.items()}
    return repository_matcher(list(data), data.get, spec_ignore)


@pytest.mark.parametrize("path,want", [
    ("apps/web/deploy.yaml", False),
    (".github/workflows/ci.yaml", True),        # ExcludeCI: .github/
    ("docs/logo.png", True),                    # ExcludeExt
    ("apps/.sops.yaml", True),                  # ExcludeExtra: **/.sops.yaml
    ("apps/cloudbuild.yaml", True),             # a simple name matches at any depth
    (".gitignore", True),
    ("apps/web/.flux.yaml", True),
])
def test_default_patterns(path: str, want: bool) -> None:
    assert excluded_path(matcher({}), path) is want


def test_sourceignore_files_and_spec_ignore() -> None:
    m = matcher({
        ".sourceignore": "# comment\n/.archive/\n*.md\n",
        "apps/.sourceignore": "drafts/\n!keep.md\n",
    }, spec_ignore="/clusters/staging/\n")
    assert excluded_path(m, ".archive/old/ks.yaml")
    assert not excluded_path(m, "apps/.archive/ks.yaml")        # anchored at its domain's top
    assert excluded_path(m, "README.md")
    assert not excluded_path(m, "apps/keep.md")                 # re-included below apps/
    assert excluded_path(m, "other/keep.md")                     # not in apps/'s domain
    assert excluded_path(m, "apps/drafts/a.yaml")               # a directory-only pattern
    assert not excluded_path(m, "apps/drafts")                   # ... never the file 'drafts'
    assert excluded_path(m, "clusters/staging/apps.yaml")
    assert not excluded_path(m, "clusters/prod/apps.yaml")


def test_glob_with_double_star() -> None:
    m = matcher({".sourceignore": "apps/**/secret.yaml\n"})
    assert excluded_path(m, "apps/a/b/secret.yaml")
    assert excluded_path(m, "apps/secret.yaml")
    assert not excluded_path(m, "other/secret.yaml")


def test_glob_names_filter_agrees_with_the_walk() -> None:
    # Pattern.names turns a path down before pattern.go's walk when it lacks one of the
    # glob's plain elements; over every pattern and path of a small alphabet the answer is
    # the walk's own
    import itertools

    from kzgit.gitops.sourceignore import Pattern
    elements = ["a", "b", ".sops.yaml", "x.md"]
    paths = [list(p) for n in range(1, 4) for p in itertools.product(elements, repeat=n)]
    texts = ["**/.sops.yaml", "a/**/b", "/a/b", "a/*/x.md", "**/a/**", "a/b/", "*/b",
             "**/x.md/", "!a/**/b", "a/[ab]/b", "\\a/b", "a/**"]
    checked = 0
    for text in texts:
        fast = Pattern(text, ())
        slow = Pattern(text, ())
        slow.names = frozenset()
        for path, is_dir in itertools.product(paths, (False, True)):
            assert fast.match(path, is_dir) == slow.match(path, is_dir), (text, path, is_dir)
            checked += fast.match(path, is_dir) != 0
    assert checked > 50   # the alphabet reaches matches, not only refusals


@pytest.mark.parametrize("ignore", ["", "drafts/\n*.md\n", "!keep.md\nsecret*/\n", "a/**/b/\n"])
def test_kind_matters_only_where_a_directory_pattern_could_tell(ignore: str) -> None:
    # IgnoreFS asks the disk whether a path is a directory only where Matcher.kind_matters
    # says the answer could change; elsewhere both answers are the same
    import itertools
    m = matcher({".sourceignore": ignore} if ignore else {})
    names = [".git", ".github", "drafts", "secret1", "a", "b", "x.md", "keep.md", "deploy.yaml"]
    differ = 0
    for n in range(1, 4):
        for path in itertools.product(names, repeat=n):
            file_, dir_ = m.excluded(list(path), False), m.excluded(list(path), True)
            if not m.kind_matters(path[-1]):
                assert file_ == dir_, path
            differ += file_ != dir_
    assert differ > 0   # the directory-only patterns do tell some paths apart
