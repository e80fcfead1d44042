"""Every prompt exists in English and Chinese and renders from the same variables."""

from __future__ import annotations

import pytest

from jubensha.prompts import PROMPTS_DIR, render


def _templates() -> list[tuple[str, str]]:
    found = set()
    for path in PROMPTS_DIR.rglob("*.j2"):
        area = path.relative_to(PROMPTS_DIR).parts[0]
        found.add((area, path.stem))
    return sorted(found)


@pytest.mark.parametrize(("area", "name"), _templates())
def test_every_prompt_has_both_languages(area: str, name: str) -> None:
    for lang in ("en", "zh"):
        assert (PROMPTS_DIR / area / lang / f"{name}.j2").is_file(), f"{area}/{lang}/{name}.j2"


def test_missing_template_names_the_path() -> None:
    with pytest.raises(FileNotFoundError, match="nowhere/en/nothing.j2"):
        render("nowhere", "nothing", "en")
