"""Placing a finding: the line of a field in a resource file or in the patch that set it."""
from __future__ import annotations

from typing import Dict, Optional

from kzgit.validate.locate import Locator


def locator(files: Dict[str, str]) -> Locator:
    def read(rel: str) -> Optional[bytes]:
        return files[rel].encode() if rel in files else None
    return Locator("/repo", read)


DOCS = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata:\n  k: v\n" for i in range(50))


def test_line_of_the_field_in_the_right_document() -> None:
    loc = locator({"all.yaml": DOCS})
    # cm7 starts after 7 documents of 7 lines each; its "k" is the 7th line of its document
    assert loc.in_resource_file("all.yaml", "ConfigMap", ("cm7",), "/data/k") == ("all.yaml", 7 * 7 + 7)
    # a missing field points at the deepest part present
    assert loc.in_resource_file("all.yaml", "ConfigMap", ("cm7",), "/data/nope") == ("all.yaml", 7 * 7 + 6)


def test_only_documents_mentioning_the_resource_are_parsed() -> None:
    loc = locator({"all.yaml": DOCS})
    loc.in_resource_file("all.yaml", "ConfigMap", ("cm42",), "/data/k")
    parsed = [p for p in loc.parts("all.yaml") if p._parsed]
    assert len(parsed) == 1 and "cm42" in parsed[0].text


def test_patches_naming_the_resource_win_and_json6902_ops_are_found() -> None:
    smp = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\nspec:\n  replica: 1\n"
    named = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replica: 2\n"
    ops = "- op: test\n  path: /spec/replica\n  value: 1\n- op: add\n  path: /spec/replica\n  value: 3\n"
    loc = locator({"a.yaml": smp, "b.yaml": named, "ops.yaml": ops})
    assert loc.in_patches(["a.yaml", "b.yaml"], "Deployment", ("web",), "/spec/replica") == ("b.yaml", 6)
    assert loc.in_patches(["a.yaml"], "Deployment", ("web",), "/spec/replica") == ("a.yaml", 6)
    assert loc.in_patches(["a.yaml"], "Deployment", ("web",), "/spec/replica", named_only=True) == (None, None)
    assert loc.in_patches(["ops.yaml"], "Deployment", ("web",), "/spec/replica") == ("ops.yaml", 5)
