"""WellPlay after a game: every seat answers its own question set each pass, points and
passes score as the PLAYER* paper does, the ssa/fsa references read what they may, the
PLAYER* vote rule decides the win, and ssa runs on every WellPlay script there is."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import VoteCast
from jubensha.eval.revote import run_rules, vote_winner
from jubensha.eval.wellplay_game import (
    WellPlayOptions,
    player_star_win,
    questions_by_seat,
    score_reference,
)
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunFolder, RunMeta, SeatInfo, read_run
from jubensha.scripts import Script, find_script
from jubensha.scripts.importers.wellplay import discover_wellplay, import_wellplay
from jubensha.scripts.model import CATEGORY_POINTS, ChoiceQuestion
from tests.eval.postgame_helpers import (
    evaluate,
    leaks,
    play,
    played,
    private_sentences,
    prompt,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("wellplay") / "run")


def asked_question(request: Request, script: Script) -> ChoiceQuestion:
    text = prompt(request)
    return next(q for q in script.questions.choice
                if q.set == "wellplay" and f"Question: {q.question}\n" in text)


async def test_each_seat_answers_its_own_questions_in_every_pass(game: Path) -> None:
    script = find_script("lighthouse-keeper")
    asked = questions_by_seat(script, "wellplay")
    result, calls = await evaluate("wellplay", game, samples=3)
    assert {c.purpose for c in calls} == {"wellplay.answer.dialogue"}
    per_seat = Counter(c.seat for c in calls if c.attempt in (None, 1))
    assert per_seat == {seat: 3 * len(qs) for seat, qs in asked.items()}
    assert sorted({c.sample for c in calls}) == [0, 1, 2]
    assert result.score is not None and len(result.score.passes) == 3
    assert result.questions == sum(len(qs) for qs in asked.values())
    for seat, qs in asked.items():
        assert result.seats[seat].questions == 3 * len(qs)
        assert result.seats[seat].total == 3 * sum(q.worth for q in qs)
    assert result.civilians_won in (True, False)
    # Evaluating again repeats no call: every reply comes from RUN_DIR/eval/cache.sqlite.
    again, calls = await evaluate("wellplay", game, samples=3)
    assert {c.origin for c in calls} == {"cache"}
    assert again.score == result.score


async def test_points_weight_the_score_and_passes_give_mean_and_sample_std(game: Path
                                                                          ) -> None:
    script = find_script("lighthouse-keeper")

    def objective_right(request: Request) -> dict:
        question = asked_question(request, script)
        wrong = next(k for k in question.options if k not in question.answer)
        right = question.category == "objective" and request.sample != 2
        return {"reason": "r", "answer": question.answer[0] if right else wrong}

    model = ScriptedModel(replies={"wellplay.answer.dialogue": objective_right}, name="oracle")
    result, _ = await evaluate("wellplay", game, seat_model=model, samples=3)
    questions = [q for qs in questions_by_seat(script, "wellplay").values() for q in qs]
    objective = sum(q.category == "objective" for q in questions)
    total = sum(q.worth for q in questions)
    assert CATEGORY_POINTS["objective"] == 10
    # Passes 0 and 1 get every objective question right and nothing else; pass 2 nothing.
    assert [p.score for p in result.score.passes] == pytest.approx(
        [10 * objective / total] * 2 + [0.0])
    assert result.score.overall.mean == pytest.approx(20 * objective / total / 3)
    assert result.score.overall.std == pytest.approx(
        (10 * objective / total) / 3 ** 0.5)  # sample std of (x, x, 0) is x / sqrt(3)
    assert result.score.categories["objective"].mean == pytest.approx(2 / 3)
    assert result.score.categories["reasoning"].mean == 0.0


async def test_the_references_answer_the_same_questions_from_what_they_may_read(game: Path
                                                                               ) -> None:
    script = find_script("lighthouse-keeper")
    dialogue, _ = await evaluate("wellplay", game, samples=1)
    fsa, calls = await evaluate("wellplay", game, samples=1, options={"answerer": "fsa"})
    assert {c.purpose for c in calls} == {"wellplay.answer.fsa"}
    assert fsa.answerer == "fsa" and fsa.questions == dialogue.questions
    everyone = " ".join(prompt(c) for c in calls)
    assert all(any(s in everyone for s in private_sentences(c, script))
               for c in script.characters)
    model = ScriptedModel()
    alone = await score_reference(script, "ssa", model, samples=2)
    assert alone.answerer == "ssa" and alone.questions == dialogue.questions
    assert {r.purpose for r in model.requests} == {"wellplay.answer.ssa"}
    for request in model.requests:
        me = next(c for c in script.characters if f"You play {c.name}." in prompt(request))
        text = " ".join(prompt(request).split())
        own = private_sentences(me, script)
        assert any(s in text for s in own)
        assert not [s for c in script.characters if c != me
                    for s in private_sentences(c, script) - own if s in text]
    with pytest.raises(ValueError, match="ssa or fsa"):
        await score_reference(script, "dialogue", model)


async def test_no_seat_prompt_after_the_game_holds_another_characters_private_text(
        tmp_path: Path) -> None:
    run_dir = await played(tmp_path / "run", procedure="thinkthrice")
    script = find_script("lighthouse-keeper")
    events = read_run(run_dir).events
    calls = []
    for name, options in [("wellplay", {}), ("factual", {"judge": "lexical"}),
                          ("inferential", {}), ("revote", {"revotes": 2})]:
        _, made = await evaluate(name, run_dir, samples=1, options=options)
        calls += [c for c in made if c.purpose.split(".")[-1] not in ("judge", "rationale")]
    assert {c.purpose for c in calls} == {"wellplay.answer.dialogue", "factual.answer",
                                          "inferential.answer.dialogue", "revote.vote"}
    assert leaks(script, events, calls) == []


def vote_run(tmp_path: Path, ballots: dict[str, str]) -> Path:
    folder = RunFolder(tmp_path / "votes", RunMeta(
        script_id="lighthouse-keeper", script_source="lighthouse-keeper", language="en",
        procedure={"name": "thinkthrice", "voting": {"method": "plurality", "ties": "none"}},
        seats={n: SeatInfo(architecture="naive", model="scripted") for n in ballots}, seed=0))
    for i, (voter, target) in enumerate(ballots.items()):
        folder.write_event(VoteCast(index=i, voter=voter, target=target, audience=[]))
    folder.close()
    return tmp_path / "votes"


def test_the_player_star_rule_eliminates_every_seat_with_half_the_votes(tmp_path: Path
                                                                         ) -> None:
    script = find_script("lighthouse-keeper")
    assert script.murderers == ["Agnes Pike"]
    run = read_run(vote_run(tmp_path, {"Tom Hale": "Agnes Pike", "Nora Vance": "Agnes Pike",
                                       "Samuel Reed": "Tom Hale", "Agnes Pike": "Tom Hale"}))
    # Two seats at 50%: PLAYER* eliminates both, so the murderer is out; the game's own
    # plurality rule with no tie-break eliminates no one.
    assert player_star_win(script, run) is True
    assert vote_winner(script, {None: {"a": "Agnes Pike", "b": "Agnes Pike", "c": "Tom Hale",
                                       "d": "Tom Hale"}}, run_rules(run),
                       random.Random(0)) == "murderers"
    run = read_run(vote_run(tmp_path / "2", {"Tom Hale": "Agnes Pike", "Nora Vance": "Tom Hale",
                                             "Samuel Reed": "Nora Vance",
                                             "Agnes Pike": "Tom Hale"}))
    assert player_star_win(script, run) is False


def test_the_wellplay_command_scores_runs_references_and_their_weighted_mean(
        game: Path, tmp_path: Path) -> None:
    out = tmp_path / "fsa.json"
    result = runner.invoke(app, ["eval", "wellplay", str(game), str(game), "--samples", "1",
                                 "--reference", "fsa", "--format", "markdown",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "WellPlay across 2 scripts or games" in result.output
    assert [r["answerer"] for r in json.loads(out.read_text())] == ["fsa", "fsa"]
    assert json.loads((game / "eval" / "wellplay.json").read_text())["answerer"] == "fsa"
    wrong = runner.invoke(app, ["eval", "similarity", str(game), "--reference", "ssa"])
    assert wrong.exit_code == 2 and "--reference applies to wellplay and inferential" in \
        wrong.output


def write_wellplay_folder(root: Path) -> Path:
    """A WellPlay-format script nobody here wrote into the datasets: two characters."""
    folder = root / "Two Rooms"
    (folder / "json").mkdir(parents=True)
    (folder / "final_result").mkdir()
    (folder / "json" / "script_info.json").write_text(json.dumps(
        {"agent_num": 2, "script_name": "Two Rooms", "character_name": ["Ann", "Bo"]}))
    stories = {"Ann": "Ann painted the red room. At nine Ann locked the blue door.",
               "Bo": "Bo hid the key under the mat. Bo killed Cy at ten with the lamp."}
    for name, story in stories.items():
        (folder / "json" / f"{name}.json").write_text(json.dumps(
            {"script": [story], "victims": ["Cy"], "kill_by_me": [int(name == "Bo")],
             "is_murderer": int(name == "Bo")}))
        (folder / "final_result" / f"{name}.csv").write_text(
            "value,type,question,a,b,c,d,e,truth\n"
            "a,a,Who killed Cy?,Ann,Bo,,,,b\n"
            "b,b,Which two are most suspicious?,Ann,Bo,Cy,,,b\n"
            "c,a,What is Ann to Bo?,neighbour,sister,,,,a\n")
    return folder


def test_ssa_and_fsa_score_any_wellplay_format_folder(tmp_path: Path) -> None:
    folder = write_wellplay_folder(tmp_path)
    out = tmp_path / "ssa.json"
    result = runner.invoke(app, ["eval", "wellplay-reference", str(folder), "--answerer",
                                 "ssa", "--model", "scripted", "--samples", "2",
                                 "--format", "json", "--out", str(out),
                                 "--log-dir", str(tmp_path / "log")])
    assert result.exit_code == 0, result.output
    scored = json.loads(out.read_text())
    assert scored["answerer"] == "ssa" and len(scored["score"]["passes"]) == 2
    assert scored["score"]["passes"][0]["total"] == 2 * (10 + 5 + 2)
    calls = (tmp_path / "log" / "eval" / "calls.jsonl").read_text().splitlines()
    assert len(calls) >= 2 * 6 and all('"wellplay.answer.ssa"' in c for c in calls)
    fsa = runner.invoke(app, ["eval", "wellplay-reference", str(folder), "lighthouse-keeper",
                              "--answerer", "fsa", "--model", "scripted", "--samples", "1",
                              "--format", "markdown"])
    assert fsa.exit_code == 0, fsa.output
    assert "WellPlay across 2 scripts or games" in fsa.output
    missing = runner.invoke(app, ["eval", "wellplay-reference", str(tmp_path / "nowhere"),
                                  "--model", "scripted"])
    assert missing.exit_code == 2 and "Traceback" not in missing.output


@pytest.mark.datasets
def test_ssa_scores_every_wellplay_script_in_the_datasets(datasets: Path) -> None:
    folders = discover_wellplay(datasets / "wellplay")
    assert len(folders) >= 18
    options = WellPlayOptions(max_questions=2)

    async def score_all() -> list:
        model = ScriptedModel()
        return [await score_reference(import_wellplay(f), "ssa", model, samples=1,
                                      options=options) for f in folders]

    for folder, result in zip(folders, asyncio.run(score_all()), strict=True):
        asked = questions_by_seat(import_wellplay(folder), "wellplay", 2)
        assert result.score is not None, folder
        assert result.questions == sum(len(qs) for qs in asked.values()), folder
        assert result.failures == 0 and 0 <= result.score.overall.mean <= 1
