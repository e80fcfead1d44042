"""A Chinese game is in Chinese at the terminal: everything a person sees during and after
`jubensha play` and `jubensha replay` of a Chinese script (the header, the estimate, the
progress line, the transcript, the end screen, the messages of a stopped game) holds no
English word but names and file paths. Every message exists in both languages."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from jubensha import jobs
from jubensha.cli import app
from jubensha.engine.decisions import CastVote, Speak
from jubensha.engine.events import Failure, Spoke, StageStarted
from jubensha.engine.narration import describe, labels
from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.health import ModelUnreachable
from jubensha.prompts import messages
from jubensha.runlog.folder import read_run
from jubensha.runs import commands
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.runs.transcript import LiveTranscript
from jubensha.scripts import find_script

CHINESE = "tingsong-tea-estate"
NAMES = {"demo"}
"""Words a Chinese screen may show: the procedure's name."""
runner = CliRunner()


def english_words(text: str, *paths: Path) -> list[str]:
    """Latin words left once the file paths (however the terminal wrapped them), the names
    and the commands to type (jubensha replay, --overwrite) are taken out."""
    for path in paths:
        text = re.sub(r"\s*".join(map(re.escape, str(path))), " ", text)
    text = re.sub(r"jubensha [a-z]+|--[a-z-]+", " ", text)
    return [word for word in re.findall(r"[A-Za-z][A-Za-z-]*[A-Za-z]", text)
            if word not in NAMES]


def test_the_script_is_chinese_with_chinese_names() -> None:
    script = find_script(CHINESE)
    assert script.language == "zh"
    assert not english_words(" ".join(script.names))


def test_a_chinese_game_and_its_replay_show_no_english(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "worth_estimating", lambda plans: True)  # show the estimate
    out = tmp_path / "对局"
    played = runner.invoke(app, ["play", CHINESE, "--model", "scripted", "--out", str(out)])
    assert played.exit_code == 0, played.output
    assert re.search(r"约 \d+ 次模型调用", played.output)
    assert re.search(r"模型调用 \d+ 次", played.output)
    assert "获胜方" in played.output
    assert english_words(played.output, out) == []
    assert "：" in played.output and "线索「" in played.output  # Chinese punctuation

    again = runner.invoke(app, ["replay", str(out)])
    assert again.exit_code == 0 and english_words(again.output, out) == []
    transcript = (out / "transcript.md").read_text(encoding="utf-8")
    assert set(english_words(transcript, out)) == {"detective", "scripted"}  # the seats' names

    (out / "result.json").unlink()
    unfinished = runner.invoke(app, ["replay", str(out)])
    assert "这局没有下完" in unfinished.output
    assert english_words(unfinished.output, out) == []


def test_the_progress_line_of_a_chinese_game(tmp_path: Path) -> None:
    bar = jobs.CallBar(Console(file=(tmp_path / "bar").open("w")), "对局中", 20)
    progress = commands.Progress(bar, 5, "zh")
    progress.on_event(StageStarted(kind="introduction", title="自我介绍"))
    progress.on_ask("顾远之", Speak(kind="introduction", prompt=""))
    [task] = bar.progress.tasks
    assert task.fields["note"] == "第 1/5 阶段：自我介绍 · 顾远之正在发言…"
    progress.on_ask("顾远之", CastVote(candidates=["周妈"]))
    assert english_words(bar.progress.tasks[0].fields["note"]) == []


def test_a_stopped_chinese_game_says_so_in_chinese(tmp_path: Path) -> None:
    folder = tmp_path / "对局"
    shown = tmp_path / "shown.txt"
    with shown.open("w") as file, pytest.raises(SystemExit):
        jobs.stop_here(Console(file=file, width=200), messages("zh")["game_kept"].format(
            folder=folder), messages("zh")["game_again"].format(folder=folder), "zh")
    with shown.open("a") as file, pytest.raises(SystemExit):
        jobs.stop_unreachable(Console(file=file, width=200),
                              ModelUnreachable("scripted", RuntimeError("")), "", "zh")
    text = shown.read_text(encoding="utf-8")
    assert "已停止" in text and "jubensha play --resume" in text
    assert english_words(text, folder) == ["scripted"]  # the model's name


def test_every_message_has_both_languages_with_the_same_fields() -> None:
    english, chinese = messages("en"), messages("zh")
    assert set(english) == set(chinese)
    fields = string.Formatter()
    for key, text in english.items():
        assert ({f for _, f, _, _ in fields.parse(text) if f is not None}
                == {f for _, f, _, _ in fields.parse(chinese[key]) if f is not None}), key


def test_chinese_messages_put_no_space_between_chinese_characters() -> None:
    """(A YAML line break inside a Chinese sentence reads as a space.)"""
    wide = "\u4e00-\u9fff\uff08\uff09\uff0c\u3002\uff1a\uff1b\u3001"
    for key, text in messages("zh").items():
        assert not re.search(f"[{wide}] [{wide}]", text), key


def test_a_long_chinese_line_keeps_its_speaker_with_its_words(tmp_path: Path) -> None:
    """Rich wraps at spaces only: a Chinese speech (no spaces) would leave the speaker's name
    alone on its line; it is wrapped between characters instead, within the width."""
    shown = tmp_path / "shown.txt"
    with shown.open("w") as file:
        LiveTranscript(Console(file=file, width=40), "zh")(
            Spoke(speaker="顾远之", kind="introduction", text="我是上海同裕茶行的少东家。" * 8))
    lines = shown.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("顾远之 自我介绍：我是上海") and len(lines) > 2
    assert all(cell_len(line) <= 40 and not line.startswith("。") for line in lines)


async def test_failures_are_named_in_the_games_language(tmp_path: Path) -> None:
    """A seat whose reasoning failed reads "命运之轮 推理", not "命运之轮 reasoning"."""
    script = find_script(CHINESE)
    broken = ScriptedModel(replies={"introduction": [RuntimeError("boom")] * 99})
    out = tmp_path / "run"
    await play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                               plans=plan_seats(script, "naive", "scripted"), embedder="none"), out,
                    models={"scripted": broken})
    what = commands.failed_what(read_run(out).events, labels("zh"))
    assert "自我介绍" in what and "introduction" not in what
    failure = next(e for e in read_run(out).events if isinstance(e, Failure))
    [line] = describe(failure, "zh")
    assert line.text.startswith(f"失败：{failure.seat}（自我介绍）：")


def test_the_end_screen_speaks_plainly_and_gives_the_papers_counts_when_verbose(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    played = runner.invoke(app, ["play", "--model", "scripted", "--embedder", "none",
                                 "--out", str(out)])
    assert played.exit_code == 0 and "model calls" in played.output
    assert "MPIRD" not in played.output and "env " not in played.output
    assert "MPIRD" not in runner.invoke(app, ["replay", str(out)]).output
    verbose = runner.invoke(app, ["replay", "--verbose", str(out)])
    assert "cost as MPIRD-LLMA's table 2 counts it: env " in " ".join(verbose.output.split())
    chinese = runner.invoke(app, ["play", CHINESE, "--model", "scripted", "--verbose",
                                  "--out", str(tmp_path / "zh")])
    assert "按 MPIRD-LLMA 表 2 的计法统计的开销" in chinese.output
