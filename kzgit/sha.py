"""``sha256`` and ``sha1`` without loading OpenSSL.

``hashlib`` loads OpenSSL's libcrypto when it is imported: about 3 ms of CPU (12 M
instructions), which a small ``kzgit build`` would pay for one ten-character name hash, and a
build answered from the render cache for its key.  CPython's own implementations of the two
digests (``_sha256`` and ``_sha1``; ``_sha2`` from Python 3.12) load in a tenth of that and give
the same digests; what kzgit hashes this way is small (a generated ConfigMap, a build's input
files and output).  Where they are missing (another Python), ``hashlib``'s are used.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from hashlib import sha1, sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - Python 3.12+, or no builtin module
        try:  # by name: _sha2 is Python 3.12's, unknown to older sys.stdlib_module_names
            sha256 = __import__("_sha2").sha256
        except ImportError:
            from hashlib import sha256
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover
        from hashlib import sha1

__all__ = ["sha1", "sha256"]
