"""Seed inputs for the fuzzer, one small valid example per loader in the shape its loader
reads (file names and folders as the real datasets lay them out), written by hand so that
the suite needs no dataset. Each is ``{relative path: bytes}``."""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path

import yaml
from openpyxl import Workbook
from PIL import Image

from jubensha.eval.playerlogs import EVALUATION_COLUMNS, TRANSCRIPT_COLUMNS
from jubensha.llm.base import Message, Request, Response
from jubensha.llm.replay import CassetteEntry

TESTS = Path(__file__).parents[1]
SRC = TESTS.parent / "src" / "jubensha"
TINY = (TESTS / "engine" / "tiny_script.yaml").read_bytes()
Files = dict[str, bytes]


def dumps(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def xlsx(rows: list[tuple[object, ...]]) -> bytes:
    book = Workbook()
    for row in rows:
        book.active.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    return buffer.getvalue()


def wellplay() -> Files:
    ann = {"script": "['Ann story']", "acts_goal": "['Find out']", "victims": ["Vic"],
           "kill_by_me": [1], "is_murderer": 1, "acts_num": 1}
    bob = {"script": ["Bob story"], "victims": ["Vic"], "kill_by_me": [0], "is_murderer": 0}
    return {"Tiny/json/script_info.json": dumps({"script_name": "Tiny", "acts_num": 1,
                                                  "character_name": ["Ann", "Bob"]}),
            "Tiny/json/Ann.json": dumps(ann), "Tiny/json/Bob.json": dumps(bob),
            "Tiny/final_result/Bob.csv": b"value,type,question,a,b,c,d,e,truth\n"
                                         b"a,a,Who killed Vic?,Ann,Bob,,,,a\n"}


def conan() -> Files:
    base = "english/data_final/001-Tiny"
    labels = {"Ann": [["Vic", "Victim of X, Hate of X"], ["Bob", "Friend of X"]],
              "Bob": [["Ann", "Friend of X"]]}
    return {f"{base}/txt/Ann.txt": b"Ann's story. I met Bob at nine.",
            f"{base}/txt/Bob.txt": b"Bob's story",
            f"{base}/txt_full/Ann.txt": b"Ann's whole story",
            f"{base}/purpose/Bob.txt": b"Find the killer",
            "english/label/001-Tiny/all.json": dumps(labels),
            "english/label/001-Tiny/Ann.json": dumps({"Ann": labels["Ann"]}),
            "english/equivalent_relation.json": dumps({"Hate of X": ["Enemy of X"]})}


def whodunitbench() -> Files:
    data = {
        "ju_name": "茶园", "murder": "林默", "reason": "林默在茶里下毒，杀死了周掌柜。",
        "task_nm": "找出凶手", "task_m": "隐瞒真相", "key_role": "林默",
        "public_clue": "周掌柜死在后堂。",
        "role": [{"name": "林默", "back": "你是账房。", "self": "我是账房", "m": 1,
                  "r_q": [{"q": "林默是谁？A. 账房 B. 跑堂", "ans": "A"}]},
                 {"name": "阿福", "back": "你是跑堂。", "self": "我是跑堂", "m": 0,
                  "r_q": []}],
        "key_clues_pool": {"p": ["茶碗里有砒霜。"], "1-step": ["林默买过老鼠药。"]},
        "key_clues_questions": [{"q": "谁是凶手？A. 林默 B. 阿福", "ans": "A",
                                 "source": "p"}],
        "key_clue_q": {"key_q": ["毒药是什么？A. 砒霜 B. 盐"], "key_ans": ["A"],
                       "key_sc": ["1-step"]},
        "ei_q": {"key_q": [], "key_ans": []}, "cxi_q": {"key_q": [], "key_ans": []}}
    return {"TINY/env_p_all.json": dumps(data), "TINY/img/image_1.png": png()}


def mirage() -> Files:
    parts = {"Story": "s", "Script": "x", "Relationship": "Bob: friend", "Performance": "p",
             "Purpose": "Conceal the fact that you killed Vic.", "Ability": ""}
    script = {"Ann": parts, "Bob": parts | {"Purpose": "Find the truth",
                                            "Relationship": "Vic: Deceased."}}
    return {"En/Tiny/script.json": dumps(script),
            "En/Tiny/clues.json": dumps({"Hall": ["A knife."], "Ann": ["A glove."]}),
            "En/Truth.json": dumps({"Tiny": "The real murderer of Vic is Ann."})}


def thinkthrice() -> Files:
    return {"game.json": (TESTS / "fixtures" / "thinkthrice" / "清风茶馆.json").read_bytes()}


def procedure() -> Files:
    return {"procedure.yaml": (SRC / "engine" / "presets" / "player.yaml").read_bytes()}


def spec() -> Files:
    text = yaml.safe_dump({"scripts": ["script.yaml"], "architectures": ["naive"],
                           "models": "scripted", "seeds": [0, 1], "embedder": "none",
                           "metrics": ["identification"], "model_options": {"latency_s": 0},
                           "wrappers": {"budget_per_game": {"max_calls": 1000}}})
    return {"spec.yaml": text.encode(), "script.yaml": TINY}


def options() -> Files:
    return {"options.yaml": yaml.safe_dump({"revote": {"revotes": 3},
                                            "factual": {"samples": 2}}).encode()}


def prices() -> Files:
    return {"prices.yaml": yaml.safe_dump({"gpt-4o-mini": {"input_per_1m": 0.15,
                                                           "output_per_1m": 0.6}}).encode()}


def sensors() -> Files:
    return {"sensors.yaml": (SRC / "prompts" / "player_star" / "sensors.yaml").read_bytes()}


def cassette() -> Files:
    lines = [CassetteEntry(key=f"k{i}", request=Request(
        messages=[Message(role="user", content=f"问题 {i}")], purpose="speak", seat="Ann"),
        response=Response(text=f"回答 {i}", model="fake") if i else None,
        error=None if i else "ModelError: down").model_dump_json() for i in range(3)]
    return {"cassette.jsonl": ("\n".join(lines) + "\n").encode()}


@cache
def run() -> Files:
    """A finished run folder of the tiny script, played once by the scripted fake."""
    import tempfile

    from typer.testing import CliRunner

    from jubensha.cli import app

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        result = CliRunner().invoke(app, ["play", str(TESTS / "engine" / "tiny_script.yaml"),
                                          "--model", "scripted", "--embedder", "none",
                                          "--out", str(out)])
        assert result.exit_code == 0, result.output
        return {f"run/{p.name}": p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def player_log() -> Files:
    rows = [TRANSCRIPT_COLUMNS,
            (0, "self introduction stage", "Li", "all", "I am Li.", "Your Script is Li..."),
            (1, "Li ask Wang for death of Zhao", "Li", "Wang", "Where were you?", None),
            (2, "Li ask Wang for death of Zhao", "Wang", "Li", "在家。", "")]
    return {"logs/Tiny/Tiny.xlsx": xlsx(rows)}


def player_evaluation() -> Files:
    rows: list[tuple[object, ...]] = [EVALUATION_COLUMNS]
    for i, (points, truth, answer, right) in enumerate([(10, "a", "A", 1), (5, "b", "", 1)]):
        rows.append(("Li", points, f"q{i}?", " A: x B: y C: z ", truth,
                     f'{{"reason": "r", "answer": "{answer}"}}', right))
    rows.append((None, None, 0.5, 0.5, 0.5, "1/2", 0.5))
    return {"evaluation_0.xlsx": xlsx(rows)}


SEEDS = {
    "script": lambda: {"script.yaml": TINY}, "procedure": procedure, "spec": spec,
    "options": options, "prices": prices, "sensors": sensors, "cassette": cassette,
    "run": run, "wellplay": wellplay, "conan": conan, "whodunitbench": whodunitbench,
    "mirage": mirage, "thinkthrice": thinkthrice, "player-log": player_log,
    "player-evaluation": player_evaluation,
}
