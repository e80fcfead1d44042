"""Playing one game into a run folder: seats from specs, models bound to seats, the log.

A seat is given as ``NAME=ARCH@MODEL``, ``NAME=MODEL``, ``NAME=ARCH@`` or ``NAME=human``
(see ``parse_seat``); seats not given use the default architecture and model. Every problem
with the inputs is a ``PlayError`` with a message meant for the person at the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from jubensha.agents.human import hot_seat_spec, is_human
from jubensha.agents.registry import (
    GUARD,
    AgentSpecError,
    check_agent_spec,
    guarded,
    make_agent,
    split_spec,
)
from jubensha.engine.agent import Agent
from jubensha.engine.drafts import DraftHook
from jubensha.engine.events import Event
from jubensha.engine.game import DEGRADED_SHARE, Game, Seat
from jubensha.engine.procedure import Procedure, ProcedureError, parse_procedure
from jubensha.engine.table import AskHook, EventSink
from jubensha.llm.base import Embedder, Model, ModelError
from jubensha.llm.calls import CallLog, OnCall
from jubensha.llm.embeddings import EmbedderSpecError, parse_embedder_spec
from jubensha.llm.health import DEFAULT_MAX_CONSECUTIVE, Health
from jubensha.llm.registry import (
    ModelOptions,
    ModelSpecError,
    named_file,
    parse_model_spec,
    validate_model_spec,
)
from jubensha.llm.replay import RecordingModel
from jubensha.llm.wrappers import CachedModel, MemoryCache, deterministic
from jubensha.prompts import tracking
from jubensha.runlog.attempts import earlier_attempts
from jubensha.runlog.folder import (
    META,
    RESULT,
    RunError,
    RunFolder,
    RunMeta,
    RunResult,
    SeatInfo,
    read_run,
    versions,
)
from jubensha.runlog.provenance import completed, provenance
from jubensha.runlog.resume import Resume, ResumingModel
from jubensha.runlog.script import played_script
from jubensha.runs.presets import Applied, PaperPreset, PresetError, find_preset, seat_specs
from jubensha.runs.transcript import render_markdown
from jubensha.safeload import one_line
from jubensha.scripts.model import Language, Script
from jubensha.scripts.naming import names_meant

NO_MODEL = "none"
"""The model of a seat that plays without one (a person at the terminal)."""


class GameHealth(BaseModel):
    """When a game is no result: it stops at once when its model cannot be reached or a
    seat's calls keep failing, and it is ``degraded`` when nobody really played it (a vote
    that fell back for most seats, or too many decisions that fell back)."""

    max_consecutive_failures: int = Field(
        DEFAULT_MAX_CONSECUTIVE, ge=0,
        description="Failed model calls in a row of one seat that stop the game (0: never).")
    degraded_share: float = Field(
        DEGRADED_SHARE, ge=0, le=1,
        description="A game in which this share of its decisions or more fell back to "
                    "the table's defaults is degraded.")


class PlayError(Exception):
    """Bad input to a game (unknown seat, model or architecture); shown without traceback."""


class SeatPlan(BaseModel):
    """One seat's player: its architecture, its model and whether the speech guard checks
    what it says. The guard is a field of its own, so no builder can drop it by building
    an architecture string; the word ``guard`` among an architecture's options (how a
    person writes it, how meta.json records it) is taken out into the field."""

    name: str
    architecture: str
    model: str
    guard: bool = False

    @model_validator(mode="before")
    @classmethod
    def _guard_word(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("architecture"), str):
            has, bare = guarded(value["architecture"])
            if has:
                value = {**value, "architecture": bare, "guard": True}
        return value

    @property
    def agent_spec(self) -> str:
        """The architecture as ``make_agent`` and meta.json take it (the guard a word)."""
        if not self.guard:
            return self.architecture
        joint = "+" if ":" in self.architecture else ":"
        return f"{self.architecture}{joint}{GUARD}"


class PlayConfig(BaseModel):
    """One game, as every way of starting one gives it: the command line
    (``prepare_game``), a web table and a batch job build it, and ``play_game`` plays it."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    script: Script
    procedure: Procedure
    plans: dict[str, SeatPlan]
    seed: int = 0
    language: Language | None = Field(None, description="None: the script's.")
    model_options: ModelOptions | None = Field(
        None, description="None: the defaults of the process the game plays in (its "
        "environment gives the endpoint and key: a batch job carries no key).")
    embedder: str = Field("none", description="The seats' shared embedder "
                                              "(``llm.embeddings``).")
    record: Path | None = Field(None, description="A cassette every model call is appended "
                                "to (``--model replay:<file>`` plays it back).")
    script_source: str = Field("", description="Where the script came from, as meta.json "
                                               "records it.")
    health: GameHealth = Field(default_factory=GameHealth)
    resume: Resume | None = Field(None, description="An earlier attempt at this game whose "
                                  "logged calls are answered again before it goes on live.")
    preset: dict[str, Any] | None = Field(None, description="The paper preset applied "
                                          "(``runs.presets.Applied``), for meta.json.")

    @property
    def game_language(self) -> Language:
        return self.language or self.script.language


