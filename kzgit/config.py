"""Repository configuration: ``[tool.kzgit]`` in ``pyproject.toml`` or a ``.kzgit.toml``.

Both files hold the same keys (``.kzgit.toml`` at its top level); when both
exist ``.kzgit.toml`` wins and ``pyproject.toml`` is not read for kzgit.  Every
unknown key and every bad value is a :class:`~kzgit.errors.UsageError` naming
the key and the file, so a typo never silently turns a check off.

``engine-path`` and ``helm-command`` from a repository are taken only when the user's own
file (:func:`user_config`, ``~/.config/kzgit/config.toml``) names the same program, and
``enable-alpha-plugins``, ``enable-exec``, ``enable-helm`` = true and ``load-restrictor =
"LoadRestrictionsNone"`` (what runs and what is read) only when the user's file sets the same
value, or the user approved the repository's settings as they are (``kzgit trust``).

Keys (all optional)::

    roots = ["clusters/*"]          # globs of root dirs; default: unreferenced kustomizations
    exclude = ["tests/fixtures/**"] # globs of dirs the hooks ignore
    engine = "builtin"              # or "kustomize" / "kubectl"
    engine-path = "/opt/kustomize"  # the binary for an external engine (default: on PATH)
    timeout = 120                   # seconds per root for an external engine
    jobs = 0                        # parallel builds; 0 = one per CPU
    load-restrictor = "LoadRestrictionsRootOnly"
    enable-alpha-plugins = false
    enable-exec = false
    enable-helm = false
    helm-command = "helm"           # the helm v3 binary for helmCharts (with enable-helm)
    localized = ["vendor/**"]       # where localized copies live; default: anywhere
    cache = true                    # the persistent render cache (kzgit.rendercache)
    cache-size-mb = 512             # its bound; least recently used renders are evicted
    kustomize-version = "5.8.1"     # render as this release, or e.g. "5.7", "kubectl-1.33",
                                    # "argocd-3.0", "flux-2.7" (kzgit.versions); the
                                    # flag --kustomize-version and KZGIT_KUSTOMIZE_VERSION win

    [tool.kzgit.refs]               # `[refs]` in .kzgit.toml
    allowed = ['v?\\d+(\\.\\d+)+']  # regexes a ref must fully match (replaces the default)
    require-sha = false
    check-cache = false             # also refuse refs the remote cache knows as branches
    ignore-urls = ['^https://internal\\.example\\.com/']  # regexes: references never checked

    [tool.kzgit.validate]           # `[validate]` in .kzgit.toml (kzgit validate, kzgit-validate)
    kubernetes-version = "1.29"     # default: the newest release the bundled schemas cover
    strict = true                   # a field the schema does not declare is an error
    missing-schemas = "warn"        # or "error" / "skip": a kind no schema source knows
    schema-locations = ["schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"]
    crds = ["crds/"]                # CRD files or directories (besides the CRDs roots render)
    skip-kinds = ["SealedSecret"]   # kinds (or apiVersion/kind) not validated

    warnings-as-errors = false      # the render hook fails on a root whose build warns
                                    # (kustomize's warnings: deprecated fields, unused vars ...)

    [tool.kzgit.lint]               # `[lint]` in .kzgit.toml (kzgit lint, kzgit-lint)
    deprecated-field = "error"      # a rule id = "error", "warning" or "off" (docs/reference/lint-rules.md)
    unreferenced-file = "warning"   # (off by default)

    [tool.kzgit.gitops]             # `[gitops]` in .kzgit.toml (kzgit apps, build --app, hooks)
    repo-urls = ["https://github.com/old/name"]  # other URLs of this repository
    flux-strict-substitution = false  # kustomize-controller StrictPostBuildSubstitutions
    argocd-build-options = "--load-restrictor LoadRestrictionsNone"  # when no argocd-cm

    [tool.kzgit.sandbox]            # `[sandbox]` in .kzgit.toml; read by `kzgit build` too;
                                    # only narrows the user's (SandboxSettings.granted)
    mode = "auto"                   # "require" (fail where plugins cannot be confined) / "off"
    allow-read = ["~/.config/sops/age"]   # more paths plugins may read (~ expanded)
    allow-write = []                # more paths plugins may write
    network = false                 # TCP for confined plugins (as --network)
    allow-env = ["SOPS_AGE_KEY_FILE"]  # more environment variables plugins receive
    allow-unconfined = false        # where the kernel cannot confine (no Landlock), mode
                                    # "auto" runs plugins unconfined only when this is true
"""
from __future__ import annotations

