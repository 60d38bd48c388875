"""kzgit.gitops.gotemplate: Go's text/template with Sprig and Argo CD's functions, as the
ApplicationSet controller renders ``goTemplate`` templates.

The table cases are Argo CD's own (tests/gitops/data/argocd_gotemplate_cases.json names the
commit and file); the others pin text/template's documented semantics (golang.org/pkg/text/template:
trim markers, comments, variables, ``else if``, ``range`` over maps in key order, ``break``,
``and``/``or`` returning an operand, ``<no value>``) and Sprig's (masterminds.github.io/sprig).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from kzgit.cli.main import main
from kzgit.gitops.gotemplate import TemplateError, render
from kzgit.gitops.govalues import go_print
from kzgit.gitops.sprig import sprintf

CASES = json.loads((Path(__file__).parent / "data" / "argocd_gotemplate_cases.json").read_text())


@pytest.mark.parametrize("case", CASES["render"], ids=[c["name"] for c in CASES["render"]])
def test_argo_cd_render_table(case: Dict[str, Any]) -> None:
    options: List[str] = case.get("options", [])
    if "error" in case:
        with pytest.raises(TemplateError) as e:
            render(case["template"], case["params"], options)
        assert str(e.value) == case["error"]
    else:
        assert render(case["template"], case["params"], options) == case["expected"]


@pytest.mark.parametrize("case", CASES["slugify"], ids=lambda c: f"{c['length']}-{c['smart']}")
def test_argo_cd_slugify_table(case: Dict[str, Any]) -> None:
    data = {"name": case["name"]}
    text = f"{{{{ slugify {case['length']} {str(case['smart']).lower()} .name }}}}"
    assert render(text, data) == case["expected"]


PATH = {"path": {"path": "apps/team-a/web", "basename": "web", "basenameNormalized": "web",
                 "segments": ["apps", "team-a", "web"]},
        "cluster": {"name": "in-cluster", "labels": {"env": "prod", "tier": "2"}},
        "n": 3, "ratio": 0.5, "list": ["b", "a"], "flag": False}


@pytest.mark.parametrize("template,expected", [
    # trim markers take the white space beside them (the marker needs its space)
    ("a  {{- .n -}}  b", "a3b"),
    ("a {{/* a comment */}}b", "a b"),
    ("a {{- /* trimmed */ -}} b", "ab"),
    ("{{-3}}", "-3"),   # no space: a negative number, not a trim marker
    # variables, else if, with, range over a map (sorted keys) and a list
    ("{{ $d := .path.basename }}{{ $d }}-{{ $d }}", "web-web"),
    ("{{ if eq .cluster.name \"x\" }}x{{ else if .flag }}f{{ else }}other{{ end }}", "other"),
    ("{{ with .cluster.labels }}{{ .env }}{{ else }}none{{ end }}", "prod"),
    ("{{ with .nothing }}yes{{ else }}none{{ end }}", "none"),
    ("{{ range $k, $v := .cluster.labels }}{{ $k }}={{ $v }};{{ end }}", "env=prod;tier=2;"),
    ("{{ range $i, $s := .path.segments }}{{ if eq $i 1 }}{{ break }}{{ end }}{{ $s }}{{ end }}", "apps"),
    ("{{ range .nothing }}x{{ else }}empty{{ end }}", "empty"),
    # and/or give back an operand; not, comparisons
    ("{{ or .missing .flag \"fallback\" }}", "fallback"),
    ("{{ and .n .path.basename }}", "web"),
    ("{{ not .flag }} {{ lt .n 4 }} {{ ge .n 3 }} {{ ne .path.basename \"api\" }}", "true true true true"),
    ("{{ eq .missing \"prod\" }} {{ ne .missing \"prod\" }}", "false true"),   # missing: not equal
    # printing Go values: %v of lists, maps, floats, missing keys
    ("{{ .list }} {{ .cluster.labels }} {{ .ratio }} {{ .missing }}", "[b a] map[env:prod tier:2] 0.5 <no value>"),
    # parenthesised pipelines and chained fields
    ("{{ (index .path.segments 1) | upper }}", "TEAM-A"),
    ("{{ (.cluster).name }}", "in-cluster"),
    # Sprig: strings
    ("{{ .path.path | trimPrefix \"apps/\" | replace \"/\" \"-\" }}", "team-a-web"),
    ("{{ .path.basename | title }} {{ \"A-B\" | lower }} {{ trunc 3 .path.path }} {{ trunc -3 .path.path }}", "Web a-b app web"),
    ("{{ default \"dev\" .cluster.labels.stage }} {{ default \"dev\" .cluster.labels.env }}", "dev prod"),
    ("{{ .path.basename | quote }} {{ .path.basename | squote }} {{ cat \"a\" .n }}", "\"web\" 'web' a 3"),
    ("{{ splitList \"/\" .path.path | last }} {{ join \",\" .list }} {{ (split \"-\" \"x-y\")._1 }}", "web b,a y"),
    ("{{ contains \"team\" .path.path }} {{ hasPrefix \"apps\" .path.path }} {{ hasSuffix \"b\" .path.path }}", "true true true"),
    ("{{ list 1 2 | toJson }} {{ dict \"b\" 1 \"a\" \"<x>\" | toJson }}", "[1,2] {\"a\":\"\\u003cx\\u003e\",\"b\":1}"),
    ("{{ dict \"n\" 3.0 \"big\" 1e21 | toJson }} {{ dict \"a\" \"<x>\" | toRawJson }}",
     "{\"big\":1e+21,\"n\":3} {\"a\":\"<x>\"}"),   # Go's float64 text, HTML unescaped
    ("{{ base .path.path }} {{ dir .path.path }} {{ ext \"a/b.yaml\" }}", "web apps/team-a .yaml"),
    ("{{ regexReplaceAll \"-(.)\" .path.path \"_${1}\" }} {{ regexMatch \"^apps/\" .path.path }}", "apps/team_a/web true"),
    ("{{ regexFind \"[0-9]+\" \"v12.3\" }} {{ regexFindAll \"[a-z]\" \"a1b2c\" -1 }}", "12 [a b c]"),
    ("{{ add 1 2 3 }} {{ sub 5 2 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 3 }} {{ max 1 5 2 }} {{ atoi \"42\" }}", "6 3 6 3 1 5 42"),
    ("{{ b64enc \"web\" }} {{ b64dec \"d2Vi\" }} {{ sha256sum \"\" | trunc 8 }}", "d2Vi web e3b0c442"),
    ("{{ ternary \"a\" \"b\" .flag }} {{ empty .list }} {{ coalesce .missing \"\" \"c\" }}", "b false c"),
    ("{{ printf \"%s-%d-%v-%q\" .path.basename .n .flag \"x\" }}", "web-3-false-\"x\""),
    ("{{ normalize \"Team_A/Web\" }}", "team-a-web"),
    ("{{ hasKey .cluster.labels \"env\" }} {{ keys .cluster.labels | sortAlpha | join \",\" }}", "true env,tier"),
])
def test_text_template_and_sprig(template: str, expected: str) -> None:
    assert render(template, PATH) == expected


@pytest.mark.parametrize("template,words", [
    ("{{ now }}", "template function now is not expanded by kzgit"),
    ("{{ randAlpha 5 }}", "template function randAlpha is not expanded by kzgit"),
    ("{{ env \"HOME\" }}", 'function "env" not defined'),   # Argo CD removes env and expandenv
    ("{{ expandenv \"$HOME\" }}", 'function "expandenv" not defined'),
    ("{{ define \"x\" }}a{{ end }}", "named templates"),
    ("{{ if .n }}open", "unexpected EOF"),
    ("{{ end }}", "unexpected {{end}}"),
    ("{{ .n 1 }}", "can't give argument to non-function .n"),
    ("{{ .missing.deeper }}", "nil pointer evaluating interface {}.deeper"),
    ("{{ index .list 5 }}", "error calling index: index out of range: 5"),
    ("{{ $x }}", "undefined variable: $x"),
    ("{{ eq .n \"3\" }}", "incompatible types for comparison"),
    ("{{ eq .ratio 1 }}", "incompatible types for comparison"),   # a float64 and an int constant
    ("{{ lt .missing 1 }}", "invalid type for comparison"),
    ("{{ regexMatch \"(?=x)\" .path.path }}", "error calling regex"),   # Go's RE2: no lookahead
    ("{{ fail \"no cluster\" }}", "no cluster"),
])
def test_refused_or_not_expanded(template: str, words: str) -> None:
    with pytest.raises(TemplateError) as e:
        render(template, PATH)
    assert words in str(e.value)


def test_missingkey_options() -> None:
    assert render("{{ .missing }}", PATH, ["missingkey=zero"]) == "<no value>"
    assert render("{{ .missing }}", PATH, ["missingkey=invalid"]) == "<no value>"
    with pytest.raises(TemplateError, match="unrecognized option: missingkey=bogus"):
        render("x", PATH, ["missingkey=bogus"])


@pytest.mark.parametrize("value,text", [
    # fmt's %v of a float64 is strconv 'g' with the shortest digits: an exponent from 1e+06
    (1.0, "1"), (0.5, "0.5"), (1e21, "1e+21"), (1e20, "1e+20"), (999999.0, "999999"),
    (1000000.0, "1e+06"), (123456789.0, "1.23456789e+08"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (-2.5, "-2.5"), (True, "true"), (None, "<nil>"),
    ([1, "a", [2]], "[1 a [2]]"), ({"b": 1, "a": {"c": 2}}, "map[a:map[c:2] b:1]"),
])
def test_go_print(value: Any, text: str) -> None:
    assert go_print(value) == text


def test_sprintf_go_words() -> None:
    assert sprintf("%05d|%-4s|%x|%%", 42, "ab", 255) == "00042|ab  |ff|%"
    assert sprintf("%d", "x") == "%!d(string=x)"
    assert sprintf("%s") == "%!s(MISSING)"
    assert sprintf("a", 1) == "a%!(EXTRA int=1)"


# -- in an ApplicationSet (kzgit.gitops.appset) -------------------------------------------------

def test_applicationset_with_functions_and_template_patch(repo: Any) -> None:
    """A git-directories ApplicationSet whose goTemplate uses Sprig functions, with a
    templatePatch (rendered, then merged into each Application; ``spec.project`` kept)."""
    from gitops_repos import REPO_URL, catalog_of
    from kzgit.gitops.render import render_app
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: teams
              namespace: argocd
            spec:
              goTemplate: true
              goTemplateOptions: ["missingkey=error"]
              generators:
              - git:
                  repoURL: {REPO_URL}
                  revision: HEAD
                  directories:
                  - path: teams/*/*
              template:
                metadata:
                  name: '{{{{ index .path.segments 1 }}}}-{{{{ .path.basename | lower | trunc 10 }}}}'
                spec:
                  project: '{{{{ index .path.segments 1 }}}}'
                  destination:
                    namespace: '{{{{ .path.path | trimPrefix "teams/" | replace "/" "-" }}}}'
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{ .path.path }}}}'
              templatePatch: |
                spec:
                  project: escaped
                {{{{- if eq .path.basename "Api" }}}}
                  source:
                    kustomize:
                      namePrefix: {{{{ .path.basename | lower }}}}-
                {{{{- end }}}}
            """,
        "teams/alpha/Api/kustomization.yaml": "resources:\n- cm.yaml\n",
        "teams/alpha/Api/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
        "teams/beta/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\n",
    })
    catalog = catalog_of(top)
    teams = catalog.find("teams")
    assert teams.expanded is True, teams.reason
    api, web = catalog.find("alpha-api"), catalog.find("beta-web")
    assert api.path == "teams/alpha/Api" and web.path == "teams/beta/web"
    assert api.obj["spec"]["project"] == "alpha"   # the patch may not change the project
    assert api.obj["spec"]["destination"] == {"namespace": "alpha-Api"}
    assert api.obj["spec"]["source"]["kustomize"] == {"namePrefix": "api-"}
    assert "kustomize" not in web.obj["spec"]["source"]
    assert "name: api-settings" in render_app(catalog, api).to_yaml()


