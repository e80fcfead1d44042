"""A person at the table: the ``human`` architecture plays a seat from the terminal through
the same Agent interface as a model, sees only what its seat may see, is asked again on
bad input, survives the end of input, and needs neither a model nor a decision timeout."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from jubensha.agents.human import (
    Ambiguous,
    ConsoleIO,
    HumanAgent,
    HumanIO,
    HumanLeft,
    SeatView,
    hot_seat_spec,
    is_human,
    parse_choice,
    parse_rating,
)
from jubensha.agents.registry import make_agent
from jubensha.cli import app
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    Action,
    AskQuestions,
    CastVote,
    Decision,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.events import ActStarted, ClueRevealed, Event, Failure, HostSpoke, Spoke
from jubensha.engine.game import Game, Seat, turn_order
from jubensha.engine.procedure import find_procedure
from jubensha.engine.stages_whodunit import parse_reasoning
from jubensha.engine.voting import NOBODY
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.play import NO_MODEL, PlayError, parse_seat, plan_seats
from jubensha.scripts import PUBLIC, Character, Script, find_script, load_script

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
runner = CliRunner()


class Keyboard:
    """Scripted typing at a terminal: each read shows the prompt and returns the next line
    (echoed, as a terminal does); EOFError once the lines run out."""

    def __init__(self, screen: io.StringIO, *lines: str):
        self.screen = screen
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        self.screen.write(prompt)
        if not self.lines:
            raise EOFError
        self.screen.write(self.lines[0] + "\n")
        return self.lines.pop(0)


def seat(script: Script, name: str, *lines: str, handover: bool = False,
         screen: io.StringIO | None = None) -> tuple[HumanAgent, Keyboard, io.StringIO]:
    screen = screen or io.StringIO()
    keyboard = Keyboard(screen, *lines)
    console = Console(file=screen, width=400, color_system=None)
    agent = HumanAgent(io=ConsoleIO(console, keyboard, handover=handover))
    asyncio.run(agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, name))))
    return agent, keyboard, screen


def decide(agent: HumanAgent, decision: Decision, *events: Event) -> Action:
    async def run() -> Action:
        for event in events:
            await agent.observe(event)
        return await agent.decide(decision)

    return asyncio.run(run())


# -- parsing -------------------------------------------------------------------------------
def test_a_choice_is_a_number_or_a_name_and_zero_is_none_when_offered() -> None:
    options = ["Ann", "Bob", "Cara"]
    assert parse_choice("2", options) == 1
    assert parse_choice(" cara ", options) == 2
    assert parse_choice("0", options, none="nobody") is None
    assert parse_choice("Nobody", options, none="nobody") is None
    for bad in ("0", "4", "-1", "Zed", ""):
        with pytest.raises(ValueError):
            parse_choice(bad, options)


def test_a_first_or_last_name_alone_picks_the_one_seat_it_fits() -> None:
    options = ["Agnes Pike", "Tom Hale", "Dr. Samuel Reed", "Tom Reed", "顾远之", "沈青禾",
               "沈墨山"]
    assert parse_choice("agnes", options) == 0
    assert parse_choice("Pike", options) == 0
    assert parse_choice("hale", options) == 1
    assert parse_choice("dr", options) == 2 and parse_choice("samuel", options) == 2
    assert parse_choice("顾", options) == 4 and parse_choice("青禾", options) == 5
    for shared, fits in (("Tom", ["Tom Hale", "Tom Reed"]), ("reed", ["Dr. Samuel Reed",
                                                                       "Tom Reed"]),
                         ("沈", ["沈青禾", "沈墨山"])):
        with pytest.raises(Ambiguous) as refused:
            parse_choice(shared, options)
        assert refused.value.options == fits
    for nothing in ("Agnes Hale", "a", "ag", "远"):
        with pytest.raises(ValueError):
            parse_choice(nothing, options)


def test_a_shared_first_name_is_asked_again_with_the_seats_it_could_be() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "Tom", "hale", "")
    vote = CastVote(candidates=["Tom Hale", "Tom Reed", "Cara"], victim="Lord Vale")
    assert decide(agent, vote) == Vote(target="Tom Hale")
    assert '"Tom" could be Tom Hale or Tom Reed: type more of the name' in screen.getvalue()


def test_the_vote_hint_names_zero_when_abstaining_is_offered() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "Zed", "0", "")
    assert decide(agent, CastVote(candidates=["Ann", "Cara", "Dan"])) == Vote(target=None)
    assert "Type a number from 0 to 3, or a name from the list." in screen.getvalue()
    agent, _, screen = seat(script, "Bob", "Zed", "1", "Why not.")
    decide(agent, AskQuestions(candidates=["Ann", "Cara", "Dan"], count=1))
    assert "Type a number from 1 to 3" in screen.getvalue()  # no abstaining when asking


def test_a_misspelt_name_and_ones_own_name_get_hints_that_say_so() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "agnus", "bob", "Samual Read", "AGNES PIKE.", "")
    vote = CastVote(candidates=["Agnes Pike", "Cara", "Samuel Reed"])
    assert decide(agent, vote) == Vote(target="Agnes Pike")  # a whole name in any case
    shown = screen.getvalue()
    assert "Did you mean Agnes Pike? Type the name as listed, or its number." in shown
    assert "You cannot vote for yourself: type one of the others" in shown
    assert "Did you mean Samuel Reed?" in shown
    agent, _, screen = seat(script, "Bob", "Bob", "2", "")
    decide(agent, Accuse(candidates=["Ann", "Cara"]))
    assert "You cannot accuse yourself" in screen.getvalue()


def test_chinese_hints_name_the_seat_meant() -> None:
    script = find_script("tingsong-tea-estate")
    agent, _, screen = seat(script, "沈青禾", "沈青禾", "顾远知", "顾远之", "")
    assert decide(agent, CastVote(candidates=["许松", "顾远之", "钱守仁"])) == Vote(
        target="顾远之")
    shown = screen.getvalue()
    assert "不能投给自己" in shown and "你是不是想选顾远之？" in shown


def test_a_rating_is_trust_then_doubt_each_zero_to_two() -> None:
    assert parse_rating("2 0") == (2, 0)
    assert parse_rating("1,2") == (1, 2)
    assert parse_rating("02") == (0, 2)
    assert parse_rating("2、1") == (2, 1)
    for bad in ("3 0", "1", "1 1 1", "high low", ""):
        with pytest.raises(ValueError):
            parse_rating(bad)


# -- the sheet and the events ------------------------------------------------------------------
def test_the_sheet_shows_the_seats_own_script_and_only_public_text_of_others() -> None:
    script = load_script(TINY)
    _, _, screen = seat(script, "Ann")
    shown = screen.getvalue()
    ann = script.character("Ann")
    for text in (ann.story, ann.secrets[0], ann.timeline[0].text, script.background,
                 "You are the MURDERER (you killed Lord Vale)", "Bob: The gardener.",
                 ":sheet", ":history", ":help"):
        assert text in shown
    for other in script.characters[1:]:
        assert other.story not in shown and other.secrets[0] not in shown
    assert "Ann hears that the gardener" not in shown  # act 2 is not released yet


def test_events_appear_as_they_happen_and_later_acts_join_the_sheet() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", ":sheet", "Hello.")
    act2 = script.character("Bob").act_sheet(2)
    clue = ClueRevealed(clue_id="c2", title="Note", text="A torn dismissal notice.",
                        audience=["Bob"])
    decide(agent, Speak(kind="statement"), clue, ActStarted(act=2, sheet=act2,
                                                             audience=["Bob"]))
    shown = screen.getvalue()
    assert "Note (only Bob): A torn dismissal notice." in shown
    resheet = shown.split("Your turn: speak to everyone")[1]
    assert "Act 2: your sheet" in resheet and act2.text in resheet
    assert "Note (yours alone): A torn dismissal notice." in resheet


# -- decisions ---------------------------------------------------------------------------------
def test_an_empty_speech_is_asked_again_and_commands_run_at_any_prompt() -> None:
    script = load_script(TINY)
    agent, keyboard, screen = seat(script, "Bob", "", "   ", ":history", ":help", ":foo",
                                   "I was repotting orchids.")
    said = Spoke(speaker="Cara", kind="introduction", text="I went to bed early.")
    action = decide(agent, Speak(kind="introduction", prompt="Bob, introduce yourself."),
                    said)
    assert action == Speech(text="I was repotting orchids.")
    shown = screen.getvalue()
    assert shown.count("An empty line says nothing") == 2
    assert shown.count("Cara introduction: I went to bed early.") == 2  # live, then :history
    assert "Unknown command :foo" in shown and "(Host: Bob, introduce yourself.)" in shown
    assert len(keyboard.prompts) == 6


def test_an_answer_shows_the_question_and_the_host_request_only_once() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "In the glasshouse.")
    question = Spoke(index=3, speaker="Ann", kind="question", text="Where were you?",
                     to="Bob")
    host = HostSpoke(text="Bob, please answer Ann.", to="Bob", audience=["Bob"])
    action = decide(agent, Speak(kind="answer", prompt=host.text, question=question), host)
    assert action == Speech(text="In the glasshouse.")
    shown = screen.getvalue()
    assert "Ann asks you: “Where were you?”" in shown
    assert shown.count("Bob, please answer Ann.") == 1


def test_reasoning_is_asked_as_method_then_motive_in_the_whodunit_format() -> None:
    script = load_script(TINY)
    agent, keyboard, _ = seat(script, "Bob", "A candlestick to the head.", "",
                              "She was dismissed.")
    action = decide(agent, Speak(kind="reasoning"))
    assert isinstance(action, Speech)
    assert parse_reasoning(action.text) == {"method": "A candlestick to the head.",
                                            "motive": "She was dismissed."}
    assert [p.split(" ›")[0] for p in keyboard.prompts] == ["Modus operandi", "Motive",
                                                             "Motive"]


def test_asking_picks_a_numbered_target_and_types_count_questions() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "7", "Zed", "cara", "Why the cheque?",
                            "", "Who else was up?")
    action = decide(agent, AskQuestions(candidates=["Ann", "Cara", "Dan"], count=2))
    assert action == Questions(target="Cara", questions=["Why the cheque?",
                                                         "Who else was up?"])
    shown = screen.getvalue()
    assert "  2) Cara" in shown
    assert shown.count("Type a number from 1 to 3, or a name from the list.") == 2
    assert "Your question 2 of 2 to Cara" in shown


def test_an_open_turn_investigates_a_place_or_asks_someone() -> None:
    script = load_script(TINY)
    agent, _, _ = seat(script, "Bob", "2", "1", "The ledger must be here.")
    turn = TakeTurn(candidates=["Ann", "Cara"], locations=["study"])
    assert decide(agent, turn) == Investigate(location="study",
                                              statement="The ledger must be here.")
    agent, keyboard, _ = seat(script, "Bob", "Ann", "Where were you?")
    assert decide(agent, TakeTurn(candidates=["Ann", "Cara"], locations=[])) == Questions(
        target="Ann", questions=["Where were you?"])
    assert len(keyboard.prompts) == 2  # no places: no ask-or-investigate menu


def test_a_rating_is_asked_again_until_both_numbers_fit() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "5 5", "2,0")
    statement = Spoke(index=4, speaker="Ann", kind="statement", text="I was asleep.")
    assert decide(agent, RateStatement(statement=statement)) == Rating(trust=2, doubt=0)
    shown = screen.getvalue()
    assert "Ann said: “I was asleep.”" in shown and "Type two numbers from 0 to 2" in shown


def test_an_accusation_may_name_nobody_and_a_vote_may_abstain() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "0", "")
    assert decide(agent, Accuse(candidates=["Ann", "Cara"])) == Accusation(target=None)
    assert "  0) nobody" in screen.getvalue()
    agent, _, screen = seat(script, "Bob", "ANN", "The candlestick.", )
    vote = CastVote(candidates=["Ann", "Cara"], victim="Lord Vale", accused=["Ann"])
    assert decide(agent, vote) == Vote(target="Ann", reason="The candlestick.")
    shown = screen.getvalue()
    assert "Vote: who killed Lord Vale?" in shown and "Accused so far: Ann." in shown
    agent, _, _ = seat(script, "Bob", "0", "")
    assert decide(agent, vote) == Vote(target=None)


def test_chinese_prompts_render_and_reasoning_uses_chinese_labels() -> None:
    script = find_script("tingsong-tea-estate")
    name = script.names[0]
    agent, _, screen = seat(script, name, "下毒。", "为了遗产。", "2", "你在哪里？")
    action = decide(agent, Speak(kind="reasoning"))
    assert isinstance(action, Speech) and action.text.startswith("作案手法：下毒。")
    assert parse_reasoning(action.text) == {"method": "下毒。", "motive": "为了遗产。"}
    others = [n for n in script.names if n != name]
    asked = decide(agent, AskQuestions(candidates=others))
    assert asked == Questions(target=others[1], questions=["你在哪里？"])
    shown = screen.getvalue()
    for words in ("你扮演", "■ 你的剧本", "轮到你了", "作案手法 ›", f"你向{others[1]}提的问题"):
        assert words in shown


# -- leaving, hot seat, timeouts -------------------------------------------------------------
def test_end_of_input_means_the_person_left_and_every_later_decision_fails_fast() -> None:
    script = load_script(TINY)
    agent, keyboard, screen = seat(script, "Bob")
    with pytest.raises(HumanLeft, match="Bob left the table"):
        decide(agent, Speak(kind="introduction"))
    with pytest.raises(HumanLeft):
        decide(agent, CastVote(candidates=["Ann"]), Spoke(speaker="Ann", kind="statement",
                                                          text="Shown to nobody now."))
    shown = screen.getvalue()
    assert shown.count("Bob has left the table (end of input)") == 1
    assert "Shown to nobody now." not in shown
    assert len(keyboard.prompts) == 1


def test_a_shared_terminal_hands_over_and_shows_a_seat_its_events_only_on_its_turn() -> None:
    script = load_script(TINY)
    screen = io.StringIO()
    bob, _, _ = seat(script, "Bob", "", "Hello from Bob.", handover=True, screen=screen)
    cara, _, _ = seat(script, "Cara", handover=True, screen=screen)
    note = ClueRevealed(clue_id="c2", text="A torn dismissal notice.", audience=["Bob"])
    asyncio.run(bob.observe(note))
    asyncio.run(cara.observe(Spoke(speaker="Dan", kind="statement", text="Public words.")))
    assert screen.getvalue() == ""  # nothing is shown until a seat's turn
    assert decide(bob, Speak(kind="statement")) == Speech(text="Hello from Bob.")
    shown = screen.getvalue()
    before, after = shown.split("press Enter when nobody else can see the screen")
    assert "Bob" in before and "torn dismissal" not in before
    assert "torn dismissal" in after and "Public words." not in after
    assert bob.seat.sheet.me.story in after and "Cara" not in before
    assert shown.rstrip().endswith("Thank you, Bob. Pass the keyboard on.")


class SlowIO(HumanIO):
    """A person who takes their time (a web page would await a form the same way)."""

    async def start(self, view: SeatView) -> None:
        self.view = view

    async def show(self, event: Event) -> None:
        """Nothing to draw."""

    async def decide(self, decision: Decision) -> Action:
        await asyncio.sleep(0.2)
        if isinstance(decision, Speak):
            return Speech(text="Slow but sure.")
        if isinstance(decision, AskQuestions):
            return Questions(target=decision.candidates[0], questions=["Why?"])
        assert isinstance(decision, CastVote)
        return Vote(target=decision.candidates[0])


def test_the_decision_timeout_applies_to_model_seats_but_not_to_a_person() -> None:
    script = load_script(TINY)
    slow_model = ScriptedModel(latency_s=0.2)
    seats = {name: Seat(agent=make_agent("naive"), model=slow_model)
             for name in script.names if name != "Bob"}
    seats["Bob"] = Seat(agent=HumanAgent(io=SlowIO()))
    game = Game(script, find_procedure("demo"), seats, decision_timeout_s=0.05)
    result = asyncio.run(game.run())
    failures = [e for e in game.table.events if isinstance(e, Failure)]
    assert failures and {f.seat for f in failures} == {"Ann", "Cara", "Dan"}
    assert all("TimeoutError" in f.error for f in failures)
    said = [e.text for e in game.table.events if isinstance(e, Spoke) and e.speaker == "Bob"]
    assert "Slow but sure." in said and result.votes[0].ballots["Bob"] is not None


# -- seats on the command line -----------------------------------------------------------------
def test_a_human_seat_is_written_name_equals_human_and_plays_without_a_model() -> None:
    script = load_script(TINY)
    assert parse_seat("bob=human", script) == ("Bob", "human", None)
    assert parse_seat("Bob=human:history=5@", script) == ("Bob", "human:history=5", None)
    assert is_human("human:history=5") and not is_human("naive") and not is_human("local")
    plans = plan_seats(script, "naive", "scripted", ["Bob=human"])
    assert (plans["Bob"].architecture, plans["Bob"].model) == ("human", NO_MODEL)
    assert plans["Ann"].model == "scripted"
    with pytest.raises(PlayError, match="plays without a model"):
        parse_seat("Bob=human@scripted", script)
    with pytest.raises(PlayError, match="human options 'history=0'"):
        parse_seat("Bob=human:history=0", script)


def test_several_human_seats_need_the_hot_seat_flag() -> None:
    script = load_script(TINY)
    with pytest.raises(PlayError, match="would read the others' private sheets") as error:
        plan_seats(script, "naive", "scripted", ["Bob=human", "Cara=human"])
    assert "--hot-seat" in str(error.value)
    plans = plan_seats(script, "naive", "scripted", ["Bob=human", "Cara=human:history=3"],
                       hot_seat=True)
    assert plans["Bob"].architecture == "human:handover=true" == hot_seat_spec("human")
    assert plans["Cara"].architecture == "human:history=3+handover=true"
    cara = make_agent(plans["Cara"].architecture)
    assert isinstance(cara, HumanAgent) and cara.config.handover and cara.config.history == 3


def invoke(*args: str, lines: Iterable[str] = ()) -> tuple[int, str]:
    result = runner.invoke(app, list(args), input="".join(f"{line}\n" for line in lines))
    return result.exit_code, result.output


def test_verbose_is_refused_with_a_human_seat() -> None:
    code, output = invoke("play", TINY, "--model", "scripted", "--seat", "Bob=human", "-v")
    assert code == 2 and "a player at a human seat may not see" in " ".join(output.split())
    code, output = invoke("play", TINY, "--model", "scripted", "--seat", "Bob=human",
                          "--seat", "Cara=human")
    assert code == 2 and "--hot-seat" in output and "Traceback" not in output


# -- whole games from the terminal -------------------------------------------------------------
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def sentences(texts: Iterable[str]) -> set[str]:
    return {part for text in texts for part in (" ".join(p.split())
                                                for p in _SENTENCE.split(text or ""))
            if len(part) >= 12}


def private_texts(character: Character, script: Script) -> list[str]:
    names = set(character.all_names)
    return [character.story, *character.secrets, *(t.text for t in character.timeline),
            *(sheet.text for sheet in character.acts),
            *(clue.text for clue in script.clues if clue.holder in names)]


def public_texts(script: Script) -> list[str]:
    return [script.background, script.rules, *(v.description for v in script.victims),
            *(c.description for c in script.characters), *(a.public_text for a in script.acts),
            *(clue.text for clue in script.clues if clue.holder == PUBLIC)]


def strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from strings(item)


def leaked(script: Script, seat_name: str, events: list[Event], output: str) -> list[str]:
    """Sentences of other characters' private texts or of the truth that appear in
    ``output`` although no event visible to ``seat_name`` carried them (as in
    ``tests/engine/test_isolation.py``, applied to what the terminal showed)."""
    truth = script.truth
    foreign = sentences([truth.narrative, truth.solution, *truth.reasoning_chain]
                        if truth else []).union(*(
        sentences(private_texts(c, script)) for c in script.characters if c.name != seat_name))
    own = sentences(private_texts(script.character(seat_name), script))
    seen = squash(" ".join(" ".join(strings(e.model_dump())) for e in events
                           if e.visible_to(seat_name)))
    shown = squash(output)
    return [s for s in foreign - own - sentences(public_texts(script))
            if squash(s) not in seen and squash(s) in shown]


HUMAN = "Nora Vance"


def test_a_whole_demo_game_with_one_human_seat_from_the_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = find_script("lighthouse-keeper")
    others = [name for name in script.names if name != HUMAN]
    # every other seat questions the human, so she answers three times around her own turn
    model = ScriptedModel(replies={"ask": [
        {"target": HUMAN, "questions": ["Nora, where were you at half past ten?"]}] * 3})
    monkeypatch.setattr("jubensha.runs.commands.build_models", lambda plans, options: {
        "scripted": model})
    lines = [":help", "", ":sheet", "I am Nora, the keeper's niece."]
    for asker in turn_order(script.names, 5):
        lines += (["9", "agnes pike", "Agnes, where were you at 22:30?"] if asker == HUMAN
                  else [f"Answering {asker}: I was in my room."])
    lines += ["I think Agnes did it.", ":history", "Agnes Pike", "The flour on the stairs."]
    code, output = invoke("play", "lighthouse-keeper", "--model", "scripted", "--seed", "5",
                          "--agents", "naive", "--seat", f"{HUMAN}=human", "--embedder", "none",
                          "--out", str(tmp_path / "run"), lines=lines)
    assert code == 0, output
    run = read_run(tmp_path / "run")
    assert run.finished and run.meta.seats[HUMAN].model == NO_MODEL
    mine = [e for e in run.events if isinstance(e, Spoke) and e.speaker == HUMAN]
    assert [(e.kind, e.text) for e in mine if e.kind != "answer"] == [
        ("introduction", "I am Nora, the keeper's niece."),
        ("question", "Agnes, where were you at 22:30?"),
        ("statement", "I think Agnes did it.")]
    assert {e.text for e in mine if e.kind == "answer"} == {
        f"Answering {asker}: I was in my room." for asker in others}
    assert run.result.votes[0].ballots[HUMAN] == "Agnes Pike"
    assert not [e for e in run.events if isinstance(e, Failure) and e.seat == HUMAN]
    assert {call.seat for call in run.calls} == set(others)
    shown = " ".join(output.split())
    for words in ("An empty line says nothing", "Type a number from 1 to 3",
                  "Agnes Pike asks you:", "Vote: who is the murderer?",
                  "The game is over. From here on nothing is secret"):
        assert words in shown
    before_reveal = output.split("── Reveal ──")[0]
    assert "(log only)" not in output
    assert not [name for name in script.names if f"{name} votes for" in before_reveal]
    assert "── Vote ──" in before_reveal and "voter" not in before_reveal
    assert leaked(script, HUMAN, run.events, output) == []


def test_the_omniscient_live_view_would_leak_what_the_human_view_keeps_private(
        tmp_path: Path) -> None:
    script = find_script("lighthouse-keeper")
    code, output = invoke("play", "lighthouse-keeper", "--model", "scripted",
                          "--embedder", "none", "--out", str(tmp_path / "run"))
    assert code == 0
    assert leaked(script, HUMAN, read_run(tmp_path / "run").events, output)


GAMES = [("demo", "lighthouse-keeper", HUMAN), ("thinkthrice", "lighthouse-keeper", HUMAN),
         ("player", "lighthouse-keeper", HUMAN), ("mirage", "halvard-observatory", "Owen Pryce"),
         ("whodunit", "halvard-observatory", "Julian Ashby"),
         ("demo", "tingsong-tea-estate", "许松")]


@pytest.mark.parametrize(("preset", "script_id", "human"), GAMES)
def test_a_human_seat_plays_every_preset_and_sees_only_its_own_view(
        preset: str, script_id: str, human: str, tmp_path: Path) -> None:
    # "1" answers a choice or a speech; "1 1" a rating or a speech: whatever the order of
    # the prompts, each is answered within two lines (invalid lines are asked again)
    lines = ["1", "1 1"] * 600
    code, output = invoke("play", script_id, "--procedure", preset, "--model", "scripted",
                          "--seat", f"{human}=human", "--embedder", "none",
                          "--out", str(tmp_path / "run"), lines=lines)
    assert code == 0, output
    run = read_run(tmp_path / "run")
    assert run.finished
    assert not [e for e in run.events if isinstance(e, Failure) and e.seat == human]
    assert [e for e in run.events if isinstance(e, Spoke) and e.speaker == human]
    assert leaked(find_script(script_id), human, run.events, output) == []
    if script_id == "tingsong-tea-estate":
        assert "轮到你了" in output and "你说 ›" in output and "游戏结束" in output


def test_the_human_seat_left_at_end_of_input_and_the_table_finished(tmp_path: Path) -> None:
    code, output = invoke("play", TINY, "--model", "scripted", "--seat", "Bob=human",
                          "--embedder", "none", "--out", str(tmp_path / "run"),
                          lines=["Bob here."])
    assert code == 0, output
    assert "Bob has left the table (end of input)" in " ".join(output.split())
    run = read_run(tmp_path / "run")
    failures = [e for e in run.events if isinstance(e, Failure) and e.seat == "Bob"]
    assert run.finished and failures and all("HumanLeft" in f.error for f in failures)
    result = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert result["failures"] >= len(failures)


def test_hot_seat_players_take_turns_behind_the_hand_over_screen(tmp_path: Path) -> None:
    code, output = invoke("play", TINY, "--model", "scripted", "--seat", "Bob=human",
                          "--seat", "Cara=human", "--hot-seat", "--embedder", "none",
                          "--out", str(tmp_path / "run"), lines=["1", "1 1"] * 100)
    assert code == 0, output
    shown = " ".join(output.split())
    assert "Pass the keyboard to Bob." in shown and "Pass the keyboard to Cara." in shown
    run = read_run(tmp_path / "run")
    assert run.finished and run.meta.seats["Cara"].architecture == "human:handover=true"
    assert not [e for e in run.events if isinstance(e, Failure)
                and e.seat in ("Bob", "Cara")]


def test_a_vote_may_answer_nobody_here_where_the_table_offers_it() -> None:
    script = load_script(TINY)
    agent, _, screen = seat(script, "Bob", "3", "")
    vote = CastVote(candidates=["Ann", "Cara", NOBODY], victim="Lord Vale")
    assert decide(agent, vote) == Vote(target=NOBODY)
    assert "  3) nobody here: no one at this table killed them" in screen.getvalue()
