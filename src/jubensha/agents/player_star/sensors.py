"""Internal.

Sensors as data: what PLAYER* asks itself about each suspect (appendix C.5).

A sensor is a question, its fixed choices and the phases that read it (questioning,
refinement). The defaults live in ``prompts/player_star/sensors.yaml``; a user replaces
them with a file of the same shape (``player:sensors=my_sensors.yaml``). A reading is a
structured reply whose ``answer`` is an enum of the sensor's choices, shown in the game's
language, plus a short reason.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from jubensha.llm import choice_schema
from jubensha.prompts import PROMPTS_DIR
from jubensha.safeload import DocumentError, one_line, read_document
from jubensha.scripts.model import Language

DEFAULT_SENSORS = PROMPTS_DIR / "player_star" / "sensors.yaml"
Phase = Literal["questioning", "refinement"]


class SensorChoice(BaseModel):
    """One answer a sensor accepts. ``value`` is what the run log records; ``text`` shows
    it in other languages; ``score`` (0..1) is how much this reading raises suspicion."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(min_length=1)
    text: dict[Language, str] = Field(default_factory=dict)
    score: float = Field(0.0, ge=0, le=1)

    def shown(self, lang: str) -> str:
        return self.text.get(lang, self.value)  # type: ignore[call-overload]


class Sensor(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description=(
        "Tags calls sensor.<name>; its answer's key in a combined reading (tag sensors)."))
    label: dict[Language, str] = Field(description="How summaries name the reading.")
    question: dict[Language, str] = Field(
        description="Jinja2 text with {{ character }} and {{ victim }}.")
    choices: list[SensorChoice] = Field(min_length=2)
    questioning: bool = True
    refinement: bool = True
    weight: float = Field(1.0, ge=0, description="Weight in the suspicion score.")

    @model_validator(mode="after")
    def _check(self) -> Sensor:
        for lang, text in self.question.items():
            try:
                _template(text)
            except jinja2.TemplateSyntaxError as exc:
                raise ValueError(f"question.{lang}: {exc.message}") from None
        for lang in ("en", "zh"):
            shown = [choice.shown(lang) for choice in self.choices]
            if len(set(shown)) != len(shown):
                raise ValueError(f"choices shown in {lang!r} repeat: {shown}")
        return self

    def used_in(self, phase: Phase) -> bool:
        return self.questioning if phase == "questioning" else self.refinement

    def shown_choices(self, lang: str) -> list[str]:
        return [choice.shown(lang) for choice in self.choices]

    def choice(self, shown: str, lang: str) -> SensorChoice:
        return next(c for c in self.choices if c.shown(lang) == shown)

    def reading_schema(self, lang: str) -> type[BaseModel]:
        return _reading_schema(self.name, tuple(self.shown_choices(lang)))

    def ask(self, lang: str, character: str, victim: str) -> str:
        """The sensor's question about ``character`` in ``lang``."""
        if lang not in self.question:
            raise ValueError(f"sensor {self.name!r} has no {lang!r} question")
        return _template(self.question[lang]).render(character=character, victim=victim)


class SensorReading(BaseModel):
    """What one sensor said about one suspect, and a digest of what it was shown."""

    sensor: str
    value: str
    shown: str
    reason: str = ""
    score: float
    context: str = Field(description="Digest of the retrieved script and dialogue.")


_SENSOR_LIST = TypeAdapter(list[Sensor])


def check_sensors(sensors: list[Sensor]) -> list[Sensor]:
    """Distinct names and at least one sensor per phase, else a ValueError saying so."""
    names = [sensor.name for sensor in sensors]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"sensor names repeat: {', '.join(repeated)}")
    for phase in ("questioning", "refinement"):
        if not any(sensor.used_in(phase) for sensor in sensors):
            raise ValueError(f"no sensor is used for {phase}")
    return sensors


def parse_sensors(data: Any, source: str) -> list[Sensor]:
    """Sensors from plain data; every problem names ``source``, the item and the field."""
    try:
        return check_sensors(_SENSOR_LIST.validate_python(data))
    except ValidationError as exc:
        problems = "; ".join(f"{one_line(_where(err['loc']), 100)}: {err['msg']}"
                             for err in exc.errors())
        raise ValueError(f"sensors {source}: {one_line(problems, 600)}") from None
    except ValueError as exc:
        raise ValueError(f"sensors {source}: {one_line(str(exc), 600)}") from None


def load_sensors(path: str | Path) -> list[Sensor]:
    """Read a sensors YAML (or JSON) file: a list of sensors."""
    file = Path(path)
    try:
        data = read_document(file)
    except DocumentError as exc:
        raise ValueError(f"sensors {file}: {exc}") from None
    return parse_sensors(data, str(file))


def default_sensors() -> list[Sensor]:
    """The paper's four sensors: emotion, motivation, suspicion, information value."""
    return [sensor.model_copy(deep=True) for sensor in _defaults()]


@lru_cache(maxsize=1)
def _defaults() -> tuple[Sensor, ...]:
    return tuple(load_sensors(DEFAULT_SENSORS))


@lru_cache(maxsize=256)
def _reading_schema(name: str, choices: tuple[str, ...]) -> type[BaseModel]:
    """``{"answer": <one of the choices>, "reason": ...}``; built once per sensor."""
    return choice_schema(choices, field_name="answer", name=f"Sensor_{name}")


@lru_cache(maxsize=256)
def _template(text: str) -> jinja2.Template:
    """User-supplied question text, rendered in a sandbox with undefined names as errors."""
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
    return env.from_string(text)


def _where(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
