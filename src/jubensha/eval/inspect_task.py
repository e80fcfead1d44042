"""Internal.

The exported benchmark as an inspect_ai task (inspect finds it by name, through the
package's ``inspect_ai`` entry point): ``inspect eval`` scores any model that
inspect has a provider for on a set that ``jubensha scripts export`` wrote, with inspect's
own multiple-choice solver and scorer (docs/benchmarks.md). Needs the ``inspect`` extra.

Each record becomes one sample: the text its asker can read as the system message, the
question as the user's, the choices lettered A, B, ... and the answer letters as the
target; its script, source, language, level, seed and aspect are the sample's metadata,
so inspect's log viewer can split the score by any of them."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

from jubensha.scripts.export.model import RECORDS, Record
from jubensha.scripts.export.write import ExportError, read_records

METADATA = ("script", "source", "language", "level", "seed", "aspect", "view", "asked_of",
            "points", "players")


def sample(record: Record) -> Sample:
    """One record as an inspect sample."""
    return Sample(id=record.id,
                  input=[ChatMessageSystem(content=record.context),
                         ChatMessageUser(content=record.question)],
                  choices=list(record.choices), target=list(record.answer),
                  metadata={key: getattr(record, key) for key in METADATA})


def records_file(dataset: str) -> Path:
    """The records file of ``dataset``: the file itself, or the one in an export folder."""
    path = Path(dataset)
    return path / RECORDS if path.is_dir() else path


@task
def mysteries(dataset: str = "benchmark", aspect: str = "", language: str = "",
                       level: str = "", cot: bool = False) -> Task:
    """The multiple-choice questions of an exported set (a folder, or its questions.jsonl),
    optionally only one aspect (who, how, why, when...), language or level (each a comma
    list); ``cot`` asks the model to think before it answers."""
    wanted = {"aspect": aspect, "language": language, "level": level}
    chosen: list[Record] = []
    for record in read_records(records_file(dataset)):
        if all(not text or str(getattr(record, key)) in text.split(",")
               for key, text in wanted.items()):
            chosen.append(record)
    if not chosen:
        raise ExportError(f"{dataset}: no question matches "
                          + (", ".join(f"{k}={v}" for k, v in wanted.items() if v) or
                             "(the set is empty)"))
    return Task(dataset=MemoryDataset([sample(r) for r in chosen], name=Path(dataset).stem),
                solver=multiple_choice(cot=cot,
                                       multiple_correct=any(r.multiple for r in chosen)),
                scorer=choice())
