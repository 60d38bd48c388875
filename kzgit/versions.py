"""The Kustomize releases kzgit renders as, and which deployer runs which: one table.

A build renders as one Kustomize release, carried in
:attr:`kzgit.builder.BuildOptions.kustomize_version` as a tuple such as ``(5, 8, 1)``.  A rule
that changed between releases keeps one port and switches beside it
(``if options.kustomize_version >= V5_7:``), citing the kustomize change.

Selection (:func:`select`): ``--kustomize-version``, else ``KZGIT_KUSTOMIZE_VERSION``, else the
``kustomize-version`` key of ``.kzgit.toml`` / ``[tool.kzgit]``, else :data:`DEFAULT`.  A value is
an exact release, a minor (its newest supported patch) or a deployer's name; a release kzgit
cannot reproduce byte for byte is refused, naming the nearest supported ones.

Sources, one per fact:

- kubectl: the ``Kustomize Version:`` line of ``kubectl version --client`` of kubectl 1.32.3,
  1.33.9, 1.35.2 and 1.36.4 (``scripts/record_fixture.py`` checks it before recording);
  1.34 and 1.37 from kubernetes/kubernetes ``staging/src/k8s.io/kubectl/go.mod`` on their
  release branches (sigs.k8s.io/kustomize/api v0.20.1 and v0.21.1).
- Argo CD: ``hack/installers/checksums`` and ``hack/tool-versions.sh`` (``kustomize_version``) of
  argoproj/argo-cd release-3.0 (5.6.0), release-3.1/3.2 (5.7.0), release-3.3 from v3.3.1 and
  release-3.4/3.5 (5.8.1) -- as kzgit issue 26 lists them.
- Flux: each Flux 2.N release ships fluxcd/kustomize-controller v1.N, whose ``go.mod``
  requires sigs.k8s.io/kustomize/api v0.19.0 (1.6), v0.20.1 (1.7), v0.21.1 (1.8, 1.9).
- What each release changed: kustomize's git history between the tags ``api/v0.18.0`` (5.5.0),
  ``api/v0.19.0`` (5.6.0), ``api/v0.20.1`` (5.7.1) and ``api/v0.21.1`` (5.8.1), each change
  cited beside the rule that switches on it.
"""
from __future__ import annotations

import os

from kzgit.errors import UsageError
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional, Protocol, Tuple, TypeVar
    Version = Tuple[int, int, int]

    class Configured(Protocol):
        """What these functions read of a repository's configuration (``kzgit.config.Config``,
        which imports this module: it is named by its shape, not imported)."""
        kustomize_version: Optional[str]
        kustomize_version_origin: str

        def replace(self: "C", **changes: Any) -> "C": ...

    C = TypeVar("C", bound=Configured)

# Compare a selected version with these: (5, 7, 1) >= V5_7.
V5_6 = (5, 6)
V5_7 = (5, 7)
V5_8 = (5, 8)

#: Supported releases -> (the kustomize API module tag, the kubectl release that embeds it,
#: the value ``buildMetadata: [managedByLabel]`` writes).  kubectl embeds kustomize as a module,
#: so api/provenance/provenance.go GetProvenance found no version before 5.7 ("(devel)"); 5.7
#: reads the module's version from the build info (kustomize commit 9c68bd2ee, "Get version from
#: the BuildInfo.Main.Version if not found in deps") [verified with each kubectl].
SUPPORTED: Dict[str, Tuple[str, str, str]] = {
    "5.5.0": ("api/v0.18.0", "1.32", "kustomize-(devel)"),
    "5.6.0": ("api/v0.19.0", "1.33", "kustomize-(devel)"),
    # no kubectl embeds 5.7.0; Argo CD 3.1 and 3.2 ship its kustomize binary. It renders as
    # 5.7.1 but for argsOneLiner, which kzgit refuses at 5.7.0 (kzgit.plugins.execplugin)
    "5.7.0": ("api/v0.20.0", "", "kustomize-v5.7.0"),
    "5.7.1": ("api/v0.20.1", "1.35", "kustomize-v5.7.1"),
    "5.8.1": ("api/v0.21.1", "1.36", "kustomize-v5.8.1"),
}
DEFAULT = "5.8.1"

#: Releases kzgit does not reproduce, and why.
REFUSED: Dict[str, str] = {
    "5.8.0": "its namespace propagation regressed (kustomize PR #6044 fixed it in 5.8.1)",
}

#: Deployer names -> the Kustomize release they run (see the module docstring for sources).
DEPLOYERS: Dict[str, str] = {
    "kubectl-1.32": "5.5.0", "kubectl-1.33": "5.6.0", "kubectl-1.34": "5.7.1",
    "kubectl-1.35": "5.7.1", "kubectl-1.36": "5.8.1", "kubectl-1.37": "5.8.1",
    "argocd-3.0": "5.6.0", "argocd-3.1": "5.7.0", "argocd-3.2": "5.7.0",
    # 3.3.0 shipped 5.8.0; 3.3.1 and later 5.8.1: the name means the newest patch release
    "argocd-3.3": "5.8.1", "argocd-3.4": "5.8.1", "argocd-3.5": "5.8.1",
    # Flux 2.N ships kustomize-controller 1.N
    "flux-2.6": "5.6.0", "flux-2.7": "5.7.1", "flux-2.8": "5.8.1", "flux-2.9": "5.8.1",
}

