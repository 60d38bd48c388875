"""HelmChartInflationGenerator: ``helmCharts`` / ``helmGlobals`` and the builtin plugin config.

kustomize v5.5.0 (api/v0.18.0) sources reproduced here:

* ``api/internal/builtins/HelmChartInflationGenerator.go`` — Config (validateArgs), Generate;
* ``api/types/helmchartargs.go`` — the fields, ``AsHelmArgs`` (the ``helm template`` argv) and
  ``SplitHelmParameters`` (the deprecated ``helmChartInflationGenerator`` field);
* ``api/types/kustomization.go FixKustomization`` — deprecated entries are appended to
  ``helmCharts``; their chart/config homes fill ``helmGlobals`` only when it is absent;
* ``api/internal/target/kusttarget_configplugin.go`` — one generator per ``helmCharts`` entry,
  configured with ``helmGlobals`` + the entry; all of a level's charts are configured before any
  of them runs.

For every chart, in a fresh ``$TMPDIR/kustomize-helm-*`` directory (removed afterwards):

1. ``helm version -c --short`` must report major version 3;
2. when ``<chartHome>/<name>`` is not a directory and ``repo`` is set:
   ``helm pull --untar --untardir <dir> (oci://repo/name | --repo R name) [--version V]``
   (kustomize's ``<dir>`` is the chart home, ``<chartHome>/<name>-<version>`` with both
   ``version`` and ``repo``; kzgit's is a directory in the temp dir, see below);
3. the values file (the chart's ``values.yaml`` unless ``valuesFile``) is read through the load
   restrictor, merged with ``valuesInline`` (``valuesMerge``: override | merge | replace) and
   written to ``<tmp>/<name>-kustomize-values.yaml``;
4. ``helm template <release|--generate-name> <chartHome>/<name> [--namespace N]
   [--name-template T] -f <tmp values> [-f <root>/<additional>...] [--api-versions A...]
   [--kube-version K] [--include-crds] [--skip-tests] [--no-hooks] [--debug]``;
5. its stdout is read as resources.

Every helm process runs with ``HELM_CONFIG_HOME=<configHome>`` (default ``<tmp>/helm``),
``HELM_CACHE_HOME=<configHome>/.cache``, ``HELM_DATA_HOME=<configHome>/.data`` added to the
inherited environment, in kzgit's working directory (kustomize sets no ``cmd.Dir``), under
:mod:`kzgit.proc` (own process group, the plugin timeout, killed with kzgit) —
kustomize itself has no timeout.

Deliberate differences (all make kzgit refuse or contain something kustomize would do):

* a chart ``name`` containing ``/`` is refused: kustomize joins it into the temp values path,
  which fails for ``a/b`` and escapes the temp directory for ``../x``;
* a chart missing from ``chartHome`` is pulled into the build's temp directory, not into
  ``chartHome``: a build never writes into the source tree (kustomize writes the chart there,
  or wherever an absolute ``chartHome`` points), and a remote base's clone is a shared cache;
* a file system other than the disk (``kzgit diff`` reading git objects) is refused: helm reads
  charts by path.

Known difference: when the values
embed Kubernetes objects (an ``apiVersion``/``kind`` with a schema), kyaml merges their
associative lists appending new elements, kzgit's merge prepends them.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from kzgit.build import BuildOptions
from kzgit.errors import BuildError, KzgitError, PluginError
from kzgit.loader import DiskFS, Loader, is_within
from kzgit.proc import ProcessResult, run_process, stderr_tail
from kzgit.resource import Resource, ResMap
from kzgit.resource.factory import resources_from_bytes, validate_object

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.build.pipeline import Target

__all__ = ["HelmChart", "generate", "generate_from_config", "charts_of", "helm_argv", "pull_argv"]

#: api/types/helmchartargs.go HelmDefaultHome
HELM_DEFAULT_HOME = "charts"
#: HelmChartInflationGenerator.go legalMergeOptions (in the order its error message lists them)
MERGE_OPTIONS = ("merge", "override", "replace")
#: os.MkdirTemp("", "kustomize-helm-") in establishTmpDir
TMP_PREFIX = "kustomize-helm-"
#: checkHelmVersion
VERSION_RE = re.compile(r"v?\d+(\.\d+)+")
#: api/konfig/general.go IgnoredByKustomizeAnnotation
LOCAL_CONFIG = "config.kubernetes.io/local-config"
KIND = "HelmChartInflationGenerator"

_ENABLE_TIP = ("pass --enable-helm to let kzgit run helm (only for kustomizations you trust: "
               "charts are fetched and rendered by an external program)")

# Field types of types.HelmGlobals + types.HelmChart (json names), for the plugin config form.
_STR, _BOOL, _LIST, _MAP = "string", "bool", "[]string", "map[string]interface {}"
_CHART_FIELDS: Dict[str, str] = {
    "chartHome": _STR, "configHome": _STR,
    "name": _STR, "version": _STR, "repo": _STR, "releaseName": _STR, "namespace": _STR,
    "additionalValuesFiles": _LIST, "valuesFile": _STR, "valuesInline": _MAP, "valuesMerge": _STR,
    "includeCRDs": _BOOL, "skipHooks": _BOOL, "apiVersions": _LIST, "kubeVersion": _STR,
    "nameTemplate": _STR, "skipTests": _BOOL, "debug": _BOOL,
}
# types.HelmChartArgs (deprecated helmChartInflationGenerator entries)
_HCA_FIELDS: Dict[str, str] = {
    "chartName": _STR, "chartVersion": _STR, "chartRepoUrl": _STR, "chartHome": _STR,
    "chartRepoName": _STR, "helmBin": _STR, "helmHome": _STR, "values": _STR,
    "valuesLocal": _MAP, "valuesMerge": _STR, "releaseName": _STR, "releaseNamespace": _STR,
    "extraArgs": _LIST,
}


@dataclasses.dataclass
class HelmChart:
    """One configured chart: types.HelmGlobals + types.HelmChart, plus where it was written."""

    name: str = ""
    version: str = ""
    repo: str = ""
    release_name: str = ""
    namespace: str = ""
    additional_values_files: List[str] = dataclasses.field(default_factory=list)
    values_file: str = ""
    values_inline: Dict[str, Any] = dataclasses.field(default_factory=dict)
    values_merge: str = ""
    include_crds: bool = False
    skip_hooks: bool = False
    api_versions: List[str] = dataclasses.field(default_factory=list)
    kube_version: str = ""
    name_template: str = ""
    skip_tests: bool = False
    debug: bool = False
    chart_home: str = ""
    config_home: str = ""
    where: str = ""   # for messages: kustomization file and entry

    @classmethod
    def from_fields(cls, d: Dict[str, Any], where: str) -> "HelmChart":
        """From canonical json field names (already type-checked)."""
        def s(k: str) -> str:
            v = d.get(k)
            return v if isinstance(v, str) else ""
        return cls(
            name=s("name"), version=s("version"), repo=s("repo"), release_name=s("releaseName"),
            namespace=s("namespace"),
            additional_values_files=["" if f is None else f for f in d.get("additionalValuesFiles") or []],
            values_file=s("valuesFile"), values_inline=dict(d.get("valuesInline") or {}),
            values_merge=s("valuesMerge"), include_crds=bool(d.get("includeCRDs")),
            skip_hooks=bool(d.get("skipHooks")),
            api_versions=["" if a is None else a for a in d.get("apiVersions") or []],
            kube_version=s("kubeVersion"), name_template=s("nameTemplate"),
            skip_tests=bool(d.get("skipTests")), debug=bool(d.get("debug")),
            chart_home=s("chartHome"), config_home=s("configHome"), where=where)

    def label(self) -> str:
        return f"{self.where} (chart '{self.name}')" if self.name else self.where


# --------------------------------------------------------------------------- decoding

def _go_type(v: Any) -> str:
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(v), "value")


def _decode_fields(raw: Dict[str, Any], fields: Dict[str, str], where: str, strict: bool,
                   struct: str) -> Dict[str, Any]:
    """Check ``raw`` as encoding/json would decode it into a Go struct with ``fields``.

    Keys match case-insensitively; with ``strict`` (kustomization files are read with
    UnmarshalStrict) an unknown key is an error, otherwise it is ignored (plugin configs).
    """
    folded = {k.lower(): k for k in fields}
    out: Dict[str, Any] = {}
    for key, v in raw.items():
        canon = folded.get(str(key).lower())
        if canon is None:
            if strict:
                raise BuildError(f'{where}: invalid Kustomization: json: unknown field "{key}"')
            continue
        typ = fields[canon]
        if v is None:
            continue
        bad = ((typ == _STR and not isinstance(v, str))
               or (typ == _BOOL and not isinstance(v, bool))
               or (typ == _MAP and not isinstance(v, dict))
               or (typ == _LIST and (not isinstance(v, list)
                                     or any(i is not None and not isinstance(i, str) for i in v))))
        if bad:
            raise BuildError(f"{where}: json: cannot unmarshal {_go_type(v)} into Go struct field "
                             f"{struct}.{canon} of type {typ}")
        if typ == _MAP:
            v = {str(k): x for k, x in v.items()}
        out[canon] = v
    return out


def charts_of(t: "Target") -> List[HelmChart]:
    """The charts of a kustomization: ``helmCharts`` then the deprecated entries (FixKustomization)."""
    k = t.k
    globals_ = k.get("helmGlobals")
    deprecated = k.get("helmChartInflationGenerator") or []
    if not isinstance(deprecated, list):
        raise BuildError(f"{t.kfile}: invalid Kustomization: json: cannot unmarshal "
                         f"{_go_type(deprecated)} into Go struct field "
                         "Kustomization.helmChartInflationGenerator of type []types.HelmChartArgs")
    old: List[Dict[str, Any]] = []
    for i, e in enumerate(deprecated):
        where = f"{t.kfile}: helmChartInflationGenerator entry {i}"
        if e is None:
            e = {}
        if not isinstance(e, dict):
            raise BuildError(f"{where}: json: cannot unmarshal {_go_type(e)} into Go value of "
                             "type types.HelmChartArgs")
        old.append(_decode_fields(e, _HCA_FIELDS, where, True, "HelmChartArgs"))
    # SplitHelmParameters: the last non-empty helmHome / chartHome win; used only when the
    # kustomization has no helmGlobals at all.
    if globals_ is None:
        g: Dict[str, str] = {}
        for o in old:
            if o.get("helmHome"):
                g["configHome"] = o["helmHome"]
            if o.get("chartHome"):
                g["chartHome"] = o["chartHome"]
        globals_ = g or None
    gdict: Dict[str, Any] = dict(globals_ or {})
    out: List[HelmChart] = []
    for i, entry in enumerate(k.get("helmCharts") or []):
        entry = entry or {}
        vi = entry.get("valuesInline")
        if vi is not None and not isinstance(vi, dict):
            raise BuildError(f"{t.kfile}: invalid Kustomization: json: cannot unmarshal "
                             f"{_go_type(vi)} into Go struct field HelmChart.helmCharts.valuesInline "
                             "of type map[string]interface {}")
        out.append(HelmChart.from_fields({**gdict, **entry}, f"{t.kfile}: helmCharts entry {i}"))
    for i, o in enumerate(old):
        # makeHelmChartFromHca: releaseNamespace, extraArgs, helmBin, chartRepoName are dropped
        fields = {"name": o.get("chartName"), "version": o.get("chartVersion"),
                  "repo": o.get("chartRepoUrl"), "valuesFile": o.get("values"),
                  "valuesInline": o.get("valuesLocal"), "valuesMerge": o.get("valuesMerge"),
                  "releaseName": o.get("releaseName")}
        out.append(HelmChart.from_fields({**gdict, **fields},
                                         f"{t.kfile}: helmChartInflationGenerator entry {i}"))
    return out


# --------------------------------------------------------------------------- argv

def _go_join(*parts: str) -> str:
    """Go filepath.Join: join non-empty parts with '/', then Clean (an absolute later part does
    *not* restart the path, unlike os.path.join)."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    return os.path.normpath("/".join(kept)).replace("//", "/")


