"""images: ImageTagTransformer (api/internal/builtins/ImageTagTransformer.go, api/filters/imagetag).

First a "legacy" pass over every ``containers``/``initContainers`` list anywhere
in the object (CRDs excepted), then the field-spec pass.  The image name is
used as an unescaped regular expression, as kustomize does
(api/internal/image/image.go IsImageMatched).
"""
from __future__ import annotations

import re

from kzgit.errors import BuildError
from kzgit.resource import ResMap
from kzgit.resource.fieldspec import apply_fieldspec
from kzgit.builtins.common import fieldspecs_from_config
from kzgit.yamlio.tree import node_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Tuple


def split_image(image: str) -> Tuple[str, str, str]:
    """image.Split: (name, tag, digest); the first '/' protects a registry port."""
    search = image
    slash = image.find("/")
    if slash > 0:
        search = image[slash:]
    else:
        slash = 0
    i_d = search.find("@")
    i_c = search.find(":")
    if i_c < 0 and i_d < 0:
        return image, "", ""
    if i_d >= 0 and (i_d < i_c or i_c < 0):
        i_d += slash
        return image[:i_d], "", image[i_d + 1:]
    if i_d >= 0 and i_c >= 0:
        i_d += slash
        i_c += slash
        return image[:i_c], image[i_c + 1:i_d], image[i_d + 1:]
    i_c += slash
    return image[:i_c], image[i_c + 1:], ""


class _Updater:
    def __init__(self, image: Dict[str, Any], where: str) -> None:
        self.image = image
        name = image.get("name") or ""
        try:
            self.pattern = re.compile("^" + name + r"(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$")
        except re.error as e:
            raise BuildError(f"{where}: image name '{name}' is not a valid pattern: {e}") from None

    def __call__(self, value: Any) -> Any:
        if isinstance(value, (dict, list)):
            raise BuildError("wrong node kind: expected ScalarNode")
        if not isinstance(value, str) or not self.pattern.match(value):
            return value
        img = self.image
        name, tag, digest = split_image(value)
        if img.get("newName"):
            name = img["newName"]
        new_tag, new_digest, suffix = img.get("newTag") or "", img.get("digest") or "", img.get("tagSuffix") or ""
        if new_tag and new_digest:
            tag, digest = new_tag, new_digest
        elif new_tag:
            tag, digest = new_tag, ""
        elif new_digest:
            tag, digest = "", new_digest
        elif suffix:
            tag, digest = tag + suffix, ""
        if tag:
            name += ":" + tag
        if digest:
            name += "@" + digest
        return name


def _legacy_walk(node: Any, upd: _Updater) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            _legacy_walk(v, upd)
            if k in ("containers", "initContainers") and isinstance(v, list):
                for c in v:
                    if c is None:
                        continue
                    if not isinstance(c, dict):
                        # legacy.go checkImageTagsFn: yaml.Get("image") on each element,
                        # which refuses anything but a mapping (or null)
                        raise BuildError(f"wrong node kind: expected MappingNode but got {node_kind(c)}")
                    if "image" in c:
                        c["image"] = upd(c["image"])
    elif isinstance(node, list):
        for v in node:
            _legacy_walk(v, upd)


def transform(resmap: ResMap, config: Dict[str, Any], where: str = "ImageTagTransformer") -> None:
    image = config.get("imageTag") or {}
    if not isinstance(image, dict):
        raise BuildError(f"{where}: imageTag must be a mapping")
    upd = _Updater(image, where)
    specs = fieldspecs_from_config(config, where=where)
    for r in resmap.resources():
        if r.kind == "CustomResourceDefinition":
            continue
        _legacy_walk(r.obj, upd)
        for fs in specs:
            apply_fieldspec(r.obj, fs, upd, None, r.cur_id)
