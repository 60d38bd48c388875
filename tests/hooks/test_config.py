"""``[tool.kzgit]`` / ``.kzgit.toml``: defaults, precedence, and errors naming key and file."""
from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from kzgit.config import DEFAULT_REF_PATTERNS, Config, glob_match, load_config
from kzgit.errors import UsageError


def test_defaults_without_files(tmp_path: Path) -> None:
    cfg = load_config(str(tmp_path))
    assert cfg == Config()
    assert cfg.engine == "builtin" and cfg.refs.allowed == DEFAULT_REF_PATTERNS


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.kzgit]\nengine = "kubectl"\nroots = ["clusters/*"]\n'
        'timeout = 30\n[tool.kzgit.refs]\nrequire-sha = true\n')
    cfg = load_config(str(tmp_path))
    assert cfg.engine == "kubectl" and cfg.roots == ("clusters/*",) and cfg.timeout == 30.0
    assert cfg.refs.require_sha is True
    assert cfg.source == str(tmp_path / "pyproject.toml")


def test_pyproject_without_table_is_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_config(str(tmp_path)) == Config()


def test_kzgit_toml_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kzgit]\nengine = "kubectl"\nbogus = 1\n')
    (tmp_path / ".kzgit.toml").write_text('engine = "kustomize"\nexclude = ["tests/**"]\n')
    cfg = load_config(str(tmp_path))
    assert cfg.engine == "kustomize" and cfg.exclude == ("tests/**",)


def test_helm_command_reaches_the_render_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kzgit.hooks import Workspace
    from kzgit.hooks.render import options_for
    (tmp_path / ".kzgit.toml").write_text('enable-helm = true\nhelm-command = "/opt/helm3/helm"\n')
    # a repository names a program only when the user chose the same (issue 24)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    (tmp_path / "user" / "kzgit").mkdir(parents=True)
    # and turns plugins on only when the user granted it (issue 32)
    (tmp_path / "user" / "kzgit" / "config.toml").write_text(
        'helm-command = "/opt/helm3/helm"\nenable-helm = true\n')
    cfg = load_config(str(tmp_path))
    opts = options_for(Workspace(str(tmp_path), [], None, cfg))
    assert (opts.enable_helm, opts.helm_command) == (True, "/opt/helm3/helm")
    assert Config().helm_command == "helm"


@pytest.mark.parametrize("file,text,needle", [
    (".kzgit.toml", "helm-command = ''\n", "bad value for 'helm-command'"),
    (".kzgit.toml", "enigne = 'kubectl'\n", "unknown key 'enigne'"),
    ("pyproject.toml", "[tool.kzgit]\nenigne = 'kubectl'\n", "unknown key 'tool.kzgit.enigne'"),
    (".kzgit.toml", "engine = 'helm'\n", "bad value for 'engine': 'helm'"),
    (".kzgit.toml", "roots = 'a'\n", "bad value for 'roots'"),
    (".kzgit.toml", "timeout = -1\n", "bad value for 'timeout'"),
    (".kzgit.toml", "jobs = true\n", "bad value for 'jobs'"),
    (".kzgit.toml", "[refs]\nallowed = ['v1', '(']\n",
     "bad value for 'refs.allowed': pattern '(' is not a valid regular expression: "
     "error parsing regexp: missing closing ): `(`"),
    (".kzgit.toml", "[refs]\ncheck-cache = 1\n", "bad value for 'refs.check-cache'"),
    (".kzgit.toml", "[refs]\nrequire_sha = true\n", "unknown key 'refs.require_sha'"),
    ("pyproject.toml", "[tool.kzgit.refs]\nrequire-sha = 'yes'\n", "bad value for 'tool.kzgit.refs.require-sha'"),
    (".kzgit.toml", "refs = 3\n", "bad value for 'refs'"),
    (".kzgit.toml", "engine = \n", "not valid TOML"),
    ("pyproject.toml", "tool = {kzgit = 3}\n", "bad value for 'tool.kzgit'"),
])
def test_errors_name_key_and_file(tmp_path: Path, file: str, text: str, needle: str) -> None:
    (tmp_path / file).write_text(text)
    with pytest.raises(UsageError) as e:
        load_config(str(tmp_path))
    assert needle in str(e.value)
    assert str(tmp_path / file) in str(e.value)
    if "unknown key 'enigne'" in needle:
        assert "known keys: [gitops], [lint], [refs], [sandbox], [validate], cache, cache-size-mb, enable-alpha-plugins," in str(e.value)


@pytest.mark.parametrize("path,patterns,expected", [
    ("vendor/a/b/kustomization.yaml", ["vendor/*"], True),
    ("vendor", ["vendor/**"], False),
    ("vendor/x", ["vendor/**"], True),
    ("clusters/prod", ["clusters/*"], True),
    ("clustersx/prod", ["clusters/*"], False),
    ("a/tests/fixtures/b", ["**/tests/**"], True),
    ("overlays/prod", [], False),
])
def test_glob_match(path: str, patterns: List[str], expected: bool) -> None:
    assert glob_match(path, patterns) is expected


def test_validate_table(tmp_path: Path) -> None:
    (tmp_path / ".kzgit.toml").write_text(
        '[validate]\nkubernetes-version = "1.29"\nstrict = false\nmissing-schemas = "error"\n'
        'schema-locations = ["s/{{.ResourceKind}}.json"]\ncrds = ["crds"]\nskip-kinds = ["SealedSecret"]\n')
    v = load_config(str(tmp_path)).validate
    assert (v.kubernetes_version, v.strict, v.missing_schemas) == ("1.29", False, "error")
    assert v.schema_locations == ("s/{{.ResourceKind}}.json",) and v.crds == ("crds",)
    assert v.skip_kinds == ("SealedSecret",)
    (tmp_path / ".kzgit.toml").write_text('[validate]\nkubernetes-version = 1.29\n')
    with pytest.raises(UsageError, match="bad value for 'validate.kubernetes-version'"):
        load_config(str(tmp_path))
    (tmp_path / ".kzgit.toml").write_text('[validate]\nstrict-mode = true\n')
    with pytest.raises(UsageError, match="unknown key 'validate.strict-mode'"):
        load_config(str(tmp_path))
