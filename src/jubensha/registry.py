"""One kind of name table for every place a name chooses code: architectures, stage kinds,
procedure presets, metrics, model and embedder forms, script importers.

A ``Registry`` maps a name to a lazy factory: the thing a name stands for is made (most often:
its module imported) the first time the name is looked up, and kept, so listing the names
loads nothing and an architecture's or importer's dependencies load only when it is used.
A table may also be filled on demand by ``sources`` (functions run once, the first time the
names are listed or a name is missing: importing the modules whose decorators register
into it, reading a folder of presets, loading the plug-ins of an entry-point group). An
unknown name raises the error the table's owner chooses, so each command keeps its message.
A name registered twice is refused (``NameTaken``) unless the second registration asks to
replace it: a plug-in that means to add a name never silently changes a built-in one, and
names its own things with its own prefix (``mypackage.last_words``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from importlib import import_module
from typing import Any, Generic, TypeVar

T = TypeVar("T")

Unknown = Callable[[str, list[str]], Exception]
"""Builds the error for an unknown name from the name and the known names."""


def imported(path: str) -> Callable[[], Any]:
    """A lazy factory for the attribute ``path`` names (``"package.module:Class.attribute"``)."""
    module, _, attribute = path.partition(":")

    def load() -> Any:
        target: Any = import_module(module)
        for part in attribute.split(".") if attribute else []:
            target = getattr(target, part)
        return target

    return load


def importing(*modules: str) -> Callable[[], None]:
    """A source that imports ``modules`` (whose decorators register into a table)."""
    def load() -> None:
        for module in modules:
            import_module(module)
    return load


class PluginError(RuntimeError):
    """A plug-in that failed to load or to register (a name taken already, a bug); the
    message names the plug-in's entry point and what went wrong."""


@cache
def load_entry_points(group: str) -> None:
    """Load every entry point of ``group`` once per process: a module registers on import,
    a function entry point registers when called. A plug-in that fails is a
    ``PluginError`` naming it."""
    from importlib import metadata  # ~10 ms: not for a command that lists no plug-ins

    for entry in metadata.entry_points(group=group):
        try:
            loaded = entry.load()
            if callable(loaded):
                loaded()
        except Exception as exc:  # whatever a plug-in raises: say which plug-in it was
            raise PluginError(f"plug-in {entry.name} = {entry.value} ({group}): "
                              f"{type(exc).__name__}: {exc}") from exc


def entry_points(group: str) -> Callable[[], None]:
    """A source that loads the plug-ins declared in the entry-point group ``group``."""
    return lambda: load_entry_points(group)


class NameTaken(ValueError):
    """A name registered already, registered again without ``replace=True``."""


class UnknownName(KeyError):
    """A name nobody registered; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def _unknown_name(name: str, known: list[str]) -> Exception:
    return UnknownName(f"unknown name {name!r} (known: {', '.join(known)})")


class Registry(Generic[T]):
    """Names to things, each made by its factory on first use; iterates names in the order
    they were added (``sorted(registry)`` where a listing wants them sorted)."""

    def __init__(self, paths: Mapping[str, str] | None = None, *,
                 unknown: Unknown = _unknown_name,
                 sources: Iterable[Callable[[], None]] = ()) -> None:
        """``paths``: names whose thing is an attribute imported on first use (``imported``)."""
        self._factories: dict[str, Callable[[], T]] = {
            name: imported(path) for name, path in (paths or {}).items()}
        self._made: dict[str, T] = {}
        self._unknown = unknown
        self._sources = list(sources)
        self._ran = 0
        """Sources that have run to the end (each runs once: its names are in)."""
        self._filled = not self._sources

    def add(self, name: str, factory: Callable[[], T], *, replace: bool = False) -> None:
        """Make ``name`` stand for what ``factory()`` returns when first looked up; a name
        registered already is ``NameTaken`` unless ``replace``."""
        if name in self._factories and not replace:
            raise NameTaken(f"{name!r} is registered already: give yours another name (a "
                            f"plug-in prefixes its own, e.g. 'mypackage.{name}'), or register "
                            "it with replace=True to change what the name means")
        self._factories[name] = factory
        self._made.pop(name, None)

    def put(self, name: str, thing: T, *, replace: bool = False) -> None:
        """Register a thing already made."""
        self.add(name, lambda: thing, replace=replace)

    def remove(self, name: str) -> None:
        """Forget ``name`` (a test's own entry, once the test is done)."""
        self._factories.pop(name, None)
        self._made.pop(name, None)

    def fill(self) -> None:
        """Run the sources once (they add names). A source that fails (a broken plug-in)
        raises here, and again at the next look-up, rather than leaving the table half
        filled (the sources before it, which ran, are not run again); a look-up made while
        the sources run sees the table as it is."""
        if self._filled:
            return
        self._filled = True
        try:
            while self._ran < len(self._sources):
                self._sources[self._ran]()
                self._ran += 1
        except BaseException:
            self._filled = False
            raise

    def get(self, name: str) -> T:
        """The thing ``name`` stands for; the table's own error when nobody registered it."""
        if name not in self._factories:
            self.fill()
        if name not in self._factories:
            raise self._unknown(name, list(self))
        if name not in self._made:
            self._made[name] = self._factories[name]()
        return self._made[name]

    __getitem__ = get

    def registered(self, name: str) -> bool:
        """Whether ``name`` is registered already, without running the sources (for a
        decorator that registers while a source is importing its module)."""
        return name in self._factories

    def __contains__(self, name: object) -> bool:
        if name not in self._factories:
            self.fill()
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        self.fill()
        return iter(list(self._factories))

    def __len__(self) -> int:
        self.fill()
        return len(self._factories)

    def items(self) -> list[tuple[str, T]]:
        """Every name with its thing, in the order added (makes them all)."""
        return [(name, self.get(name)) for name in self]
