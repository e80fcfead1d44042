"""One way to set up a table: `jubensha play`, the browser's lobby and a batch turn the same
choices into the same game (``runs.play.table_config``), the speech guard included. A
builder of its own on any path (the lobby once had one, and never guarded a seat) makes
these differ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jubensha.runs.attempt import game_job
from jubensha.runs.play import PlayConfig, PlayError, run_meta
from jubensha.runs.prepare import PlayOptions, prepare_game
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.scripts.bundled import find_script
from jubensha.web.tables import TableHost, TablesFull
from tests.web.web_helpers import client

SCRIPT = "lighthouse-keeper"
MODELS = ["local", "scripted"]
COMPARED = {"procedure", "plans", "seed", "language", "script_source", "preset"}


class SeatingHost(TableHost):
    """Keeps the game the lobby asks for and plays nothing (no model is loaded)."""

    asked: PlayConfig | None = None

    def open(self, config: PlayConfig, *, spectators: bool = False,
             script_key: str = "") -> Any:
        self.asked = config
        raise TablesFull("kept, not played")


def from_the_command_line(seats: list[str], guard: bool | None) -> PlayConfig:
    return prepare_game(PlayOptions(script=SCRIPT, procedure="demo", agents="detective",
                                    model="local", seats=seats, seed=3, lang="en",
                                    embedder="none", guard=guard)).config


def from_the_lobby(tmp_path: Path, seats: dict[str, tuple[str, str]]) -> PlayConfig:
    host = SeatingHost(tmp_path)
    web = client(tmp_path, host, models=MODELS)
    form = {"script": SCRIPT, "procedure": "demo", "seed": "3", "language": "en"}
    for number, name in enumerate(find_script(SCRIPT).names):
        form[f"arch{number}"], form[f"model{number}"] = seats.get(name, ("detective", "local"))
    assert web.post("/tables", data=form).status_code == 429  # kept, not played
    assert host.asked is not None
    return host.asked


def from_a_batch(tmp_path: Path, seats: list[str], guard: bool | None) -> PlayConfig:
    path = tmp_path / "spec.yaml"
    lines = [f"scripts: [{SCRIPT}]", "procedures: [demo]", "architectures: [detective]",
             "models: [local]", "seeds: [3]", "language: en", "embedder: none",
             f"seats: {seats!r}", *([f"guard: {str(guard).lower()}"] if guard is not None
                                    else [])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = load_spec(path)
    [game] = expand(spec)
    return game_job(game, spec, None, {}).game


def test_the_three_paths_give_one_game_for_the_same_choices(tmp_path: Path) -> None:
    other = find_script(SCRIPT).names[1]
    cli = from_the_command_line([f"{other}=naive@scripted"], None)
    lobby = from_the_lobby(tmp_path / "web", {other: ("naive", "scripted")})
    batch = from_a_batch(tmp_path, [f"{other}=naive@scripted"], None)
    shown = cli.model_dump(mode="json", include=COMPARED)
    assert lobby.model_dump(mode="json", include=COMPARED) == shown
    assert batch.model_dump(mode="json", include=COMPARED) == shown
    assert cli.script.id == lobby.script.id == batch.script.id == SCRIPT
    # the detective seats on the embedded model are guarded, the naive one on the fake not
    assert {name: plan.guard for name, plan in lobby.plans.items()} == {
        name: name != other for name in find_script(SCRIPT).names}


def test_a_browser_table_of_detectives_on_the_embedded_model_is_guarded(
        tmp_path: Path) -> None:
    seats = run_meta(from_the_lobby(tmp_path, {})).seats
    assert seats and all(seat.guard and seat.architecture == "detective:guard"
                         for seat in seats.values())


def test_a_batch_may_turn_the_guard_off_as_play_does(tmp_path: Path) -> None:
    batch = from_a_batch(tmp_path, [], False)
    assert batch.plans == from_the_command_line([], False).plans
    assert not any(plan.guard for plan in batch.plans.values())


def test_the_guard_is_a_field_and_its_word_is_read_into_it() -> None:
    first = find_script(SCRIPT).names[0]
    asked = from_the_command_line([f"{first}=naive:guard+temperature=0@scripted"], None)
    assert (asked.plans[first].architecture, asked.plans[first].guard) == (
        "naive:temperature=0", True)
    assert run_meta(asked).seats[first].architecture == "naive:temperature=0+guard"
    refused = from_the_command_line([f"{first}=naive:guard@scripted"], False)
    assert not any(plan.guard for plan in refused.plans.values())  # --no-guard wins
    with pytest.raises(PlayError, match="a human seat plays without a model"):
        from_the_command_line([f"{first}=human@local"], None)
