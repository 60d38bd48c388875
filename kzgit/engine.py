"""The rendering seam: one interface for the builtin engine and external kustomize binaries.

Teams whose deploy tool (Argo CD, Flux) pins a kustomize version want their
hooks to render with exactly that binary.  The hooks, ``kzgit localize``
verification and ``kzgit diff`` call an :class:`Engine` and never care which:

* ``builtin``: :func:`kzgit.build`, in process;
* ``kustomize``: ``kustomize build DIR`` (a binary on PATH or ``engine-path``);
* ``kubectl``: ``kubectl kustomize DIR``.

External engines run through :mod:`kzgit.proc` (a timeout, their own process
group, killed with their children on timeout, on interrupt and when kzgit
dies: kustomize runs git, helm, exec plugins); a failure is a
:class:`~kzgit.errors.BuildError` carrying the binary's own message, so all
engines report errors the same way.
"""
from __future__ import annotations

import json
import os
import re

from kzgit.builder import build
from kzgit.options import BuildOptions
from kzgit.config import Config
from kzgit.errors import BuildError, UsageError
from kzgit.loader import NO_RESTRICTIONS

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Mapping, Optional, Protocol
else:
    Protocol = object   # Engine is a type for checkers; nothing subclasses or isinstance()s it

DEFAULT_TIMEOUT = 120.0
# Last lines of an external engine's stderr kept in an error message.
_STDERR_TAIL_LINES = 20
_KLOG_START = re.compile(r"^[EWIF]\d{4} [\d:.]+ +\d+ [^]]+\] \"command failed\" err=<$")
# ... or on one line, the message Go-quoted: err="..."
_KLOG_LINE = re.compile(r"^[EWIF]\d{4} [\d:.]+ +\d+ [^]]+\] \"command failed\" err=(\".*\")$")


class Engine(Protocol):
    """Renders a kustomization directory to the YAML stream ``kustomize build`` prints."""

    name: str

    def render(self, path: str, options: BuildOptions) -> str:
        """Render ``path``; raise :class:`~kzgit.errors.BuildError` when it does not render."""
        ...


class BuiltinEngine:
    """kzgit's own Python engine."""

    name = "builtin"

    def render(self, path: str, options: BuildOptions) -> str:
        """Render with :func:`kzgit.build`."""
        return build(path, options).to_yaml()


