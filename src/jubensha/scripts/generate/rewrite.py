"""``scripts generate --model``: each character's story rewritten as livelier prose by a
model, kept only when its facts survived. The reader of the proof reads the old story and
the new one: every timeline sentence must be there word for word, and the new story must
state exactly the facts the old one did (no time, place or alibi lost, changed or added);
otherwise the template's story stays. The script is validated again, proof included."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from jubensha.llm.base import GenerateConfig, Message, Model, ModelError, Request
from jubensha.prompts import render
from jubensha.scripts.model import Character, Script
from jubensha.scripts.proof.phrases import Reader
from jubensha.scripts.validation import validate

GROWTH = 3
"""A rewritten story may be at most this many times as long as the template's."""


@dataclass
class Tally:
    """Stories rewritten and kept, and those whose facts did not survive."""

    kept: int = 0
    refused: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


class Rewriter:
    def __init__(self, model: Model, max_tokens: int = 1500):
        self.model = model
        self.max_tokens = max_tokens
        self.tally = Tally()

    async def script(self, script: Script) -> Script:
        """``script`` with every story the model rewrote and the checks kept."""
        reader = Reader(script.language, script.names, [v.name for v in script.victims])
        characters = [await self.character(character, reader, script.language)
                      for character in script.characters]
        rewritten = script.model_copy(update={"characters": characters})
        if validate(rewritten).ok:
            return rewritten
        self.tally.reasons["the script no longer validates"] += 1
        return script

    async def character(self, character: Character, reader: Reader, lang: str) -> Character:
        keep = [entry.text for entry in character.timeline]
        prompt = render("generate", "rewrite", lang, character=character.name, keep=keep,
                        story=character.story, limit=len(character.story.split()) * 2)
        try:
            response = await self.model.generate(Request(
                messages=[Message(role="user", content=prompt)], purpose="rewrite",
                config=GenerateConfig(max_tokens=self.max_tokens, temperature=0.7)))
        except ModelError as exc:
            self.tally.refused += 1
            self.tally.reasons[f"the model failed ({type(exc).__name__})"] += 1
            return character
        story = response.text.strip()
        problem = survived(reader, character, story)
        if problem:
            self.tally.refused += 1
            self.tally.reasons[problem] += 1
            return character
        self.tally.kept += 1
        return character.model_copy(update={"story": story + "\n"})


def survived(reader: Reader, character: Character, story: str) -> str:
    """Why the rewritten ``story`` cannot replace the character's ("" when it can)."""
    if not story or len(story) > GROWTH * len(character.story):
        return "empty or too long"
    missing = [e.text for e in character.timeline if e.text not in story]
    if missing:
        return "a timeline sentence is missing"
    if Counter(reader.read(story, character.name)) != Counter(
            reader.read(character.story, character.name)):
        return "the facts it states changed"
    return ""
