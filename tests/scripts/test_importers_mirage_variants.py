"""The MIRAGE release's variants, each on a small script written in its shape: a ``show``
beside the stages, clue files split by stage with a plain text handed to one character,
a character renamed between stages, culprit phrasings, relationship headings, and the
release's own culprit list cross-checked against the truth text."""

from __future__ import annotations

import json
from pathlib import Path

from jubensha.scripts import validate
from jubensha.scripts.importers.mirage import import_mirage, parse_relationships


def part(story: str, script: str, purpose: str = "Find the killer",
         relation: str = "") -> dict[str, str]:
    return {"Story": story, "Script": script, "Relationship": relation,
            "Performance": "Calm.", "Purpose": purpose, "Ability": ""}


def write(root: Path, title: str, script: dict, clues: dict, truth: str) -> Path:
    folder = root / "En" / title
    folder.mkdir(parents=True)
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    (folder / "clues.json").write_text(json.dumps(clues), encoding="utf-8")
    (root / "En" / "Truth.json").write_text(json.dumps({title: truth}), encoding="utf-8")
    return folder


def inn(tmp_path: Path, truth: str, title: str = "The Mountain Inn") -> Path:
    script = {
        "show": "Tonight the inn's troupe performs the Fox Wedding before dinner.",
        "Stage 1": {
            "Sky Dog": part("You guard the mountain pass.", "You arrive at dusk.",
                            relation="Victim: Director Wu, owner of the inn."),
            "Little Fox": part("You are a fox spirit. Xiao Nuan is your human name.",
                               "You serve the tea."),
            "Old Monk": part("You pray at the shrine.", "You ring the bell at nine."),
        },
        "Stage 2": {
            "Zetong Hei (Sky Dog)": part("", "Your true name is Zetong Hei."),
            "Little Fox": part("", "You saw a shadow on the stairs."),
            "Old Monk": part("", "You found a broken bell rope."),
        },
    }
    clues = {
        "Xiao Nuan": "Your fur was singed by the lantern at ten o'clock.",
        "Stage 1": {"Kitchen": ["A cleaver is missing."], "Old Monk": ["A ledger of alms."]},
        "Stage 2": {"Stairs": ["A torn sleeve of black cloth."]},
    }
    return write(tmp_path, title, script, clues, truth)


TRUTH = ("Director Wu was found dead on the stairs. The real murderer of Director Wu is "
         "【Sky Dog】, who pushed him in the dark.")


def test_a_show_beside_the_stages_starts_every_first_act_sheet(tmp_path):
    script = import_mirage(inn(tmp_path, TRUTH))
    for character in script.characters:
        assert character.acts[0].text.startswith("Tonight the inn's troupe performs")
        assert "Fox Wedding" not in character.acts[1].text
    assert validate(script).ok


def test_a_renamed_character_is_one_person(tmp_path):
    script = import_mirage(inn(tmp_path, TRUTH))
    assert script.names == ["Sky Dog", "Little Fox", "Old Monk"]
    dog = script.character("Zetong Hei (Sky Dog)")
    assert dog.name == "Sky Dog" and "Zetong Hei" in dog.aliases
    assert [sheet.act for sheet in dog.acts] == [1, 2]
    assert dog.acts[1].text == "Your true name is Zetong Hei."


def test_clues_keep_their_stage_and_a_plain_text_goes_to_its_character(tmp_path):
    script = import_mirage(inn(tmp_path, TRUTH))
    acts = {clue.text: clue.act for clue in script.clues}
    assert acts["A cleaver is missing."] == 1 and acts["A torn sleeve of black cloth."] == 2
    given = next(c for c in script.clues if c.title == "Xiao Nuan")
    assert given.holder == "Little Fox" and given.location is None
    assert script.locations == ["Kitchen", "Old Monk", "Stairs"]


def test_the_culprit_and_victim_are_derived_with_their_evidence(tmp_path):
    script = import_mirage(inn(tmp_path, TRUTH))
    assert script.murderers == ["Sky Dog"] and [v.name for v in script.victims] == ["Director Wu"]
    found = {d.fact: d for d in script.metadata.derivations}
    assert found["murderers"].source == "En/Truth.json"
    assert "real murderer of Director Wu" in found["murderers"].evidence
    assert found["victims"].value == ["Director Wu"]


def test_the_only_one_with_a_motive_is_the_culprit(tmp_path):
    truth = ("Director Wu died on the stairs. The monk had an alibi. Little Fox was the only "
             "one with a strong motive, the opportunity and the means.")
    assert import_mirage(inn(tmp_path, truth)).murderers == ["Little Fox"]


def test_the_releases_culprit_list_is_recorded_and_a_disagreement_warned(tmp_path):
    folder = inn(tmp_path, TRUTH, title="Fox Hotel")
    script = import_mirage(folder)
    release = next(d for d in script.metadata.derivations if d.fact == "culprits_release")
    assert release.source == "ScriptEnvs/MUO.py of the MIRAGE release"
    assert release.value == ["Nopperabo", "Ichiro Kiryu (Nopperabo)"]
    assert any(note.startswith("warning: the release's code names Nopperabo")
               for note in script.metadata.notes)
    assert script.murderers == ["Sky Dog"]  # the truth text's answer is kept


def test_a_relationship_heading_names_the_person_inside():
    relationships, prose = parse_relationships(
        "Victim: Qi Liu, your high school classmate.\n嫌疑人：张三，邻居\nSinger Lin: a singer.")
    assert prose == ""
    assert [(r.other, r.labels) for r in relationships] == [
        ("Qi Liu", ["Victim"]), ("张三", ["嫌疑人"]), ("Singer Lin", [])]


def silent_inn(tmp_path: Path, truth: str) -> Path:
    """The inn with no victim heading and no death in any character's text."""
    script = {"Stage 1": {
        "Sky Dog": part("You guard the mountain pass.", "You arrive at dusk."),
        "Little Fox": part("You are a fox spirit.", "You serve the tea."),
        "Old Monk": part("You pray at the shrine.", "You ring the bell at nine.")}}
    return write(tmp_path, "The Silent Inn", script, {"Stage 1": {}}, truth)


def test_a_death_the_truth_tells_in_passing_is_no_victim(tmp_path):
    truth = ("The real murderer is 【Sky Dog】. Long ago the guild dissipated with the death "
             "of Lord Pingjiang.")
    assert import_mirage(silent_inn(tmp_path, truth)).victims == []


def test_a_death_the_truth_tells_twice_names_the_victim(tmp_path):
    truth = ("The real murderer is 【Sky Dog】. Director Wu was killed on the stairs; after "
             "the death of Director Wu the inn closed.")
    script = import_mirage(silent_inn(tmp_path, truth))
    assert [v.name for v in script.victims] == ["Director Wu"]
