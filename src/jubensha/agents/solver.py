"""Internal.

The solver agent (architecture ``solver``): a model-free player that reads a generated
mystery the way its proof does. It keeps a notebook (``scripts.proof.notebook``) of every
fact stated by what its seat sees: the background, act texts, clue cards, its own sheet,
and what the others say (a seat's words count only while that seat is not the murderer
weighed); it tells the others its own timeline and cards as soon as it may speak, searches
every place it is offered, and accuses and votes for the one answer the facts leave. While
they leave more than one (or on a script in no fact language it reads) it falls back on the
extractive agent's evidence; playing the murderer, it is the extractive agent.

It shows that a generated game, not only its generator, is solvable: the facts the proof
needs reach the table in play (``bench/generated.py``, docs/generated.md).
"""

from __future__ import annotations

from jubensha.agents.extractive import ExtractiveAgent
from jubensha.engine import (
    ActStarted,
    ClueRevealed,
    Event,
    Investigate,
    Questions,
    SeatContext,
    Speak,
    Spoke,
    TakeTurn,
)
from jubensha.scripts.proof.notebook import Notebook

CERTAIN = 100.0
"""The suspicion score of the one murderer the facts leave (above any evidence score)."""


class SolverAgent(ExtractiveAgent):
    architecture = "solver"
    uses_model = False

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.notebook = Notebook(self.lang, sheet.seat_names, [v.name for v in sheet.victims])
        self.untold: list[str] = []
        self.notebook.read(sheet.background)
        self.know([entry.text for entry in sheet.me.timeline])
        first = sheet.me.act_sheet(1)
        if first is not None:
            self.know([first.text])

    def know(self, texts: list[str], tell: bool = True) -> None:
        """Learn texts of its own (true for itself); an innocent seat will tell them."""
        for text in texts:
            if self.notebook.read(text, self.name) and tell and not self.seat.sheet.is_murderer:
                self.untold.append(self.voice(text))

    async def observe(self, event: Event) -> None:
        await super().observe(event)
        if isinstance(event, ClueRevealed):
            if event.audience == "public":
                self.notebook.read(event.text)
            else:
                self.know([event.text])
        elif isinstance(event, ActStarted):
            if event.public_text:
                self.notebook.read(event.public_text)
            if event.sheet is not None:
                self.know([event.sheet.text])
        elif isinstance(event, Spoke) and event.speaker != self.name:
            self.notebook.read(event.text, event.speaker)

    # -- what it concludes ---------------------------------------------------------------------
    def solved(self) -> list[str]:
        """The murderers of the one answer the facts leave, where this seat is innocent."""
        if self.seat.sheet.is_murderer:
            return []
        me = self.notebook.persons[self.name]
        found = {answer.murderers for answer in self.notebook.answers() if me not in answer.murderers}
        if len(found) != 1:
            return []
        names = list(self.notebook.persons)
        return [names[m] for m in found.pop()]

    def suspicion(self, candidates: list[str], victim: str | None) -> list[tuple[str, float]]:
        ranked = super().suspicion(candidates, victim)
        solved = [name for name in self.solved() if name in candidates]
        if not solved:
            return ranked
        return [(name, CERTAIN) for name in solved] + [r for r in ranked if r[0] not in solved]

    # -- what it says --------------------------------------------------------------------------
    def tell(self) -> str:
        told, self.untold = self.untold, []
        return (" " if self.lang == "en" else "").join(told)

    def speak(self, decision: Speak) -> str:
        return _joined(self.tell(), super().speak(decision), self.lang)

    def ask(self, candidates: list[str], count: int, victim: str | None) -> Questions:
        asked = super().ask(candidates, count, victim)
        told = self.tell()
        if told and asked.questions:
            asked.questions[0] = _joined(told, asked.questions[0], self.lang)
        return asked

    def turn(self, decision: TakeTurn) -> Questions | Investigate:
        """Search while a place is left to search (every clue the proof may need), telling
        what it has not yet told; then ask."""
        if decision.locations and not self.seat.sheet.is_murderer:
            return Investigate(location=decision.locations[0], statement=self.tell())
        return super().turn(decision)


def _joined(first: str, second: str, lang: str) -> str:
    return (" " if lang == "en" else "").join(part for part in (first, second) if part)

