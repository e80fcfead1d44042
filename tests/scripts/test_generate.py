"""Generated mysteries: the same seed gives the same mystery in both languages, every
written mystery's proof holds and its deciding source decides, the difficulty levels differ
in what they say they change, sheets tell a player who they are, what they saw and what
they hide, and `jubensha scripts generate` writes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import load_script
from jubensha.scripts.generate.batch import MANIFEST
from jubensha.scripts.generate.build import (
    GenerationError,
    Request,
    generate,
    mystery,
    write,
)
from jubensha.scripts.io import dump_script
from jubensha.scripts.model import Script
from jubensha.scripts.proof.check import source_text
from jubensha.scripts.proof.notebook import Notebook
from jubensha.scripts.proof.phrases import Reader
from jubensha.scripts.proof.solver import Answer
from jubensha.scripts.validation import validate

runner = CliRunner()


def _proof_answers(script: Script, without: str | None = None) -> list[Answer]:
    """The answers the proof's facts leave, read afresh from the script's texts (without
    the facts of the source ``without``)."""
    proof = script.truth.proof  # type: ignore[union-attr]
    assert proof is not None
    world = proof.world
    notebook = Notebook(script.language, script.names, [v.name for v in script.victims],
                        places=world.places, items=world.items, start=world.start,
                        step=world.step_minutes, slots=world.slots)
    for key in dict.fromkeys(f.source.key() for f in proof.facts if f.source.key() != without):
        source = next(f.source for f in proof.facts if f.source.key() == key)
        text, speaker = source_text(script, source)
        notebook.read(text, script.names[speaker] if speaker >= 0 else None)
    return notebook.answers(scene=world.places.index(world.scene))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), players=st.integers(3, 10), acts=st.integers(1, 3),
       level=st.sampled_from(["easy", "medium", "hard"]), lang=st.sampled_from(["en", "zh"]))
def test_every_written_mystery_is_proved_and_its_deciding_source_decides(
        seed: int, players: int, acts: int, level: str, lang: str) -> None:
    script = write(mystery(Request(seed, players, acts, level)), lang)  # type: ignore[arg-type]
    assert validate(script).ok
    proof = script.truth.proof  # type: ignore[union-attr]
    assert proof is not None and proof.answer == script.murderers
    names = script.names
    truth = tuple(sorted(names.index(m) for m in script.murderers))
    assert [a.murderers for a in _proof_answers(script)] == [truth]
    rivals = {a.murderers for a in _proof_answers(script, proof.deciding.source.key())}
    assert len(rivals) > 1 and truth in rivals


def test_the_same_seed_is_the_same_mystery_in_both_languages() -> None:
    english, chinese = generate(Request(seed=7, players=6, acts=3, level="hard"), ("en", "zh"))
    assert english.language == "en" and chinese.language == "zh"
    assert [c.side for c in english.characters] == [c.side for c in chinese.characters]
    assert [(c.id, c.act, bool(c.location), c.key, c.misleading) for c in english.clues] == \
        [(c.id, c.act, bool(c.location), c.key, c.misleading) for c in chinese.clues]
    assert [len(c.timeline) for c in english.characters] == \
        [len(c.timeline) for c in chinese.characters]
    assert [(q.id, q.answer) for q in english.questions.choice] == \
        [(q.id, q.answer) for q in chinese.questions.choice]
    en, zh = english.truth.proof, chinese.truth.proof  # type: ignore[union-attr]
    assert en is not None and zh is not None
    assert [(f.kind, f.source.where, f.source.clue, f.start, f.end) for f in en.facts] == \
        [(f.kind, f.source.where, f.source.clue, f.start, f.end) for f in zh.facts]
    assert english.names.index(english.murderers[0]) == chinese.names.index(chinese.murderers[0])
    assert all(name.isascii() for name in english.names)
    assert not any(name.isascii() for name in chinese.names)


def test_the_same_request_writes_the_same_script() -> None:
    request = Request(seed=3, players=4, acts=2, level="medium")
    assert dump_script(generate(request)[0]) == dump_script(generate(request)[0])
    assert dump_script(generate(request)[0]) != dump_script(generate(Request(4, 4, 2, "medium"))[0])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prose_never_reads_as_a_fact(lang: str) -> None:
    """Every sentence the reader takes for a fact is one the generator wrote as a fact (the
    proof's, or the murderer's own timeline): the stories, titles and flavour state none."""
    for seed in range(6):
        script = generate(Request(seed, 5, 2, ("easy", "medium", "hard")[seed % 3]),
                          (lang,))[0]  # type: ignore[arg-type]
        proof = script.truth.proof  # type: ignore[union-attr]
        assert proof is not None
        stated = {f.text for f in proof.facts}
        murderer = script.character(script.murderers[0])
        stated |= {entry.text for entry in murderer.timeline}
        reader = Reader(script.language, script.names, [v.name for v in script.victims],
                        proof.world.places, proof.world.items)
        texts = [script.background, script.rules, *(c.title + ". " + c.text
                                                    for c in script.clues)]
        for character in script.characters:
            texts += [character.story, character.description, character.mission,
                      *character.secrets, *character.rules, *character.needs_to_know,
                      *(e.text for e in character.timeline), *(s.text for s in character.acts)]
        for text in texts:
            for said in reader.read(text, owner=None):
                assert said.text in stated, said.text


def test_the_levels_differ_as_the_knobs_say() -> None:
    measured = {}
    for level in ("easy", "medium", "hard"):
        knobs = [write(mystery(Request(seed, 6, 1, level)), "en")  # type: ignore[arg-type]
                 .truth.proof.knobs for seed in range(12)]  # type: ignore[union-attr]
        measured[level] = knobs
        assert {k.decider for k in knobs} == {"act" if level == "easy" else "investigation"
                                              if level == "medium" else "testimony"}
    mean = {level: {name: sum(getattr(k, name) for k in knobs) / len(knobs)
                    for name in ("combine", "suspects", "misleading", "pointers")}
            for level, knobs in measured.items()}
    assert mean["easy"]["combine"] < mean["medium"]["combine"] <= mean["hard"]["combine"]
    assert mean["easy"]["suspects"] > mean["medium"]["suspects"] == mean["hard"]["suspects"]
    assert mean["easy"]["misleading"] == mean["medium"]["misleading"] < mean["hard"]["misleading"]
    assert mean["easy"]["pointers"] == mean["medium"]["pointers"] == 1 > mean["hard"]["pointers"]


def test_with_several_acts_the_deciding_source_comes_late() -> None:
    for seed in range(5):
        easy = write(mystery(Request(seed, 5, 3, "easy")), "en").truth.proof  # type: ignore[union-attr]
        hard = write(mystery(Request(seed, 5, 2, "hard")), "en").truth.proof  # type: ignore[union-attr]
        assert easy is not None and easy.knobs.decider == "later_act"
        assert hard is not None and hard.deciding.source.where == "act_sheet"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sheet_tells_who_you_are_what_you_saw_and_what_you_hide(lang: str) -> None:
    script = generate(Request(seed=21, players=5, acts=1, level="medium"), (lang,))[0]  # type: ignore[arg-type]
    victim = script.victims[0].name
    for character in script.characters:
        assert character.name in character.story.split("\n")[0]
        assert all(entry.text in character.story for entry in character.timeline)
        assert character.secrets and character.mission and character.final_goals
        assert character.relationships[0].other == victim
        if character.side == "murderer":
            assert character.killed == [victim] and character.mission
        else:
            assert character.rules[0] and not character.killed
    assert all(clue.text for clue in script.clues)


def test_a_request_out_of_bounds_is_refused() -> None:
    with pytest.raises(GenerationError, match="players: 2 is not between 3 and 10"):
        mystery(Request(seed=0, players=2))
    with pytest.raises(GenerationError, match="acts: 4"):
        mystery(Request(seed=0, acts=4))


# -- the command ----------------------------------------------------------------------------
def run(*args: str):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["scripts", *map(str, args)])
    assert "Traceback" not in result.output
    return result


def test_the_command_writes_validating_scripts_and_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = run("generate", "--count", "2", "--lang", "both", "--difficulty", "hard",
                 "--players", "4", "--acts", "2", "--seed", "5", "--out", out)
    assert result.exit_code == 0, result.output
    assert "wrote 4 scripts of 2 hard mysteries" in result.output
    assert re.search(r"in \d+\.\d s \(\d+\.\d per second\)", result.output)
    one = run("generate", "--count", "1", "--difficulty", "easy", "--out", tmp_path / "one")
    assert "wrote 1 script of 1 easy mystery" in one.output and "mysteries/s" not in one.output
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert folders == ["gen-hard-4p2a-s5-en", "gen-hard-4p2a-s5-zh", "gen-hard-4p2a-s6-en",
                       "gen-hard-4p2a-s6-zh"]
    assert (out / MANIFEST).is_file()
    script = load_script(out / folders[0])
    assert len(script.characters) == 4 and len(script.acts) == 2
    checked = run("validate", out)
    assert checked.exit_code == 0 and "4 script(s): 0 error(s)" in checked.output
    shown = run("show", out / folders[0], "--truth")
    assert "is the only answer" in shown.output and "deciding:" in shown.output
    hidden = run("show", out / folders[0])
    assert "is the only answer" not in hidden.output


def test_the_command_never_writes_over_another_folder(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert run("generate", "--out", out).exit_code == 1
    assert run("generate", "--out", out, "--overwrite").exit_code == 1
    assert (out / "notes.txt").read_text() == "mine"
    fresh = tmp_path / "fresh"
    assert run("generate", "--out", fresh).exit_code == 0
    assert run("generate", "--out", fresh, "--overwrite", "--seed", "9").exit_code == 0
    assert [p.name for p in fresh.iterdir() if p.is_dir()] == ["gen-medium-5p1a-s9-en"]


def test_the_command_refuses_bad_options(tmp_path: Path) -> None:
    assert run("generate", "--players", "2", "--out", tmp_path / "a").exit_code != 0
    assert run("generate", "--difficulty", "brutal", "--out", tmp_path / "b").exit_code != 0
    assert run("generate", "--lang", "fr", "--out", tmp_path / "c").exit_code != 0


def _shape(node: object) -> object:
    """A data file's keys, nested, with the length of the lists a mystery shares between
    its languages."""
    if isinstance(node, dict):
        return {key: _shape(value) for key, value in node.items()}
    return len(node) if isinstance(node, list) else None


def test_the_two_languages_text_files_are_parallel() -> None:
    """Every entry exists in both languages, and the lists both languages index the same
    way (titles, occasions, amounts, belongings, wounds) are as long in each."""
    from jubensha.scripts.generate.text import _data
    from jubensha.scripts.generate.world import settings

    english, chinese = _data("text.en.yaml"), _data("text.zh.yaml")
    assert _keys(english) == _keys(chinese)
    for shared in ("title", "occasion", "amounts", "belongings", "wounds", "traits"):
        assert _shape(english[shared]) == _shape(chinese[shared]), shared
    for name, setting in settings().items():
        for field in ("venue", "era", "records"):
            assert len(setting[field]["en"]) == len(setting[field]["zh"]), (name, field)
        for table in ("places", "items", "roles", "victims"):
            assert all({"en", "zh"} <= set(entry) for entry in setting[table].values())
    names = {lang: _data(f"names.{lang}.yaml") for lang in ("en", "zh")}
    assert _shape(names["en"]) == _shape(names["zh"])


def _keys(node: object) -> object:
    if isinstance(node, dict):
        return {key: _keys(value) for key, value in node.items()}
    return None


def test_a_world_whose_evidence_does_not_prove_it_is_never_written() -> None:
    """Without the rival's alibi the facts leave two answers: the generator rejects the
    world (and would draw another)."""
    import random

    from jubensha.scripts.generate.evidence import plan
    from jubensha.scripts.generate.knobs import knobs
    from jubensha.scripts.generate.prove import Rejected, prove
    from jubensha.scripts.generate.world import draw

    world = draw(2, 5, 1, knobs("hard", 1))
    evidence = plan(world, random.Random(0))
    deciding = prove(world, evidence).deciding
    deciding.facts.clear()
    with pytest.raises(Rejected, match="answers"):
        prove(world, evidence)


def test_the_command_s_limits_are_the_generator_s() -> None:
    """The command keeps its own copy of the limits so that the other scripts commands
    start without importing the generator."""
    from jubensha.scripts.generate import batch, build, command
    from jubensha.scripts.proof import model

    assert (command.MIN_PLAYERS, command.MAX_PLAYERS, command.MAX_ACTS, command.MAX_COUNT) \
        == (build.MIN_PLAYERS, build.MAX_PLAYERS, build.MAX_ACTS, batch.MAX_COUNT)
    assert command.Languages == batch.Languages and command.Level == model.Level


def test_a_secret_is_told_alike_across_the_sheet_and_sentences_start_with_a_capital():
    import yaml

    text = yaml.safe_load((Path(__file__).parents[2] / "src" / "jubensha" / "scripts" /
                           "generate" / "data" / "text.en.yaml").read_text(encoding="utf-8"))
    openings = {kind: [max(re.split(r"\{[^}]*\}", variant), key=len).strip()[:40]
                       for variant in variants]
                for kind, variants in text["secret_story"].items()}
    for seed in range(12):
        script, = generate(Request(seed=seed, players=5, acts=1, level="medium"))
        for character in script.characters:
            sheet = dump_script(Script.model_validate({**script.model_dump(),
                                                      "characters": [character]}))
            for kind, starts in openings.items():
                told = [start for start in starts if start and start in sheet]
                assert len(told) <= 1, (seed, character.name, kind, told)
        intro = script.background
        assert not re.search(r"(^|[.!?:]\s+)the\s", intro), intro
        assert not script.title.lower().startswith("the the"), script.title
