"""``kzgit cache info`` / ``kzgit cache clear``: the persistent render cache (:mod:`kzgit.rendercache`).

Also the CLI side of the cache for the commands that use it: opening it (an
unwritable cache directory is a warning on stderr and an uncached run).
"""
from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, List, Optional, Sequence, Tuple
    from kzgit.options import BuildOptions
    from kzgit.hooks import Workspace
    from kzgit.hooks.render import RootResult
    from kzgit.rendercache import Store


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("cache", help="show or empty the render cache and the remote cache",
                       description="The persistent render cache (renders of kustomization roots "
                                   "whose inputs did not change are reused, not built again) and "
                                   "the remote cache (checkouts of remote bases, by commit).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p),
                               help="info: where the caches are and their size; clear: empty them")
    actions.required = True
    actions.add_parser("info", help="where the cache is, how many renders it holds and their size",
                       description="Show where the render cache is, its entries and size."
                       ).set_defaults(func=run)
    actions.add_parser("clear", help="remove every cached render and remote checkout",
                       description="Remove every cached render and every remote checkout."
                       ).set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kzgit.remote import cache_info, clear_cache   # start-up
    from kzgit.rendercache import DEFAULT_SIZE_MB, Store, cache_dir   # start-up
    store = Store(cache_dir(), DEFAULT_SIZE_MB)
    if args.action == "clear":
        n = store.clear()
        print(f"removed {n} cached render{'s' if n != 1 else ''} from {store.path}")
        remote = cache_info()
        n = clear_cache()
        print(f"removed {n} remote checkout{'s' if n != 1 else ''} from {remote['path']}")
        return 0
    info = store.info()
    print(f"render cache: {info['path']}")
    print(f"entries: {info['entries']}")
    print(f"size: {info['bytes'] / 1048576:.1f} MB (bound: the `cache-size-mb` setting, "
          f"default {DEFAULT_SIZE_MB} MB)")
    remote = cache_info()
    print(f"remote cache: {remote['path']}")
    print(f"repositories: {remote['repositories']}, checkouts: {remote['checkouts']}")
    print(f"size: {remote['bytes'] / 1048576:.1f} MB (checkouts are kept by commit; "
          "refs are resolved again on every online build)")
    return 0


def open_for_cli(enabled: bool, size_mb: int) -> Optional["Store"]:
    """The render cache for a command, or None; says on stderr why when it cannot be written."""
    from kzgit.rendercache import default_store   # start-up
    store, warning = default_store(enabled, size_mb)
    if warning:
        print(f"kzgit: warning: {warning}", file=sys.stderr)
    return store


def open_for_workspace(ws: "Workspace", no_cache: bool) -> Optional["Store"]:
    """The render cache for a hook or ``kzgit validate`` on ``ws``, or None (``--no-cache``,
    ``cache = false``, an unwritable cache, or a temporary export of the index or a commit
    that builds do not see at the repository's path (:attr:`Workspace.mounted`): that is at
    a new path every run, so its renders could never be reused).  The workspace's
    dependency graph is kept there too."""
    exported = os.path.realpath(ws.root) != os.path.realpath(ws.repo) and not ws.mounted
    ws.cache = open_for_cli(ws.config.cache and not exported and not no_cache, ws.config.cache_size_mb)
    return ws.cache


def print_renders(renders: "Sequence[RootResult]") -> None:
    """``-v``: each root rendered, ``built``, ``cached`` or ``failed``, and its time, on stderr
    (stdout is the findings, or a report in a format)."""
    for r in renders:
        print(f"{r.status:<7} {r.root} ({r.seconds:.2f}s)", file=sys.stderr)


def build_settings(target: str) -> Tuple[bool, int]:
    """``cache`` and ``cache-size-mb`` of the repository holding the kustomization directory
    ``target`` (the defaults for a remote target, outside a repository, or without a file)."""
    from kzgit.paths import repository_top   # start-up
    from kzgit.rendercache import DEFAULT_SIZE_MB   # start-up
    top = repository_top(target) if os.path.isdir(target) else None
    # the configuration module (TOML, dataclasses) is imported only when there is a kzgit
    # configuration to read: a .kzgit.toml, or a pyproject.toml that may hold [tool.kzgit]
    if top is None or not (os.path.isfile(os.path.join(top, ".kzgit.toml"))
                           or may_configure_kzgit(_read_or_empty(os.path.join(top, "pyproject.toml")))):
        return True, DEFAULT_SIZE_MB
    from kzgit.config import load_config   # start-up
    config = load_config(top, grants=False)   # the cache settings only
    return config.cache, config.cache_size_mb


def may_configure_kzgit(pyproject: bytes) -> bool:
    """Whether a ``pyproject.toml`` may hold a ``tool.kzgit`` table, in any TOML spelling
    (``[tool.kzgit]``, ``[tool.kzgit.validate]``, ``tool.kzgit.x = ``, a ``[tool]`` table with
    a ``kzgit`` key, ``tool = {...}``): a quick look that errs on the side of parsing."""
    import re   # loaded already: argparse imports it
    if re.search(rb"""(?m)^[ \t]*(\[[ \t]*tool[ \t]*\.[ \t]*["']?kzgit\b|tool[ \t]*\.[ \t]*["']?kzgit\b)""",
                 pyproject):
        return True
    tool_table = re.search(rb"(?m)^[ \t]*(\[[ \t]*tool[ \t]*\]|tool[ \t]*=)", pyproject)
    return bool(tool_table) and b"kzgit" in pyproject


def _read_or_empty(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def cached_yaml(path: str, options: "BuildOptions", before_build: "Optional[Callable[[], None]]" = None
                ) -> Tuple[str, List[str]]:
    """``kzgit build``'s output and warnings through the render cache (unless the repository's
    configuration says ``cache = false``); raises the build's error.  ``before_build`` runs
    when the cache has no answer, before building (kzgit.cli.build loads the engine so)."""
    from kzgit.rendercache import lookup_yaml, render_yaml   # start-up
    store = open_for_cli(*build_settings(path))
    got = lookup_yaml(path, options, store) if store is not None else None
    if got is None:
        if before_build is not None:
            before_build()
        got = render_yaml(path, options, store, looked=store is not None)
    if store is not None and store.wrote:
        store.trim()
    if got.error is not None:
        raise got.error
    return got.yaml, got.warnings
