"""WhodunitBench: ``env_p_all.json`` (roles, truth, clue pool, question sets) and the clue
card images in ``img/``.

Questions carry their options inside the text ("...？a. 2:30 b. 2:45"); they are split
with ``parse_options``. A key clue question's ``source`` code ("p-2", "旅人+米里奥-2")
ends in the number of reasoning steps it needs (supplementary material, figure 6); a
code without a number ("p", "l") leaves ``steps`` unset. The ``N-step`` lists of the clue
pool are the reasoning chain, step by step. There is no victim field: the victim is weighed
from the texts and the questions (``truth.derive_truth``), and so is the murderer where
neither ``murder`` nor a role's ``m`` flag names one; below the margin, none is derived
and a note names the candidates.
Variant copies (``env_p_update*.json``, ``env_p.json``) are earlier drafts of
``env_p_all.json`` with fewer question sets and are not read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jubensha.scripts.importers.common import (
    Names,
    answer_letters,
    expect,
    fail,
    language_of,
    parse_options,
    read_json,
    slugify,
    split_items,
    text_of,
    unique_ids,
)
from jubensha.scripts.importers.truth import Asked, Passage, derive_truth
from jubensha.scripts.importers.truth_evidence import Kind
from jubensha.scripts.model import (
    PUBLIC,
    Character,
    ChoiceQuestion,
    Clue,
    Derivation,
    Kill,
    Metadata,
    QuestionSets,
    Script,
    Truth,
    Victim,
)

MAIN_FILE = "env_p_all.json"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
QUESTION_SETS = (("ei_q", "ei"), ("cxi_q", "cxi"))
_STEP_KEY = re.compile(r"^(\d+)-step$")
_ROLE_KEYS = {"name", "back", "self", "m", "r_q", "q", "a", "answer"}
_TOP_KEYS = {"role", "murder", "reason", "task_nm", "task_m", "key_role", "role-q",
             "public_clue", "key_clues_pool", "key_clues_questions", "key_clue_q", "ei_q",
             "cxi_q", "ju_name"}


def discover_whodunitbench(root: Path) -> list[Path]:
    """Every folder under ``root`` that holds ``env_p_all.json``."""
    return sorted(p.parent for p in root.rglob(MAIN_FILE))


def import_whodunitbench(src: Path) -> Script:
    folder = src.parent if src.is_file() else src
    path = folder / MAIN_FILE
    if not path.is_file():
        raise fail(folder, "(folder)", f"no {MAIN_FILE}: not a WhodunitBench script folder")
    data = expect(read_json(path)[0], dict, path, "(top level)")
    notes: list[str] = []
    characters = _characters(data, path)
    names = Names(c.name for c in characters)
    clues = _pool_clues(data, names, path) + _public_clues(data, path) + _images(folder, notes)
    questions = _questions(data, characters, path, notes)
    language = language_of(folder, text_of(data.get("reason"), path, "reason"),
                           *(c.story[:500] for c in characters))
    culprit, dead = derive_truth(truth_passages(data, characters), asked(questions),
                                 characters, language)
    stated = _murderers(data, characters, names, path)
    murderers = stated or culprit.names
    victims = dead.names
    derivations = [Derivation(fact="murderers", value=stated, source=MAIN_FILE,
                              origin="field", confidence=1.0,
                              method="the murder field (and roles marked m: 1)",
                              evidence=f"murder: {data.get('murder', '')}"[:400])
                   ] if stated else [culprit.derivation(MAIN_FILE)] if culprit.candidates else []
    if dead.candidates:
        derivations.append(dead.derivation(MAIN_FILE))
    notes += ([] if stated else [culprit.note()]) + [dead.note()]
    for character in characters:
        if character.name in murderers:
            character.side, character.killed = "murderer", list(victims)
    chain, steps = _reasoning_chain(data, path)
    return Script(
        id=f"whodunitbench-{slugify(folder.name)}",
        title=text_of(data.get("ju_name"), path, "ju_name") or folder.name,
        language=language,
        victims=[Victim(name=v) for v in victims],
        characters=characters,
        clues=clues,
        truth=_truth(data, path, murderers, victims, chain),
        questions=QuestionSets(choice=questions),
        metadata=Metadata(source="whodunitbench", source_path=folder.name,
                          player_count=len(characters), notes=notes,
                          has_truth=bool(murderers), derivations=derivations),
        extra=_script_extra(data, steps),
    )


def _characters(data: dict, path: Path) -> list[Character]:
    roles = expect(data.get("role"), list, path, "role")
    if not roles:
        raise fail(path, "role", "empty: a script needs roles")
    task_m = text_of(data.get("task_m"), path, "task_m").strip()
    task_nm = text_of(data.get("task_nm"), path, "task_nm").strip()
    characters = []
    for i, role in enumerate(roles):
        role = expect(role, dict, path, f"role[{i}]")
        if not text_of(role.get("name"), path, f"role[{i}].name").strip():
            raise fail(path, f"role[{i}].name", "missing: every role needs a name")
        murderer = role.get("m") in (1, "1", True)
        extra = {k: v for k, v in role.items() if k not in _ROLE_KEYS}
        for key in ("self", "answer"):
            if text := text_of(role.get(key), path, f"role[{i}].{key}").strip():
                extra[key] = text
        characters.append(Character(
            name=text_of(role["name"], path, f"role[{i}].name").strip(),
            side="murderer" if murderer else "civilian",
            story=text_of(role.get("back"), path, f"role[{i}].back").strip(),
            mission=task_m if murderer else task_nm,
            extra=extra,
        ))
    return characters


def _murderers(data: dict, characters: list[Character], names: Names, path: Path) -> list[str]:
    """``murder`` names the murderer; without it, the roles flagged ``m``."""
    murder = text_of(data.get("murder"), path, "murder").strip()
    if not murder:
        return [c.name for c in characters if c.side == "murderer"]
    who = names.resolve(murder, chinese=True)
    if who is None:
        raise fail(path, "murder", f"{murder!r} is not the name of a role "
                                   f"({', '.join(names.names)})")
    return [who]


def _truth(data: dict, path: Path, murderers: list[str], victims: list[str],
           chain: list[str]) -> Truth | None:
    if not murderers:
        return None
    reason = text_of(data.get("reason"), path, "reason").strip()
    sections = split_reason(reason)
    return Truth(murderers=murderers,
                 kills=[Kill(victim=victim, killers=murderers, motive=sections["motive"],
                             method=sections["method"]) for victim in victims],
                 motive=sections["motive"], method=sections["method"],
                 narrative=sections["narrative"], reasoning_chain=chain)


_SECTION = re.compile(r"^[ \t　]*(作案动机|作案手法|动机|手法)\s*[:：]", re.MULTILINE)
"""A heading starts a line: 延时手法： inside a paragraph is text, not the method section."""


def split_reason(reason: str) -> dict[str, str]:
    """The truth text split at its ``作案动机：`` and ``作案手法：`` headings into motive and
    method; text outside the sections (or all of it, without headings) is the narrative."""
    parts = {"motive": "", "method": "", "narrative": ""}
    matches = list(_SECTION.finditer(reason))
    if not matches:
        parts["narrative"] = reason.strip()
        return parts
    parts["narrative"] = reason[: matches[0].start()].strip()
    for match, nxt in zip(matches, [*matches[1:], None]):
        key = "motive" if "动机" in match.group(1) else "method"
        body = reason[match.end(): nxt.start() if nxt else len(reason)].strip()
        parts[key] = "\n\n".join(x for x in (parts[key], body) if x)
    return parts


def _reasoning_chain(data: dict, path: Path) -> tuple[list[str], list[int]]:
    pool = expect(data.get("key_clues_pool", {}), dict, path, "key_clues_pool")
    chain: list[str] = []
    steps: list[int] = []
    keyed = sorted((int(m.group(1)), key) for key in pool if (m := _STEP_KEY.match(key)))
    for step, key in keyed:
        for i, fact in enumerate(expect(pool[key], list, path, f"key_clues_pool.{key}")):
            chain.append(text_of(fact, path, f"key_clues_pool.{key}[{i}]").strip())
            steps.append(step)
    return chain, steps


def _pool_clues(data: dict, names: Names, path: Path) -> list[Clue]:
    """Raw clues: ``p`` public; a role's name held by that role; anything else public,
    remembering who it is about in ``extra["about"]``."""
    pool = expect(data.get("key_clues_pool", {}), dict, path, "key_clues_pool")
    clues = []
    for key, items in pool.items():
        if _STEP_KEY.match(key):
            continue
        holder = PUBLIC if key == "p" else names.resolve(key, chinese=True)
        extra: dict[str, Any] = {"pool": key}
        if holder is None:
            holder, extra["about"] = PUBLIC, key
        for i, item in enumerate(expect(items, list, path, f"key_clues_pool.{key}")):
            clues.append(Clue(id=f"pool-{slugify(key)}-{i + 1}", holder=holder, key=True,
                              text=text_of(item, path, f"key_clues_pool.{key}[{i}]").strip(),
                              extra=extra))
    return clues


def _public_clues(data: dict, path: Path) -> list[Clue]:
    text = text_of(data.get("public_clue"), path, "public_clue")
    return [Clue(id=f"public-{i}", text=item) for i, item in enumerate(split_items(text), 1)]


def _images(folder: Path, notes: list[str]) -> list[Clue]:
    """Clue cards from ``img/``, in natural order (image_2 before image_10). Gaps in an
    ``image_N`` numbering are noted (DAMAIF has no image_1 upstream)."""
    img = folder / "img"
    if not img.is_dir():
        notes.append("no img/ folder: no image clues")
        return []
    links = sorted(p.name for p in img.iterdir() if p.is_symlink())
    if links:
        notes.append("img/ symlinks skipped (an image must be a file of the script): "
                     + ", ".join(links))
    files = sorted((p for p in img.iterdir()
                    if p.suffix.lower() in IMAGE_SUFFIXES and not p.is_symlink()),
                   key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)",
                                                                               p.name)])
    numbers = {int(m.group(1)) for p in files if (m := re.fullmatch(r"image_(\d+)", p.stem))}
    missing = sorted(set(range(1, max(numbers, default=0) + 1)) - numbers)
    if missing:
        notes.append("img/ has no " + ", ".join(f"image_{n}" for n in missing))
    ids = unique_ids(f"img-{slugify(p.stem)}" for p in files)
    return [Clue(id=cid, title=p.stem, text="", image=f"img/{p.name}")
            for cid, p in zip(ids, files)]


# --- questions ---------------------------------------------------------------------------

def _questions(data: dict, characters: list[Character], path: Path,
               notes: list[str]) -> list[ChoiceQuestion]:
    out: list[ChoiceQuestion] = []
    key = _key_questions(data, path)
    out += _make(key, "key_clues_questions", "kcq", None, path, notes)
    repeat = _set_pairs(data, "key_clue_q", path, with_source=True)
    if repeat and [_unnumbered(q) for q, _, _ in repeat] == [q for q, _, _ in key] \
            and [(a, s) for _, a, s in repeat] == [(a, s) for _, a, s in key]:
        notes.append("key_clue_q repeats key_clues_questions (numbered): imported once")
    else:
        out += _make(repeat, "key_clue_q", "kcq2", None, path, notes)
    for field, prefix in QUESTION_SETS:
        out += _make(_set_pairs(data, field, path), field, prefix, None, path, notes)
    for i, (character, role) in enumerate(zip(characters, data["role"])):
        pairs = [(text_of(x.get("q"), path, f"role[{i}].r_q[{j}].q"), x.get("ans"), "")
                 for j, x in enumerate(expect(role.get("r_q", []), list, path,
                                              f"role[{i}].r_q"))
                 if isinstance(x, dict)]
        prefix = f"role-{slugify(character.name)}"
        out += _make(pairs, "r_q", prefix, character.name, path, notes)
        listed = list(zip(expect(role.get("q", []), list, path, f"role[{i}].q"),
                          expect(role.get("a", []), list, path, f"role[{i}].a")))
        if listed and [(q, a) for q, a, _ in pairs] != listed:
            out += _make([(q, a, "") for q, a in listed], "q", f"{prefix}-q", character.name,
                         path, notes)
    return out


def _key_questions(data: dict, path: Path) -> list[tuple[str, Any, str]]:
    items = expect(data.get("key_clues_questions", []), list, path, "key_clues_questions")
    out = []
    for i, item in enumerate(items):
        item = expect(item, dict, path, f"key_clues_questions[{i}]")
        out.append((text_of(item.get("q"), path, f"key_clues_questions[{i}].q"),
                    item.get("ans"),
                    text_of(item.get("source"), path, f"key_clues_questions[{i}].source")))
    return out


def _set_pairs(data: dict, field: str, path: Path, *,
               with_source: bool = False) -> list[tuple[str, Any, str]]:
    """A ``{key_q: [...], key_ans: [...], key_sc: [...]}`` set as (question, answer, code)."""
    value = expect(data.get(field, {}), dict, path, field)
    questions = expect(value.get("key_q", []), list, path, f"{field}.key_q")
    answers = expect(value.get("key_ans", []), list, path, f"{field}.key_ans")
    codes = expect(value.get("key_sc", [""] * len(questions)), list, path, f"{field}.key_sc")
    if len(answers) != len(questions):
        raise fail(path, f"{field}.key_ans", f"{len(answers)} answers for {len(questions)} "
                                             "questions")
    if with_source and len(codes) != len(questions):
        raise fail(path, f"{field}.key_sc", f"{len(codes)} sources for {len(questions)} "
                                            "questions")
    return [(text_of(q, path, f"{field}.key_q[{i}]"), a, text_of(c, path, f"{field}.key_sc"))
            for i, (q, a, c) in enumerate(zip(questions, answers, codes))]


def _unnumbered(question: str) -> str:
    return re.sub(r"^\s*\d+\s*[.、．]\s*", "", question)


def steps_of(code: str) -> int | None:
    """Reasoning steps in a source code: the number after its last dash (``p-2`` → 2)."""
    match = re.search(r"-(\d+)\s*$", code)
    return int(match.group(1)) if match and int(match.group(1)) >= 1 else None


def _make(pairs: list[tuple[str, Any, str]], set_name: str, prefix: str,
          asked_of: str | None, path: Path, notes: list[str]) -> list[ChoiceQuestion]:
    out = []
    for n, (text, answer, code) in enumerate(pairs, 1):
        stem, options = parse_options(text)
        if not options:
            notes.append(f"{set_name} question {n} has no options a., b., ...: not imported "
                         f"({text[:60]!r})")
            continue
        letters = answer_letters(answer)
        out.append(ChoiceQuestion(
            id=f"{prefix}-{n:03d}", question=stem, options=options, answer=letters,
            multiple=len(letters) > 1, steps=steps_of(code), set=set_name,
            asked_of=asked_of, source=code,
            rationale="" if letters else str(answer or "").strip(),
        ))
    return out


# --- the truth's evidence --------------------------------------------------------------

def truth_passages(data: dict, characters: list[Character]) -> list[Passage]:
    """Every text the truth is weighed from: the solution (``reason``) and the reasoning
    chain as truth; the tasks, public clues and clue pool as clues (a role's pool is its
    own); each role's script and introduction as its own text."""
    passages = [Passage(data["reason"], f"{MAIN_FILE}: reason", "truth")
                if isinstance(data.get("reason"), str) else None]
    for key in ("task_nm", "task_m", "public_clue"):
        if isinstance(data.get(key), str):
            passages.append(Passage(data[key], f"{MAIN_FILE}: {key}", "clue"))
    for character, role in zip(characters, data.get("role", [])):
        for key in ("back", "self"):
            if isinstance(role, dict) and isinstance(role.get(key), str):
                passages.append(Passage(role[key], f"{MAIN_FILE}: role {character.name}.{key}",
                                        "character", owner=character.name))
    names = Names(c.name for c in characters)
    for key, items in (data.get("key_clues_pool") or {}).items():
        kind: Kind = "truth" if _STEP_KEY.match(key) else "clue"
        owner = None if kind == "truth" else names.resolve(key, chinese=True)
        passages += [Passage(item, f"{MAIN_FILE}: key_clues_pool.{key}", kind, owner)
                     for item in items if isinstance(item, str)] if isinstance(items, list) else []
    return [p for p in passages if p is not None and p.text.strip()]


def asked(questions: list[ChoiceQuestion]) -> list[Asked]:
    """The questions with the texts of their correct options. A role's own questions
    (``r_q``, ``q``) test how it plays its part, so they may hold its beliefs rather than
    the truth: they count half."""
    return [Asked(q.question, tuple(q.options[a] for a in q.answer if a in q.options),
                  f"{MAIN_FILE}: {q.set}" + (f" of {q.asked_of}" if q.asked_of else ""),
                  0.5 if q.asked_of else 1.0)
            for q in questions if q.answer]


def _script_extra(data: dict, steps: list[int]) -> dict[str, Any]:
    extra = {k: v for k, v in data.items() if k not in _TOP_KEYS}
    for key in ("key_role", "role-q"):
        if data.get(key):
            extra[key] = data[key]
    if steps:
        extra["reasoning_steps"] = steps
    return extra
