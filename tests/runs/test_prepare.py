"""`jubensha play` is a thin layer around two steps: ``prepare_game`` turns the options into one
``PlayConfig`` (writing nothing, building no model, printing nothing) and ``play_game``
plays a ``PlayConfig``, as the web table and batch jobs do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.game import DEGRADED_SHARE, GameResult, no_result, share_was_the_rule
from jubensha.engine.table import TableState
from jubensha.runs.play import PlayConfig, PlayError, play_game
from jubensha.runs.prepare import PlayOptions, prepare_game
from tests.runs.test_resume import killed

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def timeless(path: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("time", None)
    return rows


def test_prepare_writes_nothing_and_gives_the_whole_game(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    game = prepare_game(PlayOptions(script=TINY, model="scripted", procedure="player", rounds=2,
                               seed=4, lang="zh", seats=["Bob=extractive@"], guard=True,
                               max_failures=2, degraded_share=0.4, embedder="none"))
    assert list(tmp_path.iterdir()) == []
    config = game.config
    assert (config.script.id, config.procedure.name, config.seed) == ("tiny-manor", "player", 4)
    assert config.game_language == "zh" and config.embedder == "none"
    assert (config.plans["Bob"].architecture, config.plans["Bob"].guard) == ("extractive", True)
    assert (config.plans["Ann"].architecture, config.plans["Ann"].guard) == ("detective", True)
    assert (config.health.max_consecutive_failures, config.health.degraded_share) == (2, 0.4)
    assert config.script_source == TINY and game.humans == []
    assert game.out.parent == Path("runs") and not game.out.exists()


@pytest.mark.parametrize(("options", "says"), [
    ({"script": "no-such-mystery"}, "no bundled script or file of that name"),
    ({"lang": "fr"}, "--lang 'fr': use one of en, zh"),
    ({"agents": "wizard"}, "unknown architecture 'wizard'"),
    ({"seats": ["Nobody=naive@"]}, "no such character"),
    ({"procedure": "nosuch"}, "no preset or file of that name"),
    ({"preset": "paper:nosuch"}, "unknown preset"),
    ({"verbose": True, "seats": ["Ann=human"]}, "--verbose shows log-only events"),
    ({"resume": Path("nowhere"), "script": None}, "--resume nowhere: no such run folder"),
    ({"resume": Path("nowhere"), "script": "x"}, "give no script"),
])
def test_every_bad_option_is_one_play_error(options: dict[str, object], says: str) -> None:
    with pytest.raises(PlayError, match=says.replace("(", r"\(").replace("[", r"\[")):
        prepare_game(PlayOptions(**{"script": TINY, "model": "scripted", **options}))


def test_the_command_plays_exactly_the_prepared_config(tmp_path: Path) -> None:
    options = PlayOptions(script=TINY, model="scripted", seed=5, embedder="none")
    config = prepare_game(options).config
    asyncio.run(play_game(config, tmp_path / "direct"))
    done = CliRunner().invoke(app, ["play", TINY, "--model", "scripted", "--seed", "5",
                                    "--embedder", "none", "--out", str(tmp_path / "cli")])
    assert done.exit_code == 0, done.output
    assert timeless(tmp_path / "direct" / "events.jsonl") == \
        timeless(tmp_path / "cli" / "events.jsonl")


def test_a_resumed_game_is_the_runs_own_in_its_own_folder(tmp_path: Path) -> None:
    out = killed(tmp_path / "run", 5)
    game = prepare_game(PlayOptions(resume=out, lang="zh", seed=99, out=tmp_path / "elsewhere",
                               retries=0))
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert game.out == out and game.resumed
    assert game.config.resume is not None and len(game.config.resume.records) == 5
    assert (game.config.seed, game.config.game_language) == (meta["seed"], meta["language"])
    assert game.config.model_options is not None and game.config.model_options.max_retries == 0


def test_a_config_with_a_bad_field_is_refused() -> None:
    config = prepare_game(PlayOptions(script=TINY, model="scripted")).config
    with pytest.raises(ValueError, match="language"):
        PlayConfig.model_validate({**dict(config), "language": "fr"})


def test_the_rule_that_made_a_game_no_result_is_the_engines() -> None:
    """Both rules can hold at once; the engine names the decisive round first, and the
    command says what the engine decided rather than working it out again."""
    state = TableState(decisions=4, fallbacks=3,
                       decisive={"the vote (stage vote)": {"A": True, "B": True, "C": False}})
    both = no_result(state)
    assert both.startswith("the vote") and not share_was_the_rule(_result(state, both))
    state.decisive = {}
    share = no_result(state)
    assert share_was_the_rule(_result(state, share))
    assert not share_was_the_rule(_result(state, share), DEGRADED_SHARE / 2)


def _result(state: TableState, reason: str) -> GameResult:
    return GameResult(script_id="tiny", procedure="demo", seed=0, language="en", order=[],
                      winner="murderers", outcomes=[], votes=[], failures=0,
                      decisions=state.decisions, fallbacks=state.fallbacks,
                      degraded=bool(reason), no_result=reason, events=0, duration_s=0.0)
