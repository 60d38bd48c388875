"""The localizer walk: one :class:`_Localizer` per kustomization root.

A port of the behaviour of ``api/internal/localizer/localizer.go`` and
``locloader.go`` (kustomize api/v0.18.0) plus the parts of the proposal
(``proposals/22-04-localize-command.md``) upstream never shipped: absolute
references into the target, KRM function exec binaries, comment-preserving
rewrites, a lock file.  Facts taken from upstream are cited at each step;
nothing here prints — warnings and notes are collected on :class:`Run`.

Its size has a reason: it is one walk (the localizer's recursion over a kustomization and
every file it names) whose per-field handlers share the walk's state (scope, destination, lock
entries); the helpers that do not already live in ``_paths``, ``_yaml``, ``_fetch`` and ``lock``.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import posixpath
import stat
from typing import Any, Callable, Dict, List, Optional, Tuple

from kzgit.errors import BuildError, KzgitError, LoadRestrictionError
from kzgit.kustomization import decode_kustomization
from kzgit.konfig.general import BUILTIN_API_VERSION, FUNCTION_ANNOTATIONS, HELM_DEFAULT_HOME
from kzgit.loader import ROOT_ONLY, Loader, is_within
from kzgit.localize import _paths
from kzgit.localize._fetch import Clone, Cloner, RepoSpec, fetch_file, parse_repo_spec
from kzgit.localize._yaml import YamlText
from kzgit.localize.errors import LocalizeError
from kzgit.remote import is_http_url, redact
from kzgit.yamlio import load_documents, load_yaml11


# api/internal/localizer/builtinplugins.go: which fields of which builtin plugin
# hold paths, and how each is localized ("file", "source" = key=file, "resource"
# = inline or file, "home" = chart home directory).
BUILTIN_PATH_FIELDS: Dict[str, List[Tuple[Tuple[str, ...], str]]] = {
    "ConfigMapGenerator": [(("env",), "file"), (("envs",), "file"), (("files",), "source")],
    "SecretGenerator": [(("env",), "file"), (("envs",), "file"), (("files",), "source")],
    "HelmChartInflationGenerator": [(("valuesFile",), "file"), (("additionalValuesFiles",), "file")],
    "PatchTransformer": [(("path",), "file")],
    "PatchJson6902Transformer": [(("path",), "file")],
    "ReplacementTransformer": [(("replacements", "path"), "file")],
    "PatchStrategicMergeTransformer": [(("paths",), "resource")],
}


@dataclasses.dataclass
class FileRecord:
    """One file written into NEWDIR (for the lock file)."""

    sha256: str
    source: Optional[str] = None          # absolute path of the original file
    source_sha256: Optional[str] = None   # its hash when copied (detects drift)
    url: Optional[str] = None             # remote file URL, or the repository it came from
    commit: Optional[str] = None          # the commit, for files from a repository
    executable_stripped: bool = False


@dataclasses.dataclass
class RemoteRecord:
    """One remote root checked out (for the lock file)."""

    url: str
    ref: str
    commit: str
    path: str                             # where in NEWDIR it was localized


@dataclasses.dataclass
class Run:
    """State shared by every root of one localization."""

    scope: str                            # real path of the scope (the repo clone for remote)
    new_dir: str                          # the final NEWDIR (absolute; does not exist yet)
    tmp_dir: str                          # where NEWDIR is being built
    cloner: Cloner
    files: Dict[str, FileRecord] = dataclasses.field(default_factory=dict)
    remotes: Dict[Tuple[str, str], RemoteRecord] = dataclasses.field(default_factory=dict)
    chart_homes: Dict[str, str] = dataclasses.field(default_factory=dict)
    warnings: List[str] = dataclasses.field(default_factory=list)
    needs_flags: Dict[str, str] = dataclasses.field(default_factory=dict)   # flag -> why
    exec_binaries: List[str] = dataclasses.field(default_factory=list)

    def rel(self, abs_dst: str) -> str:
        return os.path.relpath(abs_dst, self.tmp_dir).replace(os.sep, "/")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lookup(m: Any, field: str) -> Optional[Any]:
    """The key of ``m`` matching ``field`` case-insensitively (Go encoding/json)."""
    if not isinstance(m, dict):
        return None
    if field in m:
        return field
    low = field.lower()
    for k in m:
        if isinstance(k, str) and k.lower() == low:
            return k
    return None


def _resource_problem(doc: Any) -> Optional[str]:
    """Why ``doc`` is not a Kubernetes resource kustomize accepts (None if it is)."""
    if not isinstance(doc, dict):
        return "not a YAML mapping"
    kind = doc.get("kind")
    if not kind or not isinstance(kind, str):
        return "missing kind"
    if kind.endswith("List") and "items" in doc:
        return None
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not (meta.get("name") or meta.get("generateName")):
        return f"missing metadata.name in object {{{doc.get('apiVersion', '')} {kind}}}"
    return None


def _check_resources(text: str, what: str) -> None:
    """kustomize's resmap factory ``NewResMapFromBytes``: every document is a resource."""
    for doc in load_documents(text.encode("utf-8") if isinstance(text, str) else text, what):
        problem = _resource_problem(doc)
        if problem:
            raise BuildError(f"{what}: {problem}")


