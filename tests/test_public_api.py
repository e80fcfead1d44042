"""Each package an agent, metric or model author works with has a small public API: the
names in its ``__all__``, imported in its ``__init__`` from the modules that define them.
Every other module of the package says so in the first line of its docstring
("Internal."), so a reader knows which imports are meant to last."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "jubensha"
PUBLIC_PACKAGES = ["engine", "llm", "eval", "agents", "runlog"]
MARK = "Internal."


def public_imports(package: Path) -> list[ast.ImportFrom]:
    """The imports of the package's public names in its ``__init__`` (a package that loads
    them on first use imports them under ``if TYPE_CHECKING:``, see ``jubensha.lazy``)."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    return [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module and node.module.startswith("jubensha.")
            and node.module != "jubensha.lazy"]


def public_modules(package: Path) -> set[str]:
    """The modules the package's ``__init__`` imports its public names from."""
    return {node.module for node in public_imports(package) if node.module}


def modules(package: Path) -> dict[str, Path]:
    """Every module under ``package`` (its own ``__init__`` left out) by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if path == package / "__init__.py":
            continue
        parts = path.with_suffix("").relative_to(PACKAGE.parent).parts
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.splitlines()[0] if doc else ""


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_the_package_exports_what_it_imports_and_nothing_else(name: str) -> None:
    package = importlib.import_module(f"jubensha.{name}")
    imported = [alias.name for node in public_imports(PACKAGE / name) for alias in node.names]
    assert sorted(package.__all__) == sorted(imported)
    assert len(set(package.__all__)) == len(package.__all__)
    for public in package.__all__:
        assert getattr(package, public) is not None


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_module_is_public_or_marked_internal(name: str) -> None:
    package = PACKAGE / name
    public = public_modules(package)
    unmarked = [module for module, path in modules(package).items()
                if module not in public and first_line(path) != MARK]
    assert unmarked == [], (f"export a name of these from jubensha.{name} or begin their "
                            f"docstring with a line {MARK!r}")
    marked = [module for module, path in modules(package).items()
              if module in public and first_line(path) == MARK]
    assert marked == [], "these modules export public names: drop their 'Internal.' line"


def test_an_agent_author_imports_from_two_packages() -> None:
    """What the built-in agents use of the engine's and the model layer's public names
    comes from the packages, not from the modules behind them."""
    exported = {f"jubensha.{name}": set(importlib.import_module(f"jubensha.{name}").__all__)
                for name in ("engine", "llm")}
    behind = []
    for path in sorted((PACKAGE / "agents").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            home = ".".join(node.module.split(".")[:2])
            if home in exported and node.module != home and all(
                    alias.name in exported[home] for alias in node.names):
                behind.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.module}")
    assert behind == []
