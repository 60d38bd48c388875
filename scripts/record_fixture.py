#!/usr/bin/env python3
"""Record golden fixtures from ``kubectl kustomize`` (the oracle).

A fixture is a directory ``tests/fixtures/<area>/<case>/`` holding an input tree and a
``case.json``::

    {"target": ".", "args": [], "expected": "ok", "description": "one line", "kustomize": "5.8.1"}

``kustomize`` is the Kustomize release of the kubectl that recorded the case, read from
``kubectl version --client`` before recording; kzgit replays the case as that release
(``KZGIT_KUSTOMIZE_VERSION``).  A case without it was recorded with kubectl 1.32 (5.5.0).
``--kubectl`` names the oracle, a path or one of ``$KZGIT_ORACLE_KUBECTL_1_32`` ... as
``../shared/tools/oracles --env`` exports them; ``--check`` re-runs each case with the oracle
of its own release (found in those variables, else ``--kubectl`` if it is that release).

This script copies the input tree (everything but ``case.json`` and ``expected.*``) into a
temporary directory, runs ``kubectl kustomize TARGET ARGS`` there with ``HOME`` and the XDG
directories pointed at empty temporary directories (so no user config, plugin or cache leaks
in), and writes kubectl's stdout to ``expected.yaml`` (exit 0) or its stderr to
``expected.err`` (non-zero exit; informational only, with the temp path replaced by
``$CASE``).  If ``case.json`` already says ``expected`` and kubectl disagrees, the case is
reported and left untouched unless ``--accept`` is given.

The table tests' cases under ``tests/data/<table>/<case>/`` (builtins, patch, replacements,
vars, yamlio) have the same format and are recorded by the same command (``--tables``).

Usage::

    scripts/record_fixture.py tests/fixtures/images/digest ...   # some cases
    scripts/record_fixture.py --all                               # every case under tests/fixtures
    scripts/record_fixture.py --tables                            # every case under tests/data
    scripts/record_fixture.py --check --all --tables              # compare only, write nothing
"""
from __future__ import annotations

import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TABLES = ROOT / "tests" / "data"
META_FILES = {"case.json", "expected.yaml", "expected.err"}
CASE_PLACEHOLDER = "$CASE"
# the release of the cases recorded before case.json said which (kubectl 1.32)
LEGACY_RELEASE = "5.5.0"


@dataclass
class Outcome:
    """What one run produced: exit code, stdout and stderr (stderr with the temp path masked)."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def expected(self) -> str:
        return "ok" if self.returncode == 0 else "error"


def iter_cases(root: Path = FIXTURES) -> Iterator[Path]:
    """Every directory under ``root`` that holds a ``case.json``, sorted."""
    for p in sorted(root.rglob("case.json")):
        yield p.parent


def case_id(case_dir: Path, root: Path = FIXTURES) -> str:
    return case_dir.relative_to(root).as_posix()


def load_case(case_dir: Path) -> Dict[str, object]:
    with open(case_dir / "case.json", encoding="utf-8") as f:
        data: Dict[str, object] = json.load(f)
    data.setdefault("target", ".")
    data.setdefault("args", [])
    return data


def case_release(case: Dict[str, object]) -> str:
    """The Kustomize release that recorded a case (and that kzgit replays it as)."""
    return str(case.get("kustomize", LEGACY_RELEASE))


def kubectl_release(kubectl: str) -> str:
    """The Kustomize release a kubectl embeds: ``Kustomize Version: v5.8.1`` of ``version --client``."""
    proc = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True, timeout=60)
    m = re.search(r"^Kustomize Version: v(\d+\.\d+\.\d+)\s*$", proc.stdout, re.M)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"{kubectl}: `kubectl version --client` names no Kustomize release:\n"
                         f"{proc.stdout}{proc.stderr}")
    return m.group(1)


def oracles() -> Dict[str, str]:
    """{Kustomize release: kubectl} of the oracles ``tools/oracles --env`` exported
    (``KZGIT_ORACLE_KUBECTL_1_36`` and the like, any case), checked with ``version --client``."""
    out: Dict[str, str] = {}
    for k, v in sorted(os.environ.items()):
        if re.fullmatch(r"KZGIT_ORACLE_KUBECTL_\d+_\d+", k.upper()) and os.access(v, os.X_OK):
            out[kubectl_release(v)] = v
    return out


def copy_inputs(case_dir: Path, dest: Path) -> None:
    """Copy the input tree of ``case_dir`` into ``dest`` keeping symlinks as symlinks."""
    def ignore(d: str, names: List[str]) -> List[str]:
        return [n for n in names if Path(d) == case_dir and n in META_FILES]
    shutil.copytree(case_dir, dest, symlinks=True, ignore=ignore)


def isolated_env(tmp: Path) -> Dict[str, str]:
    """An environment with HOME and XDG dirs in ``tmp`` and no kustomize plugin settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "KUSTOMIZE_", "KUBECONFIG"))}
    for name in ("home", "config", "cache", "data"):
        (tmp / name).mkdir()
    env["HOME"] = str(tmp / "home")
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env["XDG_DATA_HOME"] = str(tmp / "data")
    env["LC_ALL"] = "C.UTF-8"
    return env


