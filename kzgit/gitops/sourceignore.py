"""What a Flux source artifact leaves out: ``.sourceignore`` files and ``spec.ignore``.

The source-controller archives the repository without what its ignore patterns exclude
(fluxcd/pkg ``sourceignore/sourceignore.go``, tag ``sourceignore/v0.15.0``): the VCS files
(``ExcludeVCS``), the default patterns (``ExcludeExt``, ``ExcludeCI``, ``ExcludeExtra``),
every ``.sourceignore`` found walking the tree (each scoped to its directory, its "domain"),
then the GitRepository's ``spec.ignore`` (scoped to the top).  Patterns are gitignore's as
``sourceignore/gitignore/pattern.go`` matches them (a copy of go-git's): the last pattern that
matches a path decides (``matcher.go``), ``!`` re-includes, a trailing ``/`` matches
directories only, a pattern without ``/`` matches any one path element by ``filepath.Match``,
one with ``/`` matches elements from the domain's top (``**`` any number of them).

A file is left out when it, or a directory above it, is excluded: the archive walk does not
enter an excluded directory.  :class:`IgnoreFS` shows a tree without them, so a build sees the
artifact the controller builds.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.gitops.gomatch import BadPattern, compile_pattern, match

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple
    from kzgit.loader import FileSystem

IGNORE_FILE = ".sourceignore"
# sourceignore.go, verbatim
EXCLUDE_VCS = ".git/,.gitignore,.gitmodules,.gitattributes"
EXCLUDE_EXT = "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip"
EXCLUDE_CI = (".github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,"
              "cloudbuild.yaml,codeship-services.yml,codeship-steps.yml")
EXCLUDE_EXTRA = "**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml"


class Pattern:
    """One gitignore pattern with its domain (the directory of the file that holds it)."""

    __slots__ = ("domain", "parts", "inclusion", "dir_only", "is_glob", "literal", "names")

    def __init__(self, text: str, domain: Sequence[str]) -> None:
        self.domain = tuple(domain)
        self.inclusion = text.startswith("!")
        if self.inclusion:
            text = text[1:]
        if not text.endswith("\\ "):
            text = text.rstrip(" ")
        self.dir_only = text.endswith("/")
        if self.dir_only:
            text = text[:-1]
        self.is_glob = "/" in text
        self.parts = text.split("/")
        # a name without pattern characters matches by equality (filepath.Match agrees)
        self.literal = None if self.is_glob or any(c in text for c in "*?[\\") else text
        # the elements of a glob without pattern characters: each matches one path element
        # by equality, so a path holding none of them is no match (the default patterns'
        # ``**/.sops.yaml`` is asked of every path a build reads)
        self.names = frozenset(p for p in self.parts if p and p != "**"
                               and not any(c in p for c in "*?[\\")) if self.is_glob \
            else frozenset()

    def match(self, path: Sequence[str], is_dir: bool) -> int:
        """0 no match, 1 exclude, 2 include (pattern.go MatchResult)."""
        if len(path) <= len(self.domain) or tuple(path[:len(self.domain)]) != self.domain:
            return 0
        rest = path[len(self.domain):]
        for name in self.names:
            if name not in rest:
                return 0
        hit = self._glob(rest, is_dir) if self.is_glob else self._simple(rest, is_dir)
        if not hit:
            return 0
        return 2 if self.inclusion else 1

    def _simple(self, path: Sequence[str], is_dir: bool) -> bool:
        if self.literal is not None:
            if self.literal not in path:
                return False
            i = list(path).index(self.literal)
            return not (self.dir_only and not is_dir and i == len(path) - 1)
        for i, name in enumerate(path):
            try:
                if not match(self.parts[0], name):
                    continue
            except BadPattern:
                return False
            return not (self.dir_only and not is_dir and i == len(path) - 1)
        return False

    def _glob(self, path: Sequence[str], is_dir: bool) -> bool:
        path = list(path)
        matched = False
        traverse = False
        for i, part in enumerate(self.parts):
            if part == "":
                traverse = False
                continue
            if part == "**":
                if i == len(self.parts) - 1:
                    break
                traverse = True
                continue
            if "**" in part:
                return False
            if not path:
                return False
            try:
                if traverse:
                    traverse = False
                    while path:
                        e = path.pop(0)
                        if match(part, e):
                            matched = True
                            break
                        if not path:
                            matched = False
                else:
                    if not match(part, path[0]):
                        return False
                    matched = True
                    path.pop(0)
            except BadPattern:
                return False
        if matched and self.dir_only and not is_dir and not path:
            matched = False
        return matched


def read_patterns(text: str, domain: Sequence[str]) -> List[Pattern]:
    """sourceignore.go ReadPatterns: one per line, ``#`` comments and blank lines skipped."""
    return [Pattern(line, domain) for line in text.splitlines()
            if not line.startswith("#") and line.strip()]


