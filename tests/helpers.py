"""Helpers shared by the test modules (pre-commit's ``testing/util.py`` is the model).

Where the test data lives; writing a tree of files; running a command or git with an explicit
environment; a git identity for a temporary home; the small repository the hook tests commit
to; is a process group gone yet?  And the harness of the golden table tests.
"""
from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import threading
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import pytest
import yaml

StrPath = Union[str, "os.PathLike[str]"]


def default_signals() -> None:
    """``preexec_fn`` for children a test interrupts: SIGINT, SIGTERM and SIGHUP at their defaults.

    A test run started in the background of a non-interactive shell (or under ``nohup``)
    inherits SIGINT/SIGHUP as ignored; Python then installs no ^C handler and kzgit keeps an
    ignored hangup ignored, so the signals the test sends would do nothing.
    """
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def group_alive(pgid: int) -> bool:
    """True while a non-zombie process of group ``pgid`` exists.

    ``os.killpg(pgid, 0)`` also succeeds for zombies waiting to be reaped by PID 1 (slow in
    containers), so on Linux /proc is consulted to ignore them.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    if not os.path.isdir("/proc/self"):
        return True  # pragma: no cover
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def wait_gone(pgid: int, seconds: float = 10.0) -> bool:
    """Poll until no live process of group ``pgid`` is left; False if some outlive ``seconds``.

    The processes the tests start sleep for minutes, so an orphan is still caught; the margin
    is for a loaded machine, where killed processes take a while to be reaped."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.02)
    return not group_alive(pgid)


def wait_pid_file(pidfile: Path, seconds: float = 30.0) -> int:
    """The process group id a started child wrote to ``pidfile``, once it is there and alive."""
    end = time.monotonic() + seconds
    while not pidfile.exists() and time.monotonic() < end:
        time.sleep(0.02)
    assert pidfile.exists(), f"the child did not start: no {pidfile.name}"
    pgid = int(pidfile.read_text())
    assert group_alive(pgid)
    return pgid


#: The tests directory, the project checkout, and the data the tests read.
TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"


def write_tree(root: StrPath, files: Mapping[str, str], dedent: bool = False) -> Path:
    """Write ``{relative path: text}`` under ``root`` (parents created); return ``root`` resolved.

    ``dedent`` strips the common indentation of each text, for files written as indented
    triple-quoted strings in a test.
    """
    base = Path(root)
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if dedent else text)
    return Path(os.path.realpath(base))


def git_tree(root: Path, files: Mapping[str, str]) -> Path:
    """:func:`write_tree` into a git work tree at ``root`` (created when it is not one yet):
    the repository-wide commands find roots from the repository's top."""
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    write_tree(root, files)
    return root


def oracle(name: str) -> str:
    """The oracle binary ``$KZGIT_ORACLE_<NAME>`` (``KZGIT_ORACLE_KUBECTL_1_36``, ``..._HELM_3``;
    the oracles script spells them ``KZGIT_ORACLE_kubectl_1_36``, so any case), or skip the
    test saying how to get it."""
    import pytest
    for k, v in os.environ.items():
        if k.upper() == name and os.access(v, os.X_OK):
            return v
    pytest.skip(f"{name} is not set: eval \"$(../shared/tools/oracles --env)\" to run this test")


def work_dir(tmp_path: StrPath, monkeypatch: "object") -> str:
    """A fresh ``work`` directory under ``tmp_path`` (symlinks resolved), made the current one."""
    work = os.path.join(os.path.realpath(os.fspath(tmp_path)), "work")
    os.makedirs(work)
    monkeypatch.chdir(work)  # type: ignore[attr-defined]
    return work


def deployment(name: str, containers: str) -> str:
    """YAML of an ``apps/v1`` Deployment ``name`` whose pod template runs ``containers``
    (the YAML of the list, written from column 0)."""
    body = textwrap.indent(textwrap.dedent(containers), " " * 6)
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name
            + "\nspec:\n  template:\n    spec:\n      containers:\n" + body)


def krm_exec_function(items: str, prelude: str = "") -> str:
    """A shell script that acts as an exec KRM function: it runs ``prelude`` and prints a
    ResourceList whose items are ``items`` (the YAML of the list, written from column 0)."""
    return ("#!/bin/sh\n" + prelude + "cat <<'EOF'\napiVersion: config.kubernetes.io/v1\n"
            "kind: ResourceList\nitems:\n" + items + "EOF\n")


