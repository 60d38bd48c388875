"""Patch engines, one module per kustomize filter.

* :mod:`kzgit.patch.smp` — strategic merge, kyaml ``merge2`` semantics
  (``api/filters/patchstrategicmerge``); merge keys from :mod:`kzgit.openapi`.
* :mod:`kzgit.patch.json6902` — JSON 6902 operations as evanphx json-patch
  v4.12.0 applies them (``api/filters/patchjson6902``).

Selecting targets and restoring names/kinds afterwards belong to the
``patches`` transformer, not here.
"""
