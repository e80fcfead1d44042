"""An architecture whose games have a known outcome, for batch reports and comparisons:
``accuser:NAME`` plays naive but always votes for NAME. It is registered only while a test
plays it, so the tests that go through every architecture never meet it."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jubensha.agents.naive import NaiveAgent
from jubensha.agents.registry import ARCHITECTURES, register_architecture
from jubensha.engine.decisions import Action, CastVote, Decision, Vote


class Accuser(NaiveAgent):
    """Plays naive but always votes for one named seat: a batch with a known outcome."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    async def decide(self, decision: Decision) -> Action:
        if isinstance(decision, CastVote):
            return Vote(target=self.target)
        return await super().decide(decision)


@contextmanager
def accuser_registered() -> Iterator[None]:
    """``accuser`` is an architecture inside the block."""
    register_architecture("accuser", Accuser)
    try:
        yield
    finally:
        ARCHITECTURES.remove("accuser")


TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


def accuser_batch(root: Path, more: str = "", *, script_inside: bool = False) -> Path:
    """A batch of ``accuser:Ann`` (always right) and ``accuser:Bob`` (always wrong) tables
    on the tiny manor, seeds 0 and 1, played into ``root/batch``; ``more``: spec lines;
    ``script_inside``: the script copied into the batch folder and played from there, as a
    batch folder that others may read again must name it (runs.spec_trust)."""
    from jubensha.runs.batch import Batch
    from jubensha.runs.spec import load_spec

    script = TINY
    if script_inside:
        (root / "batch").mkdir(parents=True, exist_ok=True)
        script = Path(shutil.copy(TINY, root / "batch" / TINY.name))
    spec = root / "spec.yaml"
    spec.write_text(f"scripts: [{script}]\narchitectures: ['accuser:Ann', 'accuser:Bob']\n"
                    f"models: scripted\nseeds: [0, 1]\nembedder: none\n{more}",
                    encoding="utf-8")
    with accuser_registered():
        batch = Batch.open(load_spec(spec), root / "batch")
        try:
            asyncio.run(batch.run())
        finally:
            batch.close()
    return root / "batch"
