"""The engine hands front ends plain values: no terminal library is imported under it."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).parents[2] / "src" / "jubensha" / "engine"
FRONT_END_LIBRARIES = {"rich", "typer"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_engine_module_imports_a_terminal_library() -> None:
    found = {path.name: sorted(_imported_roots(path) & FRONT_END_LIBRARIES)
             for path in sorted(ENGINE.rglob("*.py"))}
    assert {name: libs for name, libs in found.items() if libs} == {}
