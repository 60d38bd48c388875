"""State one build shares between its levels (kustomize's KustTarget fields that every level
reaches: the plugin loader, remote access, the OpenAPI schema in force), and the base-reuse
recording of :mod:`kzgit.builder.cache`."""
from __future__ import annotations


import kzgit.openapi as oa
from kzgit.errors import BuildError
from kzgit.options import BuildOptions
from kzgit.accumulator import Accumulator
from kzgit.builtins.config import TransformerConfig
from kzgit.loader import Loader
from kzgit.openapi import crd_fieldspecs
from kzgit.plugins.helpers import SharedState
from kzgit.remote import looks_remote, open_remote, parse_repo_spec
from kzgit.versions import V5_8
from kzgit.yamlio import load_documents, load_yaml11
from kzgit.yamlio.gostruct import go_json_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Iterable, List, Optional, Tuple, Union
    from typing import Dict, Protocol
    from kzgit.kustomization import Kustomization
    from kzgit.plugins.helpers import PluginHelpers

    class Target(Protocol):
        """What the shared state reads of a level (``kzgit.builder.pipeline.Target``, which
        imports this module: named by its shape, not imported)."""
        k: Kustomization
        kfile: str
        loader: Loader
        helpers: PluginHelpers
        helm_root_namespace: str

        def builtin_origin(self, kind: str) -> Optional[Dict[str, Any]]: ...
    from kzgit.plugins.builtin import PluginRunner

__all__ = ["BuildContext"]

