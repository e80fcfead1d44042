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
from pathlib import Path
from typing import Any

from jubensha.scripts.importers.common import (
    CJK,
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
from jubensha.scripts.model import (
    PUBLIC,
    Act,
    ActSheet,
    Character,
    Clue,
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
    stages = _stages(expect(read_json(script_path)[0], dict, script_path, "(top level)"),
                     script_path)
    notes: list[str] = []
    characters = _characters(stages, script_path)
    names = Names(c.name for c in characters)
    for character in characters:
        for alias in character.aliases:
            names.add_alias(alias, character.name)
    clues = _clues(clues_path, names, notes) if clues_path.is_file() else []
    if not clues_path.is_file():
        notes.append(f"no {clues_path.name}: no clues")
    language = language_of(folder, *(c.story[:1000] for c in characters))
    narrative = _truth_text(folder, notes)
    murderers = derive_murderers(narrative, characters)
    victims = derive_victims(narrative, characters, names)
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
                          notes=notes),
    )


def _stages(data: dict, path: Path) -> dict[str, dict[str, dict]]:
    """``{stage title: {character: parts}}``; a one-stage script gets the title ``""``."""
    if data and all(_STAGE.match(k) for k in data):
        stages = {k: expect(v, dict, path, k) for k, v in data.items()}
    else:
        stages = {"": data}
    for title, cast in stages.items():
        for name, parts in cast.items():
            expect(parts, dict, path, f"{title}.{name}".strip("."))
    if not any(stages.values()):
        raise fail(path, "(top level)", "no characters")
    return stages


def _part(parts: dict, key: str, path: Path, field: str) -> str:
    for source, part in PARTS.items():
        if part == key and source in parts:
            return text_of(parts[source], path, f"{field}.{source}").strip()
    return ""


def _characters(stages: dict[str, dict[str, dict]], path: Path) -> list[Character]:
    order = list(dict.fromkeys(name for cast in stages.values() for name in cast))
    return [_character(name, stages, path) for name in order]


def _character(name: str, stages: dict[str, dict[str, dict]], path: Path) -> Character:
    sheets: list[ActSheet] = []
    previous: dict[str, str] = {}
    first: dict[str, str] = {}
    extra: dict[str, Any] = {}
    for act, (title, cast) in enumerate(stages.items(), 1):
        parts = cast.get(name)
        if parts is None:
            continue
        field = f"{title}.{name}".strip(".")
        now = {key: _part(parts, key, path, field) for key in set(PARTS.values())}
        extra.update({k: v for k, v in parts.items() if k not in PARTS})
        if not first:
            first = now
            sheets.append(ActSheet(act=act, text=now["Script"]))
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
                     aliases=aliases if main != name else [], extra=extra)


_HEADER = re.compile(r"^\s*(?:\d{1,2}\s*[.、．]\s*)?([^:：。.!?！？\n]{1,40}?)\s*[:：](?!\d)\s*(.*)$")
_WHO = re.compile(r"^(.+?)\s*(?:[(（]([^()（）]*)[)）])?\s*(?:[,，]\s*(.+))?$")


def parse_relationships(text: str) -> tuple[list[Relationship], str]:
    """``Name (role), title: description`` lines (numbered or not; a description may run
    over the following lines) as relationships, the bracket and title kept at the start
    of the description. Text that is not such a list is returned as prose, untouched."""
    relationships: list[Relationship] = []
    for line in text.splitlines():
        match = _HEADER.match(line)
        who = _WHO.match(match.group(1).strip()) if match else None
        if who:
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

def _clues(path: Path, names: Names, notes: list[str]) -> list[Clue]:
    data = expect(read_json(path)[0], dict, path, "(top level)")
    clues: list[Clue] = []
    for key, value in data.items():
        if isinstance(value, dict):
            items = [(text_of(t, path, key), text_of(v, path, f"{key}.{t}"))
                     for t, v in value.items()]
        elif isinstance(value, list):
            items = [("", text_of(v, path, f"{key}[{i}]")) for i, v in enumerate(value)]
        else:
            items = [("", text_of(value, path, key))]
        clues += _clue_group(key, items, isinstance(value, dict), names, notes)
    ids = unique_ids(c.id for c in clues)
    for clue, cid in zip(clues, ids):
        clue.id = cid
    return clues


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
    r"真正(?:成功)?的凶手(?:是|就是|——|—|：|:)\s*{W}{N}",
    r"真凶(?:是|就是)\s*{W}{N}",
    r"凶手(?:就)?是\s*{W}{N}",
    r"{N}{W}作为诅咒本身",
]
_KILLED = re.compile(r"\b(?:killed|murdered|shot|stabbed|poisoned|strangled)\b|杀死|杀害|打死"
                     r"|刺死|毒死|枪杀|射杀|杀了|害死")
