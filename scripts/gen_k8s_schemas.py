#!/usr/bin/env python3
"""Regenerate ``kzgit/validate/k8s/``: the Kubernetes schemas ``kzgit validate`` ships.

The source is the ``kubernetes-validate`` wheel from PyPI (Apache-2.0), which bundles, per
Kubernetes minor release, the JSON schemas generated from that release's OpenAPI document:
``kubernetes_validate/kubernetes-json-schema/vX.Y.0-local[-strict]/_definitions.json``.
kzgit needs only that one file per release, and not its descriptions:

* ``vX.Y.json.gz``: the release's ``_definitions.json`` with every ``description`` string
  removed, keys sorted, compact, gzip (level 9, no timestamp): about 25 KB per release instead
  of the package's 4-5 MB directory;
* the strict form is not shipped: it is the normal form with ``additionalProperties: false``
  on every object that declares ``properties`` and no ``additionalProperties``
  (:func:`kzgit.validate.kubernetes.strict_form`); this script checks that, release by release,
  against the package's ``-strict`` file and stops if they differ;
* ``PROVENANCE.json``: the wheel (name and sha256), and per release the sha256 of the source
  file and of the generated one (``tests/validate/test_kubernetes_data.py`` checks the latter).

Usage: ``python scripts/gen_k8s_schemas.py [VERSION]`` (default: the version below; needs the
network for one ``pip download``).  Changing ``VERSION`` is how the bundled releases change;
``kzgit.validate.kubernetes.DEFAULT_VERSION`` (the default ``kubernetes-version``) is changed
deliberately, in a kzgit release, never by this script.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict

PACKAGE = "kubernetes-validate"
VERSION = "1.37.0"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "kzgit" / "validate" / "k8s"
_MEMBER = re.compile(r"kubernetes_validate/kubernetes-json-schema/v(\d+)\.(\d+)\.0-local(-strict)?/_definitions\.json")


def compact(doc: Any) -> bytes:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return gzip.compress(text, compresslevel=9, mtime=0)


def main(argv: list) -> int:
    version = argv[0] if argv else VERSION
    sys.path.insert(0, str(ROOT))
    from kzgit.validate.kubernetes import strict_form
    from kzgit.validate.kubernetes import without_descriptions as strip
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        f"{PACKAGE}=={version}", "-d", tmp], check=True, timeout=600)
        wheel = next(Path(tmp).glob("*.whl"))
        wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        files: Dict[str, Dict[str, bytes]] = {}
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                m = _MEMBER.fullmatch(name)
                if m:
                    files.setdefault(f"{m.group(1)}.{m.group(2)}", {})[m.group(3) or ""] = zf.read(name)
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("v*.json.gz"):
        old.unlink()
    releases = {}
    for release in sorted(files, key=lambda r: tuple(int(p) for p in r.split("."))):
        raw = files[release][""]
        normal = json.loads(raw)
        strict = json.loads(files[release]["-strict"])
        if strict_form(strip(normal)) != strip(strict):
            raise SystemExit(f"{release}: the strict schemas are not the normal ones closed; "
                             "kzgit.validate.kubernetes.strict_form needs a look")
        data = compact(strip(normal))
        name = f"v{release}.json.gz"
        (OUT / name).write_bytes(data)
        releases[release] = {
            "file": name,
            "source": f"kubernetes_validate/kubernetes-json-schema/v{release}.0-local/_definitions.json",
            "source_sha256": hashlib.sha256(raw).hexdigest(),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    provenance = {"package": PACKAGE, "version": version, "wheel": wheel.name, "wheel_sha256": wheel_sha,
                  "licence": "Apache-2.0", "generator": "scripts/gen_k8s_schemas.py", "releases": releases}
    (OUT / "PROVENANCE.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(releases)} releases from {wheel.name} into {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
