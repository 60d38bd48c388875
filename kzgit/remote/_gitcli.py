"""Running the ``git`` CLI safely: scrubbed environment, pinned protocol
policy, redacted errors; the process itself runs under :mod:`kzgit.proc`
(timeout, own session, killed with its children and with kzgit).

kustomize execs ``git`` with the inherited environment, no ``--`` and a
27 s timeout per command (api/internal/git/gitrunner.go, cloner.go); its
``git fetch --depth=1 <url> <ref>`` runs ``?ref=--upload-pack=...`` as a
command.  kzgit validates refs before
anything runs and passes ``--`` before every positional.
"""
from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence

from kzgit import proc
from kzgit.errors import RemoteError
from kzgit.remote._redact import redact

#: Transports git may use for a top-level fetch (after insteadOf rewriting).
ALLOWED_PROTOCOLS = ("https", "http", "ssh", "git", "file")

# Configuration pinned on every git command.  ext:: runs a shell command, hooks
# could run code planted by a crafted submodule (CVE-2024-32002), fsmonitor is
# a configured command.
_PINNED_CONFIG = (
    "protocol.ext.allow=never",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "advice.detachedHead=false",
    "init.defaultBranch=kzgit",
)


def no_git_env(env: Optional[Mapping[str, str]] = None,
               keep_also: Sequence[str] = ()) -> Dict[str, str]:
    """The environment without ``GIT_*`` variables that redirect git: :func:`kzgit.proc.git_env`."""
    return proc.git_env(env, keep_also)


def git_env(protocols: Sequence[str] = ALLOWED_PROTOCOLS) -> Dict[str, str]:
    """Environment for a kzgit git command: scrubbed, no prompts, transports pinned."""
    env = no_git_env()
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ALLOW_PROTOCOL"] = ":".join(protocols)  # overrides protocol.*.allow config
    env["LC_ALL"] = "C"
    env["GCM_INTERACTIVE"] = "never"
    return env


# Subcommands whose positionals come from URLs; git's parse-options accepts options
# after positionals, so a ref "--upload-pack=<cmd>" after "origin" is an option.
_URL_SUBCOMMANDS = {"fetch", "ls-remote", "clone", "remote", "archive", "pull"}


def _refuse_late_options(args: Sequence[str], label: str) -> None:
    """Refuse a dash-argument after the first positional unless ``--`` came before it.

    A last line of defence for callers that build argv from URL parts without
    :func:`kzgit.remote.validate_spec`; nothing runs when it trips.
    """
    if not args or args[0] not in _URL_SUBCOMMANDS:
        return
    seen_positional = False
    for a in args[1:]:
        if a == "--":
            return
        if a.startswith("-"):
            if seen_positional:
                raise RemoteError(f"refusing to run git for '{label}': argument '{redact(a)}' "
                                  "would be read as an option")
        else:
            seen_positional = True


def run_git(args: Sequence[str], *, cwd: str, timeout: float, label: str,
            config: Sequence[str] = (), protocols: Sequence[str] = ALLOWED_PROTOCOLS,
            git: str = "git", secrets: Sequence[Optional[str]] = ()) -> str:
    """Run ``git <pinned -c> <config> <args>`` in ``cwd``; return stdout.

    The child runs in its own session (so ssh cannot prompt on the terminal);
    on timeout or KeyboardInterrupt its whole group is killed.  Errors are
    :class:`RemoteError` naming ``label`` (a redacted URL) and redacted git output.
    """
    _refuse_late_options(args, label)
    argv: List[str] = [git]
    for c in (*_PINNED_CONFIG, *config):
        argv += ["-c", c]
    argv += list(args)
    shown_cmd = redact(" ".join(["git", *args]), secrets)
    env = git_env(protocols)
    # never discover a repository above cwd (the cache may sit inside someone's repo)
    env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.abspath(cwd))
    try:
        res = proc.run(argv, cwd=cwd, env=env, timeout=timeout)
    except FileNotFoundError:
        raise RemoteError(f"no 'git' program on PATH; needed to fetch '{label}'") from None
    except OSError as e:
        raise RemoteError(f"cannot run git to fetch '{label}': {e.strerror or e}") from None
    if res.timed_out:
        raise RemoteError(f"'{shown_cmd}' timed out after {timeout:g}s fetching '{label}'",
                          tip="raise the limit with ?timeout=<seconds> on the URL")
    if res.overflowed:
        raise RemoteError(f"'{shown_cmd}' printed more than {proc.DEFAULT_MAX_OUTPUT} bytes "
                          f"fetching '{label}' and was killed")
    if res.returncode != 0:
        text = (res.stderr or res.stdout).decode("utf-8", "replace").strip()
        raise RemoteError(f"failed to run '{shown_cmd}' for '{label}': {redact(text, secrets)}")
    return res.stdout.decode("utf-8", "replace")
