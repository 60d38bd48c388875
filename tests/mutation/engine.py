#!/usr/bin/env python3
"""Seeded mutation testing: odd and hostile variants of the golden fixtures, built by kzgit and
compared with ``kubectl kustomize``.

A mutant is one golden case (``tests/fixtures/<area>/<case>/``) with one mutation applied to
one of its files: a key dropped, duplicated or renamed, a value replaced by a number written
``017``, a list, a map, null, a 300-character or NUL-holding string, the file truncated,
re-encoded (UTF-16, BOM, CRLF), an empty or ``---``/``...`` document appended, a leading
``---`` or ``%YAML`` directive, a document written twice, an anchor and alias, a merge key, an
explicit tag, a block, quoted or flow scalar, a referenced file removed, ...  Mutant ``i`` of seed ``s`` depends on ``(s, i)`` and the fixture tree only.

Each mutant is judged:

* ``crash``: kzgit exited 3 or printed a Python traceback;
* ``hang``: kzgit took longer than the timeout;
* ``divergence``: kzgit and kubectl disagree (one fails, the other builds, or the outputs
  differ by a byte);
* ``ok`` otherwise.  When kubectl itself panics (a Go runtime error, exit 2) the mutant has no
  oracle and only the first two checks apply.

kubectl's outcomes for the seed the test suite uses are recorded in ``oracle.json`` (exit code
and the SHA-256 of stdout), so the test compares without kubectl and without its start-up
cost; mutants the recording does not know are built by kubectl when it is installed and
skipped otherwise.

Usage (larger local runs)::

    tests/mutation/engine.py --seed 7 --count 3000           # figures, divergences listed
    tests/mutation/engine.py --record                          # re-record oracle.json
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import yaml

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
FIXTURES = TESTS / "fixtures"
ORACLE = HERE / "oracle.json"
KNOWN = HERE / "KNOWN_DIVERGENCES"

#: The suite's seed and size: about 300 mutants build in well under a minute.
SUITE_SEED = 20261123
SUITE_COUNT = 300
KZGIT_TIMEOUT = 10.0
KUBECTL_TIMEOUT = 60.0
META_FILES = {"case.json", "expected.yaml", "expected.err"}
YAML_SUFFIXES = (".yaml", ".yml", ".json")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# Files are kept as {relative path: bytes}; a symlink is kept as {path: Link(target)}.


@dataclass(frozen=True)
class Link:
    target: str


Tree = Dict[str, Any]


@dataclass
class Mutant:
    seed: int
    index: int
    case: str                      # fixture case id, e.g. "patches/smp-path"
    target: str
    args: List[str]
    operator: str
    detail: str
    files: Tree = field(repr=False)

    @property
    def ident(self) -> str:
        return f"{self.seed}:{self.index}"

    def describe(self) -> str:
        return f"{self.ident} {self.case} {self.operator} {self.detail}"

    def digest(self) -> str:
        """SHA-256 over the mutant's inputs: the key of its recorded kubectl outcome."""
        h = hashlib.sha256()
        h.update(json.dumps([self.target, self.args]).encode())
        for path in sorted(self.files):
            v = self.files[path]
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            h.update(b"L" + v.target.encode("utf-8", "surrogateescape") if isinstance(v, Link) else b"F" + v)
            h.update(b"\0")
        return h.hexdigest()

    def write(self, dest: Path) -> None:
        for rel, v in self.files.items():
            p = dest / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(v, Link):
                os.symlink(v.target, p)
            else:
                p.write_bytes(v)


# --------------------------------------------------------------------------- the cases
def _read_tree(case_dir: Path) -> Tree:
    tree: Tree = {}
    for p in sorted(case_dir.rglob("*")):
        rel = p.relative_to(case_dir).as_posix()
        if rel in META_FILES:
            continue
        if p.is_symlink():
            tree[rel] = Link(os.readlink(p))
        elif p.is_file():
            tree[rel] = p.read_bytes()
    return tree


