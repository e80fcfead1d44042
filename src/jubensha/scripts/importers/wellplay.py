"""WellPlay (PLAYER* paper): ``json/script_info.json``, ``json/<Character>.json`` and the
question files ``final_result/<Character>.csv`` and ``FSA.csv``/``GM.csv``.

Mapping (docs/script-format.md has the full table): ``script[0]`` is the story and later
entries act sheets; ``acts_goal`` the mission per act; ``is_murderer`` the side;
``victims`` + ``kill_by_me`` the kills. Victims are aligned by position, because the
characters of one script spell the same victim differently (``Bao Liu``, ``嫂子(Bao Liu)``);
the most common spelling names the victim and each character keeps its own list in
``extra["victim_names"]``. A victim nobody at the table killed (Ghost Revenge's Xia
Bolong) goes to ``truth.killed_offstage``.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jubensha.llm.text import HAN
from jubensha.safeload import one_line
from jubensha.scripts.importers.common import (
    CJK,
    Names,
    answer_letters,
    expect,
    fail,
    language_of,
    read_json,
    read_text,
    slugify,
    split_items,
    split_parenthetical,
    text_list,
    text_of,
)
from jubensha.scripts.importers.truth import Asked, Passage, derive_truth
from jubensha.scripts.model import (
    Act,
    ActSheet,
    Aspect,
    Character,
    ChoiceCategory,
    ChoiceQuestion,
    Derivation,
    Kill,
    Metadata,
    QuestionSets,
    Script,
    Truth,
    Victim,
)

CATEGORIES: dict[str, ChoiceCategory] = {"a": "objective", "b": "reasoning", "c": "relations"}
FULL_ACCESS_FILES = ("FSA.csv", "GM.csv")
OPTION_COLUMNS = ("a", "b", "c", "d", "e")
_TRUTH_KEYS = ("victims", "kill_by_me", "is_murderer")
_KNOWN_KEYS = {"script", "acts_goal", "victims", "kill_by_me", "is_murderer", "final_goal",
               "acts_performance", "secrets", "questions", "acts_num"}


def discover_wellplay(root: Path) -> list[Path]:
    """Every folder under ``root`` that holds ``json/script_info.json``."""
    return sorted(p.parent.parent for p in root.rglob("script_info.json")
                  if p.parent.name == "json")


def import_wellplay(src: Path) -> Script:
    folder = src.parent.parent if src.is_file() else src
    info_path = folder / "json" / "script_info.json"
    if not info_path.is_file():
        raise fail(folder, "(folder)", "no json/script_info.json: not a WellPlay script folder")
    info = expect(read_json(info_path)[0], dict, info_path, "(top level)")
    listed = _listed_characters(info, info_path, folder)
    raws = {name: _read_character(folder / "json" / f"{name}.json") for name in listed}
    language = language_of(folder, *(" ".join(text_list(r.get("script"), r["__path__"],
                                                        "script")) for r in raws.values()))
    per_index = _victims(raws)
    victims = [Victim(name=name) for name in dict.fromkeys(per_index)]
    characters = [_character(name, raw, per_index) for name, raw in raws.items()]
    acts = _act_count(info, raws, info_path)
    names = Names(c.name for c in characters)
    for character in characters:
        for alias in character.aliases:
            names.add_alias(alias, character.name)
    notes: list[str] = []
    questions = _questions(folder, characters, names, notes)
    _add_question_aliases(characters, names, {v.name for v in victims}, questions)
    derivations: list[Derivation] = []
    if not any(key in raw for raw in raws.values() for key in _TRUTH_KEYS):
        victims, derivations = _derive(characters, questions, language, notes)
    script = Script(
        id=f"wellplay-{language}-{slugify(folder.name)}",
        title=text_of(info.get("script_name"), info_path, "script_name") or folder.name,
        language=language,
        victims=victims,
        characters=characters,
        acts=[Act(number=n) for n in range(1, acts + 1)],
        truth=_truth(characters, victims),
        questions=QuestionSets(choice=questions),
        metadata=Metadata(source="wellplay", source_path=f"{folder.parent.name}/{folder.name}",
                          player_count=len(characters), notes=notes,
                          derivations=derivations,
                          has_truth=any(c.side == "murderer" for c in characters)),
        extra={k: v for k, v in info.items() if k not in ("script_name", "character_name")},
    )
    if script.truth is None:
        script.metadata.notes.append("no character is marked is_murderer: no truth")
    return script


def _listed_characters(info: dict, info_path: Path, folder: Path) -> list[str]:
    if "character_name" not in info:
        files = sorted(p.stem for p in (folder / "json").glob("*.json") if p != info_path)
        if not files:
            raise fail(info_path, "character_name", "missing, and json/ has no character files")
        return files
    names = [text_of(n, info_path, f"character_name[{i}]")
             for i, n in enumerate(expect(info["character_name"], list, info_path,
                                          "character_name"))]
    if not names:
        raise fail(info_path, "character_name", "empty: a script needs characters")
    for i, name in enumerate(names):
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
            raise fail(info_path, f"character_name[{i}]",
                       f"{one_line(name, 80)!r} is not a plain file name (each character is "
                       "read from json/<name>.json, inside the script's folder)")
    return names


def _read_character(path: Path) -> dict[str, Any]:
    """A character's file; one that is there but no regular file (a FIFO, a folder) is
    reported as what it is by the bounded reader, not as missing."""
    if not os.path.lexists(path):
        raise fail(path, "(file)", "no such file (the character is listed in "
                                   "script_info.json character_name)")
    raw = expect(read_json(path)[0], dict, path, "(top level)")
    raw["__path__"] = path
    return raw


def _flags(raw: dict, field: str, length: int) -> list[bool]:
    path = raw["__path__"]
    values = expect(raw.get(field, [0] * length), list, path, field)
    if len(values) != length:
        raise fail(path, field, f"has {len(values)} entries for {length} victims")
    return [_flag(v, path, f"{field}[{i}]") for i, v in enumerate(values)]


def _flag(value: Any, path: Path, field: str) -> bool:
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return value.strip() == "1"
    raise fail(path, field, f"expected 0 or 1, found {value!r}")


def _victims(raws: dict[str, dict]) -> list[str]:
    """The victim at each position of the characters' lists, by its most common spelling
    (ties: the first character's)."""
    spellings: list[Counter[str]] = []
    for raw in raws.values():
        names = text_list(raw.get("victims"), raw["__path__"], "victims")
        raw["__victims__"] = names
        for i, name in enumerate(names):
            if len(spellings) <= i:
                spellings.append(Counter())
            spellings[i][name.strip()] += 1
    return [counter.most_common(1)[0][0] for counter in spellings]


def _character(name: str, raw: dict, canonical: Sequence[str]) -> Character:
    path = raw["__path__"]
    main, alternatives = split_parenthetical(name)
    texts = text_list(raw.get("script"), path, "script")
    goals = text_list(raw.get("acts_goal"), path, "acts_goal")
    performance = text_list(raw.get("acts_performance"), path, "acts_performance")
    own = raw["__victims__"]
    killed = [canonical[i] for i, k in enumerate(_flags(raw, "kill_by_me", len(own))) if k]
    murderer = _flag(raw["is_murderer"], path, "is_murderer") if "is_murderer" in raw \
        else bool(killed)
    extra: dict[str, Any] = {k: v for k, v in raw.items()
                             if k not in _KNOWN_KEYS and not k.startswith("__")}
    if raw.get("questions"):
        extra["questions"] = raw["questions"]
    if own != list(canonical[: len(own)]):
        extra["victim_names"] = own
    secrets = raw.get("secrets")
    return Character(
        name=main,
        aliases=[name, *alternatives] if alternatives else [],
        side="murderer" if murderer else "civilian",
        mission=goals[0].strip() if goals else "",
        story=texts[0].strip() if texts else "",
        performance=performance[0].strip() if performance else "",
        final_goals=split_items(text_of(raw.get("final_goal"), path, "final_goal")),
        secrets=[s for s in text_list(secrets, path, "secrets") if s.strip()],
        acts=_act_sheets(texts, goals, performance),
        killed=killed,
        extra=extra,
    )


def _act_sheets(texts: list[str], goals: list[str], performance: list[str]) -> list[ActSheet]:
    sheets = []
    for act in range(2, max(len(texts), len(goals), len(performance)) + 1):
        sheet = ActSheet(act=act, text=_at(texts, act).strip(),
                         goals=[g for g in [_at(goals, act).strip()] if g],
                         performance=_at(performance, act).strip())
        if sheet.text or sheet.goals or sheet.performance:
            sheets.append(sheet)
    return sheets


def _at(items: list[str], act: int) -> str:
    return items[act - 1] if len(items) >= act else ""


def _act_count(info: dict, raws: dict[str, dict], info_path: Path) -> int:
    counts = [1]
    if "acts_num" in info:
        counts.append(expect(info["acts_num"], int, info_path, "acts_num"))
    for raw in raws.values():
        for field in ("script", "acts_goal", "acts_performance"):
            counts.append(len(text_list(raw.get(field), raw["__path__"], field)))
    return max(counts)


def _truth(characters: list[Character], victims: list[Victim]) -> Truth | None:
    murderers = [c.name for c in characters if c.side == "murderer"]
    if not murderers:
        return None
    kills, offstage = [], []
    for victim in victims:
        killers = [c.name for c in characters if victim.name in c.killed]
        if killers:
            kills.append(Kill(victim=victim.name, killers=killers))
        else:
            offstage.append(victim.name)
    return Truth(murderers=murderers, kills=kills, killed_offstage=offstage)


def _derive(characters: list[Character], questions: list[ChoiceQuestion], language: str,
            notes: list[str]) -> tuple[list[Victim], list[Derivation]]:
    """Victims and murderers weighed from the sheets and the questions, for a script
    whose files have no ``victims``/``kill_by_me``/``is_murderer``: the murderers are
    marked and kill every victim."""
    passages = [Passage(text, f"json/{c.name}.json", "character", owner=c.name)
                for c in characters
                for text in (c.story, c.mission, c.performance, *c.final_goals, *c.secrets,
                             *(t for s in c.acts for t in (s.text, *s.goals, s.performance)))
                if text.strip()]
    asked = [Asked(q.question, tuple(q.options[a] for a in q.answer if a in q.options),
                   q.source.split(":")[0]) for q in questions if q.answer]
    culprit, dead = derive_truth(passages, asked, characters, language)
    for character in characters:
        if character.name in culprit.names:
            character.side, character.killed = "murderer", list(dead.names)
    notes.append("the files have no victims, kill_by_me or is_murderer: the truth is "
                 "weighed from the texts")
    notes += [culprit.note(), dead.note()]
    derivations = [found.derivation("json/") for found in (culprit, dead) if found.candidates]
    return [Victim(name=v) for v in dead.names], derivations


# --- questions ---------------------------------------------------------------------------

def _questions(folder: Path, characters: list[Character], names: Names,
               notes: list[str]) -> list[ChoiceQuestion]:
    results = folder / "final_result"
    if not results.is_dir():
        notes.append("no final_result/ folder: no questions")
        return []
    questions: list[ChoiceQuestion] = []
    order = {c.name: i for i, c in enumerate(characters)}
    files = sorted(results.glob("*.csv"),
                   key=lambda p: (p.name in FULL_ACCESS_FILES,
                                  order.get(names.exact(p.stem) or "", len(order)), p.name))
    for path in files:
        if path.name in FULL_ACCESS_FILES:
            questions += _read_csv(path, "fsa", "fsa", None, notes)
            continue
        who = names.exact(path.stem)
        if who is None:
            notes.append(f"final_result/{path.name} names no character: imported as set "
                         f"{slugify(path.stem)!r} for any player")
        prefix = f"wellplay-{slugify(who or path.stem)}"
        questions += _read_csv(path, "wellplay" if who else slugify(path.stem), prefix, who,
                               notes)
    return questions


def _read_csv(path: Path, set_name: str, prefix: str, asked_of: str | None,
              notes: list[str]) -> list[ChoiceQuestion]:
    rows = list(csv.reader(read_text(path).splitlines()))
    if not rows:
        return []
    header = [h.strip().lower() for h in rows[0]]
    if "question" not in header:
        raise fail(path, "question", f"missing column (columns: {', '.join(header)})")
    out: list[ChoiceQuestion] = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        fields = _fields(header, row, path, line, notes)
        if not fields.get("question", "").strip():
            notes.append(f"final_result/{path.name} line {line}: the question text is empty")
        out.append(_question(fields, path, line, set_name, f"{prefix}-{len(out) + 1:03d}",
                             asked_of))
    return out


def _fields(header: list[str], row: list[str], path: Path, line: int,
            notes: list[str]) -> dict[str, str]:
    """Cells by column. A row one cell short lost an empty option, so its last cell is the
    truth; a lone answer letter in the last option column of a row with no truth is the
    truth shifted left (both occur in Ghost Revenge's files)."""
    while len(row) > len(header) and not row[-1].strip():
        row = row[:-1]
    if len(row) > len(header):
        raise fail(path, f"line {line}", f"{len(row)} cells for {len(header)} columns")
    fields = dict(zip(header, row))
    if len(row) < len(header) and "truth" in header and len(row) > header.index("question"):
        fields = dict(zip(header, row[:-1]))
        fields["truth"] = row[-1]
        notes.append(f"final_result/{path.name} line {line}: short row, last cell read as "
                     "the truth")
    if not fields.get("truth", "").strip():
        filled = [c for c in OPTION_COLUMNS if fields.get(c, "").strip()]
        last = filled[-1] if filled else None
        if last and re.fullmatch(r"[a-e]", fields[last].strip().lower()) \
                and fields[last].strip().lower() in filled[:-1]:
            fields["truth"] = fields.pop(last)
            notes.append(f"final_result/{path.name} line {line}: answer letter found in "
                         f"option column {last!r}, read as the truth")
    return fields


def _question(fields: dict[str, str], path: Path, line: int, set_name: str, qid: str,
              asked_of: str | None) -> ChoiceQuestion:
    text = fields.get("question", "").strip()
    options = {c: fields[c].strip() for c in OPTION_COLUMNS if fields.get(c, "").strip()}
    if not options:
        raise fail(path, f"line {line}.a", "a question without options")
    category = CATEGORIES.get(fields.get("value", "").strip().lower())
    return ChoiceQuestion(
        id=qid, question=text, options=options,
        answer=answer_letters(fields.get("truth", "")),
        multiple=fields.get("type", "").strip().lower() == "b",
        category=category, aspect=infer_aspect(text, category), asked_of=asked_of,
        set=set_name, source=f"final_result/{path.name}:{line}",
    )


_ASPECTS: list[tuple[Aspect, re.Pattern[str]]] = [
    ("relationship", re.compile(r"relationship|perpetrator is the victim|关系|是被害人.*什么人"
                                r"|是死者的什么人", re.IGNORECASE)),
    ("suspect", re.compile(r"suspect|怀疑", re.IGNORECASE)),
    ("who", re.compile(r"\bwho\b.*\b(?:kill|murder|killer|murderer|culprit)|被谁|谁杀"
                       r"|凶手是谁|是谁杀|谁是凶手|杀人狂是谁", re.IGNORECASE)),
    ("why", re.compile(r"\bmotive\b|\bwhy\b|动机|为什么|为何", re.IGNORECASE)),
    ("how", re.compile(r"\bhow\b.*\b(?:die|died|killed|murdered)\b|怎么死|如何死|怎样死|死因"
                       r"|手法", re.IGNORECASE)),
    ("where", re.compile(r"\bwhere\b|在哪|哪里|地点", re.IGNORECASE)),
    ("when", re.compile(r"\bwhen\b|什么时候|何时|几点", re.IGNORECASE)),
]


def infer_aspect(question: str, category: ChoiceCategory | None) -> Aspect | None:
    """The aspect a question asks about, where its wording makes it plain; None otherwise.
    Relations questions are about a relationship by definition."""
    if category == "relations":
        return "relationship"
    return next((aspect for aspect, pattern in _ASPECTS if pattern.search(question)), None)


# --- aliases used by the question files --------------------------------------------------

_SLOTS = [re.compile(r"between (.+?) and (.+?)\?"), re.compile(r"【([^【】]+)】和【([^【】]+)】")]
_PAIRS = [re.compile(r"([A-Z][\w'’.]*(?: [A-Z][\w'’.]*){0,3})\s*[(（【]\s*"
                     r"([A-Z][\w'’.]*(?: [A-Z][\w'’.]*){0,3})\s*[)）】]"),
          re.compile(f"【?([{HAN}·•]{{2,5}})】?\\s*[(（]([{HAN}·•]{{2,5}})[)）]")]
_NOT_NAMES = {"you", "your", "me", "你", "您", "我", "自己"}


def _add_question_aliases(characters: list[Character], names: Names, victims: set[str],
                          questions: list[ChoiceQuestion]) -> None:
    """Names the questions use for a character: ``Anqi (Lan Qin)``/``【阿明】(李骆明)``
    pairs where one side is exactly a character and the other a name of two or more words
    (or Chinese), and English relation-question names that are a near miss of exactly one
    character (``Manager Xi``, ``Yu Zhu Chengmu``). Chinese near misses are not used here:
    王小工 is 王船工's son, not a typo. Names of victims or characters are never aliases."""
    texts = [t for q in questions for t in (q.question, *q.options.values())]
    found: list[tuple[str, str]] = []
    for text in texts:
        for pattern in _PAIRS:
            for a, b in pattern.findall(text):
                for known, other in ((a, b), (b, a)):
                    who = names.exact(known)
                    if who and names.exact(other) is None and _name_like(other, victims) \
                            and (CJK.search(other) or " " in other.strip()):
                        found.append((other.strip(), who))
        for pattern in _SLOTS:
            for slot in (s for pair in pattern.findall(text) for s in pair):
                slot = slot.strip()
                if names.exact(slot) is None and _name_like(slot, victims) \
                        and not CJK.search(slot):
                    who = names.resolve(slot)
                    if who:
                        found.append((slot, who))
    by_name = {c.name: c for c in characters}
    for alias, who in found:
        if names.exact(alias) is None:
            names.add_alias(alias, who)
            by_name[who].aliases.append(alias)


def _name_like(text: str, victims: set[str]) -> bool:
    stripped = text.strip()
    return bool(stripped) and stripped.casefold() not in _NOT_NAMES \
        and stripped not in victims and len(stripped) <= 40 and not re.search(r"[?？,，。]", text)
