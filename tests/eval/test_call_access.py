"""Every evaluation call says what it may see (declared once per purpose), and a judge
call names the seat it judges in ``subject``, never in ``seat``: grouping
``eval/calls.jsonl`` by seat shows only what each seat itself was shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from jubensha.agents.answerers import PURPOSES
from jubensha.llm.calls import access_of, declare, declared_purposes
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.scripts import find_script
from tests.eval.postgame_helpers import evaluate, played


async def test_judge_calls_carry_their_access_and_the_judged_seat_apart(
        tmp_path: Path) -> None:
    run_dir = await played(tmp_path / "run")
    script = find_script("lighthouse-keeper")
    _, calls = await evaluate("factual", run_dir, judge=ScriptedModel(),
                              seat_model=ScriptedModel(), samples=1)
    judges = [c for c in calls if c.purpose == "factual.judge"]
    answers = [c for c in calls if c.purpose == "factual.answer"]
    assert judges and answers
    assert {(c.access, c.seat) for c in judges} == {("truth", None)}
    assert {c.subject for c in judges} == set(script.names)
    assert {c.access for c in answers} == {"seat"} and {c.subject for c in answers} == {None}
    assert {c.seat for c in answers} == set(script.names)
    events = read_run(run_dir).events
    for call in answers:
        visible = [e.index for e in events if e.visible_to(call.seat)]
        assert call.seen == visible[-1]  # after the game: everything it could see
    assert all(c.access == "seat" for c in calls if c.seat is not None)


def test_access_is_declared_once_per_purpose_and_found_under_a_prefix() -> None:
    assert access_of("factual.judge") == "truth"
    assert access_of("wellplay.answer.fsa") == "scripts"
    assert access_of("wellplay.answer.dialogue") == "seat"
    assert access_of("judge.mirage.score") == "truth"
    assert access_of("no.such.purpose") is None
    assert set(PURPOSES.values()) <= set(declared_purposes())
    assert declare("factual.judge", "truth") == "factual.judge"
    with pytest.raises(ValueError, match="declared 'truth'"):
        declare("factual.judge", "seat")