def default_patterns() -> List[Pattern]:
    """VCSPatterns then DefaultPatterns (NewDefaultMatcher's lowest priority patterns)."""
    words = ",".join([EXCLUDE_VCS, EXCLUDE_EXT, EXCLUDE_CI, EXCLUDE_EXTRA]).split(",")
    return [Pattern(w, ()) for w in words]


class Matcher:
    """matcher.go: the last pattern matching a path decides; by default a path is kept."""

    def __init__(self, patterns: List[Pattern]) -> None:
        self.patterns = patterns
        self._memo: Dict[Tuple[Tuple[str, ...], bool], bool] = {}
        #: memos of the file systems built on this matcher (IgnoreFS), by what and tree
        self.shared: Dict[Tuple[str, str], Dict[str, Any]] = {}
        # Without a "!" pattern the order of the patterns does not matter (any match
        # excludes): the top-level name patterns are then checked at once, by a set of
        # literal names and one regular expression, the others one by one.
        self._fast = not any(p.inclusion for p in patterns)
        self._names: Set[str] = set()
        self._dir_names: Set[str] = set()
        globs: List[str] = []
        dir_globs: List[str] = []
        self._rest: List[Pattern] = []
        for p in patterns:
            if not self._fast or p.domain or p.is_glob:
                self._rest.append(p)
                continue
            if p.literal is not None:
                (self._dir_names if p.dir_only else self._names).add(p.literal)
                continue
            try:
                rx = compile_pattern(p.parts[0]).pattern
            except BadPattern:
                continue   # never matches (pattern.go: a bad pattern is no match)
            (dir_globs if p.dir_only else globs).append(rx)
        self._glob = re.compile("|".join(f"(?:{g})" for g in globs)) if globs else None
        self._dir_glob = re.compile("|".join(f"(?:{g})" for g in dir_globs)) if dir_globs else None
        # whether a pattern asked one by one tells a directory from a file (a trailing "/")
        self._rest_dir_only = any(p.dir_only for p in (self._rest if self._fast else patterns))

    def kind_matters(self, name: str) -> bool:
        """Whether a path ending in ``name`` may be excluded as a directory and kept as a file
        (or the other way): only a directory-only pattern tells them apart, so elsewhere a
        file system need not ask what the path is."""
        if self._rest_dir_only:
            return True
        return name in self._dir_names or (self._dir_glob is not None
                                           and self._dir_glob.fullmatch(name) is not None)

    def excluded(self, path: Sequence[str], is_dir: bool) -> bool:
        key = (tuple(path), is_dir)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self.decide(path, is_dir)
        return got

    def decide(self, path: Sequence[str], is_dir: bool) -> bool:
        """:meth:`excluded`, asked again (for a caller that keeps the answers itself)."""
        if self._fast and self._fast_hit(path, is_dir):
            return True
        for p in reversed(self._rest if self._fast else self.patterns):
            hit = p.match(path, is_dir)
            if hit:
                return hit == 1
        return False

    def _fast_hit(self, path: Sequence[str], is_dir: bool) -> bool:
        last = len(path) - 1
        for i, name in enumerate(path):
            if name in self._names or (self._glob is not None and self._glob.fullmatch(name)):
                return True
            # a directory-only pattern matches a directory, or a directory above the path
            if (i < last or is_dir) and (name in self._dir_names or (
                    self._dir_glob is not None and self._dir_glob.fullmatch(name))):
                return True
        return False


