"""The same MIRAGE script in the release's other language, and who is who across the two.

The release holds every script twice, ``En/<title>`` and ``Zh/<标题>``, each language with
its ``Truth.json`` listing the scripts in the same order; the casts are in the same order
too. The importer weighs both versions' evidence for one answer, so that the two versions
of a script derive the same murderers and victims.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from jubensha.safeload import is_path
from jubensha.scripts.importers.common import name_key, read_json
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Character

_OTHER = {"en": "zh", "zh": "en"}
_SCRIPT_FILES = ("script.json", "人物剧本.json")


def title_key(title: str) -> str:
    """A title as compared: case, width, spaces and punctuation aside."""
    return re.sub(r"\W+", "", name_key(title))


@lru_cache(maxsize=1)
def release_titles() -> list[dict[str, Any]]:
    """The release's scripts with their titles in both languages and the culprits its code
    hard-codes (``data/mirage_release.yaml``)."""
    source = resources.files("jubensha.scripts.importers").joinpath("data/mirage_release.yaml")
    return yaml.safe_load(source.read_text(encoding="utf-8"))["scripts"]


def other_version(folder: Path) -> Path | None:
    """The folder of the same script in the other language beside this one's language
    folder (``En`` ↔ ``Zh``), found by the release's titles, else by the place of the
    title in the two ``Truth.json`` files; None when there is none."""
    language = _OTHER.get(folder.parent.name.lower())
    if language is None or not is_path(folder.parent.parent, "folder"):
        return None
    other_root = next((p for p in folder.parent.parent.iterdir()
                       if p.name.lower() == language and is_path(p, "folder")), None)
    if other_root is None:
        return None
    titles = [p.name for p in other_root.iterdir()
              if any(is_path(p / f, "file") for f in _SCRIPT_FILES)]
    wanted = _known_title(folder.name, titles) or _same_place(folder, other_root, titles)
    return other_root / wanted if wanted else None


def _known_title(title: str, titles: list[str]) -> str | None:
    key = title_key(title)
    for entry in release_titles():
        keys = {title_key(t) for t in entry["titles"]}
        if key in keys:
            return next((t for t in titles if title_key(t) in keys and t != title), None)
    return None


def _same_place(folder: Path, other_root: Path, titles: list[str]) -> str | None:
    try:
        here = list(_truth_titles(folder.parent))
        there = list(_truth_titles(other_root))
    except ScriptError:
        return None
    keys = [title_key(t) for t in here]
    match = difflib.get_close_matches(title_key(folder.name), keys, n=1, cutoff=0.75)
    if not match or len(here) != len(there):
        return None
    wanted = title_key(there[keys.index(match[0])])
    found = difflib.get_close_matches(wanted, [title_key(t) for t in titles], n=1, cutoff=0.75)
    return next((t for t in titles if found and title_key(t) == found[0]), None)


def _truth_titles(language_folder: Path) -> dict[str, Any]:
    path = language_folder / "Truth.json"
    data = read_json(path)[0] if is_path(path, "file") else {}
    return data if isinstance(data, dict) else {}


def same_cast(there: list[Character], here: list[Character]) -> dict[str, str]:
    """Each name of the other version's characters to this version's character at the
    same place in the cast."""
    return {name: mine.name for theirs, mine in zip(there, here) for name in theirs.all_names}


def same_others(there: list[Character], here: list[Character]) -> dict[str, str]:
    """People who are not characters, across the versions: the name at the same place of
    the same character's relationship list (lists of the same length only); a name the
    lists pair with two different names is left out."""
    cast = {n for c in there for n in c.all_names} | {n for c in here for n in c.all_names}
    found: dict[str, set[str]] = {}
    for theirs, mine in zip(there, here):
        if len(theirs.relationships) != len(mine.relationships):
            continue
        for a, b in zip(theirs.relationships, mine.relationships):
            if a.other not in cast and b.other not in cast:
                found.setdefault(a.other, set()).add(b.other)
    return {a: next(iter(b)) for a, b in found.items() if len(b) == 1}
