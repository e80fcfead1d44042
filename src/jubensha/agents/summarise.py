"""Internal.

Summarised memory (MPIRD-LLMA's Summarization Module, appendix C tables 17, 22 and 25).

Long character scripts and long game histories do not fit a context window, so MIRAGE
condenses them with the model itself:

- **script**: each long section of the character's sheet (story, script, relationships,
  performance, goals, abilities) is condensed on its own (table 25; a section longer than
  ``chunk_tokens`` is condensed chunk by chunk and the pieces once more), then the sections
  are condensed together into the one description the agent plays from (table 17). Times,
  places, motives and goals must survive.
- **history**: when the record of the game grows past ``history_tokens`` its older lines
  are condensed into a summary that keeps the ``name: [action]: content`` form (table 22);
  the newest ``keep_lines`` lines stay verbatim.

Thresholds follow the reference code (``lime728/MIRAGE``: 1,500-token budget, sections
between 500 and 4,000 tokens condensed, longer ones in 4,000-token chunks). Every call
carries a ``summarise.*`` purpose so run counts can tell environment work from speech.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.toolkit import Caller, chat
from jubensha.llm import Model
from jubensha.memory.text import chunk, count_tokens
from jubensha.prompts import render
from jubensha.scripts.model import Language

SCRIPT_PURPOSE = "summarise.script"
SECTION_PURPOSE = "summarise.section"
HISTORY_PURPOSE = "summarise.history"


class SummaryConfig(BaseModel):
    """When and how much to condense; every field can be set per seat."""

    model_config = ConfigDict(extra="forbid")

    script: Literal["always", "long", "never"] = Field("always", description=(
        "always: condense the sheet at the start (the reference code does); long: only when "
        "it exceeds 2 x script_tokens; never: play from the sheet as written."))
    script_tokens: int = Field(1500, ge=50, description="Target size of the description.")
    section_tokens: int = Field(500, ge=0, description="Shorter sections are kept whole.")
    chunk_tokens: int = Field(4000, ge=100, description="Longer sections go in chunks.")
    history_tokens: int = Field(1500, ge=50, description="Condense the history past this.")
    keep_lines: int = Field(2, ge=0, description="Newest history lines kept verbatim.")
    max_tokens: int = Field(700, ge=32, description="Token limit of one summary.")
    attempts: int = Field(2, ge=1)


class Condensed(BaseModel):
    """A summary with the thinking before it (the papers' THOUGHT / RESPONSE)."""

    thought: str = ""
    summary: str


class Summariser:
    """Condenses texts for one seat with its model (calls are tagged with the seat)."""

    def __init__(self, model: Model, lang: Language, seat: str, seed: int = 0,
                 config: SummaryConfig | None = None):
        self.lang = lang
        self.config = config or SummaryConfig()
        self.caller = Caller(model, seat, lang, seed, attempts=self.config.attempts,
                             object_tokens=self.config.max_tokens)

    async def _condense(self, purpose: str, template: str, **values: object) -> str:
        prompt = render("mirage", template, self.lang, **values)
        reply = await self.caller.structured(purpose, chat(prompt), Condensed)
        return reply.summary.strip()

    async def section(self, name: str, item: str, text: str) -> str:
        """One section of a sheet, condensed when long (chunk by chunk when very long)."""
        tokens = count_tokens(text)
        if tokens <= self.config.section_tokens:
            return text
        if tokens > self.config.chunk_tokens:
            pieces = [await self._condense(SECTION_PURPOSE, "summarise_section", role=name,
                                           item=item, content=piece)
                      for piece in chunk(text, self.config.chunk_tokens)]
            text = "\n".join(pieces)
        return await self._condense(SECTION_PURPOSE, "summarise_section", role=name,
                                    item=item, content=text)

    async def character(self, name: str, sections: dict[str, str]) -> str:
        """The whole sheet as one description (long sections condensed first)."""
        kept = {item: text for item, text in sections.items() if text.strip()}
        if self.config.script == "never":
            return render("mirage", "sections", self.lang, sections=kept)
        total = sum(count_tokens(text) for text in kept.values())
        if self.config.script == "long" and total <= 2 * self.config.script_tokens:
            return render("mirage", "sections", self.lang, sections=kept)
        if total > 2 * self.config.script_tokens:
            kept = {item: await self.section(name, item, text) for item, text in kept.items()}
        return await self._condense(SCRIPT_PURPOSE, "summarise_character", role=name,
                                    sections=kept, tokens=self.config.script_tokens)

    async def history(self, text: str) -> str:
        return await self._condense(HISTORY_PURPOSE, "summarise_history", text=text)


class History:
    """The game as ``name: [action]: content`` lines plus a summary of older lines."""

    def __init__(self, config: SummaryConfig | None = None):
        self.config = config or SummaryConfig()
        self.summary = ""
        self.lines: list[str] = []
        self.condensed = 0
        """How many times older lines were folded into the summary."""

    def add(self, line: str) -> None:
        if line.strip():
            self.lines.append(line.strip())

    @property
    def tokens(self) -> int:
        return count_tokens(self.text())

    def text(self) -> str:
        return "\n".join(part for part in (self.summary, *self.lines) if part)

    def over_budget(self) -> bool:
        return self.tokens > self.config.history_tokens

    async def fit(self, summariser: Summariser) -> bool:
        """Condense the older lines when over budget; True when it did."""
        keep = self.config.keep_lines
        older = self.lines[:-keep] if keep else list(self.lines)
        if not self.over_budget() or not (older or self.summary):
            return False
        self.summary = await summariser.history("\n".join(
            part for part in (self.summary, *older) if part))
        self.lines = self.lines[len(older):]
        self.condensed += 1
        return True
