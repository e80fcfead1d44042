"""Every import points down the layers of docs/architecture.md: no module imports one above
it, and the modules of each package import each other top-down, without a circle.

The layers, lowest first. A package may import its own layer and those below; the run log
stands below its three readers (eval, runs, web), and the agent interface with the engine
that calls it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "jubensha"

LAYER = {
    "prompts": 0, "safeload": 0, "outdir": 0, "userdirs": 0, "terminal": 0, "registry": 0,
    "signing": 0, "lazy": 0, "extras": 0, "segmenter": 0, "commandline": 0,
    "llm": 1, "jobs": 1,
    "scripts": 2,
    "engine": 3, "memory": 3,
    "agents": 4,
    "runlog": 5,
    "eval": 6,
    "runs": 7,
    "web": 8,
    "cli": 9,
}


def _unit(parts: list[str]) -> str | None:
    """The layer unit of a dotted module name under ``jubensha`` (package or top module)."""
    if len(parts) < 2 or parts[0] != "jubensha":
        return None
    return parts[1]


def upward_imports(package: Path) -> list[str]:
    """Each import from a module to a module of a higher layer, as 'file:line: a -> b'."""
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        source = _unit(list(rel.parts))
        if source is None or source not in LAYER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and
                     node.level == 0 else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [])
            for name in names:
                target = _unit(name.split("."))
                if target in LAYER and LAYER[target] > LAYER[source]:
                    found.append(f"{path.relative_to(package)}:{node.lineno}: "
                                 f"{source} -> {target}")
    return found


def test_every_top_level_unit_has_a_layer() -> None:
    units = {p.stem for p in PACKAGE.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists()) or
             (p.suffix == ".py" and p.stem != "__init__")}
    assert units <= set(LAYER), f"give a layer to {sorted(units - set(LAYER))}"


def test_no_module_imports_a_layer_above_it() -> None:
    assert upward_imports(PACKAGE) == []


def test_the_check_finds_an_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "jubensha"
    (package / "engine").mkdir(parents=True)
    (package / "engine" / "game.py").write_text(
        "from jubensha.llm.base import Model\nimport jubensha.eval.audit\n")
    assert upward_imports(package) == ["engine/game.py:2: engine -> eval"]


ENGINE_PROMPTS = {"host", "defaults", "events", "mirage", "whodunit"}
"""The prompt areas the engine renders: the host's words, the prompts of its default
answers and how an event reads in them, and the host lines of the MIRAGE and
WhodunitBench procedures (filed beside those papers' player prompts)."""


def rendered_areas(package: Path) -> dict[str, set[str]]:
    """Each prompt area a module of ``package`` renders by name → the modules."""
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "render" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                found.setdefault(str(node.args[0].value), set()).add(path.name)
    return found


def test_the_engine_renders_no_architectures_prompts() -> None:
    """An architecture's templates are its own: the table never renders them (its default
    answers have their own), so changing one changes that architecture alone."""
    rendered = rendered_areas(PACKAGE / "engine")
    assert "defaults" in rendered and "host" in rendered  # the scan finds the calls
    assert {area: modules for area, modules in rendered.items()
            if area not in ENGINE_PROMPTS} == {}


def _imported(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that the file imports, type-checking imports included
    (``from pkg import mod`` names the module ``pkg.mod``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def import_circles(package: Path) -> list[list[str]]:
    """Every circle of imports among the modules of ``package``, each as its modules from
    the first in sorted order."""
    top = len(package.parts) - 1 - package.parts[::-1].index("jubensha")
    prefix = ".".join(package.parts[top:])
    files = {".".join([prefix, *p.relative_to(package).with_suffix("").parts])
             .removesuffix(".__init__"): p for p in package.rglob("*.py")}
    graph = {name: sorted(_imported(path, set(files)) - {name}) for name, path in files.items()}
    circles: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for nxt in graph[path[-1]]:
            if nxt == path[0]:
                circles.append(list(path))
            elif nxt > path[0] and nxt not in path:
                walk([*path, nxt])

    for start in sorted(graph):
        walk([start])
    return circles


PACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def test_every_package_is_checked_for_circles() -> None:
    assert {"engine", "llm", "eval", "runs", "scripts", "agents"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_modules_of_a_package_import_top_down_without_a_circle(package: str) -> None:
    assert import_circles(PACKAGE / package) == []


def test_the_circle_check_finds_a_circle(tmp_path: Path) -> None:
    engine = tmp_path / "jubensha" / "engine"
    engine.mkdir(parents=True)
    (engine / "table.py").write_text("from typing import TYPE_CHECKING\n"
                                     "if TYPE_CHECKING:\n"
                                     "    from jubensha.engine.procedure import Procedure\n")
    (engine / "procedure.py").write_text("from jubensha.engine import stages\n")
    (engine / "stages.py").write_text("from jubensha.engine.table import Table\n")
    assert import_circles(engine) == [["jubensha.engine.procedure", "jubensha.engine.stages",
                                       "jubensha.engine.table"]]
