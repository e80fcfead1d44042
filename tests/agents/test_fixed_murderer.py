"""The fixed-murderer protocol (PLAYER* section 3): the murderers play one fixed architecture
and model while the civilians' architecture varies, so civilians meet equal opposition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.play import PlayError, plan_seats
from jubensha.scripts import bundled_scripts, load_script

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


@pytest.mark.parametrize("civilians", ["naive", "werewolf", "ocot", "extractive"])
def test_only_murderer_seats_get_the_fixed_architecture(civilians: str) -> None:
    script = load_script(bundled_scripts()["halvard-observatory"])  # two murderers
    plans = plan_seats(script, civilians, "scripted", murderer_architecture="extractive",
                       murderer_model="scripted")
    fixed = {n for n, p in plans.items() if p.architecture == "extractive"}
    assert set(script.murderers) <= fixed
    assert all(plans[n].architecture == civilians for n in script.names
               if n not in script.murderers)


def test_the_murderers_model_can_be_fixed_too_and_a_seat_option_still_wins() -> None:
    script = load_script(TINY)
    plans = plan_seats(script, "naive", "scripted", ["Bob=ocot@"],
                       murderer_architecture="werewolf", murderer_model="openai:gpt-4o")
    assert (plans["Ann"].architecture, plans["Ann"].model) == ("werewolf", "openai:gpt-4o")
    assert (plans["Bob"].architecture, plans["Bob"].model) == ("ocot", "scripted")
    assert (plans["Cara"].architecture, plans["Cara"].model) == ("naive", "scripted")
    unfixed = plan_seats(script, "naive", "scripted")
    assert {p.architecture for p in unfixed.values()} == {"naive"}


def test_a_bad_murderer_architecture_is_named() -> None:
    with pytest.raises(PlayError, match="wizard"):
        plan_seats(load_script(TINY), "naive", "scripted", murderer_architecture="wizard")


def test_play_seats_the_fixed_murderer(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "play", TINY, "--model", "scripted", "--agents", "naive",
        "--murderer-agents", "extractive", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert {n: s["architecture"] for n, s in meta["seats"].items()} == {
        "Ann": "extractive", "Bob": "naive", "Cara": "naive", "Dan": "naive"}
    calls = (tmp_path / "run" / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    seats = {json.loads(line)["seat"] for line in calls}
    assert seats == {"Bob", "Cara", "Dan"}  # the extractive murderer calls no model
