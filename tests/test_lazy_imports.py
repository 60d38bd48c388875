"""An import inside a function says why it is there (start-up time, a slow or optional module,
an import cycle), on its line or in a comment just above its block of imports: whoever moves it
to the top of its module must know what that would cost (``tests/cli/test_cli_startup.py``
measures the start-up side)."""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List

from helpers import PROJECT

PACKAGE = PROJECT / "kzgit"


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _guards_import_error(node: ast.AST) -> bool:
    return isinstance(node, ast.Try) and any(
        isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
        for h in node.handlers)


def _function_imports(tree: ast.Module) -> Iterator[ast.stmt]:
    parents: Dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        in_function, exempt = False, False
        p = parents.get(node)
        while p is not None:
            in_function = in_function or isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))
            exempt = exempt or _is_type_checking(p) or _guards_import_error(p)
            p = parents.get(p)
        if in_function and not exempt:
            yield node


def _explained(lines: List[str], lineno: int) -> bool:
    """A comment on the import's line, or above the block of imports it belongs to."""
    i = lineno - 1
    while i >= 0:
        text = lines[i]
        if "#" in text:
            return True
        stripped = text.strip()
        if not stripped.startswith(("import ", "from ")) and i != lineno - 1:
            return False
        i -= 1
    return False


def test_function_level_imports_say_why() -> None:
    unexplained = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in _function_imports(ast.parse(source)):
            if not _explained(lines, node.lineno):
                unexplained.append(f"{path.relative_to(PROJECT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not unexplained, "imports inside functions without a reason:\n" + "\n".join(unexplained)
