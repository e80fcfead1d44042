"""A truth the user supplies for an imported script: ``truth.yaml`` beside the source (or
the file ``jubensha scripts import --truth FILE`` names) says who the murderers and the
victims are, and overrides what the importer derived from the texts.

    murderers: [Manager Xiu]          # characters of the script (any spelling it uses)
    victims: [Qi Liu]                 # anyone; optional
    kills:                            # optional; default: every murderer killed every victim
      - {victim: Qi Liu, killers: [Manager Xiu]}
    killed_offstage: []               # victims no character killed
    note: read from the release's code # optional, kept in the script's notes

Every key is optional; a key left out keeps what the importer found. ``murderers: []``
says the script has no culprit among the players (no solution).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jubensha.safeload import DocumentError, is_path, parse_document, read_bounded
from jubensha.scripts.importers.common import Names, fail, linked_part, read_text
from jubensha.scripts.io import ScriptError, validation_problems
from jubensha.scripts.model import Derivation, Kill, Script, Truth, Victim

TRUTH_FILE = "truth.yaml"
MAX_BYTES = 1_000_000


class KillEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    victim: str = Field(min_length=1)
    killers: list[str] = Field(min_length=1)


class TruthFile(BaseModel):
    """The truth of a script as a user states it (``truth.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    murderers: list[str] | None = None
    victims: list[str] | None = None
    kills: list[KillEntry] | None = None
    killed_offstage: list[str] | None = None
    note: str = ""


def truth_beside(src: Path) -> Path | None:
    """The ``truth.yaml`` in a source folder, or ``<name>.truth.yaml`` beside a source
    file; None when there is none."""
    path = src / TRUTH_FILE if is_path(src, "folder") else src.with_name(
        f"{src.stem}.{TRUTH_FILE}")
    return path if is_path(path, "file") else None


def read_truth_file(path: Path, *, inside: bool = False) -> TruthFile:
    """The truth file at ``path``; a ScriptError naming the file, field and problem. Read
    within bounds (a regular file, not a link, at most ``MAX_BYTES``: a FIFO or
    ``/dev/zero`` is refused before a byte is read), like a file ``inside`` the source
    being imported; no error quotes a line of a file that is not a truth file."""
    if inside and linked_part(path) is not None:
        raise fail(path, "(file)", "reached through a symbolic link: a truth file beside a "
                                   "script must be a regular file")
    try:
        text = read_text(path) if inside else read_bounded(
            path, MAX_BYTES, links=False).decode("utf-8-sig")
        data = parse_document(text, json_syntax=path.suffix.lower() == ".json")
    except UnicodeDecodeError as exc:
        raise fail(path, "(file)", f"not UTF-8 text (byte {exc.start})") from None
    except DocumentError as exc:
        raise fail(path, "(file)", str(exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise fail(path, "(top level)", "expected a mapping (murderers:, victims:, ...)")
    try:
        return TruthFile.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        for problem in problems:
            if problem.message == "unknown field":
                problem.message += f" (a truth file has {', '.join(TruthFile.model_fields)})"
        raise ScriptError(str(path), problems) from None


def apply_truth(script: Script, truth: TruthFile, source: str, *,
                path: str | None = None) -> Script:
    """``script`` with the truth of ``truth`` (recorded as read from ``source``; a
    problem names ``path``, by default the same) in place of the derived one: murderers,
    sides, victims, kills, and a ``file`` derivation for each fact it states (the derived
    ones are kept, marked as overridden)."""
    recorded, source = source, path or source
    names = Names(script.names)
    for character in script.characters:
        for alias in character.aliases:
            names.add_alias(alias, character.name)
    old = script.truth or Truth(murderers=[])
    murderers = (old.murderers if truth.murderers is None
                 else _characters(truth.murderers, names, source, "murderers"))
    victims = [v.name for v in script.victims] if truth.victims is None else truth.victims
    offstage = (old.killed_offstage if truth.killed_offstage is None
                else truth.killed_offstage)
    _known(offstage, victims, source, "killed_offstage")
    kills = _kills(truth, old, murderers, victims, offstage, names, source)
    script = script.model_copy(deep=True)
    before = {v.name: v for v in script.victims}
    script.victims = [before.get(v, Victim(name=v)) for v in victims]
    for character in script.characters:
        character.killed = [k.victim for k in kills if character.name in k.killers]
        if truth.murderers is not None:
            character.side = "murderer" if character.name in murderers else "civilian"
    script.truth = old.model_copy(update={"murderers": murderers, "kills": kills,
                                          "killed_offstage": offstage})
    script.metadata.has_truth = bool(murderers)
    _record(script, truth, murderers, victims, recorded)
    return script


def _characters(spellings: list[str], names: Names, source: str, field: str) -> list[str]:
    out = []
    for i, spelling in enumerate(spellings):
        who = names.resolve(spelling, chinese=True)
        if who is None:
            raise fail(source, f"{field}[{i}]", f"{spelling!r} is not a character of the "
                                                f"script ({', '.join(names.names)})")
        out.append(who)
    return list(dict.fromkeys(out))


def _known(listed: list[str], victims: list[str], source: str, field: str) -> None:
    for i, name in enumerate(listed):
        if name not in victims:
            raise fail(source, f"{field}[{i}]", f"{name!r} is not one of the victims "
                                                f"({', '.join(victims) or 'none'})")


def _kills(truth: TruthFile, old: Truth, murderers: list[str], victims: list[str],
           offstage: list[str], names: Names, source: str) -> list[Kill]:
    """The kills the file gives, else every murderer killing every victim not killed
    offstage (keeping what the script said of how and why)."""
    known = {k.victim: k for k in old.kills}
    if truth.kills is not None:
        _known([k.victim for k in truth.kills], victims, source, "kills.victim")
        entries = [(k.victim, _characters(k.killers, names, source, f"kills[{i}].killers"))
                   for i, k in enumerate(truth.kills)]
    else:
        entries = [(v, murderers) for v in victims if v not in offstage and murderers]
    return [known[v].model_copy(update={"killers": killers}) if v in known
            else Kill(victim=v, killers=killers) for v, killers in entries]


def _record(script: Script, truth: TruthFile, murderers: list[str], victims: list[str],
            source: str) -> None:
    given = {"murderers": murderers if truth.murderers is not None else None,
             "victims": victims if truth.victims is not None else None}
    stated = {fact: value for fact, value in given.items() if value is not None}
    for derivation in script.metadata.derivations:
        if derivation.fact in stated:
            derivation.overridden_by = source
    script.metadata.derivations += [
        Derivation(fact=fact, value=value, source=source, origin="file", confidence=1.0,
                   method="stated in a truth file the user supplied")
        for fact, value in stated.items()]
    said = ", ".join(f"{fact} {', '.join(value) or 'none'}" for fact, value in stated.items())
    script.metadata.notes.append(f"{said or 'the truth'} from {source}, which overrides what "
                                 "the importer derived" + (f": {truth.note}" if truth.note
                                                           else ""))
