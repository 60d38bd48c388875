"""Tables for the localize cores: where downloads go (util_test.go cases) and reference rewrites."""
from __future__ import annotations

import pytest

from kzgit.localize._paths import default_new_dir, loc_file_path, loc_root_path
from kzgit.localize._yaml import YamlText
from kzgit.remote import parse_repo_spec


@pytest.mark.parametrize("url, want", [
    # api/internal/localizer/util_test.go TestLocFilePath
    ("https://raw.githubusercontent.com/org/repo/ref/path/to/file.yaml",
     "localized-files/raw.githubusercontent.com/org/repo/ref/path/to/file.yaml"),
    ("http://host/path", "localized-files/host/path"),
    ("https://user:pw@host:8080/path/file?query#frag", "localized-files/host/path/file"),
    ("https://host/file%2Eyaml", "localized-files/host/file%2Eyaml"),
    ("https://host/path/blah/../to/foo/bar/../../file/./", "localized-files/host/path/to/file"),
    ("https://host/foo/bar/baz/../../../../file", "localized-files/host/file"),
    ("http://[::1]:80/colon/file.yaml", "localized-files/::1/colon/file.yaml"),
    ("https://host/*", "localized-files/host/*"),
    ("https://host/a b", "localized-files/host/a%20b"),
])
def test_loc_file_path(url: str, want: str) -> None:
    assert loc_file_path(url) == want


@pytest.mark.parametrize("url, want", [
    # util_test.go TestLocRootPath_URLComponents
    ("ssh://git@github.com/org/repo//path?ref=value", "localized-files/github.com/org/repo/value/path"),
    ("git@github.com:org/repo//path?ref=value", "localized-files/github.com/org/repo/value/path"),
    ("https://gitlab.com/org/repo//path?ref=value", "localized-files/gitlab.com/org/repo/value/path"),
    ("file:///abs/repo//path?ref=value", "localized-files/file-schemed/abs/repo/value/path"),
    ("https://[2001:4860:4860::8888]/org/repo//path?ref=value",
     "localized-files/2001:4860:4860::8888/org/repo/value/path"),
    ("https://localhost.com:8080/org/repo//path?ref=value", "localized-files/localhost.com/org/repo/value/path"),
    ("https://github.com/repo//path?ref=value", "localized-files/github.com/repo/value/path"),
    ("https://github.com/org1/org2/repo.git//path?ref=value", "localized-files/github.com/org1/org2/repo/value/path"),
    ("https://github.com/./../org/../org/repo.git//path?ref=value", "localized-files/github.com/org/repo/value/path"),
    ("https://github.com/org/repo/path?ref=value", "localized-files/github.com/org/repo/value/path"),
    ("https://gitlab.com/org./repo..git//path?ref=value", "localized-files/gitlab.com/org./repo./value/path"),
    ("https://gitlab.com/org/repo//path?ref=group/version/kind",
     "localized-files/gitlab.com/org/repo/group/version/kind/path"),
])
def test_loc_root_path(url: str, want: str) -> None:
    spec = parse_repo_spec(url)
    assert spec is not None
    assert loc_root_path(spec.host, spec.org_repo, spec.ref, spec.path) == want


def test_default_new_dir() -> None:
    assert default_new_dir("/x/overlay") == "localized-overlay"
    assert default_new_dir("/") == "localized"
    assert default_new_dir("/c/repo", "/c/repo", "org/kustomize-test.git", "v1.0.0") == \
        "localized-kustomize-test-v1.0.0"
    assert default_new_dir("/c/repo/a/simple", "/c/repo", "org/repo", "group/version") == \
        "localized-simple-group-version"


@pytest.mark.parametrize("text, path, new, want", [
    ("resources:\n- a.yaml  # c\n", ("resources", 0), "b.yaml", "resources:\n- b.yaml  # c\n"),
    ("resources:\n  - 'a.yaml'\n", ("resources", 0), "it's", "resources:\n  - 'it''s'\n"),
    ('resources:\n  - "a.yaml"\n', ("resources", 0), "b.yaml", 'resources:\n  - "b.yaml"\n'),
    ("openapi:\n  path: x # keep\n", ("openapi", "path"), "yes", "openapi:\n  path: 'yes' # keep\n"),
    ("envs: [a, b]\n", ("envs", 1), "c/d", "envs: [a, c/d]\n"),
    ("t:\n- |\n  kind: A\n  path: x\nnext: 1\n", ("t", 0), "kind: A\npath: y\n",
     "t:\n- |\n  kind: A\n  path: y\nnext: 1\n"),
    ("t:\n  - |-\n    kind: A\n\nnext: 1\n", ("t", 0), "kind: B",
     "t:\n  - |-\n    kind: B\n\nnext: 1\n"),
    ("a: x\r\nb: y\r\n", ("b",), "z", "a: x\r\nb: z\r\n"),
])
def test_only_reference_strings_change(text: str, path: tuple, new: str, want: str) -> None:
    yt = YamlText(text)
    node = yt.doc
    for k in path[:-1]:
        node = node[k]
    yt.set(node, path[-1], new)
    assert yt.result() == want


def test_unchanged_file_is_byte_identical() -> None:
    text = "# c\nresources:\n- a.yaml\n"
    yt = YamlText(text)
    yt.set(yt.doc["resources"], 0, "a.yaml")
    assert yt.result() == text and not yt.changed