class _Localizer:
    """Localizes one kustomization root into ``dst`` (localizer.go ``localizer``)."""

    def __init__(self, run: Run, loader: Loader, dst: str, local: bool,
                 clone: Optional[Clone] = None) -> None:
        self.run = run
        self.ldr = loader
        self.root = loader.root
        self.dst = dst
        self.local = local        # inside the local scope (not inside a clone)
        self.clone = clone

    # -- the kustomization file ------------------------------------------------------------
    def localize(self) -> None:
        """localizer.go ``localize``: load, rewrite native fields and builtin plugins, write."""
        path, name = self.ldr.find_kustomization_file()
        # Through the loader: a kustomization file symlinked out of its root is refused,
        # as kustomize's LoadKustFile (api/internal/target/kusttarget.go) refuses it.
        content = self.ldr.load(name)
        _unmarshal_kustomization(content, path)
        yt = YamlText(_text(content, path), path)
        kust = yt.doc
        if isinstance(kust, dict):
            self._native_fields(yt, kust)
            self._builtin_plugins(yt, kust)
        out = yt.result().encode("utf-8")
        self._write(os.path.join(self.dst, name), out, source=os.path.realpath(path),
                    source_data=content)

    def _seq(self, kust: Any, field: str) -> Optional[Any]:
        """The list at ``field`` (a ruamel ``CommentedSeq``), matched case-insensitively."""
        k = _lookup(kust, field)
        v = kust.get(k) if k is not None else None
        return v if isinstance(v, list) else None

    def _native_fields(self, yt: YamlText, kust: Any) -> None:
        """localizer.go ``localizeNativeFields``, in upstream's order."""
        k = _lookup(kust, "openapi")
        if k is not None and isinstance(kust[k], dict) and "path" in kust[k]:
            self._edit(yt, kust[k], "path", self.localize_file, "openapi path")
        for field, fn in (("bases", self.localize_root), ("components", self.localize_root),
                          ("configurations", self.localize_file), ("crds", self.localize_file),
                          ("resources", self.localize_resource)):
            seq = self._seq(kust, field)
            for i in range(len(seq or [])):
                self._edit(yt, seq, i, fn, f"{field} entry")
        for field in ("configMapGenerator", "secretGenerator"):
            for gen in self._seq(kust, field) or []:
                if isinstance(gen, dict):
                    self._generator(yt, gen, field)
        for i, chart in enumerate(self._seq(kust, "helmChartInflationGenerator") or []):
            if not isinstance(chart, dict):
                continue
            self.run.needs_flags.setdefault("--enable-helm", "helmChartInflationGenerator")
            if _lookup(chart, "values") is not None:
                self._edit(yt, chart, _lookup(chart, "values"), self.localize_file,
                           f"helmChartInflationGenerator entry {i} values")
            hk = _lookup(chart, "chartHome")
            if hk is not None:
                self._edit(yt, chart, hk, self.copy_chart_home_entry, f"helmChartInflationGenerator entry {i}")
            else:
                self._wrap(lambda: self.copy_chart_home_entry(""), f"helmChartInflationGenerator entry {i}")
        charts: List[Any] = self._seq(kust, "helmCharts") or []
        for i, chart in enumerate(charts):
            if not isinstance(chart, dict):
                continue
            self.run.needs_flags.setdefault("--enable-helm", "helmCharts")
            vk = _lookup(chart, "valuesFile")
            if vk is not None:
                self._edit(yt, chart, vk, self.localize_file, f"helmCharts entry {i} valuesFile")
            ak = _lookup(chart, "additionalValuesFiles")
            if ak is not None and isinstance(chart[ak], list):
                for j in range(len(chart[ak])):
                    self._edit(yt, chart[ak], j, self.localize_file, f"helmCharts entry {i} additionalValuesFiles")
        gk = _lookup(kust, "helmGlobals")
        if gk is not None and isinstance(kust[gk], dict):
            hk = _lookup(kust[gk], "chartHome")
            if hk is not None:
                self._edit(yt, kust[gk], hk, self.copy_chart_home_entry, "helmGlobals")
            else:
                self._wrap(lambda: self.copy_chart_home_entry(""), "helmGlobals")
        elif charts:
            self._wrap(lambda: self.copy_chart_home_entry(""), "default chart home")
        for field in ("patches", "patchesJson6902"):
            for patch in self._seq(kust, field) or []:
                pk = _lookup(patch, "path")
                if pk is not None:
                    self._edit(yt, patch, pk, self.localize_file, field)
        seq = self._seq(kust, "patchesStrategicMerge")
        for i in range(len(seq or [])):
            self._edit(yt, seq, i, self.localize_k8s_resource, "patchesStrategicMerge entry")
        for repl in self._seq(kust, "replacements") or []:
            pk = _lookup(repl, "path")
            if pk is not None:
                self._edit(yt, repl, pk, self.localize_file, "replacements entry")

    def _generator(self, yt: YamlText, gen: Any, field: str) -> None:
        """localizer.go ``localizeGenerator``: env, envs, files (``key=path``)."""
        ek = _lookup(gen, "env")
        if ek is not None:
            self._edit(yt, gen, ek, self.localize_file, f"{field} env file")
        for sub, fn in (("envs", self.localize_file), ("files", self.localize_file_source)):
            sk = _lookup(gen, sub)
            if sk is not None and isinstance(gen[sk], list):
                for i in range(len(gen[sk])):
                    self._edit(yt, gen[sk], i, fn, f"{field} {sub} file")

    def _wrap(self, fn: Callable[[], Any], what: str) -> Any:
        try:
            return fn()
        except LocalizeError:
            raise
        except KzgitError as e:
            raise LocalizeError(f"unable to localize {what}: {e}") from None

    def _edit(self, yt: YamlText, container: Any, key: Any, fn: Callable[[str], str], what: str) -> None:
        value = container[key]
        if value is None:
            return
        if not isinstance(value, str):
            value = str(value)
        new = self._wrap(lambda: fn(value), what)
        if new != value and not _same_path(value, new):
            yt.set(container, key, new)

    # -- files -----------------------------------------------------------------------------
    def _load(self, path: str) -> bytes:
        """locloader.go ``Load``: restricted to the root, never into NEWDIR; http(s) fetched."""
        if is_http_url(path):
            try:
                return fetch_file(path)
            except KzgitError as e:
                raise LocalizeError(f"invalid file reference '{redact(path)}': {redact(str(e))}") from None
        abs_path = path if os.path.isabs(path) else os.path.join(self.root, path)
        abs_path = os.path.normpath(abs_path)
        if self.local:
            self._refuse_dst(abs_path, f"file '{path}' at '{abs_path}'")
        try:
            data = self.ldr.load(path)
        except LoadRestrictionError as e:
            raise LocalizeError(f"invalid file reference '{path}': {e} (outside localize scope "
                                f"'{self.run.scope}'? every file must be in or below its kustomization root)") from None
        except KzgitError as e:
            raise LocalizeError(f"invalid file reference '{redact(path)}': {redact(str(e))}") from None
        except OSError as e:
            raise LocalizeError(f"invalid file reference '{path}': {e.strerror or e}") from None
        return data

    def _refuse_dst(self, abs_path: str, what: str) -> None:
        for d in (self.run.new_dir, self.run.tmp_dir):
            if is_within(abs_path, d):
                raise LocalizeError(f"{what} enters localize destination '{self.run.new_dir}'")

    def localize_file(self, path: str) -> str:
        """localizer.go ``localizeFile``: copy (or download) a file; return its new path."""
        if path == "":
            return ""
        return self.localize_file_with_content(path, self._load(path))

    def localize_file_with_content(self, path: str, content: bytes) -> str:
        """localizer.go ``localizeFileWithContent``."""
        if is_http_url(path):
            self._refuse_existing_localize_dir(path, "file")
            loc = _paths.loc_file_path(path)
            self._write(os.path.join(self.dst, loc), content, url=redact(path))
            return loc
        loc, source = self._cleaned_relative_path(path)
        self._write(os.path.join(self.dst, loc), content, source=source)
        return loc

    def _refuse_existing_localize_dir(self, ref: str, what: str) -> None:
        """The proposal's error case: ``localized-files`` already exists (localizer.go)."""
        if os.path.lexists(os.path.join(self.root, _paths.LOCALIZE_DIR)):
            raise LocalizeError(f"'{self.root}' already contains {_paths.LOCALIZE_DIR} needed to "
                                f"store {what} '{ref}'",
                                tip=f"rename or remove '{os.path.join(self.root, _paths.LOCALIZE_DIR)}'")

    def _cleaned_relative_path(self, path: str) -> Tuple[str, str]:
        """util.go ``cleanedRelativePath``: the symlink-free path relative to the root.

        Absolute paths into the target become relative too (the proposal: absolute
        references into target point into newDir).
        """
        abs_path = path if os.path.isabs(path) else os.path.join(self.root, path)
        real = os.path.realpath(abs_path)
        return os.path.relpath(real, self.root).replace(os.sep, "/"), real

    def localize_file_source(self, source: str) -> str:
        """localizer.go ``localizeFileSource``: ``[key=]path`` of a generator."""
        key, sep, file = source.partition("=")
        if not sep:
            key, file = "", source
        elif key == "" or file == "":
            raise LocalizeError(f"invalid file source '{source}'")
        if file == "":
            return ""
        try:
            loc = self.localize_file(file)
        except KzgitError as e:
            raise LocalizeError(f"invalid file source '{source}': {e}") from None
        return f"{key}={loc}" if sep else loc

    def localize_resource(self, path: str) -> str:
        """localizer.go ``localizeResource``: a resource file, else a kustomization root."""
        if path == "":
            return ""
        spec = parse_repo_spec(path)
        if spec is not None and _is_git_like(spec, path):
            # An unmistakable repository URL: do not first GET it as a file (kustomize
            # does), which would leave 127.0.0.1 for a repository host.
            return self.localize_root(path)
        try:
            content = self._load(path)
            _check_resources(content.decode("utf-8", "replace"), f"invalid resource at file '{path}'")
            return self.localize_file_with_content(path, content)
        except KzgitError as file_err:
            try:
                return self.localize_root(path)
            except KzgitError as root_err:
                shown = redact(path)
                raise LocalizeError(
                    f"could not localize path '{shown}' as file: {redact(str(file_err))}; could not "
                    f"localize path '{shown}' as directory: {redact(str(root_err))}") from None

    # -- roots -----------------------------------------------------------------------------
    def localize_root(self, path: str) -> str:
        """localizer.go ``localizeRoot``: localize a base, component or remote root."""
        if path == "":
            return ""
        spec = parse_repo_spec(path)
        if spec is not None:
            return self._localize_remote_root(path, spec)
        child = self._new_local_loader(path)
        loc = os.path.relpath(child.root, self.root).replace(os.sep, "/")
        new_dst = os.path.normpath(os.path.join(self.dst, loc))
        os.makedirs(new_dst, exist_ok=True)
        try:
            _Localizer(self.run, child, new_dst, self.local, self.clone).localize()
        except KzgitError as e:
            raise LocalizeError(f"unable to localize root '{path}': {e}") from None
        return loc

    def _new_local_loader(self, path: str) -> Loader:
        """locloader.go ``New`` for a local directory: in scope, not in NEWDIR, no cycle."""
        abs_path = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.root, path))
        if self.local:
            self._refuse_dst(abs_path, f"root '{path}'")
        if os.path.isabs(path):
            # kustomize refuses absolute roots; the proposal rewrites absolute references
            # into the target, so only those inside the scope are accepted.
            rel = os.path.relpath(abs_path, self.root)
            if not self.local or not is_within(os.path.realpath(abs_path), self.run.scope):
                raise LocalizeError(f"new root '{path}' cannot be absolute")
            path = rel
        try:
            child = self.ldr.new_dir_loader(path)
        except KzgitError as e:
            raise LocalizeError(f"invalid root reference '{path}': {e}") from None
        if self.local:
            if not is_within(child.root, self.run.scope):
                raise LocalizeError(f"root '{child.root}' outside localize scope '{self.run.scope}'",
                                    tip="widen --scope to a directory containing every local base")
            self._refuse_dst(child.root, f"root '{child.root}'")
        return child

    def _localize_remote_root(self, path: str, spec: RepoSpec) -> str:
        """A remote root: clone at its ref, localize under ``localized-files/...``."""
        if not spec.ref:
            raise LocalizeError(
                f"localize remote root '{spec.redacted()}' missing ref query string parameter: "
                "a remote URL needs a version",
                tip="add ?ref=<tag or commit> to the URL (a tag or commit, not a branch, keeps it stable)")
        self._refuse_existing_localize_dir(spec.redacted(), "root")
        clone = self.run.cloner.clone(spec)
        root = os.path.realpath(os.path.join(clone.dir, spec.path))
        if not os.path.isdir(root):
            raise LocalizeError(f"remote root '{spec.redacted()}': '{spec.path}' is not a directory "
                                "in the repository")
        if not is_within(root, clone.dir):
            raise LoadRestrictionError(
                f"remote root '{spec.redacted()}' resolves outside its repository")
        for r in self.ldr.roots_chain():
            if is_within(r, root):
                raise LocalizeError(f"cycle detected: remote root '{spec.redacted()}' contains "
                                    f"visited root '{r}'")
        in_repo = os.path.relpath(root, clone.dir).replace(os.sep, "/")
        loc = _paths.loc_root_path(spec.host, spec.org_repo, spec.ref, in_repo)
        new_dst = os.path.normpath(os.path.join(self.dst, loc))
        os.makedirs(new_dst, exist_ok=True)
        child = Loader(root, self.ldr.fs, ROOT_ONLY, parent=self.ldr, repo_root=clone.dir,
                       remote_label=spec.redacted())
        self.run.remotes.setdefault((spec.redacted(), self.run.rel(new_dst)), RemoteRecord(
            url=spec.redacted(), ref=spec.ref, commit=clone.commit, path=self.run.rel(new_dst)))
        try:
            _Localizer(self.run, child, new_dst, False, clone).localize()
        except KzgitError as e:
            raise LocalizeError(f"unable to localize root '{spec.redacted()}': {e}") from None
        return loc

    # -- helm chart homes ------------------------------------------------------------------
    def copy_chart_home_entry(self, entry: str) -> str:
        """localizer.go ``copyChartHomeEntry``: copy a chart home; "" means the default."""
        path = entry or HELM_DEFAULT_HOME
        if os.path.isabs(path):
            real = os.path.normpath(path)
            if not self.local or not is_within(real, self.run.scope):
                raise LocalizeError(f"absolute chart home '{path}' is outside localize scope "
                                    f"'{self.run.scope}'")
            path = os.path.relpath(real, self.root)
        is_default = os.path.normpath(os.path.join(self.root, path)) == \
            os.path.normpath(os.path.join(self.root, HELM_DEFAULT_HOME))
        try:
            loc = self._copy_chart_home(path, clean=not is_default)
        except KzgitError as e:
            raise LocalizeError(f"unable to copy home '{entry}': {e}") from None
        return "" if entry == "" else loc

    def _copy_chart_home(self, path: str, clean: bool) -> str:
        path = os.path.relpath(os.path.normpath(os.path.join(self.root, path)), self.root)
        if not os.path.lexists(os.path.join(self.root, path)):
            return path.replace(os.sep, "/")
        try:
            home = self._new_local_loader(path) if self.local else self.ldr.new_dir_loader(path)
        except KzgitError as e:
            raise LocalizeError(f"invalid chartHome '{path}': {e} (a chart home must be a directory)") from None
        to_dst = os.path.relpath(home.root, self.root) if clean else path
        dst = os.path.normpath(os.path.join(self.dst, to_dst))
        if not os.path.lexists(dst):
            self._copy_dir(home.root, dst)
        if self.clone is None:   # a home inside a clone is pinned by the commit instead
            self.run.chart_homes[self.run.rel(dst)] = home.root
        return to_dst.replace(os.sep, "/")

    def _copy_dir(self, src: str, dst: str) -> None:
        """localizer.go ``copyDir``: regular files and directories; symlinks are skipped."""
        os.makedirs(dst, exist_ok=True)
        for d, dirs, files in os.walk(src):
            rel = os.path.relpath(d, src)
            keep = []
            for n in sorted(dirs):
                p = os.path.join(d, n)
                if os.path.islink(p) or p in (self.run.new_dir, self.run.tmp_dir):
                    continue
                keep.append(n)
                os.makedirs(os.path.join(dst, rel, n), exist_ok=True)
            dirs[:] = keep
            for n in sorted(files):
                p = os.path.join(d, n)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as f:
                    data = f.read()
                self._write(os.path.normpath(os.path.join(dst, rel, n)), data, source=p)

    # -- builtin plugins and KRM functions ---------------------------------------------------
    def _builtin_plugins(self, yt: YamlText, kust: Any) -> None:
        """localizer.go ``localizeBuiltinPlugins``: generators, transformers, validators."""
        for field in ("generators", "transformers", "validators"):
            seq = self._seq(kust, field) or []
            for i in range(len(seq)):
                if seq[i] is None:
                    continue
                entry = str(seq[i])
                new = self._wrap(functools.partial(self._plugin_entry, field, entry), f"{field} entry")
                if new != entry and not _same_path(entry, new):
                    yt.set(seq, i, new)

    def _load_k8s_resource(self, entry: str) -> Tuple[YamlText, bool, bytes]:
        """localizer.go ``loadK8sResource``: inline YAML, else a file; (docs, is_file, bytes)."""
        inline_err: Optional[str] = None
        try:
            yt = YamlText(entry, "inline entry", multi=True)
            docs = [d for d in yt.docs if d is not None]
            problems = [p for p in (_resource_problem(d) for d in docs) if p]
            if not problems:
                return yt, False, entry.encode("utf-8")
            inline_err = problems[0]
        except KzgitError as e:
            inline_err = str(e)
        try:
            data = self._load(entry)
            yt = YamlText(_text(data, entry), entry, multi=True)
            for d in yt.docs:
                if d is not None:
                    problem = _resource_problem(d)
                    if problem:
                        raise BuildError(f"file '{entry}': {problem}")
            return yt, True, data
        except KzgitError as file_err:
            raise LocalizeError(
                f"unable to load resource entry '{entry}': when parsing as inline received error: "
                f"{inline_err}; when parsing as filepath received error: {file_err}") from None

    def localize_k8s_resource(self, entry: str) -> str:
        """localizer.go ``localizeK8sResource`` (patchesStrategicMerge entries)."""
        _, is_file, _ = self._load_k8s_resource(entry)
        return self.localize_file(entry) if is_file else entry

    def _plugin_entry(self, field: str, entry: str) -> str:
        yt, is_file, data = self._load_k8s_resource(entry)
        for doc in yt.docs:
            if isinstance(doc, dict):
                self._plugin(yt, doc, field)
        if is_file:
            out = yt.result().encode("utf-8") if yt.changed else data
            return self.localize_file_with_content(entry, out)
        return yt.result() if yt.changed else entry

    def _plugin(self, yt: YamlText, doc: Any, field: str) -> None:
        """builtinplugins.go ``Filter`` for one plugin config, plus KRM functions."""
        api_version = doc.get("apiVersion")
        kind = doc.get("kind")
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        ident = f"{kind}.{api_version or '[noVer]'}.[noGrp]/{meta.get('name', '')}.[noNs]"
        if api_version != BUILTIN_API_VERSION:
            self._krm_function(doc, meta, ident, field)
            return
        for path, how in BUILTIN_PATH_FIELDS.get(str(kind), []):
            for container, key in _walk_field(doc, path):
                node = container[key]
                fn = {"file": self.localize_file, "source": self.localize_file_source,
                      "resource": self.localize_k8s_resource}[how]
                if isinstance(node, list):
                    for j in range(len(node)):
                        if node[j] is not None and not isinstance(node[j], (dict, list)):
                            new = fn(str(node[j]))
                            if new != str(node[j]) and not _same_path(str(node[j]), new):
                                yt.set(node, j, new)
                        elif isinstance(node[j], (dict, list)):
                            raise LocalizeError(f"plugin {ident}: expected sequence or scalar node "
                                                f"at '{'/'.join(path)}'")
                elif isinstance(node, dict):
                    raise LocalizeError(f"plugin {ident}: expected sequence or scalar node at "
                                        f"'{'/'.join(path)}' (got a mapping: "
                                        f"{', '.join(map(str, node.keys()))})")
                elif node is not None:
                    new = fn(str(node))
                    if new != str(node) and not _same_path(str(node), new):
                        yt.set(container, key, new)
        if kind == "HelmChartInflationGenerator":
            self.run.needs_flags.setdefault("--enable-helm", f"plugin {ident}")
            hk = "chartHome" if "chartHome" in doc else None
            if hk is None:
                self.copy_chart_home_entry("")
            else:
                home = doc[hk]
                if isinstance(home, (dict, list)):
                    raise LocalizeError(f"plugin {ident}: chartHome must be a scalar")
                new = self.copy_chart_home_entry("" if home is None else str(home))
                if home is not None and new != str(home) and not _same_path(str(home), new):
                    yt.set(doc, hk, new)

    def _krm_function(self, doc: Any, meta: Any, ident: str, field: str) -> None:
        """KRM functions: copy exec binaries (exec bits stripped), warn about images."""
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        spec: Any = None
        for key in FUNCTION_ANNOTATIONS:
            if key in ann and isinstance(ann[key], str):
                try:
                    spec = load_yaml11(str(ann[key]), f"{ident} annotation {key}")
                except KzgitError:
                    spec = None
                break
        if not isinstance(spec, dict):
            # A legacy exec/Go plugin: found by kustomize under $XDG_CONFIG_HOME, not in the tree.
            self.run.needs_flags.setdefault("--enable-alpha-plugins", f"{field} plugin {ident}")
            return
        self.run.needs_flags.setdefault("--enable-alpha-plugins", f"KRM function {ident}")
        container = spec.get("container")
        if isinstance(container, dict) and container.get("image"):
            self.run.warnings.append(
                f"warning: KRM function {ident} runs container image '{container['image']}', which is "
                "not localized; make sure it is available where the copy is built")
        ex = spec.get("exec")
        if isinstance(ex, dict) and isinstance(ex.get("path"), str) and ex["path"]:
            self.run.needs_flags["--enable-exec"] = f"KRM function {ident}"
            self._copy_exec(ex["path"], ident)

    def _copy_exec(self, path: str, ident: str) -> None:
        """Copy an exec binary; one downloaded from a remote root loses every exec bit."""
        if os.path.isabs(path) and not (self.local and is_within(path, self.run.scope)):
            self.run.warnings.append(
                f"warning: KRM function {ident} runs '{path}', outside the copy; it is not localized")
            return
        data = self._load(path)
        loc, source = self._cleaned_relative_path(path)
        dst = os.path.join(self.dst, loc)
        mode = os.stat(source).st_mode & 0o777
        downloaded = self.clone is not None
        if downloaded:
            mode &= ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self._write(dst, data, source=source, mode=mode, exec_stripped=downloaded)
        self.run.exec_binaries.append(self.run.rel(dst))
        if downloaded:
            self.run.warnings.append(
                f"warning: downloaded exec binary '{self.run.rel(dst)}' of KRM function {ident} is not "
                "executable: review it, `chmod +x` it only if you trust it and pin it in "
                "[reviewed-executables] of .kzgit.toml (its sha256), then build the copy with "
                "--enable-alpha-plugins --enable-exec")

    # -- writing -----------------------------------------------------------------------------
    def _write(self, dst: str, data: bytes, source: Optional[str] = None, url: Optional[str] = None,
               source_data: Optional[bytes] = None, mode: Optional[int] = None,
               exec_stripped: bool = False) -> None:
        dst = os.path.normpath(dst)
        if not is_within(dst, self.run.tmp_dir):  # pragma: no cover - guarded above
            raise LocalizeError(f"refusing to write '{dst}' outside the localize destination")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(dst, mode)
        rec = FileRecord(sha256=sha256(data), url=url, executable_stripped=exec_stripped)
        if self.clone is not None and url is None:
            rec.url = redact(self.clone.clone_url)
            rec.commit = self.clone.commit
        elif source is not None:
            rec.source = source
            if source_data is None:
                try:
                    with open(source, "rb") as f:
                        source_data = f.read()
                except OSError:
                    source_data = None
            rec.source_sha256 = sha256(source_data) if source_data is not None else None
        self.run.files[self.run.rel(dst)] = rec