def helm_argv(chart: HelmChart, abs_chart_home: str, values_path: str) -> List[str]:
    """types.HelmChart.AsHelmArgs, with the temp values file in place of ``valuesFile``."""
    args = ["template"]
    args += [chart.release_name] if chart.release_name else ["--generate-name"]
    if chart.name:
        args.append(_go_join(abs_chart_home, chart.name))
    if chart.namespace:
        args += ["--namespace", chart.namespace]
    if chart.name_template:
        args += ["--name-template", chart.name_template]
    if values_path:
        args += ["-f", values_path]
    for f in chart.additional_values_files:
        args += ["-f", f]
    for a in chart.api_versions:
        args += ["--api-versions", a]
    if chart.kube_version:
        args += ["--kube-version", chart.kube_version]
    if chart.include_crds:
        args.append("--include-crds")
    if chart.skip_tests:
        args.append("--skip-tests")
    if chart.skip_hooks:
        args.append("--no-hooks")
    if chart.debug:
        args.append("--debug")
    return args


def pull_argv(chart: HelmChart, abs_chart_home: str) -> List[str]:
    """HelmChartInflationGenerator.pullCommand."""
    args = ["pull", "--untar", "--untardir", abs_chart_home]
    if chart.repo.startswith("oci://"):
        repo = chart.repo[:-1] if chart.repo.endswith("/") else chart.repo  # strings.TrimSuffix
        args.append(repo + "/" + chart.name)
    else:
        if chart.repo:
            args += ["--repo", chart.repo]
        args.append(chart.name)
    if chart.version:
        args += ["--version", chart.version]
    return args


