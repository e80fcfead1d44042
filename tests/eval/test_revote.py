"""Re-votes from the final memory: each seat votes N times, each time afresh (nothing of one
re-vote reaches the next), and the ballots give the murderer identification accuracy and
the civilian win rate (ThinkThrice section 6.4)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import Spoke, VoteCast
from jubensha.engine.voting import VotingRules
from jubensha.eval.judge import EvalError
from jubensha.eval.revote import ReBallot, RevoteOptions, player_rules, score, vote_winner
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunFolder, RunMeta, SeatInfo
from jubensha.scripts import Script
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Character, Kill, Truth, Victim
from tests.eval.postgame_helpers import evaluate, play, prompt

runner = CliRunner()
SCRIPT = Script(
    id="garden", title="Garden", language="en", victims=[Victim(name="Zhao")],
    characters=[Character(name="Li", story="Li buried the knife in the garden."),
                Character(name="Wang", side="murderer", killed=["Zhao"],
                          story="Wang poured poison into the tea."),
                Character(name="Zhou", story="Zhou slept in the attic.")],
    truth=Truth(murderers=["Wang"], kills=[Kill(victim="Zhao", killers=["Wang"])]))
PLURALITY = VotingRules(method="plurality", ties="none")


def ballot(voter: str, target: str | None, sample: int) -> ReBallot:
    return ReBallot(voter=voter, victim=None, sample=sample, target=target)


def test_identification_and_win_rates_count_each_revote_round() -> None:
    ballots = [ballot("Li", "Wang", 0), ballot("Zhou", "Wang", 0), ballot("Wang", "Li", 0),
               ballot("Li", "Zhou", 1), ballot("Zhou", "Wang", 1), ballot("Wang", "Zhou", 1),
               ballot("Li", "Wang", 2), ballot("Zhou", None, 2), ballot("Wang", "Li", 2)]
    options = RevoteOptions(revotes=3)
    found = score(SCRIPT, ballots, PLURALITY, options, SCRIPT.names)
    # Ballots on the murderer over ballots cast (the abstention is not a ballot): 4 / 8.
    assert (found["on_culprit"], found["counted"]) == (4, 8)
    assert found["identification"] == 0.5
    # Round 0 eliminates Wang; round 1 Zhou; round 2 is a 1-1 tie, so no one.
    assert found["win_rate"] == pytest.approx(1 / 3)
    # PLAYER*: at least half of the 3 ballots (2) eliminates: the same rounds.
    assert found["win_rate_player"] == pytest.approx(1 / 3)
    assert found["seats"]["Zhou"].accuracy == 1.0 and found["seats"]["Wang"].accuracy == 0.0
    civilians_only = score(SCRIPT, ballots, PLURALITY,
                           RevoteOptions(revotes=3, murderers_vote=False), SCRIPT.names)
    assert (civilians_only["on_culprit"], civilians_only["counted"]) == (4, 5)


def test_the_two_rules_differ_on_a_half_share() -> None:
    cast = {None: {"Li": "Wang", "Zhou": "Wang", "Wang": "Zhou", "Ann": "Zhou"}}
    rng = random.Random(0)
    assert vote_winner(SCRIPT, cast, PLURALITY, rng) == "murderers"  # 2-2: no one out
    assert vote_winner(SCRIPT, cast, player_rules(), rng) == "civilians"  # both at 50%


def run_folder(tmp_path: Path, architectures: dict[str, str], model: str = "scripted") -> Path:
    source = save_script(SCRIPT, tmp_path / "garden.yaml")
    folder = RunFolder(tmp_path / "run", RunMeta(
        script_id="garden", script_source=str(source), language="en",
        procedure={"name": "t", "voting": {"method": "plurality"}}, seed=0,
        seats={n: SeatInfo(architecture=architectures.get(n, "naive"), model=model)
               for n in SCRIPT.names}))
    folder.write_event(Spoke(index=0, speaker="Wang", kind="statement",
                             text="I saw Li near the pear tree with a spade."))
    for i, (voter, target) in enumerate([("Li", "Wang"), ("Zhou", "Li"), ("Wang", "Li")]):
        folder.write_event(VoteCast(index=i + 1, voter=voter, target=target, audience=[]))
    folder.close()
    return tmp_path / "run"


async def test_each_revote_is_a_fresh_call_from_the_final_memory(tmp_path: Path) -> None:
    def vote(request: Request) -> dict:
        return {"vote": "Wang" if request.seat != "Wang" else "Li",
                "reason": f"marker-{request.seat}-{request.sample}"}

    voters = ScriptedModel(replies={"revote.vote": vote}, name="voters")
    run_dir = run_folder(tmp_path, {"Li": "thinkthrice:none"})
    result, calls = await evaluate("revote", run_dir, script=SCRIPT, seat_model=voters,
                                   options={"revotes": 4})
    assert [c.purpose for c in calls] == ["revote.vote"] * 12
    for seat in SCRIPT.names:
        mine = [c for c in calls if c.seat == seat]
        assert sorted(c.sample for c in mine) == [0, 1, 2, 3]
        assert all(c.config.temperature == 0.8 for c in mine)
        # Memoryless: every re-vote of a seat sends the very same messages, none of which
        # holds an earlier re-vote's reply.
        assert len({json.dumps([m.model_dump() for m in c.messages]) for c in mine}) == 1
        assert "marker-" not in prompt(mine[0])
    said = "I saw Li near the pear tree with a spade."
    assert said in prompt(next(c for c in calls if c.seat == "Zhou"))
    # Li played without memory (ThinkThrice's No MR): it re-votes from its sheet alone.
    assert said not in prompt(next(c for c in calls if c.seat == "Li"))
    # Li and Zhou vote Wang 4 times, Wang votes Li: 8 of 12 ballots on the murderer.
    assert (result.on_culprit, result.counted) == (8, 12)
    assert result.win_rate == 1.0 and result.win_rate_player == 1.0
    # The game itself: Li's ballot alone named Wang; Li had two votes and went out.
    assert result.game_winner == "murderers"
    assert result.game_identification == pytest.approx(1 / 3)


def test_revote_on_a_played_game_from_the_command_line(tmp_path: Path) -> None:
    run_dir = play(tmp_path / "run")
    options = tmp_path / "options.yaml"
    options.write_text("revote:\n  revotes: 3\n")
    result = runner.invoke(app, ["eval", "revote", str(run_dir), "--options", str(options),
                                 "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "over 3 memoryless re-votes" in result.output
    saved = json.loads((run_dir / "eval" / "revote.json").read_text())
    assert saved["counted"] + saved["failures"] == 4 * 3
    assert 0 <= saved["identification"] <= 1 and saved["game_winner"] in (
        "civilians", "murderers")


@pytest.mark.parametrize(("model", "says"), [
    ("replay:game.jsonl", "played from a cassette"),
    ("gpt-35-turbo-16k-0613", "is no model spec that can answer after the game")])
async def test_a_seat_model_that_cannot_answer_asks_for_seat_model(tmp_path: Path, model: str,
                                                                   says: str) -> None:
    run_dir = run_folder(tmp_path, {}, model=model)
    with pytest.raises(EvalError, match=says) as failure:
        await evaluate("revote", run_dir, script=SCRIPT)
    assert "--seat-model MODEL" in str(failure.value)
    result, _ = await evaluate("revote", run_dir, script=SCRIPT, seat_model=ScriptedModel(),
                               options={"revotes": 1})
    assert result.counted + result.failures == 3