def resolve_seat_name(name: str, script: Script) -> str:
    """A character's main name from its name or alias, ignoring case, or from a first or
    last name alone where it fits one character (``scripts.naming``)."""
    owner = {alias: c.name for c in script.characters for alias in c.all_names}
    meant = list(dict.fromkeys(owner[n] for n in names_meant(name, list(owner))))
    if len(meant) == 1:
        return meant[0]
    if meant:
        raise PlayError(f"--seat {name!r} could be {' or '.join(meant)}: write more of the "
                        "name")
    raise PlayError(f"--seat {name!r}: no such character in {script.id!r} "
                    f"(characters: {', '.join(script.names)})")


class SeatChoice(BaseModel):
    """One seat set apart from the table's defaults: a ``--seat``, a spec's ``seats``, a
    row of the lobby's form. None keeps the table's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The character's name or alias (``resolve_seat_name``).")
    architecture: str | None = None
    model: str | None = None

    @classmethod
    def parse(cls, text: str) -> SeatChoice:
        """``"Dr. Ling=thinkthrice@openai:gpt-4o"``, ``NAME=MODEL``, ``NAME=ARCH@`` or
        ``NAME=human`` (the name as written, not yet looked up)."""
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise PlayError(f"--seat {text!r}: write NAME=MODEL, NAME=ARCH@MODEL or NAME=ARCH@ "
                            "(e.g. \"Dr. Ling=thinkthrice@openai:gpt-4o\")")
        arch, model = ("", value)
        try:
            if "@" in value:
                arch, _, model = value.partition("@")
            elif is_human(value):
                arch, model = value, ""
        except AgentSpecError as exc:
            raise PlayError(f"--seat {text!r}: {exc}") from None
        return cls(name=name, architecture=arch.strip() or None, model=model.strip() or None)


def parse_seat(text: str, script: Script) -> tuple[str, str | None, str | None]:
    """``"Dr. Ling=thinkthrice@openai:gpt-4o"`` → (name, architecture, model); either of
    the last two is None when the seat keeps the default."""
    return _checked(SeatChoice.parse(text), script, text)


def _checked(choice: SeatChoice, script: Script, shown: str
             ) -> tuple[str, str | None, str | None]:
    """The choice's character, architecture and model, each validated."""
    try:
        architecture = check_agent_spec(choice.architecture) if choice.architecture else None
        if architecture and choice.model and is_human(architecture):
            raise PlayError(f"--seat {shown!r}: a human seat plays without a model; write "
                            f"{choice.name.strip()}=human")
        model_spec = validate_model_spec(choice.model) if choice.model else None
    except (AgentSpecError, ModelSpecError) as exc:
        raise PlayError(f"--seat {shown!r}: {exc}") from None
    return resolve_seat_name(choice.name, script), architecture, model_spec


