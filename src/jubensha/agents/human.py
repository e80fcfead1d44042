"""Internal.

A person at the table (architecture ``human``), through the same ``Agent`` interface as
an LLM agent (docs/architecture.md: a person is an agent too).

``HumanAgent`` keeps the seat's view (its character sheet, the act sheets released to it,
every event it observed) and hands each event and decision to a ``HumanIO``: the terminal
is ``ConsoleIO``; a web page is another ``HumanIO`` answering the same decisions. What the
person sees is exactly what the engine delivers to ``observe``, so the engine's isolation
is the screen's isolation. A human seat needs no model and the table's decision timeout
does not apply to it (``PersonAgent``). When the person leaves (end of input) the seat
raises ``HumanLeft`` for every later decision and the table plays its recorded fallbacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.text import Text

from jubensha.agents.options import parse_options
from jubensha.agents.registry import architectures, make_agent, split_spec
from jubensha.engine import (
    NOBODY,
    Accusation,
    Accuse,
    Action,
    ActStarted,
    AskQuestions,
    CastVote,
    CharacterSheet,
    ClueRevealed,
    Decision,
    DecisionRoutes,
    Event,
    HostSpoke,
    Investigate,
    PersonAgent,
    Questions,
    RateRound,
    RateStatement,
    Rating,
    Ratings,
    SeatContext,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.narration import describe
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet
from jubensha.scripts.naming import names_meant, names_near
from jubensha.terminal import Terminal, print_line, print_text

Reader = Callable[[str], str]
"""Shows a prompt and reads one line (``input``); raises EOFError when the input ended."""


class HumanLeft(Exception):
    """The person at a human seat has gone (end of input); the table falls back for them."""


class HumanConfig(BaseModel):
    """Settings of a human seat: ``human:history=30+handover=true``."""

    model_config = ConfigDict(extra="forbid")

    history: int = Field(20, ge=1, description="How many recent events ':history' shows.")
    handover: bool = Field(False, description="Hot seat: several people share this "
                           "terminal; the seat's events wait for its turn, which starts "
                           "with a hand-over screen and ends by clearing the screen.")

    @classmethod
    def parse(cls, option: str) -> HumanConfig:
        return parse_options(cls, option, "human")


class SeatView(BaseModel):
    """What the person at a seat may read: the sheet and what reached the seat since."""

    sheet: CharacterSheet
    acts: list[ActSheet] = Field(description="Own act sheets released so far.")
    events: list[Event] = Field(default_factory=list)

    @classmethod
    def begin(cls, sheet: CharacterSheet) -> SeatView:
        return cls(sheet=sheet, acts=list(sheet.me.acts))

    def record(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ActStarted) and event.sheet and event.sheet not in self.acts:
            self.acts.append(event.sheet)

    @property
    def clues(self) -> list[ClueRevealed]:
        return [event for event in self.events if isinstance(event, ClueRevealed)]

    def sheet_text(self) -> str:
        """The seat's sheet as the person reads it (terminal and web page alike)."""
        sheet, me = self.sheet, self.sheet.me
        return render(
            "human", "sheet", sheet.language, me=me.model_dump(), murderer=sheet.is_murderer,
            title=sheet.title, background=sheet.background, rules=sheet.rules,
            victims=[victim.model_dump() for victim in sheet.victims],
            others=[other.model_dump() for other in sheet.others],
            acts=[act.model_dump() for act in self.acts if act.text or act.goals],
            clues=[clue.model_dump() for clue in self.clues])


class HumanIO(ABC):
    """How a person sees a seat and answers its decisions (the terminal, a web page)."""

    @abstractmethod
    async def start(self, view: SeatView) -> None:
        """The game begins; ``view`` stays current as the seat observes events."""

    @abstractmethod
    async def show(self, event: Event) -> None:
        """An event the seat may see (already recorded in the view)."""

    @abstractmethod
    async def decide(self, decision: Decision) -> Action:
        """The person's valid answer; ``HumanLeft`` when they have gone."""