_NEGATED = re.compile(r"\b(?:not|never|no|n't|was|were|been|be|is|by)\b|n't|不|没|未|无|被")
_SELF = re.compile(r"\byou\b[^.?!;]{0,40}?\b(?:killed|murdered)\b|你杀(?:死|了|害)", re.IGNORECASE)


def derive_murderers(truth: str, characters: list[Character]) -> list[str]:
    """The characters the texts name as the murderer, by the first rule that finds any:

    1. the truth prose designates them ("the real murderer - John", "真正的凶手——约翰",
       "Fuqing Huang, as the embodiment of the curse", "【皇甫青】作为诅咒本身");
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
    for pattern in _DESIGNATIONS:
        regex = re.compile(pattern.replace("{N}", names).replace("{W}", _WRAP), re.IGNORECASE)
        found.update(spellings[m.group(1)] for m in regex.finditer(truth)
                     if m.group(1) in spellings)
    if not found:
        found = _kill_subjects(truth, names, spellings)
    if not found:
        found.update(c.name for c in characters
                     for text in [c.mission, *(g for s in c.acts for g in s.goals)]
                     if _SELF.search(text))
    if not found:
        return []
    top = max(found.values())
    return [c.name for c in characters if found.get(c.name) == top]


def _kill_subjects(truth: str, names: str, spellings: dict[str, str]) -> Counter[str]:
    found: Counter[str] = Counter()
    for sentence in re.split(r"(?<=[.!?。！？\n])", truth):
        for match in re.finditer(names, sentence):
            verb = _KILLED.search(sentence, match.end(), match.end() + 40)
            if verb and not _NEGATED.search(sentence[match.end(): verb.start()]):
                found[spellings[match.group(1)]] += 1
    return found


_DECEASED = re.compile(r"^\s*(?:\(.*?\)\s*)?(?:the\s+)?(?:deceased|victim|死者|被害人|受害者)",
                       re.IGNORECASE)
_CAPITALISED = (r"(?<![\w'’])(?!(?:After|Before|When|Since|Until|At|On|In|The|His|Her|Their|"
                r"Your|My|Our|Its|This|That|Upon|With|From|During|Following|As|If|But|And|"
                r"So|Then|Now|Although|While|Because|For|Of|To)\b)"
                r"(?:[A-Z][a-z]+ ){1,2}[A-Z][a-z]+")
_DEATH_OF = [r"{X}['’]s death", r"the death of {X}", r"{X}的死", r"{X}之死", r"{X}死在",
             r"{X}(?: had| has)? died", r"{X}被杀", r"{X}遇害"]


def derive_victims(truth: str, characters: list[Character], names: Names) -> list[str]:
    """The victim, by the first rule that finds one:

    1. a character's relationship list calls the person dead ("Xu Boqing: Deceased",
       "徐伯清:死者");
    2. the person whose death the characters' texts mention most ("Old Black's death",
       "刘奇死在了仓库", "Qi Liu had died"), else the truth prose does (it also tells
       older deaths, so it only decides when the scripts are silent), counting only names:
       relationship entries, 【bracketed】 names and English names of two or three
       capitalised words.

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
    named = "|".join(re.escape(p) for p in sorted(people, key=len, reverse=True))
    pattern = f"({named + '|' if named else ''}{_CAPITALISED})"
    for group in (texts, [truth]):
        for text in group:
            for template in _DEATH_OF:
                for match in re.finditer(template.replace("{X}", pattern), text):
                    if names.exact(match.group(1)) is None:
                        found[match.group(1)] += 1
        if found:
            break
    return [found.most_common(1)[0][0]] if found else []
