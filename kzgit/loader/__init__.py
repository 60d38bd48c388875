"""The only code that opens user files.

A :class:`FileSystem` reads bytes (the disk, or a git tree for ``kzgit diff``);
a :class:`Loader` is bound to one kustomization root and applies kustomize's
load restrictor (api/internal/loader/fileloader.go, loadrestrictions.go):
with ``LoadRestrictionsRootOnly`` every *file* must resolve, after symlinks,
inside the root; kustomization *directories* may sit anywhere but must be
relative and must not contain a root already on the loader chain (a cycle).
"""
from __future__ import annotations

import contextvars
import errno
import os
import stat
from kzgit.errors import BuildError, KzgitError, LoadRestrictionError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Protocol, Tuple
else:
    Protocol = object  # FileSystem below is a structural type for checkers only

ROOT_ONLY = "LoadRestrictionsRootOnly"
NO_RESTRICTIONS = "LoadRestrictionsNone"
RESTRICTORS = (ROOT_ONLY, NO_RESTRICTIONS)

# api/konfig/general.go RecognizedKustomizationFileNames
KUSTOMIZATION_FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# Cap on a single file read, so a /dev/zero symlink or a huge file fails fast.
MAX_FILE_BYTES = 512 * 1024 * 1024


class FileSystem(Protocol):
    """Read-only file access; paths are absolute, '/'-separated."""

    def read_bytes(self, path: str) -> bytes: ...
    def is_dir(self, path: str) -> bool: ...
    def is_file(self, path: str) -> bool: ...
    def exists(self, path: str) -> bool: ...
    def realpath(self, path: str) -> str: ...
    def listdir(self, path: str) -> List[str]: ...


# The build recorder of the persistent render cache (kzgit.rendercache), when one is
# recording this thread's build: every Loader hands it its file system to watch, so
# what any build reads (a remote checkout's files included) is recorded in one place.
RECORDER: "contextvars.ContextVar[Optional[Any]]" = contextvars.ContextVar("kzgit_recorder",
                                                                          default=None)


def mark_uncacheable(why: str) -> None:
    """The build in progress (if one is recorded) depends on what no record covers (an exec
    plugin, a renders-but-unsortable document): the render cache must not store it.  Here,
    beside :data:`RECORDER`, so the plugins and hooks that say so need not know the cache."""
    recorder = RECORDER.get()
    if recorder is not None:
        recorder.mark_uncacheable(why)


def go_errno_text(e: OSError) -> str:
    """An OS error as Go's syscall.Errno prints it ("file name too long", "invalid argument")."""
    text = e.strerror or str(e)
    return text[:1].lower() + text[1:]


def _nul_checked(path: str) -> str:
    """Go passes a path to the kernel as a C string, which refuses a NUL byte with EINVAL
    (syscall.ByteSliceFromString); Python raises ValueError instead.  Make it the OS error
    kustomize reports, so a user's path never ends in a crash."""
    if "\0" in path:
        raise OSError(errno.EINVAL, "invalid argument", path)
    return path


