"""Captions for image clue cards, made once and kept in the script (``Clue.caption``).

A vision model is sent a card's image itself (``llm.base.ImagePart``; the OpenAI-compatible
client turns a local path into a data URL). A text-only model reads the card's caption
instead, so every image clue needs one: ``jubensha scripts caption SCRIPT`` writes them
into the script file, by OCR (Debian's ``tesseract-ocr`` with ``tesseract-ocr-chi-sim``,
through pytesseract) or, with ``--model``, by asking a vision model to describe the card.
A clue that already has a caption is left alone unless ``--force`` is given; an empty
caption means the card was read and holds no text.

Image paths in a script are relative to the script file; ``io.resolve_images`` makes them
absolute for a game, so that agents and clients can open them wherever the game runs.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Protocol

import typer

from jubensha.jobs import CallBar, Interrupted, run_job, stop_here
from jubensha.llm.base import GenerateConfig, ImagePart, Message, Model, Request, TextPart
from jubensha.llm.text import HAN
from jubensha.prompts import render
from jubensha.scripts.bundled import script_location
from jubensha.scripts.io import (
    ScriptError,
    image_path,
    parse_script,
    read_data,
    resolve_script_file,
    save_script,
)
from jubensha.scripts.model import Clue, Language, Script
from jubensha.scripts.validation import Problem
from jubensha.terminal import Terminal, fail, printable

OCR_LANGUAGES: dict[str, str] = {"zh": "chi_sim+eng", "en": "eng"}
"""Tesseract languages per script language: Chinese cards often carry English text too."""
OCR_LONG_SIDE = 1600
OCR_MAX_SCALE = 3.0
"""Small cards are enlarged (grey, up to 3x, long side 1,600 px) before OCR: tesseract
reads the small print of WhodunitBench's cards far better at that size."""
_NOISE = re.compile(f"[^\\w{HAN}]")


class Captioner(Protocol):
    """Turns one image file into a caption."""

    source: str

    async def caption(self, path: Path) -> str: ...


def ocr_available(languages: str = "chi_sim+eng") -> bool:
    """True when the tesseract binary and every language in ``languages`` are installed."""
    if shutil.which("tesseract") is None:
        return False
    import pytesseract

    try:
        installed = set(pytesseract.get_languages(config=""))
    except (OSError, RuntimeError, pytesseract.TesseractError):
        return False
    return set(languages.split("+")) <= installed


def clean_ocr(text: str) -> str:
    """OCR output without its noise: blank lines and lines with almost no letters go, runs
    of spaces collapse (a caption is for reading, not layout)."""
    lines = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        letters = len(_NOISE.sub("", line))
        if letters >= 3 and letters >= len(line.replace(" ", "")) / 2:
            lines.append(line)
    return "\n".join(lines)


class OcrCaptioner:
    """Captions by OCR: the text printed on the card."""

    source = "ocr"

    def __init__(self, languages: str):
        if not ocr_available(languages):
            raise ScriptError("tesseract", [Problem(
                severity="error", field="(ocr)",
                message=f"tesseract with the languages {languages!r} is not installed "
                        "(apt-get install tesseract-ocr tesseract-ocr-chi-sim)")])
        self.languages = languages

    async def caption(self, path: Path) -> str:
        return await asyncio.to_thread(self._read, path)

    def _read(self, path: Path) -> str:
        import pytesseract
        from PIL import Image, ImageOps

        with Image.open(path) as image:
            gray = ImageOps.grayscale(image)
        scale = min(OCR_MAX_SCALE, OCR_LONG_SIDE / max(gray.size))
        if scale > 1:
            gray = gray.resize((round(gray.width * scale), round(gray.height * scale)),
                               Image.Resampling.LANCZOS)
        return clean_ocr(pytesseract.image_to_string(gray, lang=self.languages))


class VisionCaptioner:
    """Captions by a vision model describing the card in the script's language."""

    source = "vision"

    def __init__(self, model: Model, lang: Language, max_tokens: int = 400):
        self.model = model
        self.lang = lang
        self.max_tokens = max_tokens

    async def caption(self, path: Path) -> str:
        prompt = render("caption", "describe", self.lang)
        message = Message(role="user", content=[TextPart(text=prompt),
                                                ImagePart(url=str(path))])
        response = await self.model.generate(Request(
            messages=[message], config=GenerateConfig(max_tokens=self.max_tokens, temperature=0),
            purpose="caption"))
        return response.text.strip()


