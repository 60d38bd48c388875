"""The repository applications are read from (:class:`kzgit.gitops.model.Repository`), made
for a work tree or any other tree.  Kept apart from :mod:`kzgit.gitops.discover` so that a
catalog restored from the render cache (:mod:`kzgit.gitops.snapshot`) imports nothing of
discovery."""
from __future__ import annotations

import os

from kzgit.gitops.model import Repository, Settings, file_reader

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, List, Optional
    from kzgit.config import Config
    from kzgit.loader import FileSystem
    from kzgit.rendercache import Store


def settings_of(config: Config) -> Settings:
    return config.gitops


def repository_for(top: str, files: List[str], read: Callable[[str], Optional[bytes]],
                   fs: Optional[FileSystem], config: Config, remotes_of: Optional[str] = None,
                   label: str = "", store: Optional[Store] = None) -> Repository:
    """A :class:`Repository` over any tree: ``top`` where builds see it, its ``files``, how to
    read one, the file system builds read (None: the disk), the configuration in force, the
    git work tree whose remotes name "this repository" (``store``: the render cache, where
    they are kept, :func:`kzgit.gitops.urls.git_remotes`)."""
    from kzgit.gitops.urls import git_remotes, repository_urls   # start-up: as the module's own
    from kzgit.versions import from_config   # start-up: as the module's own
    settings = settings_of(config)
    sel = from_config(config)
    remotes = git_remotes(remotes_of, store) if remotes_of else []
    return Repository(top, files, read, fs, repository_urls(remotes, settings.repo_urls),
                      settings, sel.version, sel.origin, enable_helm=config.enable_helm,
                      enable_alpha_plugins=config.enable_alpha_plugins,
                      enable_exec=config.enable_exec, label=label, git_top=remotes_of or "")


def open_worktree(top: str, config: Config, files: Optional[List[str]] = None) -> Repository:
    """The work tree at ``top`` as a :class:`Repository` (``files``: git's list by default)."""
    top = os.path.realpath(top)
    if files is None:
        from kzgit.walk import tree_files   # start-up: as the module's own
        files = tree_files(top)
    return repository_for(top, files, file_reader(top), None, config, remotes_of=top)
