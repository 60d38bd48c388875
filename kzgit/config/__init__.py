"""kzgit's configuration.

- :mod:`kzgit.config.repository`: a repository's (``.kzgit.toml``, else ``[tool.kzgit]`` of
  ``pyproject.toml``): :class:`Config`, its sections, :func:`load_config`;
- :mod:`kzgit.config.user`: the user's own file (``~/.config/kzgit/config.toml``) and the sandbox
  grants it bounds (:meth:`SandboxSettings.granted`);
- :mod:`kzgit.config.trust`: the user's approvals of a repository's settings (``kzgit trust``);
- :mod:`kzgit.config.tables`: the files, TOML parsing, and every key with its check and meaning
  (``docs/reference/configuration.md`` is generated from these tables);
- :mod:`kzgit.config.globs`: the path globs of ``roots``, ``exclude`` and ``localized``.

A repository's settings may narrow what kzgit does, never widen it: what widens is the user's
(their file, their flags, their approval). This package re-exports the modules' public names.
"""
from __future__ import annotations

from kzgit.config.tables import (
    DEFAULT_REF_PATTERNS, ENGINES, KZGIT_TOML, MISSING_SCHEMAS, PYPROJECT, SANDBOX_MODES,
    settings_table, tool_table,
)
from kzgit.config.trust import TRUST_KEYS, approvals, approvals_path, approve, trust_digest
from kzgit.config.user import (
    GRANT_KEYS, SandboxSettings, USER_CONFIG, UserConfig, user_config, user_config_path,
)
from kzgit.config.repository import (
    Config, GitopsPolicy, LintTable, RefPolicy, ValidatePolicy, config_from_reader,
    load_config, parse_config,
)
from kzgit.config.globs import glob_match, glob_names, unmatched_globs

__all__ = [
    "DEFAULT_REF_PATTERNS", "ENGINES", "KZGIT_TOML", "MISSING_SCHEMAS", "PYPROJECT",
    "SANDBOX_MODES", "settings_table", "tool_table", "TRUST_KEYS", "approvals",
    "approvals_path", "approve", "trust_digest", "GRANT_KEYS", "SandboxSettings",
    "USER_CONFIG", "UserConfig", "user_config", "user_config_path", "Config", "GitopsPolicy",
    "LintTable", "RefPolicy", "ValidatePolicy", "config_from_reader", "load_config",
    "parse_config", "glob_match", "glob_names", "unmatched_globs",
]