def plan_seats(script: Script, architecture: str, model: str,
               seats: Sequence[str | SeatChoice] = (), *,
               murderer_architecture: str | None = None, murderer_model: str | None = None,
               hot_seat: bool = False) -> dict[str, SeatPlan]:
    """Every character's architecture and model, defaults overridden by ``seats``
    (``--seat`` texts or choices).

    The fixed-murderer protocol (PLAYER* section 3): ``murderer_architecture`` and
    ``murderer_model`` seat the murderers with the same opponent whatever the civilians
    play, so that civilian architectures are compared against equal opposition. An
    explicit ``--seat`` still wins over them. Human seats: see ``seat_humans``.
    """
    try:
        architecture = check_agent_spec(architecture)
        model = validate_model_spec(model)
        fixed_arch = check_agent_spec(murderer_architecture) if murderer_architecture else None
        fixed_model = validate_model_spec(murderer_model) if murderer_model else None
    except (AgentSpecError, ModelSpecError) as exc:
        raise PlayError(str(exc)) from None
    murderers = set(script.murderers)
    plans = {name: SeatPlan(name=name,
                            architecture=(fixed_arch if name in murderers and fixed_arch
                                          else architecture),
                            model=fixed_model if name in murderers and fixed_model else model)
             for name in script.names}
    given: dict[str, str] = {}
    for seat in seats:
        shown = seat if isinstance(seat, str) else _shown(seat)
        choice = SeatChoice.parse(seat) if isinstance(seat, str) else seat
        name, arch, spec = _checked(choice, script, shown)
        if given.setdefault(name, shown) != shown:
            raise PlayError(f"--seat {given[name]!r} and --seat {shown!r} both name {name!r}; "
                            "give each character one --seat")
        plans[name] = SeatPlan(name=name, architecture=arch or plans[name].agent_spec,
                               model=spec or plans[name].model)
    return seat_humans(plans, hot_seat)


def _shown(choice: SeatChoice) -> str:
    """A choice as ``--seat`` would write it (for messages)."""
    return f"{choice.name}={choice.architecture or ''}@{choice.model or ''}"


def seat_humans(plans: dict[str, SeatPlan], hot_seat: bool = False) -> dict[str, SeatPlan]:
    """Human seats play without a model. Several share this terminal only with ``hot_seat``,
    and then each gets the keyboard in turn behind a hand-over screen."""
    humans = [name for name, plan in plans.items() if is_human(plan.architecture)]
    if len(humans) > 1 and not hot_seat:
        raise PlayError(
            f"{len(humans)} human seats ({', '.join(humans)}) would share this terminal, "
            "where each would read the others' private sheets and clues. Seat one person, "
            "or pass --hot-seat: each human seat then gets the keyboard in turn behind a "
            "hand-over screen that clears what the previous player saw.")
    for name in humans:
        spec = plans[name].architecture
        plans[name] = SeatPlan(name=name, model=NO_MODEL,
                               architecture=hot_seat_spec(spec) if len(humans) > 1 else spec)
    return plans


GUARDED_BY_DEFAULT = ("naive", "detective")
"""Architectures whose seats on the embedded local models get the speech guard unasked."""


def guard_seats(plans: dict[str, SeatPlan], guard: bool | None) -> dict[str, SeatPlan]:
    """The speech guard (``agents.guard``) on every model seat (``guard`` True), on none
    (False), or by default on the seats that asked for it and on the naive and detective
    seats of the embedded local models: small models recite their sheets, and neither
    agent is a paper's, so no paper's setting changes. A person's seat has no model to
    check."""
    planned = {}
    for name, plan in plans.items():
        wanted = plan.guard if guard is None else guard
        if guard is None and split_spec(plan.architecture)[0] in GUARDED_BY_DEFAULT:
            wanted = plan.guard or plan.model.split(":")[0] == "local"
        planned[name] = plan.model_copy(update={"guard": wanted and plan.model != NO_MODEL})
    return planned


