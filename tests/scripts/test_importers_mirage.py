"""MIRAGE import: stages as acts, clues by location, derived murderers and victims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jubensha.scripts import PUBLIC, ScriptError, validate
from jubensha.scripts.importers.mirage import import_mirage, parse_relationships


@pytest.fixture(scope="module")
def mirage(datasets: Path) -> Path:
    return datasets / "mirage"


@pytest.mark.parametrize(("folder", "acts", "murderers", "victims"), [
    ("En/The Eastern Star Cruise Ship", 1, ["Manager Xiu"], ["Qi Liu"]),
    ("Zh/东方之星号游轮事件", 1, ["修经理"], ["刘奇"]),
    ("En/Raging Sea of Rest Life", 2, ["John"], ["Old Black"]),
    ("Zh/怒海余生", 2, ["约翰"], ["老布莱克"]),
    ("En/Bride in Filial Dress", 1, ["Doctor Fang"], ["Xu Boqing"]),
    ("Zh/孝衣新娘", 1, ["方医生"], ["徐伯清"]),
    ("En/Artical 22 School Rules", 5, ["Fuqing Huang"], []),
    ("Zh/第二十二条校规", 5, ["皇甫青"], []),  # the curse's victim is the murderer itself
])
def test_acts_and_derived_murderer_and_victim(mirage: Path, folder, acts, murderers,
                                              victims) -> None:
    script = import_mirage(mirage / folder)
    assert len(script.acts) == acts
    assert script.truth.murderers == murderers and script.murderers == murderers
    assert [v.name for v in script.victims] == victims
    assert all(script.character(m).side == "murderer" for m in murderers)
    assert script.metadata.has_truth and validate(script).ok


@pytest.mark.parametrize("folder", ["En/The Final Performance of a Big Star",
                                    "Zh/大明星最后的演出"])
def test_no_murderer_is_guessed_where_no_player_is_named(mirage: Path, folder) -> None:
    script = import_mirage(mirage / folder)
    # The Big Star's victim is the star 李天船; its culprit, Richard Li, is no player.
    assert [v.name for v in script.victims] == (
        ["Tianchuan Li"] if folder.startswith("En") else ["李天船"])
    assert script.truth.murderers == [] and script.metadata.has_truth is False
    assert script.truth.narrative and validate(script).ok
    assert any("no character is derived as the murderer" in n for n in script.metadata.notes)


@pytest.mark.parametrize(("folder", "culprit"), [("En/Li Chuan Strange Talk Book",
                                                   "Woman in Blue-green"),
                                                  ("Zh/漓川怪谈簿", "青衣女子")])
def test_a_character_told_it_is_the_culprit_is_the_murderer(mirage: Path, folder,
                                                             culprit) -> None:
    # Her own story says "(You are the culprit of all the cases in this script." where the
    # release's code names the Elderly in Tattered; the dead of the truth text (日和, called
    # Rihe, Hiyori and Hiwa in English) belong to the backstory, so no victim is derived.
    script = import_mirage(mirage / folder)
    assert script.murderers == [culprit] and script.victims == []
    assert any(n.startswith("warning: the release's code names") for n in script.metadata.notes)


def test_stages_become_acts_and_act_sheets(mirage: Path) -> None:
    script = import_mirage(mirage / "En" / "Artical 22 School Rules")
    assert [a.title for a in script.acts] == [f"Stage {n}" for n in range(1, 6)]
    mu = script.character("Mu Bai")
    assert [s.act for s in mu.acts] == [1, 2, 3, 4, 5]
    assert all(s.text for s in mu.acts)
    assert mu.story and mu.mission == "Find the truth"
    assert mu.description.startswith("Male, 18")
    assert "Mu Bai" not in {r.other for r in mu.relationships}
    assert any("Article 22 School Rules" in n for n in script.metadata.notes)


def test_clues_by_location_persons_and_memories(mirage: Path) -> None:
    script = import_mirage(mirage / "En" / "Bride in Filial Dress")
    memories = [c for c in script.clues if c.extra.get("group") == "Memory of Junmeng Chen"]
    assert memories and all(c.holder == "Junmeng Chen" and c.location is None
                            for c in memories)
    assert memories[0].title == "Torn Map"
    located = [c for c in script.clues if c.location]
    assert all(c.holder == PUBLIC for c in located)
    assert "Scene (Body)" in script.locations
    rules = import_mirage(mirage / "En" / "Artical 22 School Rules")
    typo = [c for c in rules.clues if c.extra.get("source_key") == "Lenxing Ye"]
    assert typo and all(c.location == "Lengxing Ye" == c.extra["owner"] for c in typo)
    star = import_mirage(mirage / "En" / "The Final Performance of a Big Star")
    public = [c for c in star.clues if c.location is None]
    assert len(public) == 3 and all(c.holder == PUBLIC for c in public)


def test_relationship_lists_and_prose() -> None:
    relationships, prose = parse_relationships(
        "1. Qi Liu (Second Mate): You despise him.\nHe bosses you.\n2. Lin: a singer.")
    assert prose == ""
    assert [(r.other, r.description) for r in relationships] == [
        ("Qi Liu", "(Second Mate) You despise him.\nHe bosses you."), ("Lin", "a singer.")]
    text = "Little Black is your husband's partner."
    assert parse_relationships(text) == ([], text)
    assert parse_relationships("At 20:30, you heard it.") == ([], "At 20:30, you heard it.")


def _script(tmp_path: Path, clues: str = '{"Hall": ["A knife."]}') -> Path:
    folder = tmp_path / "En" / "Tiny"
    folder.mkdir(parents=True)
    parts = {"Story": "s", "Script": "x", "Relationship": "Bob: friend", "Performance": "p",
             "Purpose": "Conceal the fact that you killed Vic.", "Ability": ""}
    (folder / "script.json").write_text(json.dumps({"Ann": parts, "Bob": parts | {
        "Purpose": "Find the truth", "Relationship": "Vic: Deceased."}}), encoding="utf-8")
    (folder / "clues.json").write_text(clues, encoding="utf-8")
    (folder.parent / "Truth.json").write_text(json.dumps({"Tiny": "Ann did it."}),
                                              encoding="utf-8")
    return folder


def test_a_script_elsewhere(tmp_path) -> None:
    script = import_mirage(_script(tmp_path))
    assert script.murderers == ["Ann"] and [v.name for v in script.victims] == ["Vic"]
    assert script.truth.narrative == "Ann did it." and script.locations == ["Hall"]
    assert validate(script).ok


@pytest.mark.parametrize(("clues", "message"), [
    ('{"Hall": ["A kni', "clues.json: (file): invalid JSON at line 1"),
    ('["Hall"]', "clues.json: (top level): expected an object, found a list"),
    ('{"Hall": [3.5, {"x": 1}]}', "clues.json: Hall[1]: expected a string, found an object"),
])
def test_malformed_clue_files(tmp_path, clues, message) -> None:
    with pytest.raises(ScriptError) as info:
        import_mirage(_script(tmp_path, clues))
    assert len(info.value.problems) == 1 and message in str(info.value)


def test_headings_alone_on_their_line_label_the_person_named_next_never_become_one():
    text = ("Victim:\nZhen San (male, 40), a nondescript private museum director.\n"
            "Other Suspects:\nSuspect: Curio He (male) - unknown, I've never seen him.\n"
            "Suspect: Mystery Ou (female) - unknown.")
    found, prose = parse_relationships(text)
    assert prose == ""
    assert [(r.other, r.labels) for r in found] == [
        ("Zhen San", ["Victim"]), ("Curio He", ["Suspect"]), ("Mystery Ou", ["Suspect"])]
    assert found[0].description.startswith("Victim: (male, 40)")
    zh, _ = parse_relationships("死者：\n甄三（男，40岁），博物馆馆长。\n其他嫌疑人：\n嫌疑人：何古董（男）")
    assert [r.other for r in zh] == ["甄三", "何古董"]
