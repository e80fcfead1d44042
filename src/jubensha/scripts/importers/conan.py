"""Conan: detective narratives (``<lang>/data_final/<NNN-Name>/txt/<Character>.txt``) and
character-relation labels (``<lang>/label*/<NNN-Name>/all.json`` and one file per
character), with ``equivalent_relation.json`` grouping label synonyms.

Conan has no murderer annotation, so a Conan script has no truth (``has_truth: false``).
A label map ``{A: [[B, "Victim of X, Hate of X"]]}`` reads "B is Victim of A, B is Hate
of A"; it becomes ``Relationship(other=B, labels=[...])`` on character A, so a label's X
is always the character that owns the relationship. "Same person as X" labels make the
other name an alias. People the labels call a victim ("Victim of X", "Killed by X", or
the reverse "Murderer of X") are candidates for the case's ``victims``: the labels record
deaths of the backstory, and harm that is no death, the same way, so each is weighed by
how many of the characters' stories name it (the case every player is told of) and decided
with the confidence rule every importer uses (``truth.decide``); when unsure, none is
derived and the candidates are noted for a ``truth.yaml``. Who killed whom stays out of
sight of the players, in ``extra["killers"]``.
"""

from __future__ import annotations

import re
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
    read_text,
    slugify,
    text_of,
)
from jubensha.scripts.importers.truth import Finding, decide
from jubensha.scripts.model import (
    Character,
    Derivation,
    Evidence,
    Metadata,
    Relationship,
    Script,
    Victim,
)

_SAME_PERSON = re.compile(r"^same person as x\b", re.IGNORECASE)
_VICTIM_OF = re.compile(r"^(?:victim of x|killed by x)$", re.IGNORECASE)
_MURDERER_OF = re.compile(r"^murderer of x$", re.IGNORECASE)


def discover_conan(root: Path) -> list[Path]:
    """Every narrative folder: ``.../data_final/<name>`` holding ``txt/``."""
    return sorted(p.parent for p in root.rglob("txt")
                  if p.is_dir() and p.parent.parent.name == "data_final")


def import_conan(src: Path) -> Script:
    folder = src
    txt = folder / "txt"
    if not txt.is_dir():
        raise fail(folder, "(folder)", "no txt/ folder: not a Conan narrative folder")
    files = sorted(txt.glob("*.txt"))
    if not files:
        raise fail(txt, "(folder)", "no character .txt files")
    language = language_of(folder, *(read_text(f)[:2000] for f in files[:2]))
    notes = ["Conan narratives carry no murderer or solution: this script has no truth"]
    characters = [Character(name=f.stem, story=read_text(f).strip()) for f in files]
    names = Names(c.name for c in characters)
    unmatched = _full_texts(folder, characters, names, notes)
    _purposes(folder, characters, names, notes)
    if (folder / "json").is_dir():
        notes.append("json/ (a WellPlay copy of this narrative) is not read here")
    extra: dict[str, Any] = {"unmatched_full_texts": unmatched} if unmatched else {}
    derivations: list[Derivation] = []
    victims = _labels(folder, characters, names, notes, extra, derivations)
    title = re.sub(r"^\s*\d+\s*-\s*", "", folder.name)
    return Script(
        id=f"conan-{language}-{slugify(folder.name)}",
        title=title,
        language=language,
        victims=victims,
        characters=characters,
        metadata=Metadata(source="conan", has_truth=False, player_count=len(characters),
                          source_path="/".join(folder.parts[-3:]), notes=notes,
                          derivations=derivations),
        extra=extra,
    )


def _matching_file(stem: str, names: Names, stems: list[str]) -> str | None:
    """The character a side file (``txt_full``/``purpose``) belongs to: same name, or a
    name with a role prefix (``保安凯文`` for ``凯文``) when exactly one character fits."""
    exact = names.exact(stem)
    if exact:
        return exact
    suffixed = [n for n in stems if name_key(stem).endswith(name_key(n))]
    return suffixed[0] if len(suffixed) == 1 else None


def _full_texts(folder: Path, characters: list[Character], names: Names,
                notes: list[str]) -> dict[str, str]:
    """``txt_full`` texts that differ from ``txt`` go to the character's
    ``extra["full_text"]``; those that match no character are returned."""
    by_name = {c.name: c for c in characters}
    unmatched = {}
    for path in sorted((folder / "txt_full").glob("*.txt")):
        who = _matching_file(path.stem, names, list(by_name))
        text = read_text(path).strip()
        if who is None:
            notes.append(f"txt_full/{path.name} matches no character: kept in extra")
            unmatched[path.stem] = text
        elif text != by_name[who].story:
            by_name[who].extra["full_text"] = text
    return unmatched


