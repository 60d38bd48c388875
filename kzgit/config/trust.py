"""Approvals (``kzgit trust``): the user's record that a repository's widening settings
(:data:`TRUST_KEYS`: engine, engine-path, helm-command, the plugin switches, ``[sandbox]``) may be
taken exactly as written. Stored as the SHA-256 of those settings per repository top in
``$XDG_DATA_HOME/kzgit/trusted.json``; any change voids it, as ``direnv allow`` does.

The trust model: a repository's configuration may narrow what kzgit does, never widen it; what
widens (a sandbox grant, a program to run) comes from the user (:mod:`kzgit.config.user`) or from
this approval. It lives in the configuration package, not beside ``kzgit/sandbox/``, because the
configuration reads it while parsing and sits below the sandbox in the layers
(``docs/layout.md``)."""
from __future__ import annotations

import os

from kzgit.config.tables import own_table
from kzgit.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional, Tuple


#: The keys whose values decide what runs with the user's rights (the table ``[sandbox]`` whole).
TRUST_KEYS = ("engine", "engine-path", "helm-command", "enable-alpha-plugins", "enable-exec",
              "enable-helm", "load-restrictor", "sandbox")


def trust_digest(table: Dict[str, Any]) -> str:
    """The SHA-256 of a repository's settings that an approval covers (:data:`TRUST_KEYS`):
    any change to one of them invalidates the approval, as a changed ``.envrc`` does
    ``direnv allow``'s."""
    import hashlib   # start-up: only an approval or a refusal needs it
    import json   # start-up: only an approval or a refusal needs it
    wanted = {k: table[k] for k in TRUST_KEYS if k in table}
    return hashlib.sha256(json.dumps(wanted, sort_keys=True, default=str).encode()).hexdigest()


def approvals_path() -> str:
    """``$XDG_DATA_HOME/kzgit/trusted.json`` (``~/.local/share/kzgit/trusted.json``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "kzgit", "trusted.json")


def approvals() -> Dict[str, str]:
    """Recorded approvals: repository top -> :func:`trust_digest` of the settings approved."""
    import json   # start-up: only an approval or a refusal needs it
    try:
        with open(approvals_path(), encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise UsageError(f"{approvals_path()}: cannot read: {e}") from None
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(data, dict) else {}


def approve(repo_root: str, revoke: bool = False) -> Tuple[str, Dict[str, Any]]:
    """Record (or, with ``revoke``, forget) the approval of the settings of the repository at
    ``repo_root`` as they are now; return the configuration file and the settings covered."""
    import json   # start-up: only an approval or a refusal needs it
    import tempfile   # start-up: only an approval or a refusal needs it
    top = os.path.realpath(repo_root)
    source, table = own_table(top)
    wanted = {k: table[k] for k in TRUST_KEYS if k in table}
    records = approvals()
    if revoke:
        records.pop(top, None)
    else:
        records[top] = trust_digest(table)
    path = approvals_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".trusted-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return source, wanted


def approve_tip(trust_key: Optional[str]) -> str:
    import shlex   # start-up: only an approval or a refusal needs it
    return (f", or approve this repository's settings as they are with "
            f"'kzgit trust {shlex.quote(trust_key)}'") if trust_key else ""
