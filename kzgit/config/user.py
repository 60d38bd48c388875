"""The user's own configuration (``$XDG_CONFIG_HOME/kzgit/config.toml``,
``~/.config/kzgit/config.toml``): what only the user may grant, wherever they run kzgit.

Its ``[sandbox]`` table bounds a repository's (:class:`SandboxSettings`, whose
:meth:`~SandboxSettings.granted` applies the rule that a repository may only narrow the user's
grants, the command line winning), and its ``engine-path`` and ``helm-command`` are the programs
a repository may name (:func:`kzgit.config.repository.check_programs`)."""
from __future__ import annotations

import os

from kzgit.config.tables import KEYS, SANDBOX_KEYS, apply, expand_path, parse_toml, toml_str
from kzgit.config.trust import approve_tip
from kzgit.errors import UsageError
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional, Tuple


#: How much each mode confines: a repository may choose a stricter mode than the user's, never
#: a looser one without the user's grant.
STRICTNESS = {"off": 0, "auto": 1, "require": 2}


#: The user's own configuration file, under ``$XDG_CONFIG_HOME`` (default ``~/.config``).
USER_CONFIG = os.path.join("kzgit", "config.toml")


class SandboxSettings(Record):
    """How plugins are confined (:mod:`kzgit.sandbox`): ``[sandbox]``, then the flags.

    Settings a repository wrote (``repository=True``, from its ``.kzgit.toml`` or
    ``pyproject.toml``) may only narrow what the user grants: the command line (``--sandbox``,
    ``--network``, recorded by :meth:`with_flags`) and the user's own ``[sandbox]`` table
    (:func:`user_config`).  :meth:`granted` applies that rule; settings made by a caller (the
    library's user, a test) are the user's own and are taken as they are.
    """

    __slots__ = ("mode", "allow_read", "allow_write", "network", "source", "repository", "keys",
                 "prefix", "flag_mode", "flag_network", "approved", "trust_key", "allow_env",
                 "allow_unconfined")

    def __init__(self, mode: str = "auto", allow_read: Tuple[str, ...] = (),
                 allow_write: Tuple[str, ...] = (), network: bool = False, source: str = "",
                 repository: bool = False, keys: Tuple[str, ...] = (), prefix: str = "sandbox.",
                 flag_mode: Optional[str] = None, flag_network: bool = False,
                 approved: bool = False, trust_key: Optional[str] = None,
                 allow_env: Tuple[str, ...] = (), allow_unconfined: bool = False) -> None:
        #: "auto": confine where the kernel can, run unconfined elsewhere; "require": fail where
        #: it cannot; "off": never confine
        self.mode = mode
        #: extra paths plugins may read (and execute), ``~`` expanded when used
        self.allow_read = allow_read
        #: extra paths plugins may write, ``~`` expanded when used
        self.allow_write = allow_write
        #: TCP for every confined process of the build
        self.network = network
        #: the file the settings came from ("" for defaults)
        self.source = source
        #: the repository's settings (those of ``keys``; none when it wrote no table), which
        #: only narrow what the user grants (see :meth:`granted`)
        self.repository = repository
        #: the keys the repository's table set, and how its messages name them
        self.keys = keys
        self.prefix = prefix
        #: the command line's ``--sandbox`` and ``--network``: the user's, they win
        self.flag_mode = flag_mode
        self.flag_network = flag_network
        #: the user approved these very settings of this repository (``kzgit trust``), and
        #: the repository's top on the disk that approvals are recorded for (None: a revision)
        self.approved = approved
        self.trust_key = trust_key
        #: environment variables plugins receive beyond kzgit's allow-list (kzgit.sandbox.env)
        self.allow_env = allow_env
        #: in mode "auto" where the kernel cannot confine, run plugins unconfined (else refuse)
        self.allow_unconfined = allow_unconfined

    def with_flags(self, mode: Optional[str] = None, network: bool = False) -> "SandboxSettings":
        """These settings with the command line's ``--sandbox`` / ``--network`` winning."""
        return self.replace(mode=mode or self.mode, network=self.network or network,
                            flag_mode=mode or self.flag_mode,
                            flag_network=self.flag_network or network)

    def granted(self, user: "Optional[SandboxSettings]" = None) -> "SandboxSettings":
        """The settings in force: the repository's narrowing the user's (``user``, default
        :func:`user_config`'s), the flags winning.  A repository asking for more than the user
        granted is a :class:`~kzgit.errors.UsageError` naming the key and how to grant it."""
        if not self.repository:
            return self
        if user is None:
            user = user_config().sandbox
        if self.approved:
            return self._approved(user)
        mode = self.flag_mode or user.mode
        if self.flag_mode is None and "mode" in self.keys:
            if self.mode == "off" and user.mode != "off":
                self._refuse("mode", '"off"', 'mode = "off"', "--sandbox off")
            mode = min(self.mode, user.mode, key=lambda m: -STRICTNESS[m])   # the stricter
        user_network = self.flag_network or user.network
        network = user_network
        if "network" in self.keys:
            if self.network and not user_network:
                self._refuse("network", "true", "network = true", "--network")
            network = self.network or self.flag_network
        allow: Dict[str, Tuple[str, ...]] = {}
        for key, attr in (("allow-read", "allow_read"), ("allow-write", "allow_write")):
            mine: Tuple[str, ...] = getattr(user, attr)
            if key not in self.keys:
                allow[attr] = mine
                continue
            theirs: Tuple[str, ...] = getattr(self, attr)
            granted = [expand_path(p) for p in mine]
            for path in theirs:
                want = expand_path(path)
                if not any(want == g or want.startswith(g.rstrip("/") + "/") for g in granted):
                    self._refuse(key, repr(path), f"{key} = [{toml_str(path)}]", None)
            allow[attr] = theirs
        allow_env = user.allow_env
        if "allow-env" in self.keys:
            for name in self.allow_env:
                if name not in user.allow_env:
                    self._refuse("allow-env", repr(name), f"allow-env = [{toml_str(name)}]", None)
            allow_env = self.allow_env
        unconfined = user.allow_unconfined
        if "allow-unconfined" in self.keys:
            if self.allow_unconfined and not user.allow_unconfined:
                self._refuse("allow-unconfined", "true", "allow-unconfined = true", "--sandbox off")
            unconfined = self.allow_unconfined
        return SandboxSettings(mode=mode, allow_read=allow["allow_read"],
                               allow_write=allow["allow_write"], network=network, source=self.source,
                               allow_env=allow_env, allow_unconfined=unconfined)

    def _approved(self, user: "SandboxSettings") -> "SandboxSettings":
        """The user approved exactly these settings (``kzgit trust``): each key the repository
        wrote applies as written, the user's own settings for the rest, and the paths and
        variables of both (an approval widens what the user allows, never drops it)."""
        def mine_or_theirs(key: str, attr: str) -> Any:
            return getattr(self, attr) if key in self.keys else getattr(user, attr)

        def both(key: str, attr: str) -> Tuple[str, ...]:
            theirs: Tuple[str, ...] = getattr(self, attr) if key in self.keys else ()
            return tuple(dict.fromkeys([*getattr(user, attr), *theirs]))
        return SandboxSettings(
            mode=self.flag_mode or mine_or_theirs("mode", "mode"),
            allow_read=both("allow-read", "allow_read"), allow_write=both("allow-write", "allow_write"),
            network=self.flag_network or bool(mine_or_theirs("network", "network")),
            allow_env=both("allow-env", "allow_env"),
            allow_unconfined=bool(mine_or_theirs("allow-unconfined", "allow_unconfined")),
            source=self.source)

    def _refuse(self, key: str, value: str, grant: str, flag: Optional[str]) -> None:
        how = f"add {grant} to [sandbox] in {user_config_path()} (it applies wherever you run kzgit)"
        if flag:
            how += f", or pass {flag} to kzgit build"
        how += approve_tip(self.trust_key)
        raise UsageError(
            f"{self.source}: '{self.prefix}{key}' = {value} widens the plugin sandbox; a "
            "repository's settings may only narrow it, widening is granted by you",
            tip=f"if you trust this repository, {how}; otherwise remove '{self.prefix}{key}' "
                f"from {os.path.basename(self.source) or 'its configuration'}")


