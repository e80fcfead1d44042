"""`jubensha scripts export`: a set of mysteries as JSONL records, one per question, that
hold only what players can read, and a manifest that says what the set holds.

The leak tests are the specification of "only what players can read": over many generated
mysteries no record carries a field or a text that marks the answer, and a record is the
same whatever the fields that mark the answer say (a counterfactual: flags flipped, sides
swapped, the truth rewritten, the cards listed in another order)."""

from __future__ import annotations

import hashlib
import json
from itertools import product
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import find_script, load_script, save_script
from jubensha.scripts.export.casebook import accounts, seat_view, table_view
from jubensha.scripts.export.model import MANIFEST, RECORDS, Record
from jubensha.scripts.export.records import records
from jubensha.scripts.export.write import ExportError, read_manifest, read_records, write_set
from jubensha.scripts.generate import Request, generate
from jubensha.scripts.model import Script, Truth
from jubensha.scripts.proof.phrases import Reader

runner = CliRunner()
MARKER_KEYS = {"key", "misleading", "side", "killed", "truth", "murderer", "murderers",
               "mission", "secrets", "story", "solution", "proof"}


def many() -> list[Script]:
    """120 generated scripts: 20 seeds of each level, both languages, 3 to 10 players, 1 to
    3 acts."""
    found = []
    for level, seed in product(("easy", "medium", "hard"), range(20)):
        request = Request(seed=seed, players=3 + seed % 8, acts=1 + seed % 3, level=level)
        found += generate(request, ("en", "zh"))
    return found


@pytest.fixture(scope="module")
def scripts() -> list[Script]:
    return many()


def test_a_generated_mystery_asks_who_with_every_character_a_choice_then_how_and_why(
        ) -> None:
    script = generate(Request(seed=4, players=6, level="hard"))[0]
    made, skipped = records(script)
    assert skipped == [] and [r.aspect for r in made] == ["who", "how", "why", "when"]
    who = made[0]
    assert who.choices == script.names and who.view == "table" and who.points == 10
    assert who.answer == [chr(ord("A") + script.names.index(script.murderers[0]))]
    proof = script.truth.proof  # type: ignore[union-attr]
    how = made[1]
    assert [how.choices[ord(a) - ord("A")] for a in how.answer] == [proof.weapon]
    assert (who.level, who.seed, who.language, who.source, who.players) == (
        "hard", 4, "en", "generated", 6)
    assert {r.context for r in made} == {table_view(script)}


def test_the_table_view_holds_the_story_every_card_and_what_the_innocent_tell(
        scripts: list[Script]) -> None:
    script = scripts[0]
    context = table_view(script)
    assert script.background.strip() in context
    for clue in script.clues:
        assert clue.text in context
    for character in script.characters:
        assert character.description in context
        if character.name not in script.murderers:
            for entry in character.timeline:
                assert entry.text in context


def _sentences_of_murderers_sheets(script: Script) -> list[str]:
    """What only a murderer's sheet says about the answer: its secrets, mission, goals,
    rules, and any timeline entry that names the weapon and the victim (its account of
    the kill)."""
    proof = script.truth.proof  # type: ignore[union-attr]
    victim = script.victims[0].name
    found = []
    for name in script.murderers:
        murderer = script.character(name)
        found += [*murderer.secrets, murderer.mission, *murderer.final_goals, *murderer.rules]
        found += [e.text for e in murderer.timeline
                  if proof.weapon in e.text and victim in e.text]
    return [text for text in found if text.strip()]


def test_no_record_carries_a_field_or_a_text_that_marks_the_answer(
        scripts: list[Script], tmp_path: Path) -> None:
    manifest, skipped = write_set(tmp_path, ((s, None) for s in scripts))
    assert skipped == [] and manifest.records == 4 * len(scripts)
    by_id = {s.id: s for s in scripts}
    lines = (tmp_path / RECORDS).read_text(encoding="utf-8").splitlines()
    assert len(lines) == manifest.records
    kills = 0
    for line in lines:
        data = json.loads(line)
        assert not MARKER_KEYS & set(data), data["id"]
        record = Record.model_validate(data)
        script = by_id[record.script]
        truth = script.truth
        assert truth is not None
        told = [truth.narrative, truth.method, truth.solution, *truth.reasoning_chain,
                *_sentences_of_murderers_sheets(script)]  # (the motive is on a card)
        kills += record.aspect == "who"
        for text in (t.strip() for t in told if t.strip()):
            assert text not in record.context, (record.id, text)
    assert kills == len(scripts)