def mask_paths(text: str, work: Path) -> str:
    """Replace the temp copy's path by ``$CASE`` and its parent by ``$TMP`` in ``text``."""
    for p in sorted({str(work), os.path.realpath(work)}, key=len, reverse=True):
        text = text.replace(p, CASE_PLACEHOLDER)
    for p in sorted({str(work.parent), os.path.realpath(work.parent)}, key=len, reverse=True):
        text = text.replace(p, "$TMP")
    # kubectl's klog prefix ("E1122 20:02:20.049696   15707 run.go:72] ") varies per run.
    return re.sub(r"(?m)^[EWI]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] ", "", text)


def run_case(case_dir: Path, command: List[str], timeout: float = 120.0) -> Outcome:
    """Run ``command + [target] + args`` in a temp copy of the case; return its outcome.

    kzgit (which ignores it when it is kubectl) is told the case's release in the environment."""
    case = load_case(case_dir)
    with tempfile.TemporaryDirectory(prefix="kzgit-fixture-") as t:
        tmp = Path(t)
        work = tmp / "case"
        copy_inputs(case_dir, work)
        env = isolated_env(tmp)
        env["KZGIT_KUSTOMIZE_VERSION"] = case_release(case)
        argv = list(command) + [str(case["target"])] + [str(a) for a in case["args"]]  # type: ignore[union-attr]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=timeout)
        stderr = proc.stderr.decode("utf-8", "replace")
        stderr = mask_paths(stderr, work)
        return Outcome(proc.returncode, proc.stdout.decode("utf-8", "surrogateescape"), stderr)


def run_kzgit_batch(case_dirs: List[Path], timeout: float = 600.0) -> List[Outcome]:
    """Run ``kzgit build`` on many cases in ONE fresh Python process (imports paid once).

    Each build still gets its own temp copy, HOME and XDG dirs and working directory; kzgit is
    called through ``kzgit.cli.main.main`` with stdout/stderr captured, so exit codes and the
    no-traceback contract are the CLI's own.  Used by the golden tests for speed.
    """
    if not case_dirs:
        return []
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--kzgit-worker"],
                          input=json.dumps([str(c) for c in case_dirs]).encode(),
                          capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"kzgit worker failed:\n{proc.stderr.decode('utf-8', 'replace')}")
    return [Outcome(r["returncode"], r["stdout"], r["stderr"]) for r in json.loads(proc.stdout)]


def _worker() -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from inprocess import run_kzgit   # the mutation engine's workers run kzgit the same way

    results = []
    for c in json.load(sys.stdin):
        case_dir = Path(c)
        case = load_case(case_dir)
        with tempfile.TemporaryDirectory(prefix="kzgit-golden-") as t:
            tmp = Path(t)
            work = tmp / "case"
            copy_inputs(case_dir, work)
            argv = ["build", str(case["target"])] + [str(a) for a in case["args"]]  # type: ignore[union-attr]
            env = isolated_env(tmp)
            env["KZGIT_KUSTOMIZE_VERSION"] = case_release(case)
            rc, stdout, stderr = run_kzgit(argv, work, env)
            results.append({"returncode": rc, "stdout": stdout, "stderr": mask_paths(stderr, work)})
    sys.stdout.write(json.dumps(results))
    return 0


