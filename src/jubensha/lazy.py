"""Packages whose public names are imported on first use (PEP 562).

A package's ``__init__`` imports its public names under ``if TYPE_CHECKING:``, where
readers and type checkers see them, and sets ``__getattr__, __dir__ = lazy_names(...)``:
a name's module is imported the first time the name is used. Importing one module of
the package (``jubensha.llm.base``) then no longer imports every other (the scripted
fake and numpy, the structured-output parser), which is what kept every command slow to
start.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any


@cache
def public_homes(init_file: str) -> dict[str, str]:
    """Each name a package's ``__init__`` imports under ``if TYPE_CHECKING:`` → its module."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    homes: dict[str, str] = {}
    for block in tree.body:
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) \
                and block.test.id == "TYPE_CHECKING":
            for node in ast.walk(block):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    homes.update({alias.asname or alias.name: node.module
                                  for alias in node.names})
    return homes


def lazy_names(package: str, init_file: str
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``__init__`` is
    ``init_file``."""

    def getattr_(name: str) -> Any:
        home = public_homes(init_file).get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(sys.modules[package], name, value)  # found directly from now on
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public_homes(init_file)})

    return getattr_, dir_
