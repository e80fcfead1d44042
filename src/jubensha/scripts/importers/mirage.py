"""MIRAGE (the public release of MPIRD-LLMA): ``En/<Script>/script.json`` + ``clues.json``,
``Zh/<剧本>/人物剧本.json`` + ``线索.json``, and ``<lang>/Truth.json`` with the truth as prose.

A script is ``{character: parts}`` or, when phased, ``{"Stage 1": {character: parts}, ...}``
(``第一幕``...): each stage becomes an ``Act`` and each character's ``Script`` text of a
stage its ``ActSheet`` text. The six parts of the paper map to: Story → ``story``,
Relationship → ``relationships`` (``extra["relationship_text"]`` when it is prose), Performance
→ ``performance``, Purpose → ``mission`` (later stages: act-sheet goals), Ability →
``rules``; a part that changes in a later stage goes to that act sheet.

Clues are places to investigate (``location`` = the key, ``holder: public``), as in the
paper's Investigate action (section 2.1) and the reference code, which lists every clue
key as an address. A key that is a character's name is that person to search; the
reference code never lets a character investigate its own name (``extra["owner"]``). A
group of titled clues under a key that names one character (``Memory of Junmeng Chen``)
is that character's own memories: held by it, no location (the reference code hands them
to that character as self-clues). ``Public Clue N`` keys are public clues with no location.

The truth is prose, so the murderer and the victim are derived (``truth.derive_truth``, from
the texts ``mirage_truth`` gathers); where the text supports none, the script keeps its
truth prose with ``has_truth: false`` and a note.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jubensha.scripts.importers.common import (
    Names,
    expect,
    fail,
    language_of,
    name_key,
    read_json,
    slugify,
    split_items,
    split_parenthetical,
    text_of,
    unique_ids,
)
from jubensha.scripts.importers.mirage_pairs import (
    other_version,
    same_cast,
    same_others,
)
from jubensha.scripts.importers.mirage_release import RELEASE_PART_KEY, release_parts
from jubensha.scripts.importers.mirage_truth import cross_check, truth_passages, truth_text
from jubensha.scripts.importers.truth import Finding, derive_truth, pool
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import (
    PUBLIC,
    Act,
    ActSheet,
    Character,
    Clue,
    Kill,
    Language,
    Metadata,
    Relationship,
    Script,
    Truth,
    Victim,
)

FILES = (("script.json", "clues.json"), ("人物剧本.json", "线索.json"))
PARTS = {"Story": "Story", "人物故事": "Story", "Script": "Script", "人物剧本": "Script",
         "Relationship": "Relationship", "人物关系": "Relationship",
         "Performance": "Performance", "你的表现": "Performance", "Purpose": "Purpose",
         "你的目的": "Purpose", "Ability": "Ability", "其他能力": "Ability"}
_STAGE = re.compile(r"^\s*(?:stage|act|phase)\s*\d+\s*$|^\s*第.{1,3}[幕阶段章]\s*$", re.IGNORECASE)
_PUBLIC_CLUE = re.compile(r"^\s*(?:public clue|公开线索)\s*\d*\s*$", re.IGNORECASE)


def discover_mirage(root: Path) -> list[Path]:
    """Every folder under ``root`` holding a script file and its clue file."""
    found = {p.parent for story, clues in FILES for p in root.rglob(story)
             if (p.parent / clues).is_file()}
    return sorted(found)


@dataclass
class _Read:
    """One MIRAGE script folder as read, before its truth is decided."""

    folder: Path
    script_path: Path
    clues_path: Path
    stages: dict[str, dict[str, dict]]
    characters: list[Character]
    names: Names
    clues: list[Clue]
    language: Language
    narrative: str
    notes: list[str]
    release_parts: dict[str, dict[str, str]]
    """The part texts the release's ROUGE-L compares with (``mirage_release``)."""

    @property
    def truth_file(self) -> str:
        return f"{self.folder.parent.name}/Truth.json"