class BuildContext:
    """State shared by every level of one build: warnings, plugin runner, remote access."""

    def __init__(self, options: BuildOptions) -> None:
        self.options = options
        self.warnings: List[str] = []
        self.notes: List[str] = []   # what ran how (which plugin protocol), for -v
        self._plugins: Optional[PluginRunner] = None
        self.shared = SharedState()
        self._recordings: List[Any] = []   # kzgit.builder.cache.Recording, innermost last

    @property
    def plugins(self) -> PluginRunner:
        """The runner of ``generators``, ``transformers`` and ``validators`` entries."""
        if self._plugins is None:
            # start-up: the plugin registry loads every builtin; only builds with such entries
            from kzgit.plugins.builtin import PluginRunner
            self._plugins = PluginRunner(self.options, self.notes)
        return self._plugins

    # reuse of bases (kzgit.builder.cache) -----------------------------------------------------
    def start_recording(self) -> Any:
        from kzgit.builder.cache import Recording   # start-up: only runs sharing bases record
        rec = Recording()
        self._recordings.append(rec)
        return rec

    def stop_recording(self, rec: Any) -> None:
        self._recordings.remove(rec)

    def record_target(self, t: "Target") -> None:
        """Note a kustomization directory entered, and whether its result can be reused."""
        if not self._recordings:
            return
        from kzgit.builder.cache import UNCACHEABLE_FIELDS   # start-up: as start_recording
        cacheable = not any(t.k.get(f) for f in UNCACHEABLE_FIELDS)
        for rec in self._recordings:
            rec.roots.add(t.loader.root)
            rec.cacheable = rec.cacheable and cacheable

    def record_roots(self, roots: Iterable[str]) -> None:
        """Note the directories of a reused base (part of any base being recorded)."""
        for rec in self._recordings:
            rec.roots.update(roots)

    def mark_uncacheable(self) -> None:
        for rec in self._recordings:
            rec.cacheable = False

    def schema_state(self) -> Optional[Tuple[str, str, str]]:
        """The OpenAPI schema in force, as a cache key part; None with a custom schema."""
        version = oa.schema_version()
        if version.startswith("using custom"):
            return None
        # an explicit version differs from none chosen yet: under it a base's custom path is ignored
        return ("openapi", version, "set" if oa.schema_is_set() else "unset")

    # remote references ---------------------------------------------------------------------
    def looks_remote(self, path: str) -> bool:
        return looks_remote(path)

    def open_remote(self, parent: Loader, path: str, options: BuildOptions) -> Union[Loader, bytes]:
        got = open_remote(parent, path, options)
        self.note_repo_warnings(path)
        return got

    def note_repo_warnings(self, path: str) -> None:
        """What kustomize logs while parsing a repository URL (repospec.go), once per URL."""
        spec = parse_repo_spec(path)
        for w in spec.warnings() if spec is not None else ():
            if w not in self.warnings:
                self.warnings.append(w)

    # optional features ----------------------------------------------------------------------
    def helm(self, t: Target, ra: Accumulator) -> None:
        """helmCharts (kzgit.plugins.helm); origin as for the other builtin generators."""
        from kzgit.plugins.helm import generate as helm_generate   # only builds with charts pay
        default_ns = ""
        if self.options.kustomize_version >= V5_8:   # see helm_generate
            default_ns = t.k.get("namespace") or t.helm_root_namespace
        for res in helm_generate(t.k, t.kfile, t.helpers, default_ns):
            res.origin = t.builtin_origin("HelmChartInflationGenerator")
            ra.absorb(res, f"HelmChartInflationGenerator in {t.kfile}")

    def merge_vars(self, ra: Accumulator, t: Target, vars_: List[Any]) -> None:
        if not vars_:
            return
        if ra.varset is None:
            from kzgit.builtins.vars import VarSet   # start-up: only kustomizations with vars
            ra.varset = VarSet()
        ra.varset.merge(vars_, ra.resmap, t.kfile)

    def merge_sub_vars(self, ra: Accumulator, sub: Accumulator) -> None:
        if sub.varset is None:
            return
        if ra.varset is None:
            ra.varset = sub.varset
        else:
            ra.varset.absorb(sub.varset)

    def resolve_vars(self, ra: Accumulator) -> None:
        if ra.varset is None:
            return
        from kzgit.builtins.vars import resolve_vars   # start-up: only kustomizations with vars
        rows = [[fs.group, fs.version, fs.kind, fs.path, fs.create] for fs in ra.config.tables["varReference"]]
        self.warnings.extend(resolve_vars(ra.resmap, ra.varset, rows))

    def merge_crds(self, ra: Accumulator, loader: Loader, path: str, paths: List[str]) -> None:
        docs = load_documents(loader.load(path), path)
        cfg = TransformerConfig()
        for d in docs:
            if isinstance(d, dict):
                # loadconfigfromcrds.go makeNameToApiMap: every value decodes into an
                # OpenAPIDefinition struct, so a file that is not one (a kustomization, whose
                # values are lists and strings) fails the build
                for v in d.values():
                    if v is not None and not isinstance(v, dict):
                        raise BuildError(
                            f"loading CRDs [{' '.join(paths)}]: unable to parse open API definition from "
                            f"'{path}': error unmarshaling JSON: while decoding JSON: json: cannot "
                            f"unmarshal {go_json_kind(v)} into Go value of type accumulator.OpenAPIDefinition")
                cfg.add_rows(crd_fieldspecs(d))
        ra.merge_config(cfg)

    def set_openapi(self, t: Target, reset: bool) -> None:
        """The kustomization's ``openapi`` field, as kustomize hands it to kyaml ``SetSchema``.

        ``api/krusty/kustomizer.go`` (top, ``reset``) and ``api/internal/target/kusttarget.go``
        ``accumulateDirectory`` (each base and component): the first kustomization that names
        a ``path`` or a ``version`` decides, so an overlay's ``version: v1.21.2`` hides a
        base's custom schema.  The ``path`` file is loaded (load errors surface) even when
        an earlier choice wins, but only parsed when it is used.
        """
        spec = t.k.get("openapi") or {}
        if reset:
            # kubectl starts each build with no schema; kzgit may build many in one process
            self._openapi(lambda oa: oa.reset_schema())
        data: Optional[bytes] = None
        if "path" in spec:
            data = t.loader.load(spec["path"])
        if not spec:
            return

        def apply(oa: Any) -> None:
            if not reset and oa.schema_is_set():
                return
            doc = None
            if data is not None:
                doc = _openapi_document(data, spec["path"])
            oa.set_schema(spec, doc, str(t.kfile), reset=True)

        self._openapi(apply)

    def _openapi(self, fn: Callable[[Any], None]) -> None:
        fn(oa)


def _openapi_document(data: bytes, path: str) -> Any:
    """A custom schema file as kyaml openapi.go parse reads it: JSON when it starts with
    ``{`` (a duplicate key there fails), anything else through yaml.YAMLToJSON (its first
    document, YAML 1.1, and of a key written twice the last wins)."""
    if data[:1] == b"{":
        docs = load_documents(data, path)
        return docs[0] if docs else {}
    doc = load_yaml11(data, path)
    return doc if doc is not None else {}
