"""An architecture whose games have a known outcome, for batch reports and comparisons:
``accuser:NAME`` plays naive but always votes for NAME. It is registered only while a test
plays it, so the tests that go through every architecture never meet it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
