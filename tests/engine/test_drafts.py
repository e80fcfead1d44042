"""Speech shown while it is written: the table's draft hook hears the public texts of the
decision under way as they grow, and never a secret ballot; the speech guard lets through
only whole sentences that pass it."""

from __future__ import annotations

import asyncio
import itertools

from jubensha.agents.guard import SentenceGate
from jubensha.agents.registry import make_agent
from jubensha.engine import Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm import ScriptedModel
from jubensha.llm.base import GenerateConfig, Message, Request, streaming
from jubensha.memory.text import split_sentences
from jubensha.scripts.bundled import find_script


def play_with_drafts(architecture: str) -> tuple[Game, list[tuple[str, str, str]]]:
    script = find_script("lighthouse-keeper")
    drafts: list[tuple[str, str, str]] = []
    game = Game(script, find_procedure("demo"),
                {n: Seat(make_agent(architecture), model=ScriptedModel())
                 for n in script.names}, seed=0,
                on_draft=lambda draft: drafts.append(
                    (draft.seat, draft.decision.type, draft.text)))
    asyncio.run(game.run())
    return game, drafts


def test_a_speech_is_shown_growing_and_ends_as_it_is_said() -> None:
    game, drafts = play_with_drafts("naive")
    said = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "introduction"]
    first = said[0]
    spoken = [text for seat, kind, text in drafts if seat == first.speaker and kind == "speak"]
    assert first.text in spoken, "the draft ends as the speech is said"
    shown = spoken[:spoken.index(first.text) + 1]  # later speeches of the seat start anew
    assert len(shown) > 1, "a speech grows word by word"
    assert all(len(a) <= len(b) for a, b in itertools.pairwise(shown))


def test_no_ballot_is_ever_drafted() -> None:
    _, drafts = play_with_drafts("naive")
    assert drafts
    assert {kind for _, kind, _ in drafts} <= {"speak", "ask", "turn", "accuse"}


def test_a_guarded_seat_shows_only_whole_sentences_of_what_it_says() -> None:
    game, drafts = play_with_drafts("naive:guard")
    spoken = {e.speaker: [] for e in game.table.events if isinstance(e, Spoke)}
    for event in game.table.events:
        if isinstance(event, Spoke):
            spoken[event.speaker].append(event.text)
    assert drafts
    for seat, _, text in drafts:
        assert text.rstrip()[-1] in ".!?。！？…\"'”’", text
        assert any(said.startswith(text) for said in spoken[seat]), text


def test_the_gate_shows_whole_sentences_that_pass_and_never_one_that_fails() -> None:
    shown: list[str] = []
    gate = SentenceGate(shown.append, lambda text: " ".join(
        s for s in split_sentences(text) if "secret" not in s))
    growing = ["I was in the", "I was in the parlour. Then",
               "I was in the parlour. My secret is out. And",
               "I was in the parlour. My secret is out. And more. Yes"]
    for text in growing:
        gate(text)
    assert shown == ["I was in the parlour.", "I was in the parlour. And more."]


def test_a_model_streams_into_the_sink_only_inside_streaming() -> None:
    model = ScriptedModel()
    model.script("speak", ["One two three. Four five."])
    grown: list[str] = []
    request = Request(messages=[Message(role="user", content="Talk.")], purpose="speak",
                      config=GenerateConfig())

    async def call() -> None:
        with streaming(grown.append):
            await model.generate(request)
        await model.generate(request)

    asyncio.run(call())
    assert grown == ["One", "One two", "One two three.", "One two three. Four",
                     "One two three. Four five."]


def test_a_private_exchange_is_drafted_only_for_those_who_hear_it() -> None:
    from jubensha.engine.procedure import parse_procedure

    script = find_script("lighthouse-keeper")
    procedure = parse_procedure({"name": "p", "stages": [
        {"kind": "questioning", "questions": 1, "audience": "pair"}]}, "test")
    drafts: list = []
    game = Game(script, procedure, {n: Seat(make_agent("detective"), model=ScriptedModel())
                                    for n in script.names}, seed=0, on_draft=drafts.append)
    asyncio.run(game.run())
    asked = [d for d in drafts if d.decision.type == "ask"]
    answered = [d for d in drafts if d.decision.type == "speak"]
    assert asked and answered
    assert all(d.audience == [d.seat] for d in asked)
    pairs = {frozenset([e.speaker, e.to]) for e in game.table.events
             if isinstance(e, Spoke) and e.kind == "question"}
    for draft in answered:
        assert draft.seat in draft.audience and frozenset(draft.audience) in pairs
        assert not draft.visible_to(next(n for n in script.names
                                         if n not in draft.audience))
