"""The scripts an export writes: generated mysteries level by level, seed by seed, in
each language asked, then the native scripts named, each with the file it came from."""

from __future__ import annotations

from collections.abc import Iterator

from jubensha.scripts.bundled import bundled_scripts, find_script, script_location
from jubensha.scripts.generate import Languages, Level, requests, scripts
from jubensha.scripts.io import script_targets
from jubensha.scripts.model import Script


def gather(names: list[str], count: int, seed: int, levels: list[Level], lang: Languages,
           players: int, acts: int) -> Iterator[tuple[Script, str | None]]:
    """(script, where it was found: its bundled id or resolved path; None when
    generated), generated ones first. A name that is no script fails here, at once."""
    targets = [target for name in names for target in _targets(name)]

    def each() -> Iterator[tuple[Script, str | None]]:
        for level in levels if count else []:
            batch = requests(seed, count, players, acts, level)
            yield from ((script, None) for script in scripts(batch, lang))
        for target in targets:
            yield find_script(target), target

    return each()


def _targets(name: str) -> list[str]:
    """A bundled id as it is; the scripts a path holds, each resolved."""
    if name in bundled_scripts():
        return [name]
    return [str(target.resolve()) for target in script_targets(script_location(name))]
