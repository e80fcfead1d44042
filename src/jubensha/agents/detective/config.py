"""Internal.

The detective's settings: how long its speeches are, how it samples, and the weights of
its evidence ledger (``docs/agents/detective.md`` says how each was chosen).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.detective.case import Weights
from jubensha.agents.options import parse_options


class DetectiveConfig(BaseModel):
    """Set per seat with ``detective:key=value+key=value``."""

    model_config = ConfigDict(extra="forbid")

    notes: int = Field(3, ge=1, le=8, description="Facts of its own sheet a speech is "
                                                  "written from.")
    sentences: int = Field(3, ge=1, le=6, description="Asked length of a speech.")
    max_tokens: int = Field(96, ge=16, description="Token limit of a speech (a longer one "
                                                   "ends at its last whole sentence).")
    question_tokens: int = Field(48, ge=16, description="Token limit of a question.")
    reason_tokens: int = Field(48, ge=16, description="Token limit of a vote's reason.")
    speech_chars: int = Field(600, ge=50, description="A longer speech is cut.")
    temperature: float = Field(0.6, ge=0)
    phrase: bool = Field(True, description="False: say the chosen facts as they are, with "
                         "no model call to phrase them (a dry run of the same plans). The "
                         "readings still ask the model unless the votes are the ledger's, "
                         "and the speech guard, where it is on, asks it to rewrite a speech "
                         "that fails; ``ledger:phrase=false`` calls no model, guarded or "
                         "not.")
    votes: Literal["readings", "ledger"] = Field(
        "readings", description="What decides suspicion: the model's readings of each text, "
        "added up (``readings``), or the model-free evidence ledger (``ledger``, the "
        "``ledger`` agent).")
    read_limit: int = Field(40, ge=0, description="Readings: most narrow questions a seat "
                                                  "asks in a game (later texts go unread).")
    read_motive: float = Field(1.0, description="Readings: a motive shown.")
    read_weapon: float = Field(1.0, description="Readings: the weapon within reach.")
    read_scene: float = Field(1.5, description="Readings: at the scene within the window "
                                               "of the death.")
    read_trace: float = Field(0.5, description="Readings: at the scene with no time (a "
                                               "belonging found there).")
    read_alibi: float = Field(2.0, description="Readings: elsewhere over the whole window, "
                                               "told by someone else (scaled by the share "
                                               "covered).")
    read_claim: float = Field(0.5, ge=0, le=1, description="Readings: share of ``read_alibi`` "
                              "for an alibi a suspect gives itself.")
    read_own: float = Field(0.0, ge=0, le=1, description="Readings: share of a motive, "
                            "the weapon or the scene that counts when a suspect says it of "
                            "itself (a murderer hides its own, so only innocents say them).")
    clue_name: float = Field(1.0, description="Ledger: a clue naming a seat as an owner "
                                              "(X's, X的) or found in its place.")
    mention: float = Field(0.5, ge=0, le=1, description="Ledger: share of ``clue_name`` for "
                           "a clue that names a seat otherwise.")
    clue_link: float = Field(0.25, description="Ledger: a clue's closeness to a seat's "
                                              "description, shared among the seats.")
    own: float = Field(0.5, description="Ledger: own sheet naming a seat, by relevance.")
    heard: float = Field(0.5, description="Ledger: another seat's words naming a seat, by "
                                          "relevance.")
    told: float = Field(0.0, description="Ledger: a seat's own words, by relevance.")
    accused: float = Field(0.5, description="Ledger: each public accusation of a seat.")
    alibi: float = Field(-2.0, description="Ledger: own sheet putting a seat in its "
                                           "company near the time of death.")
    threshold: float = Field(0.8, ge=0, lt=1, description="Relevance: the similarity to the "
                             "crime's evidence below which a text counts for nothing.")

    def weights(self) -> Weights:
        return Weights(motive=self.read_motive, weapon=self.read_weapon,
                       scene=self.read_scene, trace=self.read_trace,
                       alibi=self.read_alibi, claim=self.read_claim, own=self.read_own)

    @classmethod
    def parse(cls, option: str) -> DetectiveConfig:
        """``"notes=2+temperature=0.3"`` → a config; errors name the option."""
        return parse_options(cls, option, "detective")
