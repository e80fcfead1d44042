"""Internal.

How an architecture calls its seat's model. A ``Caller`` holds what every request of one
seat carries (the seat's name and sampling seed, the architecture's temperature, token
limits and tries); each call adds its ``purpose``, the step it is (``vote``,
``sr.relevance``...), so the run log shows what each step did and cost. A structured reply
is a validated object after at most ``attempts`` calls with a correction between them
(``llm.generate_object``); model text is never evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self, TypeVar

from pydantic import BaseModel

from jubensha.agents.toolkit.text import clean_speech, whole_sentences
from jubensha.engine import Agent, SeatContext
from jubensha.llm import (
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    Request,
    Response,
    Structured,
    TextPart,
    generate_object,
)

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Caller:
    """One seat's model calls with an architecture's settings."""

    model: Model
    seat: str | None
    lang: str
    seed: int | None = None
    temperature: float | None = None
    attempts: int = 2
    """Calls for one structured reply."""
    text_tokens: int | None = None
    """Token limit of a free-text reply unless a call names one."""
    object_tokens: int | None = None
    """Token limit of a structured reply unless a call names one."""

    @classmethod
    def for_seat(cls, seat: SeatContext, *, temperature: float | None = None,
                 attempts: int = 2, text_tokens: int | None = None,
                 object_tokens: int | None = None) -> Self:
        """The caller of ``seat``'s model; a seat without one fails the decision asking."""
        if seat.model is None:
            raise ModelError(f"seat {seat.sheet.me.name!r} has no model")
        return cls(seat.model, seat.sheet.me.name, seat.sheet.language, seat.seed,
                   temperature, attempts, text_tokens, object_tokens)

    def request(self, purpose: str, messages: list[Message], max_tokens: int | None,
                sample: int = 0) -> Request:
        """``sample`` tells regenerated replies to the same prompt apart (caches key on it)."""
        config = GenerateConfig(temperature=self.temperature, max_tokens=max_tokens,
                                seed=self.seed)
        return Request(messages=messages, config=config, purpose=purpose, seat=self.seat,
                       sample=sample)

    async def reply(self, purpose: str, messages: list[Message], *,
                    max_tokens: int | None = None, sample: int = 0) -> Response:
        """The model's free-text response (its text and why it stopped)."""
        limit = self.text_tokens if max_tokens is None else max_tokens
        return await self.model.generate(self.request(purpose, messages, limit, sample))

    async def text(self, purpose: str, messages: list[Message], *,
                   max_tokens: int | None = None, sample: int = 0) -> str:
        """The model's free text, as it came."""
        response = await self.reply(purpose, messages, max_tokens=max_tokens, sample=sample)
        return response.text

    async def structured_reply(self, purpose: str, messages: list[Message], schema: type[T],
                               *, max_tokens: int | None = None, sample: int = 0
                               ) -> Structured[T]:
        """A validated ``schema`` object with every raw reply it took;
        ``StructuredOutputError`` after ``attempts`` unusable ones."""
        limit = self.object_tokens if max_tokens is None else max_tokens
        return await generate_object(self.model, self.request(purpose, messages, limit, sample),
                                     schema, attempts=self.attempts, lang=self.lang)

    async def structured(self, purpose: str, messages: list[Message], schema: type[T], *,
                         max_tokens: int | None = None, sample: int = 0) -> T:
        """A validated ``schema`` object (see ``structured_reply``)."""
        result = await self.structured_reply(purpose, messages, schema,
                                             max_tokens=max_tokens, sample=sample)
        return result.value


def chat(user: str | list[TextPart | ImagePart], system: str = "") -> list[Message]:
    """A prompt: the ``system`` part (left out when empty), then the ``user`` part."""
    asked = Message(role="user", content=user)
    return [Message(role="system", content=system), asked] if system else [asked]


def nonempty(text: str, purpose: str) -> str:
    """``text``; an empty reply is the model failing the decision (the table falls back)."""
    if not text:
        raise ModelError(f"empty {purpose} from the model")
    return text


async def speak(agent: Agent, caller: Caller, purpose: str, messages: list[Message], *,
                names: Sequence[str], limit: int, max_tokens: int | None = None) -> str:
    """One line of ``agent``'s speech (maybe empty), streamed to the table's live views as
    it is written: a reply cut off by its token limit loses its unfinished sentence, then
    it is cleaned of speaker prefixes and other seats' lines and bounded (``clean_speech``
    with ``names`` and ``limit``)."""
    def clean(raw: str) -> str:
        return clean_speech(raw, agent.name, names, limit)

    with agent.speaking(clean):
        response = await caller.reply(purpose, messages, max_tokens=max_tokens)
    text = response.text
    if response.finish_reason == "length":
        text = whole_sentences(text)
    return clean(text)