def _unmarshal_kustomization(content: bytes, path: str) -> None:
    """types.Kustomization ``Unmarshal``: strict field check only, as the localizer does.

    localizer.go ``load`` unmarshals without kusttarget.go ``Load``'s checks, so a
    wrong ``kind`` or a kustomization holding only ``kind`` localizes fine
    (TestLoadGVKNN, TestLocalizeBases); unknown fields are errors
    (TestLoadUnknownKustFields).
    """
    raw = load_yaml11(content, path)
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise LocalizeError(f"invalid Kustomization in {path}: not a YAML mapping")
    try:
        decode_kustomization(raw)   # the same table and decoder as the build
    except KzgitError as e:
        raise LocalizeError(f"{e} (in {path})") from None


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LocalizeError(f"'{what}' is not UTF-8 text: {e}") from None


def _walk_field(doc: Any, path: Tuple[str, ...]) -> List[Tuple[Any, Any]]:
    """(container, key) pairs for a slash path, through sequences (kustomize fsslice)."""
    out: List[Tuple[Any, Any]] = []

    def walk(node: Any, i: int) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, i)
            return
        if not isinstance(node, dict) or path[i] not in node:
            return
        if i == len(path) - 1:
            out.append((node, path[i]))
        else:
            walk(node[path[i]], i + 1)

    walk(doc, 0)
    return out


def _same_path(old: str, new: str) -> bool:
    """Keep the user's spelling when it already names the same relative path (``./x`` vs ``x``)."""
    if "://" in old or os.path.isabs(old) or "\n" in old:
        return False
    if "=" in old and "=" in new:
        ko, _, po = old.partition("=")
        kn, _, pn = new.partition("=")
        return ko == kn and posixpath.normpath(po) == posixpath.normpath(pn) and not po.startswith("../")
    return posixpath.normpath(old) == posixpath.normpath(new) and ".." not in old.split("/")


def _is_git_like(spec: RepoSpec, ref: str) -> bool:
    """A reference that is certainly a repository (has a ref, ``//``, ``_git/`` or ``.git``)."""
    if not is_http_url(ref):
        return True
    if spec.ref:
        return True
    raw = ref.split("?", 1)[0]
    after_scheme = raw.split("://", 1)[-1]
    return "//" in after_scheme or "_git/" in raw or ".git" in raw or \
        spec.host.lower().startswith(("https://github.com", "http://github.com"))