ENV_VAR = "KZGIT_KUSTOMIZE_VERSION"
CONFIG_KEY = "kustomize-version"


def parse(release: str) -> Version:
    a, b, c = release.split(".")
    return int(a), int(b), int(c)


def name(version: Version) -> str:
    """``(5, 8, 1)`` -> ``"5.8.1"``."""
    return ".".join(str(p) for p in version)


def managed_by(version: Version) -> str:
    """The ``app.kubernetes.io/managed-by`` value the release writes."""
    return SUPPORTED[name(version)][2]


def _aliases() -> Dict[str, str]:
    """``5.5`` .. ``5.8``: the newest supported patch of each minor."""
    out: Dict[str, str] = {}
    for release in SUPPORTED:   # in ascending order: the last patch of a minor wins
        out[release.rsplit(".", 1)[0]] = release
    return out


def _nearest(release: str) -> str:
    """The supported releases just below and just above ``release`` (by version order)."""
    try:
        want = parse(release)
    except ValueError:
        return ", ".join(SUPPORTED)
    below = [r for r in SUPPORTED if parse(r) < want]
    above = [r for r in SUPPORTED if parse(r) > want]
    return " or ".join(([below[-1]] if below else []) + ([above[0]] if above else []))


def resolve(text: str, origin: str) -> Version:
    """The release a value names; a :class:`UsageError` (exit 2) naming ``origin`` otherwise."""
    value = text.strip()
    bare = value[1:] if value[:1] == "v" else value
    release = DEPLOYERS.get(value.lower(), _aliases().get(bare, bare))
    if release in SUPPORTED:
        return parse(release)
    via = f" ({value} runs Kustomize {release})" if value.lower() in DEPLOYERS else ""
    if release in REFUSED:
        raise UsageError(f"{origin}: Kustomize {release} is not supported{via}: {REFUSED[release]}",
                         tip=f"pin the nearest supported release, {_nearest(release)}")
    try:
        parsed: Optional[Version] = parse(release)
    except ValueError:
        parsed = None
    if parsed is not None and parsed < parse(next(iter(SUPPORTED))):
        raise UsageError(f"{origin}: Kustomize {release} is not supported (older than "
                         f"{next(iter(SUPPORTED))})", tip=f"pin {next(iter(SUPPORTED))}, the oldest "
                         "supported release, or upgrade the deployer")
    known = ", ".join([*SUPPORTED, *_aliases(), "kubectl-1.32..1.37", "argocd-3.0..3.5",
                       "flux-2.6..2.9"])
    near = f"; nearest supported: {_nearest(release)}" if parsed is not None else ""
    raise UsageError(f"{origin}: unknown Kustomize version {value!r}{near}", tip=f"known: {known}")


class Selection(Record):
    """The release a build renders as, and where that choice came from (for messages)."""

    __slots__ = ("version", "origin")

    def __init__(self, version: Version, origin: str) -> None:
        self.version = version
        self.origin = origin   # "--kustomize-version", "KZGIT_KUSTOMIZE_VERSION", ".kzgit.toml ..."


FLAG = "--kustomize-version"


def select(flag: Optional[str] = None, configured: Optional[str] = None,
           where: str = ".kzgit.toml kustomize-version") -> Selection:
    """Precedence: the flag, the environment, the configuration (set at ``where``), the default."""
    if flag:
        return Selection(resolve(flag, FLAG), FLAG)
    env = os.environ.get(ENV_VAR)
    if env:
        return Selection(resolve(env, ENV_VAR), ENV_VAR)
    if configured:
        return Selection(resolve(configured, where), where)
    return Selection(parse(DEFAULT), "the default")


def with_flag(config: C, flag: Optional[str]) -> C:
    """``config`` with ``--kustomize-version`` (checked now: a bad value is exit 2) winning."""
    if not flag:
        return config
    resolve(flag, FLAG)
    return config.replace(kustomize_version=flag, kustomize_version_origin=FLAG)


def from_config(config: Configured) -> Selection:
    """The selection for a repository's configuration (a ``--kustomize-version`` recorded in
    it by :func:`with_flag`)."""
    if config.kustomize_version_origin == FLAG:
        return select(flag=config.kustomize_version)
    return select(None, config.kustomize_version, config.kustomize_version_origin)


def options(config: Configured) -> Dict[str, Any]:
    """``BuildOptions`` keywords for a repository's configuration."""
    sel = from_config(config)
    return {"kustomize_version": sel.version, "kustomize_version_origin": sel.origin}


def needs(feature: str, minimum: Tuple[int, ...], version: Version, origin: str) -> str:
    """The line read first when a field is newer than the selected release."""
    return (f"{feature} needs Kustomize {minimum[0]}.{minimum[1]} or later; this repository pins "
            f"{name(version)} ({origin})")
