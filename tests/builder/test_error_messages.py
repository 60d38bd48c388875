"""Error messages in kustomize's words.

The golden cases in ``tests/fixtures`` whose ``expected.err`` kubectl recorded are compared
for error-versus-success only by ``test_golden.py``.  The cases listed here must also give
kustomize's message word for word (paths masked as in the recordings), so the wording,
once matched, does not drift.  kzgit adds context kustomize lacks in other cases (the
kustomization file, the patch operation); those are not listed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Optional

import pytest

from kzgit import BuildOptions, build
from kzgit.errors import KzgitError
from helpers import FIXTURES


EXACT = [
    "components/component-as-resource-error",
    "components/component-with-beta-apiversion-error",
    "components/kind-kustomization-error",
    "errors/bad-kind",
    "errors/bad-literal",
    "errors/bad-sort-order",
    "errors/builtin-config-field-wrong-type",
    "errors/builtin-json-config-field-wrong-type",
    "errors/cycle",
    "errors/duplicate-id",
    "errors/duplicate-id-via-bases",
    "errors/env-repeated-key",
    "errors/generator-file-outside-root",
    "errors/generator-without-name",
    "errors/kustomization-wrong-apiversion",
    "errors/legacy-options-with-fifo",
    "errors/load-restrictor",
    "errors/missing-base-dir",
    "errors/missing-env-file",
    "errors/missing-resource-file",
    "errors/no-kustomization",
    "errors/patch-ambiguous-target",
    "errors/patchesjson6902-without-target-name",
    "errors/two-kustomization-files",
    "generators/duplicate-key-error",
    "generators/file-key-collision-error",
    "patches/missing-patch-file-error",
    "patches/target-not-found",
    "replicas/no-match-error",
    "vars/duplicate-error",
    "vars/unresolved-objref-error",
]


def kubectl_message(recorded: str) -> Optional[str]:
    """The error text inside kubectl's klog line (``err="..."`` or ``err=<`` block)."""
    text = "\n".join(ln for ln in recorded.splitlines() if not ln.startswith("# Warning")).strip()
    m = re.fullmatch(r'"command failed" err=(".*")', text, re.S)
    if m:
        msg: str = json.loads(m.group(1))  # Go %q quoting is JSON-compatible for these
        return msg
    m = re.fullmatch(r'"command failed" err=<\n(.*)\n >', text, re.S)
    if m:
        return "\n".join(ln[1:] if ln.startswith("\t") else ln for ln in m.group(1).split("\n"))
    return None


# kustomize's message, whole, inside kzgit's (which adds the kustomization file)
CONTAINED = [
    "errors/builtin-config-selector-name-number",
    "errors/configurations-fieldspec-kind-bool",
    "errors/configurations-fieldspec-apiversion",
    "errors/configurations-unknown-field",
    "errors/configurations-wrong-type",
    "errors/labels-fields-apiversion",
    "errors/replacement-fieldpaths-a-string",
    "errors/replacement-index-a-fraction",
    "errors/replacement-select-kind-a-mapping",
    "errors/replacement-unknown-field",
    "replacements/path-and-inline-error",
    "replacements/path-file-not-a-replacement-error",
    "replacements/path-file-wrong-type-error",
]


@pytest.mark.parametrize("case_id", EXACT + CONTAINED)
def test_message_matches_kustomize(case_id: str, tmp_path: Path) -> None:
    case_dir = FIXTURES / case_id
    case = json.loads((case_dir / "case.json").read_text())
    want = kubectl_message((case_dir / "expected.err").read_text(encoding="utf-8"))
    assert want is not None, "unrecognised recording"
    work = tmp_path / "case"
    shutil.copytree(case_dir, work, symlinks=True)
    args = list(case["args"])
    options = BuildOptions()
    if args[:1] in (["--load-restrictor"], ["--load_restrictor"]):
        options.load_restrictor = args[1]
        del args[:2]
    assert not args, f"flags not mapped here: {args}"
    with pytest.raises(KzgitError) as err:
        build(str(work / case["target"]), options)
    got = str(err.value)
    for real, mask in ((work, "$CASE"), (tmp_path, "$TMP")):
        for p in sorted({str(real), os.path.realpath(real)}, key=len, reverse=True):
            got = got.replace(p, mask)
    if case_id in CONTAINED:
        assert want in got
    else:
        assert got == want


def test_cli_escapes_a_nul_byte_as_kubectl_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from kzgit.cli.main import main
    case_dir = FIXTURES / "errors/resource-path-nul-byte"
    work = tmp_path / "case"
    shutil.copytree(case_dir, work, symlinks=True)
    monkeypatch.chdir(work)
    assert main(["build", "."]) == 1
    err = capsys.readouterr().err
    # kubectl (klog) prints the one-line error Go-quoted: the NUL as \x00
    recorded = (case_dir / "expected.err").read_text(encoding="utf-8")
    assert "a\\x00b.yaml" in recorded
    assert "\x00" not in err and "accumulating resources from 'a\\x00b.yaml'" in err
