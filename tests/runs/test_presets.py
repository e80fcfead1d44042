"""Paper presets: every value of the table reaches the agents, the docs list every value,
and games and reports say which preset played and what was overridden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.agents.registry import make_agent
from jubensha.cli import app
from jubensha.runs.presets import PresetError, find_preset, paper_presets
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError

DOCS = Path(__file__).parents[2] / "docs" / "presets.md"
TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
CASES = [(name, arch, key, value.value) for name, preset in paper_presets().items()
         for arch, values in preset.settings.items() for key, value in values.items()]


def test_there_is_a_preset_per_paper() -> None:
    assert list(paper_presets()) == ["paper:thinkthrice", "paper:player", "paper:mirage",
                                     "paper:whodunit"]
    with pytest.raises(PresetError, match="paper:player"):
        find_preset("paper:nope")


@pytest.mark.parametrize(("name", "architecture", "key", "value"), CASES)
def test_every_value_of_the_table_reaches_the_agent(name: str, architecture: str, key: str,
                                                    value: object) -> None:
    spec, overridden = find_preset(name).architecture(architecture)
    agent = make_agent(spec)
    assert getattr(agent.config, key) == value and overridden == {}


def test_the_docs_table_lists_every_value_and_its_source() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for preset in paper_presets().values():
        assert f"`{preset.name}`" in text
        for setting, value, source in preset.rows():
            assert f"| {setting} | {value} | {source} |" in text


def test_an_option_given_by_hand_wins_and_is_recorded() -> None:
    spec, overridden = find_preset("paper:player").architecture("werewolf:script_tokens=600")
    assert make_agent(spec).config.script_tokens == 600
    assert make_agent(spec).config.dialogue_tokens == 4000
    assert overridden == {"werewolf.script_tokens": "600"}
    assert find_preset("paper:player").architecture("naive") == ("naive", {})


def test_play_with_a_preset_records_it_in_meta(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, [
        "play", TINY, "--preset", "paper:player", "-a", "werewolf", "--model", "scripted",
        "--embedder", "none", "--seat", "Ann=werewolf:dialogue_tokens=100@",
        "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert meta["procedure"]["name"] == "player"
    assert meta["options"]["preset"] == {"name": "paper:player",
                                         "overridden": {"werewolf.dialogue_tokens": "100"}}
    seats = {name: seat["architecture"] for name, seat in meta["seats"].items()}
    assert seats["Ann"] == "werewolf:script_tokens=4000+dialogue_tokens=100+chunk_tokens=50"
    assert all("script_tokens=4000" in arch for arch in seats.values())


def test_a_spec_preset_sets_procedure_and_metrics_unless_given(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:player\narchitectures: [ocot]\n"
                    "models: scripted\nembedder: none\n", encoding="utf-8")
    loaded = load_spec(spec)
    assert loaded.procedures == ["player"] and loaded.metrics == ["wellplay", "identification"]
    (game,) = expand(loaded)
    assert game.settings.preset is not None and game.settings.preset.overridden == {}
    assert all(p.architecture.startswith("ocot:script_tokens=4000") for p in game.plans.values())
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:player\nprocedures: [demo]\n"
                    "metrics: [identification]\nmodels: scripted\nembedder: none\n",
                    encoding="utf-8")
    (game,) = expand(load_spec(spec))
    assert game.settings.preset is not None
    assert game.settings.preset.overridden == {"procedure": "demo",
                                               "metrics": ["identification"]}
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:nope\n", encoding="utf-8")
    with pytest.raises(SpecError, match="preset: unknown preset 'paper:nope'"):
        load_spec(spec)


def test_a_preset_seats_its_papers_agent_unless_told_otherwise(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, [
        "play", TINY, "--preset", "paper:player", "--model", "scripted", "--embedder", "none",
        "--seat", "Ann=werewolf@", "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    seats = {name: seat["architecture"].split(":")[0] for name, seat in meta["seats"].items()}
    assert seats.pop("Ann") == "werewolf"  # --seat says otherwise
    assert set(seats.values()) == {"player"}
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:player\nmodels: scripted\n"
                    "embedder: none\n", encoding="utf-8")
    assert load_spec(spec).architectures == ["player"]


@pytest.mark.parametrize("name", list(paper_presets()))
def test_a_preset_requires_a_judge_exactly_where_its_paper_judged_with_a_model(
        name: str) -> None:
    from jubensha.eval.registry import get_metric

    preset = find_preset(name)
    judged = [m for m in preset.metrics.value if get_metric(m).judged_under(name)]
    assert preset.judge.value == ("required" if judged else "none")


def test_a_thinkthrice_spec_without_a_judge_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:thinkthrice\nmodels: scripted\n"
                    "embedder: none\n", encoding="utf-8")
    with pytest.raises(SpecError) as refused:
        load_spec(spec)
    message = str(refused.value)
    assert "metrics.0: metric 'factual': the paper of preset paper:thinkthrice scored it " \
           "with a model judge" in message
    assert "metrics.1: metric 'inferential'" in message
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:thinkthrice\nmodels: scripted\n"
                    "embedder: none\njudge: scripted\n", encoding="utf-8")
    assert load_spec(spec).judge == "scripted"
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:thinkthrice\nmodels: scripted\n"
                    "embedder: none\nmetrics: [identification, similarity]\n", encoding="utf-8")
    assert load_spec(spec).metrics == ["identification", "similarity"]


def test_eval_refuses_a_preset_game_without_the_papers_judge(tmp_path: Path) -> None:
    run = tmp_path / "run"
    played = CliRunner().invoke(app, [
        "play", "lighthouse-keeper", "--preset", "paper:thinkthrice", "--agents",
        "thinkthrice:none", "--model", "scripted", "--embedder", "none", "--out", str(run)])
    assert played.exit_code == 0, played.output
    refused = CliRunner().invoke(app, ["eval", "factual", str(run), "--seat-model",
                                       "scripted"])
    assert refused.exit_code == 2
    assert "played with preset paper:thinkthrice, whose paper scored factual with a model " \
           "judge" in refused.output
    every = CliRunner().invoke(app, ["eval", "all", str(run), "--embedder", "none"])
    assert every.exit_code == 2 and "pass --judge MODEL" in every.output
    judged = CliRunner().invoke(app, ["eval", "factual", str(run), "--seat-model", "scripted",
                                      "--judge", "scripted", "--format", "json"])
    assert judged.exit_code == 0, judged.output
    assert json.loads(judged.output)["scoring"]["judge"] == "scripted"
    other = CliRunner().invoke(app, ["eval", "all", str(run), "--metric", "identification",
                                     "--embedder", "none"])
    assert other.exit_code == 0, other.output


def test_eval_all_on_a_player_game_asks_only_for_the_player_papers_judge(
        tmp_path: Path) -> None:
    """PLAYER* scored with no model judge: ``eval all`` on its preset's game is not refused
    because other papers judged their own metrics with one."""
    run = tmp_path / "run"
    played = CliRunner().invoke(app, [
        "play", TINY, "--preset", "paper:player", "--model", "scripted", "--embedder",
        "none", "--out", str(run)])
    assert played.exit_code == 0, played.output
    every = CliRunner().invoke(app, ["eval", "all", str(run), "--embedder", "none",
                                     "--seat-model", "scripted"])
    assert "whose paper scored" not in every.output, every.output
    assert every.exit_code in (0, 4), every.output
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\npreset: paper:player\nmodels: scripted\n"
                    "embedder: none\nmetrics: [wellplay, factual]\n", encoding="utf-8")
    assert load_spec(spec).metrics == ["wellplay", "factual"]
