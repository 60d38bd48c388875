"""YAML in and out with kustomize's rules (placeholder; see the yamlio helper brief)."""
from __future__ import annotations

from typing import Any, List, Union

import yaml

from kzgit.errors import YamlError


def load_documents(data: Union[bytes, str], source: str = "") -> List[Any]:
    try:
        return [d for d in yaml.load_all(data, Loader=yaml.CSafeLoader) if d is not None]
    except yaml.YAMLError as e:
        raise YamlError(f"{source}: {e}") from None


def load_yaml11(data: Union[bytes, str], source: str = "") -> Any:
    try:
        return yaml.load(data, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as e:
        raise YamlError(f"{source}: {e}") from None


def dump_documents(objs: List[Any]) -> str:
    return "---\n".join(yaml.dump(o, Dumper=yaml.CSafeDumper, default_flow_style=False) for o in objs)