def usable_cases(root: Path = FIXTURES) -> List[Tuple[str, Dict[str, Any], Tree]]:
    """Golden cases that need neither the network, nor plugins, helm or exec functions."""
    out = []
    for cj in sorted(root.rglob("case.json")):
        case = json.loads(cj.read_text(encoding="utf-8"))
        if any(a for a in case.get("args", []) if "plugin" in str(a) or "helm" in str(a) or "exec" in str(a)):
            continue
        tree = _read_tree(cj.parent)
        text = b"".join(v for v in tree.values() if isinstance(v, bytes))
        if re.search(rb"https?://|git@|github\.com|helmCharts|\bexec\b|container:|starlark", text):
            continue
        out.append((cj.parent.relative_to(root).as_posix(), case, tree))
    return out


# --------------------------------------------------------------------------- mutations
# Values a scalar or collection may become: the shapes that broke kzgit before.
PALETTE: List[Any] = [
    0, 17, "017", True, "yes", None, "", [], {}, ["x"], {"a": "b"}, 1.5, "a b", "-x",
    "x" * 300, "a\0b", "../outside.yaml", "/abs/path.yaml", "${VAR}", "Deployment", "v1",
    "app=web", "app in (a", "2021-01-01", "0x1F", ".inf", "~", "[]", "- op: add", "=", "*",
]
SNIPPETS: List[str] = [
    "namePrefix: p-\n", "nameSuffix: -s\n", "namespace: ns\n", "namespace: [a]\n",
    "commonLabels:\n  app: x\n", "labels:\n- pairs:\n    a: b\n  includeSelectors: true\n",
    "commonAnnotations:\n  a: \"017\"\n", "images:\n- name: nginx\n  newTag: \"1.0\"\n",
    "replicas:\n- name: '*'\n  count: 3\n", "sortOptions:\n  order: fifo\n",
    "buildMetadata: [originAnnotations, transformerAnnotations]\n",
    "patches:\n- patch: |-\n    - op: add\n      path: /metadata/labels/m\n      value: x\n  target:\n    kind: .*\n",
    "patches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: x\n    $patch: delete\n",
    "patches:\n- target:\n    labelSelector: \"a in (b\"\n  patch: '[]'\n",
    "configMapGenerator:\n- name: g\n  literals: [a=b]\n",
    "secretGenerator:\n- name: s\n  literals: [a=b]\n  type: Opaque\n",
    "generatorOptions:\n  disableNameSuffixHash: true\n",
    "resources:\n- missing.yaml\n", "resources: []\n", "components: [missing]\n",
    "crds: [missing.json]\n", "openapi:\n  path: missing.json\n", "vars: []\n",
]


class _Skip(Exception):
    """This operator does not apply to the chosen file."""


def _docs(data: bytes) -> List[Any]:
    try:
        docs = list(yaml.safe_load_all(data.decode("utf-8")))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _Skip() from e
    if not docs or all(d is None for d in docs):
        raise _Skip()
    return docs


def _dump(docs: List[Any]) -> bytes:
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=4096).encode("utf-8")


