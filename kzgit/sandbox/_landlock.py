"""Landlock (Linux 5.13+) through ctypes: build a ruleset in the parent, enforce it in the child.

The kernel ABI (include/uapi/linux/landlock.h, Documentation/userspace-api/landlock.rst):

* ``landlock_create_ruleset(attr, size, flags)`` (syscall 444 on every architecture) returns a
  ruleset fd, or with ``LANDLOCK_CREATE_RULESET_VERSION`` the highest ABI the kernel offers;
* ``landlock_add_rule(fd, LANDLOCK_RULE_PATH_BENEATH | LANDLOCK_RULE_NET_PORT, attr, 0)`` (445)
  allows access rights beneath an opened directory (or on a file), or to a TCP port;
* ``landlock_restrict_self(fd, 0)`` (446) confines the calling thread and every process it
  starts afterwards; ``PR_SET_NO_NEW_PRIVS`` must be set first (no setuid escape).

Everything that can fail (opening paths, adding rules) happens in the parent, so the child, between
fork and exec, only makes two system calls.  Access a ruleset *handles* is denied unless a rule
allows it; access the running ABI does not know about is not handled (so not restricted): each ABI
adds rights (2: cross-directory rename ``REFER``, 3: ``TRUNCATE``, 4: TCP bind/connect, 5: device
ioctl, 6: signals and abstract unix sockets scoped to the domain).
"""
from __future__ import annotations

import ctypes
import os
import stat
from typing import Callable, Iterable, List, Optional, Tuple

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_* in bit order: ABI 1 has EXECUTE .. MAKE_SYM, ABI 2 adds REFER (rename
# across directories), ABI 3 TRUNCATE, ABI 5 IOCTL_DEV
(EXECUTE, WRITE_FILE, READ_FILE, READ_DIR, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG,
 MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV) = (1 << i for i in range(16))
# LANDLOCK_ACCESS_NET_* (ABI 4)
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
# LANDLOCK_SCOPE_* (ABI 6)
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

#: Rights that only make sense on a directory (a rule on a file may not name them).
DIR_ONLY = (READ_DIR | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
            | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM | REFER)
READ = EXECUTE | READ_FILE | READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1   # __attribute__((packed)) in the uapi header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: Optional[ctypes.CDLL] = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _syscall(*args: object) -> int:
    return int(_lib().syscall(*args))


_abi: Optional[int] = None


def abi_version() -> int:
    """The Landlock ABI the running kernel offers; 0 when there is none (not Linux, too old,
    or Landlock not enabled at boot)."""
    global _abi
    if _abi is None:
        _abi = 0
        if os.uname().sysname == "Linux":
            try:
                v = _syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                             ctypes.c_uint32(_CREATE_RULESET_VERSION))
            except (OSError, AttributeError):  # pragma: no cover - no libc syscall()
                v = -1
            _abi = max(v, 0)
    return _abi


def handled_fs(abi: int) -> int:
    """Every file-system right the ABI can restrict."""
    rights = (MAKE_SYM << 1) - 1   # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class Ruleset:
    """An open Landlock ruleset; :meth:`enforce` is what the child runs."""

    def __init__(self, abi: int, network: bool) -> None:
        self.abi = abi
        self.fs = handled_fs(abi)
        # TCP rules exist from ABI 4: handling both rights with no port rule denies them all
        self.net = (BIND_TCP | CONNECT_TCP) if abi >= 4 and not network else 0
        self.scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
        attr = _RulesetAttr(self.fs, self.net, self.scoped)
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        fd = _syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_create_ruleset: {os.strerror(e)}")
        self.fd = fd
        self._prctl: Callable[..., int] = _lib().prctl
        self._restrict: Callable[..., int] = _lib().syscall

    def allow(self, path: str, rights: int) -> bool:
        """Allow ``rights`` beneath ``path`` (only the file rights on a file); False when the
        path does not exist (nothing to allow)."""
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not stat.S_ISDIR(os.fstat(pfd).st_mode):
                rights &= ~DIR_ONLY
            attr = _PathBeneathAttr(rights & self.fs, pfd)
            if _syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(self.fd),
                        ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0)) < 0:
                e = ctypes.get_errno()
                raise OSError(e, f"landlock_add_rule {path}: {os.strerror(e)}")
        finally:
            os.close(pfd)
        return True

    def enforce(self) -> None:  # pragma: no cover - runs in the child between fork and exec
        """No new privileges, then confine this process and everything it starts."""
        if self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if self._restrict(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(self.fd),
                          ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def build(abi: int, rules: Iterable[Tuple[str, int]], network: bool) -> Tuple[Ruleset, List[str]]:
    """A ruleset allowing each ``(path, rights)``; also the paths that exist (were allowed)."""
    rs = Ruleset(abi, network)
    allowed: List[str] = []
    try:
        for path, rights in rules:
            if rs.allow(path, rights):
                allowed.append(path)
    except BaseException:
        rs.close()
        raise
    return rs, allowed
