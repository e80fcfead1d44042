"""The MIRAGE metrics read as the release's code computes them (``--reading release``).

Every expected number here was computed by the release's own functions (lime728/MIRAGE
@ce31b1b: ``data_loader.cal_rouge_l``, and ``MOO.run`` with ``BaseEnv.query``, ``belief``,
``vote_stage``, ``end_stage``, ``rouge_eval``, ``llms_eval`` and ``save_result``), run
outside this repository on the same inputs with a scripted stand-in for its model calls.
Only the numbers are kept. The two-stage games were played on
``fixtures/mirage_release/Zh/海上余生``, a script made for these tests."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from jubensha.engine.events import ActStarted, Event, Rated, Spoke, VoteCast
from jubensha.eval.mirage import mirage_metric
from jubensha.eval.registry import MetricContext
from jubensha.eval.text import release_tokens, rouge_l, rouge_l_release
from jubensha.eval.vote_metrics import victim_label
from jubensha.eval.votes import culprit_rank
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunLog
from jubensha.scripts.importers import import_script
from jubensha.scripts.importers.mirage import import_mirage
from jubensha.scripts.importers.mirage_release import RELEASE_PART_KEY
from jubensha.scripts.model import Script

FIXTURES = Path(__file__).parents[1] / "fixtures" / "mirage_release"
RELEASE = {"reading": "release"}


# -- ROUGE-L ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("hypothesis", "reference", "expected"), [
    # A blank line and a sentence-final newline each add an empty token on both sides.
    ("我在黄昏点亮了灯塔。\n\n他走了。", "我在黄昏点亮了灯塔。\n他没有走！\n", 0.7999999950080001),
    ("灯塔的灯灭了。\n\n\n我去了厨房。", "那天晚上，灯塔的灯灭了。\n\n我一个人去了厨房。\n\n没有人看见我。\n",
     0.5882352895501731),
    ("他说：“我没有杀人。”她不信。", "他说：“我没有杀人。”\n她相信了他？", 0.7692307642603551),
    ("我们……等了很久", "我们……等了很久。", 0.9333333283555556),
    ("The keeper lit the lamp at dusk.\n\nNobody saw him.",
     "At dusk the keeper lit the lamp.\nNobody saw him!\n", 0.6399999950080001),
    ("The keeper lit the lamp", "the Keeper lit the lamp.", 0.5454545404958678),
])
def test_release_rouge_l_equals_the_releases_cal_rouge_l(hypothesis: str, reference: str,
                                                         expected: float) -> None:
    assert rouge_l_release(hypothesis, reference) == pytest.approx(expected, abs=1e-12)


def test_release_tokens_keep_an_empty_token_for_each_blank_piece() -> None:
    # The release's tokens: the cut after "。" and the blank line leave two blank pieces.
    assert release_tokens("灯灭了。\n\n我走了。") == ["灯灭了", "。", "", "", "我", "走", "了", "。"]
    assert release_tokens("The Keeper, at dusk.") == ["The", "Keeper", ",", "at", "dusk", "."]
    # Ours drops punctuation and case and counts Chinese by character: another number.
    assert rouge_l("The keeper lit the lamp", "the Keeper lit the lamp.").fmeasure == 1.0


def test_release_rouge_l_of_an_empty_or_blank_text_is_zero() -> None:
    assert rouge_l_release("", "灯塔") == 0.0 and rouge_l_release("灯塔", "") == 0.0
    # The release raises "Hypothesis is empty." here; its judge never returns such a text.
    assert rouge_l_release(" \n ", "灯塔") == 0.0


def script_pairs(folder: Path) -> list[tuple[str, str, str]]:
    """Each raw part text of a MIRAGE script file as the reference, the next one in file
    order as the hypothesis, both cut to 1,200 characters (the release's LCS table is
    quadratic in memory)."""
    path = next(p for p in sorted(folder.iterdir()) if p.name in ("script.json", "人物剧本.json"))
    texts: list[tuple[str, str]] = []

    def leaves(data: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for key, value in data.items():
            if isinstance(value, dict):
                leaves(value, (*prefix, key))
            elif isinstance(value, str) and value:
                texts.append(("/".join((*prefix, key)), value))

    leaves(json.loads(path.read_text(encoding="utf-8")), ())
    return [(name, texts[(i + 1) % len(texts)][1][:1200], ref[:1200])
            for i, (name, ref) in enumerate(texts)]


def test_release_rouge_l_matches_the_release_on_the_mirage_scripts(datasets: Path) -> None:
    expected = json.loads((FIXTURES / "release_rouge.json").read_text(encoding="utf-8"))
    compared: dict[str, int] = {"Zh": 0, "En": 0}
    for key, value in expected.items():
        lang, folder, part = key.split("/", 2)
        pairs = {name: (h, r) for name, h, r in script_pairs(datasets / "mirage" / lang / folder)}
        hypothesis, reference = pairs[part]
        assert rouge_l_release(hypothesis, reference) == pytest.approx(value, abs=1e-6), key
        compared[lang] += 1
    assert compared == {"Zh": 398, "En": 398}


# -- the release's reference texts -----------------------------------------------------------
def test_the_importer_keeps_the_texts_the_release_compares_with(datasets: Path) -> None:
    expected = json.loads((FIXTURES / "release_parts.json").read_text(encoding="utf-8"))
    scripts: dict[str, Script] = {}
    differ = set()
    for key, digest in expected.items():
        lang, folder, name, part = key.split("/")
        if f"{lang}/{folder}" not in scripts:  # once a script, not once a part
            scripts[f"{lang}/{folder}"] = import_mirage(datasets / "mirage" / lang / folder)
        script = scripts[f"{lang}/{folder}"]
        character = script.character(name)
        text = script.metadata.extra[RELEASE_PART_KEY][character.name][part.lower().replace(
            "relationship", "relationships")]
        if hashlib.sha256(text.encode()).hexdigest()[:16] != digest:
            differ.add((folder, part))
    # Only the public clues that MOC.run writes into one script's stories and scripts.
    assert differ == {(f, p) for f in ("大明星最后的演出", "The Final Performance of a Big Star")
                      for p in ("Story", "Script")}
    assert len(expected) == 444


def test_a_later_stage_appends_every_part_as_the_release_does() -> None:
    script = import_mirage(FIXTURES / "Zh" / "海上余生")
    paul = script.metadata.extra[RELEASE_PART_KEY]["保罗"]
    assert paul["story"] == "你是保罗，船上的水手。\n你醒来时船长已经不见了。"
    assert paul["purpose"] == "找出凶手。找出湿衣服的主人。"  # not only Story and Script
    assert paul["ability"] == ""


# -- a two-stage game --------------------------------------------------------------------------
Step = tuple[str, int, int] | str


def game(steps: list[Step], votes: list[str]) -> RunLog:
    """The release's game as our run log: its ratings in order (speaker, doubt, trust),
    each stage's start, and the players' votes (玛丽, 约翰, 保罗 in turn)."""
    events: list[Event] = []
    act = 0
    for step in steps:
        if step == "stage":
            act += 1
            events.append(ActStarted(act=act, audience=["玛丽"]))
        else:
            speaker, doubt, trust = step
            events.append(Rated(rater="judge", speaker=speaker, statement=len(events),
                                trust=trust, doubt=doubt, audience=[]))
    events += [VoteCast(voter=voter, target=target, audience=[])
               for voter, target in zip(["玛丽", "约翰", "保罗"], votes)]
    events.append(Spoke(speaker="玛丽", kind="statement", text="我在厨房。"))
    return RunLog(Path("crafted"), None, [e.model_copy(update={"index": i})
                                          for i, e in enumerate(events)], [], None)


SEED_4 = ["stage", ("玛丽", 0, 1), ("约翰", 0, 2), ("保罗", 1, 1), ("玛丽", 0, 0), ("约翰", 0, 0),
          ("约翰", 1, 2), ("保罗", 1, 0), ("保罗", 0, 2), ("玛丽", 2, 1), "stage", ("玛丽", 1, 0),
          ("约翰", 0, 1), ("约翰", 0, 0), ("保罗", 2, 1), ("保罗", 1, 0), ("玛丽", 0, 1)]
SEED_7 = ["stage", ("玛丽", 1, 0), ("约翰", 1, 2), ("保罗", 0, 0), ("玛丽", 2, 0), ("约翰", 1, 2),
          ("约翰", 0, 2), ("保罗", 0, 0), ("保罗", 0, 1), ("玛丽", 1, 0), "stage", ("玛丽", 0, 0),
          ("约翰", 2, 1), ("约翰", 0, 2), ("保罗", 0, 0), ("保罗", 2, 2), ("玛丽", 2, 0)]


@pytest.fixture(scope="module")
def two_stage() -> Script:
    # Its truth.yaml names the culprit: the one-line truth text is too thin to derive it.
    return import_script("mirage", FIXTURES / "Zh" / "海上余生")


def indices(script: Script, run: RunLog, **kwargs: Any) -> Any:
    return asyncio.run(mirage_metric(MetricContext(script=script, run=run, **kwargs)))


def test_the_release_counts_only_the_last_stages_ratings(two_stage: Script) -> None:
    run = game(SEED_4, ["约翰", "保罗", "保罗"])
    release = indices(two_stage, run, options={"mirage": RELEASE})
    # The release: fii per candidate 0.5, 0.0, 0.75, mean 0.41666...; TII is its complement.
    assert [release.trust.received[n].tii for n in two_stage.names] == [0.5, 1.0, 0.25]
    assert release.trust.tii == pytest.approx(1 - 0.4166666666666667, abs=1e-12)
    assert release.trust.fii == pytest.approx(0.4166666666666667, abs=1e-12)  # its own value
    [table] = release.tables()
    assert table.columns[3:7] == ["TII (ours)", "fii (release)", "CIC (ours)",
                                  "clue count (release)"]
    assert table.rows[0][3:5] == ["58.33", "41.67"]
    # Its ranking: 保罗 8, 约翰 2, 玛丽 0 (votes x 3 + doubt - trust of the last stage).
    victim = victim_label(two_stage, None)  # a single vote: on the script's victim
    assert victim != "-" and victim == ", ".join(v.name for v in two_stage.victims)
    assert release.victory.scores[victim] == {"玛丽": 0.0, "约翰": 2.0, "保罗": 8.0}
    assert release.victory.ranks == {victim: 2}
    ours = indices(two_stage, run)  # every stage: 保罗 7, 玛丽 0, 约翰 -1
    assert ours.trust.tii == pytest.approx((3 / 6 + 5 / 6 + 4 / 9) / 3)
    assert ours.trust.fii is None and "fii (release)" not in ours.tables()[0].columns
    assert ours.victory.ranks == {victim: 3}


def test_the_release_breaks_a_tie_in_script_order(two_stage: Script) -> None:
    run = game(SEED_7, ["保罗", "保罗", "约翰"])
    release = indices(two_stage, run, options={"mirage": RELEASE})
    # The release's ranking: 保罗 6, then 玛丽 and 约翰 on 2 in script order.
    victim = victim_label(two_stage, None)
    assert release.victory.scores[victim] == {"玛丽": 2.0, "约翰": 2.0, "保罗": 6.0}
    assert release.victory.ranks == {victim: 3}
    assert release.trust.tii == pytest.approx(1 - 0.6333333333333333, abs=1e-12)
    assert release.trust.fii == pytest.approx(0.6333333333333333, abs=1e-12)
    scores = release.victory.scores[victim]
    assert culprit_rank(scores, {"约翰"}, two_stage.names, "optimistic") == 2
    assert culprit_rank(scores, {"约翰"}, two_stage.names, "pessimistic") == 3
    assert culprit_rank(scores, {"约翰"}, ["约翰", "玛丽", "保罗"], "order") == 2


# -- SCI -----------------------------------------------------------------------------------------
ABILITY_SCORES = {"role_play": 12, "reasoning": 9, "communication": 14, "observation": 7,
                  "thinking": 11}
RECONSTRUCTION = "约翰那天晚上在甲板上。\n你在厨房。"


def judge() -> ScriptedModel:
    def scores(request: Request) -> dict[str, Any]:
        fields = (request.json_schema or {}).get("properties", {})
        return {"reason": "-", **{k: ABILITY_SCORES[k] for k in fields if k != "reason"}}

    return ScriptedModel(replies={"judge.mirage.score": scores, "judge.mirage.reconstruct":
                                  lambda r: {"reasoning": "-", "script": RECONSTRUCTION}})


def test_sci_averages_all_six_parts_with_an_empty_part_scoring_zero(two_stage: Script) -> None:
    run = game(SEED_7, ["保罗", "保罗", "约翰"])
    release = indices(two_stage, run, judge=judge(), options={"mirage": RELEASE})
    assert release.reconstruction is not None
    paul = release.reconstruction.seats["保罗"].parts
    assert len(paul) == 6 and paul["ability"].fmeasure == 0.0
    assert paul["script"].fmeasure == pytest.approx(0.4210526272576177, abs=1e-12)
    assert release.reconstruction.seats["玛丽"].parts["ability"].fmeasure == pytest.approx(
        0.3529411723183391, abs=1e-12)
    # The release's save_result: rouge (SCI) 0.42998790037583495, llm (ICI) 0.5125.
    assert release.sci == pytest.approx(0.42998790037583495, abs=1e-12)
    assert release.ici == 0.5125
    ours = indices(two_stage, run, judge=judge())
    assert ours.reconstruction is not None
    assert set(ours.reconstruction.seats["保罗"].parts) == {
        "story", "script", "relationships", "performance", "purpose"}
    assert ours.sci != release.sci
