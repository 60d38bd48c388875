"""The configuration files and their keys: where a repository's kzgit table is read from
(``.kzgit.toml``, else ``[tool.kzgit]`` of ``pyproject.toml``), TOML parsing, and one table per
section of the keys it accepts (``KEYS``, ``REF_KEYS``, ``VALIDATE_KEYS``, ``SANDBOX_KEYS``,
``GITOPS_KEYS``): each key's attribute, the converter that checks its value and the words an
error uses (``docs/reference/configuration.md`` is generated from these tables). ``[lint]``'s
keys are the lint rules' (:mod:`kzgit.lint.policy`)."""
from __future__ import annotations

import os
import re
import sys

from kzgit.errors import UsageError
from kzgit.loader import NO_RESTRICTIONS, ROOT_ONLY

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Optional, Tuple


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


MISSING_SCHEMAS = ("warn", "error", "skip")


SANDBOX_MODES = ("auto", "require", "off")


def expand_path(p: str) -> str:
    return os.path.realpath(os.path.expanduser(p))


def toml_str(s: str) -> str:
    """``s`` as a TOML basic string (for a line the user copies into their file)."""
    import json   # start-up: only a refusal needs it; JSON's escapes are valid TOML basic strings
    return json.dumps(s)


def str_list(v: Any) -> Optional[Tuple[str, ...]]:
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)
    return None


def boolean(v: Any) -> Optional[bool]:
    return v if isinstance(v, bool) else None


def one_of(choices: Tuple[str, ...]) -> Any:
    return lambda v: v if isinstance(v, str) and v in choices else None


def nonempty_str(v: Any) -> Optional[str]:
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


_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


def _reviewed_executables(v: Any) -> Optional[Dict[str, str]]:
    """Repository-relative file paths, each pinned to ``sha256:<64 lowercase hex>``."""
    if not isinstance(v, dict):
        return None
    out: Dict[str, str] = {}
    for path, digest in v.items():
        norm = path.replace("\\", "/").strip("/")
        if not norm or path.startswith("/") or ".." in norm.split("/") or \
                os.path.normpath(norm).replace(os.sep, "/") != norm:
            raise ValueError(f"{path!r} is not a clean path relative to the repository's top "
                             "(such as \"vendor/fn/localized-files/example.com/fn/v1/fn\")")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ValueError(f"{path!r} = {digest!r}: expected \"sha256:\" and the file's 64 "
                             "lowercase hexadecimal digits (sha256sum FILE)")
        out[norm] = digest
    return out


