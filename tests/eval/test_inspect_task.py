"""The exported set as an inspect_ai task, run end to end on inspect's mock model: a model
that reads each question's text and answers right scores 1, one that always says A scores
the share of questions whose answer is A, and the model is shown the record's text.
Skipped where inspect-ai is not installed (the ``inspect`` extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

from jubensha.eval.inspect_task import mysteries
from jubensha.scripts.export.model import RECORDS, Record
from jubensha.scripts.export.write import ExportError, read_records, write_set
from jubensha.scripts.generate import Request, generate


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("set")
    scripts = [s for seed in range(3) for s in generate(Request(seed=seed, level="hard"),
                                                        ("en", "zh"))]
    write_set(folder, ((s, None) for s in scripts))
    return folder


def reply(text: str) -> ModelOutput:
    """A reply with its usage given, so that the mock model counts no tokens (its counter
    downloads a tokenizer)."""
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def score(folder: Path, answer: object, **options: str) -> float:
    model = get_model("mockllm/model", custom_outputs=answer, memoize=False)
    logs = inspect_eval(mysteries(dataset=str(folder), **options), model=model,
                        display="none", log_dir=str(folder / "logs"), log_format="json")
    assert logs[0].status == "success", logs[0].error
    assert logs[0].results is not None
    return float(logs[0].results.scores[0].metrics["accuracy"].value)


def test_a_model_that_answers_right_scores_one_and_always_a_scores_the_share_of_a(
        exported: Path) -> None:
    records = list(read_records(exported / RECORDS))
    by_text = {(r.context, r.question): r for r in records}
    seen: list[Record] = []

    def oracle(messages: list[ChatMessage], *_: object) -> ModelOutput:
        record = next(r for (context, question), r in by_text.items()
                      if messages[0].text == context and question in messages[-1].text)
        seen.append(record)
        return reply("ANSWER: " + ",".join(record.answer))

    assert score(exported, oracle) == 1.0
    assert sorted(r.id for r in seen) == sorted(r.id for r in records)
    share = sum(r.answer == ["A"] for r in records) / len(records)
    assert 0 < share < 1
    assert score(exported, lambda *_: reply("ANSWER: A")) == pytest.approx(share)


def test_the_task_can_ask_one_aspect_language_or_level(exported: Path) -> None:
    who = [r for r in read_records(exported / RECORDS)
           if r.aspect == "who" and r.language == "zh"]
    asked: list[str] = []

    def count(messages: list[ChatMessage], *_: object) -> ModelOutput:
        asked.append(messages[-1].text)
        return reply("ANSWER: A")

    score(exported, count, aspect="who", language="zh", level="hard")
    assert len(asked) == len(who) == 3
    with pytest.raises(ExportError, match="no question matches level=easy"):
        mysteries(dataset=str(exported), level="easy")
