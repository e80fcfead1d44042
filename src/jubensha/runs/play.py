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

from pydantic import BaseModel, ConfigDict, Field

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
    name: str
    architecture: str
    model: str


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


def parse_seat(text: str, script: Script) -> tuple[str, str | None, str | None]:
    """``"Dr. Ling=thinkthrice@openai:gpt-4o"`` → (name, architecture, model); either of
    the last two is None when the seat keeps the default."""
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
        architecture = check_agent_spec(arch) if arch.strip() else None
        if architecture and model.strip() and is_human(architecture):
            raise PlayError(f"--seat {text!r}: a human seat plays without a model; write "
                            f"{name.strip()}=human")
        model_spec = validate_model_spec(model) if model.strip() else None
    except (AgentSpecError, ModelSpecError) as exc:
        raise PlayError(f"--seat {text!r}: {exc}") from None
    return resolve_seat_name(name, script), architecture, model_spec


def plan_seats(script: Script, architecture: str, model: str,
               seat_texts: Sequence[str] = (), *, murderer_architecture: str | None = None,
               murderer_model: str | None = None, hot_seat: bool = False
               ) -> dict[str, SeatPlan]:
    """Every character's architecture and model, defaults overridden by ``--seat``.

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
    for text in seat_texts:
        name, arch, spec = parse_seat(text, script)
        if given.setdefault(name, text) != text:
            raise PlayError(f"--seat {given[name]!r} and --seat {text!r} both name {name!r}; "
                            "give each character one --seat")
        plans[name] = SeatPlan(name=name, architecture=arch or plans[name].architecture,
                               model=spec or plans[name].model)
    return seat_humans(plans, hot_seat)


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
    (False), or by default on the naive and detective seats of the embedded local models:
    small models recite their sheets, and neither agent is a paper's, so no paper's setting
    changes."""
    planned = {}
    for name, plan in plans.items():
        has, bare = guarded(plan.architecture)
        wanted = has if guard is None else guard
        if guard is None and split_spec(bare)[0] in GUARDED_BY_DEFAULT:
            wanted = has or plan.model.split(":")[0] == "local"
        if plan.model == NO_MODEL:
            wanted = False
        planned[name] = plan.model_copy(update={"architecture": _with_guard(bare, wanted)})
    return planned


def _with_guard(spec: str, guard: bool) -> str:
    if not guard:
        return spec
    return f"{spec}+{GUARD}" if ":" in spec else f"{spec}:{GUARD}"


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
                   seats={n: SeatInfo(architecture=p.architecture, model=p.model,
                                      guard=guarded(p.architecture)[0])
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
    return {name: Seat(agent=agents.get(name) or make_agent(plan.architecture),
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