class UserConfig(Record):
    """The user's own settings (:func:`user_config`): what only the user may grant."""

    __slots__ = ("sandbox", "engine_path", "helm_command", "source", "grants")

    def __init__(self, sandbox: Optional[SandboxSettings] = None, engine_path: Optional[str] = None,
                 helm_command: Optional[str] = None, source: str = "",
                 grants: Optional[Dict[str, Any]] = None) -> None:
        self.sandbox = SandboxSettings() if sandbox is None else sandbox
        #: programs that run unconfined, which a repository may name only when they are these
        self.engine_path = engine_path
        self.helm_command = helm_command
        self.source = source
        #: :data:`GRANT_KEYS` the user set: a repository's widening value of one is taken only
        #: when it is the user's (``enable-exec = true``, ``load-restrictor = "LoadRestrictionsNone"``)
        self.grants: Dict[str, Any] = {} if grants is None else grants


#: The repository keys that widen what runs (plugins) and what is read (the load restrictor):
#: a repository's value is taken only when the user's file sets the same (or ``kzgit trust``).
GRANT_KEYS = ("enable-alpha-plugins", "enable-exec", "enable-helm", "load-restrictor")


def user_config_path() -> str:
    """``$XDG_CONFIG_HOME/kzgit/config.toml`` (``~/.config/kzgit/config.toml``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, USER_CONFIG)


def user_config() -> UserConfig:
    """The user's configuration file (:func:`user_config_path`); defaults when it is absent.

    Keys: ``engine-path`` and ``helm-command`` (the programs a repository may name),
    :data:`GRANT_KEYS` (what a repository may turn on: ``enable-exec = true`` lets a
    repository's ``enable-exec = true`` apply; it turns nothing on by itself), and a
    ``[sandbox]`` table with the repository's keys (``mode``, ``allow-read``, ``allow-write``,
    ``network``, ``allow-env``, ``allow-unconfined``), which apply wherever the user runs kzgit
    and bound what a repository may set.
    """
    path = user_config_path()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return UserConfig()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    table = parse_toml(data, path)
    cfg = UserConfig(source=path)
    sandbox = table.pop("sandbox", None)
    grants = {k: table.pop(k) for k in GRANT_KEYS if k in table}
    apply(cfg, table, {k: KEYS[k] for k in ("engine-path", "helm-command")}, "", path,
           tables=("sandbox",))
    apply(cfg.grants, grants, {k: (k, *KEYS[k][1:]) for k in GRANT_KEYS}, "", path)
    if sandbox is not None:
        if not isinstance(sandbox, dict):
            raise UsageError(f"{path}: bad value for 'sandbox': expected a table")
        cfg.sandbox.source = path
        apply(cfg.sandbox, sandbox, SANDBOX_KEYS, "sandbox.", path)
    return cfg