import os
import re
import sys
from kzgit.errors import UsageError
from kzgit.loader import NO_RESTRICTIONS, ROOT_ONLY
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

PYPROJECT = "pyproject.toml"
KZGIT_TOML = ".kzgit.toml"
ENGINES = ("builtin", "kustomize", "kubectl")

# A ref "looks like a version" when it fully matches one of these.  Offline, a
# tag cannot be told from a branch by name, so this is a convention, not a proof;
# teams can replace it with `refs.allowed`.
DEFAULT_REF_PATTERNS: Tuple[str, ...] = (
    r"v?\d+(\.\d+)+([-+][0-9A-Za-z.+-]*)?",           # 1.2, v1.2.3, v1.2.3-rc.1+b5
    r"v\d+([-+][0-9A-Za-z.+-]*)?",                   # v1, v2-beta
    r"[A-Za-z][\w.-]*[/-]v?\d+([.-]\d+)+([-+][0-9A-Za-z.+-]*)?",  # api/v0.18.0, release-2024-01-01
)


class RefPolicy(Record):
    """What a remote reference's ref must look like (``kzgit-pinned-refs``)."""

    __slots__ = ("allowed", "require_sha", "check_cache", "ignore_urls")

    def __init__(self, allowed: Tuple[str, ...] = DEFAULT_REF_PATTERNS, require_sha: bool = False,
                 check_cache: bool = False, ignore_urls: Tuple[str, ...] = ()) -> None:
        self.allowed = allowed
        self.require_sha = require_sha
        # Also refuse a ref that kzgit's remote cache knows as a branch.  Off by default: the
        # verdict must not depend on what a previous build happened to cache on this machine.
        self.check_cache = check_cache
        # regular expressions searched in a reference as written: one that matches is exempt
        self.ignore_urls = ignore_urls


MISSING_SCHEMAS = ("warn", "error", "skip")


class ValidatePolicy(Record):
    """How ``kzgit validate`` and the ``kzgit-validate`` hook validate rendered resources."""

    __slots__ = ("kubernetes_version", "strict", "missing_schemas", "schema_locations", "crds",
                 "skip_kinds", "source")

    def __init__(self, kubernetes_version: Optional[str] = None, strict: bool = True,
                 missing_schemas: str = "warn", schema_locations: Tuple[str, ...] = (),
                 crds: Tuple[str, ...] = (), skip_kinds: Tuple[str, ...] = (), source: str = "") -> None:
        self.kubernetes_version = kubernetes_version     # None: the newest bundled release
        self.strict = strict
        self.missing_schemas = missing_schemas
        self.schema_locations = schema_locations
        self.crds = crds
        self.skip_kinds = skip_kinds
        #: the file whose table set it ("" without one: then ``kzgit hook all`` does not validate)
        self.source = source

class LintTable(Record):
    """The ``[lint]`` table as written: rule id -> severity, checked against the rule registry
    by :mod:`kzgit.lint.policy` when lint runs (the rules are lint's: this module lists none)."""

    __slots__ = ("severities", "source", "prefix")

    def __init__(self, severities: Optional[Dict[str, Any]] = None, source: str = "",
                 prefix: str = "lint.") -> None:
        #: what the table sets, rule id -> severity (the rest keep their default)
        self.severities: Dict[str, Any] = {} if severities is None else severities
        self.source = source   # the file whose table set it ("" without one)
        self.prefix = prefix   # how its keys are named in messages ("tool.kzgit.lint.")


class GitopsPolicy(Record):
    """``[gitops]``: what the controllers' own configuration says (:mod:`kzgit.gitops`)."""

    __slots__ = ("repo_urls", "flux_strict_substitution", "argocd_build_options", "source")

    def __init__(self, repo_urls: Tuple[str, ...] = (), flux_strict_substitution: bool = False,
                 argocd_build_options: Optional[str] = None, source: str = "") -> None:
        #: other URLs of this repository (a repository that moved keeps its old URL)
        self.repo_urls = repo_urls
        #: kustomize-controller's StrictPostBuildSubstitutions feature gate
        self.flux_strict_substitution = flux_strict_substitution
        #: argocd-cm ``kustomize.buildOptions`` where the repository holds no argocd-cm
        self.argocd_build_options = argocd_build_options
        self.source = source   # the file whose table set it ("" without one)


