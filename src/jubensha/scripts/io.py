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

from jubensha.scripts.model import Script
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
    if path.is_dir():
        for name in SCRIPT_FILENAMES:
            if (path / name).is_file():
                return path / name
        raise ScriptError(str(path), [Problem(severity="error", field="(file)",
                                              message="folder holds no script.yaml")])
    if not path.exists():
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
        raise ScriptError(source, [_from_pydantic(err) for err in exc.errors()]) from None


def _from_pydantic(err: Any) -> Problem:
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in err["loc"])
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = "unknown field"
    return Problem(severity="error", field=field.lstrip(".") or "(top level)", message=message)


def read_data(path: Path) -> Any:
    """The raw YAML/JSON content of a file; syntax errors name the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(str(path), [Problem(severity="error", field="(file)",
                                              message=f"cannot read: {exc}")]) from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.load(text, Loader=_Loader)
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = f"invalid YAML{where}: {getattr(exc, 'problem', None) or exc}"
    raise ScriptError(str(path), [Problem(severity="error", field="(file)", message=problem)])


def load_script(path: str | Path, *, check: bool = True) -> Script:
    """Load and (by default) validate a native script; raise ScriptError on any error."""
    file = resolve_script_file(Path(path))
    script = parse_script(read_data(file), str(file))
    if check:
        report = validate(script)
        if not report.ok:
            raise ScriptError(str(file), report.errors)
    return script


def check_script(path: str | Path) -> tuple[Script | None, Report, str]:
    """Load a script and report every problem instead of raising (for `scripts validate`)."""
    try:
        file = resolve_script_file(Path(path))
        script = parse_script(read_data(file), str(file))
    except ScriptError as exc:
        return None, Report(problems=exc.problems), exc.source
    return script, validate(script), str(file)


# libyaml's safe loader and dumper when PyYAML has them: same data, several times faster
# (the dataset round-trip tests read and write megabytes of YAML).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _BlockDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Writes multi-line strings as ``|`` blocks and keeps key order."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # PyYAML falls back to a quoted style by itself where a block cannot hold the text exactly.
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _str_presenter)


def dump_script(script: Script) -> str:
    """The script as readable YAML, leaving out fields that hold their default value."""
    data = script.model_dump(mode="json", exclude_defaults=True)
    data = {"id": script.id, "title": script.title, "language": script.language, **data}
    return yaml.dump(data, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False, width=100)


def save_script(script: Script, path: str | Path) -> Path:
    """Write ``script`` to ``path`` (a .yaml file, or a folder that gets script.yaml)."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml", ".json"):
        target = target / "script.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".json":
        target.write_text(script.model_dump_json(indent=2, exclude_defaults=True),
                          encoding="utf-8")
    else:
        target.write_text(dump_script(script), encoding="utf-8")
    return target
