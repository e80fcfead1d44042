"""Internal.

What a PLAYER* seat remembers: its own script in 50-token segments, the clues it saw,
and the dialogue it heard, one question-and-answer pair per record (appendix C.1).

Prompts get the best records of the script and of the dialogue for a query, each within a
token budget. Only the seat's own sheet and the events it observed ever enter the store.
"""

from __future__ import annotations

from pydantic import BaseModel

from jubensha.engine import (
    Accused,
    ActStarted,
    CharacterSheet,
    ClueRevealed,
    Event,
    OwnCharacter,
    Spoke,
)
from jubensha.llm import Embedder
from jubensha.memory.store import MemoryConfig, MemoryStore, RetrievalMode
from jubensha.memory.text import TokenizerOptions, count_tokens
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet, Character

SCRIPT_SOURCES = ("script", "clue")


def character_texts(me: Character | OwnCharacter, lang: str, acts: int | None = 1) -> list[str]:
    """A character's private script as texts to index: description, story, timeline,
    relationships, secrets and the text of its acts up to ``acts`` (None: all)."""
    parts = [me.description, me.story,
             *(f"{t.time} {t.text}" if t.time else t.text for t in me.timeline),
             *(render("player_star", "relation", lang, **r.model_dump())
               for r in me.relationships),
             *me.secrets,
             *(sheet.text for sheet in me.acts if acts is None or sheet.act <= acts)]
    return [part.strip() for part in parts if part.strip()]


class SeatMemory:
    def __init__(self, sheet: CharacterSheet, *, chunk_tokens: int, mode: RetrievalMode,
                 embedder: Embedder | None, acts: int | None = 1) -> None:
        """``acts``: the acts of the own script indexed now (None: all of them, for
        answering after the game); later acts arrive with ``ActStarted`` events."""
        if mode != "lexical" and embedder is None:
            raise ValueError(f"retrieval mode {mode!r} needs an embedder for the seat")
        names = (*sheet.seat_names, *(victim.name for victim in sheet.victims))
        config = MemoryConfig(mode=mode, chunk_tokens=chunk_tokens,
                              tokenizer=TokenizerOptions(keep_words=tuple(names)))
        self.lang = sheet.language
        self.store = MemoryStore(config, embedder if mode != "lexical" else None)
        self._questions: dict[int, str] = {}
        self._acts = {a.act for a in sheet.me.acts if acts is None or a.act <= acts}
        for part in character_texts(sheet.me, self.lang, acts):
            self.store.add_document(part, source="script", speaker=sheet.me.name)

    def add_act(self, sheet: ActSheet) -> None:
        """A new act's private text (an act already indexed is not added twice)."""
        if sheet.act not in self._acts and sheet.text.strip():
            self.store.add_document(sheet.text, source="script", act=sheet.act)
        self._acts.add(sheet.act)

    def observe(self, event: Event) -> None:
        """Remember what the seat saw; a question waits for its answer to form one record."""
        if isinstance(event, ActStarted):
            if event.sheet is not None:
                self.add_act(event.sheet)
            elif event.public_text.strip():
                self.store.add_document(event.public_text, source="clue", act=event.act)
            return
        if isinstance(event, ClueRevealed):
            self.store.add(self.line(event), source="clue", turn=event.index)
            return
        if isinstance(event, Spoke) and event.kind == "question":
            self._questions[event.index] = self.line(event)
            return
        if isinstance(event, Spoke):
            question = self._questions.pop(event.reply_to, None) \
                if event.reply_to is not None else None
            text = self.line(event) if question is None else f"{question}\n{self.line(event)}"
            self.store.add(text, source="dialogue", kind=event.kind, speaker=event.speaker,
                           turn=event.index)
            return
        if isinstance(event, Accused):
            self.store.add(self.line(event), source="dialogue", kind="accusation",
                           speaker=event.accuser, turn=event.index)

    def line(self, event: BaseModel) -> str:
        return render("player_star", "line", self.lang, **event.model_dump())

    async def script(self, query: str, budget: int) -> list[str]:
        """The seat's script segments and clues most related to ``query``, within budget."""
        return await self._texts(query, budget, SCRIPT_SOURCES)

    def script_from_start(self, budget: int) -> list[str]:
        """The script in reading order up to ``budget`` tokens: the introduction reads the
        whole script (the authors' code retrieves 12,000 tokens for it)."""
        texts: list[str] = []
        used = 0
        for record in self.store.records:
            if record.source != "script":
                continue
            tokens = count_tokens(record.text)
            if used + tokens > budget:
                break
            texts.append(record.text)
            used += tokens
        return texts

    async def dialogue(self, query: str, budget: int) -> list[str]:
        return await self._texts(query, budget, ("dialogue",))

    async def _texts(self, query: str, budget: int, sources: tuple[str, ...]) -> list[str]:
        if budget <= 0:
            return []
        hits = await self.store.retrieve_budget(query, budget, where={"source": sources})
        return [hit.record.text for hit in hits]
