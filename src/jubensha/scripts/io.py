"""Reading and writing the native script format (YAML, or the same structure as JSON).

Long texts are written as YAML block scalars so a script file reads like a document. Every
failure becomes a ``ScriptError`` that names the file, the field and the problem; callers
never see a YAML or pydantic traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from jubensha.outdir import write_whole
from jubensha.safeload import DocumentError, is_path, read_document, shorten, shown_key
from jubensha.scripts.images import ImagePathError, safe_image
from jubensha.scripts.model import Clue, Script
from jubensha.scripts.validation import Problem, Report, validate

SCRIPT_FILENAMES = ("script.yaml", "script.yml", "script.json")


class ScriptError(Exception):
    """A script that cannot be used; ``problems`` lists each field and what is wrong."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(p.render(source) for p in problems))


def resolve_script_file(path: Path) -> Path:
    """A script file, or a folder holding ``script.yaml`` (bundled mysteries are folders)."""
    if is_path(path, "folder"):
        for name in SCRIPT_FILENAMES:
            if (path / name).is_file():
                return path / name
        raise ScriptError(str(path), [Problem(severity="error", field="(file)",
                                              message="folder holds no script.yaml")])
    if not is_path(path):
        raise ScriptError(str(path), [Problem(severity="error", field="(file)",
                                              message="no such file")])
    return path


def parse_script(data: Any, source: str) -> Script:
    """Build a Script from plain data, turning type errors into field-named problems."""
    if not isinstance(data, dict):
        raise ScriptError(source, [Problem(severity="error", field="(top level)",
                                           message="expected a mapping of script fields, "
                                           f"found {type(data).__name__}")])
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(source, validation_problems(exc)) from None


def validation_problems(exc: ValidationError) -> list[Problem]:
    """A pydantic error as one field-named problem per error."""
    return [_from_pydantic(err) for err in exc.errors()]


def _from_pydantic(err: Any) -> Problem:
    loc = list(err["loc"])
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = "unknown field"
        loc[-1:] = [shown_key(str(part)) for part in loc[-1:]]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return Problem(severity="error", field=field.lstrip(".") or "(top level)", message=message)


def read_data(path: Path) -> Any:
    """The raw YAML/JSON content of a file, read within ``safeload``'s limits; every
    problem (syntax with its line, size, nesting, aliases) names the file."""
    try:
        return read_document(path)
    except DocumentError as exc:
        raise ScriptError(str(path), [Problem(severity="error", field="(file)",
                                              message=str(exc))]) from None


def load_script(path: str | Path, *, check: bool = True) -> Script:
    """Load and (by default) validate a native script; raise ScriptError on any error.
    Image paths are checked whatever ``check`` says: no script may point outside its
    folder."""
    file = resolve_script_file(Path(path))
    script = parse_script(read_data(file), str(file))
    report = validate(script) if check else Report()
    problems = [*report.errors, *image_problems(script, file.parent)]
    if problems:
        raise ScriptError(str(file), problems)
    return script


def check_script(path: str | Path) -> tuple[Script | None, Report, str]:
    """Load a script and report every problem instead of raising (for `scripts validate`)."""
    try:
        file = resolve_script_file(Path(path))
        script = parse_script(read_data(file), str(file))
    except ScriptError as exc:
        return None, Report(problems=exc.problems), exc.source
    report = validate(script)
    report.problems.extend(image_problems(script, file.parent))
    return script, report, str(file)


def image_problems(script: Script, folder: Path) -> list[Problem]:
    """Every image clue whose file is not a safe image inside ``folder``."""
    problems = []
    for index, clue in enumerate(script.clues):
        if clue.image is None:
            continue
        try:
            safe_image(clue.image, folder)
        except ImagePathError as exc:
            problems.append(Problem(severity="error", field=f"clues[{index}].image",
                                    message=f"{shorten(clue.image)!r} {exc}"))
    return problems


# libyaml's safe loader and dumper when PyYAML has them: same data, several times faster
# (the dataset round-trip tests read and write megabytes of YAML).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _BlockDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Writes multi-line strings as ``|`` blocks and keeps key order."""


def image_path(clue: Clue, base: Path) -> Path:
    """The clue's image file inside the script's folder ``base``; ScriptError otherwise."""
    assert clue.image is not None
    try:
        return safe_image(clue.image, base)
    except ImagePathError as exc:
        raise ScriptError(str(base), [Problem(severity="error", field=f"clues[{clue.id}].image",
                                              message=str(exc))]) from None


def resolve_images(script: Script, base: Path) -> Script:
    """A copy of ``script`` whose image paths are absolute, each checked to stay inside
    ``base`` (the script's folder); the script itself is unchanged."""
    if not any(clue.image for clue in script.clues):
        return script
    clues = [clue.model_copy(update={"image": str(image_path(clue, base))})
             if clue.image else clue for clue in script.clues]
    return script.model_copy(update={"clues": clues})


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # PyYAML falls back to a quoted style by itself where a block cannot hold the text exactly.
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _str_presenter)


def dump_script(script: Script) -> str:
    """The script as readable YAML, leaving out fields that hold their default value.
    Not cached: a process-wide cache of scripts' text, truth included, would be a module
    global any seat could read (docs/isolation.md); PyYAML takes ~30 ms for a large one."""
    fields = json.loads(script.model_dump_json(exclude_defaults=True))
    head = {key: fields.pop(key) for key in ("id", "title", "language")}
    return yaml.dump({**head, **fields}, Dumper=_BlockDumper, allow_unicode=True,
                     sort_keys=False, width=100)


def save_script(script: Script, path: str | Path) -> Path:
    """Write ``script`` to ``path`` (a .yaml file, or a folder that gets script.yaml)."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml", ".json"):
        target = target / "script.yaml"
    text = (script.model_dump_json(indent=2, exclude_defaults=True)
            if target.suffix == ".json" else dump_script(script))
    data = text.encode("utf-8")  # fails here, before any folder is made, if it cannot be
    target.parent.mkdir(parents=True, exist_ok=True)
    write_whole(target, data)
    return target


def script_targets(path: Path) -> list[Path]:
    """The path itself, or the script folders below a folder that holds none itself."""
    if path.is_dir() and not any((path / n).is_file() for n in SCRIPT_FILENAMES):
        found = sorted({p.parent for n in SCRIPT_FILENAMES for p in path.rglob(n)})
        return found or [path]
    return [path]