# key -> (attribute, converter returning None for a bad value, what a good value is)
KEYS: Dict[str, Tuple[str, Any, str, str]] = {
    "roots": ("roots", str_list, "a list of glob strings",
        'the kustomization roots the hooks build (none set: every kustomization no other one references, components aside): a kustomization is a root when its directory, or a directory above it, matches (`"."` is the top of the repository); a component only when a glob matches its own directory (see [Components](../configuration.md#components))'),
    "exclude": ("exclude", str_list, "a list of glob strings",
        'files, and directories with everything below them, whose kustomizations are never roots and that exec-bits and localized-sync ignore; what a checked root reaches is followed and checked wherever it lies (`exclude = ["shop/components/**"]` does not hide a broken patch of a component a root includes)'),
    "engine": ("engine", one_of(ENGINES), "one of " + ", ".join(repr(e) for e in ENGINES),
        'what renders roots in `kzgit-render` and verifies `kzgit localize`; `kzgit hook render --engine` naming another engine overrides it (its binary is then looked up on PATH)'),
    "engine-path": ("engine_path", nonempty_str, "a path to a binary",
        'the binary of an external engine (not set: the engine\'s name looked up on PATH): a bare name is looked up on PATH, a path is used as given; a missing binary is a usage error; taken only when your `~/.config/kzgit/config.toml` names the same'),
    "timeout": ("timeout", _positive_number, "a positive number of seconds",
        'per root, for an external engine; at the limit its whole process group is killed'),
    "jobs": ("jobs", _jobs, "an integer >= 0 (0 = one per CPU)",
        'parallel builds in `kzgit-render`; `0` is one per CPU (the builtin engine with fewer than 6 roots builds in one process); `-j/--jobs` overrides it'),
    "load-restrictor": ("load_restrictor", one_of((ROOT_ONLY, NO_RESTRICTIONS)),
                        f"{ROOT_ONLY!r} or {NO_RESTRICTIONS!r}",
        'as `kzgit build --load-restrictor`, for `kzgit-render`'),
    "enable-alpha-plugins": ("enable_alpha_plugins", boolean, "true or false",
        'as `kzgit build --enable-alpha-plugins`, for `kzgit-render`'),
    "enable-exec": ("enable_exec", boolean, "true or false",
        'as `kzgit build --enable-exec`, for `kzgit-render`'),
    "enable-helm": ("enable_helm", boolean, "true or false",
        'as `kzgit build --enable-helm`, for `kzgit-render`'),
    "helm-command": ("helm_command", nonempty_str, "a helm binary: a name on PATH or a path",
        "as `kzgit build --helm-command`: the helm v3 binary `kzgit-render` and `kzgit diff` (the base revision's setting) run for `helmCharts`; taken only when your `~/.config/kzgit/config.toml` names the same"),
    "localized": ("localized", str_list, "a list of glob strings",
        'where localized copies live (none set: anywhere): `kzgit-localized-sync` and `kzgit-exec-bits` look only there'),
    "reviewed-executables": ("reviewed_executables", _reviewed_executables,
                             'a table of repository-relative paths to "sha256:<hex>"',
        'downloaded files of localized copies that stay executable (a vendored KRM exec function your team reviewed): `kzgit-exec-bits` leaves the bit of a file whose sha256 is the one pinned, and clears it, saying both digests, once the file changes (`"vendor/fn/localized-files/example.com/fn/v1/fn" = "sha256:..."`, the digest `sha256sum` prints)'),
    "cache": ("cache", boolean, "true or false",
        'the [render cache](../commands/cache.md#render-cache) for `kzgit-render` and `kzgit diff` (`--no-cache` turns it off for one run)'),
    "cache-size-mb": ("cache_size_mb", lambda v: v if isinstance(v, int) and not isinstance(v, bool)
                      and v > 0 else None, "a positive integer (megabytes)",
        "the render cache's bound; least recently used renders are evicted beyond it"),
    "kustomize-version": ("kustomize_version", _kustomize_version,
                          'a Kustomize release such as "5.8.1", "5.7" or "kubectl-1.33"',
        '(not set: the newest release kzgit supports) the Kustomize release every render is byte-identical to ([Kustomize versions](../kustomize.md#kustomize-versions)); `--kustomize-version` and `KZGIT_KUSTOMIZE_VERSION` win over it'),
    "warnings-as-errors": ("warnings_as_errors", boolean, "true or false",
        "`kzgit-render` (and `kzgit hook all`, also when it validates in place of rendering) fails on a root whose build warns (kustomize's deprecation warnings, vars never replaced, ...; kustomize issue #6040), and `kzgit lint` raises its `warnings` and `deprecated-field` rules to errors; the builtin engine only (an external binary's warnings go to its stderr)"),
}


def _regexes(v: Any) -> Optional[Tuple[str, ...]]:
    """A list of Go regular expressions (:mod:`kzgit.gore`: RE2, linear in the text)."""
    pats = str_list(v)
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


REF_KEYS: Dict[str, Tuple[str, Any, str, str]] = {
    "allowed": ("allowed", _regexes, "a list of valid regular expressions",
        '`kzgit-pinned-refs`: a ref must fully match one of them (the list replaces the default)'),
    "require-sha": ("require_sha", boolean, "true or false",
        '`kzgit-pinned-refs` accepts full commit SHAs only (as `--require-sha`)'),
    "check-cache": ("check_cache", boolean, "true or false",
        "`kzgit-pinned-refs` also refuses a ref that kzgit's remote cache (filled by earlier builds on this machine) knows as a branch, whatever its name"),
    "ignore-urls": ("ignore_urls", _regexes, "a list of valid regular expressions",
        "`kzgit-pinned-refs` does not check a reference one of them matches (searched anywhere in the URL as written, the image of a KRM function, or a helm chart's repository; anchor with `^`)"),
}


