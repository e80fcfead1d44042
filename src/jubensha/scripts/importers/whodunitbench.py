"""WhodunitBench: ``env_p_all.json`` (roles, truth, clue pool, question sets) and the clue
card images in ``img/``.

Questions carry their options inside the text ("...？a. 2:30 b. 2:45"); they are split
with ``parse_options``. A key clue question's ``source`` code ("p-2", "旅人+米里奥-2")
ends in the number of reasoning steps it needs (supplementary material, figure 6); a
code without a number ("p", "l") leaves ``steps`` unset. The ``N-step`` lists of the clue
pool are the reasoning chain, step by step. There is no victim field; ``derive_victim``
documents how one is found, and when none is found the script has no victim and says so.
Variant copies (``env_p_update*.json``, ``env_p.json``) are earlier drafts of
``env_p_all.json`` with fewer question sets and are not read.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from jubensha.scripts.importers.common import (
    Names,
    answer_letters,
    evidence_sentence,
    expect,
    fail,
    killed_names,
    language_of,
    parse_options,
    read_json,
    slugify,
    split_items,
    text_of,
    unique_ids,
)
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
    murderers = _murderers(data, characters, names, path)
    clues = _pool_clues(data, names, path) + _public_clues(data, path) + _images(folder, notes)
    questions = _questions(data, characters, path, notes)
    victim = derive_victim(data, questions, names)
    victims = [Victim(name=victim)] if victim else []
    if victim:
        notes.append(f"victim {victim!r} derived from the text (see docs/script-format.md)")
        for character in characters:
            if character.name in murderers:
                character.killed = [victim]
    else:
        notes.append("the data names no victim: the script has none")
    language = language_of(folder, text_of(data.get("reason"), path, "reason"),
                           *(c.story[:500] for c in characters))
    chain, steps = _reasoning_chain(data, path)
    derivations = [Derivation(fact="murderers", value=murderers, source=MAIN_FILE,
                              method="the murder field (and roles marked m: 1)",
                              evidence=f"murder: {data.get('murder', '')}"[:400])]
    if victim:
        derivations.append(Derivation(
            fact="victims", value=[victim], source=MAIN_FILE,
            method="a question or sentence naming the dead (derive_victim)",
            evidence=evidence_sentence(_texts(data), [victim])))
    return Script(
        id=f"whodunitbench-{slugify(folder.name)}",
        title=text_of(data.get("ju_name"), path, "ju_name") or folder.name,
        language=language,
        victims=victims,
        characters=characters,
        clues=clues,
        truth=_truth(data, path, murderers, victim, chain),
        questions=QuestionSets(choice=questions),
        metadata=Metadata(source="whodunitbench", source_path=folder.name,
                          player_count=len(characters), notes=notes,
                          derivations=derivations),
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


def _truth(data: dict, path: Path, murderers: list[str], victim: str | None,
           chain: list[str]) -> Truth | None:
    if not murderers:
        return None
    reason = text_of(data.get("reason"), path, "reason").strip()
    sections = split_reason(reason)
    return Truth(murderers=murderers,
                 kills=[Kill(victim=victim, killers=murderers, motive=sections["motive"],
                             method=sections["method"])] if victim else [],
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


# --- the victim ----------------------------------------------------------------------------

_ASKS_VICTIM = re.compile(r"死者是谁|谁是死者|死者的名字|死者叫什么|(?:被害|受害)[人者]是谁")
_STATES_VICTIM = re.compile(r"(?:死者|受害者|被害人|受害人)(?:竟然|居然|原来|竟|正|就|乃|便)?"
                            r"(?:是|为|叫|名叫)([^\n，。,.；;！!？?]{1,20})"
                            r"(?![？?])")
_QUESTION_WORDS = re.compile(r"谁|几|哪|什么|怎么|如何|是否|由于|因为|在|被|否")
_NAME = re.compile(r"^[\u4e00-\u9fff·•]{2,4}$")
_DEATH_WORDS = r"{X}(?:的尸体|的遗体|的死因|之死|被杀|遇害)|(?:杀害|杀死|害死|毒死|刺死|枪杀)了?{X}"


def derive_victim(data: dict, questions: list[ChoiceQuestion], names: Names) -> str | None:
    """The victim's name, found (1) as the answer of a question that asks who the dead
    person is ("七号房床上的死者是谁？"), else (2) in a sentence that states it ("死者是丁
    硕楠", "死者为你的祖父欧文"): the quoted name, the whole phrase when it is a name of 2-4
    characters, or the last name in it that also appears as an option of some question,
    else (3) the option name the texts most often put next to a death ("陆洲同的尸体",
    "杀死了卡门"), if at least twice and strictly more often than any other, else (4) the
    one person the solution (``reason``) names right after a verb of killing ("用刀杀死保罗",
    a name jieba tags as a person's).
    A role is never the victim. None when no rule finds one: nothing is guessed."""
    for question in questions:
        if _ASKS_VICTIM.search(question.question) and len(question.answer) == 1:
            answer = question.options.get(question.answer[0], "").strip()
            if answer and names.exact(answer) is None:
                return answer
    vocabulary = {text.strip() for q in questions for text in q.options.values()
                  if _NAME.match(text.strip()) and names.exact(text.strip()) is None}
    found: Counter[str] = Counter()
    for text in _texts(data):
        for match in _STATES_VICTIM.finditer(text):
            name = _name_in(match.group(1).strip(), vocabulary)
            if name and names.exact(name) is None:
                found[name] += 1
    if found:
        return found.most_common(1)[0][0]
    if vocabulary:
        pattern = "|".join(re.escape(v) for v in sorted(vocabulary, key=len, reverse=True))
        regex = re.compile(_DEATH_WORDS.replace("{X}", f"({pattern})"))
        found.update(next(g for g in m.groups() if g) for text in _texts(data)
                     for m in regex.finditer(text))
    best = found.most_common(2)
    if best and best[0][1] >= 2 and (len(best) == 1 or best[0][1] > best[1][1]):
        return best[0][0]
    reason = data.get("reason")
    killed = [name for name in killed_names([reason] if isinstance(reason, str) else [])
              if names.exact(name) is None]
    return killed[0] if len(killed) == 1 else None


_NOT_A_PERSON = re.compile(r"^(?:[一二两三四五六七八九十几多]+[个名位]?人|[他她它]们?|此人|其人|本人"
                           r"|对方|大家|众人|某人|你|我)$")
_TITLE = re.compile(r"(?:女士|先生|小姐|太太|夫人|医生|教授)$")
_BEFORE_NAME = re.compile(r"负责人|老板|主人|店长|院长|馆长|社长|会长|成员|员工|[的之…、，,\s”\"」』]")
_ROLE_AFTER = re.compile(r"^[的之]?(?:负责人|老板|主人|店长|院长|馆长|社长|会长|成员|员工)")


def _name_in(phrase: str, vocabulary: set[str]) -> str | None:
    """The person a "死者为…" phrase names: a name the questions offer (the last one in the
    phrase) unless a quoted name comes first ("候选人“节制”和…巨人馆门口的…": the place
    named later is where, not who), a quoted name that is not an organisation's
    ("“动物之家”负责人…" names the place, not the person), the name before a title
    (马尔普女士), or the phrase itself when it is a bare name; never a pronoun or a count
    of people (两人)."""
    if _QUESTION_WORDS.search(phrase[:2]) or _QUESTION_WORDS.match(phrase):
        return None  # "死者是否…", "死者是在…": a question or a circumstance, not a name
    quoted = re.search(r"[“\"「『]([^”\"」』]{1,10})[”\"」』]", phrase)
    if quoted and _ROLE_AFTER.match(phrase[quoted.end():]):
        quoted = None  # “动物之家”负责人: an organisation's name
    ends = [(phrase.rfind(name) + len(name), len(name), name) for name in vocabulary
            if name in phrase]
    if ends and not (quoted and quoted.end() <= phrase.find(max(ends)[2])):
        return max(ends)[2]
    titled = _TITLE.search(phrase)
    if titled:
        name = _BEFORE_NAME.split(phrase[:titled.start()])[-1]
        if 2 <= len(name) <= 5:
            return _person(name)
    if quoted:
        return _person(quoted.group(1).strip())
    if _NAME.match(phrase) and not re.search(r"[的了着死是在被将把和与及]", phrase):
        return _person(phrase)
    return None


def _person(name: str) -> str | None:
    return None if _NOT_A_PERSON.match(name) else name


def _texts(data: dict) -> list[str]:
    texts = [data.get(k) for k in ("task_nm", "task_m", "reason", "public_clue")]
    texts += [r.get("back") for r in data.get("role", []) if isinstance(r, dict)]
    pool = data.get("key_clues_pool", {})
    texts += [x for v in pool.values() if isinstance(v, list) for x in v]
    return [t for t in texts if isinstance(t, str)]


def _script_extra(data: dict, steps: list[int]) -> dict[str, Any]:
    extra = {k: v for k, v in data.items() if k not in _TOP_KEYS}
    for key in ("key_role", "role-q"):
        if data.get(key):
            extra[key] = data[key]
    if steps:
        extra["reasoning_steps"] = steps
    return extra