def _purposes(folder: Path, characters: list[Character], names: Names,
              notes: list[str]) -> None:
    purpose = folder / "purpose"
    if not purpose.is_dir():
        return
    by_name = {c.name: c for c in characters}
    for path in sorted(purpose.iterdir()):
        if path.suffix != ".txt":
            notes.append(f"purpose/{path.name} is not text and is not read")
            continue
        who = _matching_file(path.stem, names, list(by_name))
        if who is None:
            notes.append(f"purpose/{path.name} matches no character and is not read")
            continue
        by_name[who].mission = read_text(path).strip()


def _label_sets(folder: Path) -> dict[str, Path]:
    """``{"label": <lang>/label/<name>, "label_v2": ...}`` for the sets that have this
    narrative."""
    lang_dir = folder.parent.parent
    return {d.name: d / folder.name for d in sorted(lang_dir.glob("label*"))
            if (d / folder.name).is_dir()}


def _labels(folder: Path, characters: list[Character], names: Names, notes: list[str],
            extra: dict[str, Any], derivations: list[Derivation]) -> list[Victim]:
    """Relations, aliases and victims from the label sets (``label/``, ``label_v2/``...).

    A character's sheet holds only what its OWN label files say (``<set>/<narrative>/
    <Character>.json``, every set merged): its relationships are the pairs it owns there,
    and the whole file is its ``extra["known_relations"]``. ``all.json``, the union of every
    character's knowledge, would tell a civilian what only the murderer knows, so it goes
    to the script's ``extra`` (for evaluation), never to a sheet. The case's victims are
    weighed from the labelled killings (``_victims``); who killed whom stays in
    ``extra["killers"]``.
    """
    sets = _label_sets(folder)
    if not sets:
        notes.append("no relation labels for this narrative")
        return []
    union: dict[str, list[list[str]]] = {}
    own: dict[str, dict[str, list[list[str]]]] = {}
    for name, path in sets.items():
        if (path / "all.json").is_file():
            _merge(union, _read_label_file(path / "all.json", notes))
        for file in sorted(path.glob("*.json")):
            if file.name == "all.json":
                continue
            known = _read_label_file(file, notes)
            _merge(union, known)
            who = names.resolve(file.stem, chinese=True)
            if who is None:
                extra.setdefault("relations_by_file", {})[f"{name}/{file.stem}"] = known
            else:
                _merge(own.setdefault(who, {}), known)
    same = _aliases(union, characters, names)
    by_name = {c.name: c for c in characters}
    for who, known in own.items():
        by_name[who].extra["known_relations"] = known
        for owner, pairs in known.items():
            if names.exact(owner) == who:
                for other, labels in pairs:
                    _relate(by_name[who], names.exact(other) or other, labels)
    if not own:
        notes.append("no per-character label files: sheets carry no relationships "
                     "(all.json stays with the script, for evaluation)")
    victims, killers, finding = _victims(union, characters, names, same, notes)
    extra["relations_all"] = union
    if killers:
        extra["killers"] = killers
    if finding.candidates:
        derivations.append(finding.derivation("label*/"))
    classes = _relation_classes(folder, union)
    if classes:
        extra["relation_classes"] = classes
    return [Victim(name=v) for v in victims]


def _merge(into: dict[str, list[list[str]]], more: dict[str, list[list[str]]]) -> None:
    for owner, pairs in more.items():
        mine = into.setdefault(owner, [])
        mine += [pair for pair in pairs if pair not in mine]


def _read_label_file(path: Path, notes: list[str]) -> dict[str, list[list[str]]]:
    """A label map, its shape checked: ``{name: [[other, "Label of X, ..."], ...]}``."""
    data, note = read_json(path, trailing_commas=True)
    if note:
        notes.append(f"{path.parent.parent.name}/{note}")
    data = expect(data, dict, path, "(top level)")
    for owner, pairs in data.items():
        for i, pair in enumerate(expect(pairs, list, path, owner)):
            pair = expect(pair, list, path, f"{owner}[{i}]")
            if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise fail(path, f"{owner}[{i}]", "expected [other name, labels]")
    return data


def _split_labels(labels: str) -> list[str]:
    return [label.strip() for label in labels.split(",") if label.strip()]


