"""Conan import: narratives without a truth, relation labels, aliases and victims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jubensha.scripts import ScriptError, validate
from jubensha.scripts.importers.conan import import_conan


@pytest.fixture(scope="module")
def conan(datasets: Path) -> Path:
    return datasets / "conan"


def test_sin_relations_aliases_and_victims(conan: Path) -> None:
    script = import_conan(conan / "english" / "data_final" / "131-Sin (4 people closed)")
    assert (script.id, script.title, script.language) == (
        "conan-en-131-sin-4-people-closed", "Sin (4 people closed)", "en")
    assert script.truth is None and script.metadata.has_truth is False
    assert "no truth" in script.metadata.notes[0]
    assert sorted(script.names) == ["Chief Wang", "Hu Investigate", "Officer Li",
                                    "Zhang Villager"]
    wang = script.character("Chief Wang")
    relation = next(r for r in wang.relationships if r.other == "Zhao Cishan")
    assert sorted(relation.labels) == ["Hate of X", "Victim of X"]
    assert script.character("Murderer").name == "Zhang Villager"
    # Every story tells of Zhao Cishan's death; no story mentions the girlfriend's.
    assert [v.name for v in script.victims] == ["Zhao Cishan"]
    assert script.extra["killers"]["Zhao Cishan"] == ["Chief Wang"]
    assert script.extra["killers"]["Officer Li's Girlfriend"]
    assert script.extra["relation_classes"]["Hate of X"] == "Adversary of X"
    assert "Chief Wang" in script.extra["relations_all"]
    assert "Zhang Villager" in script.character("Zhang Villager").extra["known_relations"]
    assert validate(script).ok


def test_who_killed_whom_is_kept_out_of_what_players_see(conan: Path) -> None:
    script = import_conan(conan / "english" / "data_final" / "131-Sin (4 people closed)")
    assert all(not v.extra and not v.description for v in script.victims)


def test_chinese_narrative_with_purpose_full_text_and_a_trailing_comma_label(conan: Path) -> None:
    script = import_conan(conan / "chinese" / "data_final" / "033-丹水山庄（7人）")
    assert script.language == "zh" and len(script.characters) == 7
    assert all(c.mission for c in script.characters)
    assert any("trailing comma" in note for note in script.metadata.notes)
    assert script.character("双面虎").name == "郭望山"
    assert validate(script).ok


def test_side_files_with_a_role_prefix_and_non_text_purposes(conan: Path) -> None:
    thief = import_conan(conan / "chinese" / "data_final" / "060-魔盗之殇（5人开放）")
    assert "full_text" in thief.character("凯文").extra
    chocolate = import_conan(conan / "chinese" / "data_final" / "049-致命巧克力（8~14开放）")
    assert any(".docx is not text" in note for note in chocolate.metadata.notes)


def test_middle_dot_spellings_resolve_to_the_character(conan: Path) -> None:
    script = import_conan(conan / "chinese" / "data_final" / "003-死穿白（8人开放）")
    berkeley = script.character("理查德•伯克利")
    assert "院长伯克利" in berkeley.aliases
    assert any(r.other == "西尔维娅•科斯塔" for r in berkeley.relationships)


def _narrative(tmp_path: Path, labels: str) -> Path:
    folder = tmp_path / "english" / "data_final" / "001-Tiny"
    (folder / "txt").mkdir(parents=True)
    (folder / "txt" / "Ann.txt").write_text("Ann's story", encoding="utf-8")
    (folder / "txt" / "Bob.txt").write_text("Bob's story", encoding="utf-8")
    label = tmp_path / "english" / "label" / "001-Tiny"
    label.mkdir(parents=True)
    (label / "all.json").write_text(labels, encoding="utf-8")
    return folder


def test_a_narrative_elsewhere_imports(tmp_path) -> None:
    folder = _narrative(tmp_path, json.dumps({"Ann": [["Vic", "Victim of X"],
                                                      ["Bob", "Friend of X"]]}))
    script = import_conan(folder)
    # all.json alone is everyone's knowledge pooled: it stays with the script, off the sheets
    assert script.character("Ann").relationships == []
    assert script.extra["relations_all"]["Ann"][1] == ["Bob", "Friend of X"]
    assert script.victims == [] and script.extra["killers"] == {"Vic": ["Ann"]}
    assert any("no per-character label files" in n for n in script.metadata.notes)


@pytest.mark.parametrize(("labels", "message"), [
    ('{"Ann": [["Bob", "Friend', "all.json: (file): invalid JSON at line 1"),
    ('{"Ann": "Bob"}', "all.json: Ann: expected a list, found a string"),
    ('{"Ann": [["Bob"]]}', "all.json: Ann[0]: expected [other name, labels]"),
])
def test_malformed_labels_name_file_and_field(tmp_path, labels, message) -> None:
    with pytest.raises(ScriptError) as info:
        import_conan(_narrative(tmp_path, labels))
    assert len(info.value.problems) == 1 and f"label/001-Tiny/{message}" in str(info.value)


def test_a_folder_without_txt_is_not_a_narrative(tmp_path) -> None:
    with pytest.raises(ScriptError, match="no txt/ folder"):
        import_conan(tmp_path)


def labelled_narrative(tmp_path: Path) -> Path:
    """Three characters; only the murderer's own label file knows who killed the cook."""
    root = tmp_path / "english"
    story = root / "data_final" / "001-Manor"
    (story / "txt").mkdir(parents=True)
    for name, text in {"Ann": "Ann found the cook dead.", "Bob": "Bob heard the cook scream.",
                       "Cy": "Cy saw the cook at nine."}.items():
        (story / "txt" / f"{name}.txt").write_text(text, encoding="utf-8")
    own = {"Ann": {"Ann": [["Cook", "Victim of X"], ["Bob", "Friend of X"]],
                   "Bob": [["Cook", "Employee of X"]]},
           "Bob": {"Bob": [["Ann", "Friend of X"]]},
           "Cy": {"Cy": [["Ann", "Neighbour of X"]]}}
    labels = root / "label_v2" / "001-Manor"
    labels.mkdir(parents=True)
    union: dict = {}
    for name, known in own.items():
        (labels / f"{name}.json").write_text(json.dumps(known), encoding="utf-8")
        for owner, pairs in known.items():
            union.setdefault(owner, []).extend(pairs)
    (labels / "all.json").write_text(json.dumps(union), encoding="utf-8")
    return story