class DiskFS:
    """The local disk."""

    def read_bytes(self, path: str) -> bytes:
        try:
            st = os.stat(_nul_checked(path))
        except OSError as e:
            raise BuildError(f"open {path}: {go_errno_text(e)}") from None
        if not stat.S_ISREG(st.st_mode):
            raise BuildError(f"'{path}' is not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise BuildError(f"'{path}' is larger than {MAX_FILE_BYTES} bytes")
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise BuildError(f"read {path}: {go_errno_text(e)}") from None

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def realpath(self, path: str) -> str:
        try:
            return os.path.realpath(_nul_checked(path), strict=True)
        except OSError as e:
            if "loop" in str(e).lower() or getattr(e, "errno", 0) == 40:
                raise BuildError(f"evalsymlink failure on '{path}' : too many links") from None
            raise
        except TypeError:  # Python < 3.10 has no strict=
            if not os.path.exists(path):
                raise FileNotFoundError(path) from None
            return os.path.realpath(path)

    def listdir(self, path: str) -> List[str]:
        return sorted(os.listdir(path))


def is_within(path: str, root: str) -> bool:
    """Whole-component prefix test: /foo is not within /foobar (kyaml ConfirmedDir.HasPrefix)."""
    if path == root:
        return True
    root = root.rstrip("/") + "/"
    return path.startswith(root)


class Loader:
    """File access for one kustomization root, with kustomize's restrictions."""

    def __init__(self, root: str, fs: Optional[FileSystem] = None, restrictor: str = ROOT_ONLY,
                 parent: Optional["Loader"] = None, repo_root: Optional[str] = None,
                 remote_label: Optional[str] = None) -> None:
        self.fs: FileSystem = fs or DiskFS()
        self.root = root
        self.restrictor = restrictor
        self.parent = parent
        self.repo_root = repo_root          # set inside a cloned remote repository
        self.remote_label = remote_label    # the URL as the user wrote it (redacted)
        recorder = RECORDER.get()
        if recorder is not None:
            self.fs = recorder.watch(self)

    # -- files ------------------------------------------------------------------------
    def resolve(self, path: str) -> str:
        """Absolute, symlink-free path of a file named relative to the root; restricted.

        Messages name the path as written, joined to the root, not where its symlinks
        lead (fileloader.go Load, loadrestrictions.go RestrictionRootOnly).
        """
        p = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.root, path))
        real = self._eval_symlinks(p)
        if self.restrictor == ROOT_ONLY:
            if self.fs.is_dir(real):
                raise BuildError(f"'{p}' must resolve to a file")
            if not is_within(real, self.root):
                raise LoadRestrictionError(f"security; file '{p}' is not in or below '{self.root}'")
        if self.repo_root and not is_within(real, self.repo_root):
            raise LoadRestrictionError(f"security; file '{p}' is not in or below '{self.repo_root}'")
        return real

    def _eval_symlinks(self, p: str, context: str = "") -> str:
        """filepath.EvalSymlinks of ``p``, failing in kustomize's words after ``context``."""
        try:
            return self.fs.realpath(p)
        except FileNotFoundError:
            cause = "no such file or directory"
        except OSError as e:
            cause = go_errno_text(e)   # its lstat fails: ENAMETOOLONG, EINVAL for a NUL...
        raise BuildError(f"{context}evalsymlink failure on '{p}' : lstat {p}: {cause}")

    def load(self, path: str) -> bytes:
        real = self.resolve(path)
        if self.fs.is_dir(real):
            # LoadRestrictionsNone reads the directory (os.ReadFile's error)
            p = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.root, path))
            raise BuildError(f"read {p}: is a directory")
        return self.fs.read_bytes(real)

    # -- kustomization directories ------------------------------------------------------
    def roots_chain(self) -> List[str]:
        out: List[str] = []
        cur: Optional[Loader] = self
        while cur is not None:
            out.append(cur.root)
            cur = cur.parent
        return out

    def new_dir_loader(self, path: str) -> "Loader":
        """Loader for a base/component directory (api/internal/loader/fileloader.go New)."""
        if os.path.isabs(path):
            raise BuildError(f"new root '{path}' cannot be absolute")
        p = os.path.normpath(os.path.join(self.root, path))
        real = self._eval_symlinks(p, "must build at directory: not a valid directory: ")
        if not self.fs.is_dir(real):
            raise BuildError(f"must build at directory: '{real}': file is not directory")
        # containment in the clone before the cycle check, as fileloader.go New does
        # (errIfGitContainmentViolation, then errIfArgEqualOrHigher): a base above the
        # clone's root also contains the visited roots, and kustomize reports the escape
        if self.repo_root and not is_within(real, self.repo_root):
            raise LoadRestrictionError(
                "security; bases in kustomizations found in cloned git repos must be within the "
                f"repo, but base '{real}' is outside '{self.repo_root}'")
        for r in self.roots_chain():
            if is_within(r, real):
                raise BuildError(f"cycle detected: candidate root '{real}' contains visited root '{r}'")
        return Loader(real, self.fs, self.restrictor, parent=self, repo_root=self.repo_root,
                      remote_label=self.remote_label)

    def _loadable(self, name: str) -> bool:
        path = os.path.join(self.root, name)
        if not self.fs.exists(path):
            return False
        try:
            real = self.resolve(name)
        except KzgitError:
            return False
        return self.fs.is_file(real) and self._readable(real)

    def _readable(self, real: str) -> bool:
        return not isinstance(self.fs, DiskFS) or os.access(real, os.R_OK)

    def find_kustomization_file(self) -> Tuple[str, str]:
        """Return (path, file name) of the root's kustomization file; exactly one allowed.

        A name counts only when the loader could load it (api/internal/target/kusttarget.go
        loadKustFile tries ``ldr.Load`` on each name and ignores its errors): a
        kustomization.yaml that is a symlink leading out of the root, a dangling link, a
        directory or an unreadable file is "not found", as in kustomize.
        """
        found = [n for n in KUSTOMIZATION_FILE_NAMES if self._loadable(n)]
        if len(found) > 1:
            raise BuildError(f"Found multiple kustomization files under: {self.root}")
        if not found:
            raise BuildError(
                f"unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' "
                f"in directory '{self.root}'")
        return os.path.join(self.root, found[0]), found[0]


def new_root_loader(path: str, fs: Optional[FileSystem] = None, restrictor: str = ROOT_ONLY) -> Loader:
    fs = fs or DiskFS()
    p = os.path.abspath(path)
    try:
        real = fs.realpath(p)
    except (FileNotFoundError, OSError):
        raise BuildError(f"must build at directory: not a valid directory: evalsymlink failure on '{path}' : lstat {p}: no such file or directory") from None
    if not fs.is_dir(real):
        raise BuildError(f"must build at directory: '{real}': file is not directory")
    return Loader(real, fs, restrictor)