def import_mirage(src: Path, *, other_language: bool = True) -> Script:
    """The script in ``src``; its truth weighed from its texts and, with
    ``other_language``, from the same script's texts in the release's other language
    when that version lies beside it."""
    read = _read(src)
    culprit, dead = _findings(read)
    other = other_version(read.folder) if other_language else None
    if other is not None:
        culprit, dead = _pooled(read, culprit, dead, other)
    murderers, victims = culprit.names, dead.names
    notes = read.notes
    derivations = [found.derivation(read.truth_file) for found in (culprit, dead)
                   if found.candidates]
    derivations += cross_check(read.folder.name, read.language, read.names, murderers, notes)
    notes += [culprit.note(), dead.note()]
    if not murderers:
        notes.append("no character is derived as the murderer: no solution (has_truth "
                     "false); the truth prose is kept")
    for character in read.characters:
        if character.name in murderers:
            character.side, character.killed = "murderer", list(victims)
    return Script(
        id=f"mirage-{read.language}-{slugify(read.folder.name)}",
        title=read.folder.name,
        language=read.language,
        victims=[Victim(name=v) for v in victims],
        characters=read.characters,
        clues=read.clues,
        acts=[Act(number=i, title=title if len(read.stages) > 1 else "")
              for i, title in enumerate(read.stages, 1)],
        truth=Truth(murderers=murderers, narrative=read.narrative,
                    kills=[Kill(victim=v, killers=murderers) for v in victims if murderers]),
        metadata=Metadata(source="mirage", source_path="/".join(read.folder.parts[-2:]),
                          player_count=len(read.characters), has_truth=bool(murderers),
                          notes=notes, derivations=derivations,
                          extra={RELEASE_PART_KEY: read.release_parts}),
    )


def _read(src: Path) -> _Read:
    folder = src.parent if src.is_file() else src
    pair = next(((folder / s, folder / c) for s, c in FILES if (folder / s).is_file()), None)
    if pair is None:
        raise fail(folder, "(folder)", "no script.json or 人物剧本.json: not a MIRAGE script "
                                       "folder")
    script_path, clues_path = pair
    data = expect(read_json(script_path)[0], dict, script_path, "(top level)")
    stages, shows = _stages(data, script_path)
    notes: list[str] = []
    if shows:
        notes.append(f"{len(shows)} text(s) beside the stages of {script_path.name} start "
                     "every character's first act sheet, as the release prepends them")
    people = same_people(stages)
    characters = [_character(names, stages, script_path, shows) for names in people.values()]
    notes += [f"{names[0]} is called {', '.join(names[1:])} in later stages: one person"
              for names in people.values() if len(names) > 1]
    names = Names(c.name for c in characters)
    for character in characters:
        for alias in character.aliases:
            names.add_alias(alias, character.name)
    clues = _clues(clues_path, names, notes, characters) if clues_path.is_file() else []
    if not clues_path.is_file():
        notes.append(f"no {clues_path.name}: no clues")
    given: dict[str, list[str]] = {}
    for clue in clues:
        if clue.extra.get("given") and clue.holder:
            given.setdefault(clue.holder, []).append(clue.text)
    compared = release_parts(stages, people, [v for v in data.values()
                                              if isinstance(v, str) and v.strip()], given, PARTS)
    language = language_of(folder, *(c.story[:1000] for c in characters))
    return _Read(folder, script_path, clues_path, stages, characters, names, clues, language,
                 truth_text(folder, notes), notes, compared)


def _findings(read: _Read) -> tuple[Finding, Finding]:
    """The murderers and victims weighed from this version's texts."""
    return derive_truth(
        truth_passages(read.narrative, read.truth_file, read.characters, read.clues,
                       read.script_path.name, read.clues_path.name), [], read.characters,
        read.language, persons=[r.other for c in read.characters for r in c.relationships])


def _pooled(read: _Read, culprit: Finding, dead: Finding,
            other: Path) -> tuple[Finding, Finding]:
    """Both versions' evidence for one answer: a character is the one at the same place
    in the other version's cast, a victim the name at the same place of the same
    character's relationship list (or named the same)."""
    try:
        there = _read(other)
    except ScriptError as exc:
        read.notes.append(f"the other language's version ({other}) cannot be read, so "
                          f"only this version's texts are weighed: {exc}")
        return culprit, dead
    if len(there.characters) != len(read.characters):
        read.notes.append(f"the other language's version ({other}) has another cast: only "
                          "this version's texts are weighed")
        return culprit, dead
    their_culprit, their_dead = _findings(there)
    where = f"{other.parent.name}/{other.name}"
    read.notes.append(f"the truth is weighed with the texts of {where}, the same script "
                      "in the release's other language")
    return (pool(culprit, their_culprit, same_cast(there.characters, read.characters), where),
            pool(dead, their_dead, same_others(there.characters, read.characters), where))


def _stages(data: dict, path: Path) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """``{stage title: {character: parts}}`` (a one-stage script gets the title ``""``)
    and the plain texts beside the stages (a ``show``: the release prepends it to every
    character's script)."""
    shows = [text_of(v, path, k).strip() for k, v in data.items() if isinstance(v, str)]
    data = {k: v for k, v in data.items() if not isinstance(v, str)}
    if data and all(_STAGE.match(k) for k in data):
        stages = {k: expect(v, dict, path, k) for k, v in data.items()}
    else:
        stages = {"": data}
    for title, cast in stages.items():
        for name, parts in cast.items():
            expect(parts, dict, path, f"{title}.{name}".strip("."))
    if not any(stages.values()):
        raise fail(path, "(top level)", "no characters")
    return stages, [show for show in shows if show]


