"""The end of a game reads right in the game's language: the tally says "votes", the
eliminated seat and the real murderer are told apart, winner and usage are in Chinese for a
Chinese game, the failure count names what failed, and nobody votes for themself unless
the procedure allows it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.scripts import bundled_scripts, load_script

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
runner = CliRunner()


def chinese_script() -> str:
    return next(name for name, folder in bundled_scripts().items()
                if load_script(folder).language == "zh")


def play(script: str, out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["play", script, "--model", "scripted", "--embedder", "none",
                                 "--out", str(out), *extra], env={"COLUMNS": "300"})
    assert result.exit_code in (0, 4), result.output
    return result.output


def test_the_english_end_screen_tells_votes_from_the_murderer(tmp_path: Path) -> None:
    output = play(TINY, tmp_path / "run")
    result = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    [outcome] = result["outcomes"]
    line = next(line for line in output.splitlines() if "votes:" in line and "eliminated:" in line)
    assert f"the murderer was: {', '.join(outcome['murderers'])}" in line
    side = {"civilians": "civilians", "none": "nobody",
            "murderers": "the murderer" if len(outcome["murderers"]) == 1 else "murderers"}
    assert "killer(s)" not in output and f"Winner: {side[result['winner']]}" in output
    transcript = (tmp_path / "run" / "transcript.md").read_text(encoding="utf-8")
    assert "the murderer was:" in transcript and "killer(s)" not in transcript


def test_a_chinese_game_ends_in_chinese(tmp_path: Path) -> None:
    output = play(chinese_script(), tmp_path / "run")
    for words in ("得票：", "出局：", "真凶是：", "获胜方：", "词元用量", "模型调用"):
        assert words in output, words
    for english in ("Winner", "token usage", "killer(s)", "eliminated", "model calls"):
        assert english not in output, english
    transcript = (tmp_path / "run" / "transcript.md").read_text(encoding="utf-8")
    [tally] = [line for line in transcript.splitlines() if "得票：" in line]
    assert "真凶是：" in tally and "凶手" not in tally.split("真凶是")[0]


def test_the_failure_count_names_what_failed(tmp_path: Path) -> None:
    cassette = tmp_path / "game.jsonl"
    play(TINY, tmp_path / "recorded", "--record", str(cassette))
    output = play(TINY, tmp_path / "run", "--model", f"replay:{cassette}", "--max-failures",
                  "0", "--rounds", "2")  # the second round was never recorded
    line = next(line for line in output.splitlines() if "failure(s)" in line)
    named = line.split("failure(s)")[1]
    assert named.startswith(" (") and ("ask" in named or "answer" in named)


def test_the_demo_procedure_refuses_self_votes(tmp_path: Path) -> None:
    assert find_procedure("demo").voting.self_vote == "nobody"
    assert find_procedure("thinkthrice").voting.self_vote == "allowed"
    for seed in range(4):
        play(TINY, tmp_path / str(seed), "--seed", str(seed))
        result = json.loads((tmp_path / str(seed) / "result.json").read_text(encoding="utf-8"))
        for record in result["votes"]:
            assert all(voter != target for voter, target in record["ballots"].items())