SANDBOX_MODES = ("auto", "require", "off")
#: How much each mode confines: a repository may choose a stricter mode than the user's, never
#: a looser one without the user's grant.
_STRICTNESS = {"off": 0, "auto": 1, "require": 2}
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
            mode = min(self.mode, user.mode, key=lambda m: -_STRICTNESS[m])   # the stricter
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
            granted = [_expand_path(p) for p in mine]
            for path in theirs:
                want = _expand_path(path)
                if not any(want == g or want.startswith(g.rstrip("/") + "/") for g in granted):
                    self._refuse(key, repr(path), f"{key} = [{_toml_str(path)}]", None)
            allow[attr] = theirs
        allow_env = user.allow_env
        if "allow-env" in self.keys:
            for name in self.allow_env:
                if name not in user.allow_env:
                    self._refuse("allow-env", repr(name), f"allow-env = [{_toml_str(name)}]", None)
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
        how += _approve_tip(self.trust_key)
        raise UsageError(
            f"{self.source}: '{self.prefix}{key}' = {value} widens the plugin sandbox; a "
            "repository's settings may only narrow it, widening is granted by you",
            tip=f"if you trust this repository, {how}; otherwise remove '{self.prefix}{key}' "
                f"from {os.path.basename(self.source) or 'its configuration'}")


def _expand_path(p: str) -> str:
    return os.path.realpath(os.path.expanduser(p))


def _toml_str(s: str) -> str:
    """``s`` as a TOML basic string (for a line the user copies into their file)."""
    import json   # start-up: only a refusal needs it; JSON's escapes are valid TOML basic strings
    return json.dumps(s)


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
    table = _parse_toml(data, path)
    cfg = UserConfig(source=path)
    sandbox = table.pop("sandbox", None)
    grants = {k: table.pop(k) for k in GRANT_KEYS if k in table}
    _apply(cfg, table, {k: _KEYS[k] for k in ("engine-path", "helm-command")}, "", path,
           tables=("sandbox",))
    _apply(cfg.grants, grants, {k: (k, *_KEYS[k][1:]) for k in GRANT_KEYS}, "", path)
    if sandbox is not None:
        if not isinstance(sandbox, dict):
            raise UsageError(f"{path}: bad value for 'sandbox': expected a table")
        cfg.sandbox.source = path
        _apply(cfg.sandbox, sandbox, _SANDBOX_KEYS, "sandbox.", path)
    return cfg


class Config(Record):
    """The validated kzgit configuration of one repository.

    A :class:`~kzgit.record.Record`, not a dataclass: every hook run reads one, and
    ``dataclasses`` imports ``inspect`` (a tenth of a warm hook's time).
    """

    __slots__ = ("roots", "exclude", "engine", "engine_path", "timeout", "jobs", "load_restrictor",
                 "enable_alpha_plugins", "enable_exec", "enable_helm", "helm_command", "localized",
                 "cache", "cache_size_mb", "refs", "validate", "sandbox", "source",
                 "kustomize_version", "kustomize_version_origin", "warnings_as_errors", "lint",
                 "gitops")

    def __init__(self, roots: Tuple[str, ...] = (), exclude: Tuple[str, ...] = (),
                 engine: str = "builtin", engine_path: Optional[str] = None, timeout: float = 120.0,
                 jobs: int = 0, load_restrictor: str = ROOT_ONLY, enable_alpha_plugins: bool = False,
                 enable_exec: bool = False, enable_helm: bool = False, helm_command: str = "helm",
                 localized: Tuple[str, ...] = (), cache: bool = True, cache_size_mb: int = 512,
                 refs: Optional[RefPolicy] = None, validate: Optional[ValidatePolicy] = None,
                 sandbox: Optional[SandboxSettings] = None, source: Optional[str] = None,
                 kustomize_version: Optional[str] = None, kustomize_version_origin: str = "",
                 warnings_as_errors: bool = False, lint: Optional[LintTable] = None,
                 gitops: Optional[GitopsPolicy] = None) -> None:
        self.roots = roots
        self.exclude = exclude
        self.engine = engine
        self.engine_path = engine_path
        self.timeout = timeout
        self.jobs = jobs
        self.load_restrictor = load_restrictor
        self.enable_alpha_plugins = enable_alpha_plugins
        self.enable_exec = enable_exec
        self.enable_helm = enable_helm
        self.helm_command = helm_command
        self.localized = localized
        self.cache = cache
        self.cache_size_mb = cache_size_mb
        self.refs = RefPolicy() if refs is None else refs
        self.validate = ValidatePolicy() if validate is None else validate
        # none written: the user's settings (SandboxSettings.granted)
        self.sandbox = SandboxSettings(repository=True) if sandbox is None else sandbox
        self.source = source     # the file it came from, for messages
        self.kustomize_version = kustomize_version   # as written; None: not set
        # where it was set, for messages: ".kzgit.toml kustomize-version", "--kustomize-version"
        self.kustomize_version_origin = kustomize_version_origin
        self.warnings_as_errors = warnings_as_errors   # the render hook fails on warnings too
        self.lint = LintTable() if lint is None else lint
        self.gitops = GitopsPolicy() if gitops is None else gitops