def _aliases(relations: dict, characters: list[Character], names: Names) -> dict[str, str]:
    """"Same person as X" between a character and another name: that name is an alias.
    Between two people who are not characters: the second name is the first (returned)."""
    by_name = {c.name: c for c in characters}
    same: dict[str, str] = {}
    for owner, pairs in relations.items():
        for other, labels in pairs:
            if not any(_SAME_PERSON.match(label) for label in _split_labels(labels)):
                continue
            if names.exact(owner) is None and names.exact(other) is None:
                same.setdefault(other, same.get(owner, owner))
            for known, alias in ((owner, other), (other, owner)):
                who = names.exact(known)
                if who and names.exact(alias) is None:
                    names.add_alias(alias, who)
                    by_name[who].aliases.append(alias)
    return same


WITNESS_WEIGHT = 4.0
"""The evidence a labelled death gets when every character's story names the dead: one
plain statement in the shared weighing (``truth.NOBODY`` is 3), less in proportion to the
stories that do not name it. Fit on half of the Conan stories whose truth WellPlay or
MIRAGE states (``bench/truth_derivation.yaml``), measured on the other half
(docs/script-format.md)."""


def _victims(union: dict, characters: list[Character], names: Names, same: dict[str, str],
             notes: list[str]) -> tuple[list[str], dict[str, list[str]], Finding]:
    """The case's victims weighed from the labelled killings, with their killers (truth
    data), and the finding that decided them. A labelled death told in every story is
    the case; one few stories name is more likely the backstory's or harm that was no
    death: its weight is its share of the stories (``WITNESS_WEIGHT``)."""
    killers = _killings(union, same)
    stories = [c.story.casefold() for c in characters]
    scores: dict[str, float] = {}
    evidence: dict[str, list[Evidence]] = {}
    for victim, who in killers.items():
        killers[victim] = list(dict.fromkeys(names.exact(k) or k for k in who))
        if names.exact(victim):
            notes.append(f"labels call the character {names.exact(victim)!r} a victim; "
                         "not listed as a victim")
            continue
        told = sum(bool(mentions(victim).search(story)) for story in stories)
        scores[victim] = WITNESS_WEIGHT * told / max(1, len(stories))
        evidence[victim] = [Evidence(
            rule=f"a killing the labels record, named in {told} of {len(stories)} stories",
            source="label*/", text=victim, weight=round(scores[victim], 2))]  # not who
    finding = decide("victims", scores, evidence, {}, {n: {"character"} for n in scores})
    if killers:
        notes.append(finding.note())
    return finding.names, {v: killers[v] for v in killers if not names.exact(v)}, finding


def mentions(name: str) -> re.Pattern[str]:
    """Where a story names ``name``: a whole word for a Latin name (``Man`` is not in
    ``woman``), anywhere for a Chinese one; case ignored."""
    text = re.escape(name.casefold())
    return re.compile(text if CJK.search(name) else rf"(?<!\w){text}(?!\w)")


def _killings(relations: dict, same: dict[str, str]) -> dict[str, list[str]]:
    killers: dict[str, list[str]] = {}
    for owner, pairs in relations.items():
        for other, labels in pairs:
            for label in _split_labels(labels):
                if _VICTIM_OF.match(label):
                    killers.setdefault(same.get(other, other), []).append(owner)
                elif _MURDERER_OF.match(label):
                    killers.setdefault(same.get(owner, owner), []).append(other)
    return killers


def _relate(character: Character, other: str, labels: str) -> None:
    if other == character.name:
        return
    relation = next((r for r in character.relationships if r.other == other), None)
    if relation is None:
        relation = Relationship(other=other)
        character.relationships.append(relation)
    for label in _split_labels(labels):  # label sets spell some labels in lower case
        if label.casefold() not in {known.casefold() for known in relation.labels}:
            relation.labels.append(label)


def _relation_classes(folder: Path, relations: dict) -> dict[str, str]:
    """Each label used here mapped to its class in ``equivalent_relation.json`` (found in
    a parent folder), where the two differ: the basis for judging relation answers."""
    for parent in folder.parents:
        path = parent / "equivalent_relation.json"
        if path.is_file():
            break
    else:
        return {}
    data = expect(read_json(path)[0], dict, path, "(top level)")
    groups = expect(data.get("equivalent relations", {}), dict, path, "equivalent relations")
    classes: dict[str, str] = {}
    for canonical, synonyms in groups.items():
        for label in [canonical, *expect(synonyms, list, path, canonical)]:
            classes[text_of(label, path, canonical).casefold()] = canonical
    used = {label for pairs in relations.values() for _, labels in pairs
            for label in _split_labels(labels)}
    return {label: classes[label.casefold()] for label in sorted(used)
            if label.casefold() in classes and classes[label.casefold()] != label}
