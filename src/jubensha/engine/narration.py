"""Internal.

How an event reads to a person: one ``describe(event)`` for the terminal, the transcript and the web.

It lives beside the events so that every front end (the live game, ``transcript.md``, the
human seat, the browser) narrates a run the same way, in the game's language. Private events
are marked with who saw them; log-only events (votes before the reveal, failures, ratings)
are shown as such. Lines are plain values: the terminal styles them (``terminal.print_line``),
the browser and ``transcript.md`` their own way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

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
from jubensha.prompts import messages

Style = Literal["stage", "host", "speech", "clue", "act", "log", "result"]


@dataclass
class Line:
    style: Style
    text: str
    speaker: str = ""
    tag: str = ""
    colon: str = ": "
    """Between the speaker and the text: the game's language's (Chinese: "：")."""


def labels(lang: str) -> dict[str, str]:
    """The words of the transcript in ``lang`` (the message catalogue, ``prompts.messages``)."""
    return messages(lang)


ACTIVITIES = ("vote", "rate", "accuse", "ask", "turn")
"""Decisions a live view names what a seat is doing by; any other is speaking."""


def activity(purpose: str) -> str:
    """What a seat asked a decision of ``purpose`` is doing: one of ``ACTIVITIES``, or
    ``speak``."""
    return purpose if purpose in ACTIVITIES else "speak"


def purpose_label(purpose: str, words: dict[str, str]) -> str:
    """What a seat is asked to do (a speech kind or a decision), in the game's language."""
    return words.get(purpose, purpose)


def _audience_tag(event: Event, words: dict[str, str]) -> str:
    if event.audience == "public":
        return ""
    if not event.audience:
        return words["log"]
    return words["only"].format(names=words["sep"].join(event.audience))


def describe(event: Event, lang: str = "en") -> list[Line]:
    """The transcript lines of one event."""
    words = labels(lang)
    return [replace(line, colon=words["colon"]) for line in _describe(event, words)]


def _describe(event: Event, words: dict[str, str]) -> list[Line]:
    tag = _audience_tag(event, words)
    if isinstance(event, StageStarted):
        return [Line("stage", event.title or event.kind)]
    if isinstance(event, HostSpoke):
        return [Line("host", event.text, words["host"], tag)]
    if isinstance(event, Spoke):
        speaker = f"{event.speaker} → {event.to}" if event.to else event.speaker
        kind = purpose_label(event.kind, words)
        return [Line("speech", event.text, speaker, " ".join(filter(None, [kind, tag])))]
    if isinstance(event, ClueRevealed):
        title = words["clue"].format(title=event.title or event.clue_id)
        text = event.text + (f" [{event.image}]" if event.image else "")
        return [Line("clue", text, title, tag)]
    if isinstance(event, ActStarted):
        return _act(event, words, tag)
    if isinstance(event, Investigated):
        titles = event.clue_titles or event.clue_ids
        found = words["sep"].join(words["quoted"].format(title) for title in titles)
        said = words["search_found" if titles else "search_nothing"]
        return [Line("act", said.format(seat=event.seat, place=event.location, found=found),
                     tag=tag)]
    if isinstance(event, Rated):
        return [Line("log", f"{event.rater} {words['rates']} {event.speaker} "
                            f"#{event.statement}{words['colon']}{words['trust']} {event.trust}"
                            f"{words['sep']}{words['doubt']} {event.doubt}", tag=tag)]
    if isinstance(event, Accused):
        text = f"{words['accuses']} {event.accused or words['no_one']}"
        return [Line("speech", f"{text}{words['stop']}{event.reason}".strip(), event.accuser,
                     tag)]
    if isinstance(event, VoteCast):
        choice = f"{words['voted']} {event.target}" if event.target else words["abstain"]
        victim = words["paren"].format(event.victim) if event.victim else ""
        reason = f"{words['colon']}{event.reason}" if event.reason else ""
        return [Line("log", f"{event.voter} {choice}{victim}{reason}", tag=tag)]
    if isinstance(event, Failure):
        fallback = f"; {words['fallback']} {event.fallback}" if event.fallback else ""
        purpose = words["paren"].format(purpose_label(event.purpose, words))
        return [Line("log", f"{words['failure']}{words['colon']}{event.seat}{purpose}"
                            f"{words['colon']}{event.error}{fallback}", tag=tag)]
    if isinstance(event, GameEnded):
        return _ended(event, words, tag)
    return []


def _act(event: ActStarted, words: dict[str, str], tag: str) -> list[Line]:
    label = words["act"].format(n=event.act)
    if event.sheet is None:
        return [Line("act", event.public_text, label, tag)] if event.public_text else []
    goals = words["paren"].format(f"{words['goals']}{words['colon']}"
                                  f"{'; '.join(event.sheet.goals)}") if event.sheet.goals else ""
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


def winner_key(winner: str, murderers: Iterable[str]) -> str:
    """The side that won as the message key names it: "murderer" when a single murderer
    won ("The murderer wins."), else the side itself."""
    return "murderer" if winner == "murderers" and len(set(murderers)) == 1 else winner


def _ended(event: GameEnded, words: dict[str, str], tag: str) -> list[Line]:
    lines = [Line("result", outcome_text(outcome, words), outcome.victim or words["murderer"],
                  tag) for outcome in event.outcomes]
    side = winner_key(event.winner, [m for o in event.outcomes for m in o.murderers])
    verdict = words[f"{side}_wins"] if event.solution else words["no_solution"]
    lines.append(Line("result", verdict, words["result"], tag))
    if event.truth:
        lines.append(Line("result", event.truth, words["truth"], tag))
    return lines