def to_caption(script: Script, force: bool = False) -> list[Clue]:
    """The image clues ``caption_script`` describes: those without a caption (all with
    ``force``)."""
    return [clue for clue in script.clues if clue.image and (force or clue.caption is None)]


async def caption_script(script: Script, base: Path, captioner: Captioner,
                         force: bool = False,
                         on_caption: Callable[[Script], None] | None = None
                         ) -> tuple[Script, list[str]]:
    """``script`` with a caption on every image clue that lacks one (all with ``force``),
    and the ids of the clues captioned; ``on_caption`` gets the script after each caption
    (the command saves it, so a stopped job keeps every card done). A missing or unsafe
    image file is a ScriptError."""
    todo = {clue.id for clue in to_caption(script, force)}
    done: list[str] = []
    for clue in script.clues:
        if clue.id not in todo:
            continue
        text = await captioner.caption(image_path(clue, base))
        captioned = clue.model_copy(update={
            "caption": text, "extra": {**clue.extra, "caption_source": captioner.source}})
        script = script.model_copy(update={"clues": [
            captioned if other.id == clue.id else other for other in script.clues]})
        done.append(clue.id)
        if on_caption:
            on_caption(script)
    return script, done


def caption_command(
    script: Annotated[str, typer.Argument(
        help="A bundled script id, or a script file or folder (native YAML).")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Describe cards with this vision model (e.g. openai:gpt-4o) "
        "instead of OCR.")] = None,
    languages: Annotated[str | None, typer.Option(
        "--ocr-lang", help="Tesseract languages (default: chi_sim+eng for Chinese scripts, "
        "eng for English).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Caption cards that have one.")
                     ] = False,
) -> None:
    """Caption the image clue cards of a script (OCR, or a vision model) and save them in
    the script, so text-only models can use the cards."""
    try:
        file = resolve_script_file(script_location(script))
        loaded = parse_script(read_data(file), str(file))
        captioner = _captioner(loaded, model, languages)
        done = _caption_saving(loaded, file, captioner, force)
    except ScriptError as exc:
        raise fail("; ".join(printable(p.render(exc.source)) for p in exc.problems)) from None
    images = sum(bool(clue.image) for clue in loaded.clues)
    typer.echo(f"{file}: captioned {len(done)} of {images} image clue(s) by "
               f"{captioner.source}" + ("" if done else " (all had captions; --force redoes)"))


def _caption_saving(script: Script, file: Path, captioner: Captioner, force: bool
                    ) -> list[str]:
    """Caption with a bar of cards done / to do, saving the script after every card;
    Ctrl-C stops at once and says how to go on (the saved cards are not redone)."""
    errors = Terminal(stderr=True)
    bar = CallBar(errors, "captioning", expected=len(to_caption(script, force)), unit="cards",
                  count_calls=False)

    def keep(partial: Script) -> None:
        save_script(partial, file)
        bar.advance()

    again = shlex.join(["jubensha", *(arg for arg in sys.argv[1:] if arg != "--force")])
    with bar.shown():
        try:
            return run_job(lambda: _caption(script, file.parent, captioner, force, keep))[1]
        except Interrupted:
            stop_here(errors, f"{bar.done} caption(s) are saved in {file}.", again)
            raise  # not reached: stop_here ends the process


async def _caption(script: Script, base: Path, captioner: Captioner, force: bool,
                   on_caption: Callable[[Script], None]) -> tuple[Script, list[str]]:
    try:
        return await caption_script(script, base, captioner, force, on_caption)
    finally:
        if isinstance(captioner, VisionCaptioner):
            await captioner.model.aclose()


def _captioner(script: Script, model: str | None, languages: str | None) -> Captioner:
    if model is None:
        return OcrCaptioner(languages or OCR_LANGUAGES[script.language])
    from jubensha.llm.registry import ModelSpecError, parse_model_spec

    try:
        return VisionCaptioner(parse_model_spec(model), script.language)
    except ModelSpecError as exc:
        raise ScriptError(model, [Problem(severity="error", field="--model",
                                          message=str(exc))]) from None
