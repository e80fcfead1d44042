"""What the PLAYER* authors' games cost, phase by phase, from their transcripts: whom each
asker questioned, how often, the sensor readings quoted in the question prompts, the tokens
of the logged calls, and the ratio to PLAYER* beside the paper's table A5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.eval.playerlog_costs import PAPER_GAMEPLAY_USD, logged_costs
from tests.eval.test_playerlogs import write_xlsx

HEADER = ("index", "stage", "speaker", "listener", "words", "prompt")
SEATS = ["Ann", "Bob", "Cy", "Di"]


def transcript(asked: dict[str, list[str]], rounds: int, sensors: bool) -> list[tuple]:
    """Introductions, then ``rounds`` rounds: each asker asks each of its targets one
    question about Vic, and is answered; with ``sensors`` (PLAYER*), two sensor readings
    are quoted in each question's prompt and one suspect fewer is asked each round."""
    rows: list[tuple] = [HEADER]
    for seat in SEATS:
        rows.append((len(rows), "self introduction stage", seat, "all", f"I am {seat}.",
                     "Introduce yourself."))
    for number in range(rounds):
        for asker, targets in asked.items():
            for target in targets[:len(targets) - number] if sensors else targets:
                stage = f"{asker} ask {target} for death of Vic"
                quoted = ("In terms of emotions, you think X is: calm.\n"
                          "In terms of motive for the crime, you think X is: none.\n"
                          if sensors else "")
                rows.append((len(rows), stage, asker, target, "Where were you?",
                             f"{quoted}Ask one question."))
                rows.append((len(rows), stage, target, asker, "In the garden.",
                             "Answer the question."))
    return rows


def crafted(root: Path) -> Path:
    everyone = {a: [t for t in SEATS if t != a] for a in SEATS}
    write_xlsx(root / "log_en" / "log_Werewolf" / "Sin (4 people closed)" / "Sin.xlsx",
               transcript({a: t for a, t in everyone.items()}, 3, False))
    write_xlsx(root / "log_en" / "log_PLAYER" / "Sin (4 people closed)" / "Sin.xlsx",
               transcript(everyone, 3, True))
    return root


def test_the_phases_of_a_crafted_log(tmp_path: Path) -> None:
    found = {g.method: g for g in logged_costs(crafted(tmp_path / "logs")).games}
    werewolf, player = found["Werewolf"], found["PLAYER"]
    assert (werewolf.askers, werewolf.victims, werewolf.targets) == (4, 1, 3.0)
    assert werewolf.questions_per_target == 3.0  # every suspect, once a round
    assert werewolf.phases["question"].calls == werewolf.phases["answer"].calls == 36
    assert werewolf.phases["introduction"].calls == 4 and werewolf.sensor_readings == 0
    assert player.phases["question"].calls == 4 * (3 + 2 + 1)  # the pruner drops suspects
    assert player.questions_per_target == pytest.approx(2.0)
    assert player.sensor_readings == 2 * 24  # two readings quoted per question
    assert player.script == "Sin"
    table = logged_costs(tmp_path / "logs").tables()[0]
    row = next(r for r in table.rows if r[2] == "Werewolf")
    paper = PAPER_GAMEPLAY_USD["Sin"]
    assert row[-1] == f"{paper['Werewolf'] / paper['PLAYER']:.2f}" == "1.13"
    assert float(row[-2]) == pytest.approx(werewolf.dollars() / player.dollars(), abs=0.01)


def test_the_cli_prints_the_authors_english_games(datasets: Path) -> None:
    done = CliRunner().invoke(app, ["eval", "player-log-costs", str(datasets / "player-logs"),
                                    "--language", "en", "--format", "json"])
    assert done.exit_code == 0, done.output
    games = {(g["method"], g["script"]): g for g in json.loads(done.output)["games"]}
    werewolf = games["Werewolf", "Death Wears White"]
    assert werewolf["phases"]["question"]["calls"] == 9 * 8 * 3  # all asked, every round
    player = games["PLAYER", "Death Wears White"]
    assert player["phases"]["question"]["calls"] < werewolf["phases"]["question"]["calls"]
    assert player["sensor_readings"] > 0
    bad = CliRunner().invoke(app, ["eval", "player-log-costs", str(datasets)])
    assert bad.exit_code == 2