def _nodes(v: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Tuple[Any, ...], Any]]:
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _nodes(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _nodes(x, path + (i,))


def _set(root: Any, path: Tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    cur = root
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return root


def _pick_node(rng: random.Random, docs: List[Any], want: Callable[[Tuple[Any, ...], Any], bool]
               ) -> Tuple[int, Tuple[Any, ...], Any]:
    choices = [(i, p, v) for i, d in enumerate(docs) for p, v in _nodes(d) if p and want(p, v)]
    if not choices:
        raise _Skip()
    return rng.choice(choices)


def _path_text(path: Tuple[Any, ...]) -> str:
    return "/".join(str(p) for p in path)


def op_set_value(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, _ = _pick_node(rng, docs, lambda p, v: True)
    new = rng.choice(PALETTE)
    docs[i] = _set(docs[i], path, json.loads(json.dumps(new)))
    return _dump(docs), f"{_path_text(path)} = {json.dumps(new)[:40]}"


def op_drop_key(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, _ = _pick_node(rng, docs, lambda p, v: isinstance(p[-1], str))
    parent = docs[i]
    for p in path[:-1]:
        parent = parent[p]
    del parent[path[-1]]
    return _dump(docs), f"drop {_path_text(path)}"


def op_wrap_list(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, v = _pick_node(rng, docs, lambda p, v: True)
    docs[i] = _set(docs[i], path, [v])
    return _dump(docs), f"[{_path_text(path)}]"


def op_unwrap_list(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, v = _pick_node(rng, docs, lambda p, v: isinstance(v, list) and bool(v))
    docs[i] = _set(docs[i], path, v[0])
    return _dump(docs), f"{_path_text(path)}[0]"


def op_repeat_item(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, v = _pick_node(rng, docs, lambda p, v: isinstance(v, list) and bool(v))
    j = rng.randrange(len(v))
    v.insert(j, json.loads(json.dumps(v[j])))
    return _dump(docs), f"{_path_text(path)}[{j}] twice"


def op_rename_key(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    docs = _docs(data)
    i, path, _ = _pick_node(rng, docs, lambda p, v: isinstance(p[-1], str) and len(p[-1]) > 1)
    parent = docs[i]
    for p in path[:-1]:
        parent = parent[p]
    old = path[-1]
    new = rng.choice([old.upper(), old[:-1], old + "s", "$patch", old.capitalize()])
    if new in parent:
        raise _Skip()
    items = [(new if k == old else k, x) for k, x in parent.items()]
    parent.clear()
    parent.update(items)
    return _dump(docs), f"{_path_text(path)} -> {new}"


def op_duplicate_line(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    lines = data.split(b"\n")
    keyed = [i for i, ln in enumerate(lines) if re.match(rb"^\s*[\w.$/-]+:( |$)", ln)]
    if not keyed:
        raise _Skip()
    i = rng.choice(keyed)
    lines.insert(i + 1, lines[i])
    return b"\n".join(lines), f"line {i + 1} twice"


def op_truncate(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    lines = data.split(b"\n")
    if len(lines) < 3:
        raise _Skip()
    n = rng.randrange(1, len(lines) - 1)
    return b"\n".join(lines[:n]) + b"\n", f"first {n} lines"


def op_append_doc(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    tail = rng.choice([b"---\n", b"...\n", b"---\n[]\n", b"---\n{}\n", b"--- # c\n", b"---\nnull\n",
                       b"---\n---\n", b"---\nkind: x\n"])
    sep = b"" if data.endswith(b"\n") else b"\n"
    return data + sep + tail, f"append {tail!r}"


def op_encoding(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Skip() from e
    how = rng.choice(["utf-16", "utf-16-be-bom", "utf-8-bom", "crlf", "latin-1", "tab-indent"])
    if how == "utf-16":
        return text.encode("utf-16"), how
    if how == "utf-16-be-bom":
        return b"\xfe\xff" + text.encode("utf-16-be"), how
    if how == "utf-8-bom":
        return b"\xef\xbb\xbf" + data, how
    if how == "crlf":
        return data.replace(b"\n", b"\r\n"), how
    if how == "latin-1":
        return data + b"# caf\xe9\n", how
    return re.sub(rb"\n  ", b"\n\t", data, count=1), how


def op_number_text(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    """A plain scalar's text replaced as written (so ``017`` stays ``017`` on disk)."""
    spots = [m for m in re.finditer(rb"(?m)(:[ ]+|^\s*- )([A-Za-z0-9][\w.-]*)\s*$", data)]
    if not spots:
        raise _Skip()
    m = rng.choice(spots)
    new = rng.choice([b"017", b"0x1F", b"1e3", b"2021-01-01", b"yes", b"~", b"null", b".inf", b"-0",
                      b"true", b"0o17", b"+1", b"1_000", b"'017'"])
    return data[:m.start(2)] + new + data[m.end(2):], f"{m.group(2)[:30]!r} -> {new.decode()}"


def op_delete_key_text(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    lines = data.split(b"\n")
    if len(lines) < 2:
        raise _Skip()
    i = rng.randrange(len(lines))
    del lines[i]
    return b"\n".join(lines), f"delete line {i + 1}"


def op_yaml_syntax(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    """What people write that a value-level edit never makes: an anchor and an alias, a merge
    key, an explicit tag, a flow mapping, a quoted or block scalar, a comment after a value."""
    lines = data.split(b"\n")
    keyed = [i for i, ln in enumerate(lines) if re.match(rb"^(\s*)([\w.$/-]+): (\S.*)$", ln)]
    if not keyed:
        raise _Skip()
    i = rng.choice(keyed)
    m = re.match(rb"^(\s*)([\w.$/-]+): (\S.*)$", lines[i])
    assert m is not None
    indent, key, value = m.group(1), m.group(2), m.group(3)
    how = rng.choice(["anchor-alias", "tag-str", "tag-int", "tag-binary", "block-literal",
                      "block-folded", "double-quoted", "single-quoted", "comment", "flow-map",
                      "merge-key"])
    if how == "anchor-alias":
        others = [j for j in keyed if j != i and lines[j].startswith(indent)]
        if not others or value.startswith((b"&", b"*", b"[", b"{", b"|", b">")):
            raise _Skip()
        j = rng.choice(others)
        mj = re.match(rb"^(\s*)([\w.$/-]+): ", lines[j])
        assert mj is not None
        lines[i] = indent + key + b": &a1 " + value
        lines[j] = mj.group(0) + b"*a1"
        if j < i:
            lines[i], lines[j] = lines[j], lines[i]
            raise _Skip()   # an alias before its anchor: not what a person writes
    elif how == "merge-key":
        lines.insert(i + 1, indent + b"<<: {" + key + b"x: y}")
    elif how.startswith("tag-"):
        lines[i] = indent + key + b": !!" + how[4:].encode() + b" " + value
    elif how.startswith("block-"):
        lines[i] = indent + key + (b": |" if how == "block-literal" else b": >") + b"\n" + indent + b"  " + value
    elif how == "double-quoted":
        lines[i] = indent + key + b': "' + value.replace(b'"', b'\\"') + b'"'
    elif how == "single-quoted":
        lines[i] = indent + key + b": '" + value.replace(b"'", b"''") + b"'"
    elif how == "comment":
        lines[i] = lines[i] + b"  # note"
    else:
        lines[i] = indent + key + b": {" + key + b": " + value + b"}"
    return b"\n".join(lines), f"line {i + 1}: {how}"


def op_documents(rng: random.Random, data: bytes) -> Tuple[bytes, str]:
    """Document markers where people put them: a leading ``---`` or directive, a document
    written twice, an empty document between two."""
    how = rng.choice(["lead-dashes", "directive", "repeat-first", "empty-between", "lead-comment"])
    if how == "lead-dashes":
        return b"---\n" + data, how
    if how == "directive":
        return rng.choice([b"%YAML 1.2\n---\n", b"%YAML 1.1\n---\n", b"%TAG ! tag:x,2024:\n---\n"]) + data, how
    if how == "lead-comment":
        return b"# generated\n\n" + data, how
    body = data if data.endswith(b"\n") else data + b"\n"
    first = re.split(rb"(?m)^---[^\n]*\n", body)[0] or body
    if how == "repeat-first":
        return body + b"---\n" + first, how
    return first + b"---\n---\n" + body[len(first):], how


FILE_OPERATORS: Dict[str, Callable[[random.Random, bytes], Tuple[bytes, str]]] = {
    "set-value": op_set_value, "drop-key": op_drop_key, "wrap-list": op_wrap_list,
    "unwrap-list": op_unwrap_list, "repeat-item": op_repeat_item, "rename-key": op_rename_key,
    "duplicate-line": op_duplicate_line, "truncate": op_truncate, "append-doc": op_append_doc,
    "encoding": op_encoding, "number-text": op_number_text, "delete-line": op_delete_key_text,
    "yaml-syntax": op_yaml_syntax, "documents": op_documents,
}


def _tree_operator(rng: random.Random, tree: Tree) -> Tuple[str, str]:
    """Operators over the tree: remove a file, add a kustomization field, link a file away."""
    kfiles = [p for p in tree if p.rsplit("/", 1)[-1] in KUSTOMIZATION_NAMES and isinstance(tree[p], bytes)]
    what = rng.choice(["remove-file", "add-field", "add-field", "symlink-out"])
    if what == "remove-file":
        files = [p for p in tree if isinstance(tree[p], bytes)]
        victim = rng.choice(files)
        del tree[victim]
        return what, victim
    if not kfiles:
        raise _Skip()
    k = rng.choice(kfiles)
    if what == "add-field":
        snippet = rng.choice(SNIPPETS)
        data = tree[k]
        tree[k] = data + (b"" if data.endswith(b"\n") else b"\n") + snippet.encode()
        return what, f"{k}: {snippet.splitlines()[0]}"
    # a file replaced by a symlink to a copy outside the case's directory: kustomize's load
    # restrictor refuses it, and the kustomization file itself is then "not found"
    others = [p for p in tree if isinstance(tree[p], bytes) and p.endswith(YAML_SUFFIXES + KUSTOMIZATION_NAMES)]
    if not others:
        raise _Skip()
    victim = rng.choice(others)
    outside = "../outside-" + victim.replace("/", "-")
    tree[outside] = tree[victim]
    tree[victim] = Link("../" * victim.count("/") + outside)
    return what, victim


def make_mutant(seed: int, index: int, cases: List[Tuple[str, Dict[str, Any], Tree]]) -> Mutant:
    rng = random.Random(f"{seed}:{index}")
    for _attempt in range(50):
        cid, case, tree0 = rng.choice(cases)
        tree = dict(tree0)
        try:
            if rng.random() < 0.2:
                operator, detail = _tree_operator(rng, tree)
            else:
                files = [p for p in tree if isinstance(tree[p], bytes) and p.endswith(YAML_SUFFIXES + KUSTOMIZATION_NAMES)]
                if not files:
                    continue
                kust = [p for p in files if p.rsplit("/", 1)[-1] in KUSTOMIZATION_NAMES]
                path = rng.choice(kust) if kust and rng.random() < 0.5 else rng.choice(files)
                operator = rng.choice(sorted(FILE_OPERATORS))
                tree[path], detail = FILE_OPERATORS[operator](rng, tree[path])
                detail = f"{path}: {detail}"
        except (_Skip, TypeError, ValueError, KeyError, IndexError, yaml.YAMLError):
            continue  # the operator does not apply to this file (or cannot print it back)
        return Mutant(seed, index, cid, str(case.get("target", ".")), [str(a) for a in case.get("args", [])],
                      operator, detail, tree)
    raise RuntimeError(f"no applicable mutation for {seed}:{index}")


def generate(seed: int, count: int, start: int = 0, root: Path = FIXTURES,
             only: Optional[List[str]] = None) -> List[Mutant]:
    """Mutants ``start`` .. ``start + count - 1`` of ``seed``; ``only``: the case ids to draw
    from (the recorded corpus, so that new fixtures do not change the suite's mutants)."""
    cases = usable_cases(root)
    if only is not None:
        wanted = set(only)
        cases = [c for c in cases if c[0] in wanted]
    return [make_mutant(seed, i, cases) for i in range(start, start + count)]


# --------------------------------------------------------------------------- running
@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str = ""
    seconds: float = 0.0

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.stdout.encode("utf-8", "surrogateescape")).hexdigest()


# The Kustomize release of the kubectl that records oracle.json (and of `--kubectl`'s default)
ORACLE_RELEASE = "5.5.0"


def _env(tmp: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KUSTOMIZE_", "KUBECONFIG"))}
    for name in ("home", "config", "cache"):
        (tmp / name).mkdir(exist_ok=True)
    env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "config"),
               XDG_CACHE_HOME=str(tmp / "cache"), LC_ALL="C.UTF-8",
               # kzgit renders as the release of the kubectl that recorded oracle.json (1.32)
               KZGIT_KUSTOMIZE_VERSION=ORACLE_RELEASE)
    return env


@contextlib.contextmanager
def _written(m: Mutant) -> Iterator[Tuple[Path, Path]]:
    """(a temporary directory, the mutant's files written in its ``case``), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="kzgit-mutant-") as t:
        tmp = Path(t)
        work = tmp / "case"
        work.mkdir()
        m.write(work)
        yield tmp, work


def run_kubectl(m: Mutant, kubectl: str = "kubectl", timeout: float = KUBECTL_TIMEOUT) -> Outcome:
    with _written(m) as (tmp, work):
        start = time.monotonic()
        try:
            p = subprocess.run([kubectl, "kustomize", m.target, *m.args], cwd=work, env=_env(tmp),
                               capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return Outcome(-1, "", "timeout", time.monotonic() - start)
        return Outcome(p.returncode, p.stdout.decode("utf-8", "surrogateescape"),
                       p.stderr.decode("utf-8", "replace"), time.monotonic() - start)


def _worker(timeout: float) -> int:
    """Build the mutants read from stdin in this process, one timer per build."""
    sys.path.insert(0, str(TESTS))
    from inprocess import run_kzgit   # the golden recorder's workers run kzgit the same way

    results = []
    for spec in json.load(sys.stdin):
        m = Mutant(spec["seed"], spec["index"], spec["case"], spec["target"], spec["args"], "", "",
                   {k: (Link(v[1]) if v[0] == "L" else base64.b64decode(v[1])) for k, v in spec["files"].items()})
        with _written(m) as (tmp, work):
            start = time.monotonic()
            rc, stdout, stderr = run_kzgit(["build", m.target, *m.args], work, _env(tmp), timeout)
            results.append({"returncode": rc, "stdout": stdout, "stderr": stderr,
                            "seconds": time.monotonic() - start})
    sys.stdout.write(json.dumps(results))
    return 0


def run_kzgit(mutants: List[Mutant], timeout: float = KZGIT_TIMEOUT) -> List[Outcome]:
    """Build every mutant with kzgit in one fresh process (imports paid once)."""
    if not mutants:
        return []
    specs = [{"seed": m.seed, "index": m.index, "case": m.case, "target": m.target, "args": m.args,
              "files": {k: (["L", v.target] if isinstance(v, Link) else ["F", base64.b64encode(v).decode()])
                        for k, v in m.files.items()}} for m in mutants]
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", "--timeout", str(timeout)],
                          input=json.dumps(specs).encode(), capture_output=True, check=False,
                          timeout=timeout * len(mutants) + 120)
    if proc.returncode != 0:
        raise RuntimeError(f"kzgit mutation worker failed:\n{proc.stderr.decode('utf-8', 'replace')}")
    return [Outcome(r["returncode"], r["stdout"], r["stderr"], r["seconds"]) for r in json.loads(proc.stdout)]


# --------------------------------------------------------------------------- verdicts
def kubectl_panicked(k: Outcome) -> bool:
    return k.returncode == 2 and ("panic:" in k.stderr or "runtime error" in k.stderr) or k.returncode == -1


def verdict(z: Outcome, k_rc: Optional[int], k_digest: Optional[str]) -> Tuple[str, str]:
    """(kind, why): kind is ok, crash, hang, divergence or no-oracle."""
    if z.returncode == -1:
        return "hang", f"kzgit took more than {KZGIT_TIMEOUT:.0f} s"
    if z.returncode == 3 or "Traceback (most recent call last)" in z.stderr:
        last = [ln for ln in z.stderr.strip().splitlines() if ln.strip()]
        return "crash", (last[-1] if "Traceback" in z.stderr else (last or [""])[0])[:200]
    if k_rc is None:
        return "no-oracle", "kubectl panicked, timed out or is not installed"
    if (k_rc == 0) != (z.returncode == 0):
        if k_rc == 0:
            first = (z.stderr.strip().splitlines() or [""])[0]
            return "divergence", f"kubectl builds, kzgit fails: {first[:200]}"
        return "divergence", "kubectl fails, kzgit builds"
    if k_rc == 0 and z.digest != k_digest:
        return "divergence", "outputs differ"
    return "ok", ""


def load_oracle(path: Path = ORACLE) -> Dict[str, Any]:
    """``{"seed", "count", "cases": [case ids drawn from], "outcomes": {digest: [rc, sha256]}}``."""
    if not path.exists():
        return {"cases": None, "outcomes": {}}
    data: Dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_known(path: Path = KNOWN) -> Dict[str, str]:
    """``seed:index  # reason`` lines: divergences owned elsewhere, not failures of this test."""
    known: Dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            ident, _, reason = line.partition("#")
            if ident.strip() and not line.lstrip().startswith("#"):
                known[ident.strip()] = reason.strip()
    return known


@dataclass
class Report:
    rows: List[Tuple[Mutant, str, str]]
    seconds: float

    def count(self, kind: str) -> int:
        return sum(1 for _, k, _ in self.rows if k == kind)

    def summary(self) -> str:
        kinds = ["ok", "crash", "hang", "divergence", "known", "no-oracle"]
        return f"{len(self.rows)} mutants in {self.seconds:.1f} s: " + ", ".join(
            f"{self.count(k)} {k}" for k in kinds)

    def problems(self) -> List[str]:
        return [f"{k}: {m.describe()}: {why}" for m, k, why in self.rows if k in ("crash", "hang", "divergence")]


def evaluate(mutants: List[Mutant], kubectl: Optional[str], oracle: Dict[str, List[Any]],
             jobs: int = 2, record: Optional[Dict[str, List[Any]]] = None) -> Report:
    """Build the mutants with kzgit (and kubectl where the oracle does not know them)."""
    start = time.monotonic()
    chunks = [mutants[i::jobs] for i in range(jobs)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs * 2) as pool:
        zs = pool.map(run_kzgit, chunks)
        need = [m for m in mutants if m.digest() not in oracle or record is not None]
        ks = dict(zip((m.digest() for m in need), pool.map(run_kubectl, need))) if kubectl else {}
        z_by: Dict[str, Outcome] = {}
        for chunk, outs in zip(chunks, zs):
            z_by.update({m.ident: o for m, o in zip(chunk, outs)})
    known = read_known()
    rows = []
    for m in mutants:
        d = m.digest()
        k = ks.get(d)
        if k is not None:
            rec = None if kubectl_panicked(k) else [k.returncode, k.digest]
            if record is not None:
                record[d] = rec if rec is not None else [None, None]
        else:
            rec = oracle.get(d)
        k_rc, k_digest = (rec[0], rec[1]) if rec else (None, None)
        kind, why = verdict(z_by[m.ident], k_rc, k_digest)
        if kind == "divergence" and m.ident in known:
            kind = "known"
        if kind == "divergence" and k is not None and why == "outputs differ":
            import difflib
            diff = [ln for ln in difflib.unified_diff(k.stdout.splitlines(), z_by[m.ident].stdout.splitlines(),
                                                      "kubectl", "kzgit", lineterm="", n=0)][2:6]
            why += ": " + " | ".join(diff)[:300]
        rows.append((m, kind, why))
    return Report(rows, time.monotonic() - start)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SUITE_SEED)
    ap.add_argument("--count", type=int, default=SUITE_COUNT)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kubectl", default=shutil.which("kubectl"))
    ap.add_argument("--record", action="store_true", help="re-record oracle.json for the suite's seed")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=KZGIT_TIMEOUT, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return _worker(args.timeout)
    if args.record and not args.kubectl:
        ap.error("--record needs kubectl")
    oracle = load_oracle()
    suite = args.seed == SUITE_SEED and not args.record
    mutants = generate(args.seed, args.count, args.start, only=oracle.get("cases") if suite else None)
    record: Optional[Dict[str, List[Any]]] = {} if args.record else None
    report = evaluate(mutants, args.kubectl, {} if args.record else oracle["outcomes"], args.jobs, record)
    for line in report.problems():
        print(line)
    print(report.summary())
    if record is not None:
        data = {"seed": args.seed, "count": args.count, "cases": [c[0] for c in usable_cases()],
                "outcomes": record}
        ORACLE.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(record)} kubectl outcomes in {ORACLE}")
    return 1 if report.problems() else 0


if __name__ == "__main__":
    sys.path.insert(0, str(TESTS.parent))
    sys.exit(main())
