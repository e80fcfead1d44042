"""Prompt templates, one jinja2 file per prompt and language: ``<area>/<lang>/<name>.j2``.

Prompts never live inline in code so that they can be read, compared across languages and
changed without touching logic. A missing template is an error naming the path.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

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


def render(area: str, name: str, lang: str, **values: Any) -> str:
    """Render ``prompts/<area>/<lang>/<name>.j2``; undefined variables are errors."""
    path = template_path(area, name, lang)
    try:
        template = _environment().get_template(path)
    except jinja2.TemplateNotFound:
        raise FileNotFoundError(f"prompt template not found: {PROMPTS_DIR / path}") from None
    return template.render(**values).strip()
