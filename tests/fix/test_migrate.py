"""The in-place edits of :func:`kzgit.fix.migrate.migrate`, one table of text cases.

Every case keeps the untouched bytes (line endings, quoting, indentation, comments) and the
migrated fields are what ``kustomize edit fix`` writes; a case ``migrate`` cannot do in
place is refused with its reason."""
from __future__ import annotations

from typing import List

import pytest

from kzgit.fix._text import Unsupported
from kzgit.fix.migrate import migrate, needs_fix
from kzgit.fix.vars import _field_options

TM = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"

CASES = [
    ("crlf line endings stay",
     TM.replace("\n", "\r\n") + "bases:\r\n- ../base\r\n",
     TM.replace("\n", "\r\n") + "resources:\r\n- ../base\r\n"),
    ("no final newline stays so",
     TM + "resources:\n- a.yaml\nbases:\n- ../base",
     TM + "resources:\n- a.yaml\n- ../base"),
    ("a bases key with only commented-out entries goes, its comments stay",
     TM + "bases:\n# - ../old\nnamePrefix: x-\n",
     TM + "# - ../old\nnamePrefix: x-\n"),
    ("block entries into a flow list",
     TM + "resources: [a.yaml, 'b.yaml']  # kept\nbases:\n- ../base\n",
     TM + "resources: [a.yaml, 'b.yaml', ../base]  # kept\n"),
    ("flow entries into a block list, at its indentation",
     TM + "resources:\n    - a.yaml\nbases: [\"../base\", ../other]\n",
     TM + "resources:\n    - a.yaml\n    - \"../base\"\n    - ../other\n"),
    ("an empty commonLabels is dropped (labelFromCommonLabels gives nothing)",
     TM + "commonLabels: {}\nresources:\n- a.yaml\n",
     TM + "resources:\n- a.yaml\n"),
    # apiVersion and kind are written only with another migration, as edit fix writes the
    # whole file: a file that needs nothing else is left as kustomize builds it (issue 33)
    ("apiVersion added above kind",
     "kind: Component\nresources:\n- a.yaml\nbases:\n- ../b\n",
     "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- a.yaml\n- ../b\n"),
    ("kind added below apiVersion",
     "apiVersion: kustomize.config.k8s.io/v1beta1\n\nresources:\n- a.yaml\nbases:\n- ../b\n",
     "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\nresources:\n- a.yaml\n- ../b\n"),
    ("nothing but apiVersion and kind missing: left as it is",
     "resources:\n- a.yaml\n",
     "resources:\n- a.yaml\n"),
    ("a generator's env becomes envs",
     TM + "configMapGenerator:\n- name: a\n  env: a.env  # the env\n",
     TM + "configMapGenerator:\n- name: a\n  envs:\n  - a.env  # the env\n"),
    ("a generator's env becomes envs indented as the file indents its lists (issue 33)",
     TM + "configMapGenerator:\n  - name: a\n    env: a.env\n  - env: b.env\n    name: b\n",
     TM + "configMapGenerator:\n  - name: a\n    envs:\n      - a.env\n  - envs:\n      - b.env\n"
     "    name: b\n"),
    ("a generator's env appended to its envs",
     TM + "secretGenerator:\n  - name: a\n    envs:\n      - b.env\n    env: 'a.env'\n    type: Opaque\n",
     TM + "secretGenerator:\n  - name: a\n    envs:\n      - b.env\n      - 'a.env'\n    type: Opaque\n"),
    ("imageTags into images, quoting kept",
     TM + "images:\n- name: a\n  newTag: \"1.0\"\nimageTags:\n- name: 'b'\n  newTag: '2.0'  # pinned\n",
     TM + "images:\n- name: a\n  newTag: \"1.0\"\n- name: 'b'\n  newTag: '2.0'  # pinned\n"),
]


