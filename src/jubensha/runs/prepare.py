"""What `jubensha play` was asked, turned into a game: ``prepare_game`` reads the script and
the procedure, seats the players and checks every option, and either returns the game to
play or raises one ``PlayError`` saying what is wrong. It writes nothing, builds no model client
and prints nothing, so the command is a thin layer that prints around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.human import HumanAgent
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.agent import Agent
from jubensha.engine.game import DEGRADED_SHARE
from jubensha.engine.procedure import ProcedureError, find_procedure
from jubensha.llm.catalog import default_play_model
from jubensha.llm.health import DEFAULT_MAX_CONSECUTIVE
from jubensha.llm.registry import ModelOptions
from jubensha.runlog.folder import EVENTS, META
from jubensha.runs.attempt import ERROR_FILE
from jubensha.runs.play import (
    GameHealth,
    PlayConfig,
    PlayError,
    SeatPlan,
    TableChoices,
    continuation,
    default_out,
    table_config,
)
from jubensha.runs.presets import PresetError, find_preset, preset_overrides
from jubensha.scripts.bundled import DEFAULT_SCRIPT, find_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Language

DEFAULT_AGENT = "detective"
"""What every seat plays when nothing says otherwise: the agent that plays best on the
embedded local model within the demo game's time (docs/models.md has the table)."""
RUN_MARKERS = (META, EVENTS, ERROR_FILE)
"""Files that show a folder holds a run (``--overwrite`` empties only such a folder)."""


class PlayOptions(BaseModel):
    """The options of `jubensha play`, as typed (see its help for each)."""

    model_config = ConfigDict(extra="forbid")

    script: str | None = None
    procedure: str | None = None
    preset: str | None = None
    agents: str | None = None
    """None: ``DEFAULT_AGENT``, or the preset paper's agent."""
    model: str | None = None
    seats: list[str] = Field(default_factory=list)
    murderer_agents: str | None = None
    murderer_model: str | None = None
    guard: bool | None = None
    rounds: int | None = None
    questions: int | None = None
    seed: int = 0
    out: Path | None = None
    overwrite: bool = False
    lang: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    timeout: float | None = None
    retries: int | None = None
    embedder: str = "local"
    record: Path | None = None
    verbose: bool = False
    hot_seat: bool = False
    max_failures: int = DEFAULT_MAX_CONSECUTIVE
    degraded_share: float = DEGRADED_SHARE
    resume: Path | None = None


@dataclass
class PreparedGame:
    """A game ready to play: its configuration, its run folder, the seated agents."""

    config: PlayConfig
    out: Path
    agents: dict[str, Agent]
    inputs: list[Path]
    """The files the game reads or appends to, which ``--overwrite`` must never delete."""

    @property
    def humans(self) -> list[str]:
        return [name for name, agent in self.agents.items() if isinstance(agent, HumanAgent)]

    @property
    def resumed(self) -> bool:
        return self.config.resume is not None


def prepare_game(options: PlayOptions) -> PreparedGame:
    """The game ``options`` ask for; ``PlayError`` (its message for the terminal) when any
    input is wrong."""
    try:
        config = _resumed(options) if options.resume is not None else _new_game(options)
        agents = {name: make_agent(plan.agent_spec) for name, plan in config.plans.items()}
    except (ScriptError, ProcedureError, PresetError, AgentSpecError) as exc:
        raise PlayError(str(exc)) from None
    out = options.resume or options.out or default_out(config.script)
    game = PreparedGame(config=config, out=out, agents=agents,
                        inputs=play_inputs(options, config.plans))
    if game.humans and options.verbose:
        raise PlayError("--verbose shows log-only events (votes before the reveal, ratings, "
                        "failures) that a player at a human seat may not see")
    return game


def _new_game(options: PlayOptions) -> PlayConfig:
    paper = find_preset(options.preset) if options.preset else None
    script = find_script(options.script or DEFAULT_SCRIPT)
    named = options.procedure or (paper.procedure.value if paper else "demo")
    procedure = find_procedure(named).with_options(rounds=options.rounds,
                                                   questions=options.questions)
    procedure.check_acts(script)
    choices = TableChoices(
        agents=options.agents or (paper.agent.value if paper else DEFAULT_AGENT),
        model=options.model or default_play_model(),
        seats=tuple(options.seats),
        murderer_agents=options.murderer_agents, murderer_model=options.murderer_model,
        guard=options.guard, hot_seat=options.hot_seat, preset=options.preset,
        preset_overridden=preset_overrides(paper, options.procedure, None) if paper else {},
        seed=options.seed, language=_language(options.lang, script.language),
        embedder=options.embedder, script_source=options.script or DEFAULT_SCRIPT)
    return _from_command_line(table_config(script, procedure, choices), options)


def _resumed(options: PlayOptions) -> PlayConfig:
    """The interrupted game of ``--resume``: the run's own script, procedure, seats, seed,
    language and embedder, with this command's model options."""
    assert options.resume is not None
    if options.script is not None:
        raise PlayError("--resume continues the run's own game; give no script")
    return _from_command_line(continuation(options.resume, people=None), options)  # runs.people


def _from_command_line(config: PlayConfig, options: PlayOptions) -> PlayConfig:
    """``config`` with what a new game and a resumed one both take from the command line:
    the model options, the cassette and when the game is no result."""
    given = {"base_url": options.base_url, "temperature": options.temperature,
             "timeout_s": options.timeout, "max_retries": options.retries}
    model_options = ModelOptions.model_validate(
        {key: value for key, value in given.items() if value is not None})
    health = GameHealth(max_consecutive_failures=options.max_failures,
                        degraded_share=options.degraded_share)
    return config.model_copy(update={"model_options": model_options, "health": health,
                                     "record": options.record})


def _language(lang: str | None, default: Language) -> Language:
    if lang is None:
        return default
    if lang not in ("en", "zh"):
        raise PlayError(f"--lang {lang!r}: use one of en, zh")
    return lang  # type: ignore[return-value]


def play_inputs(options: PlayOptions, plans: dict[str, SeatPlan]) -> list[Path]:
    """The files a game reads or appends to, which ``--overwrite`` must never delete."""
    script = options.script
    found = [Path(script)] if script and Path(script).exists() else []
    found += [options.record] if options.record else []
    found += [Path(plan.model.partition(":")[2]) for plan in plans.values()
              if plan.model.startswith("replay:")]
    return found
