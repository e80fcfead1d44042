"""The readable transcript of a game, live in the terminal and as ``transcript.md``.

Both come from one ``describe(event)`` (``engine.narration``) so that ``jubensha replay``
shows a run exactly as it was shown live.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from jubensha.engine.events import Event
from jubensha.engine.narration import Line, describe, labels
from jubensha.runlog.folder import RunMeta
from jubensha.terminal import print_line


def markdown_line(line: Line) -> str:
    if line.style == "stage":
        return f"\n## {line.text}\n"
    tag = f" {line.tag}" if line.tag else ""
    if line.style == "log":
        return f"- _{line.text}_{tag}"
    if line.speaker:
        return f"**{line.speaker}**{tag}{line.colon}{line.text}\n"
    return f"{line.text}{tag}\n"


def render_markdown(events: Iterable[Event], meta: RunMeta | None = None,
                    finished: bool = True) -> str:
    """The whole transcript as Markdown."""
    lang = meta.language if meta else "en"
    words = labels(lang)
    parts = []
    if meta is not None:
        colon, sep = words["colon"], words["sep"]
        seats = sep.join(name + words["paren"].format(f"{info.architecture}, {info.model}")
                         for name, info in meta.seats.items())
        parts += [f"# {meta.script_title or meta.script_id}\n",
                  f"- {words['procedure']}{colon}{meta.procedure.get('name', '')}",
                  f"- {words['seats']}{colon}{seats}", f"- {words['seed']}{colon}{meta.seed}"]
    for event in events:
        parts += [markdown_line(line) for line in describe(event, lang)]
    if not finished:
        parts.append(f"\n_{words['unfinished']}_")
    return "\n".join(parts).strip() + "\n"


class LiveTranscript:
    """An event sink printing each event as it happens (log-only events when ``verbose``)."""

    def __init__(self, console: Console, lang: str = "en", verbose: bool = False):
        self.console = console
        self.lang = lang
        self.verbose = verbose

    def __call__(self, event: Event) -> None:
        for line in describe(event, self.lang):
            if line.style == "log" and not self.verbose:
                continue
            print_line(self.console, line, self.lang)