def repository_matcher(files: Iterable[str], read: "Callable[[str], Optional[bytes]]",
                       spec_ignore: Optional[str]) -> Matcher:
    """The artifact's matcher for a repository whose files (repo-relative) are ``files``.

    ``.sourceignore`` files are read in the walk's order (sourceignore.go
    LoadIgnorePatterns: a directory's own file, then its subdirectories by name), then
    ``spec.ignore`` (source-controller appends it to the loaded patterns).
    """
    found = sorted((f for f in files if posixpath.basename(f) == IGNORE_FILE),
                   key=lambda f: _walk_key(posixpath.dirname(f)))
    patterns = default_patterns()
    for f in found:
        data = read(f)
        if data is None:
            continue
        d = posixpath.dirname(f)
        patterns.extend(read_patterns(data.decode("utf-8", "replace"), d.split("/") if d else []))
    if spec_ignore:
        patterns.extend(read_patterns(spec_ignore, []))
    return Matcher(patterns)


def _walk_key(d: str) -> Tuple[Tuple[int, str], ...]:
    # a directory's own file before its subdirectories' (os.ReadDir order: by name)
    return tuple((1, p) for p in d.split("/")) if d else ()


def excluded_path(matcher: Matcher, rel: str) -> bool:
    """Whether the repo-relative file ``rel`` is left out of the artifact: it, or a
    directory above it, is excluded."""
    parts = rel.split("/")
    for n in range(1, len(parts)):
        if matcher.excluded(parts[:n], True):
            return True
    return matcher.excluded(parts, False)


class IgnoreFS:
    """A :class:`kzgit.loader.FileSystem` showing the tree at ``top`` without what
    ``matcher`` leaves out of the artifact (a hidden path does not exist)."""

    def __init__(self, base: FileSystem, top: str, matcher: Matcher, shared: bool = True) -> None:
        self.base = base
        self.top = top.rstrip("/")
        self._below = self.top + "/"
        self.matcher = matcher
        # what is hidden, and where each path leads, asked once per run: shared by every
        # build through the same matcher and tree (the builds of one run see one tree);
        # ``shared=False``: asked again by this one (a render cache's record holds it)
        self._memo: Dict[str, bool] = matcher.shared.setdefault(("hidden", self.top), {}) \
            if shared else {}
        self._real: Dict[str, str] = matcher.shared.setdefault(("real", self.top), {}) \
            if shared else {}

    def _hidden(self, path: str) -> bool:
        got = self._memo.get(path)
        if got is not None:
            return got
        if not path.startswith(self._below):
            hidden = False
        else:
            parent = path.rpartition("/")[0]
            parts = path[len(self._below):].split("/")
            # (each path is asked once: the matcher need not keep the answer too)
            hidden = (parent != self.top and self._hidden(parent)) or self.matcher.decide(
                parts, self.matcher.kind_matters(parts[-1]) and self.base.is_dir(path))
        self._memo[path] = hidden
        return hidden

    def read_bytes(self, path: str) -> bytes:
        if self._hidden(path):
            from kzgit.errors import BuildError   # start-up: an error path only
            raise BuildError(f"open {path}: no such file or directory")
        return self.base.read_bytes(path)

    def is_dir(self, path: str) -> bool:
        return not self._hidden(path) and self.base.is_dir(path)

    def is_file(self, path: str) -> bool:
        return not self._hidden(path) and self.base.is_file(path)

    def exists(self, path: str) -> bool:
        return not self._hidden(path) and self.base.exists(path)

    def realpath(self, path: str) -> str:
        got = self._real.get(path)
        if got is not None:
            return got
        if self._hidden(path):
            raise FileNotFoundError(path)
        got = self._real[path] = self.base.realpath(path)
        return got

    def listdir(self, path: str) -> List[str]:
        return [n for n in self.base.listdir(path)
                if not self._hidden(posixpath.join(path, n))]
