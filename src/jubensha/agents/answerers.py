"""Internal.

Reference answerers for multiple-choice evaluation (PLAYER* appendices C.1, C.2, C.6.3).

Three kinds of access, all independent of a live game:

- ``dialogue``: the standard post-game answerer. A seat answers from its own script (the
  acts released to it in the game; every act when the game handed out whole scripts, as
  the PLAYER* authors' games did) and the dialogue it observed, each retrieved for the
  question within 5,000 tokens (the paper's evaluation budgets).
- ``ssa`` (single script access, the paper's PP): the seat's own script only, as if it had
  never played (after a game: the acts released to it).
- ``fsa`` (full script access, OP): an omniscient reader gets, for every character, the
  segments of that character's script retrieved for the question. The per-character
  budget shrinks with the number of players, as in the authors' code (``FSA_BUDGETS``).

Usage::

    context = build_context("dialogue", script, seat="Nora Vance", events=run.events)
    answer = await answer_choice(question, context, model)
    answer.letters, answer.answer, answer.reason

Replies are JSON ``{"reason", "answer"}``: one option letter for a single-choice question,
a list of letters for a multiple-choice one. ``ChoiceAnswer.answer`` joins the letters
(``"a,c"``), the string the authors' correctness rule compares with the truth.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from jubensha.agents.player_star.memory import SeatMemory, character_texts
from jubensha.agents.toolkit import Caller, chat, first_tokens
from jubensha.engine import ActStarted, CharacterSheet, Event
from jubensha.llm import Embedder, Model, StructuredOutputError, declare
from jubensha.memory.store import MemoryConfig, MemoryStore, RetrievalMode
from jubensha.memory.text import TokenizerOptions
from jubensha.prompts import render
from jubensha.scripts.model import ChoiceQuestion, Language, Script

Access = Literal["dialogue", "ssa", "fsa"]
ACCESSES: tuple[Access, ...] = ("dialogue", "ssa", "fsa")

FSA_BUDGETS: dict[int, int] = {4: 3500, 5: 3000, 6: 2500, 7: 2000, 8: 1600, 9: 1200}
"""Tokens of each character's script in an FSA prompt, by number of players: the table
``agent_num2each_rsl`` of the authors' released code (alickzhu/PLAYER, main.py)."""
FSA_LARGE_TOTAL = 9 * FSA_BUDGETS[9]
"""Beyond nine players the total of the nine-player row is shared equally."""

_SEPARATORS = re.compile(r"[\s,，、;；/&+]+|\band\b|和|与|及")

PURPOSES: dict[str, str] = {
    "dialogue": declare("answer.dialogue", "seat"),  # own script and the game it heard
    "ssa": declare("answer.ssa", "seat"),  # own script only
    "fsa": declare("answer.fsa", "scripts"),  # every character's script (a reference)
}
"""What each answerer's calls may see, declared once (``llm.calls.declare``)."""



class AnswererConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    script_tokens: int = Field(5000, ge=0, description="Own script per prompt (C.1: "
                                                        "5,000 at evaluation).")
    dialogue_tokens: int = Field(5000, ge=0, description="Observed dialogue per prompt.")
    fsa_tokens: int | None = Field(None, ge=1, description="Per-character script in FSA; "
                                                            "None: by player count.")
    chunk_tokens: int = Field(50, ge=1)
    retrieval: RetrievalMode = "lexical"
    role_play: bool = Field(True, description="A seat answers with its game system prompt "
                                              "(civilian or murderer), as the authors did.")
    background_tokens: int = Field(400, ge=0)
    temperature: float | None = None
    max_tokens: int = Field(600, ge=16)
    attempts: int = Field(3, ge=1)


def fsa_budget(players: int) -> int:
    """Per-character script tokens for an FSA prompt with ``players`` characters."""
    if players in FSA_BUDGETS:
        return FSA_BUDGETS[players]
    if players < min(FSA_BUDGETS):
        return FSA_BUDGETS[min(FSA_BUDGETS)]
    return FSA_LARGE_TOTAL // players