def _version(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and re.fullmatch(r"v?\d+\.\d+(\.\d+)?", v) else None


VALIDATE_KEYS: Dict[str, Tuple[str, Any, str, str]] = {
    "kubernetes-version": ("kubernetes_version", _version, 'a Kubernetes release such as "1.29"',
        'the release whose schemas apply (`1.29`, `v1.29`, `1.29.3` mean the same); outside the bundled range: exit 2'),
    "strict": ("strict", boolean, "true or false",
        "a field the schema does not declare is an error (the typo case; the API server's strict field validation refuses it too). For CRD schemas: an object that declares neither `additionalProperties` nor `x-kubernetes-preserve-unknown-fields` is closed"),
    "missing-schemas": ("missing_schemas", one_of(MISSING_SCHEMAS),
                        "one of " + ", ".join(repr(m) for m in MISSING_SCHEMAS),
        'a kind no source knows'),
    "schema-locations": ("schema_locations", str_list, "a list of path templates",
        'kubeconform-layout local schema templates, e.g. `"schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"`; an unknown template name, a URL, a missing directory or a template without names that is not a file: exit 2'),
    "crds": ("crds", str_list, "a list of CRD files or directories",
        'CRD files or directories (every `.yaml`, `.yml`, `.json` below)'),
    "skip-kinds": ("skip_kinds", str_list, "a list of kinds",
        'kinds (`SealedSecret`) or `apiVersion/kind` (`bitnami.com/v1alpha1/SealedSecret`) not validated'),
}


GITOPS_KEYS: Dict[str, Tuple[str, Any, str, str]] = {
    "repo-urls": ("repo_urls", str_list, "a list of repository URLs",
        'other URLs of this repository (besides its git remotes) that Applications and GitRepositories may name ([Argo CD and Flux](../gitops.md))'),
    "flux-strict-substitution": ("flux_strict_substitution", boolean, "true or false",
        "Flux post-build substitution fails on an unset variable, as the kustomize-controller's strict substitution does"),
    "argocd-build-options": ("argocd_build_options", lambda v: v if isinstance(v, str) else None,
                             'kustomize build flags, e.g. "--load-restrictor '
                             'LoadRestrictionsNone"',
        "Argo CD's `kustomize.buildOptions` when the repository holds no `argocd-cm`"),
}


SANDBOX_KEYS: Dict[str, Tuple[str, Any, str, str]] = {
    "mode": ("mode", one_of(SANDBOX_MODES), "one of " + ", ".join(repr(m) for m in SANDBOX_MODES),
        '(not set: yours, `"auto"` by default) how exec plugins, KRM exec functions and helm are confined ([Plugin sandbox](../sandbox.md)); `--sandbox` overrides it; `"off"` only if you granted it ([Trust](../sandbox.md#trust-what-a-repository-may-set-what-only-you-may-grant))'),
    "allow-read": ("allow_read", str_list, "a list of paths",
        'paths confined plugins may read and execute, within yours'),
    "allow-write": ("allow_write", str_list, "a list of paths",
        'paths confined plugins may write, within yours'),
    "network": ("network", boolean, "true or false",
        'TCP for confined plugins; `true` only if you granted it (`--network` or your file)'),
    "allow-env": ("allow_env", lambda v: str_list(v) if str_list(v) is not None and all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in v) else None,
                  "a list of environment variable names",
        'environment variables confined plugins receive beyond those kzgit passes them by default, within yours'),
    "allow-unconfined": ("allow_unconfined", boolean, "true or false",
        'where the kernel cannot confine plugins (no Landlock), mode `"auto"` runs them unconfined only when this is true (else it refuses); `true` only if you granted it'),
}


def apply(target: Any, table: Dict[str, Any], keys: Dict[str, Tuple[str, Any, str, str]],
           prefix: str, source: str, tables: Tuple[str, ...] = ()) -> None:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if key not in keys:
            known = ", ".join(sorted([*keys, *(f"[{t}]" for t in tables)]))
            raise UsageError(f"{source}: unknown key '{name}'", tip=f"known keys: {known}")
        attr, convert, expected, _meaning = keys[key]
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


def own_table(top: str) -> Tuple[str, Dict[str, Any]]:
    """The repository's kzgit table and its file (as :func:`config_from_reader` picks it)."""
    for name in (KZGIT_TOML, PYPROJECT):
        path = os.path.join(top, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = parse_toml(f.read(), path)
        if name == KZGIT_TOML:
            return path, data
        tool = data.get("tool", {})
        table = tool.get("kzgit") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            return path, table
    return "", {}


def parse_toml(data: bytes, where: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib as _toml   # start-up: only a repository with a configuration file pays for it
    else:  # pragma: no cover - exercised on old Pythons only
        import tomli as _toml   # start-up: as tomllib
    try:
        return _toml.loads(data.decode("utf-8"))
    except (_toml.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{where}: not valid TOML: {e}") from None


def tool_table(pyproject: Optional[bytes]) -> Any:
    """The ``[tool.kzgit]`` table of a ``pyproject.toml``'s bytes (None when absent, or when
    the file is not TOML: then the configuration's own reading reports it)."""
    if pyproject is None:
        return None
    try:
        data = parse_toml(pyproject, PYPROJECT)
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
        return parse_toml(own, KZGIT_TOML)
    return tool_table(read(PYPROJECT))