def _counterfactual(script: Script) -> Script:
    """``script`` with everything that marks the answer changed: the cards' flags
    flipped and listed in reverse, every side swapped, the murderers' sheets' goals and
    secrets rewritten, and a truth naming someone else."""
    other = next(n for n in script.names if n not in script.murderers)
    clues = [c.model_copy(update={"key": not c.key, "misleading": not c.misleading})
             for c in reversed(script.clues)]
    characters = [c.model_copy(update={
        "side": "civilian" if c.side == "murderer" else "murderer",
        "killed": [] if c.killed else [v.name for v in script.victims],
        "mission": "Changed.", "final_goals": ["Changed."], "secrets": ["Changed."],
        "rules": ["Changed."]}) for c in script.characters]
    assert script.truth is not None
    truth = Truth(murderers=[other], method="changed", motive="changed",
                  narrative="changed", proof=script.truth.proof)
    return script.model_copy(update={"clues": clues, "characters": characters,
                                      "truth": truth})


def test_a_record_is_the_same_whatever_the_fields_that_mark_the_answer_say(
        scripts: list[Script]) -> None:
    for script in scripts[::7]:
        changed = _counterfactual(script)
        assert table_view(changed) == table_view(script), script.id
        for character, twin in zip(script.characters, changed.characters, strict=True):
            assert seat_view(changed, twin) == seat_view(script, character)


def test_the_cards_come_in_an_order_of_the_script_not_of_the_file() -> None:
    """The file's order follows how the generator built the cards (the proof's first):
    the export shuffles them, the same way each time."""
    script = generate(Request(seed=2, level="medium"))[0]
    context = table_view(script)
    shown = sorted(script.clues, key=lambda c: context.index(c.text))
    assert [c.id for c in shown] != [c.id for c in script.clues]
    assert table_view(script) == context


def test_a_seat_reads_its_own_script_and_never_anothers() -> None:
    script = find_script("lighthouse-keeper")
    made, _ = records(script)
    assert made and {r.view for r in made} == {"seat"}
    for record in made:
        me = script.character(record.asked_of or "")
        assert me.story.strip() in record.context
        for other in script.characters:
            if other.name != me.name and other.story.strip():
                assert other.story.strip() not in record.context


def test_a_question_whose_answer_is_no_option_is_left_out_and_named() -> None:
    script = find_script("lighthouse-keeper")
    asked = next(q for q in script.questions.choice if q.asked_of)
    broken = asked.model_copy(update={"answer": ["z"]})
    script = script.model_copy(update={"questions": script.questions.model_copy(
        update={"choice": [broken]})})
    assert records(script) == ([], [f"{asked.id}: answer 'z' is none of the options"])


def test_the_manifest_counts_the_records_and_hashes_the_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["scripts", "export", "--count", "2", "-d", "easy,hard",
                                 "--lang", "both", "--players", "4", "--out",
                                 str(tmp_path / "set"), "lighthouse-keeper"])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "set"
    manifest = read_manifest(folder)
    data = (folder / RECORDS).read_bytes()
    assert manifest.sha256 == hashlib.sha256(data).hexdigest()
    assert manifest.records == len(data.splitlines()) == len(list(read_records(
        folder / RECORDS)))
    assert manifest.counts["level"]["easy"] == manifest.counts["level"]["hard"] == 16
    assert manifest.counts["language"] == {"en": 16 + manifest.counts["level"]["none"],
                                           "zh": 16}
    assert [(o.level, o.seed, o.language) for o in manifest.scripts[:2]] == [
        ("easy", 0, "en"), ("easy", 0, "zh")]
    assert manifest.scripts[-1].path == "lighthouse-keeper"
    assert manifest.scripts[0].path is None  # generated here: rebuilt from its seed
    assert f"wrote {manifest.records} questions of 9 scripts" in result.output


def test_a_generated_mystery_read_from_its_file_is_played_from_that_file(
        tmp_path: Path) -> None:
    result = runner.invoke(app, ["scripts", "generate", "--out", str(tmp_path / "gen")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "gen" / "gen-medium-5p1a-s0-en"
    assert runner.invoke(app, ["scripts", "export", str(folder), "--out",
                               str(tmp_path / "set")]).exit_code == 0
    entry = read_manifest(tmp_path / "set").scripts[0]
    assert (entry.path, entry.seed, entry.level) == (str(folder.resolve()), 0, "medium")


@pytest.mark.parametrize(("args", "problem"), [
    (["--count", "0"], "nothing to export"),
    (["--count", "1", "-d", "easy,brutal"], "--difficulty: 'brutal' is not one of"),
    (["--count", "1", "no-such-script"], "no-such-script: (name): no bundled script"),
])
def test_a_wrong_request_is_one_line_and_writes_nothing(
        tmp_path: Path, args: list[str], problem: str) -> None:
    result = runner.invoke(app, ["scripts", "export", "--out", str(tmp_path / "set"), *args])
    assert result.exit_code != 0 and problem in result.output
    assert not (tmp_path / "set").exists()


def test_a_written_set_is_overwritten_only_when_asked(tmp_path: Path) -> None:
    out = str(tmp_path / "set")
    args = ["scripts", "export", "--count", "1", "-d", "easy", "--lang", "en", "--out", out]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code != 0 and "not empty" in again.output
    assert runner.invoke(app, [*args, "--overwrite"]).exit_code == 0
    (tmp_path / "set" / "notes.txt").write_text("mine", encoding="utf-8")
    refused = runner.invoke(app, [*args, "--overwrite"])
    assert refused.exit_code != 0 and (tmp_path / "set" / "notes.txt").is_file()


def test_a_bad_line_of_a_records_file_is_named(tmp_path: Path) -> None:
    script = generate(Request(seed=1, level="easy"))[0]
    write_set(tmp_path, [(script, None)])
    path = tmp_path / RECORDS
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["answer"] = ["Q"]
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n", encoding="utf-8")
    with pytest.raises(ExportError, match=rf"{RECORDS}:2: .*answer Q is not one of the choices"):
        list(read_records(path))
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "version": 9}), encoding="utf-8")
    with pytest.raises(ExportError, match=f"{MANIFEST}: .*version 9 is not 1"):
        read_manifest(tmp_path)