class HumanAgent(PersonAgent):
    """A seat played by a person through a ``HumanIO`` (the terminal by default)."""

    architecture = "human"

    def __init__(self, io: HumanIO | None = None, config: HumanConfig | None = None):
        self.config = config or HumanConfig()
        self.io = io or ConsoleIO(history=self.config.history, handover=self.config.handover)
        self.left = False

    @classmethod
    def from_option(cls, option: str) -> HumanAgent:
        return cls(config=HumanConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        self.view = SeatView.begin(seat.sheet)
        await self.io.start(self.view)

    async def observe(self, event: Event) -> None:
        self.view.record(event)
        if not self.left:
            await self.io.show(event)

    async def decide(self, decision: Decision) -> Action:
        if self.left:
            raise HumanLeft(f"{self.view.sheet.me.name} has left the table")
        try:
            return await self.io.decide(decision)
        except HumanLeft:
            self.left = True
            raise


def is_human(spec: str) -> bool:
    """Whether architecture ``spec`` seats a person (who plays without a model)."""
    name, _ = split_spec(spec)
    return name in architectures() and isinstance(make_agent(spec), HumanAgent)


def hot_seat_spec(spec: str) -> str:
    """``spec`` with the hand-over screen on, for a terminal that several people share."""
    name, option = split_spec(spec)
    return f"{name}:{option}+handover=true" if option else f"{name}:handover=true"


# -- input -------------------------------------------------------------------------------
async def read_line(read: Reader, prompt: str) -> str:
    """One line from ``read(prompt)``, read in a daemon thread: the other seats keep playing while
    the person types, and Ctrl-C stops the game without waiting for a line."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def deliver(value: str, error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)

    def work() -> None:
        try:
            value, error = read(prompt), None
        except BaseException as exc:  # noqa: BLE001  (EOF and errors go to the awaiting task)
            value, error = "", exc
        with contextlib.suppress(RuntimeError):  # the loop closed (the game was stopped)
            loop.call_soon_threadsafe(deliver, value, error)

    threading.Thread(target=work, name="human-input", daemon=True).start()
    return await future


def console_input(prompt: str) -> str:
    """``input``, except from a pipe: the line is read from the file descriptor itself, so
    that a reading thread left waiting when the game stops (Ctrl-C) holds no lock of
    ``sys.stdin``, which the interpreter must take to exit (else it aborts). A terminal
    (line editing) and a replaced ``sys.stdin`` (tests) are read with ``input``."""
    if sys.stdin is not sys.__stdin__ or sys.stdin is None or sys.stdin.isatty():
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(sys.stdin.fileno(), 1)
        if not byte:
            if not line:
                raise EOFError
            break
        line += byte
    return line.decode("utf-8", errors="replace").rstrip("\r\n")


_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary())


def terminal_lock() -> asyncio.Lock:
    """One lock per running game loop: people sharing a terminal take turns at it (votes
    and ratings are asked of every seat at once)."""
    loop = asyncio.get_running_loop()
    if loop not in _LOCKS:
        _LOCKS[loop] = asyncio.Lock()
    return _LOCKS[loop]


class Ambiguous(ValueError):
    """What was typed fits several options (a first name two seats share)."""

    def __init__(self, answer: str, options: list[str]):
        super().__init__(f"{answer!r} could be {' or '.join(options)}")
        self.answer = answer
        self.options = options


def parse_choice(answer: str, options: Sequence[str], none: str | None = None) -> int | None:
    """The index of the option chosen by number (1-based) or name: whole, any case, or a
    first or last name alone that fits one option (``scripts.naming``); None for 0 or
    ``none`` when that is offered. ``Ambiguous`` when a part fits several options,
    ValueError otherwise."""
    text = answer.strip().casefold()
    if text.isdigit():
        number = int(text)
        if number == 0 and none is not None:
            return None
        if 1 <= number <= len(options):
            return number - 1
    elif none is not None and text == none.casefold():
        return None
    else:
        meant = names_meant(answer, options)
        if len(meant) > 1:
            raise Ambiguous(answer.strip(), meant)
        if meant:
            return list(options).index(meant[0])
    raise ValueError(f"{answer!r} is not one of the choices")


_RATING = re.compile(r"\s*([0-2])\s*[\s,;/，、]?\s*([0-2])\s*")


def parse_rating(answer: str) -> tuple[int, int]:
    """``"2 0"``, ``"2,0"`` or ``"20"`` → (trust, doubt); ValueError otherwise."""
    match = _RATING.fullmatch(answer)
    if match is None:
        raise ValueError(f"{answer!r} is not two numbers from 0 to 2")
    return int(match.group(1)), int(match.group(2))


# -- the terminal --------------------------------------------------------------------------
class ConsoleIO(HumanIO, DecisionRoutes):
    """The terminal: the seat's sheet and events as they happen, numbered choices, typed
    speech. Invalid input is asked again with a hint; ``:sheet``, ``:history`` and ``:help``
    work at every prompt; end of input means the person left (``HumanLeft``)."""

    def __init__(self, console: Console | None = None, read: Reader | None = None, *,
                 history: int = 20, handover: bool = False):
        self.console = console or Terminal(highlight=False)
        self.read = read or console_input
        self.history = history
        self.handover = handover
        self.shown = 0
        self.sheet_shown = False

    # -- showing -------------------------------------------------------------------------
    def text(self, template: str, **values: Any) -> str:
        return render("human", template, self.lang, **values)

    def say(self, text: str, style: str = "") -> None:
        print_text(self.console, Text(text, style=style), getattr(self, "lang", "en"))

    def hint(self, problem: str, **values: Any) -> None:
        self.say(self.text("hint", problem=problem, **values), "yellow")

    def show_sheet(self) -> None:
        view = self.view
        sheet = view.sheet
        me = sheet.me
        self.console.rule(Text(f"{sheet.title} · {me.name}", style="bold"))
        self.say(view.sheet_text())
        self.console.rule()
        self.sheet_shown = True

    def print_event(self, event: Event) -> None:
        for line in describe(event, self.lang):
            print_line(self.console, line, self.lang)

    def print_new_events(self) -> None:
        for event in self.view.events[self.shown:]:
            self.print_event(event)
        self.shown = len(self.view.events)

    def show_history(self) -> None:
        recent = self.view.events[-self.history:]
        if not recent:
            self.say(self.text("field", field="no_history"), "dim")
        for event in recent:
            self.print_event(event)

    def heading(self, text: str) -> None:
        self.console.print()
        self.say(text, "bold cyan")

    # -- HumanIO -------------------------------------------------------------------------
    async def start(self, view: SeatView) -> None:
        self.view = view
        self.lang = view.sheet.language
        self.name = view.sheet.me.name
        if not self.handover:
            self.show_sheet()
            self.say(self.text("help"), "dim")

    async def show(self, event: Event) -> None:
        if not self.handover:
            self.print_new_events()

    async def decide(self, decision: Decision) -> Action:
        async with terminal_lock():
            if self.handover:
                await self.take_over()
            try:
                return await self.route(decision)
            finally:
                if self.handover:
                    self.console.clear()
                    self.say(self.text("passed", seat=self.name), "bold")

    async def take_over(self) -> None:
        """Hot seat: wait for the seat's person, clear the screen, show what they missed."""
        self.console.print()
        await self.line(self.text("handover", seat=self.name))
        self.console.clear()
        if not self.sheet_shown:
            self.show_sheet()
            self.say(self.text("help"), "dim")
        self.print_new_events()

    # -- reading -------------------------------------------------------------------------
    async def line(self, label: str) -> str:
        """One line of input that is not a command (commands are run, then asked again)."""
        while True:
            try:
                raw = await read_line(self.read, f"{label} › ")
            except EOFError:
                self.console.print()
                self.say(self.text("left", seat=self.name), "bold red")
                raise HumanLeft(f"{self.name} left the table (end of input)") from None
            command = raw.strip()
            if not command.startswith(":"):
                return raw
            self.run_command(command)

    def run_command(self, command: str) -> None:
        if command == ":sheet":
            self.show_sheet()
        elif command == ":history":
            self.show_history()
        elif command == ":help":
            self.say(self.text("help"))
        else:
            self.hint("command", command=command)

    async def words(self, label: str, *, optional: bool = False) -> str:
        """Typed text on one line; asked again when empty unless ``optional``."""
        while True:
            answer = " ".join((await self.line(label)).split())
            if answer or optional:
                return answer
            self.hint("empty")

    async def pick(self, options: Sequence[str], none: str | None = None,
                   about: str = "") -> int | None:
        """The index of a numbered option (None for option 0, ``none``, when offered);
        ``about``: "vote" or "accuse" when the options are whom to vote for or accuse."""
        for number, option in enumerate(options, start=1):
            self.say(f"  {number}) {option}")
        if none is not None:
            self.say(f"  0) {none}")
        while True:
            answer = await self.line(self.text("field", field="choice"))
            try:
                return parse_choice(answer, options, none)
            except Ambiguous as exc:
                self.hint("ambiguous", typed=exc.answer, options=exc.options)
            except ValueError:
                self.refused(answer, options, none, about)

    def refused(self, answer: str, options: Sequence[str], none: str | None,
                about: str) -> None:
        """Why ``answer`` chose nothing: the person's own name, a name misspelt (the ones
        it looks like), or else what may be typed."""
        if names_meant(answer, [self.name]) and self.name not in options:
            self.hint("self", about=about)
        elif near := names_near(answer, options):
            self.hint("near", options=near)
        else:
            self.hint("choice", count=len(options), zero=none is not None)

    # -- decisions -----------------------------------------------------------------------
    def fresh(self, prompt: str) -> str:
        """The host's request, unless the host has just said it to the seat."""
        last = self.view.events[-1] if self.view.events else None
        return "" if isinstance(last, HostSpoke) and last.text == prompt else prompt

    async def on_speak(self, decision: Speak) -> Speech:
        question = decision.question
        self.heading(self.text("speak", kind=decision.kind, prompt=self.fresh(decision.prompt),
                               question=question.model_dump() if question else None))
        if decision.kind == "reasoning":
            method = await self.words(self.text("field", field="method"))
            motive = await self.words(self.text("field", field="motive"))
            return Speech(text=self.text("reasoning", method=method, motive=motive))
        return Speech(text=await self.words(self.text("field", field="speech")))

    async def questions(self, target: str, count: int) -> list[str]:
        return [await self.words(self.text("field", field="question", n=n, count=count,
                                           target=target)) for n in range(1, count + 1)]

    async def on_ask(self, decision: AskQuestions) -> Questions:
        self.heading(self.text("ask", count=decision.count, victim=decision.victim))
        index = await self.pick(decision.candidates)
        assert index is not None
        target = decision.candidates[index]
        return Questions(target=target, questions=await self.questions(target, decision.count))

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        self.heading(self.text("turn", locations=decision.locations))
        if decision.locations:
            actions = [self.text("field", field="ask_someone"),
                       self.text("field", field="investigate")]
            if await self.pick(actions) == 1:
                place = await self.pick(decision.locations)
                assert place is not None
                remark = await self.words(self.text("field", field="remark"), optional=True)
                return Investigate(location=decision.locations[place], statement=remark)
        index = await self.pick(decision.candidates)
        assert index is not None
        target = decision.candidates[index]
        return Questions(target=target, questions=await self.questions(target, 1))

    async def on_rate(self, decision: RateStatement) -> Rating:
        statement = decision.statement
        self.heading(self.text("rate", speaker=statement.speaker, statement=statement.text))
        while True:
            try:
                trust, doubt = parse_rating(await self.line(self.text("field", field="rating")))
            except ValueError:
                self.hint("rating")
                continue
            return Rating(trust=trust, doubt=doubt)

    async def on_rate_round(self, decision: RateRound) -> Ratings:
        """Every statement of the round on one screen, then a line each (Enter: 1 1)."""
        statements = decision.statements
        self.heading(self.text("rate_round", statements=[(s.speaker, s.text)
                                                         for s in statements]))
        ratings: list[Rating | None] = []
        for number, statement in enumerate(statements, 1):
            while True:
                answer = await self.line(self.text("field", field="rating_of", n=number,
                                                   speaker=statement.speaker))
                try:
                    trust, doubt = parse_rating(answer) if answer.strip() else (1, 1)
                except ValueError:
                    self.hint("rating")
                    continue
                ratings.append(Rating(trust=trust, doubt=doubt))
                break
        return Ratings(ratings=ratings)

    async def choose_with_reason(self, candidates: list[str], none: str
                                 ) -> tuple[str | None, str]:
        shown = [self.text("field", field="nobody_here") if c == NOBODY else c
                 for c in candidates]
        index = await self.pick(shown, none=self.text("field", field=none),
                                about="vote" if none == "abstain" else "accuse")
        reason = await self.words(self.text("field", field="reason"), optional=True)
        return (None if index is None else candidates[index]), reason

    async def on_accuse(self, decision: Accuse) -> Accusation:
        self.heading(self.text("accuse"))
        target, reason = await self.choose_with_reason(decision.candidates, "nobody")
        return Accusation(target=target, reason=reason)

    async def on_vote(self, decision: CastVote) -> Vote:
        self.heading(self.text("vote", victim=decision.victim, accused=decision.accused))
        target, reason = await self.choose_with_reason(decision.candidates, "abstain")
        return Vote(target=target, reason=reason)
