"""The arena and its ratings: entrants paired by seed so that each plays both sides equally,
the fixed-murderer protocol, ratings per side and combined from the batch index (an entrant
that always wins ranks first on both sides), and ratings that a resume or a reindex never
counts twice."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.batch import Batch, Update
from jubensha.runs.index import BatchIndex, GameRow
from jubensha.runs.ratings import leaderboard_table, rate, sides
from jubensha.runs.report import build_report
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
ARENA = f"""
scripts: [{TINY}, lighthouse-keeper]
arena:
  entrants: ["naive@scripted", "extractive@scripted", {{architecture: werewolf, model: scripted}}]
  games_per_script: 6
embedder: none
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "arena.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def entrant_of(plan: object) -> str:
    return f"{plan.architecture}@{plan.model}"  # type: ignore[attr-defined]


def test_each_entrant_plays_each_side_equally_often_on_every_script(tmp_path: Path) -> None:
    games = expand(load_spec(write(tmp_path, ARENA)))
    assert len(games) == 2 * 6 and len({g.id for g in games}) == 12
    for script in {g.settings.script_id for g in games}:
        mine = [g for g in games if g.settings.script_id == script]
        assert [g.settings.seed for g in mine] == list(range(6))
        sides_played: Counter[tuple[str, str]] = Counter()
        for game in mine:
            guilty = set(game.script.murderers)
            civilians = {entrant_of(p) for n, p in game.plans.items() if n not in guilty}
            murderers = {entrant_of(p) for n, p in game.plans.items() if n in guilty}
            assert len(civilians) == len(murderers) == 1 and civilians != murderers
            assert game.settings.murderers == sorted(guilty) or set(
                game.settings.murderers) == guilty
            sides_played[("civilian", *civilians)] += 1
            sides_played[("murderer", *murderers)] += 1
        assert set(sides_played.values()) == {2} and len(sides_played) == 6
    # the pairing is decided by the seed and the script's place: expanding again agrees
    assert [g.id for g in expand(load_spec(write(tmp_path, ARENA)))] == [g.id for g in games]


def test_the_fixed_murderer_protocol_keeps_one_opponent(tmp_path: Path) -> None:
    text = ARENA.replace("games_per_script: 6", "games_per_script: 3\n  protocol: fixed-murderer"
                         "\n  murderer: extractive@scripted")
    games = expand(load_spec(write(tmp_path, text)))
    for game in games:
        guilty = set(game.script.murderers)
        assert {entrant_of(p) for n, p in game.plans.items() if n in guilty} == {
            "extractive@scripted"}
    per_script = [g.settings.architecture for g in games if g.settings.script_id == "tiny-manor"]
    assert sorted(per_script) == ["extractive", "naive", "werewolf"]


