"""The extractive agent: it plays without a model, says only its own script's sentences, a
murderer never says one about its kill or its secrets, and it questions and votes by
lexical evidence, the same way every time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jubensha.agents.extractive import ExtractiveAgent
from jubensha.agents.extractive_knowledge import Guard, sheet_facts
from jubensha.agents.extractive_text import NameForms, first_person
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import (
    Accuse,
    AskQuestions,
    CastVote,
    Questions,
    RateStatement,
    Speak,
    TakeTurn,
)
from jubensha.engine.events import ActStarted, ClueRevealed, Failure, GameEnded, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure, find_procedure, presets
from jubensha.eval.vote_metrics import against_chance
from jubensha.memory.text import split_sentences, tokenize
from jubensha.scripts import Character, Script, bundled_scripts, load_script
from jubensha.scripts.importers.wellplay import import_wellplay

WELLPLAY = {
    # script folder → phrases of each murderer's kill, read off its story by hand
    "english/Sin (4 people closed)": ["pesticide", "basement", "bedboard"],
    "english/Deadly Fountain (4 people closed)": ["dagger", "fountain pool"],
    "chinese/罪恶（4人封闭）": ["农药", "地下室", "床板"],
    "chinese/致命喷泉（4人封闭）": ["匕首", "喷泉水池", "后心"],
}
_FILLER = {
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "he", "him", "his",
    "she", "her", "hers", "we", "us", "our", "they", "them", "their", "it", "its", "a", "an",
    "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as",
    "is", "was", "were", "are", "be", "been", "had", "has", "have", "did", "do", "not", "no",
    "that", "this", "there", "then", "so",
}


async def seated(script: Script, name: str, spec: str = "extractive",
                 seed: int = 3) -> ExtractiveAgent:
    agent = make_agent(spec)
    assert isinstance(agent, ExtractiveAgent)
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, name), seed=seed))
    return agent


def asked(text: str, by: str = "Someone") -> Speak:
    return Speak(kind="answer", question=Spoke(speaker=by, kind="question", text=text))


async def say(agent: ExtractiveAgent, decision: Speak) -> str:
    action = await agent.decide(decision)
    return action.text  # type: ignore[union-attr]


# -- the oracle of the withholding property ---------------------------------------------------
def content(text: str, names: set[str]) -> set[str]:
    return {t for t in tokenize(text, stopwords=True)
            if t not in _FILLER and t not in names and not t.isdigit()}


def kill_texts(script: Script, name: str) -> list[str]:
    """What a murderer must never tell: its secrets and, where the truth says how, its kill."""
    me = script.character(name)
    methods = [k.method for k in (script.truth.kills if script.truth else [])
               if name in k.killers and k.method]
    return [*me.secrets, *methods]


def leaks(text: str, forbidden: list[str], phrases: list[str], names: set[str]) -> list[str]:
    """Sentences of ``text`` that share three content words with a forbidden text, or that
    contain a phrase of the kill."""
    found = []
    for sentence in split_sentences(text):
        words = content(sentence, names)
        if any(len(words & content(f, names)) >= 3 for f in forbidden) or any(
                p.lower() in sentence.lower() for p in phrases):
            found.append(sentence)
    return found


def murderer_cases(datasets: Path | None) -> list[tuple[Script, str, list[str]]]:
    scripts = [(load_script(path), []) for path in bundled_scripts().values()]
    if datasets is not None:
        scripts += [(import_wellplay(datasets / "wellplay" / folder), phrases)
                    for folder, phrases in WELLPLAY.items()]
    return [(script, name, phrases) for script, phrases in scripts for name in script.murderers]


async def interrogate(script: Script, name: str, phrases: list[str]) -> list[str]:
    """Everything the murderer says when asked about its kill in every way we can think of,
    after it has read all its acts, plus its speeches of every other kind."""
    agent = await seated(script, name)
    for sheet in script.character(name).acts[1:]:
        await agent.observe(ActStarted(act=sheet.act, sheet=sheet, audience=[name]))
    victims = script.character(name).killed or [v.name for v in script.victims]
    forbidden = kill_texts(script, name)
    questions = [q for v in victims for q in (
        f"Did you kill {v}?", f"How did {v} die?", f"Where were you when {v} was killed?",
        f"你是不是杀了{v}？", f"{v}是怎么死的？", f"What did you use on {v}?")]
    questions += forbidden + [f"Tell us about the {p}." for p in phrases]
    questions += [fact.text for fact in agent.facts]  # its own script, sentence by sentence
    said = [await say(agent, asked(q, by=script.names[-1])) for q in questions]
    for kind in ("introduction", "statement", "reasoning", "clue_share", "accusation"):
        said.append(await say(agent, Speak(kind=kind, prompt="Speak.")))
    return said


def test_a_murderer_never_says_a_sentence_of_its_kill_or_its_secrets(
        request: pytest.FixtureRequest) -> None:
    try:
        datasets: Path | None = request.getfixturevalue("datasets")
    except pytest.skip.Exception:
        datasets = None
    checked = 0
    for script, name, phrases in murderer_cases(datasets):
        names = {t for n in script.names for t in tokenize(n)}
        said = asyncio.run(interrogate(script, name, phrases))
        forbidden = kill_texts(script, name)
        leaked = [s for text in said for s in leaks(text, forbidden, phrases, names)]
        assert not leaked, (script.id, name, leaked)
        answered = [t for t in said if t not in ("I don't know anything about that.",
                                                 "这件事我不清楚。")]
        assert answered, f"{name} in {script.id} never said anything from its script"
        checked += 1
    assert checked >= 4


def test_the_oracle_recognises_the_kill_sentences() -> None:
    """The check above is not blind: it flags the sentences of the murderer's own script
    that tell how it killed (which the guard must therefore withhold)."""
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    names = {t for n in script.names for t in tokenize(n)}
    story = split_sentences(script.character("Agnes Pike").story)
    flagged = [s for s in story if leaks(s, kill_texts(script, "Agnes Pike"), [], names)]
    assert any("struck him across the back of the head" in s for s in flagged)
    assert any("scrubbed the rolling pin" in s for s in flagged)


# -- the rules, one by one ---------------------------------------------------------------------
def rule_script() -> Script:
    story = [
        "You are Mara Quest, the gardener.",                   # 0 next to 1
        "Otto Brand hired you ten years ago.",                  # 1 names the victim
        "You like roses.",                                      # 2 next to 1
        "You prune them every morning.",                        # 3 sayable
        "Later you dusted the shelves.",                        # 4 next to 5
        "The brass key opens the cellar.",                      # 5 two words of the secret
        "Thunder rolled over the hills.",                       # 6 next to 5
        "You walked past the greenhouse twice.",                # 7 sayable
        "The orchard was quiet.",                               # 8 next to 9
        "At 21:40 you were near the well.",                     # 9 the secret's time
        "The moon rose.",                                       # 10 next to 9
        "You fed the hens.",                                    # 11 sayable
        "The wind dropped.",                                    # 12 next to 13
        "At 22:05 you struck Otto Brand with the spade.",       # 13 a killing word
        "Rain began.",                                          # 14 next to 13
        "You sang softly.",                                     # 15 sayable
        "At 22:05 the church bell rang.",                       # 16 the time of the kill
        "You read a letter.",                                   # 17 sayable
        "The spade was back in the shed by dawn.",              # 18 a word of the scene
    ]
    killer = Character(
        name="Mara Quest", side="murderer", killed=["Otto Brand"], story="\n".join(story),
        secrets=["You hid the brass key under the loose flagstone at 21:40."],
        timeline=[{"time": "22:06", "text": "Otto Brand lay still beside the spade."}])
    return Script(id="rules", title="Rules", language="en", victims=[{"name": "Otto Brand"}],
                  characters=[killer, Character(name="Lee Wong")])


def test_each_withholding_rule() -> None:
    script = rule_script()
    sheet = CharacterSheet.for_seat(script, "Mara Quest")
    names = NameForms({"Otto Brand": ["Otto Brand"], "Mara Quest": ["Mara Quest"],
                       "Lee Wong": ["Lee Wong"]})
    guard = Guard(sheet, names, ExtractiveAgent().config)
    facts = sheet_facts(sheet.me, "en", include_secrets=False)
    withheld = guard.withheld(facts)
    reasons = {facts[i].text: why for i, why in withheld.items()}
    story = split_sentences(sheet.me.story)
    expected = {1: "victim", 5: "secret", 9: "secret", 13: "kill word", 16: "crime time",
                18: "scene word"}
    expected |= {i: "next to a withheld sentence" for i in (0, 2, 4, 6, 8, 10, 12, 14)}
    assert {i: reasons.get(s) for i, s in enumerate(story) if s in reasons} == expected
    assert reasons["At 22:06: Otto Brand lay still beside the spade."] == "victim"


def test_a_civilian_withholds_nothing_and_answers_truthfully() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    tom = asyncio.run(seated(script, "Tom Hale"))
    assert tom.guard is None and len(tom.sayable) == len(tom.facts)
    answer = asyncio.run(say(tom, asked("Tom, where are the whisky crates hidden?")))
    assert "sea cave" in answer
    assert "you" not in answer.lower().split()  # told in the first person


def test_acts_are_learned_once_and_judged_with_what_came_before() -> None:
    script = load_script(bundled_scripts()["halvard-observatory"])
    julian = script.character("Julian Ashby")

    async def acts() -> tuple[int, int, ExtractiveAgent]:
        agent = await seated(script, "Julian Ashby")
        before = len(agent.facts)
        await agent.observe(ActStarted(act=1, sheet=julian.acts[0], audience=[julian.name]))
        again = len(agent.facts)
        await agent.observe(ActStarted(act=2, sheet=julian.acts[1], audience=[julian.name]))
        return before, again, agent

    before, again, agent = asyncio.run(acts())
    assert before == again < len(agent.facts)
    act_two = [n for n, f in enumerate(agent.facts) if f.doc == agent.facts[-1].doc]
    assert "Henry Quill is dead" in agent.facts[act_two[0]].text
    assert act_two[0] in agent.blocked


@pytest.mark.parametrize(("second", "first"), [
    ("You went out by the back door.", "I went out by the back door."),
    ("He told you to get out, and you left.", "He told me to get out, and I left."),
    ("You are Agnes Pike and your husband drowned.", "I am Agnes Pike and my husband drowned."),
    ("You're late; you've seen it yourself.", "I'm late; I've seen it myself."),
    ('He shouted, "You forged my name!" at you.', 'He shouted, "You forged my name!" at me.'),
    ("Were you there? Yours was the last.", "Were I there? Mine was the last."),
    ("你叫钱守仁，今年五十二岁。", "我叫钱守仁，今年五十二岁。"),
])
def test_the_script_is_retold_in_the_first_person(second: str, first: str) -> None:
    assert first_person(second) == first


# -- evidence, questions and votes -------------------------------------------------------------
def test_questions_and_votes_go_to_the_seat_the_evidence_points_at() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def play() -> tuple[Questions, str | None, str | None, int]:
        nora = await seated(script, "Nora Vance")
        await nora.observe(ClueRevealed(
            clue_id="x", text="Flour on the tower stairs where Elias Thorne died matches the "
            "rolling pin Samuel Reed carried, and there was blood on it.", audience="public"))
        ask = await nora.decide(AskQuestions(candidates=["Tom Hale", "Samuel Reed",
                                                         "Agnes Pike"], count=2))
        vote = await nora.decide(CastVote(candidates=["Tom Hale", "Samuel Reed",
                                                      "Agnes Pike"]))
        accuse = await nora.decide(Accuse(candidates=["Tom Hale", "Samuel Reed",
                                                      "Agnes Pike"]))
        rating = await nora.decide(RateStatement(statement=Spoke(
            speaker="Samuel Reed", kind="statement", text="I was in the parlour.")))
        assert isinstance(ask, Questions)
        return ask, vote.target, accuse.target, rating.doubt  # type: ignore[union-attr]

    ask, vote, accuse, doubt = asyncio.run(play())
    assert ask.target == vote == accuse == "Samuel Reed"
    assert len(ask.questions) == 2 and all(q.startswith("Samuel Reed") for q in ask.questions)
    assert doubt == 2


def test_an_account_that_contradicts_the_own_script_raises_suspicion() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def bonus(text: str) -> float:
        tom = await seated(script, "Tom Hale")  # Tom played cribbage with Dr. Reed at 22:10
        await tom.observe(Spoke(speaker="Samuel Reed", kind="answer", text=text))
        return tom.bonus["Samuel Reed"]

    assert asyncio.run(bonus("At 22:10 I was alone in my room reading.")) > 0
    assert asyncio.run(bonus("At 22:10 I played cribbage with Tom at the parlour window.")) == 0


def test_reasoning_names_a_method_and_a_motive() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    nora = asyncio.run(seated(script, "Nora Vance"))
    text = asyncio.run(say(nora, Speak(kind="reasoning", prompt="How and why?")))
    assert text.startswith("I suspect ") and "Modus operandi: " in text and "Motive: " in text


def test_open_turns_alternate_questions_and_searches() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def turns() -> list[str]:
        nora = await seated(script, "Nora Vance")
        decision = TakeTurn(candidates=["Tom Hale", "Agnes Pike"], locations=["yard", "cave"])
        return [(await nora.decide(decision)).type for _ in range(4)]

    assert asyncio.run(turns()) == ["questions", "investigate", "questions", "investigate"]


def test_a_seat_whose_answers_say_nothing_of_the_crime_is_suspected() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def suspect() -> list[tuple[str, float]]:
        nora = await seated(script, "Nora Vance")
        for speaker, text in (
                ("Tom Hale", "Elias Thorne lay dead at the foot of the stairs; he was struck."),
                ("Samuel Reed", "The blow that killed Elias Thorne came from a round bar."),
                ("Agnes Pike", "The bread was rising and the kettle sang all evening.")):
            await nora.observe(Spoke(speaker=speaker, kind="answer", text=text))
        return nora.suspicion(["Tom Hale", "Samuel Reed", "Agnes Pike"], None)

    ranking = asyncio.run(suspect())
    assert ranking[0][0] == "Agnes Pike"


def test_a_clue_counts_as_much_as_the_place_where_the_crime_points() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def evidence(place: str) -> float:
        nora = await seated(script, "Nora Vance", "extractive:evasion_weight=0")
        await nora.observe(ClueRevealed(clue_id="a", text="The rolling pin was scrubbed; "
                                        "Elias Thorne was struck with it.", location="Kitchen",
                                        audience="public"))
        await nora.observe(ClueRevealed(clue_id="b", text="Agnes Pike's shawl hangs soaked.",
                                        location=place, audience="public"))
        return nora.evidence.totals(nora.crime_query(None))["Agnes Pike"]

    assert asyncio.run(evidence("Kitchen")) > asyncio.run(evidence("Boathouse")) + 1


def test_it_questions_every_other_seat_before_asking_one_again() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])

    async def targets() -> list[str]:
        nora = await seated(script, "Nora Vance")
        candidates = ["Tom Hale", "Samuel Reed", "Agnes Pike"]
        return [(await nora.decide(AskQuestions(candidates=candidates, count=1))).target
                for _ in range(4)]  # type: ignore[union-attr]

    asked_first = asyncio.run(targets())
    assert sorted(asked_first[:3]) == ["Agnes Pike", "Samuel Reed", "Tom Hale"]


def test_a_chinese_surname_with_an_honorific_names_its_seat() -> None:
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    agent = asyncio.run(seated(script, "周妈"))
    assert agent.names.mentioned("钱先生一个人站在灶台边。") == ["钱守仁"]


def test_it_beats_random_voting_on_every_bundled_mystery() -> None:
    """Identification against random voting on the same ballots, every seat extractive,
    every preset (the demo with two rounds, as the experiments page's spec plays it), two
    seeds; bench/extractive_floor.py measures five, and imported scripts."""
    for script_id, path in bundled_scripts().items():
        script = load_script(path)
        hits = cast = 0
        chance = 0.0
        for preset in presets():
            procedure = find_procedure(preset).with_options(
                rounds=2 if preset == "demo" else None)
            for seed in (0, 1):
                game = play(script, procedure, seed)
                found = against_chance(script, procedure.voting, game.table.seats,
                                       game.table.state.votes)
                hits, cast, chance = hits + found[0], cast + found[1], chance + found[2]
        assert hits > chance * 1.25, (script_id, hits, cast, chance)  # a clear margin


# -- the agent as a player ---------------------------------------------------------------------
def test_options_are_parsed_and_bad_ones_named() -> None:
    agent = make_agent("extractive:answer_sentences=3+voice=verbatim")
    assert isinstance(agent, ExtractiveAgent)
    assert (agent.config.answer_sentences, agent.config.voice) == (3, "verbatim")
    with pytest.raises(AgentSpecError, match="colour"):
        make_agent("extractive:colour=red")
    with pytest.raises(AgentSpecError, match="write key=value"):
        make_agent("extractive:spread")


def play(script: Script, procedure: str | Procedure = "demo", seed: int = 2) -> Game:
    chosen = find_procedure(procedure) if isinstance(procedure, str) else procedure
    game = Game(script, chosen,
                {n: Seat(make_agent("extractive")) for n in script.names}, seed=seed)
    asyncio.run(game.run())
    return game


def test_the_same_seed_plays_the_same_game() -> None:
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    events = [[e.model_dump(mode="json", exclude={"time"}) for e in play(script).table.events]
              for _ in range(2)]
    assert events[0] == events[1]


@pytest.mark.parametrize("preset", presets())
@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_it_finishes_every_bundled_mystery_with_every_preset(script_id: str,
                                                              preset: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    events = play(script, preset).table.events
    assert not [e.error for e in events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in events)
    answers = [e for e in events if isinstance(e, Spoke) and e.kind == "answer"]
    assert answers and all(e.text for e in answers)


@pytest.mark.datasets
@pytest.mark.parametrize("folder", ["english/Sin (4 people closed)",
                                    "chinese/幽灵复仇（7人)"])
def test_it_finishes_imported_wellplay_scripts(datasets: Path, folder: str) -> None:
    script = import_wellplay(datasets / "wellplay" / folder)
    events = play(script, "player").table.events
    assert not [e.error for e in events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in events)