@dataclass
class AnswerContext:
    """What an answerer may read: built once per seat (or once for FSA), reused for every
    question. ``memory`` holds a seat's script and dialogue; ``scripts`` every character's
    script for FSA."""

    access: Access
    script: Script
    config: AnswererConfig
    seat: str | None = None
    memory: SeatMemory | None = None
    scripts: MemoryStore | None = None
    system: str = ""
    names: list[str] = field(default_factory=list)

    @property
    def language(self) -> Language:
        return self.script.language

    async def user_prompt(self, question: ChoiceQuestion) -> str:
        options = [{"letter": letter.upper(), "text": text}
                   for letter, text in question.options.items()]
        common = {"question": question.question, "options": options,
                  "multiple": question.multiple}
        if self.access == "fsa":
            return render("answerers", "fsa_choice", self.language,
                          sections=await self._sections(question.question), **common)
        assert self.memory is not None
        dialogue = None
        if self.access == "dialogue":
            dialogue = await self.memory.dialogue(question.question,
                                                  self.config.dialogue_tokens)
        return render("answerers", "choice", self.language,
                      script=await self.memory.script(question.question,
                                                      self.config.script_tokens),
                      dialogue=dialogue, **common)

    async def _sections(self, query: str) -> list[dict[str, Any]]:
        assert self.scripts is not None
        budget = self.config.fsa_tokens or fsa_budget(len(self.names))
        sections = []
        for name in self.names:
            hits = await self.scripts.retrieve_budget(
                query, budget, where={"source": "script", "speaker": name})
            sections.append({"name": name, "script": [hit.record.text for hit in hits]})
        return sections


class ChoiceAnswer(BaseModel):
    """An answer to one multiple-choice question. ``letters`` are lower-case option
    letters (empty when no valid reply came: ``error`` says why); ``raw`` is the last reply."""

    letters: list[str]
    answer: str
    reason: str = ""
    raw: str = ""
    attempts: int = 0
    error: str | None = None


def build_context(access: Access, script: Script, seat: str | None = None,
                  events: Iterable[Event] = (), *, config: AnswererConfig | None = None,
                  embedder: Embedder | None = None, whole_script: bool = False
                  ) -> AnswerContext:
    """The context of an answerer: ``fsa`` needs only the script; ``dialogue`` and ``ssa``
    need the answering ``seat``; ``dialogue`` also reads the ``events`` it observed
    (``whole_script``: the game handed every seat all its acts at the start)."""
    config = config or AnswererConfig()
    if access == "fsa":
        return full_context(script, config=config, embedder=embedder)
    if access not in ACCESSES:
        raise ValueError(f"unknown answerer {access!r}; expected one of {', '.join(ACCESSES)}")
    if seat is None:
        raise ValueError(f"the {access!r} answerer needs the seat that answers")
    return seat_context(script, seat, events, access=access, config=config,
                        embedder=embedder, whole_script=whole_script)


def seat_context(script: Script, seat: str, events: Iterable[Event] = (), *,
                 access: Literal["dialogue", "ssa"] = "dialogue",
                 config: AnswererConfig | None = None,
                 embedder: Embedder | None = None, whole_script: bool = False
                 ) -> AnswerContext:
    """A seat's own script and, for ``dialogue``, what it observed in ``events``. The
    script is act 1 and the act sheets the seat received in ``events``, or every act
    with ``whole_script`` (a game that handed out whole scripts, or no game at all): a
    sheet the game never handed out is not the seat's to answer from."""
    config = config or AnswererConfig()
    try:
        character = script.character(seat)
    except KeyError:
        raise ValueError(f"no character {seat!r} in script {script.id!r} (characters: "
                         f"{', '.join(script.names)})") from None
    sheet = CharacterSheet.for_seat(script, character.name, every_act=True)
    memory = SeatMemory(sheet, chunk_tokens=config.chunk_tokens, mode=config.retrieval,
                        embedder=embedder, acts=None if whole_script else 1)
    for event in events:
        if not event.visible_to(character.name):
            continue
        if access == "dialogue":
            memory.observe(event)
        elif isinstance(event, ActStarted) and event.sheet is not None:
            memory.add_act(event.sheet)
    system = ""
    if config.role_play:
        kills = [v.name for v in script.victims if v.name in character.killed] or (
            [v.name for v in script.victims] if character.side == "murderer" else [])
        system = render("answerers", "system", script.language, me=character.name,
                        title=script.title, others=[o.name for o in sheet.others],
                        background=first_tokens(script.background, config.background_tokens),
                        murderer=bool(kills) or character.side == "murderer", kills=kills)
    return AnswerContext(access=access, script=script, config=config, seat=character.name,
                         memory=memory, system=system, names=[character.name])