def _part(parts: dict, key: str, path: Path, field: str) -> str:
    for source, part in PARTS.items():
        if part == key and source in parts:
            return text_of(parts[source], path, f"{field}.{source}").strip()
    return ""


def same_people(stages: dict[str, dict[str, dict]]) -> dict[str, list[str]]:
    """Each person's name in the first stage it appears in, to every name it has in the
    stages: a later name that contains an earlier one is the same person, as the release
    reads it (stage 1 ``Sky Dog``, stage 2 ``Zetong Hei (Sky Dog)``)."""
    people: dict[str, list[str]] = {}
    for cast in stages.values():
        here: set[str] = set()
        for name in sorted(cast, key=lambda n: n not in _all_names(people)):
            known = next((first for first, names in people.items() if first not in here
                          and (name in names or any(old in name for old in names))), None)
            if known is None:
                people[name] = [name]
                known = name
            elif name not in people[known]:
                people[known].append(name)
            here.add(known)
    return people


def _all_names(people: dict[str, list[str]]) -> set[str]:
    return {name for names in people.values() for name in names}


def _character(names: list[str], stages: dict[str, dict[str, dict]], path: Path,
               shows: list[str]) -> Character:
    name = names[0]
    sheets: list[ActSheet] = []
    previous: dict[str, str] = {}
    first: dict[str, str] = {}
    extra: dict[str, Any] = {}
    for act, (title, cast) in enumerate(stages.items(), 1):
        parts = next((cast[n] for n in names if n in cast), None)
        if parts is None:
            continue
        field = f"{title}.{name}".strip(".")
        now = {key: _part(parts, key, path, field) for key in set(PARTS.values())}
        extra.update({k: v for k, v in parts.items() if k not in PARTS})
        if not first:
            first = now
            sheets.append(ActSheet(act=act, text="\n".join([*shows, now["Script"]]).strip()))
        else:
            changed = {k: v for k, v in now.items() if v and v != previous.get(k)}
            sheets.append(ActSheet(
                act=act, text=now["Script"],
                goals=split_items(changed["Purpose"]) if "Purpose" in changed else [],
                performance=changed.get("Performance", ""),
                notes={k: changed[k] for k in ("Story", "Relationship", "Ability")
                       if k in changed}))
        previous = {k: v or previous.get(k, "") for k, v in now.items()}
    main, aliases = split_parenthetical(name)
    for later in names[1:]:
        later_main, later_aliases = split_parenthetical(later)
        aliases += [a for a in (later, later_main, *later_aliases) if a != name]
    aliases = list(dict.fromkeys(aliases))
    relationships, prose = parse_relationships(first.get("Relationship", ""))
    if prose:
        extra["relationship_text"] = prose
    # The list of people often describes the character itself too: that is public.
    own = [r for r in relationships if name_key(r.other) == name_key(name)]
    return Character(name=name, story=first.get("Story", ""), mission=first.get("Purpose", ""),
                     description="\n".join(r.description for r in own),
                     performance=first.get("Performance", ""),
                     relationships=[r for r in relationships if r not in own],
                     rules=[first["Ability"]] if first.get("Ability") else [], acts=sheets,
                     aliases=aliases if main != name or len(names) > 1 else [], extra=extra)


_HEADER = re.compile(r"^\s*(?:\d{1,2}\s*[.、．]\s*)?([^:：。.!?！？\n]{1,40}?)\s*[:：](?!\d)\s*(.*)$")
_WHO = re.compile(r"^(.+?)\s*(?:[(（]([^()（）]*)[)）])?\s*(?:[,，]\s*(.+))?$")


_HEADING = re.compile(r"^(?:the\s+)?(?:other\s+)?(?:victim|deceased|suspect|murderer|culprit)s?$|"
                      r"^(?:其他|其余)?(?:死者|被害人|受害者|嫌疑人|凶手)$", re.IGNORECASE)


def _headed(heading: str, text: str) -> Relationship:
    """``Victim: Qi Liu, your classmate``: the person is named inside; the heading is a
    label, and starts the description so that the victim rule still sees it."""
    name = re.split(r"[,，(（:：;；。]|\.\s", text, maxsplit=1)[0].strip()
    rest = text[len(name):].lstrip(",，:：;；。. ")
    return Relationship(other=name, labels=[heading],
                        description=f"{heading}: {rest}" if rest else heading)


