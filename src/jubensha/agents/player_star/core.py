"""Internal.

The seat a PLAYER* agent plays: its sheet, memory, suspect state and model calls.

Every prompt is a ``prompts/player_star`` template with a system prompt (the rules and the
seat's role, civilian or murderer: appendix C.6.1) and one user message; every request is
tagged with a precise purpose (``sensor.<name>``, ``question``, ``pruner``, ``answer``...).
What only the seat knows, the script passages retrieved for a call and its goals
(``own``), follows the rules in the system prompt; the user message holds what was said
at the table and the request, so the seat's own text is never part of what it was asked
(the scripted fake repeats only the user message).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from jubensha.agents.player_star.config import PlayerConfig
from jubensha.agents.player_star.memory import SeatMemory
from jubensha.agents.player_star.suspects import SuspectState
from jubensha.agents.toolkit import Caller, chat, clean_speech, first_tokens, goals, nonempty
from jubensha.engine import ActStarted, Event, SeatContext
from jubensha.llm import Message
from jubensha.prompts import render


class PlayerCore:
    def __init__(self, seat: SeatContext, config: PlayerConfig) -> None:
        sheet = seat.sheet
        self.seat = seat
        self.sheet = sheet
        self.config = config
        self.name = sheet.me.name
        self.lang = sheet.language
        self.others = [other.name for other in sheet.others]
        self.victims: list[str | None] = [victim.name for victim in sheet.victims] or [None]
        self.kills: set[str | None] = set(self.victims) & set(sheet.me.killed)
        if sheet.is_murderer and not self.kills:
            self.kills = set(self.victims)
        self.memory = SeatMemory(sheet, chunk_tokens=config.chunk_tokens,
                                 mode=config.retrieval, embedder=seat.embedder)
        self.state = SuspectState(self.others, self.victims)
        self.act_sheet = sheet.me.act_sheet(1)
        self.summaries: dict[tuple[Any, ...], str] = {}
        missing = [s.name for s in config.sensors if self.lang not in s.question]
        if missing:
            raise ValueError(f"player sensors {', '.join(missing)}: no {self.lang!r} question "
                             f"for this {self.lang} game")
        self.system = self._system()

    @property
    def murderer(self) -> bool:
        return bool(self.kills)

    def killed(self, victim: str | None) -> bool:
        """Whether this seat killed ``victim``: it then plays the murderer's variant of
        every prompt about that victim (the authors' code: ``kill_by_me``)."""
        return victim in self.kills

    def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted) and event.sheet is not None:
            self.act_sheet = event.sheet
        self.memory.observe(event)

    def goals(self) -> list[str]:
        return goals(self.sheet.me, self.act_sheet)

    # -- prompts -------------------------------------------------------------------------
    def prompt(self, name: str, **values: Any) -> str:
        return render("player_star", name, self.lang, me=self.name, **values)

    def _system(self) -> str:
        """The rules and the seat's role; it never changes during a game."""
        sheet = self.sheet
        return self.prompt("system", title=sheet.title, others=self.others,
                           background=first_tokens(sheet.background,
                                                   self.config.background_tokens),
                           murderer=self.murderer,
                           kills=[victim for victim in self.victims if victim in self.kills])

    def own(self, script: list[str], about: str, character: str = "",
            goals: bool = False) -> str:
        """The seat's script passages for this call (``about``: start, case, question,
        this, or character) and, with ``goals``, its goals: the system prompt's part."""
        return self.prompt("own", script=script, about=about, character=character,
                           goals=self.goals() if goals else [])

    def messages(self, user: str, own: str = "") -> list[Message]:
        return chat(user, f"{self.system}\n\n{own}" if own else self.system)

    @property
    def caller(self) -> Caller:
        config = self.config
        return Caller.for_seat(self.seat, temperature=config.temperature,
                               attempts=config.attempts, text_tokens=config.speech_tokens,
                               object_tokens=config.structured_tokens)

    async def structured(self, purpose: str, user: str, schema: type[BaseModel],
                         max_tokens: int | None = None, own: str = "") -> Any:
        return await self.caller.structured(purpose, self.messages(user, own), schema,
                                            max_tokens=max_tokens)

    async def text(self, purpose: str, user: str, own: str = "") -> str:
        return (await self.caller.text(purpose, self.messages(user, own))).strip()

    async def speech(self, purpose: str, user: str, own: str = "") -> str:
        """Model text as this seat's line of dialogue (no name prefix, no other speakers)."""
        text = clean_speech(await self.text(purpose, user, own), self.name,
                            self.sheet.seat_names, self.config.speech_chars)
        return nonempty(text, purpose)

    async def about(self, victim: str | None, character: str) -> tuple[list[str], list[str]]:
        """Script and dialogue retrieved for a suspect and a victim (the authors' query is
        ``"<character>,<victim>"``)."""
        query = f"{character}, {victim}" if victim else character
        return (await self.memory.script(query, self.config.script_tokens),
                await self.memory.dialogue(query, self.config.dialogue_tokens))