def test_applicationset_template_error_is_listed_not_expanded(
        repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitops_repos import REPO_URL, catalog_of
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: strict
              namespace: argocd
            spec:
              goTemplate: true
              goTemplateOptions: ["missingkey=error"]
              generators:
              - list:
                  elements:
                  - {{dir: apps/a}}
              template:
                metadata:
                  name: 'a-{{{{ .cluster }}}}'
                spec:
                  source: {{repoURL: {REPO_URL}, path: '{{{{ .dir }}}}'}}
            """,
        "apps/a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    })
    strict = catalog_of(top).find("strict")
    assert strict.expanded is False
    assert strict.reason == ("template 'a-{{ .cluster }}': map has no entry for key \"cluster\"")
    # Argo CD refuses it too (its ErrorOccurred condition): a finding at the ApplicationSet
    assert strict.error == "argocd/set.yaml:1: " + strict.reason
    monkeypatch.chdir(top)
    assert main(["hook", "render", "--all"]) == 1


def test_a_template_kzgit_does_not_expand_is_listed_not_found_wrong(repo: Any) -> None:
    """A function of the clock is kzgit's limit, not Argo CD's refusal: listed, no finding."""
    from gitops_repos import REPO_URL, catalog_of
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: dated
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - list:
                  elements:
                  - {{dir: apps/a}}
              template:
                metadata:
                  name: 'a-{{{{ now | date "2006" }}}}'
                spec:
                  source: {{repoURL: {REPO_URL}, path: '{{{{ .dir }}}}'}}
            """,
        "apps/a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    })
    dated = catalog_of(top).find("dated")
    assert dated.expanded is False and dated.error is None
    assert "is not expanded by kzgit" in (dated.reason or "")


@pytest.mark.parametrize("template", [
    "{{ range until 100000000 }}x{{ end }}",
    "{{ range $i := until 150000 }}{{ range until 150000 }}{{ end }}{{ end }}",
    "{{ repeat 1000000000 \"x\" }}",
    "{{ repeat 100 \"x\" | indent 100000000 }}",
    "{{ printf \"%099999999d\" 1 }}",
    "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}",
])
def test_a_template_cannot_stall_kzgit(template: str) -> None:
    """Bounds far above what an Application needs: refused quickly, in kzgit's words."""
    with pytest.raises(TemplateError, match="bound|too deeply"):
        render(template, PATH)


@pytest.mark.parametrize("template", [
    "{{ join }}", "{{ base substr }}", "{{ hasSuffix uniq }}", "{{ toString | and }}",
    "{{ min slice }}", "{{ regexReplaceAll regexMatch }}",
])
def test_a_function_given_the_wrong_arguments_is_go_s_error_not_a_crash(template: str) -> None:
    """Found by fuzzing: a function named as an argument is called with none (as Go calls it)."""
    with pytest.raises(TemplateError, match="wrong number of args|error calling"):
        render(template, PATH)


@pytest.mark.parametrize("go", [True, False])
def test_git_generator_values(repo: Any, go: bool) -> None:
    """applicationset/generators/value_interpolation.go: each value rendered with its
    parameter set's own parameters, as ``values.KEY`` (a ``values`` map with goTemplate)."""
    from gitops_repos import REPO_URL, catalog_of
    ref = "{{ .path.basename | upper }}" if go else "{{path.basename}}"
    use = "{{ .values.team }}" if go else "{{values.team}}"
    path = "{{ .path.path }}" if go else "{{path}}"
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: teams
              namespace: argocd
            spec:
              goTemplate: {str(go).lower()}
              generators:
              - git:
                  repoURL: {REPO_URL}
                  revision: HEAD
                  directories:
                  - path: teams/*
                  values:
                    team: 'team-{ref}'
              template:
                metadata:
                  name: '{use}'
                spec:
                  destination: {{namespace: '{use}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{path}'
            """,
        "teams/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\n",
    })
    catalog = catalog_of(top)
    assert catalog.find("teams").expanded, catalog.find("teams").reason
    app = catalog.find("team-WEB" if go else "team-web")
    assert app.path == "teams/web"


def test_matrix_second_child_reads_the_first_s_parameters(repo: Any) -> None:
    """matrix.go: the second generator is interpolated with each parameter set of the first
    (a git files generator under each directory the first found); the first's values win."""
    from gitops_repos import REPO_URL, catalog_of
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: envs
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - matrix:
                  generators:
                  - git:
                      repoURL: {REPO_URL}
                      revision: HEAD
                      directories:
                      - path: apps/*
                  - git:
                      repoURL: {REPO_URL}
                      revision: HEAD
                      files:
                      - path: '{{{{ .path.path }}}}/env.json'
              template:
                metadata:
                  name: '{{{{ .path.basename }}}}-{{{{ .env }}}}'
                spec:
                  destination: {{namespace: '{{{{ .env }}}}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: 'apps/{{{{ .path.basename }}}}'
            """,
        "apps/web/env.json": '{"env": "prod"}',
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\n",
        "apps/api/env.json": '{"env": "dev"}',
        "apps/api/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n",
    })
    catalog = catalog_of(top)
    envs = catalog.find("envs")
    assert envs.expanded, envs.reason
    # the first's path (the directory) wins over the second's (the file's directory: the same here)
    assert sorted(a.name for a in catalog.apps if a.appset) == ["api-dev", "web-prod"]
    assert catalog.find("web-prod").path == "apps/web"


def test_merge_generator(repo: Any) -> None:
    """merge.go: the directories found, each overridden by the list element with the same
    merge key; a key two elements of one generator share is the controller's error."""
    from gitops_repos import REPO_URL, catalog_of

    def appset(elements: str) -> str:
        return f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: apps
              namespace: argocd
            spec:
              generators:
              - merge:
                  mergeKeys: [path.basename]
                  generators:
                  - git:
                      repoURL: {REPO_URL}
                      revision: HEAD
                      directories:
                      - path: apps/*
                  - list:
                      elements: {elements}
              template:
                metadata:
                  name: '{{{{path.basename}}}}'
                spec:
                  destination: {{namespace: '{{{{path.basename}}}}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{path}}}}'
            """
    files = {"apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\n",
             "apps/api/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n",
             "apps/old/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n"}
    top = repo({"argocd/set.yaml": appset("[{path.basename: web, path: apps/old}]"), **files})
    catalog = catalog_of(top)
    assert catalog.find("apps").expanded, catalog.find("apps").reason
    assert [(a.name, a.path) for a in catalog.apps if a.appset] == [
        ("api", "apps/api"), ("old", "apps/old"), ("web", "apps/old")]
    (top / "argocd/set.yaml").write_text(appset("[{path.basename: web}, {path.basename: web}]"))
    dup = catalog_of(top).find("apps")
    assert dup.expanded is False
    assert 'not unique by the given mergeKeys. Duplicate key was {"path.basename":"web"}' in (dup.reason or "")


def test_list_element_numbers_are_json_float64s(repo: Any) -> None:
    """Argo CD decodes a list element from JSON into ``any``: its numbers are float64, printed
    by %v (``1e+06``), and ``eq`` against an int constant is Go's error."""
    from gitops_repos import REPO_URL, catalog_of

    def appset(annotation: str) -> str:
        return f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: sized
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - list:
                  elements:
                  - {{name: big, size: 1000000, small: 3}}
              template:
                metadata:
                  name: '{{{{ .name }}}}'
                  annotations: {{size: '{annotation}'}}
                spec:
                  source: {{repoURL: {REPO_URL}, path: apps}}
            """
    top = repo({"argocd/set.yaml": appset("{{ .size }}/{{ .small }}"),
                "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
    big = catalog_of(top).find("big")
    assert big.obj["metadata"]["annotations"] == {"size": "1e+06/3"}
    (top / "argocd/set.yaml").write_text(appset("{{ if eq .small 3 }}three{{ end }}"))
    sized = catalog_of(top).find("sized")
    assert not sized.expanded and "incompatible types for comparison" in (sized.reason or "")


def test_a_generator_s_own_template(repo: Any) -> None:
    """generator_spec_processor.go mergeGeneratorTemplate: a generator's own template wins,
    its empty fields filled from the ApplicationSet's template."""
    from gitops_repos import REPO_URL, catalog_of
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: two
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - list:
                  elements: [{{name: a}}]
              - list:
                  elements: [{{name: b}}]
                  template:
                    metadata: {{name: 'special-{{{{ .name }}}}'}}
                    spec:
                      project: ''
                      source: {{path: apps/b}}
              template:
                metadata:
                  name: 'plain-{{{{ .name }}}}'
                spec:
                  project: default
                  destination: {{namespace: '{{{{ .name }}}}'}}
                  source: {{repoURL: {REPO_URL}, path: apps/a}}
            """,
        "apps/a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "apps/b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    })
    catalog = catalog_of(top)
    plain, special = catalog.find("plain-a"), catalog.find("special-b")
    assert plain.path == "apps/a" and special.path == "apps/b"
    assert special.obj["spec"]["project"] == "default"   # '' is empty: filled from the base
    assert special.obj["spec"]["source"]["repoURL"] == REPO_URL
    assert special.obj["spec"]["destination"] == {"namespace": "b"}


@pytest.mark.parametrize("go", [True, False])
def test_a_generator_s_selector(repo: Any, go: bool) -> None:
    """Transform: only the parameter sets the selector matches, over the flattened parameters
    (``path.segments.1`` with goTemplate, the generator's own ``path[1]`` keys without)."""
    from gitops_repos import REPO_URL, catalog_of
    name = "{{ .path.basename }}" if go else "{{path.basename}}"
    key = "path.segments.1" if go else "path.basename"
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: picked
              namespace: argocd
            spec:
              goTemplate: {str(go).lower()}
              generators:
              - git:
                  repoURL: {REPO_URL}
                  revision: HEAD
                  directories:
                  - path: apps/*
                selector:
                  matchExpressions:
                  - {{key: {key}, operator: NotIn, values: [old]}}
              template:
                metadata: {{name: '{name}'}}
                spec:
                  source: {{repoURL: {REPO_URL}, path: 'apps/{name}'}}
            """,
        **{f"apps/{d}/cm.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {d}\n"
           for d in ("web", "api", "old")},
    })
    catalog = catalog_of(top)
    assert catalog.find("picked").expanded, catalog.find("picked").reason
    assert sorted(a.name for a in catalog.apps if a.appset) == ["api", "web"]


def test_list_elements_yaml_from_a_matrix(repo: Any) -> None:
    """list.go elementsYaml: the elements a matrix's first generator gives as YAML text (a git
    files generator's list, through toJson), appended to the list's own."""
    from gitops_repos import REPO_URL, catalog_of
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: components
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - matrix:
                  generators:
                  - git:
                      repoURL: {REPO_URL}
                      revision: HEAD
                      files:
                      - path: clusters/*/config.yaml
                  - list:
                      elementsYaml: '{{{{ .components | toJson }}}}'
              template:
                metadata: {{name: '{{{{ .cluster }}}}-{{{{ .name }}}}'}}
                spec:
                  source: {{repoURL: {REPO_URL}, path: 'components/{{{{ .name }}}}'}}
            """,
        "clusters/east/config.yaml": "cluster: east\ncomponents:\n- name: dns\n- name: ingress\n",
        "components/dns/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dns\n",
        "components/ingress/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: in\n",
    })
    catalog = catalog_of(top)
    assert catalog.find("components").expanded, catalog.find("components").reason
    assert sorted(a.name for a in catalog.apps if a.appset) == ["east-dns", "east-ingress"]
    assert catalog.find("east-dns").path == "components/dns"


def test_a_matrix_inside_a_matrix(repo: Any) -> None:
    """A matrix's child may be a matrix (Argo CD's nested generator); one deeper is not."""
    from gitops_repos import REPO_URL, catalog_of

    def appset(inner: str) -> str:
        return f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: grid
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - matrix:
                  generators:
                  - matrix:
                      generators:
                      - list: {{elements: [{{a: x}}, {{a: y}}]}}
                      - {inner}
                  - list: {{elements: [{{c: z}}]}}
              template:
                metadata: {{name: '{{{{ .a }}}}-{{{{ .b }}}}-{{{{ .c }}}}'}}
                spec:
                  source: {{repoURL: {REPO_URL}, path: apps}}
            """
    top = repo({"argocd/set.yaml": appset("list: {elements: [{b: '1'}]}"),
                "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
    catalog = catalog_of(top)
    assert sorted(a.name for a in catalog.apps if a.appset) == ["x-1-z", "y-1-z"]
    (top / "argocd/set.yaml").write_text(
        appset("matrix: {generators: [{list: {elements: [{b: '1'}]}}, {list: {elements: [{d: '2'}]}}]}"))
    grid = catalog_of(top).find("grid")
    assert not grid.expanded and "(inside a matrix or a merge)" in (grid.reason or "")
