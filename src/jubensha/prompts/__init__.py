"""Prompt templates, one jinja2 file per prompt and language: ``<area>/<lang>/<name>.j2``;
and the message catalogue, ``messages/<lang>.yaml``: every word a person reads at the
terminal and in transcripts.

Prompts and messages never live inline in code so that they can be read, compared across
languages and changed without touching logic. A missing template is an error naming the
path. ``tracking()`` records the templates rendered inside it, each with the hash of its
text (and those it includes), so that a run can say which prompts it used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import yaml

PROMPTS_DIR = Path(str(resources.files("jubensha.prompts")))


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def template_path(area: str, name: str, lang: str) -> str:
    return f"{area}/{lang}/{name}.j2"


_USED: ContextVar[dict[str, str] | None] = ContextVar("jubensha_prompts_used", default=None)


@contextmanager
def tracking() -> Iterator[dict[str, str]]:
    """Record every template rendered inside (by the tasks started inside too): its path
    → the sha256 of its text, 16 hex digits."""
    used: dict[str, str] = {}
    token = _USED.set(used)
    try:
        yield used
    finally:
        _USED.reset(token)


@lru_cache(maxsize=512)
def _with_includes(path: str) -> dict[str, str]:
    """``path`` and every template it includes or imports, with their hashes."""
    source = (PROMPTS_DIR / path).read_bytes()
    found = {path: hashlib.sha256(source).hexdigest()[:16]}
    parsed = _environment().parse(source.decode("utf-8"))
    for other in jinja2.meta.find_referenced_templates(parsed):
        if other and other not in found:
            found |= _with_includes(other)
    return found


def render(area: str, name: str, lang: str, **values: Any) -> str:
    """Render ``prompts/<area>/<lang>/<name>.j2``; undefined variables are errors."""
    path = template_path(area, name, lang)
    try:
        template = _environment().get_template(path)
    except jinja2.TemplateNotFound:
        raise FileNotFoundError(f"prompt template not found: {PROMPTS_DIR / path}") from None
    used = _USED.get()
    if used is not None:
        used.update(_with_includes(path))
    return template.render(**values).strip()


@lru_cache(maxsize=4)
def messages(lang: str) -> dict[str, str]:
    """Every word a person reads at the terminal, in transcripts and on the end screen, in
    ``lang``: ``messages/<lang>.yaml`` (English for a language without its own file). One
    catalogue per language keeps the two side by side and out of the code."""
    path = PROMPTS_DIR / "messages" / f"{lang}.yaml"
    if not path.is_file():
        path = PROMPTS_DIR / "messages" / "en.yaml"
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {str(key): str(value) for key, value in loaded.items()}


def message(lang: str, key: str, **values: Any) -> str:
    """One message of the catalogue with its ``{name}`` fields filled in."""
    return messages(lang)[key].format(**values)