def test_a_sheet_holds_only_its_own_label_file(tmp_path) -> None:
    script = import_conan(labelled_narrative(tmp_path))
    ann, bob, cy = (script.character(n) for n in ("Ann", "Bob", "Cy"))
    assert {r.other: r.labels for r in ann.relationships} == {
        "Cook": ["Victim of X"], "Bob": ["Friend of X"]}
    assert {r.other for r in bob.relationships} == {"Ann"}
    for character in (bob, cy):
        text = json.dumps(character.model_dump(), ensure_ascii=False)
        assert "Victim of X" not in text and "Employee of X" not in text
    assert script.extra["killers"] == {"Cook": ["Ann"]}
    assert [v.name for v in script.victims] == ["Cook"]  # every story tells of the death


def test_a_death_of_the_backstory_is_no_victim_of_the_case(conan: Path) -> None:
    """Death Wears White: the labels record Jim Mason's death (years before) as they record
    Hans's (the case); neither stands out enough, so none is derived and the candidates are
    left for a truth.yaml, never a past death listed as the case's victim."""
    script = import_conan(conan / "english" / "data_final" /
                          "003-Death wears white (open to 8 people)")
    assert script.victims == []
    note = next(n for n in script.metadata.notes if n.startswith("the texts do not make"))
    assert "Hans Li Morette" in note and "Jim Mason" in note and "truth.yaml" in note
    [found] = script.metadata.derivations
    assert found.fact == "victims" and found.value == [] and found.confidence < 0.5
    assert {c.name for c in found.candidates} >= {"Hans Li Morette", "Jim Mason"}
    assert all("Gale" not in e.text for c in found.candidates for e in c.evidence)


def test_a_victim_every_story_tells_of_is_derived_with_its_confidence(conan: Path) -> None:
    script = import_conan(conan / "chinese" / "data_final" / "134-致命喷泉（4人封闭）")
    assert [v.name for v in script.victims] == ["李国富"]
    [found] = script.metadata.derivations
    assert found.value == ["李国富"] and found.confidence is not None
    assert found.confidence >= 0.5 and found.candidates[0].derived


def test_a_latin_name_is_named_only_as_a_whole_word(tmp_path) -> None:
    folder = _narrative(tmp_path, json.dumps({"Ann": [["Man", "Victim of X"]]}))
    for name in ("Ann", "Bob"):
        (folder / "txt" / f"{name}.txt").write_text("A woman of many talents.",
                                                    encoding="utf-8")
    assert import_conan(folder).victims == []  # "Man" is in no story as a word
