"""``sha256`` and ``sha1`` without loading OpenSSL.

``hashlib`` loads OpenSSL's libcrypto when it is imported: 4-6 ms of start-up (``python -X
importtime``, Python 3.11 and 3.13; 12 M instructions under callgrind), which a small ``kzgit
build`` would pay for one ten-character name hash, and a build answered from the render cache
for its key.  CPython's own implementations of the two digests (``_sha256`` up to Python 3.11,
``_sha2`` from 3.12, and ``_sha1``) load in a twentieth of that and give the same digests; what
kzgit hashes this way is small (a generated ConfigMap, a build's input files and output).  They
are private modules, so they are imported by name for the running Python (a static import of a
module another Python lacks would read as a third-party dependency), and ``hashlib``'s are used
where they are missing.
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from hashlib import sha1, sha256
else:
    try:
        sha256 = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256").sha256
    except ImportError:  # pragma: no cover - a Python without the builtin module
        from hashlib import sha256
    try:
        sha1 = __import__("_sha1").sha1
    except ImportError:  # pragma: no cover
        from hashlib import sha1

__all__ = ["sha1", "sha256"]
