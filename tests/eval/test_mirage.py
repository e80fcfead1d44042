"""The MPIRD-LLMA / MIRAGE metrics: hand-computed trust, clue and Victory fixtures, ROUGE-L
reconstruction in English and Chinese, judge failures, and every metric on a MIRAGE game
played with the scripted fake and judged by a scripted judge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jubensha.engine.events import ClueRevealed, Investigated, Rated, Spoke, VoteCast
from jubensha.engine.procedure import find_procedure
from jubensha.eval.judge import EvalError, open_session
from jubensha.eval.mirage import (
    clue_investigation_metric,
    doubt_belief_metric,
    llm_score_metric,
    mirage_metric,
    reconstruction_metric,
)
from jubensha.eval.mirage_reading import history_lines, render_lines, script_parts
from jubensha.eval.registry import MetricContext
from jubensha.llm.base import Request
from jubensha.llm.calls import read_calls
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunLog, read_run
from jubensha.runs.play import PlayConfig, SeatPlan, play_game
from jubensha.scripts import find_script
from jubensha.scripts.model import Character, Clue, Kill, Script, Truth, Victim

SEATS = ["Tom", "Nora", "Sam", "Agnes"]
SCRIPT = Script(
    id="gull", title="Gull", language="en", victims=[Victim(name="Elias")],
    characters=[Character(name=n, story=f"{n} lives on the rock.") for n in SEATS[:3]]
    + [Character(name="Agnes", side="murderer", killed=["Elias"],
                 story="Agnes struck Elias on the stairs.")],
    clues=[Clue(id=f"c{i}", text=f"Clue {i}.", location=place)
           for i, place in enumerate(["lamp room", "lamp room", "kitchen", "boat"], 1)]
    + [Clue(id="p1", text="A public note.")],
    truth=Truth(murderers=["Agnes"], kills=[Kill(victim="Elias", killers=["Agnes"])]))


def rated(rater: str, speaker: str, trust: int, doubt: int) -> Rated:
    return Rated(rater=rater, speaker=speaker, statement=0, trust=trust, doubt=doubt,
                 audience=[])


RATINGS = [rated("Tom", "Agnes", 2, 0), rated("Nora", "Agnes", 1, 1),
           rated("Agnes", "Tom", 0, 2), rated("Sam", "Nora", 1, 1)]
BALLOTS = [VoteCast(voter="Tom", target="Agnes", victim="Elias", audience=[]),
           VoteCast(voter="Nora", target="Agnes", victim="Elias", audience=[]),
           VoteCast(voter="Sam", target="Tom", victim="Elias", audience=[]),
           VoteCast(voter="Agnes", target="Tom", victim="Elias", audience=[])]


def run_of(events: list[Any], path: str = "crafted") -> RunLog:
    return RunLog(Path(path), None, [e.model_copy(update={"index": i})
                                     for i, e in enumerate(events)], [], None)


def context(events: list[Any], script: Script = SCRIPT, **kwargs: Any) -> MetricContext:
    return MetricContext(script=script, run=run_of(events), **kwargs)


def test_doubt_and_belief_probabilities_and_tii_by_hand() -> None:
    result = asyncio.run(doubt_belief_metric(context(RATINGS)))
    agnes = result.received["Agnes"]
    # Agnes: trust 2+1, doubt 0+1 over 2 ratings of at most 2 each.
    assert (agnes.p_doubt, agnes.p_belief, agnes.tii) == (0.25, 0.75, 0.75)
    assert result.received["Tom"].tii == 0.0
    assert result.received["Nora"].tii == 0.5
    assert result.received["Sam"].tii is None  # never rated: left out of the mean
    assert result.tii == pytest.approx((0.75 + 0.0 + 0.5) / 3)
    culprits, civilians = result.sides["culprits"], result.sides["civilians"]
    assert (culprits.p_doubt, culprits.p_belief) == (0.25, 0.75)
    assert (civilians.p_doubt, civilians.p_belief) == (0.75, 0.25)
    assert result.given["Agnes"].tii == 0.0 and result.given["Tom"].tii == 1.0


def test_clue_investigation_counts_distinct_located_clues_found() -> None:
    events = [Investigated(seat="Tom", location="lamp room", clue_ids=["c1"]),
              ClueRevealed(clue_id="c1", text="Clue 1.", location="lamp room", found_by="Tom"),
              Investigated(seat="Nora", location="kitchen", clue_ids=["c3"]),
              ClueRevealed(clue_id="c3", text="Clue 3.", location="kitchen", found_by="Nora"),
              Investigated(seat="Tom", location="boat", clue_ids=[])]
    result = asyncio.run(clue_investigation_metric(context(events)))
    assert result.clues == 4  # the public note has no location
    assert result.cic == 0.5
    assert result.searches == {"Tom": 2, "Nora": 1}
    assert result.found["Tom"] == ["c1"] and result.found["Sam"] == []
    assert result.clue_count is None  # ours: the ratio only
    release = asyncio.run(clue_investigation_metric(context(
        events, options={"mirage": {"reading": "release"}})))
    assert release.cic == 0.5 and release.clue_count == 3  # the release's count of searches
    assert any("the release's value (clue_count): 3" in note
               for note in release.tables()[0].notes)


def test_the_release_reading_prints_its_own_tii_and_says_when_it_has_none() -> None:
    ours = asyncio.run(doubt_belief_metric(context(RATINGS)))
    release = asyncio.run(doubt_belief_metric(context(
        RATINGS, options={"mirage": {"reading": "release"}})))
    assert ours.fii is None and len(ours.tii_rows()) == 1
    assert release.tii == ours.tii
    # Sam was never rated: the release's mean over every candidate divides by zero there.
    assert release.fii is None
    assert release.tii_rows()[1][-1].startswith("– (the release divides by zero")
    rated_all = RATINGS + [rated("Tom", "Sam", 1, 2)]
    whole = asyncio.run(doubt_belief_metric(context(
        rated_all, options={"mirage": {"reading": "release"}})))
    # fii per candidate: Agnes 1/4, Tom 2/2, Nora 1/2, Sam 2/3
    assert whole.fii == pytest.approx((0.25 + 1.0 + 0.5 + 2 / 3) / 4)
    assert whole.tii == pytest.approx(1 - whole.fii)


def test_victory_ranks_the_culprit_by_votes_and_suspicion() -> None:
    # Votes alone tie Agnes and Tom on 2 (weight 4 each): optimistic rank 1.
    alone = asyncio.run(mirage_metric(context(BALLOTS)))
    assert alone.victory.ranks == {"Elias": 1} and alone.victory.mrr == 1.0
    # Ratings add doubt - trust: Agnes 8 - 2 = 6, Tom 8 + 2 = 10, so Agnes ranks second.
    flipped = asyncio.run(mirage_metric(context(RATINGS + BALLOTS)))
    assert flipped.victory.scores["Elias"]["Agnes"] == 6.0
    assert flipped.victory.scores["Elias"]["Tom"] == 10.0
    assert flipped.victory.mrr == 0.5
    # The paper's reading: identified only when first; chance: 1 culprit in a pool of 4.
    assert alone.victory.rate == 1.0 and flipped.victory.rate == 0.0
    assert flipped.victory.chance_rate == 0.25
    assert flipped.ici is None and flipped.sci is None
    assert "ICI and SCI need a judge (--judge MODEL)" in flipped.notes


def fill_scores(value: int) -> Any:
    """A scripted judge reply giving every requested ability ``value``."""
    def reply(request: Request) -> dict[str, Any]:
        fields = (request.json_schema or {}).get("properties", {})
        return {"reason": "fair", **{k: value for k in fields if k != "reason"}}
    return reply


def one_seat_script(language: str, story: str) -> Script:
    return Script(id="one", title="One", language=language,  # type: ignore[arg-type]
                  characters=[Character(name="Ann", story=story), Character(name="Bo")],
                  truth=Truth(murderers=["Bo"]))


@pytest.mark.parametrize(("language", "story", "rebuilt", "expected"), [
    # LCS "the keeper lit lamp" = 4 of 5 and 7 tokens: F = 2(4/5)(4/7)/(4/5 + 4/7).
    ("en", "The keeper lit the lamp at dusk.", "the keeper lit a lamp", 2 / 3),
    # Chinese counts characters: all 6 of the reconstruction, 6 of 9 in the script.
    ("zh", "我在黄昏点亮了灯塔。", "我黄昏点亮灯", 0.8),
])
def test_rouge_reconstruction_by_hand(language: str, story: str, rebuilt: str,
                                      expected: float) -> None:
    judge = ScriptedModel(replies={"judge.mirage.reconstruct": lambda r: {
        "reasoning": "from the dialogue", "script": rebuilt}})
    events = [Spoke(speaker="Ann", kind="statement", text="hello")]
    result = asyncio.run(reconstruction_metric(context(
        events, one_seat_script(language, story), judge=judge)))
    assert result.method == "judge"
    assert result.seats["Ann"].parts["story"].fmeasure == pytest.approx(expected)
    assert result.seats["Ann"].rouge == pytest.approx(expected)


def test_reconstruction_without_a_judge_uses_the_seats_own_words() -> None:
    events = [Spoke(speaker="Ann", kind="statement", text="the keeper lit a lamp"),
              Spoke(speaker="Bo", kind="statement", text="at dusk")]
    result = asyncio.run(reconstruction_metric(context(
        events, one_seat_script("en", "The keeper lit the lamp at dusk."))))
    assert result.method == "extractive"
    assert result.seats["Ann"].rouge == pytest.approx(2 / 3)
    assert result.seats["Bo"].parts == {}  # Bo's script is empty: nothing to compare


def test_ici_and_sci_follow_the_public_release() -> None:
    judge = ScriptedModel(replies={"judge.mirage.score": fill_scores(10),
                                   "judge.mirage.reconstruct": lambda r: {
                                       "reasoning": "-", "script": "the keeper lit a lamp"}})
    script = one_seat_script("en", "The keeper lit the lamp at dusk.")
    events = [Spoke(speaker="Ann", kind="statement", text="hi"),
              Spoke(speaker="Bo", kind="statement", text="hello")]
    result = asyncio.run(mirage_metric(context(events, script, judge=judge)))
    assert result.scores is not None
    assert result.scores.seats["Ann"].total == 50
    assert result.ici == 0.5  # (10 + 10 + 10 + 10) / 80
    # SCI: only Ann has a script to reconstruct: (10/20 + 2/3) / 2.
    assert result.sci == pytest.approx((0.5 + 2 / 3) / 2)
    per_ability = [r for r in judge.requests if r.purpose == "judge.mirage.score"]
    assert len(per_ability) == 2 * 5  # one call per seat and ability


def test_single_call_scoring_rates_all_five_abilities_at_once() -> None:
    judge = ScriptedModel(replies={"judge.mirage.score": fill_scores(20)})
    events = [Spoke(speaker="Ann", kind="statement", text="hi")]
    result = asyncio.run(llm_score_metric(context(
        events, one_seat_script("en", "x"), judge=judge,
        options={"mirage": {"score_calls": "single"}})))
    assert result.seats["Ann"].total == 100 and result.llm_score == 100
    assert len(judge.requests) == 2


def test_out_of_range_or_garbage_judge_replies_are_recorded_failures() -> None:
    replies = iter([{"reason": "too generous", "role_play": 25}] * 3 + ["no json at all"] * 3)
    judge = ScriptedModel(replies={
        "judge.mirage.score": lambda r: next(replies, None) or fill_scores(7)(r)})
    events = [Spoke(speaker="Ann", kind="statement", text="hi")]
    result = asyncio.run(llm_score_metric(context(
        events, one_seat_script("en", "x"), judge=judge)))
    failed = {(f.seat, f.item) for f in result.failures}
    assert failed == {("Ann", "role_play"), ("Ann", "reasoning")}
    assert all(f.purpose == "judge.mirage.score" for f in result.failures)
    ann = result.seats["Ann"]
    assert ann.scores["role_play"] is None and ann.scores["communication"] == 7
    assert ann.total is None and ann.ici is None
    assert result.seats["Bo"].total == 35
    assert "failed" in result.tables()[0].notes[0]


def test_a_judge_metric_without_a_judge_says_so() -> None:
    events = [Spoke(speaker="Ann", kind="statement", text="hi")]
    with pytest.raises(EvalError, match="mirage-llm-score needs a judge"):
        asyncio.run(llm_score_metric(context(events, one_seat_script("en", "x"))))


def test_history_is_in_the_name_action_content_form_in_both_languages() -> None:
    events = [Spoke(speaker="Tom", kind="question", to="Nora", text="Where were you?"),
              Investigated(seat="Nora", location="kitchen", clue_ids=["c3"]),
              ClueRevealed(clue_id="c3", text="Clue 3.", location="kitchen", found_by="Nora"),
              Spoke(speaker="Sam", kind="statement", text="secret", audience=["Sam"])]
    lines = history_lines(run_of(events).events)
    assert render_lines(lines, "en").splitlines() == [
        "Tom: [Ask Nora]: Where were you?", "Nora: [Investigate kitchen]: Clue 3."]
    assert render_lines(lines, "zh").splitlines()[0] == "Tom：【询问】【Nora】：Where were you?"


def test_script_parts_follow_the_six_mirage_parts() -> None:
    script = find_script("halvard-observatory")
    parts = script_parts(script.characters[0])
    assert set(parts) <= {"story", "script", "relationships", "performance", "purpose",
                          "ability"}
    assert "story" in parts and "purpose" in parts


# -- a MIRAGE game played with the scripted fake ---------------------------------------------
@pytest.fixture(scope="module")
def mirage_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = find_script("lighthouse-keeper")
    out = tmp_path_factory.mktemp("mirage") / "run"
    plans = {c.name: SeatPlan(name=c.name, architecture="mirage", model="scripted")
             for c in script.characters}
    procedure = find_procedure("mirage").with_options(rounds=2)
    asyncio.run(play_game(PlayConfig(script=script, procedure=procedure, plans=plans, seed=3,
                                     script_source="lighthouse-keeper"), out,
                          models={"scripted": ScriptedModel(seed=3)}))
    return out


def test_every_mirage_metric_scores_a_played_game_with_a_scripted_judge(
        mirage_run: Path) -> None:
    run = read_run(mirage_run)
    script = find_script("lighthouse-keeper")
    session = open_session(mirage_run)
    judge = ScriptedModel(seed=5, name="judge")
    ctx = MetricContext(script=script, run=run, judge=judge, calls=session.calls,
                        cache=session.cache)
    try:
        trust = asyncio.run(doubt_belief_metric(ctx))
        clues = asyncio.run(clue_investigation_metric(ctx))
        indices = asyncio.run(mirage_metric(ctx))
    finally:
        session.close()
    ratings = [e for e in run.events if isinstance(e, Rated)]
    assert sum(c.ratings for c in trust.received.values()) == len(ratings) > 0
    assert 0 <= trust.tii <= 1  # type: ignore[operator]
    found = {c for e in run.events if isinstance(e, Investigated) for c in e.clue_ids}
    assert clues.cic == len(found) / len([c for c in script.clues if c.location])
    assert indices.victory.mrr is not None and indices.ici is not None
    assert indices.sci is not None and not indices.scores.failures  # type: ignore[union-attr]
    records = read_calls(mirage_run / "eval" / "calls.jsonl")
    purposes = {r.purpose for r in records}
    assert purposes == {"judge.mirage.score", "judge.mirage.reconstruct"}
    assert {r.subject for r in records} == set(script.names)
    assert {(r.seat, r.access) for r in records} == {(None, "truth"), (None, "scripts")}
    assert [r.index for r in records] == list(range(len(records)))
    scored = json.loads(indices.model_dump_json())
    assert set(scored["scores"]["seats"]) == set(script.names)


def test_victory_can_be_scored_against_the_releases_culprit_list() -> None:
    from jubensha.scripts.model import Derivation, Metadata

    released = SCRIPT.model_copy(update={"metadata": Metadata(derivations=[Derivation(
        fact="culprits_release", value=["Tom"])])})
    events = RATINGS + BALLOTS
    truth = asyncio.run(mirage_metric(context(events, released)))
    release = asyncio.run(mirage_metric(context(events, released,
                                                options={"mirage": {"culprits": "release"}})))
    assert truth.victory.mrr == 0.5 and release.victory.mrr == 1.0
    assert release.trust.murderers == ["Tom"]
    with pytest.raises(EvalError, match="no culprit list of the MIRAGE release"):
        asyncio.run(mirage_metric(context(events, options={"mirage": {"culprits": "release"}})))


def test_eval_takes_the_release_reading_from_the_command_line(mirage_run: Path,
                                                              tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jubensha.cli import app

    runner = CliRunner()
    out = tmp_path / "trust.json"
    result = runner.invoke(app, ["eval", "mirage-trust", str(mirage_run), "--reading",
                                 "release", "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    scored = json.loads(out.read_text(encoding="utf-8"))
    assert scored["reading"] == "release"
    ours = asyncio.run(doubt_belief_metric(MetricContext(
        script=find_script("lighthouse-keeper"), run=read_run(mirage_run))))
    # One act: the release's per-stage counting keeps every rating.
    assert sum(c["ratings"] for c in scored["received"].values()) == sum(
        c.ratings for c in ours.received.values())
    wrong = runner.invoke(app, ["eval", "identification", str(mirage_run), "--reading",
                                "release"])
    assert wrong.exit_code != 0 and "--reading applies to the mirage metrics" in wrong.output
