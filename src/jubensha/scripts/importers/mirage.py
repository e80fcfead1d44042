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

The truth is prose, so the murderer and the victim are derived (``derive_murderers``,
``derive_victims``); where the text supports none, the script keeps its truth prose with
``has_truth: false`` and a note.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from jubensha.safeload import shorten
from jubensha.scripts.importers.common import (
    CJK,
    Names,
    evidence_sentence,
    expect,
    fail,
    killed_names,
    language_of,
    name_key,
    read_json,
    slugify,
    split_items,
    split_parenthetical,
    text_of,
    unique_ids,
)
from jubensha.scripts.importers.mirage_release import RELEASE_PART_KEY, release_parts
from jubensha.scripts.model import (
    PUBLIC,
    Act,
    ActSheet,
    Character,
    Clue,
    Derivation,
    Kill,
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


def import_mirage(src: Path) -> Script:
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
    narrative = _truth_text(folder, notes)
    culprit = derive_murderers(narrative, characters)
    murderers = culprit.names
    victims = derive_victims(narrative, characters, names)
    truth_file = f"{folder.parent.name}/Truth.json"
    derivations = []
    if murderers:
        derivations.append(Derivation(
            fact="murderers", value=murderers, method=culprit.method, evidence=culprit.evidence,
            source=truth_file if culprit.source == "truth" else script_path.name))
    if victims:
        derivations.append(Derivation(
            fact="victims", value=victims, source=f"{truth_file} and {script_path.name}",
            method="the person whose death the texts tell",
            evidence=evidence(narrative, victims, characters)))
    derivations += cross_check(folder.name, language, names, murderers, notes)
    if murderers:
        notes.append(f"murderer {', '.join(murderers)} derived from the text "
                     "(see docs/script-format.md)")
        for character in characters:
            if character.name in murderers:
                character.side, character.killed = "murderer", list(victims)
    else:
        notes.append("the text names no character as the murderer: no solution "
                     "(has_truth false); the truth prose is kept")
    if victims:
        notes.append(f"victim {', '.join(victims)} derived from the text")
    return Script(
        id=f"mirage-{language}-{slugify(folder.name)}",
        title=folder.name,
        language=language,
        victims=[Victim(name=v) for v in victims],
        characters=characters,
        clues=clues,
        acts=[Act(number=i, title=title if len(stages) > 1 else "")
              for i, title in enumerate(stages, 1)],
        truth=Truth(murderers=murderers, narrative=narrative,
                    kills=[Kill(victim=v, killers=murderers) for v in victims if murderers]),
        metadata=Metadata(source="mirage", source_path="/".join(folder.parts[-2:]),
                          player_count=len(characters), has_truth=bool(murderers),
                          notes=notes, derivations=derivations,
                          extra={RELEASE_PART_KEY: compared}),
    )


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


_HEADING = re.compile(r"^(?:the\s+)?(?:victim|deceased|suspect|murderer|culprit)s?$|"
                      r"^(?:死者|被害人|受害者|嫌疑人|凶手)$", re.IGNORECASE)


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
    of the description. Text that is not such a list is returned as prose, untouched."""
    relationships: list[Relationship] = []
    for line in text.splitlines():
        match = _HEADER.match(line)
        who = _WHO.match(match.group(1).strip()) if match else None
        if who and _HEADING.match(who.group(1).strip()) and match.group(2).strip():
            relationships.append(_headed(who.group(1).strip(), match.group(2).strip()))
        elif who:
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


# --- truth ---------------------------------------------------------------------------------

def _truth_text(folder: Path, notes: list[str]) -> str:
    """The prose for this script from ``<lang>/Truth.json``, matching titles loosely
    (``Artical 22 School Rules`` is ``Article 22 School Rules`` there)."""
    path = folder.parent / "Truth.json"
    if not path.is_file():
        notes.append("no Truth.json beside the script folder: no truth prose")
        return ""
    data = expect(read_json(path)[0], dict, path, "(top level)")

    def key(title: str) -> str:
        return re.sub(r"\W+", "", name_key(title))

    keys = {key(title): title for title in data}
    match = keys.get(key(folder.name))
    if match is None:
        close = difflib.get_close_matches(key(folder.name), list(keys), n=1, cutoff=0.75)
        match = keys[close[0]] if close else None
    if match is None:
        notes.append(f"Truth.json has no entry for {folder.name!r}: no truth prose")
        return ""
    if match != folder.name:
        notes.append(f"truth prose found under the title {match!r}")
    return text_of(data[match], path, match).strip()


def evidence(text: str, people: list[str], characters: list[Character]) -> str:
    """The sentence of ``text`` a derived fact about ``people`` was read from."""
    spellings = {s for c in characters if c.name in people for s in c.all_names} | set(people)
    return evidence_sentence([_without_abbreviations(text)], spellings)


@lru_cache(maxsize=1)
def _release() -> list[dict[str, Any]]:
    source = resources.files("jubensha.scripts.importers").joinpath("data/mirage_release.yaml")
    return yaml.safe_load(source.read_text(encoding="utf-8"))["scripts"]


def release_culprits(title: str, language: str, names: Names) -> tuple[str, list[str]] | None:
    """The release's code's class for the script titled ``title`` and the culprits it
    hard-codes, as this script's characters; None for a script the release does not have."""
    key = re.sub(r"\W+", "", name_key(title))
    for entry in _release():
        if any(re.sub(r"\W+", "", name_key(t)) == key for t in entry["titles"]):
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
    return [Derivation(fact="culprits_release", value=culprits,
                       source=f"ScriptEnvs/{kind}.py of the MIRAGE release",
                       method="the culprit list the release's code hard-codes")]


def _spellings(characters: list[Character]) -> dict[str, str]:
    """Every spelling of every character (with ``Dr`` for ``Doctor``) to its name."""
    out = {}
    for character in characters:
        for spelling in character.all_names:
            out[spelling] = character.name
            if spelling.startswith("Doctor "):
                out["Dr " + spelling[len("Doctor "):]] = character.name
    return out


def _without_abbreviations(text: str) -> str:
    """``Dr. Fang`` → ``Dr Fang`` so that the full stop does not end a sentence."""
    return re.sub(r"\b(Dr|Mr|Mrs|Ms|St)\.", r"\1", text)


def _name_pattern(spellings: dict[str, str]) -> str:
    alternatives = sorted(spellings, key=len, reverse=True)
    return "(" + "|".join(re.escape(s) if CJK.search(s) else rf"\b{re.escape(s)}\b"
                          for s in alternatives) + ")"


_WRAP = r"(?:\*\*|【|】|\[|\])?"
_DESIGNATIONS = [
    (r"(?:real|true|actual)\s+(?:successful\s+)?(?:murderer|culprit|killer)"
     r"(?:\s+(?:is|was)|\s*[-—–:,])+\s*{W}{N}"),
    r"{N}{W}\s+(?:is|was)\s+the\s+(?:real\s+|true\s+|actual\s+)?(?:murderer|culprit|killer)",
    r"{N}{W},?\s+as\s+the\s+embodiment\s+of\s+the\s+curse",
    (r"(?:real|true|actual)\s+(?:murderer|culprit|killer)\s+of\s+[^.;:]{1,60}?\s+"
     r"(?:is|was)\s*[-—–:,]?\s*{W}{N}"),
    r"{N}{W}\s+(?:is|was)\s+the\s+only\s+one\s+(?:with|who\s+had)\s+[^.]{0,60}?motive",
    r"真正(?:成功)?的凶手(?:是|就是|——|—|：|:)\s*{W}{N}",
    r"(?:杀害|杀死|害死)[^。，,；;]{1,12}的(?:真正的?)?凶手(?:是|就是|——|：|:)\s*{W}{N}",
    r"{N}{W}是唯一[^。]{0,30}动机",
    r"真凶(?:是|就是)\s*{W}{N}",
    r"凶手(?:就)?是\s*{W}{N}",
    r"{N}{W}作为诅咒本身",
]
_KILLED = re.compile(r"\b(?:killed|murdered|shot|stabbed|poisoned|strangled)\b|杀死|杀害|打死"
                     r"|刺死|毒死|枪杀|射杀|杀了|害死")
_NEGATED = re.compile(r"\b(?:not|never|no|n't|was|were|been|be|is|by)\b|n't|不|没|未|无|被")
_SELF = re.compile(r"\byou\b[^.?!;]{0,40}?\b(?:killed|murdered)\b|你杀(?:死|了|害)", re.IGNORECASE)


class Found(NamedTuple):
    """Who a rule found, how, and the text it was read from."""

    names: list[str]
    method: str = ""
    evidence: str = ""
    source: str = "truth"
    """'truth' (the truth prose) or 'script' (a character's own texts)."""


def derive_murderers(truth: str, characters: list[Character]) -> Found:
    """The characters the texts name as the murderer, by the first rule that finds any:

    1. the truth prose designates them ("the real murderer - John", "the real murderer of
       Director Li is 【Y】", "Y was the only one with a strong motive", "真正的凶手——约翰",
       "杀害X的凶手是Y", "Fuqing Huang, as the embodiment of the curse", "【皇甫青】作为诅咒本身");
    2. a truth sentence makes them the subject of a completed kill ("Dr. Fang killed Yao
       Mengren", "【方医生】…打死【姚孟仁】"): a character name followed within 40
       characters of the same sentence by killed/shot/打死/杀害..., with no negation,
       passive or "by" in between;
    3. their own Purpose says they killed ("Conceal the fact that you killed the
       victim", "隐瞒掉你杀死被害者的事实").

    Within a rule the most often named win (several on a tie). Empty when no rule finds
    one: nothing is guessed.
    """
    spellings = _spellings(characters)
    names = _name_pattern(spellings)
    truth = _without_abbreviations(truth)
    found: Counter[str] = Counter()
    first: dict[str, str] = {}
    for pattern in _DESIGNATIONS:
        regex = re.compile(pattern.replace("{N}", names).replace("{W}", _WRAP), re.IGNORECASE)
        for match in regex.finditer(truth):
            if match.group(1) in spellings:
                who = spellings[match.group(1)]
                found[who] += 1
                first.setdefault(who, _sentence_at(truth, match.start()))
    if found:
        return _top(found, characters, "the truth text designates the culprit", first)
    found, first = _kill_subjects(truth, names, spellings)
    if found:
        return _top(found, characters, "the subject of a completed kill in the truth text",
                    first)
    for character in characters:
        for text in [character.mission, *(g for s in character.acts for g in s.goals)]:
            if _SELF.search(text):
                found[character.name] += 1
                first.setdefault(character.name, text)
    if found:
        return _top(found, characters, "the character's own purpose says it killed", first,
                    source="script")
    return Found([])


def _top(found: Counter[str], characters: list[Character], method: str,
         first: dict[str, str], source: str = "truth") -> Found:
    top = max(found.values())
    names = [c.name for c in characters if found.get(c.name) == top]
    return Found(names, method, shorten(" ".join(first.get(names[0], "").split()), 400),
                 source)


def _sentence_at(text: str, position: int) -> str:
    start = max(text.rfind(end, 0, position) for end in ".!?。！？\n") + 1
    ends = [i for i in (text.find(end, position) for end in ".!?。！？\n") if i >= 0]
    return text[start:(min(ends) + 1 if ends else len(text))]


def _kill_subjects(truth: str, names: str, spellings: dict[str, str]
                   ) -> tuple[Counter[str], dict[str, str]]:
    found: Counter[str] = Counter()
    first: dict[str, str] = {}
    for sentence in re.split(r"(?<=[.!?。！？\n])", truth):
        for match in re.finditer(names, sentence):
            verb = _KILLED.search(sentence, match.end(), match.end() + 40)
            if verb and not _NEGATED.search(sentence[match.end(): verb.start()]):
                who = spellings[match.group(1)]
                found[who] += 1
                first.setdefault(who, sentence)
    return found, first


_DECEASED = re.compile(r"^\s*(?:\(.*?\)\s*)?(?:the\s+)?(?:deceased|victim|死者|被害人|受害者)",
                       re.IGNORECASE)
_CAPITALISED = (r"(?<![\w'’])(?!(?:After|Before|When|Since|Until|At|On|In|The|His|Her|Their|"
                r"Your|My|Our|Its|This|That|Upon|With|From|During|Following|As|If|But|And|"
                r"So|Then|Now|Although|While|Because|For|Of|To)\b)"
                r"(?:[A-Z][a-z]+ ){1,2}[A-Z][a-z]+")
_DEATH_OF = [r"{X}['’]s death", r"the death of {X}", r"{X}的死", r"{X}之死", r"{X}死在",
             r"{X}(?: had| has)? died", r"{X}被杀", r"{X}遇害", r"(?:杀害|杀死|枪杀)了?{X}",
             r"结束了{X}的生命", r"{X}的尸体", r"killed {X}", r"{X} was (?:killed|murdered|shot)"]


def derive_victims(truth: str, characters: list[Character], names: Names) -> list[str]:
    """The victim, by the first rule that finds one:

    1. a character's relationship list calls the person dead ("Xu Boqing: Deceased",
       "徐伯清:死者");
    2. the person whose death the characters' texts mention most ("Old Black's death",
       "刘奇死在了仓库", "Qi Liu had died"), else the truth prose does (it also tells
       older deaths, so it only decides when the scripts are silent), counting only names:
       relationship entries, 【bracketed】 names and English names of two or three
       capitalised words. The truth prose decides only when it tells that death at least
       twice: it tells side deaths of the backstory in passing ("the Party dissipated with
       the death of Lord Pingjiang"). A tie goes to the name found first.

    Characters are never victims. Empty when no rule finds one.
    """
    found = Counter(r.other for c in characters for r in c.relationships
                    if _DECEASED.match(r.description) and names.exact(r.other) is None)
    if found:
        return [found.most_common(1)[0][0]]
    texts = [t for c in characters
             for t in (c.mission, c.performance, c.story, c.extra.get("relationship_text", ""),
                       *(r.description for r in c.relationships), *(s.text for s in c.acts),
                       *(s.performance for s in c.acts), *(g for s in c.acts for g in s.goals))]
    people = {r.other for c in characters for r in c.relationships}
    people |= {m for t in [truth, *texts] for m in re.findall(r"【([^【】\s]{2,12})】", t)}
    people |= killed_names([truth, *texts])
    named = "|".join(re.escape(p) for p in sorted(people, key=len, reverse=True))
    pattern = f"({named + '|' if named else ''}{_CAPITALISED})"
    for group, least in ((texts, 1), ([truth], 2)):
        for text in group:
            for template in _DEATH_OF:
                for match in re.finditer(template.replace("{X}", pattern), text):
                    if names.exact(match.group(1)) is None:
                        found[match.group(1)] += 1
        best = found.most_common(1)
        if best and best[0][1] >= least:
            return [best[0][0]]
        found.clear()
    return []
