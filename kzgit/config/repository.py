"""A repository's configuration: ``[tool.kzgit]`` in ``pyproject.toml`` or a ``.kzgit.toml``.

Both files hold the same keys (``.kzgit.toml`` at its top level); when both exist
``.kzgit.toml`` wins and ``pyproject.toml`` is not read for kzgit. Every unknown key and every bad
value is a :class:`~kzgit.errors.UsageError` naming the key and the file, so a typo never silently
turns a check off. The keys and their checks are :mod:`kzgit.config.tables`'; what may widen the
sandbox or name a program is the user's (:mod:`kzgit.config.user`, :mod:`kzgit.config.trust`).
"""
from __future__ import annotations

import os

from kzgit.config.tables import DEFAULT_REF_PATTERNS, GITOPS_KEYS, KEYS, KZGIT_TOML, PYPROJECT, REF_KEYS, SANDBOX_KEYS, VALIDATE_KEYS, apply, parse_toml, toml_str
from kzgit.config.trust import TRUST_KEYS, approvals, approve_tip, trust_digest
from kzgit.config.user import GRANT_KEYS, SandboxSettings, user_config, user_config_path
from kzgit.errors import UsageError
from kzgit.loader import NO_RESTRICTIONS, ROOT_ONLY
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Optional, Tuple


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


class Config(Record):
    """The validated kzgit configuration of one repository.

    A :class:`~kzgit.record.Record`, not a dataclass: every hook run reads one, and
    ``dataclasses`` imports ``inspect`` (a tenth of a warm hook's time).
    """

    __slots__ = ("roots", "exclude", "engine", "engine_path", "timeout", "jobs", "load_restrictor",
                 "enable_alpha_plugins", "enable_exec", "enable_helm", "helm_command", "localized",
                 "reviewed_executables",
                 "cache", "cache_size_mb", "refs", "validate", "sandbox", "source",
                 "kustomize_version", "kustomize_version_origin", "warnings_as_errors", "lint",
                 "gitops")

    def __init__(self, roots: Tuple[str, ...] = (), exclude: Tuple[str, ...] = (),
                 engine: str = "builtin", engine_path: Optional[str] = None, timeout: float = 120.0,
                 jobs: int = 0, load_restrictor: str = ROOT_ONLY, enable_alpha_plugins: bool = False,
                 enable_exec: bool = False, enable_helm: bool = False, helm_command: str = "helm",
                 localized: Tuple[str, ...] = (),
                 reviewed_executables: Optional[Dict[str, str]] = None, cache: bool = True,
                 cache_size_mb: int = 512,
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
        #: downloaded files of localized copies kept executable, each pinned to its sha256
        self.reviewed_executables: Dict[str, str] = \
            {} if reviewed_executables is None else reviewed_executables
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
    apply(cfg, table, KEYS, prefix, source, tables=("refs", "validate", "sandbox", "lint",
                                                       "gitops"))
    if cfg.kustomize_version is not None:
        cfg.kustomize_version_origin = f"{os.path.basename(source)} {prefix}kustomize-version"
    if refs is not None:
        _expect_table(refs, source, f"{prefix}refs")
        apply(cfg.refs, refs, REF_KEYS, f"{prefix}refs.", source)
    if validate is not None:
        _expect_table(validate, source, f"{prefix}validate")
        cfg.validate.source = source
        apply(cfg.validate, validate, VALIDATE_KEYS, f"{prefix}validate.", source)
    if lint is not None:
        _expect_table(lint, source, f"{prefix}lint")
        # each key a rule id (one severity each), checked when lint runs against the rule
        # registry, the one list of rule ids (kzgit.lint.policy)
        cfg.lint = LintTable(dict(lint), source, f"{prefix}lint.")
    if gitops is not None:
        _expect_table(gitops, source, f"{prefix}gitops")
        cfg.gitops = GitopsPolicy(source=source)
        apply(cfg.gitops, gitops, GITOPS_KEYS, f"{prefix}gitops.", source)
    if sandbox is not None:
        _expect_table(sandbox, source, f"{prefix}sandbox")
        cfg.sandbox.source = source
        apply(cfg.sandbox, sandbox, SANDBOX_KEYS, f"{prefix}sandbox.", source)
        # the repository's own: it may only narrow what the user grants (SandboxSettings.granted)
        cfg.sandbox.repository = True
        cfg.sandbox.keys = tuple(sandbox)
        cfg.sandbox.prefix = f"{prefix}sandbox."
    cfg.sandbox.approved = approved
    cfg.sandbox.trust_key = trust_key
    if not approved:
        check_programs(cfg, table, prefix, source, trust_key)
        if grants:
            check_grants(table, prefix, source, trust_key)
    return cfg


def _expect_table(value: Any, source: str, key: str) -> None:
    """A sub-table of the configuration (``[refs]``, ``[validate]``, ...) must be a table."""
    if not isinstance(value, dict):
        raise UsageError(f"{source}: bad value for '{key}': expected a table")


def check_programs(cfg: Config, table: Dict[str, Any], prefix: str, source: str,
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
    also = approve_tip(trust_key)
    for key, value in checks:
        mine = user.engine_path if key == "engine-path" else user.helm_command
        if mine != value:
            raise UsageError(
                f"{source}: '{prefix}{key}' = {toml_str(value)} names a program for kzgit to "
                "run; a repository may name one only when you have chosen the same",
                tip=f"if you trust that program, add {key} = {toml_str(value)} to {where}{also}; "
                    f"otherwise remove '{prefix}{key}' from {os.path.basename(source)}")
    if plugins and cfg.engine != "builtin" and user.sandbox.mode != "off":
        raise UsageError(
            f"{source}: engine = {toml_str(cfg.engine)} with '{prefix}{plugins[0]}' runs the "
            "repository's plugins unconfined (the plugin sandbox confines the builtin engine's "
            "only); a repository may not switch the sandbox off",
            tip=f'if you trust this repository, add mode = "off" to [sandbox] in {where}{also}; '
                f'otherwise use engine = "builtin" (the default)')


def check_grants(table: Dict[str, Any], prefix: str, source: str,
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
        shown = toml_str(value) if isinstance(value, str) else "true"
        what = ("lets kustomizations read files outside their root"
                if key == "load-restrictor" else "lets the repository's plugins run")
        raise UsageError(
            f"{source}: '{prefix}{key}' = {shown} {what}; a repository may turn it on only "
            "when you have granted it",
            tip=f"if you trust this repository, add {key} = {shown} to {user_config_path()} (it "
                f"applies wherever you run kzgit){approve_tip(trust_key)}; otherwise remove "
                f"'{prefix}{key}' from {os.path.basename(source) or 'its configuration'}")


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
        return parse_config(parse_toml(own, where(KZGIT_TOML)), where(KZGIT_TOML),
                            trust_key=trust_key, grants=grants)
    pyproject = read(PYPROJECT)
    if pyproject is None:
        return Config()
    data = parse_toml(pyproject, where(PYPROJECT))
    tool = data.get("tool", {})
    table = tool.get("kzgit") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise UsageError(f"{where(PYPROJECT)}: bad value for 'tool.kzgit': expected a table")
    return parse_config(table, where(PYPROJECT), prefix="tool.kzgit.", trust_key=trust_key,
                        grants=grants)


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