def kzgit_verdict(case_dir: Path, out: Outcome) -> Optional[str]:
    """Why kzgit's outcome does not match the golden case, or None when it does."""
    case = load_case(case_dir)
    if "Traceback (most recent call last)" in out.stderr or out.returncode == 3:
        lines = [ln for ln in out.stderr.strip().splitlines()
                 if ln.strip() and not ln.startswith("Check the log at")]
        msg = lines[-1] if "Traceback" in out.stderr else (lines[:1] or [""])[0]
        return f"crash: {msg.replace('An unexpected error has occurred: ', '')[:150]}"
    if case["expected"] == "ok":
        if out.returncode != 0:
            first = (out.stderr.strip().splitlines() or [""])[0]
            return f"exit {out.returncode}: {first[:150]}"
        want = (case_dir / "expected.yaml").read_bytes().decode("utf-8", "surrogateescape")
        if out.stdout != want:
            import difflib
            diff = [ln for ln in difflib.unified_diff(want.splitlines(), out.stdout.splitlines(),
                                                      lineterm="", n=0)
                    if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
            return "output differs: " + " | ".join(diff[:2])[:150]
        return None
    if out.returncode == 0:
        return "kzgit succeeds where kubectl fails"
    return None


def known_failures_text(cases: List[Path]) -> str:
    """The KNOWN_FAILURES file kzgit's current behaviour calls for."""
    outs = run_kzgit_batch(cases)
    lines = ["# Golden cases kzgit does not pass yet: `<case-id>  # reason`.",
             "# tests/test_golden.py marks them xfail(strict=True): remove a line when its case passes.",
             "# Regenerate with: .venv/bin/python scripts/record_fixture.py --known-failures --all"]
    for c, o in zip(cases, outs):
        why = kzgit_verdict(c, o)
        if why:
            lines.append(f"{case_id(c)}  # {why}".replace("\n", " "))
    return "\n".join(lines) + "\n"


def kubectl_outcome(case_dir: Path, kubectl: str = "kubectl") -> Outcome:
    return run_case(case_dir, [kubectl, "kustomize"])


def record(case_dir: Path, kubectl: str = "kubectl", accept: bool = False,
           check: bool = False, release: Optional[str] = None) -> Optional[str]:
    """Record one case with ``kubectl`` (which embeds Kustomize ``release``, read from it when
    not given); return a problem description, or None when all is well."""
    case = load_case(case_dir)
    release = release or kubectl_release(kubectl)
    if check and case_release(case) != release:
        return (f"recorded with Kustomize {case_release(case)}, not {release}: check it with "
                f"that release's kubectl")
    out = kubectl_outcome(case_dir, kubectl)
    declared = case.get("expected")
    if declared not in (None, out.expected) and not accept:
        return (f"declared {declared!r} but kubectl gave {out.expected!r}:\n"
                f"{out.stderr or out.stdout[:400]}")
    if check:
        exp = case_dir / ("expected.yaml" if out.expected == "ok" else "expected.err")
        if out.expected == "ok":
            if not exp.exists() or exp.read_bytes() != out.stdout.encode("utf-8", "surrogateescape"):
                return "kubectl output differs from expected.yaml"
        elif declared != "error":
            return "kubectl failed but case expects ok"
        return None
    case["expected"] = out.expected
    case["kustomize"] = release
    ordered = {k: case[k] for k in ("target", "args", "expected", "description", "kustomize")
               if k in case}
    ordered.update({k: v for k, v in case.items() if k not in ordered})
    (case_dir / "case.json").write_text(json.dumps(ordered, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    for name in ("expected.yaml", "expected.err"):
        (case_dir / name).unlink(missing_ok=True)
    if out.expected == "ok":
        (case_dir / "expected.yaml").write_bytes(out.stdout.encode("utf-8", "surrogateescape"))
    else:
        (case_dir / "expected.err").write_text(out.stderr, encoding="utf-8")
    return None


def main(argv: Optional[List[str]] = None) -> int:
    if (argv if argv is not None else sys.argv[1:]) == ["--kzgit-worker"]:
        return _worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", type=Path, help="case directories")
    ap.add_argument("--all", action="store_true", help="every case under tests/fixtures")
    ap.add_argument("--tables", action="store_true", help="every case under tests/data (table tests)")
    ap.add_argument("--kubectl", default="kubectl",
                    help="the oracle: a kubectl, or a variable such as KZGIT_ORACLE_KUBECTL_1_36")
    ap.add_argument("--accept", action="store_true",
                    help="overwrite case.json 'expected' when kubectl disagrees")
    ap.add_argument("--check", action="store_true", help="compare with the committed files only")
    ap.add_argument("--known-failures", action="store_true",
                    help="run kzgit instead and write tests/fixtures/KNOWN_FAILURES for the cases")
    ns = ap.parse_args(argv)
    cases = list(iter_cases()) if ns.all else [c.resolve() for c in ns.cases]
    if ns.tables:
        cases += list(iter_cases(TABLES))
    if not cases:
        ap.error("no cases given")
    if ns.known_failures and ns.tables:
        ap.error("--known-failures is about tests/fixtures (the golden tests), not --tables")
    if ns.known_failures:
        text = known_failures_text(cases)
        (FIXTURES / "KNOWN_FAILURES").write_text(text, encoding="utf-8")
        print(f"{len(text.splitlines()) - 3} known failures of {len(cases)} cases")
        return 0
    kubectl = ns.kubectl
    named = {k.upper(): v for k, v in os.environ.items()}.get(kubectl.upper())
    if named and kubectl.upper().startswith("KZGIT_ORACLE_"):
        kubectl = named
    release = kubectl_release(kubectl) if not ns.check or shutil.which(kubectl) else None
    by_release = oracles() if ns.check else {}
    if release is not None:
        by_release.setdefault(release, kubectl)
    bad = 0
    for c in cases:
        if ns.check:
            want = case_release(load_case(c))
            oracle = by_release.get(want)
            if oracle is None:
                print(f"skip {c}: no oracle for Kustomize {want}", file=sys.stderr)
                continue
            problem = record(c, oracle, ns.accept, True, want)
        else:
            problem = record(c, kubectl, ns.accept, False, release)
        rel = next((case_id(c, r) for r in (FIXTURES, TABLES) if r in c.parents), str(c))
        if problem:
            bad += 1
            print(f"FAIL {rel}: {problem}", file=sys.stderr)
        else:
            print(f"ok   {rel} ({load_case(c)['expected']})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