class TableChoices(BaseModel):
    """What a person chooses about a table, however they choose it: ``jubensha play``'s
    options, the lobby's form, a batch spec's game. ``table_config`` turns it into the
    game, so that the same choices give the same game on every path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: str = Field(description="Every seat's architecture unless set apart.")
    model: str = Field(description="Every seat's model unless set apart.")
    seats: tuple[str | SeatChoice, ...] = Field((), description="Seats set apart: ``--seat`` "
                                                "texts as written (messages quote them) or "
                                                "choices.")
    murderer_agents: str | None = Field(None, description="The fixed-murderer protocol.")
    murderer_model: str | None = None
    guard: bool | None = Field(None, description="The speech guard on every model seat, on "
                               "none, or (None) as ``guard_seats`` decides.")
    hot_seat: bool = Field(False, description="Several human seats may share one screen.")
    preset: str | None = Field(None, description="A paper preset's name (``runs.presets``).")
    preset_overridden: dict[str, Any] = Field(
        default_factory=dict, description="Settings besides the seats' given by hand that "
        "differ from the preset's (its procedure, its metrics), for meta.json.")
    seed: int = 0
    language: Language | None = Field(None, description="None: the script's.")
    embedder: str = "none"
    script_source: str = ""


def table_config(script: Script, procedure: Procedure, choices: TableChoices) -> PlayConfig:
    """The game ``choices`` ask for, seated on ``script`` under ``procedure``: the one way
    every path sets up a table. Pure: it reads, builds and writes nothing; ``PlayError``
    names a wrong choice."""
    plans = plan_seats(script, choices.agents, choices.model, choices.seats,
                       murderer_architecture=choices.murderer_agents,
                       murderer_model=choices.murderer_model, hot_seat=choices.hot_seat)
    applied = None
    if choices.preset is not None:
        try:
            paper = find_preset(choices.preset)
        except PresetError as exc:
            raise PlayError(str(exc)) from None
        plans, applied = with_preset(paper, plans, choices.preset_overridden)
    return PlayConfig(script=script, procedure=procedure, plans=guard_seats(plans, choices.guard),
                      seed=choices.seed, language=choices.language, embedder=choices.embedder,
                      script_source=choices.script_source,
                      preset=applied.model_dump() if applied else None)


def with_preset(paper: PaperPreset, plans: dict[str, SeatPlan], overridden: dict[str, Any]
                ) -> tuple[dict[str, SeatPlan], Applied]:
    """The seats with the paper's agent settings, and what was given by hand over them."""
    specs, own = seat_specs(paper, {n: p.architecture for n, p in plans.items()})
    plans = {n: p.model_copy(update={"architecture": specs[n]}) for n, p in plans.items()}
    return plans, Applied(name=paper.name, overridden={**overridden, **own})


def default_out(script: Script, root: Path = Path("runs")) -> Path:
    """``runs/<timestamp>-<script id>``, numbered if it exists already."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^\w.-]+", "-", script.id).strip("-") or "game"
    path = root / f"{stamp}-{slug}"
    number = 2
    while path.exists():
        path = root / f"{stamp}-{slug}-{number}"
        number += 1
    return path


def build_models(plans: dict[str, SeatPlan], options: ModelOptions | None
                 ) -> dict[str, Model]:
    """One client per distinct model spec (seats share it through their SeatModel);
    ``options`` None: the defaults of this process."""
    options = options or ModelOptions()
    models: dict[str, Model] = {}
    for spec in dict.fromkeys(plan.model for plan in plans.values() if plan.model != NO_MODEL):
        try:
            models[spec] = parse_model_spec(spec, options)
        except ModelSpecError as exc:  # its message already names the model
            raise PlayError(str(exc)) from None
        except (ModelError, OSError) as exc:
            raise PlayError(f"model {spec!r}: {exc}") from None
    return models


def build_memory_embedder(spec: str, options: ModelOptions) -> Embedder | None:
    """The embedder the seats' memories retrieve with (``--embedder``)."""
    try:
        return parse_embedder_spec(spec, options)
    except EmbedderSpecError as exc:
        raise PlayError(str(exc)) from None


