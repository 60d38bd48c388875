"""Running the ``git`` CLI safely: scrubbed environment, pinned protocol
policy, redacted errors; the process itself runs under :mod:`kzgit.proc`
(timeout, own session, killed with its children and with kzgit).

kustomize execs ``git`` with the inherited environment, no ``--`` and a
27 s timeout per command (api/internal/git/gitrunner.go, cloner.go); its
``git fetch --depth=1 <url> <ref>`` runs ``?ref=--upload-pack=...`` as a
command.  kzgit validates refs before
anything runs and passes ``--`` before every positional.

Credentials in an http(s) URL (``https://user:token@host/org/repo``) are taken out of the
URL before git sees it (:class:`GitAuth`) and handed back by a credential helper configured
for that URL's origin only (``credential.<scheme>://<host:port>.helper``).  Left in the URL,
git 2.39 sent them to the host an ``/info/refs`` redirect pointed at, and a user's
``url.<base>.insteadOf`` rule that rewrites the scheme carried them, in the path, to wherever
it points.  Git asks helpers by the URL it is about to request, after every rewrite and
redirect, so the helper answers for the written host and port and for nothing else; the
clone's ``.git/config`` never holds them either.
"""
from __future__ import annotations

import os
import urllib.parse
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

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


# The helper reads the credentials from its environment (visible to this user only), never from
# its command line (visible to every user in /proc/<pid>/cmdline).  git appends "get", "store"
# or "erase"; only "get" answers.
_HELPER = ("!f() { test \"$1\" = get || return 0; printf 'username=%s\\n' \"$KZGIT_GIT_USERNAME\"; "
           "test -n \"$KZGIT_GIT_PASSWORD\" && printf 'password=%s\\n' \"$KZGIT_GIT_PASSWORD\"; "
           "return 0; }; f")


class GitAuth:
    """An http(s) git URL split into the URL git is given and the credentials for its origin.

    ``url`` has no userinfo; ``config`` (``"key=value"`` entries, passed to git through
    ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` by :func:`run_git`) and ``env`` make git's
    credential machinery return the userinfo for ``<scheme>://<host>[:port]`` and no other
    origin.  The host is part of a configuration key: one that is not a host name, an IPv4 or
    a bracketed IPv6 address with an optional port is refused (an ``=`` or ``.helper`` in it
    would otherwise write configuration of the URL's choosing).  A URL without userinfo, or
    not http(s), is kept as it is with nothing to add.
    """

    __slots__ = ("url", "config", "env")

    def __init__(self, url: str) -> None:
        self.url = url
        self.config: Tuple[str, ...] = ()
        self.env: Dict[str, str] = {}
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
            return
        info, _, hostport = parts.netloc.rpartition("@")
        user, has_password, password = info.partition(":")
        user, password = urllib.parse.unquote(user), urllib.parse.unquote(password)
        if any(c in user + password for c in "\n\r\0"):
            raise RemoteError(f"refusing '{redact(url)}': its credentials contain a line break")
        if not _valid_hostport(hostport):
            raise RemoteError(f"refusing '{redact(url)}': '{hostport}' is not a host name or "
                              "address with an optional port")
        origin = f"{parts.scheme.lower()}://{hostport}"
        self.url = urllib.parse.urlunsplit(parts._replace(netloc=hostport))
        self.env = {"KZGIT_GIT_USERNAME": user}
        # an empty helper resets the list: the URL's credentials win over the user's helpers,
        # as they did when git read them from the URL; a user name alone leaves the helpers on
        self.config = (f"credential.{origin}.helper=",) if has_password else ()
        self.config += (f"credential.{origin}.helper={_HELPER}",
                        # a redirect of the first request only (git's default, pinned)
                        "http.followRedirects=initial")
        if has_password:
            self.env["KZGIT_GIT_PASSWORD"] = password


def _valid_hostport(hostport: str) -> bool:
    """``host[:port]``: a DNS name or IPv4 address (letters, digits, ``-``, ``.``, ``_``), or a
    bracketed IPv6 address; a port of digits."""
    import re   # start-up: only a URL with credentials
    return re.fullmatch(r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])"
                        r"(?::[0-9]{1,5})?", hostport) is not None


def config_env(entries: Sequence[str], env: Mapping[str, str]) -> Dict[str, str]:
    """``"key=value"`` configuration entries as git 2.31's ``GIT_CONFIG_COUNT`` /
    ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` variables, after those ``env`` already has
    (the user's own, which git reads first: ours win).  Key and value travel apart, so a value
    (or a host in a key) is never parsed for ``=`` as ``git -c key=value`` parses it."""
    try:
        start = max(0, int(env.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        start = 0
    out: Dict[str, str] = {}
    for n, entry in enumerate(entries, start):
        key, _, value = entry.partition("=")
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(entries))
    return out


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
            git: str = "git", secrets: Sequence[Optional[str]] = (),
            auth: Optional[GitAuth] = None) -> str:
    """Run ``git <args>`` in ``cwd`` with the pinned configuration and ``config`` (through
    :func:`config_env`); return stdout.

    The child runs in its own session (so ssh cannot prompt on the terminal);
    on timeout or KeyboardInterrupt its whole group is killed.  Errors are
    :class:`RemoteError` naming ``label`` (a redacted URL) and redacted git output.
    ``auth`` supplies the credentials of a URL given to git without them (:class:`GitAuth`).
    """
    _refuse_late_options(args, label)
    argv: List[str] = [git, *args]
    shown_cmd = redact(" ".join(["git", *args]), secrets)
    env = git_env(protocols)
    # the configuration through the environment, never "-c key=value" on the command line
    # (the credentials' origin is in a key; see GitAuth)
    env.update(config_env((*_PINNED_CONFIG, *config, *(auth.config if auth else ())), env))
    if auth:
        env.update(auth.env)
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
