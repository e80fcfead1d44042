"""A command whose options are one typed object (``commandline.options_command``): typer
sees one parameter per field, the function gets the validated object, and a field
without its parameter is an error when the command is made."""

from __future__ import annotations

from typing import Annotated

import pytest
import typer
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from jubensha.commandline import options_command
from jubensha.runs.commands import PLAY_PARAMETERS
from jubensha.runs.prepare import PlayOptions


class Greeting(BaseModel):
    name: str = "world"
    times: int = Field(1, ge=1)
    also: list[str] = Field(default_factory=list)


PARAMETERS = {"name": Annotated[str, typer.Argument()],
              "times": Annotated[int, typer.Option()],
              "also": Annotated[list[str] | None, typer.Option("--also")]}


def test_the_function_gets_the_options_as_one_validated_object() -> None:
    got: list[Greeting] = []
    app = typer.Typer()
    app.command()(options_command(got.append, Greeting, PARAMETERS))
    assert CliRunner().invoke(app, ["Ann", "--times", "2", "--also", "Bob"]).exit_code == 0
    assert CliRunner().invoke(app, []).exit_code == 0
    assert got == [Greeting(name="Ann", times=2, also=["Bob"]), Greeting()]
    refused = CliRunner().invoke(app, ["--times", "0"])
    assert refused.exit_code == 2 and got[2:] == []
    assert "times: Input should be greater than or equal to 1" in refused.output


def test_a_field_without_its_parameter_is_an_error_at_once() -> None:
    with pytest.raises(TypeError, match=r"\['times'\]"):
        options_command(print, Greeting, {k: v for k, v in PARAMETERS.items()
                                          if k != "times"})


def test_play_has_an_option_for_every_field_of_its_options() -> None:
    assert list(PLAY_PARAMETERS) == list(PlayOptions.model_fields)
