"""Running helm for one chart: HelmChartInflationGenerator's Config and Generate
(api/internal/builtins/HelmChartInflationGenerator.go).  Every helm process starts here."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from typing import List, Optional

from kzgit.options import BuildOptions
from kzgit.errors import BuildError, KzgitError, PluginError
from kzgit.loader import DiskFS, Loader, is_within
from kzgit.plugins.helm.argv import go_join, helm_argv, pull_argv
from kzgit.plugins.helm.chart import HELM_DEFAULT_HOME, MERGE_OPTIONS, HelmChart
from kzgit.plugins.helm.output import parse_output
from kzgit.plugins.helm.values import values_bytes
from kzgit import sandbox
from kzgit.proc import Result, stderr_tail
from kzgit.remote import fetch_file, is_http_url
from kzgit.versions import V5_8
from kzgit.resource import Resource

__all__ = ["Inflation"]

#: os.MkdirTemp("", "kustomize-helm-") in establishTmpDir
TMP_PREFIX = "kustomize-helm-"
#: checkHelmVersion
VERSION_RE = re.compile(r"v?\d+(\.\d+)+")

_ENABLE_TIP = ("pass --enable-helm to let kzgit run helm, or set enable-helm = true in the "
               "repository's .kzgit.toml (it applies once you grant it: the same key in your "
               "~/.config/kzgit/config.toml, or kzgit trust); only for kustomizations you trust: "
               "charts are fetched and rendered by an external program")


def helm_command(chosen: str) -> str:
    """The helm to run: ``chosen`` (``--helm-command``, a repository's granted
    ``helm-command``), else, for the default ``helm``, the user's own ``helm-command`` in
    ``~/.config/kzgit/config.toml`` (``~`` expanded); a bare name is found on the PATH and run
    confined with its installation granted (kzgit.sandbox.resolve_program)."""
    if chosen != "helm":
        return chosen
    from kzgit.config import user_config   # start-up: only a build that runs helm
    mine = user_config().helm_command
    return os.path.expanduser(mine) if mine else chosen


class Inflation:
    """One chart's Config + Generate."""

    def __init__(self, chart: HelmChart, loader: Loader, options: BuildOptions,
                 shared_api_versions: List[str]) -> None:
        self.c = chart
        self.shared_api_versions = shared_api_versions
        self.loader = loader
        self.options = options
        self.tmp: Optional[str] = None
        self.pull_home: Optional[str] = None   # a temp chart home (remote bases only)
        self.helm = helm_command(options.helm_command)

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
        # the render cache's recording wrapper (kzgit.rendercache.reads) reads the disk it
        # wraps; a build that runs helm is not stored (kzgit.plugins.helm._run_all)
        fs = getattr(self.loader.fs, "recorded", self.loader.fs)
        if type(fs) is not DiskFS:
            raise BuildError(f"{c.label()}: helm reads charts from the disk; this build reads "
                             "another file system")
        if not c.chart_home:
            c.chart_home = HELM_DEFAULT_HOME
        if not c.values_file:
            c.values_file = go_join(self.abs_chart_home(), c.name, "values.yaml")
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
            resolved.append(go_join(self.loader.root, f))
        c.additional_values_files = resolved
        if not c.values_merge:
            c.values_merge = "override"
        elif c.values_merge not in MERGE_OPTIONS:
            raise BuildError(f"{c.label()}: valuesMerge must be one of [{' '.join(MERGE_OPTIONS)}]")

    def abs_chart_home(self) -> str:
        c = self.c
        # an absolute chartHome is used as written (not cleaned), a relative one is joined
        home = c.chart_home if os.path.isabs(c.chart_home) else go_join(self.loader.root, c.chart_home)
        if c.version and c.repo:
            return go_join(home, f"{c.name}-{c.version}")
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
        return self.c.config_home or go_join(self.tmp, "helm")

    def _run(self, args: List[str]) -> Result:
        c = self.c
        home = self._config_home()
        # on top of the plugin environment (kzgit.sandbox.plugin_environment), as kustomize's
        # helm.go sets them on its own
        env = {"HELM_CONFIG_HOME": home, "HELM_CACHE_HOME": f"{home}/.cache",
               "HELM_DATA_HOME": f"{home}/.data"}
        label = f"{c.label()}: helm ('{self.helm} {args[0]}')"
        timeout = self.options.plugin_timeout
        assert self.tmp is not None
        try:
            # helm reads the chart (wherever chartHome puts it, as in kustomize) and works in
            # its temp dir; only a pull needs the network
            res = sandbox.run([self.helm, *args], options=self.options, label=label,
                              root=self.loader.root, env=env, check=False,
                              timeout=timeout if timeout and timeout > 0 else None,
                              read=[go_join(self.chart_home_in_use(), c.name)],
                              write=[self.tmp], network=True if args[0] == "pull" else None)
        except PluginError as e:
            if "cannot run" in str(e) and e.tip is None:
                raise PluginError(str(e), tip=f"is '{self.helm}' (helm v3) installed? "
                                              "--helm-command (helm-command in your "
                                              "~/.config/kzgit/config.toml) names the helm binary") from None
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
            raise PluginError(msg, tip=res.hint)
        return res

    def _check_version(self) -> None:
        v58 = self.options.kustomize_version >= V5_8
        # 5.8 drops -c (which helm 3 ignores and helm 4 refuses) and accepts helm 4
        # (kustomize 54848c104, PR #6016)
        args = ["version", "--short"] if v58 else ["version", "-c", "--short"]
        out = self._run(args).stdout.decode("utf-8", "replace")
        m = VERSION_RE.search(out)
        if not m:
            raise PluginError(f"{self.c.label()}: cannot find version string in {out}")
        v = m.group(0).lstrip("v")
        if v58 and v.split(".")[0] not in ("3", "4"):
            raise PluginError(f"{self.c.label()}: this plugin requires helm V3 or V4 but got v{v}")
        if not v58 and v.split(".")[0] != "3":
            raise PluginError(f"{self.c.label()}: this plugin requires helm V3 but got v{v}")

    def _generate(self) -> List[Resource]:
        c = self.c
        self._check_version()
        if not os.path.isdir(go_join(self.abs_chart_home(), c.name)):
            if not c.repo:
                raise BuildError(f"{c.label()}: no repo specified for pull, no chart found at "
                                 f"'{go_join(self.abs_chart_home(), c.name)}'")
            home = self.abs_chart_home()
            # kustomize pulls a missing chart *into* the chart home (HelmChartInflationGenerator.go
            # Generate), i.e. into the source tree by default, or anywhere an absolute chartHome
            # points.  A kzgit build never writes into the source tree (and the revision under
            # review in a hook or `kzgit diff` must not choose where files land), so the chart is
            # pulled into this build's temp dir instead: the rendering is the same, the next
            # build pulls again.
            assert self.tmp is not None
            self.pull_home = go_join(self.tmp, "chart-home",
                                      f"{c.name}-{c.version}" if c.version and c.repo else "")
            if c.values_file == go_join(home, c.name, "values.yaml"):
                c.values_file = go_join(self.pull_home, c.name, "values.yaml")
            self._run(pull_argv(c, self.chart_home_in_use()))
        values = self._values_bytes()
        assert self.tmp is not None
        values_path = go_join(self.tmp, c.name + "-kustomize-values.yaml")
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
        return values_bytes(self.c, self._load_values_file)