def run(cmd: List[str], cwd: StrPath, env: Dict[str, str], timeout: float = 180.0) -> Tuple[int, str]:
    """Run ``cmd`` with no stdin; return its exit code and its stdout and stderr merged."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def git_run(repo: StrPath, env: Dict[str, str], *args: str) -> str:
    """``git ARGS`` in ``repo`` with ``env``; its output, asserting that it succeeded."""
    rc, out = run(["git", *args], repo, env)
    assert rc == 0, out
    return out


def user_gitconfig(home: Path) -> Path:
    """A global git config in ``home`` with an identity and ``main`` as the first branch
    (point ``GIT_CONFIG_GLOBAL`` at it, with ``GIT_CONFIG_NOSYSTEM=1``)."""
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / "gitconfig"
    gitconfig.write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    return gitconfig


#: A repository the hook tests commit to: a base and two overlays that render.
HOOKS_REPO: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\n",
    "overlays/dev/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: patch.yaml\n",
    "overlays/dev/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: dev\n",
}


# -- golden table cases ---------------------------------------------------------------------------
# A table is a directory of cases in the fixture format (tests/fixtures/README.md): one directory a
# case, with its input tree, case.json and what kubectl kustomize printed (expected.yaml) or said
# (expected.err), recorded by scripts/record_fixture.py.  Table tests feed the input to one kzgit
# function and compare with kubectl's output, as kustomize's api/filters/<op>/<op>_test.go do.

def table_cases(root: Path) -> List[Any]:
    """One pytest param a case directory (holding case.json) under ``root``, sorted, id = its path."""
    dirs = sorted(p.parent for p in root.rglob("case.json"))
    return [pytest.param(d, id=d.relative_to(root).as_posix()) for d in dirs]


def expects_error(case_dir: Path) -> bool:
    """True when kubectl failed on the case (``"expected": "error"`` in case.json)."""
    return bool(json.loads((case_dir / "case.json").read_text(encoding="utf-8"))["expected"] == "error")


def case_version(case_dir: Path) -> Tuple[int, int, int]:
    """The Kustomize release that recorded a case (``"kustomize"`` in case.json; the cases
    from before it was written were recorded with kubectl 1.32, Kustomize 5.5.0)."""
    release = json.loads((case_dir / "case.json").read_text(encoding="utf-8")).get("kustomize", "5.5.0")
    a, b, c = (int(x) for x in release.split("."))
    return a, b, c


def expected_documents(case_dir: Path, load: Callable[[str], Iterable[Any]] = yaml.safe_load_all) -> List[Any]:
    """The non-empty documents of kubectl's ``expected.yaml``."""
    return [d for d in load((case_dir / "expected.yaml").read_text(encoding="utf-8")) if d]


def kubectl_stderr(case_dir: Path) -> str:
    """What kubectl printed on stderr for a failing case (temporary paths masked)."""
    return (case_dir / "expected.err").read_text(encoding="utf-8")


def kustomize_error(case_dir: Path) -> str:
    """kustomize's own message in ``expected.err``: klog's ``err="..."`` (quotes unescaped, one
    line a match) or its multi-line ``err=<`` block (without a node dump), else the whole text."""
    text = kubectl_stderr(case_dir)
    found = re.findall(r'err="(.*)"$', text, re.M)
    if found:
        return "\n".join(found).strip().replace('\\"', '"')
    block = re.search(r"err=<\n(.*?)\n >", text, re.S)
    if block:
        msg = "\n".join(ln[1:] if ln.startswith("\t") else ln for ln in block.group(1).splitlines())
        # kyaml ends its "wrong node kind" errors with a dump of the node in its own YAML
        # style; kzgit names the two kinds and leaves the dump out.
        return msg.split(": node contents:\n")[0]
    return text.strip()


def canon(docs: Iterable[Any]) -> List[str]:
    """An order-free comparison key of documents (the output order is the sort's business)."""
    return sorted(json.dumps(d, sort_keys=True, default=str) for d in docs)


def kzgit_documents(text: str) -> List[Any]:
    """Documents read as kzgit reads them (kustomize's scalar typing)."""
    from kzgit.yamlio import load_documents  # the engine only where a table test needs it
    return [d for d in load_documents(text, "input.yaml") if d]


def builtin_case(case_dir: Path) -> Tuple[Any, Dict[str, Any], Dict[str, Any]]:
    """A builtin table case: its input resources (``input.yaml``) as a ResMap, the config of its
    one ``transformers:`` entry ({} without one) and its kustomization."""
    from kzgit.resource import ResMap, Resource
    kust = yaml.safe_load((case_dir / "kustomization.yaml").read_text(encoding="utf-8")) or {}
    inp = case_dir / "input.yaml"
    docs = kzgit_documents(inp.read_text(encoding="utf-8")) if inp.exists() else []
    rm = ResMap(Resource(d, str(inp)) for d in docs)
    config: Dict[str, Any] = {}
    if kust.get("transformers"):
        config = yaml.safe_load((case_dir / kust["transformers"][0]).read_text(encoding="utf-8"))
    return rm, config, kust


Apply = Callable[[Any, Dict[str, Any], Dict[str, Any]], Optional[List[Any]]]


