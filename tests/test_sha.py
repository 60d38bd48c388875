"""kzgit.sha: the digests hashlib gives, without hashlib's import."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from kzgit.sha import sha1, sha256


@pytest.mark.parametrize("data", [b"", b"abc", b"kind: ConfigMap\n" * 1000, bytes(range(256)) * 300])
def test_digests_are_hashlib_s(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
    h = sha256(data[:7])
    h.update(data[7:])
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()


def test_importing_it_does_not_load_hashlib() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, kzgit.sha; print('hashlib' in sys.modules)"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
