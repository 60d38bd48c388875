"""The plain git hook scripts (``hooks/pre-commit``, ``hooks/pre-push`` in the repository).

One source for both the files shipped at the top of the repository and what
``kzgit install-hooks`` writes; a test keeps them identical.  ``KZGIT_PYTHON``
is filled in on install (as pre-commit's ``INSTALL_PYTHON``) so the hook finds
the kzgit it was installed with even outside its virtualenv.
"""
from __future__ import annotations

import shlex

HOOK_TYPES = ("pre-commit", "pre-push")
# Marks a script as ours, so re-installing replaces it instead of chaining it.
MARKER = "# kzgit-hook-script: v1"

_HEAD = """#!/bin/sh
# kzgit plain git {hook_type} hook: {what}.
{marker}
# Installed by `kzgit install-hooks`; a hook that was here before is kept as
# {hook_type}.legacy and runs first.  Skip once with `git {skip} --no-verify`.
KZGIT_PYTHON={python}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -n "$KZGIT_PYTHON" ] && [ -x "$KZGIT_PYTHON" ]; then
    kzgit() {{ "$KZGIT_PYTHON" -m kzgit "$@"; }}
elif ! command -v kzgit >/dev/null 2>&1; then
    echo 'kzgit: `kzgit` not found. Did you forget to activate your virtualenv?' >&2
    exit 1
fi
status=0
"""

_PRE_COMMIT = """if [ -x "$HERE/pre-commit.legacy" ]; then
    "$HERE/pre-commit.legacy" "$@" || status=$?
fi
kzgit hook all --staged || {{ [ "$status" -ne 0 ] || status=1; }}
exit "$status"
"""

_PRE_PUSH = """input=$(cat)
if [ -x "$HERE/pre-push.legacy" ]; then
    printf '%s\\n' "$input" | "$HERE/pre-push.legacy" "$@" || status=$?
fi
zero=0000000000000000000000000000000000000000
while read -r local_ref local_sha remote_ref remote_sha; do
    [ -n "$local_sha" ] && [ "$local_sha" != "$zero" ] || continue
    kzgit hook all --rev "$local_sha" --from "$remote_sha" </dev/null || {{ [ "$status" -ne 0 ] || status=1; }}
done <<KZGIT_PUSHED_REFS
$input
KZGIT_PUSHED_REFS
exit "$status"
"""


def script(hook_type: str, python: str = "") -> str:
    """The text of the ``hook_type`` script; ``python`` is the interpreter kzgit runs under."""
    if hook_type == "pre-commit":
        body, what, skip = _PRE_COMMIT, "checks the staged content", "commit"
    elif hook_type == "pre-push":
        body, what, skip = _PRE_PUSH, "checks the commits being pushed", "push"
    else:
        raise ValueError(hook_type)
    head = _HEAD.format(hook_type=hook_type, what=what, marker=MARKER,
                        python=shlex.quote(python), skip=skip)
    return head + body.format()