def track_seen(log: CallLog, seats: list[str]) -> EventSink:
    """A sink telling the call log which seats observe each event, before they do, so
    every call records the last event its seat had seen (``CallRecord.seen``)."""
    log.track()

    def sink(event: Event) -> None:
        log.saw([seat for seat in seats if event.visible_to(seat)], event.index)

    return sink


async def play_game(config: PlayConfig, out: Path, *, sinks: Sequence[EventSink] = (),
                    on_ask: AskHook | None = None,
                    on_draft: DraftHook | None = None, models: Mapping[str, Model] | None = None,
                    agents: Mapping[str, Agent] | None = None,
                    on_call: OnCall | None = None) -> RunResult:
    """Play the game of ``config`` and write its run folder at ``out``.

    ``models`` (spec → client) replaces building clients from the specs (tests pass fakes
    this way; the caller closes them); ``agents`` (seat → agent) seats agents made
    elsewhere, e.g. a person's web page; ``sinks`` and ``on_ask`` see every event and
    decision, ``on_call`` every model call (a progress bar), ``on_draft`` public speech as
    it is written (``engine.drafts``). A ``config.resume`` of another
    game is refused (``ResumeError``) before anything is written.
    """
    config.procedure.check_acts(config.script)  # before the run folder: none for a refusal
    meta = run_meta(config)
    if config.resume is not None:
        config.resume.check(meta)
        meta.options["resumed_calls"] = len(config.resume.records)
        meta.started = config.resume.meta.started  # the game started then, not now
    options = config.model_options or ModelOptions()
    clients = build_models(config.plans, options) if models is None else dict(models)
    meta = served_at(meta, clients)
    vectors = build_memory_embedder(config.embedder, options)
    folder = RunFolder(out, meta, config.script)
    log = CallLog(folder, Health(config.health.max_consecutive_failures), on_call)
    seats = _seats(config, log, _bound(config, clients), agents or {}, vectors)
    game = Game(config.script, config.procedure, seats, seed=config.seed,
                language=config.game_language,
                sinks=[folder.write_event, track_seen(log, list(config.plans)), *sinks],
                on_ask=on_ask, on_draft=on_draft, degraded_share=config.health.degraded_share)
    folder.write_meta(folder.meta.model_copy(update={"order": game.table.seats}))
    try:
        with tracking() as used:
            result = await game.run()
        write_provenance(folder, used, {spec: c.name for spec, c in clients.items()})
        return folder.finish(result, render_markdown(game.table.events, folder.meta))
    finally:
        if not (out / RESULT).exists():
            folder.write_transcript(render_markdown(game.table.events, folder.meta, False))
        folder.close()
        if models is None:
            for client in clients.values():
                await client.aclose()


def run_meta(config: PlayConfig) -> RunMeta:
    """What meta.json says of the game before it is played."""
    record, preset = config.record, config.preset
    return RunMeta(script_id=config.script.id, script_title=config.script.title,
                   script_source=config.script_source, language=config.game_language,
                   procedure=config.procedure.model_dump(mode="json"),
                   seats={n: SeatInfo(architecture=p.agent_spec, model=p.model,
                                      guard=p.guard)
                          for n, p in config.plans.items()},
                   seed=config.seed, versions=versions(),
                   options={"embedder": config.embedder,
                            "record": str(record) if record else None,
                            **({"preset": dict(preset)} if preset else {})},
                   provenance=provenance(
                       versions().get("jubensha", ""),
                       sorted({p.model for p in config.plans.values() if p.model != NO_MODEL}),
                       config.model_options or ModelOptions(),
                       str(preset["name"]) if preset else None))


def served_at(meta: RunMeta, clients: Mapping[str, Model]) -> RunMeta:
    """``meta`` with each model's identity naming the server its client calls (a batch's
    endpoint for that model, not only the default ``model_options``)."""
    found = meta.provenance
    if found is None:
        return meta
    models = {spec: identity.model_copy(update={"endpoint": clients[spec].server})
              if spec in clients and clients[spec].server else identity
              for spec, identity in found.models.items()}
    return meta.model_copy(update={"provenance": found.model_copy(update={"models": models})})


