"""Legacy exec plugins: an executable under the plugin home, run with its config in a temp file
(kustomize api/internal/plugins/execplugin/execplugin.go, the plugin home of api/konfig/plugins.go,
loader.go loadExecOrGoPlugin).

Deliberate differences: kzgit sets ``KUSTOMIZE_PLUGIN_MODE`` as the kustomize plugin guide
documents; Go ``.so`` plugins are refused with a clear message.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from kzgit import sandbox
from kzgit.options import BuildOptions
from kzgit.errors import PluginError
from kzgit.konfig.general import PLUGIN_HOME_ENV
from kzgit.loader import Loader
from kzgit.plugins.common import describe, plugin_timeout
from kzgit.plugins.groupplugin import group_plugin_path
from kzgit.versions import V5_7
from kzgit.resource import split_api_version
from kzgit.yamlio import dump_documents

__all__ = ["plugin_home", "legacy_plugin_path", "run_legacy"]

# api/internal/plugins/execplugin/execplugin.go
MAX_ARG_STRING_LENGTH = 131071
TMP_CONFIG_PREFIX = "kust-plugin-config-"

_SO_TIP = ("Go plugins can only be loaded by a kustomize binary built with the same Go toolchain; "
           "rebuild it as an exec plugin (an executable named like the .so, without the suffix) "
           "or as a KRM function (config.kubernetes.io/function annotation)")


def _home_dir() -> str:
    """api/konfig/plugins.go HomeDir: $HOME, else a literal ``~``."""
    return os.environ.get("HOME") or "~"


def plugin_home() -> str:
    """The first existing plugin home, as kustomize v5.5 resolves it (konfig.DefaultAbsPluginHome)."""
    candidates: List[Tuple[str, str]] = []
    env_home = os.environ.get(PLUGIN_HOME_ENV, "")
    candidates.append((f"homed in ${PLUGIN_HOME_ENV}", env_home))
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    candidates.append(("homed in $XDG_CONFIG_HOME",
                       os.path.join(xdg, "kustomize", "plugin") if xdg else ""))
    candidates.append(("homed in default value of $XDG_CONFIG_HOME",
                       os.path.join(_home_dir(), ".config", "kustomize", "plugin")))
    candidates.append(("homed in home directory", os.path.join(_home_dir(), "kustomize", "plugin")))
    tried = []
    for note, d in candidates:
        if d and os.path.exists(d):
            return d
        tried.append(f"('{d or '<no value>'}'; {note})")
    # api/types/errunabletofind.go
    raise PluginError("unable to find plugin root - tried: " + ", ".join(tried),
                      tip=f"put exec plugins under ${PLUGIN_HOME_ENV}/<group>/<version>/<lowercase kind>/<Kind>")


def legacy_plugin_path(config: Dict[str, Any], home: Optional[str] = None) -> str:
    """``<home>/<group>/<version>/<lowercase kind>/<Kind>`` (loader.go AbsolutePluginPath)."""
    api = config.get("apiVersion")
    group, version = split_api_version(api if isinstance(api, str) else "")
    kind = str(config.get("kind") or "")
    parts = [p for p in (group, version, kind.lower()) if p]
    return os.path.join(home if home is not None else plugin_home(), *parts, kind)


def shlex_split(s: str) -> List[str]:
    """execplugin.ShlexSplit (kustomize 5.7.1, PR #5943): words split at white space, quotes
    ``'`` and ``"`` (an empty pair gives no word), a backslash escaping the next character but
    inside single quotes, and an unquoted ``#`` ending the string, even inside a word; an
    unclosed quote is a ValueError."""
    out: List[str] = []
    cur: List[str] = []
    quote = ""
    escaped = False
    for c in s:
        if escaped:
            cur.append(c)
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif c in "'\"" and not quote:
            quote = c
        elif c == quote:
            quote = ""
        elif c == "#" and not quote:
            break
        elif not quote and _go_is_space(c):
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(c)
    else:
        if quote:
            raise ValueError("unclosed quote in string")
    if cur:
        out.append("".join(cur))
    return out


def google_shlex_split(s: str) -> List[str]:
    """github.com/google/shlex ``Split`` as kustomize 5.5.0 and 5.6.0 call it for ``argsOneLiner``
    (the error ignored): the words before an error (an unclosed quote, a trailing backslash
    drops the word being read). Unlike POSIX shells (and Python's shlex), a backslash inside
    double quotes escapes any character (``"x\\ny"`` is ``xny``: shlex.go
    escapingQuotedState); a ``#`` that starts a word starts a comment up to a newline; white
    space is space, tab, CR and LF only."""
    out: List[str] = []
    cur: List[str] = []
    state = "start"     # start, word, escape, dquote, dquote-escape, squote, comment
    for c in s:
        if state == "start":
            if c in " \t\r\n":
                continue
            state = {"\"": "dquote", "'": "squote", "\\": "escape", "#": "comment"}.get(c, "word")
            if state == "word":
                cur.append(c)
        elif state == "word":
            if c in " \t\r\n":
                out.append("".join(cur))
                cur, state = [], "start"
            else:
                state = {"\"": "dquote", "'": "squote", "\\": "escape"}.get(c, "word")
                if state == "word":
                    cur.append(c)
        elif state in ("escape", "dquote-escape"):
            cur.append(c)
            state = "word" if state == "escape" else "dquote"
        elif state == "dquote":
            if c == '"':
                state = "word"
            elif c == "\\":
                state = "dquote-escape"
            else:
                cur.append(c)
        elif state == "squote":
            if c == "'":
                state = "word"
            else:
                cur.append(c)
        elif c == "\n":    # comment
            cur, state = [], "start"
    if state == "word":
        out.append("".join(cur))
    return out


def _go_is_space(c: str) -> bool:
    """Go's unicode.IsSpace: Latin-1's \\t \\n \\v \\f \\r, space, U+0085 and U+00A0, and
    Unicode's White_Space beyond (Python's isspace also counts U+001C..U+001F)."""
    return c in "\t\n\v\f\r \x85\xa0" if c <= "\xff" else c.isspace()


def _legacy_args(config: Dict[str, Any], source: str, loader: Loader,
                 version: Tuple[int, int, int]) -> List[str]:
    """execplugin.processOptionalArgsFields: ``argsOneLiner`` (shlex) then ``argsFromFile`` lines."""
    args: List[str] = []
    one = config.get("argsOneLiner")
    if one and version == (5, 7, 0):
        # 5.7.0 split with carapace-shlex, replaced in 5.7.1 by kustomize's own ShlexSplit
        # (PR #5943) before anyone recorded how the two differ: kzgit does not guess
        raise PluginError(f"{describe(config, source)}: argsOneLiner is not supported as Kustomize 5.7.0 "
                          "splits it (carapace-shlex); kzgit reproduces 5.7.1's splitting",
                          tip="pin kustomize-version 5.7.1, or pass the arguments with argsFromFile")
    if one and version >= V5_7:
        # kustomize's own tokenizer, whose errors fail the build (PR #5943, 5.7.1)
        try:
            args += shlex_split(str(one))
        except ValueError as e:
            raise PluginError(f"{describe(config, source)}: failed to parse argsOneLiner: {e}") from None
    elif one:
        # github.com/google/shlex Split, whose error is ignored (`p.args, _ = shlex.Split(...)`)
        args += google_shlex_split(str(one))
    from_file = config.get("argsFromFile")
    if from_file:
        content = loader.load(str(from_file)).decode("utf-8", errors="replace")
        for line in content.split("\n"):
            line = line.lstrip(" ")
            if line:
                args.append(line)
    return args


def _legacy_plugin(config: Dict[str, Any], source: str) -> str:
    """Path of the legacy exec plugin for ``config`` (loader.go loadExecOrGoPlugin).

    Reached when no group plugin (:mod:`kzgit.plugins.groupplugin`) handles the config either,
    so a missing plugin names where kzgit looked for both protocols."""
    gpath = group_plugin_path(config)
    also = f"; no group plugin at {gpath} either" if gpath else ""
    try:
        path = legacy_plugin_path(config)
    except PluginError as e:
        raise PluginError(f"{e.message}{also}", tip=e.tip) from None
    if os.path.exists(path):
        # execplugin.ErrIfNotExecutable: no x bit at all
        if os.path.isdir(path) or (os.stat(path).st_mode & 0o111) == 0:
            raise PluginError(f"unexecutable plugin at: {path} (configured by "
                              f"{describe(config, source)})", tip=f"chmod +x {path}")
        return path
    if os.path.exists(path + ".so"):
        raise PluginError(f"Go plugin '{path}.so' (configured by {describe(config, source)}) "
                          f"is not supported by kzgit", tip=_SO_TIP)
    raise PluginError(f"external plugin '{config.get('kind', '')}' configured by "
                      f"{describe(config, source)} not found: no executable at {path}{also}",
                      tip=f"install the plugin at {path}"
                          + (f" (or a group plugin at {gpath})" if gpath else "")
                          + ", or turn the config into a KRM function with a "
                            "config.kubernetes.io/function annotation")


def run_legacy(config: Dict[str, Any], source: str, loader: Loader, options: BuildOptions,
                mode: str, stdin: Optional[bytes]) -> Tuple[bytes, str]:
    """execplugin.invokePlugin: argv[1] is a temp file with the config; cwd the kustomization root."""
    path = _legacy_plugin(config, source)
    label = f"plugin {path} ({describe(config, source)})"
    cfg = dump_documents([config])
    args = _legacy_args(config, source, loader, options.kustomize_version)
    # execplugin.getEnv: kustomize passes its whole environment; kzgit the plugin's allow-list
    # (kzgit.sandbox.plugin_environment) and these, which are kustomize's own
    env: Dict[str, str] = {}
    # variables longer than the hard limit are omitted (kustomize logs it)
    if len("KUSTOMIZE_PLUGIN_CONFIG_STRING=" + cfg) <= MAX_ARG_STRING_LENGTH:
        env["KUSTOMIZE_PLUGIN_CONFIG_STRING"] = cfg
    if len("KUSTOMIZE_PLUGIN_CONFIG_ROOT=" + loader.root) <= MAX_ARG_STRING_LENGTH:
        env["KUSTOMIZE_PLUGIN_CONFIG_ROOT"] = loader.root
    env["KUSTOMIZE_PLUGIN_MODE"] = mode  # the plugin guide's variable; kustomize 5.5 omits it
    fd, cfg_path = tempfile.mkstemp(prefix=TMP_CONFIG_PREFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(cfg)
        cwd = loader.root if os.path.isdir(loader.root) else None
        res = sandbox.run([path, cfg_path, *args], options=options, label=label,
                          root=loader.root, input=stdin, cwd=cwd, env=env,
                          timeout=plugin_timeout(options), read=[cfg_path])
    finally:
        try:
            os.unlink(cfg_path)
        except OSError:
            pass
    return res.stdout, label