def no_git_env(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The environment without git's per-repository variables.

    Inside a git hook, git exports GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE...
    for the repository being committed to; a ``git clone`` or ``git fetch``
    that kustomize runs for a remote base would then act on *that* repository
    (pre-commit/pre-commit#300, pre_commit/git.py no_git_env).  Configuration
    and transport variables are kept.
    """
    # an external kustomize clones remote bases itself: leave it the user's protocol and
    # prompt settings, which kzgit's own git commands pin
    from kzgit import proc   # start-up: a builtin engine's run (a warm hook) starts no program
    return proc.git_env(env, keep_also=("GIT_ALLOW_PROTOCOL", "GIT_TERMINAL_PROMPT"))


class ExternalEngine:
    """A ``kustomize`` or ``kubectl`` binary, run once per render."""

    def __init__(self, name: str, binary: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.name = name
        self.binary = binary
        self.timeout = timeout

    def argv(self, path: str, options: BuildOptions) -> List[str]:
        """The command line for rendering ``path`` with ``options``."""
        cmd = [self.binary, "kustomize" if self.name == "kubectl" else "build", path]
        if options.load_restrictor == NO_RESTRICTIONS:
            cmd.append(f"--load-restrictor={NO_RESTRICTIONS}")
        if options.reorder:
            cmd.append(f"--reorder={options.reorder}")
        for flag, on in (("--enable-alpha-plugins", options.enable_alpha_plugins),
                         ("--enable-exec", options.enable_exec),
                         ("--enable-helm", options.enable_helm),
                         ("--enable-managedby-label", options.enable_managedby_label),
                         ("--network", options.network)):
            if on:
                cmd.append(flag)
        if options.enable_helm and options.helm_command != "helm":
            cmd.append(f"--helm-command={options.helm_command}")
        cmd += [f"--helm-api-versions={v}" for v in options.helm_api_versions]
        if options.helm_kube_version:
            cmd.append(f"--helm-kube-version={options.helm_kube_version}")
        if options.helm_debug:
            cmd.append("--helm-debug")
        if options.as_current_user:
            cmd.append("--as-current-user")
        cmd += [f"--env={e}" for e in options.env]
        cmd += [f"--mount={m}" for m in options.mounts]
        return cmd

    def render(self, path: str, options: BuildOptions) -> str:
        """Run the binary; its stdout is the rendering, its stderr the error message."""
        from kzgit import proc   # start-up: as in no_git_env
        cmd = self.argv(path, options)
        shown = f"{os.path.basename(self.binary)} {' '.join(cmd[1:2])}".strip()
        try:
            res = proc.run(cmd, env=no_git_env(), timeout=self.timeout)
        except OSError as e:
            raise UsageError(f"engine {self.name!r}: cannot run {self.binary}: {e.strerror or e}") from None
        if res.timed_out:
            raise BuildError(f"{shown} {path}: timed out after {self.timeout:g}s")
        if res.overflowed:
            raise BuildError(f"{shown} {path}: printed more than {proc.DEFAULT_MAX_OUTPUT} "
                             "bytes and was killed")
        if res.returncode != 0:
            raise BuildError(_error_message(res.stderr.decode("utf-8", "replace"), shown, path,
                                            res.returncode))
        return res.stdout.decode("utf-8")


def _error_message(stderr: str, shown: str, path: str, code: int) -> str:
    # deprecation notices ("# Warning: 'commonLabels' is deprecated...") are not the error
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith("# Warning")]
    if not lines:
        return f"{shown} {path}: exit status {code}"
    # kubectl >= 1.30 logs through klog: 'E1122 19:54:26.89 1825 run.go:72] "command failed"
    # err="<Go-quoted message>"', or for a multi-line message 'err=<', the message indented by
    # a tab, then ' >'.  Keep the message only.
    for i, ln in enumerate(lines):
        one = _KLOG_LINE.match(ln)
        if one:
            try:
                lines = lines[:i] + str(json.loads(one.group(1))).splitlines() + lines[i + 1:]
            except ValueError:  # Go quoting JSON cannot read (\x escapes): keep the line
                pass
            break
        if _KLOG_START.match(ln):
            body = lines[i + 1:]
            if body and body[-1].strip() == ">":
                body = body[:-1]
            lines = lines[:i] + [b[1:] if b.startswith("\t") else b for b in body]
            break
    lines = lines[-_STDERR_TAIL_LINES:]
    # kustomize prints "Error: <msg>" (cobra); keep only the message, as builtin errors read.
    if lines and lines[0].startswith("Error: "):
        lines[0] = lines[0][len("Error: "):]
    return "\n".join(lines) or f"{shown} {path}: exit status {code}"


def get_engine(name: str = "builtin", path: Optional[str] = None,
               timeout: float = DEFAULT_TIMEOUT, source: str = "configuration") -> Engine:
    """The engine called ``name``; ``path`` overrides where its binary is.

    A missing binary is a :class:`~kzgit.errors.UsageError` naming the key in ``source``.
    """
    if name == "builtin":
        return BuiltinEngine()
    if name not in ("kustomize", "kubectl"):
        raise UsageError(f"{source}: bad value for 'engine': {name!r} "
                         "(expected 'builtin', 'kustomize' or 'kubectl')")
    import shutil   # start-up: shutil imports bz2 and lzma; the builtin engine never needs it
    binary = path or shutil.which(name)
    if path and not os.path.isabs(path) and os.sep not in path:
        binary = shutil.which(path)
    if not binary or not os.access(binary, os.X_OK):
        raise UsageError(f"{source}: engine {name!r}: no executable "
                         f"{path or name!r} found{'' if path else ' on PATH'}",
                         tip="set 'engine-path' to the binary, or use engine = \"builtin\"")
    return ExternalEngine(name, binary, timeout)


def engine_from_config(config: Config) -> Engine:
    """The engine a repository's configuration asks for."""
    return get_engine(config.engine, config.engine_path, config.timeout,
                      source=config.source or "configuration")

