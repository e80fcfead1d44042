"""Internal.

ThinkThrice settings and the ablation names of the paper's tables 6 and 7.

An option string is ``+``-separated. Module tokens say which modules are on: ``none``,
``mr``, ``sr`` and ``sv<N>`` (Self-Verification with at most N attempts); without any
token the full agent ``mr+sr+sv3`` plays. ``key=value`` parts override any other field:
``thinkthrice:mr+sr+sv3+k=3+retrieval=hybrid``. The paper's rows are ``ABLATIONS``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.options import split_options, validate_options
from jubensha.memory.store import RetrievalMode

ABLATIONS = ("none", "mr", "mr+sr", "mr+sr+sv1", "mr+sr+sv3")
"""The rows of the paper's ablation (No MR, MR, MR+SR, MR+SR+SV(N=1), MR+SR+SV(N=3))."""
_SV_TOKEN = re.compile(r"sv(\d+)")

LengthUnit = Literal["auto", "words", "chars"]
Conceal = Literal["murderer", "everyone", "nobody"]


class Threshold(BaseModel):
    """Appendix G's authenticity threshold: an answer passes when all three are met."""

    accuracy: float
    facts: int
    length: int


class ThinkThriceConfig(BaseModel):
    """Modules, retrieval, Self-Verification thresholds, budgets and sampling."""

    model_config = ConfigDict(extra="forbid")

    memory: bool = Field(True, description="MR: remember observations, recall the top k.")
    refine: bool = Field(True, description="SR: add missing timeline facts to answers.")
    verify_attempts: int = Field(3, ge=0, description="SV: at most N answers; 0 = no SV.")
    k: int = Field(5, ge=1, description="Memories recalled per prompt (paper: top 5).")
    retrieval: RetrievalMode = Field(
        "lexical", description="lexical (BM25, jieba for Chinese), dense (embeddings, as "
        "the paper's OpenAI + Faiss) or hybrid (rank fusion of both).")
    host_accuracy: float = Field(0.7, ge=0, le=1)
    host_facts: int = Field(4, ge=0)
    host_length: int = Field(350, ge=0)
    player_accuracy: float = Field(0.6, ge=0, le=1)
    player_facts: int = Field(1, ge=0)
    player_length: int = Field(30, ge=0)
    length_unit: LengthUnit = Field(
        "auto", description="How an answer's length is counted: words, Chinese characters "
        "(plus words of other scripts), or auto (characters for Chinese games).")
    length_per_point: float = Field(200, gt=0, description="Score adds length / this.")
    conceal: Conceal = Field(
        "murderer", description="Whose secrets SR never volunteers and SV never rewards.")
    conceal_overlap: int = Field(
        2, ge=1, description="Shared content words that tie a timeline fact to a secret.")
    max_subquestions: int = Field(5, ge=1)
    max_claims: int = Field(20, ge=1)
    temperature: float = Field(0.8, ge=0, description="The paper's setting for all models.")
    answer_tokens: int = Field(800, ge=16, description="Token limit of an answer.")
    judge_tokens: int = Field(800, ge=16, description="Token limit of a structured call.")
    attempts: int = Field(2, ge=1, description="Tries for each structured reply.")
    story_chars: int = Field(6000, ge=200, description="Budget for the private script.")
    memory_chars: int = Field(600, ge=50, description="Budget for each recalled memory.")
    speech_chars: int = Field(4000, ge=50, description="A longer speech is cut.")

    @property
    def name(self) -> str:
        """The module tokens of this configuration, e.g. ``mr+sr+sv3`` or ``none``."""
        tokens = [token for token, on in (("mr", self.memory), ("sr", self.refine)) if on]
        if self.verify_attempts:
            tokens.append(f"sv{self.verify_attempts}")
        return "+".join(tokens) or "none"

    def threshold(self, from_host: bool) -> Threshold:
        if from_host:
            return Threshold(accuracy=self.host_accuracy, facts=self.host_facts,
                             length=self.host_length)
        return Threshold(accuracy=self.player_accuracy, facts=self.player_facts,
                         length=self.player_length)

    @classmethod
    def parse(cls, option: str) -> ThinkThriceConfig:
        """``"mr+sr+k=3"`` → a config; errors name the part that is wrong."""
        words, pairs = split_options(option)
        data = {**modules([word.lower() for word in words]), **pairs}
        return validate_options(cls, data, option, "thinkthrice")


def modules(tokens: list[str]) -> dict[str, object]:
    """The module fields that ``tokens`` switch on (the others off); {} for no tokens."""
    if not tokens:
        return {}
    if "none" in tokens and len(tokens) > 1:
        raise ValueError("thinkthrice option 'none' cannot be combined with modules")
    fields: dict[str, object] = {"memory": False, "refine": False, "verify_attempts": 0}
    for token in tokens:
        if token == "mr":
            fields["memory"] = True
        elif token == "sr":
            fields["refine"] = True
        elif (match := _SV_TOKEN.fullmatch(token)) and int(match.group(1)) >= 1:
            fields["verify_attempts"] = int(match.group(1))
        elif token != "none":
            raise ValueError(f"thinkthrice option {token!r}: not a module (use none, mr, sr, "
                             f"sv<N> with N >= 1, or key=value; the paper's rows are "
                             f"{', '.join(ABLATIONS)})")
    return fields
