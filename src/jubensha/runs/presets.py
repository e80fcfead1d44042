"""The papers' settings in one flag: ``--preset paper:thinkthrice|player|mirage|whodunit``.

A preset sets the procedure, the agents' budgets and settings, and the post-game metrics
to the values a paper states (``data/paper_presets.yaml``, each value with where the paper
states it; docs/presets.md is that table). An agent's settings reach it as architecture
options: ``werewolf`` becomes ``werewolf:script_tokens=4000+dialogue_tokens=4000+...``,
so that meta.json's seats show exactly what played. A value the user gave (an option of
the architecture, ``--procedure``, a spec's ``procedures`` or ``metrics``) wins and is
recorded as overridden.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, Field

from jubensha.agents.options import split_options
from jubensha.agents.registry import split_spec


class Value(BaseModel):
    value: Any
    source: str = Field(description="Where the paper states it.")


class PaperPreset(BaseModel):
    name: str
    paper: str
    agent: Value = Field(description="The architecture the paper's method plays: every "
                         "seat's unless the architectures or seats are given.")
    judge: Value = Field(description="required: the paper scored some of its metrics with "
                         "a model judge (those ``metric(paper_judge=...)`` marks), so a "
                         "batch evaluating one needs `judge`; none: it used no judge.")
    procedure: Value
    metrics: Value
    settings: dict[str, dict[str, Value]] = Field(
        default_factory=dict, description="Architecture → option → its value.")

    def architecture(self, spec: str) -> tuple[str, dict[str, str]]:
        """``spec`` with the preset's options of its architecture, and the options the
        spec gave itself that win over the preset's (overridden)."""
        name, option = split_spec(spec)
        values = self.settings.get(name)
        if not values:
            return spec, {}
        words, pairs = split_options(option)
        overridden = {f"{name}.{key}": pairs[key] for key in values if key in pairs}
        merged = {**{key: str(v.value) for key, v in values.items()}, **pairs}
        return f"{name}:{'+'.join([*words, *(f'{k}={v}' for k, v in merged.items())])}", (
            overridden)

    def rows(self) -> list[tuple[str, str, str]]:
        """(setting, value, where the paper states it): the docs' table."""
        found = [("agent", str(self.agent.value), self.agent.source),
                 ("judge", str(self.judge.value), self.judge.source),
                 ("procedure", str(self.procedure.value), self.procedure.source),
                 ("metrics", ", ".join(self.metrics.value), self.metrics.source)]
        found += [(f"{arch}: {key}", str(value.value), value.source)
                  for arch, values in self.settings.items() for key, value in values.items()]
        return found


class PresetError(ValueError):
    """An unknown preset; the message lists the known ones."""


@cache
def paper_presets() -> dict[str, PaperPreset]:
    text = (resources.files("jubensha.runs") / "data" / "paper_presets.yaml").read_text(
        encoding="utf-8")
    return {name: PaperPreset(name=name, **data) for name, data in yaml.safe_load(text).items()}


def find_preset(name: str) -> PaperPreset:
    found = paper_presets().get(name.strip())
    if found is None:
        raise PresetError(f"unknown preset {name!r} (presets: {', '.join(paper_presets())})")
    return found


class Applied(BaseModel):
    """What a preset did to one game: meta.json's ``options.preset``."""

    name: str
    overridden: dict[str, Any] = Field(default_factory=dict, description=(
        "Settings given by hand that won over the preset's: name → the value used."))


def seat_specs(preset: PaperPreset, specs: dict[str, str]) -> tuple[dict[str, str],
                                                                    dict[str, str]]:
    """Every seat's architecture with the preset's options, and what the seats overrode."""
    overridden: dict[str, str] = {}
    applied = {}
    for seat, spec in specs.items():
        applied[seat], own = preset.architecture(spec)
        overridden |= own
    return applied, overridden


def preset_overrides(preset: PaperPreset, procedure: str | None,
              metrics: list[str] | None) -> dict[str, Any]:
    """The procedure and metrics given by hand that differ from the preset's."""
    found: dict[str, Any] = {}
    if procedure is not None and procedure != preset.procedure.value:
        found["procedure"] = procedure
    if metrics is not None and list(metrics) != list(preset.metrics.value):
        found["metrics"] = list(metrics)
    return found
