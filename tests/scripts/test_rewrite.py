"""`scripts generate --model` rewrites each story with a model and keeps a rewrite only
when the proof's reader finds the same facts in it: every timeline sentence word for word,
no time, place or alibi lost, changed or added."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts.generate.build import Request as Mystery
from jubensha.scripts.generate.build import generate
from jubensha.scripts.generate.rewrite import Rewriter
from jubensha.scripts.model import Script
from jubensha.scripts.validation import validate

FOG = {"en": " The fog pressed against the glass, and somewhere a clock ticked.",
       "zh": "雾气贴着窗玻璃，不知哪里有座钟在滴答作响。"}


def story_of(request: Request) -> str:
    """The story the rewrite prompt quotes (everything after its last line of rules)."""
    text = request.messages[-1].text
    return text.split("The script:\n" if "The script:" in text else "剧本：\n")[-1]


def rewritten(script: Script, reply: Callable[[str], str]) -> tuple[Script, Rewriter]:
    model = ScriptedModel(replies={"rewrite": lambda request: reply(story_of(request))})
    rewriter = Rewriter(model)
    return asyncio.run(rewriter.script(script)), rewriter


def test_a_faithful_rewrite_is_kept_in_both_languages() -> None:
    for script in generate(Mystery(seed=4, players=4, level="hard"), ("en", "zh")):
        fog = FOG[script.language]
        new, rewriter = rewritten(script, lambda story, fog=fog: story.strip() + fog)
        assert rewriter.tally.kept == 4 and rewriter.tally.refused == 0
        assert all(FOG[script.language] in c.story for c in new.characters)
        assert validate(new).ok


def test_a_rewrite_that_loses_or_changes_a_fact_keeps_the_template() -> None:
    script = generate(Mystery(seed=4, players=4, level="hard"))[0]
    told = [e.text for c in script.characters for e in c.timeline]

    def retimed(story: str) -> str:
        """The story with the time of its first timeline sentence changed."""
        first = next(text for text in told if text in story)
        return story.replace(first, re.sub(r"\d\d:\d\d", "03:00", first, count=1))

    for reply in (lambda story: "A dark and stormy night.", retimed,
                  lambda story: story + " From 21:00 to 21:10 you were in the " +
                  script.truth.proof.world.places[1] + "."):  # type: ignore[union-attr]
        new, rewriter = rewritten(script, reply)
        assert rewriter.tally.kept == 0 and rewriter.tally.refused == 4
        assert [c.story for c in new.characters] == [c.story for c in script.characters]


def test_the_command_reports_what_it_kept(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["scripts", "generate", "--model", "scripted",
                                      "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "scripted rewrote 0 stories; 5 kept the template's" in result.output
    bad = CliRunner().invoke(app, ["scripts", "generate", "--model", "nonsense:x",
                                   "--out", str(tmp_path / "h")])
    assert bad.exit_code == 1 and "Traceback" not in bad.output