def parse_relationships(text: str) -> tuple[list[Relationship], str]:
    """``Name (role), title: description`` lines (numbered or not; a description may run
    over the following lines) as relationships, the bracket and title kept at the start
    of the description. A heading ("Victim:", "Other Suspects:") is a label, never a
    person: alone on its line, it labels the person the next line names. Text that is
    not such a list is returned as prose, untouched."""
    relationships: list[Relationship] = []
    heading = ""  # a heading alone on its line ("Victim:"): the next line names the person
    for line in text.splitlines():
        match = _HEADER.match(line)
        who = _WHO.match(match.group(1).strip()) if match else None
        if who and match and _HEADING.match(who.group(1).strip()):
            heading = "" if match.group(2).strip() else who.group(1).strip()
            if not heading:
                relationships.append(_headed(who.group(1).strip(), match.group(2).strip()))
        elif heading and line.strip():
            relationships.append(_headed(heading, line.strip()))
            heading = ""
        elif who and match:
            label = "; ".join(x.strip() for x in who.group(2, 3) if x and x.strip())
            description = " ".join(x for x in (f"({label})" if label else "",
                                               match.group(2).strip()) if x)
            relationships.append(Relationship(other=who.group(1).strip(),
                                              description=description))
        elif relationships:
            last = relationships[-1]
            last.description = "\n".join(x for x in (last.description, line.strip()) if x)
        elif line.strip():
            return [], text
    return relationships, ""


# --- clues -------------------------------------------------------------------------------

def _clues(path: Path, names: Names, notes: list[str],
           characters: list[Character]) -> list[Clue]:
    """Clues by location, by stage when the file is split into stages (a clue keeps its
    stage as its act: the release offers each stage's clues during that stage only), and
    plain texts, which the release hands to one character rather than a place."""
    data = expect(read_json(path)[0], dict, path, "(top level)")
    places = {k: v for k, v in data.items() if not isinstance(v, str)}
    staged = bool(places) and all(_STAGE.match(k) for k in places)
    groups = ([(act, expect(v, dict, path, k), f"{k}.") for act, (k, v)
               in enumerate(places.items(), 1)] if staged else [(1, places, "")])
    clues: list[Clue] = []
    for act, group, prefix in groups:
        for key, value in group.items():
            field = f"{prefix}{key}"
            if isinstance(value, str):
                clues += _given(key, text_of(value, path, field), act, names, characters,
                                notes)
                continue
            if isinstance(value, dict):
                items = [(text_of(t, path, field), text_of(v, path, f"{field}.{t}"))
                         for t, v in value.items()]
            else:
                items = [("", text_of(v, path, f"{field}[{i}]"))
                         for i, v in enumerate(expect(value, list, path, field))]
            made = _clue_group(key, items, isinstance(value, dict), names, notes)
            clues += [clue.model_copy(update={"act": act}) for clue in made]
    for key, value in data.items():
        if isinstance(value, str):
            clues += _given(key, text_of(value, path, key), 1, names, characters, notes)
    ids = unique_ids(c.id for c in clues)
    for clue, cid in zip(clues, ids):
        clue.id = cid
    return clues


def _given(key: str, text: str, act: int, names: Names, characters: list[Character],
           notes: list[str]) -> list[Clue]:
    """A plain text in the clue file: the release appends it to one character's script.
    That character is the one the key names, else the one whose own texts name the key
    most often; with neither, the text stays out of play (noted), never public."""
    holder = names.resolve(key) or _mentioned_most(key, characters)
    if holder is None or not text.strip():
        notes.append(f"clue text {key!r}: no character it belongs to; left out of play")
        return []
    notes.append(f"clue text {key!r} given to {holder} (act {act}), as the release appends "
                 "it to one character's script")
    return [Clue(id=f"clue-{slugify(key)}", title=key, text=text, holder=holder, act=act,
                 extra={"given": True})]


def _mentioned_most(key: str, characters: list[Character]) -> str | None:
    counts = Counter({c.name: sum(t.count(key) for t in (c.story, *(a.text for a in c.acts)))
                      for c in characters})
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] == 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


def _clue_group(key: str, items: list[tuple[str, str]], titled: bool, names: Names,
                notes: list[str]) -> list[Clue]:
    base = f"clue-{slugify(key)}"
    person = names.resolve(key)
    mentioned = [n for n in names.names if name_key(n) in name_key(key)]
    if titled and person is None and len(mentioned) == 1:
        notes.append(f"clues {key!r}: memories of {mentioned[0]}, held by that character")
        return [Clue(id=f"{base}-{i}", title=title, text=text, holder=mentioned[0],
                     extra={"group": key, "trigger": title})
                for i, (title, text) in enumerate(items, 1)]
    extra: dict[str, Any] = {}
    location: str | None = key
    if _PUBLIC_CLUE.match(key):
        location = None
    elif person is not None:
        location, extra["owner"] = person, person
        if person != key:
            extra["source_key"] = key
    return [Clue(id=f"{base}-{i}", title=title, text=text, location=location,
                 holder=PUBLIC, extra=dict(extra))
            for i, (title, text) in enumerate(items, 1) if text.strip() or title]