def full_context(script: Script, *, config: AnswererConfig | None = None,
                 embedder: Embedder | None = None) -> AnswerContext:
    """Every character's script in one store, each segment tagged with its character."""
    config = config or AnswererConfig()
    if config.retrieval != "lexical" and embedder is None:
        raise ValueError(f"retrieval mode {config.retrieval!r} needs an embedder")
    names = script.names
    store = MemoryStore(
        MemoryConfig(mode=config.retrieval, chunk_tokens=config.chunk_tokens,
                     tokenizer=TokenizerOptions(keep_words=(
                         *names, *(v.name for v in script.victims)))),
        embedder if config.retrieval != "lexical" else None)
    for character in script.characters:
        for part in character_texts(character, script.language, None):
            store.add_document(part, source="script", speaker=character.name)
    system = render("answerers", "fsa_system", script.language, title=script.title,
                    background=first_tokens(script.background, config.background_tokens),
                    names=names)
    return AnswerContext(access="fsa", script=script, config=config, scripts=store,
                         system=system, names=names)


async def answer_choice(question: ChoiceQuestion, context: AnswerContext, model: Model, *,
                        sample: int = 0) -> ChoiceAnswer:
    """Ask ``model`` one question with ``context``; never raises for a bad reply."""
    letters = tuple(question.options) or tuple("abcde")
    messages = chat(await context.user_prompt(question), context.system)
    config = context.config
    caller = Caller(model, context.seat, context.language, temperature=config.temperature,
                    attempts=config.attempts, object_tokens=config.max_tokens)
    schema = answer_schema(letters, question.multiple)
    try:
        result = await caller.structured_reply(PURPOSES[context.access], messages, schema,
                                               sample=sample)
    except StructuredOutputError as exc:
        return ChoiceAnswer(letters=[], answer="", raw=exc.raws[-1] if exc.raws else "",
                            attempts=len(exc.raws), error=str(exc))
    value: Any = result.value  # a schema made at run time
    chosen = value.answer
    found = [chosen] if isinstance(chosen, str) else list(chosen)
    return ChoiceAnswer(letters=found, answer=",".join(found), reason=value.reason,
                        raw=result.raws[-1], attempts=result.attempts)


def parse_letters(value: Any, letters: Sequence[str]) -> list[str] | None:
    """Option letters named by ``value`` (``"A"``, ``"a, c"``, ``"AC"``, ``["a", "c"]``,
    ``"B."``), lower-case, sorted, without repeats; None when it names anything else."""
    if isinstance(value, list | tuple):
        value = ",".join(str(item) for item in value)
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip().lower()
    found: set[str] = set()
    for token in filter(None, _SEPARATORS.split(text)):
        token = token.strip(".:)(\"'[]")
        if token and all(char in letters for char in token):
            found.update(token)
        elif token:
            return None
    return sorted(found) or None


@lru_cache(maxsize=64)
def answer_schema(letters: tuple[str, ...], multiple: bool) -> type[BaseModel]:
    """``{"reason", "answer"}``: the reasoning first (the paper's step-by-step order), then
    one letter, or a non-empty list of letters for a multiple-choice question."""
    def single(value: Any) -> Any:
        found = parse_letters(value, letters)
        return found[0] if found and len(found) == 1 else value

    def several(value: Any) -> Any:
        return parse_letters(value, letters) or value

    option = Literal[letters]  # type: ignore[valid-type]
    answer: Any = (Annotated[list[option], BeforeValidator(several),
                             Field(min_length=1, json_schema_extra={"uniqueItems": True})]
                   if multiple else Annotated[option, BeforeValidator(single)])
    return create_model("MultipleChoice" if multiple else "SingleChoice",
                        reason=(str, Field(description="Step-by-step reasoning.")),
                        answer=(answer, ...))
