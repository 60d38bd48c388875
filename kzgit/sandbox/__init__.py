"""The plugin sandbox: exec plugins, KRM exec functions and helm run confined where the OS allows.

kustomize's plugin guide: "Kustomize plugins do not run in any kind of kustomize-provided
sandbox."  kzgit runs in pre-commit hooks, so a transformer config merged in a pull request
would otherwise run with the SSH keys and cloud credentials of everyone who pulls.  On Linux
with Landlock (5.13+; TCP rules from ABI 4, 6.7+) every such process is confined, between fork
and exec, with the strongest ABI the kernel offers (:mod:`kzgit.sandbox._landlock`):

* read and execute: the system's program and library directories, the few ``/etc`` files a
  dynamic program needs, the installation prefix of the interpreter the program's shebang names
  (a venv or pyenv Python in the home directory: its ``bin/..``, never ``/`` or the home itself),
  the program's own directory, the kustomization root (the repository's top with
  ``LoadRestrictionsNone``), and ``allow-read``;
* write: a fresh temporary directory for that process (its ``TMPDIR``, removed afterwards),
  ``/dev/null`` and ``allow-write``;
* network: no TCP bind or connect unless ``network = true`` / ``--network``;
* no new privileges; signals to processes outside the sandbox and abstract unix sockets are
  refused from ABI 6; every child the program starts inherits all of it.

What it does not stop: reading what is allowed (the kustomization, the system), UDP (Landlock has
no UDP rules), connecting to unix sockets in the file system, CPU and memory use (bounded by the
timeout and output cap of :mod:`kzgit.proc`).  Docker container functions keep docker's own
isolation (no network by default); their ``--mount`` sources outside the kustomization root are
refused unless allowed (:func:`check_mount`).

Settings come from the user (the flags ``--sandbox`` and ``--network``, ``[sandbox]`` in
``~/.config/kzgit/config.toml``) and from the repository (``[sandbox]`` in ``.kzgit.toml``,
``[tool.kzgit.sandbox]``), which may only narrow what the user grants: a pull request that adds
a plugin must not be able to switch the sandbox off or open ``~/.ssh`` to it in the same change.
See :meth:`SandboxSettings.granted`.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from kzgit import proc
from kzgit.config import SANDBOX_MODES as MODES
from kzgit.config import SandboxSettings
from kzgit.config import load_config
from kzgit.paths import repository_top
from kzgit.errors import PluginError
from kzgit.loader import NO_RESTRICTIONS, is_within

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.options import BuildOptions

__all__ = ["MODES", "SandboxSettings", "available", "run", "check_mount", "unconfined_reason",
           "settings_for", "repository_top"]

#: Where the settings' keys live, for hints: a repository's file may only narrow the user's.
CONFIG_TABLE = ("[sandbox] in your ~/.config/kzgit/config.toml ($XDG_CONFIG_HOME/kzgit/config.toml; "
                "a repository's .kzgit.toml may only narrow it)")


#: Read (and execute) for every confined program: what a dynamically linked program, a shell
#: and an interpreter need to start and resolve names, and CA certificates for helm's pulls.
SYSTEM_READ = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
    "/etc/resolv.conf", "/etc/gai.conf", "/etc/ssl", "/etc/pki", "/etc/ca-certificates",
    "/etc/mime.types", "/dev/urandom", "/dev/random", "/dev/zero",
)
#: Read and write for every confined program.
SYSTEM_WRITE = ("/dev/null",)


def available() -> Tuple[bool, str]:
    """Whether this machine can confine programs, and if not why (for messages)."""
    if not sys.platform.startswith("linux"):
        return False, f"kzgit confines plugins with Landlock, which {sys.platform} does not have"
    from kzgit.sandbox import _landlock   # ctypes and Landlock load only to confine a program
    abi = _landlock.abi_version()
    if abi < 1:
        return False, (f"this Linux kernel ({os.uname().release}) offers no Landlock "
                       "(5.13 or later with Landlock enabled at boot is needed)")
    return True, f"Landlock ABI {abi}"


_unconfined_lock = threading.Lock()
_unconfined: List[str] = []


def unconfined_reason() -> Optional[str]:
    """Why a program ran unconfined in mode "auto" during this run (None when none did)."""
    with _unconfined_lock:
        return _unconfined[0] if _unconfined else None


def _expand(paths: Sequence[str]) -> List[str]:
    return [os.path.abspath(os.path.expanduser(p)) for p in paths]


def _interpreter_roots(program: str, env: Optional[Mapping[str, str]]) -> List[str]:
    """What the program's ``#!`` interpreter needs beyond the system directories: the prefix it
    is installed in (``bin/..``), for the path as named and as resolved (a venv's python links to
    the base installation), never a prefix as wide as ``/`` or the home directory."""
    try:
        with open(program, "rb") as f:
            first = f.readline(512)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return []
    interp = words[0]
    if os.path.basename(interp) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if not names:
            return []
        path = (env or os.environ).get("PATH", os.defpath)
        found = shutil.which(names[0], path=path)
        if found is None:
            return []
        interp = found
    home = os.path.realpath(os.path.expanduser("~"))
    out: List[str] = []
    for p in (os.path.abspath(interp), os.path.realpath(interp)):
        bindir = os.path.dirname(p)
        prefix = os.path.dirname(bindir) if os.path.basename(bindir) == "bin" else bindir
        real = os.path.realpath(prefix)
        if real in ("/", home) or home.startswith(real.rstrip("/") + "/"):
            out.append(p)   # too wide: the interpreter's file alone
        else:
            out.append(prefix)
    return out


class _Confinement:
    """The rules for one process: built in the parent, entered in the child by ``__call__``."""

    def __init__(self, settings: SandboxSettings, program: str, read: Sequence[str],
                 write: Sequence[str], network: bool, env: Optional[Mapping[str, str]]) -> None:
        from kzgit.sandbox import _landlock   # ctypes and Landlock load only to confine a program
        self.tmpdir = tempfile.mkdtemp(prefix="kzgit-sandbox-")
        self.network = network
        program = os.path.abspath(program)
        self.read = [*dict.fromkeys([os.path.dirname(program),
                                     *_interpreter_roots(program, env), *read,
                                     *_expand(settings.allow_read)])]
        self.write = [self.tmpdir, *dict.fromkeys([*write, *_expand(settings.allow_write)])]
        rules = [(p, _landlock.READ) for p in (*SYSTEM_READ, *self.read)]
        rules += [(p, _landlock.handled_fs(_landlock.abi_version()))
                  for p in (*SYSTEM_WRITE, *self.write)]
        try:
            self.ruleset, _ = _landlock.build(_landlock.abi_version(), rules, network)
        except BaseException:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise
        self.abi = self.ruleset.abi
        self.tcp_confined = bool(self.ruleset.net)

    def __call__(self) -> None:  # pragma: no cover - runs in the child
        self.ruleset.enforce()

    def env(self, env: Optional[Mapping[str, str]]) -> Dict[str, str]:
        out = dict(os.environ if env is None else env)
        for k in ("TMPDIR", "TMP", "TEMP"):
            out[k] = self.tmpdir
        return out

    def close(self) -> None:
        self.ruleset.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def describe(self) -> str:
        """What the process was allowed, and which key widens it."""
        if not self.network:
            net = "no TCP connect or bind" if self.tcp_confined else \
                f"not confined (Landlock ABI {self.abi} has no network rules)"
        else:
            net = "allowed"
        return (f"it ran in kzgit's plugin sandbox (Landlock ABI {self.abi}): read only the "
                f"system directories and {', '.join(self.read)}; write only {', '.join(self.write)}"
                f" and /dev/null; network: {net}")


def run(argv: Sequence[str], *, options: "BuildOptions", label: str, root: str,
        input: Optional[bytes] = None, cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None, timeout: Optional[float],
        check: bool = True, read: Sequence[str] = (), write: Sequence[str] = (),
        network: Optional[bool] = None) -> proc.Result:
    """:func:`kzgit.proc.run_process` for a plugin, confined as ``options.sandbox`` says.

    ``root`` is the kustomization root the plugin belongs to (readable); ``read`` and ``write``
    are more paths this call needs (a config file kzgit wrote, helm's work directory);
    ``network`` overrides whether TCP is open (helm pulling a chart).  A failure of a confined
    program says what the sandbox allowed and which key widens it.
    """
    settings = (options.sandbox or SandboxSettings(repository=True)).granted()
    if settings.mode == "off":
        return proc.run_process(argv, label=label, input=input, cwd=cwd, env=env,
                                timeout=timeout, check=check)
    ok, why = available()
    if not ok:
        if settings.mode == "require":
            raise PluginError(f"{label}: the plugin sandbox is required ({settings.source or '--sandbox require'}) "
                              f"but {why}",
                              tip="run where Landlock is available, or set mode = \"auto\" in "
                                  f"{CONFIG_TABLE} (--sandbox auto) to run plugins unconfined here")
        with _unconfined_lock:
            if not _unconfined:
                _unconfined.append(why)
        return proc.run_process(argv, label=label, input=input, cwd=cwd, env=env,
                                timeout=timeout, check=check)
    net = settings.network or options.network if network is None else network
    roots = [root, *_repo_top(root, options)]
    try:
        confinement = _Confinement(settings, str(argv[0]), [*roots, *read], write, net, env)
    except OSError as e:
        raise PluginError(f"{label}: cannot set up the plugin sandbox: {e.strerror or e}") from None
    try:
        return proc.run_process(argv, label=label, input=input, cwd=cwd, env=confinement.env(env),
                                timeout=timeout, check=check, sandbox=confinement,
                                hint=_hint(confinement))
    finally:
        confinement.close()


def _hint(c: _Confinement) -> str:
    return (f"{c.describe()}.  If the plugin needs more, add paths to allow-read / allow-write "
            f"or set network = true in {CONFIG_TABLE} (or --network), or run it unconfined "
            "with --sandbox off")


def _repo_top(root: str, options: "BuildOptions") -> List[str]:
    """With ``LoadRestrictionsNone`` a kustomization reads beyond its root: the repository's
    top is readable too."""
    if options.load_restrictor != NO_RESTRICTIONS:
        return []
    top = repository_top(root)
    return [top] if top else []


def settings_for(target: str) -> SandboxSettings:
    """``[sandbox]`` of the repository holding the kustomization directory ``target`` (the
    user's alone for a remote target or outside a repository)."""
    if not os.path.isdir(target):
        return SandboxSettings(repository=True)   # the user's alone
    top = repository_top(target)
    return load_config(top).sandbox if top else SandboxSettings(repository=True)


def check_mount(src: str, root: str, settings: Optional[SandboxSettings], rw: bool,
                describe: Callable[[], str]) -> None:
    """Refuse a docker ``--mount`` source outside the kustomization root unless ``allow-read``
    (``allow-write`` for a writable mount) covers it, as for confined plugins."""
    settings = (settings or SandboxSettings(repository=True)).granted()
    if settings.mode == "off":
        return
    path = os.path.realpath(src)
    if is_within(path, os.path.realpath(root)):
        return
    allowed = _expand(settings.allow_write if rw else settings.allow_read)
    if any(is_within(path, os.path.realpath(a)) for a in allowed):
        return
    key = "allow-write" if rw else "allow-read"
    raise PluginError(f"{describe()}: mount source '{src}' is outside the kustomization root "
                      f"{root}", tip=f"add it to {key} in {CONFIG_TABLE}, or --sandbox off")