@pytest.mark.datasets
def test_imported_wellplay_scripts_export_each_characters_questions(
        datasets: Path, tmp_path: Path) -> None:
    imported = tmp_path / "wellplay"
    result = runner.invoke(app, ["scripts", "import", "wellplay", str(
        datasets / "wellplay" / "english"), str(imported), "--all"])
    assert imported.is_dir(), result.output
    scripts = [load_script(p) for p in sorted(imported.glob("*/script.yaml"))]
    assert runner.invoke(app, ["scripts", "export", str(imported), "--out",
                               str(tmp_path / "set")]).exit_code == 0
    exported = list(read_records(tmp_path / "set" / RECORDS))
    asked = sum(1 for s in scripts for q in s.questions.choice if q.asked_of)
    assert asked - 20 < len(exported) <= asked  # a few rows have no answer or no question
    assert {r.view for r in exported} == {"seat"} and {r.source for r in exported} == {
        "wellplay"}
    assert {r.points for r in exported} == {10, 5, 2}


def _holes(script: Script) -> dict[str, bool]:
    """Whether each character's account leaves a slot of the time of death untold."""
    proof = script.truth.proof  # type: ignore[union-attr]
    assert proof is not None
    reader = Reader(script.language, script.names, [v.name for v in script.victims])
    clock = {f"{(m // 60):02d}:{m % 60:02d}": m for m in range(24 * 60)}
    alive = max(clock[f.start] for f in proof.facts if f.kind == "alive" and f.start)
    dead = min(clock[f.start] for f in proof.facts if f.kind == "dead" and f.start)
    step = proof.world.step_minutes
    holes = {}
    for part in accounts(script):
        told: set[int] = set()
        for said in (s for line in part.lines for s in reader.read(line, part.name)):
            if said.kind in ("at", "alone") and said.who == part.name and said.start:
                end = clock[said.end] if said.end else clock[said.start] + step
                told |= set(range(clock[said.start], end, step))
        holes[part.name] = any(t not in told for t in range(alive, dead, step))
    return holes


def test_no_account_has_a_hole_in_the_time_of_death_that_names_the_murderer(
        scripts: list[Script]) -> None:
    named = [s.id for s in scripts
             if [n for n, hole in _holes(s).items() if hole] == s.murderers]
    assert len(named) < len(scripts) / 4, named


def test_two_questions_of_one_script_with_one_id_are_refused(tmp_path: Path) -> None:
    script = find_script("lighthouse-keeper")
    asked = [q for q in script.questions.choice if q.asked_of][:2]
    twins = [asked[0], asked[1].model_copy(update={"id": asked[0].id})]
    script = script.model_copy(update={"questions": script.questions.model_copy(
        update={"choice": twins})})
    with pytest.raises(ExportError, match=f"two questions have the id '{asked[0].id}'"):
        write_set(tmp_path, [(script, "lighthouse-keeper")])
    assert not (tmp_path / RECORDS).exists()


def test_a_generated_mystery_without_a_who_question_is_asked_who_from_its_truth() -> None:
    script = generate(Request(seed=3, level="easy"), ("zh",))[0]
    kept = [q for q in script.questions.choice if q.set == "inferential" and q.aspect != "who"]
    script = script.model_copy(update={"questions": script.questions.model_copy(
        update={"choice": kept})})
    made, _ = records(script)
    assert [r.aspect for r in made] == ["who", "how", "why", "when"]
    assert made[0].question == f"谁杀害了{script.victims[0].name}？"
    assert [made[0].choices[ord(a) - ord("A")] for a in made[0].answer] == script.murderers


def test_a_script_that_says_it_is_generated_with_a_wrong_request_is_named(
        tmp_path: Path) -> None:
    script = generate(Request(seed=1, level="easy"))[0]
    script.metadata.extra["generator"]["level"] = "brutal"
    save_script(script, tmp_path / "s")
    result = runner.invoke(app, ["scripts", "export", str(tmp_path / "s"), "--out",
                                 str(tmp_path / "set")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert (f"{(tmp_path / 's').resolve()}: metadata.extra.generator: level: Input should be "
            "'easy'") in " ".join(result.output.split())