@pytest.mark.parametrize(("text", "field", "words"), [
    (ARENA + "architectures: [naive]\n", "(top level)", "remove architectures"),
    (ARENA.replace('"naive@scripted"', '"wizard@scripted"'), "arena.entrants.0.architecture",
     "wizard"),
    (ARENA.replace('"naive@scripted"', '"naive"'), "arena.entrants.0", "ARCH@MODEL"),
    (ARENA.replace('"naive@scripted", ', '"extractive@scripted", '), "arena.entrants",
     "listed twice"),
    (ARENA.replace("games_per_script: 6", "games_per_script: 6\n  protocol: fixed-murderer"),
     "arena", "needs `murderer"),
])
def test_a_bad_arena_is_one_line_naming_the_field(tmp_path: Path, text: str, field: str,
                                                   words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    line = next(line for line in str(caught.value).splitlines() if words in line)
    assert line.startswith(f"{path}: {field}: ")


# --- ratings on a synthetic index ------------------------------------------------------------

def game(position: int, civilians: str, murderers: str, winner: str,
         status: str = "finished") -> GameRow:
    """A row of a five-seat game: four civilian seats and one murderer seat."""
    def plan(name: str, entrant: str) -> dict[str, str]:
        arch, model = entrant.split("@")
        return {"name": name, "architecture": arch, "model": model}

    seats = {f"C{i}": plan(f"C{i}", civilians) for i in range(4)} | {"M": plan("M", murderers)}
    return GameRow(id=f"g{position}", position=position, name=f"g{position}", script="s",
                   procedure="demo", architecture=civilians.split("@")[0],
                   model=civilians.split("@")[1], seed=position, status=status,
                   settings={"seats": seats, "murderers": ["M"]},
                   winner=winner if status == "finished" else None)


STRONG, WEAK, OTHER = "strong@m1", "weak@m1", "other@m2"


def always_wins() -> list[GameRow]:
    rows, position = [], 0
    for _ in range(4):
        for civ, mur in [(STRONG, WEAK), (WEAK, STRONG), (STRONG, OTHER), (OTHER, STRONG),
                         (WEAK, OTHER), (OTHER, WEAK)]:
            strong_side = "civilians" if civ == STRONG else "murderers"
            winner = strong_side if STRONG in (civ, mur) else ("civilians" if position % 2
                                                               else "murderers")
            rows.append(game(position, civ, mur, winner))
            position += 1
    return rows


def test_an_entrant_that_always_wins_ranks_first_on_both_sides() -> None:
    board = rate(always_wins())
    assert board.games == 24 and board.entrants[0].entrant == STRONG
    top = board.entrants[0]
    assert top.combined and top.civilian and top.murderer
    assert top.civilian.mu > 25 and top.civilian.mu > max(
        e.civilian.mu for e in board.entrants[1:] if e.civilian)
    assert top.murderer.mu > 25 and top.murderer.mu > max(
        e.murderer.mu for e in board.entrants[1:] if e.murderer)
    assert (top.civilian.wins, top.civilian.games) == (8, 8)
    assert (top.murderer.wins, top.murderer.games) == (8, 8)
    assert (top.combined.wins, top.combined.games) == (16, 16)
    assert all(0 < e.combined.sigma < 25 / 3 for e in board.entrants if e.combined)
    reversed_board = rate([r.model_copy(update={"winner": "murderers" if r.winner == "civilians"
                                                else "civilians"}) for r in always_wins()])
    assert reversed_board.entrants[-1].entrant == STRONG


def test_games_without_a_result_or_a_winner_are_not_rated() -> None:
    rows = [game(0, STRONG, WEAK, "civilians"), game(1, STRONG, WEAK, "none"),
            game(2, STRONG, WEAK, "", status="failed"), game(3, STRONG, WEAK, "", "pending"),
            game(4, STRONG, WEAK, "civilians").model_copy(update={"settings": {}}),
            game(5, STRONG, WEAK, "civilians").model_copy(update={"settings": {
                "seats": {"M": "not a seat"}, "murderers": ["M"]}})]
    board = rate(rows)
    assert board.games == 1
    assert board.not_rated == {"no winner": 1, "not finished": 2,
                               "sides unknown (reindex the batch)": 2}


def test_self_play_rates_each_role_but_not_the_combined_pool() -> None:
    board = rate([game(i, STRONG, STRONG, "murderers") for i in range(3)])
    (entry,) = board.entrants
    assert entry.combined is None and entry.civilian and entry.murderer
    assert entry.murderer.mu > 25 > entry.civilian.mu
    assert sides(game(0, STRONG, WEAK, "civilians")).model_dump() == {  # type: ignore[union-attr]
        "civilians": [STRONG], "murderers": [WEAK]}


# --- a played arena --------------------------------------------------------------------------

def ratings_of(root: Path) -> list[tuple[str, float | None, float | None, float | None]]:
    with BatchIndex.of(root) as index:
        board = rate(index.rows())
    return [(e.entrant, *(getattr(e, pool).mu if getattr(e, pool) else None
                          for pool in ("combined", "civilian", "murderer")))
            for e in board.entrants]


def test_a_stopped_and_resumed_arena_rates_as_one_played_straight(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, ARENA.replace("games_per_script: 6",
                                                   "games_per_script: 3")))
    straight = Batch.open(spec, tmp_path / "straight")
    asyncio.run(straight.run(concurrency=2))
    straight.close()

    stopped = Batch.open(spec, tmp_path / "stopped")

    async def stop_at_the_fourth_start() -> None:
        task = asyncio.current_task()
        started: list[str] = []

        def on_update(update: Update) -> None:
            if update.row.status == "running":
                started.append(update.row.name)
                if len(started) == 4 and task is not None:
                    task.cancel()

        await stopped.run(concurrency=2, on_update=on_update)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(stop_at_the_fourth_start())
    stopped.close()
    partial = ratings_of(tmp_path / "stopped")
    resumed = Batch.resume(tmp_path / "stopped")
    asyncio.run(resumed.run(concurrency=2))
    resumed.close()
    again = Batch.resume(tmp_path / "stopped")  # a second resume plays nothing
    assert asyncio.run(again.run()).played == 0
    again.close()

    expected = ratings_of(tmp_path / "straight")
    assert partial != expected
    assert ratings_of(tmp_path / "stopped") == expected
    rebuilt = Batch.rebuild(tmp_path / "stopped")
    asyncio.run(rebuilt.reindex())
    rebuilt.close()
    assert ratings_of(tmp_path / "stopped") == expected
    with BatchIndex.of(tmp_path / "stopped") as index:
        assert rate(index.rows()).games == 6


