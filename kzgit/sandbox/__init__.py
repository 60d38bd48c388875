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

The environment (:func:`plugin_environment`, whether confined or not): a plugin receives
``PATH``, ``LANG``, ``LANGUAGE``, ``LC_*``, ``TZ``, a ``HOME`` and ``TMPDIR`` of its own (a fresh
directory, removed afterwards), what the caller sets for that plugin (kustomize's
``KUSTOMIZE_PLUGIN_CONFIG_STRING`` / ``KUSTOMIZE_PLUGIN_CONFIG_ROOT``, helm's ``HELM_*_HOME``, a
function's ``exec.envs`` values) and the variables the user grants (``allow-env`` in the
user's ``[sandbox]``; ``build -e NAME`` for functions, as kustomize's ``--env``): a
``GITHUB_TOKEN`` or ``AWS_SECRET_ACCESS_KEY`` in kzgit's environment never reaches a plugin
whose output may be printed into a pull request's report.

Where the kernel cannot confine (no Landlock: macOS, Windows, an old kernel, a container that
blocks it), mode ``"auto"`` runs a plugin only when the user allowed unconfined runs
(``allow-unconfined = true`` in the user's ``[sandbox]``, or ``--sandbox off``), and every
command says on stderr that one ran unconfined (:func:`unconfined_reason`, also across the
render pool's forked workers).

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
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

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
           "settings_for", "repository_top", "plugin_environment", "check_env_names",
           "granted_env", "share_record"]

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
#: The same record shared with the render pool's forked workers (:func:`share_record`).
_shared: Optional[Any] = None
_SHARED_SIZE = 512


def share_record() -> None:
    """Before forking workers: make the record of unconfined runs shared with them, so that
    the command reports a plugin a worker ran unconfined (kzgit.workers.render_pool)."""
    global _shared
    if _shared is None:
        import mmap   # start-up: only a parallel render
        _shared = mmap.mmap(-1, _SHARED_SIZE)   # anonymous: MAP_SHARED, inherited by fork


def _record_unconfined(why: str) -> None:
    with _unconfined_lock:
        if not _unconfined:
            _unconfined.append(why)
        if _shared is not None and _shared[0] == 0:
            data = why.encode("utf-8", "replace")[:_SHARED_SIZE - 1]
            _shared[1:1 + len(data)] = data
            _shared[0] = 1


def forget_unconfined() -> None:
    """Start a new record (a host program running several commands in one process)."""
    with _unconfined_lock:
        _unconfined.clear()
        if _shared is not None:
            _shared[0] = 0


def unconfined_reason() -> Optional[str]:
    """Why a program ran unconfined in mode "auto" during this run, here or in a worker
    (None when none did)."""
    with _unconfined_lock:
        if _unconfined:
            return _unconfined[0]
        if _shared is not None and _shared[0] == 1:
            return bytes(_shared[1:_SHARED_SIZE]).rstrip(b"\0").decode("utf-8", "replace")
        return None


#: Variables of kzgit's environment every plugin receives (LC_* too): what a program needs to
#: find programs and speak the user's language; HOME and TMPDIR are the plugin's own.
INHERITED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ")


def plugin_environment(own: Optional[Mapping[str, str]], allow_env: Sequence[str],
                       home: str) -> Dict[str, str]:
    """The environment of a plugin: :data:`INHERITED_ENV` and ``LC_*`` from kzgit's, the
    ``allow_env`` the user granted, then ``own`` (what the caller sets for this plugin), with
    ``HOME`` and ``TMPDIR`` (``TMP``, ``TEMP``) the directory ``home``."""
    out = {k: v for k, v in os.environ.items()
           if k in INHERITED_ENV or k.startswith("LC_") or k in allow_env}
    out.update(own or {})
    out["HOME"] = home
    for k in ("TMPDIR", "TMP", "TEMP"):
        out[k] = home
    return out


def granted_env(settings: Optional[SandboxSettings]) -> Tuple[str, ...]:
    """The variables the user grants every plugin (``allow-env`` of the settings in force)."""
    return (settings or SandboxSettings(repository=True)).granted().allow_env


def check_env_names(names: Sequence[str], options: "BuildOptions", where: str) -> None:
    """Refuse a variable of the user's environment that a repository's function spec asks
    for (``exec.envs`` / ``container.envs`` naming ``NAME`` without a value) unless the user
    grants it: kzgit's allow-list, ``allow-env``, or ``-e NAME`` on the command line."""
    granted = set(granted_env(options.sandbox)) | {e for e in options.env if "=" not in e}
    for name in names:
        if name in INHERITED_ENV or name.startswith("LC_") or name in granted:
            continue
        raise PluginError(
            f"{where} asks for the environment variable {name}, which plugins do not receive "
            "unless you grant it",
            tip=f"if the function may read it, add allow-env = [{json_str(name)}] to "
                f"{CONFIG_TABLE}, or pass -e {name} to kzgit build")


def json_str(s: str) -> str:
    import json   # start-up: only a refusal
    return json.dumps(s)


def _expand(paths: Sequence[str]) -> List[str]:
    return [os.path.abspath(os.path.expanduser(p)) for p in paths]


def _interpreter_roots(program: str, env: Optional[Mapping[str, str]]) -> List[str]:
    """What the program's ``#!`` interpreter needs beyond the system directories: the prefix it
    is installed in (``bin/..``), for the path as named and as resolved (a venv's python links to
    the base installation), when that prefix is the interpreter's own installation
    (:func:`_own_installation`); else the interpreter's file alone.  ``~/.local/bin/python3``
    names ``~/.local``, which holds other programs' data (kzgit's approvals, keyrings, pip's
    user packages): not granted; a prefix as wide as ``/`` or the home directory never is."""
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
        # the PATH the plugin runs with: the caller's own, else kzgit's (plugin_environment)
        path = (env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
        found = shutil.which(names[0], path=path)
        if found is None:
            return []
        interp = found
    return _installation(interp)


def _installation(program: str) -> List[str]:
    """What running ``program`` (an absolute path) needs granted: for the path as named and as
    resolved (a symlink into a tool manager's directory, a venv's python into its base), the
    prefix it is installed in (``bin/..``) when that prefix is the program's own installation
    (:func:`_own_installation`), else the program's file alone."""
    home = os.path.realpath(os.path.expanduser("~"))
    out: List[str] = []
    for p in (os.path.abspath(program), os.path.realpath(program)):
        bindir = os.path.dirname(p)
        prefix = os.path.dirname(bindir) if os.path.basename(bindir) == "bin" else bindir
        real = os.path.realpath(prefix)
        if real in ("/", home) or home.startswith(real.rstrip("/") + "/"):
            out.append(p)   # too wide: the interpreter's file alone
        elif (real.startswith(home.rstrip("/") + "/") or prefix.startswith(home.rstrip("/") + "/")) \
                and not _own_installation(real):
            out.append(p)   # a shared prefix in the home (~/.local): the file alone
        else:
            out.append(prefix)
    return out


def _own_installation(prefix: str) -> bool:
    """Whether ``prefix`` is one interpreter's installation rather than a prefix many programs
    share: a virtual environment (``pyvenv.cfg``), a Python installation (its standard library:
    ``lib/pythonX.Y/os.py``; ``~/.local/lib/pythonX.Y`` holds only ``site-packages``), or a
    node installation (``include/node/node.h``)."""
    if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")) or \
            os.path.isfile(os.path.join(prefix, "include", "node", "node.h")):
        return True
    lib = os.path.join(prefix, "lib")
    try:
        names = os.listdir(lib)
    except OSError:
        return False
    return any(n.startswith("python") and os.path.isfile(os.path.join(lib, n, "os.py")) for n in names)


def resolve_program(program: str, env: Optional[Mapping[str, str]]) -> str:
    """The file ``program`` runs: a bare name (``helm``) found on the PATH the program runs
    with (the caller's, else kzgit's: :func:`plugin_environment`), as ``execvp`` finds it;
    a path made absolute."""
    if os.sep not in program:
        path = (env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
        found = shutil.which(program, path=path)
        if found is not None:
            return os.path.abspath(found)
    return os.path.abspath(program)


def _program_roots(named: str, program: str) -> List[str]:
    """What the program itself needs to start.  A path (an exec plugin, a function,
    ``--helm-command ./bin/helm``): its directory (files beside it), and where a symlink leads.
    A bare name found on the PATH (``helm`` in ``~/bin``, a tool manager's link): its
    installation as an interpreter's (:func:`_installation`), never the whole ``~/bin``."""
    if os.sep in named:
        return [*dict.fromkeys([os.path.dirname(program), *_installation(program)])]
    return _installation(program)


class _Confinement:
    """The rules for one process: built in the parent, entered in the child by ``__call__``."""

    def __init__(self, settings: SandboxSettings, program: str, read: Sequence[str],
                 write: Sequence[str], network: bool, env: Optional[Mapping[str, str]]) -> None:
        from kzgit.sandbox import _landlock   # ctypes and Landlock load only to confine a program
        self.tmpdir = tempfile.mkdtemp(prefix="kzgit-sandbox-")
        self.network = network
        named, program = program, resolve_program(program, env)
        self.program = program
        self.read = [*dict.fromkeys([*_program_roots(named, program),
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
    ``network`` overrides whether TCP is open (helm pulling a chart); ``env`` the variables
    this call sets for the plugin, on top of :func:`plugin_environment`'s.  A failure of a
    confined program says what the sandbox allowed and which key widens it.
    """
    settings = (options.sandbox or SandboxSettings(repository=True)).granted()
    if settings.mode != "off":
        ok, why = available()
        if ok:
            return _run_confined(argv, settings, options, label, root, input, cwd, env, timeout,
                                 check, read, write, network)
        if settings.mode == "require":
            raise PluginError(f"{label}: the plugin sandbox is required ({settings.source or '--sandbox require'}) "
                              f"but {why}",
                              tip="run where Landlock is available, or set mode = \"auto\" and "
                                  f"allow-unconfined = true in {CONFIG_TABLE} to run plugins "
                                  "unconfined here")
        if not settings.allow_unconfined:
            raise PluginError(
                f"{label}: the plugin sandbox cannot confine it here ({why}), and plugins run "
                "unconfined only when you allow it",
                tip=f"if you trust the plugins you run, add allow-unconfined = true to "
                    f"{CONFIG_TABLE}, or pass --sandbox off")
        _record_unconfined(why)
    home = tempfile.mkdtemp(prefix="kzgit-plugin-")
    try:
        return proc.run_process(argv, label=label, input=input, cwd=cwd,
                                env=plugin_environment(env, settings.allow_env, home),
                                timeout=timeout, check=check)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run_confined(argv: Sequence[str], settings: SandboxSettings, options: "BuildOptions",
                  label: str, root: str, input: Optional[bytes], cwd: Optional[str],
                  env: Optional[Mapping[str, str]], timeout: Optional[float], check: bool,
                  read: Sequence[str], write: Sequence[str],
                  network: Optional[bool]) -> proc.Result:
    net = settings.network or options.network if network is None else network
    roots = [root, *_repo_top(root, options)]
    try:
        confinement = _Confinement(settings, str(argv[0]), [*roots, *read], write, net, env)
    except OSError as e:
        raise PluginError(f"{label}: cannot set up the plugin sandbox: {e.strerror or e}") from None
    try:
        return proc.run_process(argv, label=label, input=input, cwd=cwd,
                                env=plugin_environment(env, settings.allow_env, confinement.tmpdir),
                                timeout=timeout, check=check, sandbox=confinement,
                                hint=_hint(confinement))
    except PluginError as e:
        program = confinement.program
        if str(e).startswith(f"{label}: cannot run '") and "permission denied" in str(e) \
                and os.access(program, os.X_OK):
            # executable outside: Landlock refused it (a file the rules do not cover)
            raise _refused(label, str(argv[0]), program) from None
        raise
    finally:
        confinement.close()


def _refused(label: str, named: str, program: str) -> PluginError:
    """The sandbox refused to start ``program``: say so, with the path and the grant."""
    real = os.path.realpath(program)
    where = program if named == program else f"{program}, found for '{named}' on the PATH"
    if real != program:
        where += f", a link to {real}"
    return PluginError(
        f"{label}: the plugin sandbox refused to run '{named}' ({where}): it may run only "
        "what the sandbox grants",
        tip=f"if you trust it, add allow-read = [{json_str(os.path.dirname(real))}] to "
            f"{CONFIG_TABLE}, or pass --sandbox off")


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
    # the [sandbox] table only: the build's own flags decide which plugins run
    return load_config(top, grants=False).sandbox if top else SandboxSettings(repository=True)


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
