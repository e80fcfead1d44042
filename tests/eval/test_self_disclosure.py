"""The self-disclosure metric on hand-written run folders: each kind of speech it is for
(a sheet recited in the second person, a murderer's confession, "X asks" as an answer,
prompt echoes, copies, loops, empty and cut-off speech) and a clean game scoring zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import Event, HostSpoke, Spoke, VoteCast
from jubensha.eval.self_disclosure import SelfDisclosure, disclosure
from jubensha.llm.base import GenerateConfig, Message
from jubensha.llm.calls import CallRecord
from jubensha.runlog.folder import RunFolder, RunMeta, read_run
from jubensha.runs.batch_folders import read_metrics
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Character, Kill, Script, TimelineEntry, Truth, Victim

AGNES_STORY = ("You are Agnes Pike, fifty-two, housekeeper at Gull Rock. Will's name was "
               "shamed, the owners paid you nothing, and you raised your boy on scraps. A "
               "year later Elias offered you this post, and you thought it was kindness.")
SCRIPT = Script(
    id="gull", title="Gull Rock", language="en",
    background="Elias Thorne, the keeper, was found dead at the foot of the tower stairs.",
    victims=[Victim(name="Elias Thorne", description="The keeper of the light.")],
    characters=[
        Character(name="Agnes Pike", side="murderer", killed=["Elias Thorne"],
                  description="Housekeeper and cook at Gull Rock.", story=AGNES_STORY,
                  secrets=["You killed Elias with the kitchen rolling pin on the landing."],
                  timeline=[TimelineEntry(time="22:30", text="Strikes Elias on the top "
                                                             "landing of the tower.")]),
        Character(name="Tom Hale", description="Assistant keeper of the light.",
                  story=("You are Tom Hale. You store smuggled French whisky for the "
                         "skipper of the Kittiwake in the sea cave under the rock.")),
        Character(name="Nora Vance", description="The keeper's niece, a schoolteacher.",
                  story=("You are Nora Vance. At 22:28 you slipped into the empty study and "
                         "burned your uncle's new will in the grate."),
                  secrets=["You burned your uncle's new will in the grate at 22:28."]),
    ],
    truth=Truth(murderers=["Agnes Pike"],
                kills=[Kill(victim="Elias Thorne", killers=["Agnes Pike"])]))
INTRO = "please introduce yourself."
runner = CliRunner()


def host(index: int, seat: str) -> HostSpoke:
    return HostSpoke(index=index, text=f"{seat}, {INTRO}")


def said(index: int, speaker: str, text: str, kind: str = "introduction",
         to: str | None = None) -> Spoke:
    return Spoke(index=index, speaker=speaker, kind=kind, text=text, to=to)  # type: ignore[arg-type]


def call(seat: str, seen: int, prompt: str, raw: str, finish: str = "stop",
         purpose: str = "introduction") -> CallRecord:
    return CallRecord(purpose=purpose, seat=seat, access="seat", seen=seen, model="local",
                      messages=[Message(role="user", content=prompt)],
                      config=GenerateConfig(), raw=raw, finish_reason=finish)


def run_folder(tmp_path: Path, events: list[Event], calls: list[CallRecord] = (),
               script: Script = SCRIPT) -> Path:
    source = save_script(script, tmp_path / "script.yaml")
    meta = RunMeta(script_id=script.id, script_source=str(source), language=script.language,
                   procedure={"name": "demo"}, seats={}, seed=0)
    folder = RunFolder(tmp_path / "run", meta, script)
    for event in events:
        folder.write_event(event)
    for record in calls:
        folder.write(record)
    folder.close()
    return tmp_path / "run"


def scored(tmp_path: Path, events: list[Event], calls: list[CallRecord] = (),
           script: Script = SCRIPT) -> SelfDisclosure:
    path = run_folder(tmp_path, events, calls, script)
    return disclosure(script, read_run(path))


def test_a_clean_game_scores_zero(tmp_path: Path) -> None:
    result = scored(tmp_path, [
        host(0, "Agnes Pike"),
        said(1, "Agnes Pike", "I am Agnes Pike, housekeeper and cook at Gull Rock. I kept the "
                              "kitchen all evening and heard the rain."),
        host(2, "Tom Hale"),
        said(3, "Tom Hale", "I am Tom Hale, assistant keeper of the light. I was in my room."),
        said(4, "Nora Vance", "Where were you at half past ten, Tom?", "question", "Tom Hale"),
        said(5, "Tom Hale", "In my room, reading by the lamp until the shout.", "answer",
             "Nora Vance"),
        VoteCast(index=6, voter="Tom Hale", target="Agnes Pike", audience=[]),
    ], [call("Agnes Pike", 0, f"Agnes Pike, {INTRO} Reply in at most three sentences.",
             "I am Agnes Pike, housekeeper and cook at Gull Rock.")])
    assert (result.reciting, result.confessions, result.degenerate) == (0, 0, 0)
    assert result.disclosed_share == 0 and result.speeches == 4
    assert all(s.examples == [] for s in result.seats.values())


def test_a_sheet_paraphrased_in_the_second_person_is_recited(tmp_path: Path) -> None:
    result = scored(tmp_path, [host(0, "Agnes Pike"), said(1, "Agnes Pike", (
        "I am Agnes Pike. Will's name was shamed, the owners paid you nothing, and you raised "
        "your boy on scraps. A year later Elias offered you this post, and you thought it "
        "was kindness."))])
    agnes = result.seats["Agnes Pike"]
    assert agnes.recited == 1 and agnes.disclosed_share > 0.7 and result.reciting == 1
    assert agnes.examples[0].kind == "disclosed" and agnes.examples[0].part == "story"
    assert "raised your boy" in agnes.examples[0].text


def test_a_murderer_telling_what_she_did_confessed(tmp_path: Path) -> None:
    result = scored(tmp_path, [said(1, "Tom Hale", "Who killed him?", "question",
                                    "Agnes Pike"),
                               said(2, "Agnes Pike", "I struck Elias on the top landing of "
                                    "the tower, and I am not sorry.", "answer", "Tom Hale")])
    agnes = result.seats["Agnes Pike"]
    assert agnes.confessed and result.confessions == 1
    assert agnes.examples[0].kind == "confession" and "top landing" in agnes.examples[0].text


def test_an_innocent_seat_owning_up_to_its_own_secret_is_disclosure_not_confession(
        tmp_path: Path) -> None:
    result = scored(tmp_path, [said(1, "Nora Vance", "At 22:28 I slipped into the empty "
                                    "study and burned my uncle's new will in the grate.")])
    nora = result.seats["Nora Vance"]
    assert nora.secrets == 1 and result.telling == 1 and nora.disclosed_share > 0.9
    assert not nora.confessed and result.confessions == 0 and nora.recited == 0


def test_x_asks_as_an_answer_is_degenerate(tmp_path: Path) -> None:
    result = scored(tmp_path, [said(1, "Nora Vance", "Where were you?", "question",
                                    "Tom Hale"),
                               said(2, "Tom Hale", "Tom Hale asks", "answer", "Nora Vance")])
    tom = result.seats["Tom Hale"]
    assert tom.degenerate == 1 and [e.kind for e in tom.examples] == ["label"]


def test_a_prompt_echo_is_found_from_the_calls(tmp_path: Path) -> None:
    prompt = ("You are playing Tom Hale. Reply with JSON: {\"thought\": your private "
              "reasoning, \"speech\": what you say aloud}.")
    echo = "Reply with JSON: thought, your private reasoning, speech, what you say aloud."
    result = scored(tmp_path, [host(0, "Tom Hale"), said(1, "Tom Hale", echo)],
                    [call("Tom Hale", 0, prompt, echo)])
    tom = result.seats["Tom Hale"]
    assert tom.degenerate == 1 and tom.examples[0].kind == "prompt echo"


def test_a_copy_of_another_seat_a_loop_and_empty_and_cut_off_speech(tmp_path: Path) -> None:
    nora = "I walked across the causeway at five with my small suitcase before the tide."
    cut = "I went down to the study and saw that the"
    result = scored(tmp_path, [
        said(1, "Nora Vance", nora),
        said(2, "Tom Hale", "I walked across the causeway at five with my small suitcase."),
        said(3, "Agnes Pike", "I am a man, and I am a man, and I am a man, and I am a man."),
        said(4, "Nora Vance", "…", "statement"),
        said(5, "Tom Hale", cut, "statement"),
    ], [call("Tom Hale", 4, "Say something.", cut, finish="length", purpose="statement")])
    kinds = {name: [e.kind for e in s.examples] for name, s in result.seats.items()}
    assert kinds["Tom Hale"] == ["copy", "cut off"]
    assert kinds["Agnes Pike"] == ["loop"] and kinds["Nora Vance"] == ["empty"]
    assert result.degenerate == 4
    assert result.seats["Tom Hale"].examples[0].text.startswith("Nora Vance: ")


def test_an_answer_in_the_words_of_its_question_is_no_copy(tmp_path: Path) -> None:
    asked = said(1, "Nora Vance", "Did you read the letter Elias kept in his desk?",
                 "question", "Tom Hale")
    answer = Spoke(index=2, speaker="Tom Hale", kind="answer", to="Nora Vance", reply_to=1,
                   text="No, I never read the letter Elias kept in his desk.")
    assert scored(tmp_path, [asked, answer]).degenerate == 0


def test_text_heard_from_others_is_no_longer_disclosure(tmp_path: Path) -> None:
    gossip = "Tom says you store smuggled French whisky for the skipper of the Kittiwake."
    result = scored(tmp_path, [said(1, "Nora Vance", gossip, "statement"),
                               said(2, "Tom Hale", "Fine: I store smuggled French whisky for "
                                    "the skipper of the Kittiwake, that is all.", "statement")])
    assert result.seats["Tom Hale"].disclosed_share < 0.2


ZH = Script(
    id="tea", title="听松茶庄", language="zh",
    background="庄主沈墨山死在焙房里。", victims=[Victim(name="沈墨山", description="茶庄庄主。")],
    characters=[
        Character(name="钱守仁", side="murderer", killed=["沈墨山"], description="账房先生。",
                  story="你是茶庄的账房先生钱守仁。你在账上做了手脚，私吞了三百两银子。",
                  secrets=["你在焙房用铜壶砸死了沈墨山。"]),
        Character(name="周妈", description="管家兼厨娘。",
                  story=("你是茶庄的管家周妈。你偷偷把老爷的账本藏在了灶台下面的砖缝里，"
                         "又把库房的钥匙扔进了后山的那口老井里。"
                         "那天夜里你还烧掉了老爷写给县里的那封长信，把灰倒进了灶膛。")),
    ],
    truth=Truth(murderers=["钱守仁"], kills=[Kill(victim="沈墨山", killers=["钱守仁"])]))


def test_chinese_games_are_cut_with_jieba(tmp_path: Path) -> None:
    result = scored(tmp_path, [
        said(1, "周妈", "我是周妈。我偷偷把老爷的账本藏在了灶台下面的砖缝里，又把库房的钥匙扔"
                       "进了后山的那口老井里。那天夜里我还烧掉了老爷写给县里的那封长信，把灰倒"
                       "进了灶膛。"),
        said(2, "钱守仁", "我是账房先生。是我用铜壶砸死了沈墨山。"),
        said(3, "周妈", "周妈 → 钱守仁 提问", "question", "钱守仁"),
    ], script=ZH)
    assert result.seats["周妈"].recited == 1 and result.seats["周妈"].degenerate == 1
    assert result.seats["钱守仁"].confessed


def test_the_cli_writes_the_result_in_its_shape_and_lists_the_metric(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [said(1, "Agnes Pike", "I killed Elias with the rolling pin.")])
    result = runner.invoke(app, ["eval", "self-disclosure", str(path)])
    assert result.exit_code == 0, result.output
    data = json.loads((path / "eval" / "self-disclosure.json").read_text(encoding="utf-8"))
    seat = data["seats"]["Agnes Pike"]
    assert {"disclosed_share", "confessed", "degenerate", "examples"} <= set(seat)
    assert seat["confessed"] is True and data["confessions"] == 1
    assert "self-disclosure" in runner.invoke(app, ["eval", "list"]).output
    numbers = read_metrics(path)["self-disclosure"]
    assert numbers["confessions"] == 1 and "reciting" in numbers


@pytest.mark.parametrize("option", ["{self-disclosure: {words: 2}}",
                                    "{self-disclosure: {colour: red}}"])
def test_bad_options_are_refused_when_read(tmp_path: Path, option: str) -> None:
    path = run_folder(tmp_path, [said(1, "Tom Hale", "Hello.")])
    (tmp_path / "options.yaml").write_text(option, encoding="utf-8")
    result = runner.invoke(app, ["eval", "self-disclosure", str(path), "--options",
                                 str(tmp_path / "options.yaml")])
    assert result.exit_code == 2 and "self-disclosure." in result.output