# --------------------------------------------------------------------------- the generator

class _Inflation:
    """One chart's Config + Generate."""

    def __init__(self, chart: HelmChart, loader: Loader, options: BuildOptions,
                 shared_api_versions: List[str]) -> None:
        self.c = chart
        self.shared_api_versions = shared_api_versions
        self.loader = loader
        self.options = options
        self.tmp: Optional[str] = None
        self.pull_home: Optional[str] = None   # a temp chart home (remote bases only)
        self.helm = options.helm_command

    # -- Config ---------------------------------------------------------------------------
    def configure(self) -> None:
        c = self.c
        if not self.options.enable_helm:
            raise PluginError(f"{c.label()}: must specify --enable-helm", tip=_ENABLE_TIP)
        if not self.helm:
            raise PluginError(f"{c.label()}: must specify --helm-command")
        # --helm-kube-version / --helm-api-versions / --helm-debug: Config sets them *before*
        # unmarshalling the chart's config, so a chart's own non-empty value wins (despite the
        # "CLI args takes precedence" comment there; empty fields are omitted from the config)
        if not c.kube_version:
            c.kube_version = self.options.helm_kube_version
        if self.shared_api_versions:
            if c.api_versions:
                # Go quirk reproduced: p.ApiVersions starts as the *same slice* as the global
                # --helm-api-versions, and json.Unmarshal of the chart's list writes its first
                # elements into that backing array: later charts of the build that set no
                # apiVersions see them (and so does any such chart configured earlier whose
                # generator has not run yet) [verified with kubectl v1.32]
                for i, v in enumerate(c.api_versions[:len(self.shared_api_versions)]):
                    self.shared_api_versions[i] = v
            else:
                c.api_versions = self.shared_api_versions   # aliased on purpose, see above
        if self.options.helm_debug:
            c.debug = True
        if not c.name:
            raise BuildError(f"{c.where}: chart name cannot be empty")
        if "/" in c.name or c.name in (".", ".."):
            raise BuildError(
                f"{c.label()}: a chart name must not contain '/' or be '.' or '..' (kustomize "
                "joins it into file paths; kzgit refuses names that could leave the chart home "
                "or the temporary directory)")
        if type(self.loader.fs) is not DiskFS:
            raise BuildError(f"{c.label()}: helm reads charts from the disk; this build reads "
                             "another file system")
        if not c.chart_home:
            c.chart_home = HELM_DEFAULT_HOME
        if not c.values_file:
            c.values_file = _go_join(self.abs_chart_home(), c.name, "values.yaml")
        resolved = []
        for f in c.additional_values_files:
            try:
                self.loader.load(f)  # the load restrictor applies (validateArgs)
            except KzgitError as e:
                raise BuildError(f"{c.label()}: could not load additionalValuesFile: {e}") from None
            except OSError as e:
                raise BuildError(f"{c.label()}: could not load additionalValuesFile: "
                                 f"{f}: {e.strerror or e}") from None
            # filepath.Join(root, file): an absolute path is joined *under* the root, as in
            # kustomize (helm then fails to find it)
            resolved.append(_go_join(self.loader.root, f))
        c.additional_values_files = resolved
        if not c.values_merge:
            c.values_merge = "override"
        elif c.values_merge not in MERGE_OPTIONS:
            raise BuildError(f"{c.label()}: valuesMerge must be one of [{' '.join(MERGE_OPTIONS)}]")

    def abs_chart_home(self) -> str:
        c = self.c
        # an absolute chartHome is used as written (not cleaned), a relative one is joined
        home = c.chart_home if os.path.isabs(c.chart_home) else _go_join(self.loader.root, c.chart_home)
        if c.version and c.repo:
            return _go_join(home, f"{c.name}-{c.version}")
        return home

    def chart_home_in_use(self) -> str:
        return self.pull_home or self.abs_chart_home()

    # -- Generate ---------------------------------------------------------------------------
    def generate(self) -> List[Resource]:
        try:
            self.tmp = tempfile.mkdtemp(prefix=TMP_PREFIX)
            return self._generate()
        finally:
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)

    def _config_home(self) -> str:
        assert self.tmp is not None
        return self.c.config_home or _go_join(self.tmp, "helm")

    def _run(self, args: List[str]) -> ProcessResult:
        c = self.c
        home = self._config_home()
        env = dict(os.environ)
        env.update({"HELM_CONFIG_HOME": home, "HELM_CACHE_HOME": f"{home}/.cache",
                    "HELM_DATA_HOME": f"{home}/.data"})
        label = f"{c.label()}: helm ('{self.helm} {args[0]}')"
        timeout = self.options.plugin_timeout
        try:
            res = run_process([self.helm, *args], label=label, env=env,
                              timeout=timeout if timeout and timeout > 0 else None, check=False)
        except PluginError as e:
            if "cannot run" in str(e) and e.tip is None:
                raise PluginError(str(e), tip=f"is '{self.helm}' (helm v3) installed? "
                                              "--helm-command names the helm binary") from None
            raise
        if res.returncode != 0:
            msg = f"{c.label()}: unable to run: '{self.helm} {' '.join(args)}'"
            msg += (f" (exit code {res.returncode})" if res.returncode > 0
                    else f" (killed by signal {-res.returncode})")
            tail = stderr_tail(res.stderr)
            if tail:
                msg += f"; last lines of its stderr:\n{tail}"
            if "--debug" in args and res.stdout.strip():
                # runHelmCommand: with --debug the error also shows what helm rendered
                msg += "\nHelm template:\n" + stderr_tail(res.stdout, 40)
            raise PluginError(msg)
        return res

    def _check_version(self) -> None:
        out = self._run(["version", "-c", "--short"]).stdout.decode("utf-8", "replace")
        m = VERSION_RE.search(out)
        if not m:
            raise PluginError(f"{self.c.label()}: cannot find version string in {out}")
        v = m.group(0).lstrip("v")
        if v.split(".")[0] != "3":
            raise PluginError(f"{self.c.label()}: this plugin requires helm V3 but got v{v}")

    def _generate(self) -> List[Resource]:
        c = self.c
        self._check_version()
        if not os.path.isdir(_go_join(self.abs_chart_home(), c.name)):
            if not c.repo:
                raise BuildError(f"{c.label()}: no repo specified for pull, no chart found at "
                                 f"'{_go_join(self.abs_chart_home(), c.name)}'")
            home = self.abs_chart_home()
            # kustomize pulls a missing chart *into* the chart home (HelmChartInflationGenerator.go
            # Generate), i.e. into the source tree by default, or anywhere an absolute chartHome
            # points.  A kzgit build never writes into the source tree (and the revision under
            # review in a hook or `kzgit diff` must not choose where files land), so the chart is
            # pulled into this build's temp dir instead: the rendering is the same, the next
            # build pulls again.
            assert self.tmp is not None
            self.pull_home = _go_join(self.tmp, "chart-home",
                                      f"{c.name}-{c.version}" if c.version and c.repo else "")
            if c.values_file == _go_join(home, c.name, "values.yaml"):
                c.values_file = _go_join(self.pull_home, c.name, "values.yaml")
            self._run(pull_argv(c, self.chart_home_in_use()))
        values = self._values_bytes()
        assert self.tmp is not None
        values_path = _go_join(self.tmp, c.name + "-kustomize-values.yaml")
        try:
            with open(values_path, "wb") as f:
                f.write(values)
            os.chmod(values_path, 0o644)
        except OSError as e:
            raise BuildError(f"{c.label()}: failed to write values file: {e.strerror or e}") from None
        out = self._run(helm_argv(c, self.chart_home_in_use(), values_path)).stdout
        return parse_output(out, c.label())

    # -- values ---------------------------------------------------------------------------
    def _load_values_file(self) -> bytes:
        c = self.c
        path = c.values_file
        if self.pull_home and is_within(path, self.pull_home):
            with open(path, "rb") as f:   # kzgit's own temp dir: no restriction to apply
                return f.read()
        from kzgit.remote import fetch_file, is_http_url
        try:
            if is_http_url(path):
                # fileLoader.Load fetches http(s) URLs
                if self.options.offline:
                    raise BuildError(f"offline: cannot fetch valuesFile '{path}'")
                return fetch_file(path)
            return self.loader.load(path)
        except KzgitError as e:
            raise BuildError(f"{c.label()}: {e}") from None
        except OSError as e:
            raise BuildError(f"{c.label()}: {path}: {e.strerror or e}") from None

    def _values_bytes(self) -> bytes:
        """copyValuesFile, or createNewMergedValuesFile when valuesInline is not empty."""
        from kzgit.yamlio import dump
        c = self.c
        if not c.values_inline:
            return self._load_values_file()
        # valuesInline went through encoding/json into interface{}: every number is a float64
        inline = _as_go_float64(c.values_inline)
        if c.values_merge == "replace":
            # yaml.Marshal(ValuesInline): sigs.k8s.io/yaml, keys sorted
            return dump(inline).encode("utf-8")
        chart_values, view = _first_document(self._load_values_file(), c)
        from kzgit.patch.smp import merge
        if chart_values is None:
            chart_values = {}
        if not isinstance(chart_values, dict):
            raise BuildError(f"{c.label()}: could not merge values: the values file "
                             f"'{c.values_file}' is not a YAML mapping")
        chart_values = view.prune(chart_values)
        # merge2.Merge(src, dest) lets src win: override = the inline values win,
        # merge = the chart's values win
        try:
            if c.values_merge == "override":
                merged = merge(chart_values, inline, _NO_SCHEMA)
                view.drop_aliases(merged)
            else:
                view.refuse_aliases_in(inline)
                merged = merge(inline, chart_values, _NO_SCHEMA)
                view.drop_aliases(merged)   # an inline null there goes too
        except KzgitError as e:
            raise BuildError(f"{c.label()}: could not merge values: {e}") from None
        return dump(merged if merged is not None else {}).encode("utf-8")


