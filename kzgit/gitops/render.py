"""Rendering an application as its controller renders it (:func:`render_app`).

A Flux Kustomization reads the repository as its source artifact shows it
(:class:`~kzgit.gitops.sourceignore.IgnoreFS`), with the kustomization Flux generates or
rewrites shown in place (:class:`~kzgit.loader.overlay.OverlayFS`), load restrictions off but
nothing outside the repository (:class:`ConfinedFS`); then post-build substitution and
``commonMetadata`` (:mod:`kzgit.gitops.flux`).  An Argo CD Application reads the repository
with its ``kustomize edit`` changes shown in place, built with its ``buildOptions``
(:mod:`kzgit.gitops.argocd`), or is a plain directory of manifests.  Nothing is written to the
repository.
"""
from __future__ import annotations

import posixpath

from kzgit.errors import KzgitError, LoadRestrictionError
from kzgit.gitops import argocd, flux
from kzgit.gitops.model import FLUX, App, as_dict
from kzgit.loader import KUSTOMIZATION_FILE_NAMES
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Hashable, List, Optional
    from kzgit.builder import BuildOptions
    from kzgit.gitops.catalog import Catalog
    from kzgit.loader import FileSystem
    from kzgit.rendercache.reads import Recorder
    from kzgit.resource import Resource


class AppError(KzgitError):
    """An application that does not render: one finding naming it and where it is defined."""

    def __init__(self, app: App, message: str, detail: str = "", line: Optional[int] = None,
                 cause: Optional[KzgitError] = None) -> None:
        super().__init__(message)
        self.app = app
        self.detail = detail or message   # the controller's error alone
        self.line = line if line is not None else app.line   # the field's line, else the app's
        self.cause = cause   # the build's own error (the render cache replays no passing one)


class Rendered(Record):
    """An application's resources as the cluster receives them, with the build's warnings and
    notes (variables only an encrypted Secret gives, sources not rendered)."""

    __slots__ = ("resources", "warnings", "notes")

    def __init__(self, resources: List[Resource], warnings: List[str], notes: List[str]) -> None:
        self.resources = resources
        self.warnings = warnings
        self.notes = notes

    def to_yaml(self) -> str:
        from kzgit.yamlio import dump_documents   # start-up: loaded only by what uses it
        return dump_documents([r.obj for r in self.resources])


class ConfinedFS:
    """``base`` with nothing outside ``top``: a path resolving outside it does not load
    (fluxcd/pkg ``kustomize/filesys`` MakeFsOnDiskSecure; for Argo CD, kzgit's own rule that
    a repository may narrow what a build reads, never widen it).

    As the file system of a controller's build (``base`` an
    :class:`~kzgit.loader.overlay.OverlayFS` showing the kustomization the controller
    writes), it lets the applications of a run share the bases they have in common
    (:mod:`kzgit.builder.cache`): it names what it shows apart from the rewritten files
    (:meth:`cache_identity`), which it lists (``overlaid``), and notes each kustomization
    file a build asks about (``kustomization_log``)."""

    def __init__(self, base: FileSystem, top: str, shows: str = "") -> None:
        from kzgit.loader.overlay import OverlayFS   # start-up: loaded only by what uses it
        self.base = base
        # what else the rewritten files show, the same in every view that says it (files
        # decrypted: the bases read through such a view are shared only with another one)
        self.shows = shows
        self.top = top.rstrip("/")
        self._real: Dict[str, str] = {}   # one render's symlink resolutions, asked once each
        self.overlaid: Dict[str, bytes] = base.files if isinstance(base, OverlayFS) else {}
        self._under = base.base if isinstance(base, OverlayFS) else base
        self.kustomization_log: List[str] = []

    def cache_identity(self) -> Hashable:
        """What this view shows, but for the files it rewrites (:attr:`overlaid`)."""
        from kzgit.builder.cache import fs_identity   # start-up: as the module's own
        from kzgit.gitops.sourceignore import IgnoreFS   # start-up: as the module's own
        under = self._under
        if isinstance(under, IgnoreFS):   # the artifact: its ignore rules are the matcher's
            return ("confined", self.top, self.shows, "artifact", under.top, under.matcher,
                    fs_identity(under.base))
        return ("confined", self.top, self.shows, fs_identity(under))

    def _asked(self, path: str) -> None:
        if path.rpartition("/")[2] in KUSTOMIZATION_FILE_NAMES or path in self.overlaid:
            self.kustomization_log.append(path)

    def _check(self, path: str) -> None:
        if not (path == self.top or path.startswith(self.top + "/")):
            raise LoadRestrictionError(f"security; file '{path}' is not in or below '{self.top}'")

    def read_bytes(self, path: str) -> bytes:
        self._asked(path)
        self._check(self.realpath(path))
        return self.base.read_bytes(path)

    def is_dir(self, path: str) -> bool:
        return self.base.is_dir(path)

    def is_file(self, path: str) -> bool:
        self._asked(path)
        return self.base.is_file(path)

    def exists(self, path: str) -> bool:
        self._asked(path)
        return self.base.exists(path)

    def realpath(self, path: str) -> str:
        real = self._real.get(path)
        if real is None:
            real = self.base.realpath(path)
            self._real[path] = real
        self._check(real)
        return real

    def listdir(self, path: str) -> List[str]:
        return self.base.listdir(path)