def test_the_leaderboard_command(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, ARENA.replace("games_per_script: 6",
                                                   "games_per_script: 2")))
    batch = Batch.open(spec, tmp_path / "b")
    asyncio.run(batch.run())
    batch.close()
    runner = CliRunner()
    plot = tmp_path / "plots" / "ratings.png"
    done = runner.invoke(app, ["runs", "leaderboard", str(tmp_path / "b"), "--format", "json",
                               "--plot", str(plot), "--out", str(tmp_path / "board.json")])
    assert done.exit_code == 0, done.output
    board = json.loads((tmp_path / "board.json").read_text(encoding="utf-8"))
    assert board["games"] == 4 and {e["entrant"] for e in board["entrants"]} <= {
        "naive@scripted", "extractive@scripted", "werewolf@scripted"}
    assert "ordinal" in board["entrants"][0]["civilian"] or board["entrants"][0]["civilian"] is None
    assert plot.stat().st_size > 10_000
    csv_out = runner.invoke(app, ["runs", "leaderboard", str(tmp_path / "b"), "--format", "csv"])
    warning, header = csv_out.output.splitlines()[:2]
    assert warning.startswith("# warning:") and "scripted fake" in warning
    assert header.startswith("rank,entrant,combined_mu,combined_sigma")
    md = runner.invoke(app, ["runs", "leaderboard", str(tmp_path / "b"), "--format", "md"])
    assert "| rank | entrant |" in md.output and "mu - 3 sigma" in md.output
    missing = runner.invoke(app, ["runs", "leaderboard", str(tmp_path)])
    assert missing.exit_code == 2 and "no batch.sqlite" in missing.output


# --- arenas credited to the right side --------------------------------------------------------

def test_an_arena_names_both_entrants_and_splits_model_use_by_side(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, ARENA.replace("games_per_script: 6",
                                                   "games_per_script: 6\n  first_seed: 0")
                           .replace(f"[{TINY}, lighthouse-keeper]", f"[{TINY}]")))
    batch = Batch.open(spec, tmp_path / "b")
    asyncio.run(batch.run())
    rows = batch.index.rows()
    batch.close()
    assert all(".vs." in row.name for row in rows)  # folder names say both entrants
    assert any(".extractive.scripted.vs.naive.scripted." in row.name for row in rows)
    for row in rows:  # the model-free extractive side spends nothing, whoever it meets
        civilians, murderers = row.sides["civilians"], row.sides["murderers"]
        assert civilians.calls + murderers.calls == row.usage.calls
        if row.architecture == "extractive":
            assert civilians.calls == 0 and murderers.calls > 0
    report = build_report(rows)
    extractive = next(g for g in report.groups if g.architecture == "extractive")
    assert extractive.murderers in ("naive@scripted", "werewolf@scripted")
    assert extractive.sides["civilians"].calls_per_game == 0
    assert extractive.sides["murderers"].calls_per_game > 0
    cells = {(c.murderers, c.civilians): (c.civilian_wins, c.games) for c in report.matrix}
    assert sum(n for _, n in cells.values()) == 6 and len(cells) == 6  # each ordered pair once
    assert all(m != c for m, c in cells)
    titles = [t.title for t in report.tables()]
    assert any(t.startswith("Civilian wins: murderers (rows) × civilians (columns)")
               for t in titles)
    assert report.tables()[0].columns[:3] == ["architecture", "model", "murderers"]
    page = CliRunner().invoke(app, ["runs", "report", str(tmp_path / "b"), "--html",
                                    str(tmp_path / "b" / "r.html")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "b" / "r.html").read_text(encoding="utf-8")
    assert "extractive@scripted vs naive@scripted" in html


def test_a_model_free_architecture_is_not_crossed_with_every_model(tmp_path: Path) -> None:
    games = expand(load_spec(write(tmp_path, f"scripts: [{TINY}]\n"
                                             "architectures: [naive, extractive]\n"
                                             "models: [scripted, local]\nembedder: none\n")))
    assert sorted((g.settings.architecture, g.settings.model) for g in games) == [
        ("extractive", "scripted"), ("naive", "local"), ("naive", "scripted")]
    fixed = expand(load_spec(write(tmp_path, f"scripts: [{TINY}]\n"
                                             "architectures: [extractive]\n"
                                             "models: [scripted, local]\n"
                                             "murderer: {architecture: naive}\n"
                                             "embedder: none\n")))
    assert len(fixed) == 2  # the murderers take the model: the games differ


def test_a_self_play_leaderboard_ranks_by_a_pool_it_shows() -> None:
    rows = [game(i, STRONG, STRONG, "civilians") for i in range(3)] + [
        game(3 + i, WEAK, WEAK, "murderers") for i in range(3)]
    board = rate(rows)
    assert board.ranked_by == "civilian"
    assert [e.entrant for e in board.entrants] == [STRONG, WEAK]
    table = leaderboard_table(board)
    assert table.columns[3] == "mu - 3 sigma (as civilian, ranks)"
    first = table.rows[0]
    assert first[2] == "–" and first[3] != "–"
    assert "no combined rating (–)" in table.notes[0]
    assert rate(always_wins()).ranked_by == "combined"
