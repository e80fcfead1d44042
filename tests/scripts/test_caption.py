"""Image clue captions: made once and kept in the script, by OCR (tesseract) or a vision
model; image paths become absolute when a script is loaded to be played."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.base import ImagePart, Request, Response
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import find_script, load_script
from jubensha.scripts.caption import (
    OCR_LANGUAGES,
    OcrCaptioner,
    VisionCaptioner,
    caption_script,
    clean_ocr,
    ocr_available,
)
from jubensha.scripts.importers import discover, import_script
from jubensha.scripts.io import ScriptError, resolve_images, save_script
from jubensha.scripts.model import Clue

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
needs_ocr = pytest.mark.skipif(not ocr_available("chi_sim+eng"),
                               reason="tesseract-ocr with chi_sim is not installed")


class Counting:
    """A captioner that names the file it was given and counts its calls."""

    source = "test"

    def __init__(self) -> None:
        self.seen: list[Path] = []

    async def caption(self, path: Path) -> str:
        self.seen.append(path)
        return f"card {path.name}"


def with_cards(tmp_path: Path) -> Path:
    """The tiny script saved in ``tmp_path`` with two image cards (one already captioned)."""
    (tmp_path / "img").mkdir()
    for name in ("a.png", "b.png"):
        Image.new("RGB", (4, 4), "white").save(tmp_path / "img" / name)
    script = load_script(TINY)
    cards = [Clue(id="img-a", text="", image="img/a.png"),
             Clue(id="img-b", text="", image="img/b.png", caption="A train ticket.")]
    return save_script(script.model_copy(update={"clues": [*script.clues, *cards]}), tmp_path)


def test_only_cards_without_a_caption_are_captioned_unless_forced(tmp_path: Path) -> None:
    file = with_cards(tmp_path)
    script = load_script(file)
    captioner = Counting()
    updated, done = asyncio.run(caption_script(script, tmp_path, captioner))
    assert done == ["img-a"] and captioner.seen == [tmp_path / "img" / "a.png"]
    cards = {c.id: c for c in updated.clues}
    assert cards["img-a"].caption == "card a.png"
    assert cards["img-a"].extra["caption_source"] == "test"
    assert cards["img-b"].caption == "A train ticket."
    assert script.clues[-2].caption is None
    _, done = asyncio.run(caption_script(updated, tmp_path, captioner))
    assert done == []
    _, done = asyncio.run(caption_script(updated, tmp_path, captioner, force=True))
    assert done == ["img-a", "img-b"]


class BreaksOnSecond(Counting):
    """Captions one card, then fails as an interrupted model would."""

    async def caption(self, path: Path) -> str:
        if self.seen:
            raise asyncio.CancelledError
        return await super().caption(path)


def test_a_stopped_job_keeps_every_card_captioned_before_it(tmp_path: Path) -> None:
    file = with_cards(tmp_path)
    script = load_script(file)
    saved = []
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(caption_script(script, tmp_path, BreaksOnSecond(), force=True,
                                   on_caption=lambda s: saved.append(save_script(s, file))))
    assert len(saved) == 1
    kept = {c.id: c.caption for c in load_script(file).clues}
    assert kept["img-a"] == "card a.png" and kept["img-b"] == "A train ticket."


def test_a_missing_image_names_the_clue(tmp_path: Path) -> None:
    file = with_cards(tmp_path)
    (tmp_path / "img" / "a.png").unlink()
    with pytest.raises(ScriptError) as error:
        load_script(file)
    assert "image file not found" in str(error.value) and "clues[" in str(error.value)


def test_a_script_loaded_to_play_opens_its_images_from_anywhere(tmp_path: Path) -> None:
    file = with_cards(tmp_path)
    played = find_script(str(file))
    images = [c.image for c in played.clues if c.image]
    assert images == [str((tmp_path / "img" / n).resolve()) for n in ("a.png", "b.png")]
    assert all(Path(image).is_file() for image in images)
    assert load_script(file).clues[-1].image == "img/b.png"
    assert resolve_images(load_script(TINY), tmp_path).clues == load_script(TINY).clues


def test_a_vision_model_describes_the_card_it_is_shown(tmp_path: Path) -> None:
    def describe(request: Request) -> Response:
        parts = request.messages[0].content
        assert isinstance(parts, list) and isinstance(parts[1], ImagePart)
        return Response(text=f"A card ({Path(parts[1].url).name}).", model="fake")

    model = ScriptedModel(replies={"caption": describe})
    file = with_cards(tmp_path)
    updated, done = asyncio.run(caption_script(load_script(file), tmp_path,
                                               VisionCaptioner(model, "en")))
    assert done == ["img-a"] and updated.clues[-2].caption == "A card (a.png)."
    assert "clue card" in model.requests[0].messages[0].text


def test_ocr_noise_is_dropped_and_text_kept() -> None:
    text = "  Autopsy   report: cardiac arrest \n\n| ~ .\n2016年3月1日 诊断\n a\n"
    assert clean_ocr(text) == "Autopsy report: cardiac arrest\n2016年3月1日 诊断"


@needs_ocr
@pytest.mark.datasets
def test_an_imported_whodunitbench_scripts_card_is_captioned_by_ocr(datasets: Path) -> None:
    folder = next(p for p in discover("whodunitbench", datasets / "whodunitbench")
                  if p.name == "XIAOHUA_example")
    script = import_script("whodunitbench", folder)
    card = next(c for c in script.clues if c.image == "img/1.png")
    one = script.model_copy(update={"clues": [card]})
    updated, done = asyncio.run(caption_script(one, folder, OcrCaptioner(
        OCR_LANGUAGES[script.language])))
    caption = updated.clues[0].caption or ""
    assert done == [card.id] and updated.clues[0].extra["caption_source"] == "ocr"
    assert "Autopsy report" in caption or "Xia Qingtian" in caption, caption


@needs_ocr
def test_the_caption_command_writes_captions_into_the_script_once(tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    file = with_cards(tmp_path)

    async def fake_ocr(self: OcrCaptioner, path: Path) -> str:
        return f"text of {path.name}"

    monkeypatch.setattr(OcrCaptioner, "caption", fake_ocr)
    runner = CliRunner()
    first = runner.invoke(app, ["scripts", "caption", str(file)])
    assert first.exit_code == 0, first.output
    assert "captioned 1 of 2 image clue(s) by ocr" in first.output
    saved = {c.id: c for c in load_script(file).clues}
    assert saved["img-a"].caption == "text of a.png" and saved["img-a"].image == "img/a.png"
    again = runner.invoke(app, ["scripts", "caption", str(file)])
    assert "captioned 0 of 2" in again.output


def test_the_caption_command_reports_a_bad_script_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["scripts", "caption", str(tmp_path / "none.yaml")])
    assert result.exit_code == 2 and "no bundled script or file of that name" in result.stderr
    assert "Traceback" not in result.output
