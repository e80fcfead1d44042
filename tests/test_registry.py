"""The one kind of name table: a thing is made when its name is first looked up, and kept;
sources fill a table once, when it is listed or a name is missing; an unknown name raises
the owner's error; plug-ins load from an entry-point group."""

from __future__ import annotations

import sys
import types
from importlib import metadata
from pathlib import Path

import pytest

from jubensha.registry import (
    NameTaken,
    PluginError,
    Registry,
    entry_points,
    imported,
    importing,
    load_entry_points,
)


class Unknown(LookupError):
    pass


def _unknown(name: str, known: list[str]) -> Unknown:
    return Unknown(f"no {name!r}; known: {', '.join(known)}")


def test_a_factory_runs_on_first_lookup_only() -> None:
    made: list[str] = []

    def make() -> str:
        made.append("a")
        return "thing a"

    table: Registry[str] = Registry()
    table.add("a", make)
    assert made == [] and "a" in table and list(table) == ["a"]
    assert table.get("a") == "thing a" and table["a"] == "thing a"
    assert made == ["a"]


def test_names_keep_the_order_they_were_added_and_a_name_is_replaced_only_when_asked() -> None:
    table: Registry[int] = Registry()
    for name, value in (("b", 1), ("a", 2), ("c", 3)):
        table.put(name, value)
    table.put("a", 20, replace=True)
    with pytest.raises(NameTaken, match="'b' is registered already.*'mypackage.b'"):
        table.put("b", 10)
    with pytest.raises(NameTaken):
        table.add("c", lambda: 30)
    assert list(table) == ["b", "a", "c"] and len(table) == 3
    assert table.items() == [("b", 1), ("a", 20), ("c", 3)]
    table.remove("a")
    assert list(table) == ["b", "c"] and "a" not in table


def test_an_unknown_name_raises_the_owners_error_listing_the_known_ones() -> None:
    table: Registry[int] = Registry(unknown=_unknown)
    table.put("one", 1)
    with pytest.raises(Unknown, match="no 'two'; known: one"):
        table.get("two")
    with pytest.raises(KeyError, match="unknown name 'two'"):
        Registry[int]().get("two")


def test_sources_run_once_when_listed_or_when_a_name_is_missing() -> None:
    runs: list[int] = []

    def source() -> None:
        runs.append(1)
        table.put("late", 7)

    table: Registry[int] = Registry(sources=[source])
    table.put("early", 1)
    assert table.get("early") == 1 and runs == []
    assert table.registered("late") is False and runs == []
    assert table.get("late") == 7 and runs == [1]
    assert list(table) == ["early", "late"] and "nope" not in table and runs == [1]


def test_a_failing_source_fails_every_look_up_until_it_works() -> None:
    broken = [True]

    def source() -> None:
        if broken[0]:
            raise ImportError("plug-in broken")
        table.put("fixed", 1)

    table: Registry[int] = Registry(sources=[source])
    for _ in range(2):
        with pytest.raises(ImportError, match="plug-in broken"):
            table.get("fixed")
    broken[0] = False
    assert table.get("fixed") == 1


def test_imported_reads_a_dotted_attribute_of_a_module_on_call() -> None:
    factory = imported("jubensha.registry:Registry.put")
    assert factory() is Registry.put
    assert imported("jubensha.registry")() is sys.modules["jubensha.registry"]
    with pytest.raises(ModuleNotFoundError):
        imported("jubensha.no_such_module:x")()


def _shared(monkeypatch: pytest.MonkeyPatch, table: Registry[int]) -> None:
    """Lets a module written by a test reach ``table`` as ``shared_table.TABLE``."""
    module = types.ModuleType("shared_table")
    module.TABLE = table  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "shared_table", module)


def test_importing_imports_modules_whose_decorators_register(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    (tmp_path / "registering_module.py").write_text(
        "from shared_table import TABLE\nTABLE.put('from module', 1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    table: Registry[int] = Registry(sources=[importing("registering_module")])
    _shared(monkeypatch, table)
    assert list(table) == ["from module"]


def test_plug_ins_load_from_their_entry_point_group(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A module entry point registers on import; a function entry point is called."""
    (tmp_path / "plugin_module.py").write_text(
        "from shared_table import TABLE\nTABLE.put('module', 1)\n"
        "def register():\n    TABLE.put('function', 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    group = "jubensha.test-registry-plugins"
    found = [metadata.EntryPoint("m", "plugin_module", group),
             metadata.EntryPoint("f", "plugin_module:register", group)]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group="": found if group == "jubensha.test-registry-plugins"
                        else [])
    table: Registry[int] = Registry(sources=[entry_points(group)])
    _shared(monkeypatch, table)
    load_entry_points.cache_clear()
    try:
        assert table.items() == [("module", 1), ("function", 2)]
    finally:
        load_entry_points.cache_clear()


def test_a_plug_in_that_takes_a_registered_name_is_refused_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "greedy_plugin.py").write_text(
        "from shared_table import TABLE\nTABLE.put('built-in', 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    group = "jubensha.test-registry-greedy"
    greedy = [metadata.EntryPoint("greedy", "greedy_plugin", group)]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group="": greedy if group == greedy[0].group else [])
    table: Registry[int] = Registry(sources=[lambda: table.put("built-in", 1),
                                             entry_points(group)])
    _shared(monkeypatch, table)
    load_entry_points.cache_clear()
    try:
        for _ in range(2):  # and again at the next look-up, the built-in names kept
            with pytest.raises(PluginError, match="plug-in greedy = greedy_plugin .*NameTaken: "
                                                  "'built-in' is registered already"):
                list(table)
            load_entry_points.cache_clear()
        assert table.registered("built-in") and table.get("built-in") == 1
    finally:
        load_entry_points.cache_clear()
