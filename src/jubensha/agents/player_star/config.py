"""Internal.

PLAYER* settings: ``player:key=value+key=value``.

Defaults follow the paper and the authors' released code: 50-token script chunks and
4,000-token budgets for retrieved script and dialogue (appendix C.1), sensors on
(``--sensor 1``), the pruner on (``--constraint 1``), sampling temperature 0.9.
``sensors=PATH`` replaces the default sensors with a YAML file of the same shape.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from jubensha.agents.options import parse_options
from jubensha.agents.player_star.sensors import Sensor, check_sensors, default_sensors, load_sensors
from jubensha.memory.store import RetrievalMode

SummaryMode = Literal["template", "model"]
RefineTargets = Literal["others", "suspects"]
RefineCall = Literal["combined", "separate"]


class PlayerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sensing: bool = Field(True, description="Read the questioning sensors before asking.")
    prune: bool = Field(True, description="Narrow the suspect lists after every round but "
                                          "the last (action-space refinement).")
    regrow: bool = Field(True, description="The pruner may bring back seats it dropped.")
    refine_targets: RefineTargets = Field(
        "others", description="Whom the refinement sensors read: every other seat (the "
        "paper's f_approximate over all agents, the authors' released code) or only the "
        "current suspects (their earlier code).")
    refine_call: RefineCall = Field(
        "combined", description="combined: one call per seat asks every refinement sensor "
        "(tag `sensors`, the authors' `sensor_ask_once`); separate: one call per sensor "
        "(tags `sensor.<name>`, their earlier code).")
    summary: SummaryMode = Field(
        "template", description="template: readings listed as the authors' code does; "
        "model: one extra call (tag `summary`) condenses them.")
    script_tokens: int = Field(4000, ge=0, description="Retrieved own script per prompt.")
    dialogue_tokens: int = Field(4000, ge=0, description="Retrieved dialogue per prompt.")
    intro_tokens: int = Field(12000, ge=0, description="Own script for the introduction "
                                                        "(the authors' code: 12,000).")
    chunk_tokens: int = Field(50, ge=1, description="Script segment size (appendix C.1).")
    retrieval: RetrievalMode = Field(
        "lexical", description="lexical (BM25), dense (the seat's embedder, as the paper's "
        "ada-002 + Faiss) or hybrid.")
    background_tokens: int = Field(400, ge=0, description="Public background in the system "
                                                          "prompt.")
    repeat_discount: float = Field(
        1.0, ge=0, description="A target's score is divided by 1 + discount x questions "
        "already put to it (the paper's diminishing reward of asking the same seat).")
    temperature: float = Field(0.9, ge=0)
    speech_tokens: int = Field(400, ge=16, description="Token limit of a speech or answer.")
    speech_chars: int = Field(3000, ge=50, description="A longer speech is cut.")
    structured_tokens: int = Field(300, ge=16, description="Token limit of a JSON reply.")
    attempts: int = Field(2, ge=1, description="Tries for each structured reply.")
    sensors: list[Sensor] = Field(default_factory=default_sensors)

    @field_validator("sensors", mode="before")
    @classmethod
    def _sensors_file(cls, value: object) -> object:
        return load_sensors(value) if isinstance(value, str) else value

    @field_validator("sensors")
    @classmethod
    def _sensors_valid(cls, value: list[Sensor]) -> list[Sensor]:
        return check_sensors(value)

    @classmethod
    def parse(cls, option: str) -> PlayerConfig:
        """``"prune=false+script_tokens=2000"`` → a config; errors name the option."""
        return parse_options(cls, option, "player")