def _str_list(v: Any) -> Optional[Tuple[str, ...]]:
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)
    return None


def _bool(v: Any) -> Optional[bool]:
    return v if isinstance(v, bool) else None


def _one_of(choices: Tuple[str, ...]) -> Any:
    return lambda v: v if isinstance(v, str) and v in choices else None


def _nonempty_str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and v else None


def _positive_number(v: Any) -> Optional[float]:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
    return float(v) if ok else None


def _kustomize_version(v: Any) -> Optional[str]:
    """A value :func:`kzgit.versions.resolve` accepts, kept as written."""
    if not isinstance(v, str):
        return None
    from kzgit.versions import resolve   # start-up: only a repository that sets it
    try:
        resolve(v, "kustomize-version")
    except UsageError as e:
        raise ValueError(str(e).split(": ", 1)[1].replace("\nTIP: ", "; ")) from None
    return v


def _jobs(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


# key -> (attribute, converter returning None for a bad value, what a good value is)
_KEYS: Dict[str, Tuple[str, Any, str]] = {
    "roots": ("roots", _str_list, "a list of glob strings"),
    "exclude": ("exclude", _str_list, "a list of glob strings"),
    "engine": ("engine", _one_of(ENGINES), "one of " + ", ".join(repr(e) for e in ENGINES)),
    "engine-path": ("engine_path", _nonempty_str, "a path to a binary"),
    "timeout": ("timeout", _positive_number, "a positive number of seconds"),
    "jobs": ("jobs", _jobs, "an integer >= 0 (0 = one per CPU)"),
    "load-restrictor": ("load_restrictor", _one_of((ROOT_ONLY, NO_RESTRICTIONS)),
                        f"{ROOT_ONLY!r} or {NO_RESTRICTIONS!r}"),
    "enable-alpha-plugins": ("enable_alpha_plugins", _bool, "true or false"),
    "enable-exec": ("enable_exec", _bool, "true or false"),
    "enable-helm": ("enable_helm", _bool, "true or false"),
    "helm-command": ("helm_command", _nonempty_str, "a helm binary: a name on PATH or a path"),
    "localized": ("localized", _str_list, "a list of glob strings"),
    "cache": ("cache", _bool, "true or false"),
    "cache-size-mb": ("cache_size_mb", lambda v: v if isinstance(v, int) and not isinstance(v, bool)
                      and v > 0 else None, "a positive integer (megabytes)"),
    "kustomize-version": ("kustomize_version", _kustomize_version,
                          'a Kustomize release such as "5.8.1", "5.7" or "kubectl-1.33"'),
    "warnings-as-errors": ("warnings_as_errors", _bool, "true or false"),
}


def _regexes(v: Any) -> Optional[Tuple[str, ...]]:
    """A list of Go regular expressions (:mod:`kzgit.gore`: RE2, linear in the text)."""
    pats = _str_list(v)
    if pats is None:
        return None
    from kzgit import gore   # start-up: only a repository with `refs` patterns loads RE2
    for p in pats:
        try:
            gore.compile(p)
        except gore.RegexError as e:
            # Name the pattern and what is wrong with it: a list of ten regexes with one typo
            # is otherwise a hunt.
            raise ValueError(f"pattern {p!r} is not a valid regular expression: {e}") from None
    return pats


_REF_KEYS: Dict[str, Tuple[str, Any, str]] = {
    "allowed": ("allowed", _regexes, "a list of valid regular expressions"),
    "require-sha": ("require_sha", _bool, "true or false"),
    "check-cache": ("check_cache", _bool, "true or false"),
    "ignore-urls": ("ignore_urls", _regexes, "a list of valid regular expressions"),
}


def _version(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and re.fullmatch(r"v?\d+\.\d+(\.\d+)?", v) else None


_VALIDATE_KEYS: Dict[str, Tuple[str, Any, str]] = {
    "kubernetes-version": ("kubernetes_version", _version, 'a Kubernetes release such as "1.29"'),
    "strict": ("strict", _bool, "true or false"),
    "missing-schemas": ("missing_schemas", _one_of(MISSING_SCHEMAS),
                        "one of " + ", ".join(repr(m) for m in MISSING_SCHEMAS)),
    "schema-locations": ("schema_locations", _str_list, "a list of path templates"),
    "crds": ("crds", _str_list, "a list of CRD files or directories"),
    "skip-kinds": ("skip_kinds", _str_list, "a list of kinds"),
}


_GITOPS_KEYS: Dict[str, Tuple[str, Any, str]] = {
    "repo-urls": ("repo_urls", _str_list, "a list of repository URLs"),
    "flux-strict-substitution": ("flux_strict_substitution", _bool, "true or false"),
    "argocd-build-options": ("argocd_build_options", lambda v: v if isinstance(v, str) else None,
                             'kustomize build flags, e.g. "--load-restrictor '
                             'LoadRestrictionsNone"'),
}


_SANDBOX_KEYS: Dict[str, Tuple[str, Any, str]] = {
    "mode": ("mode", _one_of(SANDBOX_MODES), "one of " + ", ".join(repr(m) for m in SANDBOX_MODES)),
    "allow-read": ("allow_read", _str_list, "a list of paths"),
    "allow-write": ("allow_write", _str_list, "a list of paths"),
    "network": ("network", _bool, "true or false"),
    "allow-env": ("allow_env", lambda v: _str_list(v) if _str_list(v) is not None and all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in v) else None,
                  "a list of environment variable names"),
    "allow-unconfined": ("allow_unconfined", _bool, "true or false"),
}


def _apply(target: Any, table: Dict[str, Any], keys: Dict[str, Tuple[str, Any, str]],
           prefix: str, source: str, tables: Tuple[str, ...] = ()) -> None:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if key not in keys:
            known = ", ".join(sorted([*keys, *(f"[{t}]" for t in tables)]))
            raise UsageError(f"{source}: unknown key '{name}'", tip=f"known keys: {known}")
        attr, convert, expected = keys[key]
        try:
            converted = convert(value)
        except ValueError as e:  # a converter that can say what exactly is wrong
            raise UsageError(f"{source}: bad value for '{name}': {e}") from None
        if converted is None:
            raise UsageError(f"{source}: bad value for '{name}': {value!r} (expected {expected})")
        if isinstance(target, dict):   # a table whose keys are data (the user's grants)
            target[attr] = converted
        else:
            setattr(target, attr, converted)


def parse_config(table: Dict[str, Any], source: str, prefix: str = "",
                 trust_key: Optional[str] = None, grants: bool = True) -> Config:
    """Validate one kzgit table (``prefix`` is how its keys are named in messages).

    ``trust_key`` (the repository's top, on the disk) lets a recorded approval
    (:func:`approve`, ``kzgit trust``) of exactly these settings grant their widening.
    ``grants=False`` skips the refusal of :data:`GRANT_KEYS` the user did not grant, for a
    caller that reads only the ``[sandbox]`` table (``kzgit build``, whose flags decide).
    """
    cfg = Config(source=source)
    approved = (trust_key is not None and any(k in table for k in TRUST_KEYS)
                and approvals().get(trust_key) == trust_digest(table))
    table = dict(table)
    refs = table.pop("refs", None)
    validate = table.pop("validate", None)
    sandbox = table.pop("sandbox", None)
    lint = table.pop("lint", None)
    gitops = table.pop("gitops", None)
    _apply(cfg, table, _KEYS, prefix, source, tables=("refs", "validate", "sandbox", "lint",
                                                       "gitops"))
    if cfg.kustomize_version is not None:
        cfg.kustomize_version_origin = f"{os.path.basename(source)} {prefix}kustomize-version"
    if refs is not None:
        if not isinstance(refs, dict):
            raise UsageError(f"{source}: bad value for '{prefix}refs': expected a table")
        _apply(cfg.refs, refs, _REF_KEYS, f"{prefix}refs.", source)
    if validate is not None:
        if not isinstance(validate, dict):
            raise UsageError(f"{source}: bad value for '{prefix}validate': expected a table")
        cfg.validate.source = source
        _apply(cfg.validate, validate, _VALIDATE_KEYS, f"{prefix}validate.", source)
    if lint is not None:
        if not isinstance(lint, dict):
            raise UsageError(f"{source}: bad value for '{prefix}lint': expected a table")
        # each key a rule id (one severity each), checked when lint runs against the rule
        # registry, the one list of rule ids (kzgit.lint.policy)
        cfg.lint = LintTable(dict(lint), source, f"{prefix}lint.")
    if gitops is not None:
        if not isinstance(gitops, dict):
            raise UsageError(f"{source}: bad value for '{prefix}gitops': expected a table")
        cfg.gitops = GitopsPolicy(source=source)
        _apply(cfg.gitops, gitops, _GITOPS_KEYS, f"{prefix}gitops.", source)
    if sandbox is not None:
        if not isinstance(sandbox, dict):
            raise UsageError(f"{source}: bad value for '{prefix}sandbox': expected a table")
        cfg.sandbox.source = source
        _apply(cfg.sandbox, sandbox, _SANDBOX_KEYS, f"{prefix}sandbox.", source)
        # the repository's own: it may only narrow what the user grants (SandboxSettings.granted)
        cfg.sandbox.repository = True
        cfg.sandbox.keys = tuple(sandbox)
        cfg.sandbox.prefix = f"{prefix}sandbox."
    cfg.sandbox.approved = approved
    cfg.sandbox.trust_key = trust_key
    if not approved:
        _check_programs(cfg, table, prefix, source, trust_key)
        if grants:
            _check_grants(table, prefix, source, trust_key)
    return cfg


#: The keys whose values decide what runs with the user's rights (the table ``[sandbox]`` whole).
TRUST_KEYS = ("engine", "engine-path", "helm-command", "enable-alpha-plugins", "enable-exec",
              "enable-helm", "load-restrictor", "sandbox")


def trust_digest(table: Dict[str, Any]) -> str:
    """The SHA-256 of a repository's settings that an approval covers (:data:`TRUST_KEYS`):
    any change to one of them invalidates the approval, as a changed ``.envrc`` does
    ``direnv allow``'s."""
    import hashlib   # start-up: only an approval or a refusal needs it
    import json   # start-up: only an approval or a refusal needs it
    wanted = {k: table[k] for k in TRUST_KEYS if k in table}
    return hashlib.sha256(json.dumps(wanted, sort_keys=True, default=str).encode()).hexdigest()


def approvals_path() -> str:
    """``$XDG_DATA_HOME/kzgit/trusted.json`` (``~/.local/share/kzgit/trusted.json``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "kzgit", "trusted.json")


def approvals() -> Dict[str, str]:
    """Recorded approvals: repository top -> :func:`trust_digest` of the settings approved."""
    import json   # start-up: only an approval or a refusal needs it
    try:
        with open(approvals_path(), encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise UsageError(f"{approvals_path()}: cannot read: {e}") from None
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(data, dict) else {}


def approve(repo_root: str, revoke: bool = False) -> Tuple[str, Dict[str, Any]]:
    """Record (or, with ``revoke``, forget) the approval of the settings of the repository at
    ``repo_root`` as they are now; return the configuration file and the settings covered."""
    import json   # start-up: only an approval or a refusal needs it
    import tempfile   # start-up: only an approval or a refusal needs it
    top = os.path.realpath(repo_root)
    source, table = _own_table(top)
    wanted = {k: table[k] for k in TRUST_KEYS if k in table}
    records = approvals()
    if revoke:
        records.pop(top, None)
    else:
        records[top] = trust_digest(table)
    path = approvals_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".trusted-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return source, wanted


def _own_table(top: str) -> Tuple[str, Dict[str, Any]]:
    """The repository's kzgit table and its file (as :func:`config_from_reader` picks it)."""
    for name in (KZGIT_TOML, PYPROJECT):
        path = os.path.join(top, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = _parse_toml(f.read(), path)
        if name == KZGIT_TOML:
            return path, data
        tool = data.get("tool", {})
        table = tool.get("kzgit") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            return path, table
    return "", {}


def _check_programs(cfg: Config, table: Dict[str, Any], prefix: str, source: str,
                    trust_key: Optional[str] = None) -> None:
    """Refuse a repository's choice of a program that runs unconfined unless the user made it.

    ``engine-path`` and ``helm-command`` name a binary kzgit runs (helm confined, but
    unconfined where the kernel has no Landlock; an external engine never confined), and an
    external engine runs the plugins the repository enables unconfined too.  They take
    effect only when the user's file (:func:`user_config`) names the same program, or, for the
    external engine's plugins, grants ``mode = "off"``.
    """
    checks = [(k, table[k]) for k in ("engine-path", "helm-command") if k in table]
    plugins = [k for k in ("enable-alpha-plugins", "enable-exec", "enable-helm") if table.get(k)]
    if not checks and not (plugins and cfg.engine != "builtin"):
        return
    user = user_config()
    where = user_config_path()
    also = _approve_tip(trust_key)
    for key, value in checks:
        mine = user.engine_path if key == "engine-path" else user.helm_command
        if mine != value:
            raise UsageError(
                f"{source}: '{prefix}{key}' = {_toml_str(value)} names a program for kzgit to "
                "run; a repository may name one only when you have chosen the same",
                tip=f"if you trust that program, add {key} = {_toml_str(value)} to {where}{also}; "
                    f"otherwise remove '{prefix}{key}' from {os.path.basename(source)}")
    if plugins and cfg.engine != "builtin" and user.sandbox.mode != "off":
        raise UsageError(
            f"{source}: engine = {_toml_str(cfg.engine)} with '{prefix}{plugins[0]}' runs the "
            "repository's plugins unconfined (the plugin sandbox confines the builtin engine's "
            "only); a repository may not switch the sandbox off",
            tip=f'if you trust this repository, add mode = "off" to [sandbox] in {where}{also}; '
                f'otherwise use engine = "builtin" (the default)')


def _check_grants(table: Dict[str, Any], prefix: str, source: str,
                  trust_key: Optional[str]) -> None:
    """Refuse a repository's ``enable-*`` = true or ``load-restrictor = "LoadRestrictionsNone"``
    that the user has not granted: a pull request that adds a plugin must not turn plugins on
    in the same change (a repository may always narrow: false, ``LoadRestrictionsRootOnly``)."""
    wanted = [k for k in GRANT_KEYS if k in table
              and table[k] == (NO_RESTRICTIONS if k == "load-restrictor" else True)]
    if not wanted:
        return
    user = user_config()
    for key in wanted:
        value = table[key]
        if user.grants.get(key) == value:
            continue
        shown = _toml_str(value) if isinstance(value, str) else "true"
        what = ("lets kustomizations read files outside their root"
                if key == "load-restrictor" else "lets the repository's plugins run")
        raise UsageError(
            f"{source}: '{prefix}{key}' = {shown} {what}; a repository may turn it on only "
            "when you have granted it",
            tip=f"if you trust this repository, add {key} = {shown} to {user_config_path()} (it "
                f"applies wherever you run kzgit){_approve_tip(trust_key)}; otherwise remove "
                f"'{prefix}{key}' from {os.path.basename(source) or 'its configuration'}")


def _approve_tip(trust_key: Optional[str]) -> str:
    import shlex   # start-up: only an approval or a refusal needs it
    return (f", or approve this repository's settings as they are with "
            f"'kzgit trust {shlex.quote(trust_key)}'") if trust_key else ""


def _parse_toml(data: bytes, where: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib as _toml   # start-up: only a repository with a configuration file pays for it
    else:  # pragma: no cover - exercised on old Pythons only
        import tomli as _toml   # start-up: as tomllib
    try:
        return _toml.loads(data.decode("utf-8"))
    except (_toml.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{where}: not valid TOML: {e}") from None


def config_from_reader(read: Callable[[str], Optional[bytes]],
                       where: Callable[[str], str], trust_key: Optional[str] = None,
                       grants: bool = True) -> Config:
    """The configuration in a file tree that is not necessarily the disk (a git revision).

    ``read(name)`` returns the bytes of the top-level file ``name`` or None when
    it is absent; ``where(name)`` names it in messages (``HEAD:.kzgit.toml``).
    Same precedence and checks as :func:`load_config`.
    """
    own = read(KZGIT_TOML)
    if own is not None:
        return parse_config(_parse_toml(own, where(KZGIT_TOML)), where(KZGIT_TOML),
                            trust_key=trust_key, grants=grants)
    pyproject = read(PYPROJECT)
    if pyproject is None:
        return Config()
    data = _parse_toml(pyproject, where(PYPROJECT))
    tool = data.get("tool", {})
    table = tool.get("kzgit") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise UsageError(f"{where(PYPROJECT)}: bad value for 'tool.kzgit': expected a table")
    return parse_config(table, where(PYPROJECT), prefix="tool.kzgit.", trust_key=trust_key,
                        grants=grants)


def tool_table(pyproject: Optional[bytes]) -> Any:
    """The ``[tool.kzgit]`` table of a ``pyproject.toml``'s bytes (None when absent, or when
    the file is not TOML: then the configuration's own reading reports it)."""
    if pyproject is None:
        return None
    try:
        data = _parse_toml(pyproject, PYPROJECT)
    except UsageError:
        return None
    tool = data.get("tool")
    return tool.get("kzgit") if isinstance(tool, dict) else None


def settings_table(read: Callable[[str], Optional[bytes]]) -> Any:
    """kzgit's settings as written (the TOML table :func:`config_from_reader` would read from
    ``read``), None without any: two revisions compare equal when their tables do, whatever
    the names the parsed configurations carry for messages (``HEAD:.kzgit.toml``)."""
    own = read(KZGIT_TOML)
    if own is not None:
        return _parse_toml(own, KZGIT_TOML)
    return tool_table(read(PYPROJECT))


def load_config(repo_root: str, grants: bool = True) -> Config:
    """Read the configuration of the repository at ``repo_root`` (defaults when none);
    ``grants`` as :func:`parse_config`."""
    def read(name: str) -> Optional[bytes]:
        path = os.path.join(repo_root, name)
        if not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    return config_from_reader(read, lambda name: os.path.join(repo_root, name),
                              trust_key=os.path.realpath(repo_root), grants=grants)


def glob_match(path: str, patterns: Sequence[str]) -> bool:
    """Whether a repo-relative '/'-separated ``path``, or a dir above it, matches a glob.

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments, so
    ``vendor/*`` covers ``vendor/a/b/kustomization.yaml`` through ``vendor/a``.
    """
    if not patterns:
        return False
    regexes = [_glob_re(p) for p in patterns]
    parts = path.strip("/").split("/")
    for n in range(len(parts), 0, -1):
        prefix = "/".join(parts[:n])
        if any(r.test(prefix) for r in regexes):
            return True
    return False


def glob_names(path: str, patterns: Sequence[str]) -> bool:
    """Whether a glob matches the repo-relative ``path`` itself (a dir above it is not enough)."""
    return any(_glob_re(p).test(path.strip("/")) for p in patterns)


def unmatched_globs(patterns: Sequence[str], paths: Iterable[str]) -> List[str]:
    """The ``patterns`` that match none of ``paths`` itself (give the directories too, for
    the answer :func:`glob_match` would give)."""
    left = {p: _glob_re(p) for p in patterns}
    for path in paths:
        if not left:
            break
        for p in [p for p, r in left.items() if r.test(path.strip("/"))]:
            del left[p]
    return [p for p in patterns if p in left]


_globs: Dict[str, Any] = {}


def _glob_re(pattern: str) -> Any:
    """The glob as a Go regular expression run by RE2 (:mod:`kzgit.gore`): ``**/**/**x``
    against a long path backtracks in Python's ``re``; RE2 is linear in the path."""
    rx = _globs.get(pattern)
    if rx is not None:
        return rx
    from kzgit import gore   # start-up: only a configuration with globs loads RE2
    out, i = [], 0
    text = pattern.strip("/")
    while i < len(text):
        c = text[i]
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(gore.escape(c))
            i += 1
    rx = _globs[pattern] = gore.compile("^(?:" + "".join(out) + ")$")
    return rx
