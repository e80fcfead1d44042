"""The truth of a MIRAGE script as far as it is not weighed by ``truth``: the texts it is
weighed from (``truth_passages``), the script's prose in ``<lang>/Truth.json``
(``truth_text``), and the culprits the release's code hard-codes, kept beside the derived
answer and compared with it (``cross_check``).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from jubensha.scripts.importers.common import Names, expect, read_json, text_of
from jubensha.scripts.importers.mirage_pairs import release_titles, title_key
from jubensha.scripts.importers.truth import Passage
from jubensha.scripts.model import PUBLIC, Character, Clue, Derivation


def truth_passages(narrative: str, truth_file: str, characters: list[Character],
                   clues: list[Clue], script_file: str, clues_file: str) -> list[Passage]:
    """Every text the truth is weighed from: the truth prose, each character's texts (its
    own: "you" is that character) and every clue (a clue a character holds is its own)."""
    passages = [Passage(narrative, truth_file, "truth")] if narrative else []
    for c in characters:
        texts = [c.story, c.mission, c.performance, c.description,
                 c.extra.get("relationship_text", ""),
                 *(f"{r.other}: {r.description}" for r in c.relationships),
                 *(t for s in c.acts for t in (s.text, s.performance, *s.goals,
                                               *s.notes.values()))]
        passages += [Passage(text, f"{script_file}: {c.name}", "character", owner=c.name)
                     for text in texts if isinstance(text, str) and text.strip()]
    for clue in clues:
        owner = None if clue.holder == PUBLIC else clue.holder
        passages.append(Passage(f"{clue.title}: {clue.text}" if clue.title else clue.text,
                                f"{clues_file}: {clue.extra.get('group') or clue.location or clue.title}",
                                "clue", owner=owner))
    return passages


def truth_text(folder: Path, notes: list[str]) -> str:
    """The prose for this script from ``<lang>/Truth.json``, matching titles loosely
    (``Artical 22 School Rules`` is ``Article 22 School Rules`` there)."""
    path = folder.parent / "Truth.json"
    if not path.is_file():
        notes.append("no Truth.json beside the script folder: no truth prose")
        return ""
    data = expect(read_json(path)[0], dict, path, "(top level)")
    keys = {title_key(title): title for title in data}
    match = keys.get(title_key(folder.name))
    if match is None:
        close = difflib.get_close_matches(title_key(folder.name), list(keys), n=1,
                                          cutoff=0.75)
        match = keys[close[0]] if close else None
    if match is None:
        notes.append(f"Truth.json has no entry for {folder.name!r}: no truth prose")
        return ""
    if match != folder.name:
        notes.append(f"truth prose found under the title {match!r}")
    return text_of(data[match], path, match).strip()


def release_culprits(title: str, language: str, names: Names) -> tuple[str, list[str]] | None:
    """The release's code's class for the script titled ``title`` and the culprits it
    hard-codes, as this script's characters; None for a script the release does not have."""
    key = title_key(title)
    for entry in release_titles():
        if any(title_key(t) == key for t in entry["titles"]):
            found = [names.resolve(n, chinese=True) or n for n in entry["culprits"][language]]
            return entry["class"], list(dict.fromkeys(found))
    return None


def cross_check(title: str, language: str, names: Names, murderers: list[str],
                notes: list[str]) -> list[Derivation]:
    """The release's culprit list as a derivation, and a warning where it disagrees with
    the truth text (whose answer the script keeps)."""
    release = release_culprits(title, language, names)
    if release is None:
        return []
    kind, culprits = release
    if set(culprits) != set(murderers):
        notes.append(f"warning: the release's code names {', '.join(culprits) or 'no one'} as "
                     f"the culprit where the truth text names {', '.join(murderers) or 'no one'}"
                     "; the truth text's answer is kept (MIRAGE metrics take --culprits "
                     "release to score against the release's)")
    return [Derivation(fact="culprits_release", value=culprits, origin="release",
                       source=f"ScriptEnvs/{kind}.py of the MIRAGE release",
                       method="the culprit list the release's code hard-codes")]