@pytest.mark.parametrize("old,new", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_in_place(old: str, new: str) -> None:
    fix = migrate("kustomization.yaml", old, lambda rel: True)
    assert fix.refused == []
    assert fix.new == new
    # a second run has nothing left to do
    assert migrate("kustomization.yaml", fix.new, lambda rel: True).new == fix.new


@pytest.mark.parametrize("text,needed", [
    # an inline patch's apiVersion and kind once hid a quoted key (a JSON kustomization): the
    # file was skipped without a word (issue 33)
    ('{"bases": ["../b"], "patches": [{"patch": "apiVersion: v1\\nkind: ConfigMap\\n"}]}\n', True),
    ("bases :\n- ../b\n", True),
    ("resources: [a.yaml]\n'commonLabels': {a: b}\n", True),
    (TM + "configMapGenerator:\n- {name: a, env: a.env}\n", True),
    # apiVersion/kind alone are never written: nothing to do
    ("resources:\n- a.yaml\n", False),
    (TM + "configMapGenerator:\n- name: a\n  envs:\n  - a.env\n", False),
    (TM + "patches:\n- patch: |-\n    environment: x\n    my-vars: y\n", False),
])
def test_needs_fix_reads_the_keys_a_migration_rewrites(text: str, needed: bool) -> None:
    assert needs_fix(text) is needed


def test_smp_entry_is_a_path_only_when_the_file_exists() -> None:
    text = TM + "patchesStrategicMerge:\n- there.yaml\n- not-there.yaml\n"
    fix = migrate("kustomization.yaml", text, lambda rel: rel == "there.yaml")
    assert fix.new == TM + "patches:\n- path: there.yaml\n- patch: not-there.yaml\n"


REFUSED = [
    ("a flow list over several lines",
     TM + "resources: [a.yaml,\n  b.yaml]\nbases:\n- ../base\n",
     ["bases -> resources: not migrated: 'resources': a flow list over several lines"]),
    ("a label in both fields",
     TM + "commonLabels:\n  app: a\nlabels:\n- pairs:\n    app: b\n",
     ["commonLabels -> labels (includeSelectors: true): not migrated: label name 'app' exists in "
      "both commonLabels and labels"]),
    # the parser's own words differ between PyYAML's C and Python loaders: the start is fixed
    ("not YAML", TM + "bases: [\n", ["not valid YAML: line 4, column 1: while parsing a flow node: "]),
]


@pytest.mark.parametrize("old,why", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused(old: str, why: List[str]) -> None:
    fix = migrate("kustomization.yaml", old, lambda rel: True)
    assert len(fix.refused) == len(why)
    assert all(got.startswith(want) for got, want in zip(fix.refused, why)), fix.refused
    assert fix.new == old


@pytest.mark.parametrize("value,options", [
    ("$(V)", {}),
    ("--flag=$(V)", {"delimiter": "=", "index": 1}),
    ("$(V).ns.svc", {"delimiter": "."}),
    ("a.$(V).svc", {"delimiter": ".", "index": 1}),
])
def test_field_options(value: str, options: dict) -> None:
    assert _field_options("V", value, "f.yaml") == options


@pytest.mark.parametrize("name,value,why", [
    ("V", "http://$(V):80", "is not delimited"),
    ("V", "$(V)-$(V)", "appears twice"),
    ("MY_VAR", "x_$(MY_VAR)", "cannot be cut out with the delimiter '_'"),
])
def test_field_options_refused(name: str, value: str, why: str) -> None:
    with pytest.raises(Unsupported, match=why):
        _field_options(name, value, "f.yaml")


@pytest.mark.parametrize("text,want", [
    # the parser's line and column in the file's words, never PyYAML's or ruamel's
    # 'in "<unicode string>", line 3' (issue 33)
    ("bases:\n- a\nx: &a [1\n", "line 4, column 1: while parsing a flow sequence: "),
    ("a: b\nbases:\n- ../b\n  c: d\n", "line 4, column 4: mapping values are not allowed"),
])
def test_a_yaml_error_names_the_line_without_the_parsers_stream_name(text: str, want: str) -> None:
    fix = migrate("kustomization.yaml", text, lambda rel: True)
    assert len(fix.refused) == 1 and fix.refused[0].startswith("not valid YAML: " + want), fix.refused
    assert "<unicode string>" not in fix.refused[0]
    from kzgit.fix._text import Document
    with pytest.raises(Unsupported) as e:
        Document(text, "kustomization.yaml")
    assert str(e.value).startswith("not valid YAML: " + want.split(":")[0]) and "<unicode" not in str(e.value)


def test_a_long_error_is_cut_where_a_level_starts_with_paths_relative() -> None:
    from kzgit.fix.proof import Rendered, first_difference
    top = "/home/u/repo"
    chain = ": ".join(f"accumulating resources from '{top}/level{n}/kustomization.yaml'" for n in range(6))
    err = Rendered(None, chain + ": '" + top + "/base/cm.yaml': no such file")
    got = first_difference(err, err, lambda m: m.replace(top + "/", ""))
    assert got.startswith("does not render: ... ")
    tail = got[len("does not render: ... "):]
    assert tail.startswith("accumulating resources from 'level"), tail
    assert tail.endswith("'base/cm.yaml': no such file") and top not in got