def _disk() -> FileSystem:
    from kzgit.loader import DiskFS   # start-up: as the module's own
    return DiskFS()


def render_app(catalog: Catalog, app: App, recorder: Optional[Recorder] = None) -> Rendered:
    """``app`` rendered as deployed (cached per catalog); :class:`AppError` when it does not.

    ``recorder``: the render cache's (:mod:`kzgit.gitops.cache`): the repository is read
    through its :class:`~kzgit.rendercache.reads.RecordingFS`, and what the build reads
    through the controller's view of it too (:class:`~kzgit.rendercache.reads.LayeredFS`)."""
    got = catalog.renders.get(id(app))
    if got is not None:
        return got
    err = catalog.render_errors.get(id(app))
    if isinstance(err, AppError):
        raise err
    if app.error:
        raise AppError(app, f"{app.id or app.base_id}: {app.error}")
    if not app.rendered:
        raise AppError(app, f"{app.id or app.base_id} ({app.file}:{app.line}) is not rendered: "
                            f"{app.reason or app.renderer}")
    try:
        if app.controller == FLUX:
            got = _render_flux(catalog, app, recorder)
        else:
            got = _render_argo(catalog, app, recorder)
    except (flux.FluxError, argocd.ArgoError) as e:
        line = app.field_line(e.field)
        err = AppError(app, f"{app.id or app.base_id} ({app.file}:{line}): {e}", str(e), line)
        catalog.render_errors[id(app)] = err
        raise err from None
    except KzgitError as e:
        from kzgit.errors import full_message   # start-up: loaded only by what uses it
        err = AppError(app, f"{app.id or app.base_id} ({app.file}:{app.line}): "
                            f"{full_message(e)}", full_message(e), cause=e)
        catalog.render_errors[id(app)] = err
        raise err from None
    catalog.renders[id(app)] = got
    for r in got.resources:   # what substituteFrom of a later application may name
        if r.obj.get("apiVersion") == "v1" and r.obj.get("kind") in ("ConfigMap", "Secret"):
            from kzgit.gitops.model import Doc   # start-up: as the module's own, loaded where it is used
            meta = as_dict(r.obj.get("metadata"))
            key = (str(r.obj["kind"]), str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            catalog.delivered.setdefault(key, Doc(r.obj, app.file, app.line, ""))
    return got


def _options(catalog: Catalog, app: App, fs: FileSystem, restrictor: str,
             extra: Optional[Dict[str, Any]] = None) -> BuildOptions:
    from kzgit.builder import BuildOptions   # start-up: loaded only by what uses it
    kw: Dict[str, Any] = dict(extra or {})
    return BuildOptions(load_restrictor=restrictor, fs=fs, kustomize_version=app.version,
                        kustomize_version_origin=app.version_origin or "the default",
                        cache=catalog.bases(), **kw)


def _base(repo: Any, recorder: Optional[Recorder]) -> FileSystem:
    """The repository's file system, read through ``recorder`` when one records."""
    return recorder.wrap_main() if recorder is not None else (repo.fs or _disk())


def _view(fs: FileSystem, recorder: Optional[Recorder]) -> FileSystem:
    """What the build reads: the controller's view, handed to ``recorder`` as it is."""
    if recorder is None:
        return fs
    from kzgit.rendercache.reads import LayeredFS   # start-up: only cached renders
    return LayeredFS(fs, recorder)


def _render_flux(catalog: Catalog, app: App, recorder: Optional[Recorder] = None) -> Rendered:
    from kzgit.gitops.sourceignore import IgnoreFS   # start-up: as the module's own, loaded where it is used
    from kzgit.loader import NO_RESTRICTIONS   # start-up: loaded only by what uses it
    from kzgit.loader.overlay import OverlayFS   # start-up: loaded only by what uses it
    repo = app.extra.get("repo") or catalog.repo   # another ref's tree, for a GitRepository on one
    assert app.path is not None and app.version is not None
    spec = as_dict(app.obj.get("spec"))
    base = _base(repo, recorder)
    # recorded: what is hidden and where paths lead is asked again, this render's record holds it
    artifact = IgnoreFS(base, repo.top, app.extra["matcher"], shared=recorder is None)
    dir_path = posixpath.join(repo.top, app.path) if app.path else repo.top
    # the manifests of a created kustomization are decoded once, by the build: only a build
    # that fails looks again for one that does not decode (Flux's error, which comes first)
    kfile, text, created = flux.generate(artifact, dir_path, spec, app.version, check=False)
    notes: List[str] = []
    shown = flux.decrypted_sources(ConfinedFS(artifact, repo.top), dir_path, repo.top, spec,
                                   notes) if flux.decrypts(spec) else {}
    fs = ConfinedFS(OverlayFS(artifact, {**shown, kfile: text}), repo.top,
                    "decrypted" if shown else "")
    try:
        # fluxcd/pkg kustomize Build runs krusty with Options{LoadRestrictions: None, plugins
        # off}: its Reorder is "", neither "legacy" nor "unspecified", so
        # api/krusty/kustomizer.go applySortOrder sorts only by the kustomization's own
        # sortOptions: the output keeps the resources' order, as --reorder none keeps it
        result = _build(dir_path, _options(catalog, app, _view(fs, recorder), NO_RESTRICTIONS,
                                           {"reorder": "none"}), kfile)
    except KzgitError:
        if created:
            flux.generate(artifact, dir_path, spec, app.version)
        raise
    resources = list(result.resources)
    flux.check_objects(resources)
    flux.decrypted(resources, spec, notes)
    post = spec.get("postBuild")
    if isinstance(post, dict):
        variables = flux.load_variables(app, spec, catalog.lookup_object)
        flux.substitute(resources, spec, variables, repo.settings.flux_strict_substitution, notes)
    flux.common_metadata(resources, spec)
    return Rendered(resources, list(result.warnings), notes)


def _render_argo(catalog: Catalog, app: App, recorder: Optional[Recorder] = None) -> Rendered:
    from kzgit.loader import ROOT_ONLY   # start-up: loaded only by what uses it
    from kzgit.loader.overlay import OverlayFS   # start-up: loaded only by what uses it
    from kzgit.resource import Resource   # start-up: loaded only by what uses it
    repo = app.extra.get("repo") or catalog.repo   # another ref's tree (targetRevision)
    resources: List[Resource] = []
    warnings: List[str] = []
    notes: List[str] = list(app.extra.get("skipped") or [])
    for source in app.extra.get("sources") or []:
        path = flux.spec_path({"path": source.get("path")})
        app_dir = posixpath.join(repo.top, path) if path else repo.top
        raw = _base(repo, recorder)
        base = ConfinedFS(raw, repo.top)
        if source.get("_kzgit_type") == argocd.DIRECTORY:
            directory = as_dict(source.get("directory"))
            resources.extend(Resource(o, source=app_dir) for o in
                             argocd.directory_objects(base, app_dir, directory))
            continue
        opts = as_dict(source.get("kustomize"))
        env = argocd.app_env(app, source)
        edited = argocd.edited_kustomization(base, app_dir, opts, env, repo.top)
        fs: FileSystem = ConfinedFS(OverlayFS(raw, {edited[0]: edited[1]}), repo.top) \
            if edited else base
        build_options = _build_options(catalog, app, opts)
        restrictor = str(build_options.pop("--load-restrictor", ROOT_ONLY))
        extra = _plugin_options(repo, build_options)
        result = _build(app_dir, _options(catalog, app, _view(fs, recorder), restrictor, extra),
                        edited[0] if edited else None)
        resources.extend(result.resources)
        warnings.extend(result.warnings)
    return Rendered(resources, warnings, notes)


def _build(path: str, options: BuildOptions, rewritten: Optional[str]) -> Any:
    """The build, where ``rewritten`` is a kustomization file the controller rewrote (Flux's
    generated one, Argo CD's after ``kustomize edit``): a line kustomize's error names in it
    is a line of the rewritten text, not of the file the user wrote, so it is left out."""
    from kzgit.builder import build   # start-up: loaded only by what uses it
    try:
        return build(path, options)
    except KzgitError as e:
        if rewritten is None:
            raise
        import re   # start-up: an error path only
        pattern = re.compile(re.escape(rewritten) + r":\d+:")
        e2 = e.reworded(pattern.sub(rewritten + ":", e.message))
        if e2.lead:
            e2.lead = pattern.sub(rewritten + ":", e2.lead)
        raise e2 from None


def _build_options(catalog: Catalog, app: App, opts: Dict[str, Any]) -> Dict[str, Any]:
    """argocd-cm ``kustomize.buildOptions`` (or ``.<v>`` for the Application's version), else
    ``[gitops] argocd-build-options``."""
    settings = catalog.argo_settings()
    text, origin = None, ""
    if settings is not None:
        v = str(opts.get("version") or "")
        if v and v in settings.version_options:
            text, origin = settings.version_options[v], f"{settings.where} kustomize.buildOptions.{v}"
        elif settings.build_options is not None:
            text, origin = settings.build_options, f"{settings.where} kustomize.buildOptions"
    if text is None and catalog.repo.settings.argocd_build_options is not None:
        text = catalog.repo.settings.argocd_build_options
        origin = f"{catalog.repo.settings.source or '.kzgit.toml'} [gitops] argocd-build-options"
    if not text:
        return {}
    return argocd.parse_build_options(text, origin)


def _plugin_options(repo: Any, flags: Dict[str, Any]) -> Dict[str, Any]:
    """What buildOptions ask a build to run, granted only as far as the repository's kzgit
    configuration enables it (a repository's argocd-cm never widens what kzgit runs)."""
    out: Dict[str, Any] = {}
    for flag, attr in (("--enable-helm", "enable_helm"),
                       ("--enable-alpha-plugins", "enable_alpha_plugins"),
                       ("--enable-exec", "enable_exec")):
        if flags.get(flag):
            if not getattr(repo, attr):
                raise argocd.ArgoError(
                    f"buildOptions {flag} needs {attr.replace('_', '-')} = true in the "
                    "repository's .kzgit.toml (kzgit runs no plugin its configuration does not "
                    "enable)")
            out[attr] = True
    if flags.get("--enable-managedby-label"):
        out["enable_managedby_label"] = True
    if flags.get("--reorder"):
        out["reorder"] = flags["--reorder"]
    if flags.get("--helm-kube-version"):
        out["helm_kube_version"] = flags["--helm-kube-version"]
    if flags.get("--helm-api-versions"):
        out["helm_api_versions"] = [v for v in str(flags["--helm-api-versions"]).split(",") if v]
    return out