def write_provenance(folder: RunFolder, used: dict[str, str], names: dict[str, str]) -> None:
    """meta.json with the templates the game rendered and what the servers said ran."""
    if folder.meta.provenance is not None:
        folder.write_meta(folder.meta.model_copy(update={"provenance": completed(
            folder.meta.provenance, used, folder.served, names)}))


def _bound(config: PlayConfig, clients: Mapping[str, Model]) -> dict[str, Model]:
    """Each client recording to the cassette, sharing its deterministic replies among the
    game's seats (two seats reading one clue cost one call), and answering first from the
    resumed log."""
    record = config.record
    bound: dict[str, Model] = {
        spec: CachedModel(RecordingModel(client, record) if record else client,
                          MemoryCache(), only=deterministic)
        for spec, client in clients.items()}
    if config.resume is None:
        return bound
    answers = config.resume.answers()
    return {spec: ResumingModel(client, answers) for spec, client in bound.items()}


def _seats(config: PlayConfig, log: CallLog, models: Mapping[str, Model],
           agents: Mapping[str, Agent], embedder: Embedder | None) -> dict[str, Seat]:
    """Each seat's agent (made here unless given) with its logged, seat-bound model."""
    return {name: Seat(agent=agents.get(name) or make_agent(plan.agent_spec),
                       embedder=embedder,
                       model=None if plan.model == NO_MODEL else log.seat(
                           models[plan.model], name, access="seat"))
            for name, plan in config.plans.items()}


def continuation(folder: Path, people: Collection[str] | None = ()) -> PlayConfig:
    """The game of the run folder ``folder``, resumed from the longest log of its attempts
    (the folder and those set aside as ``<folder>.partial-<n>``): its script, procedure,
    seats, seed, language and embedder are the run's; ``PlayError`` when it cannot go on.
    ``people``: seats played in person whose moves the caller supplies again from their
    moves file (``runlog.moves``: the browser's table, the terminal's ``runs.people``), None
    for every such seat; any other seat played in person stops the resume, since a
    person's moves are not in the model-call log."""
    if not folder.is_dir():
        raise PlayError(f"--resume {folder}: no such run folder")
    if (folder / RESULT).is_file():
        raise PlayError(f"--resume {folder}: the game finished; there is nothing to resume")
    found = Resume.longest([folder, *earlier_attempts(folder)])
    if found is None:
        raise PlayError(f"--resume {folder}: not a run folder (no readable meta.json)")
    meta = found.meta
    unknown = [name for name, seat in meta.seats.items()
               if is_human(seat.architecture) and people is not None
               and name not in people]
    if unknown:
        raise PlayError(f"--resume {folder}: {', '.join(unknown)} played in person, and a "
                        "person's moves are not in the model-call log")
    files = [f"{name} ({one_line(seat.model, 120)})" for name, seat in meta.seats.items()
             if named_file(seat.model) is not None]
    if files:
        raise PlayError(f"--resume {folder}: {', '.join(files)} played with a model file the "
                        "run folder names, and a folder does not choose what this machine "
                        "loads; play the game again instead")
    try:
        script = played_script(read_run(found.source))
        procedure = parse_procedure(meta.procedure, f"{folder / META}: procedure")
    except (RunError, ProcedureError) as exc:
        raise PlayError(f"--resume {folder}: {exc}") from None
    if meta.language not in get_args(Language):
        raise PlayError(f"--resume {folder}: {folder / META}: language {meta.language!r}: "
                        f"use one of {', '.join(get_args(Language))}")
    plans = {name: SeatPlan(name=name, architecture=seat.architecture, model=seat.model)
             for name, seat in meta.seats.items()}
    return PlayConfig(resume=found, script=script, procedure=procedure, plans=plans,
                      seed=meta.seed, language=cast(Language, meta.language),
                      embedder=str(meta.options.get("embedder") or "none"),
                      script_source=meta.script_source or meta.script_id)


def replay_transcript(path: Path) -> str:
    """The Markdown transcript of a finished or partial run, rendered again."""
    run = read_run(path)
    return render_markdown(run.events, run.meta, run.finished)
