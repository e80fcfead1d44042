"""How an event reads to a person: one ``describe(event)`` for the terminal, the transcript and the web.

It lives beside the events so that every front end (the live game, ``transcript.md``, the
human seat, the browser) narrates a run the same way, in the game's language. Private events
are marked with who saw them; log-only events (votes before the reveal, failures, ratings)
are shown as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from jubensha.engine.events import (
    Accused,
    ActStarted,
    ClueRevealed,
    Event,
    Failure,
    GameEnded,
    HostSpoke,
    Investigated,
    Rated,
    Spoke,
    StageStarted,
    VictimOutcome,
    VoteCast,
)

Style = Literal["stage", "host", "speech", "clue", "act", "log", "result"]

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "host": "Host", "clue": "Clue", "act": "Act", "only": "only", "log": "log only",
        "vote": "votes for", "abstain": "abstains", "failure": "failure", "fallback": "used",
        "accuses": "accuses", "no_one": "no one", "searched": "searched", "found": "found",
        "nothing": "nothing", "rates": "rates", "trust": "trust", "doubt": "doubt",
        "result": "Result", "murderer": "The murder", "eliminated": "eliminated",
        "nobody": "nobody", "votes": "votes", "killer": "the murderer was",
        "killers": "the murderers were", "caught": "caught", "missed": "not caught",
        "sep": ", ", "colon": ": ", "stop": ". ", "paren": " ({})",
        "winner": "Winner: {side}", "side_civilians": "civilians",
        "side_murderers": "murderers", "side_none": "nobody", "usage": "token usage", "seat": "seat", "total": "total",
        "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
        "model_seconds": "model seconds", "voter": "voter", "ballot": "vote",
        "votes_for": "votes for {victim}", "revote": " (re-vote)",
        "abstains": "(abstains)",
        "decisions": "{decisions} decisions, {fallbacks} answered by the table's defaults",
        "counts": "{calls} model calls · {failures} failure(s){what} · {events} events · "
                  "{seconds:.1f} s · run folder: {folder}",
        "civilians": "The civilians win.", "murderers": "The murderers win.",
        "none": "No winner.", "truth": "What happened", "goals": "goals",
        "no_solution": "This script records no solution: nobody is caught and nobody wins.",
        "unsolved": "the script records no solution",
        "seats": "Seats", "procedure": "Procedure", "seed": "Seed", "unfinished":
        "The run stopped here (unfinished).",
        "introduction": "introduction", "question": "asks", "answer": "answers",
        "statement": "statement", "clue_share": "shares clues", "reasoning": "reasoning",
        "accusation": "accusation",
    },
    "zh": {
        "host": "主持人", "clue": "线索", "act": "第{n}幕", "only": "仅", "log": "仅记录",
        "vote": "投票给", "abstain": "弃权", "failure": "失败", "fallback": "改用",
        "accuses": "指认", "no_one": "无人", "searched": "搜查了", "found": "发现",
        "nothing": "无", "rates": "评价", "trust": "信任", "doubt": "怀疑",
        "result": "结果", "murderer": "本案", "eliminated": "出局", "nobody": "无人",
        "votes": "得票", "killer": "真凶是", "killers": "真凶是", "caught": "已抓到",
        "missed": "未抓到", "sep": "，", "colon": "：", "stop": "。", "paren": "（{}）",
        "winner": "获胜方：{side}", "side_civilians": "平民", "side_murderers": "凶手",
        "side_none": "无人", "usage": "词元用量", "seat": "座位", "total": "合计",
        "prompt_tokens": "提示词元", "completion_tokens": "生成词元",
        "model_seconds": "模型耗时（秒）", "voter": "投票人", "ballot": "投给",
        "votes_for": "关于{victim}的投票", "revote": "（重新投票）", "abstains": "（弃权）",
        "decisions": "决策 {decisions} 次，其中 {fallbacks} 次由默认动作代替",
        "counts": "模型调用 {calls} 次 · 失败 {failures} 次{what} · 事件 {events} 个 · "
                  "{seconds:.1f} 秒 · 记录目录：{folder}",
        "civilians": "平民获胜。", "murderers": "凶手获胜。", "none": "无人获胜。",
        "no_solution": "本剧本没有记录答案：无人被抓到，也无人获胜。",
        "unsolved": "剧本没有记录答案",
        "truth": "真相", "goals": "目标", "seats": "座位", "procedure": "流程", "seed": "种子",
        "unfinished": "记录到此为止（未完成）。",
        "introduction": "自我介绍", "question": "提问", "answer": "回答",
        "statement": "发言", "clue_share": "分享线索", "reasoning": "推理",
        "accusation": "指认",
    },
}


@dataclass
class Line:
    style: Style
    text: str
    speaker: str = ""
    tag: str = ""


def labels(lang: str) -> dict[str, str]:
    return LABELS.get(lang, LABELS["en"])


def _audience_tag(event: Event, words: dict[str, str]) -> str:
    if event.audience == "public":
        return ""
    if not event.audience:
        return f"({words['log']})"
    return f"({words['only']} {', '.join(event.audience)})"


def _act_label(number: int, words: dict[str, str]) -> str:
    label = words["act"]
    return label.format(n=number) if "{n}" in label else f"{label} {number}"


def describe(event: Event, lang: str = "en") -> list[Line]:
    """The transcript lines of one event."""
    words = labels(lang)
    tag = _audience_tag(event, words)
    if isinstance(event, StageStarted):
        return [Line("stage", event.title or event.kind)]
    if isinstance(event, HostSpoke):
        return [Line("host", event.text, words["host"], tag)]
    if isinstance(event, Spoke):
        speaker = f"{event.speaker} → {event.to}" if event.to else event.speaker
        kind = words.get(event.kind, event.kind)
        return [Line("speech", event.text, speaker, " ".join(filter(None, [kind, tag])))]
    if isinstance(event, ClueRevealed):
        title = f"{words['clue']} {event.title or event.clue_id}"
        text = event.text + (f" [{event.image}]" if event.image else "")
        return [Line("clue", text, title, tag)]
    if isinstance(event, ActStarted):
        return _act(event, words, tag)
    if isinstance(event, Investigated):
        found = ", ".join(event.clue_ids) or words["nothing"]
        return [Line("act", f"{event.seat} {words['searched']} {event.location}: "
                            f"{words['found']} {found}", tag=tag)]
    if isinstance(event, Rated):
        return [Line("log", f"{event.rater} {words['rates']} {event.speaker} "
                            f"#{event.statement}: {words['trust']} {event.trust}, "
                            f"{words['doubt']} {event.doubt}", tag=tag)]
    if isinstance(event, Accused):
        text = f"{words['accuses']} {event.accused or words['no_one']}"
        return [Line("speech", f"{text}. {event.reason}".strip(), event.accuser, tag)]
    if isinstance(event, VoteCast):
        choice = f"{words['vote']} {event.target}" if event.target else words["abstain"]
        victim = f" ({event.victim})" if event.victim else ""
        reason = f": {event.reason}" if event.reason else ""
        return [Line("log", f"{event.voter} {choice}{victim}{reason}", tag=tag)]
    if isinstance(event, Failure):
        fallback = f"; {words['fallback']} {event.fallback}" if event.fallback else ""
        return [Line("log", f"{words['failure']}: {event.seat} ({event.purpose}): "
                            f"{event.error}{fallback}", tag=tag)]
    if isinstance(event, GameEnded):
        return _ended(event, words, tag)
    return []


def _act(event: ActStarted, words: dict[str, str], tag: str) -> list[Line]:
    label = _act_label(event.act, words)
    if event.sheet is None:
        return [Line("act", event.public_text, label, tag)] if event.public_text else []
    goals = f" ({words['goals']}: {'; '.join(event.sheet.goals)})" if event.sheet.goals else ""
    return [Line("act", f"{event.sheet.text}{goals}", label, tag)]


def outcome_text(outcome: VictimOutcome, words: dict[str, str]) -> str:
    """"votes: A 3, B 1. eliminated: A. the murderer was: C (not caught)" in the game's
    language: the tally is never read as naming the murderer."""
    sep, colon, stop = words["sep"], words["colon"], words["stop"]
    counts = sep.join(f"{seat} {n}" for seat, n in outcome.tally.items()) or "-"
    out = sep.join(outcome.eliminated) or words["nobody"]
    said = f"{words['votes']}{colon}{counts}{stop}{words['eliminated']}{colon}{out}{stop}"
    if not outcome.murderers:
        return said + words["unsolved"]
    killer = words["killers" if len(outcome.murderers) > 1 else "killer"]
    verdict = words["paren"].format(words["caught"] if outcome.caught else words["missed"])
    return f"{said}{killer}{colon}{sep.join(outcome.murderers)}{verdict}"


def _ended(event: GameEnded, words: dict[str, str], tag: str) -> list[Line]:
    lines = [Line("result", outcome_text(outcome, words), outcome.victim or words["murderer"],
                  tag) for outcome in event.outcomes]
    verdict = words[event.winner] if event.solution else words["no_solution"]
    lines.append(Line("result", verdict, words["result"], tag))
    if event.truth:
        lines.append(Line("result", event.truth, words["truth"], tag))
    return lines


STYLES = {"stage": "bold magenta", "host": "italic cyan", "speech": "bold", "clue": "yellow",
          "act": "green", "log": "dim", "result": "bold red"}


def rich_line(line: Line) -> Text:
    if line.style == "stage":
        return Text(f"\n── {line.text} ──", style=STYLES["stage"])
    text = Text()
    if line.style == "log":
        text.append(f"· {line.text}", style=STYLES["log"])
        text.append(f" {line.tag}" if line.tag else "", style="dim italic")
        return text
    if line.speaker:
        text.append(line.speaker, style=STYLES[line.style])
    if line.tag:
        text.append(f" {line.tag}", style="dim")
    if line.speaker or line.tag:
        text.append(": ")
    text.append(line.text)
    return text
