"""Internal.

How much of all players' scripts a game's conversation covers (ThinkThrice section 6.3).

Two documents are compared: everything the seats said (the chat history) and every
character's private script concatenated. Three measures: the cosine of the chunk-averaged
embeddings, the TF-IDF cosine (document frequencies from the two documents) and the
Jaccard similarity of their sets of word trigrams.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from jubensha.engine.events import Spoke
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.text import WORD_TOKENS, embedding_cosine, ngram_jaccard, tfidf_cosine
from jubensha.llm.base import Embedder
from jubensha.memory.text import TokenizerOptions, count_tokens
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Character, Script


class SimilarityOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int = 3
    tokens: TokenizerOptions = WORD_TOKENS
    chunk_tokens: int = 400
    """Chunk size for the embedder (ThinkThrice split only beyond the model's input)."""


class Similarity(MetricResult):
    settings: ClassVar[tuple[str, ...]] = ("n", "script_tokens")
    """The n-gram size and the size of what the chat is compared with, not results."""

    metric: str = "similarity"
    embedding: float | None
    tfidf: float
    ngram: float
    n: int
    chat_tokens: int
    script_tokens: int

    def tables(self) -> list[ResultTable]:
        return [ResultTable(
            title="Chat history vs all players' scripts",
            columns=["embedding cosine", "TF-IDF cosine", f"{self.n}-gram Jaccard",
                     "chat tokens", "script tokens"],
            rows=[[number(self.embedding), number(self.tfidf), number(self.ngram),
                   str(self.chat_tokens), str(self.script_tokens)]],
            notes=[] if self.embedding is not None else ["embedding: no embedder given"])]


def character_text(character: Character) -> str:
    """A character's private script: story, act texts and timeline."""
    parts = [character.story, *(a.text for a in character.acts if a.text != character.story),
             *(f"{t.time} {t.text}".strip() for t in character.timeline)]
    return "\n".join(p for p in parts if p)


def scripts_text(script: Script) -> str:
    return "\n\n".join(character_text(c) for c in script.characters)


def chat_text(run: RunLog) -> str:
    """Everything the seats said, in order (host lines and clue cards are not chat)."""
    return "\n".join(e.text for e in run.events if isinstance(e, Spoke) and e.text)


async def similarity(chat: str, scripts: str, embedder: Embedder | None = None,
                     options: SimilarityOptions | None = None) -> Similarity:
    """The three measures between a chat history and the scripts text."""
    options = options or SimilarityOptions()
    embedded = None
    if embedder is not None and chat.strip() and scripts.strip():
        embedded = await embedding_cosine(chat, scripts, embedder, options.chunk_tokens)
    return Similarity(
        embedding=embedded, tfidf=tfidf_cosine(chat, scripts, options.tokens),
        ngram=ngram_jaccard(chat, scripts, options.n, options.tokens), n=options.n,
        chat_tokens=count_tokens(chat), script_tokens=count_tokens(scripts))


@metric("similarity", "Chat history vs all players' scripts: embedding cosine, TF-IDF "
        "cosine, trigram Jaccard", "ThinkThrice, section 6.3 (table 7)", optional=("embedder",),
        options=SimilarityOptions)
async def similarity_metric(context: MetricContext) -> Similarity:
    options = SimilarityOptions.model_validate(context.options.get("similarity", {}))
    result = await similarity(chat_text(context.run), scripts_text(context.script),
                              context.embedder, options)
    return result.model_copy(update={"run": str(context.run.path)})