def _as_go_float64(v: Any) -> Any:
    """Integers beyond float64's exact range lose precision, as in Go (they print rounded)."""
    if isinstance(v, dict):
        return {k: _as_go_float64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_go_float64(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
        return float(v)
    return v


Path = Tuple[str, ...]


class _KyamlView:
    """What kyaml's merge walker sees of the chart's values that a decoded value does not show.

    merge2 walks YAML *nodes*: a map value that is an alias (``*x``) is neither a map, a list
    nor a scalar to the walker, so the field is dropped, and ``<<: *x`` merge keys are dropped
    with it (their keys never were fields of the map); with ``valuesMerge: merge`` an inline
    value at such a field is a "wrong node kind" error.  Aliases inside lists survive (lists
    are replaced whole).  [verified with kubectl v1.32]
    """

    def __init__(self) -> None:
        self.aliases: List[Path] = []               # map fields whose value is an alias
        self.own_keys: Dict[Path, List[str]] = {}   # maps with an alias merge key: their own keys

    @classmethod
    def of(cls, text: str) -> "_KyamlView":
        import yaml
        view = cls()
        try:
            root = yaml.compose(text, Loader=yaml.CSafeLoader)
        except (yaml.YAMLError, RecursionError):
            return view
        if root is not None:
            try:
                view._visit(root, (), set())
            except RecursionError:
                return cls()
        return view

    def _visit(self, node: Any, path: Optional[Path], seen: "set[int]") -> None:
        import yaml
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            own: List[str] = []
            merge_alias = False
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                if id(k) not in seen:
                    self._visit(k, None, seen)
                is_alias = id(v) in seen
                if key == "<<" and k.tag == "tag:yaml.org,2002:merge":
                    merge_alias = merge_alias or is_alias
                    if not is_alias:
                        self._visit(v, None, seen)
                    continue
                if key is not None:
                    own.append(key)
                sub = path + (key,) if path is not None and key is not None else None
                if is_alias:
                    if sub is not None:
                        self.aliases.append(sub)
                else:
                    self._visit(v, sub, seen)
            if merge_alias and path is not None:
                self.own_keys[path] = own
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if id(item) not in seen:
                    self._visit(item, None, seen)

    @staticmethod
    def _parent(d: Any, path: Path) -> Any:
        for key in path[:-1]:
            if not isinstance(d, dict):
                return None
            d = _get_str_key(d, key)
        return d if isinstance(d, dict) else None

    def prune(self, values: Dict[str, Any]) -> Dict[str, Any]:
        if not self.aliases and not self.own_keys:
            return values
        from kzgit.yamlio.tree import copy_tree
        values = copy_tree(values)
        for path, own in self.own_keys.items():
            m = values if not path else _get_str_key(self._parent(values, path) or {}, path[-1])
            if isinstance(m, dict):
                for key in [k for k in m if str(k) not in own]:
                    del m[key]
        self.drop_aliases(values)
        return values

    def drop_aliases(self, values: Any) -> None:
        for path in self.aliases:
            parent = self._parent(values, path)
            if parent is not None:
                for key in [k for k in parent if str(k) == path[-1]]:
                    del parent[key]

    def refuse_aliases_in(self, inline: Dict[str, Any]) -> None:
        for path in self.aliases:
            parent = self._parent(inline, path)
            if parent is not None and _get_str_key(parent, path[-1]) is not None:
                raise BuildError(f"wrong node kind: the chart's values have an alias (*anchor) "
                                 f"at '{'.'.join(path)}' where valuesInline sets a value")


def _get_str_key(d: Dict[Any, Any], key: str) -> Any:
    if key in d:
        return d[key]
    for k, v in d.items():
        if str(k) == key:
            return v
    return None


# merge2.Merge looks the schema up from the apiVersion/kind of the values (none, in practice);
# smp.merge does the same when given None.  Known difference: kustomize passes MergeOptions{}
# (lists grow by appending) where smp.merge prepends, as patches do; that only changes the
# order of schema-driven associative lists, i.e. embedded Kubernetes objects in values.
_NO_SCHEMA: Any = None


def _first_document(data: bytes, c: HelmChart) -> Tuple[Any, _KyamlView]:
    """kyaml.Parse: the first YAML document (go-yaml v3); no document at all is io.EOF."""
    from kzgit.yamlio import load_documents
    from kzgit.yamlio.load import split_documents
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    meaningful = [ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    if not meaningful:
        raise BuildError(f"{c.label()}: could not parse values file into rnode: EOF "
                         f"('{c.values_file}' is empty)")
    try:
        parts = split_documents(text, c.values_file)
        for part, _line in parts:
            if any(ln.strip() and not ln.lstrip().startswith("#") and ln.strip() != "---"
                   for ln in part.split("\n")):
                docs = load_documents(part, c.values_file)
                view = _KyamlView.of(part) if "*" in part else _KyamlView()
                return (docs[0] if docs else None), view
    except KzgitError as e:
        raise BuildError(f"{c.label()}: could not parse values file into rnode: {e}") from None
    return None, _KyamlView()


# --------------------------------------------------------------------------- output

def parse_output(stdout: bytes, label: str) -> List[Resource]:
    """Generate's reading of helm's stdout.

    First as any resource file (NewResMapFromBytes: ``*List`` kinds expanded, every document
    needs kind and name, ids unique); when that fails, kustomize re-reads the documents without
    expanding lists and drops ``config.kubernetes.io/local-config`` ones (ResourcesFromRNodes);
    when that fails too, the error is reported.
    """
    source = f"helm template output for {label}"
    try:
        resources = resources_from_bytes(stdout, source)
        ResMap(resources)  # may not add resource with an already registered id
        return resources
    except KzgitError as first:
        first_err: KzgitError = first
    from kzgit.yamlio import load_documents
    try:
        docs = load_documents(stdout, source)
    except KzgitError as e:
        raise BuildError(f"{label}: error reading helm output: {e}") from None
    out: List[Resource] = []
    try:
        for d in docs:
            if not d:
                continue
            if not isinstance(d, dict):
                raise BuildError(f"missing Resource metadata (a document of {source} is not a mapping)")
            validate_object(d, source)
            md = d.get("metadata") or {}
            ann = md.get("annotations") if isinstance(md, dict) else None
            if isinstance(ann, dict) and LOCAL_CONFIG in ann and ann[LOCAL_CONFIG] != "false":
                continue
            out.append(Resource(d, source))
        ResMap(out)
    except KzgitError as e:
        raise BuildError(f"{label}: could not parse rnode slice into resource map: {e}") from None
    if not docs:
        raise BuildError(f"{label}: could not parse bytes into resource map: {first_err}") from None
    return out


# --------------------------------------------------------------------------- entry points

def _shared_api_versions(t: "Target") -> List[str]:
    """The build's one copy of --helm-api-versions (kustomize's HelmConfig.ApiVersions slice)."""
    shared = t.ctx._helm_api_versions
    if shared is None:
        shared = list(t.options.helm_api_versions)
        t.ctx._helm_api_versions = shared
    return shared


def _run_all(charts: List[HelmChart], t: "Target") -> List[Tuple[HelmChart, List[Resource]]]:
    # configureBuiltinGenerators configures every chart of the level before any of them runs
    shared = _shared_api_versions(t)
    inflations = [_Inflation(c, t.loader, t.options, shared) for c in charts]
    for inf in inflations:
        inf.configure()
    return [(inf.c, inf.generate()) for inf in inflations]


def generate(t: "Target", options: BuildOptions) -> List[Resource]:
    """The resources of the ``helmCharts`` (and deprecated ``helmChartInflationGenerator``)
    entries of one kustomization, chart after chart."""
    out: List[Resource] = []
    for _chart, resources in _run_all(charts_of(t), t):
        out.extend(resources)
    return out


def generate_from_config(cfg: Dict[str, Any], t: "Target") -> List[Resource]:
    """A ``kind: HelmChartInflationGenerator`` config from ``generators:`` (apiVersion builtin).

    The config's own fields are the chart's and ``chartHome``/``configHome`` (yaml.Unmarshal
    into the plugin: case-insensitive, unknown fields ignored); the kustomization's
    ``helmGlobals`` do not apply.
    """
    md = cfg.get("metadata") if isinstance(cfg.get("metadata"), dict) else {}
    where = f"{t.kfile}: generator {KIND} '{(md or {}).get('name', '')}'"
    fields = {k: v for k, v in cfg.items() if k not in ("apiVersion", "kind", "metadata")}
    chart = HelmChart.from_fields(_decode_fields(fields, _CHART_FIELDS, where, False,
                                                 "HelmChartInflationGeneratorPlugin"), where)
    return _run_all([chart], t)[0][1]
