"""patches / patchesStrategicMerge / patchesJson6902 (placeholder until the patch engine lands)."""
from __future__ import annotations

from typing import Any, Dict, List

from kzgit.errors import UnsupportedError
from kzgit.loader import Loader
from kzgit.resource import ResMap


def patch_strategic_merge(m: ResMap, entries: List[str], loader: Loader, kfile: str) -> None:
    raise UnsupportedError(f"{kfile}: field 'patchesStrategicMerge' is not supported yet by kzgit")


def patch(m: ResMap, entry: Dict[str, Any], loader: Loader, kfile: str) -> None:
    raise UnsupportedError(f"{kfile}: field 'patches' is not supported yet by kzgit")


def patch_json6902(m: ResMap, entry: Dict[str, Any], loader: Loader, kfile: str) -> None:
    raise UnsupportedError(f"{kfile}: field 'patchesJson6902' is not supported yet by kzgit")
