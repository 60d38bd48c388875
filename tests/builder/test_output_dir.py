"""``kzgit build -o DIR`` writes one file per resource with kustomize's file names."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kzgit.cli.main import main
from helpers import PROJECT

EXAMPLE = PROJECT / "examples" / "overlays" / "production"


def test_output_dir_names_and_content(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build", str(EXAMPLE), "-o", str(out)]) == 0
    names = sorted(os.listdir(out))
    assert names == ["apps_v1_deployment_prod-guestbook.yaml",
                     "v1_configmap_prod-guestbook-config-fc5fhh5b8k.yaml",
                     "v1_service_prod-guestbook.yaml"]
    expected = (PROJECT / "tests/fixtures/examples/production/expected.yaml").read_text()
    joined = "---\n".join((out / n).read_text() for n in
                          ["v1_configmap_prod-guestbook-config-fc5fhh5b8k.yaml",
                           "v1_service_prod-guestbook.yaml", "apps_v1_deployment_prod-guestbook.yaml"])
    assert joined == expected


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH: no differential check")
def test_output_dir_matches_kubectl(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    assert main(["build", str(EXAMPLE), "-o", str(mine)]) == 0
    subprocess.run(["kubectl", "kustomize", str(EXAMPLE), "-o", str(theirs)], check=True, timeout=120)
    assert sorted(os.listdir(mine)) == sorted(os.listdir(theirs))
    for n in os.listdir(mine):
        assert (mine / n).read_bytes() == (theirs / n).read_bytes()


def test_output_file_is_atomic_and_complete(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    assert main(["build", str(EXAMPLE), "-o", str(target)]) == 0
    assert target.read_text() == (PROJECT / "tests/fixtures/examples/production/expected.yaml").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]