def check_builtin_case(case_dir: Path, apply: Apply, ordered: bool = False) -> None:
    """Run ``apply(resmap, config, kustomization)`` on a builtin table case and compare the
    resources (those it returns, else the map's) with kubectl's output as data, in order when
    ``ordered``; for a failing case, kzgit must raise a BuildError carrying kustomize's message."""
    from kzgit.errors import BuildError
    rm, config, kust = builtin_case(case_dir)
    if expects_error(case_dir):
        with pytest.raises(BuildError) as ei:
            apply(rm, config, kust)
        want = kustomize_error(case_dir)
        assert want.split(": ")[-1] in str(ei.value), f"kustomize said: {want}"
        return
    out = apply(rm, config, kust)
    got = [r.obj for r in (out if out is not None else rm.resources())]
    want_docs = expected_documents(case_dir, kzgit_documents)
    if ordered:
        got_keys = [json.dumps(d, sort_keys=True, default=str) for d in got]
        want_keys = [json.dumps(d, sort_keys=True, default=str) for d in want_docs]
    else:
        got_keys, want_keys = canon(got), canon(want_docs)
    # helpers.py is not rewritten by pytest's assert: the difference is spelled out here
    assert got_keys == want_keys, "kzgit (-) differs from kubectl (+):\n" + "\n".join(
        difflib.unified_diff(got_keys, want_keys, lineterm="", n=0))


_HANG = """\
#!/bin/sh
echo $$ > "{piddir}/$$.tmp" && mv "{piddir}/$$.tmp" "{piddir}/$$"
sleep 300
"""


def hanging_plugin_roots(top: Path, roots: int, piddir: Path) -> "dict[str, str]":
    """``roots`` kustomization roots ``r00``, ``r01``... under ``top``, each generating with a
    legacy exec plugin that writes its pid (its process group) into ``piddir`` and hangs; the
    environment for a ``kzgit`` child process that finds the plugin."""
    home = piddir.parent / "plugin-home"
    plugin = home / "plugin" / "someteam.example.com" / "v1" / "hang" / "Hang"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    piddir.mkdir(parents=True, exist_ok=True)
    plugin.write_text(_HANG.format(piddir=piddir))
    plugin.chmod(0o755)
    for i in range(roots):
        d = top / f"r{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "kustomization.yaml").write_text("generators:\n- hang.yaml\n")
        (d / "hang.yaml").write_text("apiVersion: someteam.example.com/v1\nkind: Hang\nmetadata:\n  name: h\n")
    # the plugin runs in kzgit's sandbox: the user's configuration allows the pid files, and the
    # repository's asks for them (it may only narrow what the user grants)
    grant_sandbox(home / ".config", allow_write=[str(piddir)])
    (top / ".kzgit.toml").write_text(f'[sandbox]\nallow-write = ["{piddir}"]\n')
    env = dict(os.environ, HOME=str(home), KUSTOMIZE_PLUGIN_HOME=str(home / "plugin"),
               XDG_CONFIG_HOME=str(home / ".config"))
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT), env.get("PYTHONPATH", "")])
    return env


#: A one-container Deployment "web" (nginx), as several hook and validate tests commit it.
WEB_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
"""

#: A container KRM function config (image example.com/fn:v1), for tests of container functions.
CONTAINER_FN_CONFIG = """\
apiVersion: example.com/v1
kind: Fn
metadata:
  name: f
  annotations:
    config.kubernetes.io/function: |
      container:
        image: example.com/fn:v1
"""

# A CustomResourceDefinition for kind Widget (example.com/v1) whose spec.size is a required
# integer of at least 1: custom resources validated against a CRD another root renders.
WIDGET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
"""


_GRANT_LOCK = threading.Lock()


def grant_sandbox(config_home: StrPath, **keys: Any) -> Path:
    """Add to the ``[sandbox]`` table of the user's ``<config_home>/kzgit/config.toml`` (lists
    are extended, other values replaced), as a user grants a plugin more; return the file.

    Tests run two tools side by side from threads (tests/plugins/test_helm.py ``compare``): the
    read-modify-write holds a lock and the file is replaced atomically, so a kzgit reading it
    never sees a grant lost or half written."""
    return _grant(config_home, "sandbox", keys)


def grant_user(config_home: StrPath, **keys: Any) -> Path:
    """Set top-level keys of the user's ``config.toml`` (``enable_exec=True`` writes
    ``enable-exec = true``: what a repository may turn on), keeping the rest of the file."""
    return _grant(config_home, "", keys)


def _grant(config_home: StrPath, table_name: str, keys: Dict[str, Any]) -> Path:
    import json
    import sys
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    path = Path(config_home) / "kzgit" / "config.toml"
    with _GRANT_LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = tomllib.loads(path.read_text()) if path.exists() else {}
        table = data.setdefault(table_name, {}) if table_name else data
        for key, value in keys.items():
            name = key.replace("_", "-")
            table[name] = [*table.get(name, []), *value] if isinstance(value, list) else value
        top = {k: v for k, v in data.items() if not isinstance(v, dict)}
        text = "".join(f"{k} = {json.dumps(v)}\n" for k, v in top.items())
        for name, sub in data.items():
            if isinstance(sub, dict):
                text += f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in sub.items())
        tmp = path.with_name(f".config.toml.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path
