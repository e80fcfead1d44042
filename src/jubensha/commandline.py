"""A command whose options are one typed object: typer reads a command's parameters from its
function's signature, and a command of many options (`jubensha play`) would take each as a
parameter of its own. ``options_command`` gives typer the signature it reads, one
parameter per field of a pydantic model, and hands the function the validated model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

Options = TypeVar("Options", bound=BaseModel)


def options_command(run: Callable[[Options], None], options: type[Options],
                    parameters: Mapping[str, Any]) -> Callable[..., None]:
    """``run`` as a typer command: a keyword parameter per field of ``options``, with its
    annotation from ``parameters`` (``Annotated[type, typer.Option(...)]``) and its default
    the field's (None for a list, which typer gives as None when the option is not given).
    A value the model refuses is a usage error naming the field (exit code 2); a field
    without a parameter, or a parameter without a field, is a ``TypeError`` when the command
    is made, not when it runs."""
    fields = options.model_fields
    if set(fields) != set(parameters):
        raise TypeError(f"{options.__name__}: fields {sorted(set(fields) ^ set(parameters))} "
                        "have no parameter, or parameters no field")
    signature = inspect.Signature([
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                          default=_default(fields[name].get_default(call_default_factory=True)))
        for name, annotation in parameters.items()])

    def command(**given: Any) -> None:
        try:
            chosen = options.model_validate({name: value for name, value in given.items()
                                             if value is not None})
        except ValidationError as exc:  # a bound typer does not check: one line, exit 2
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise typer.BadParameter(f"{where}: {problem['msg']}") from None
        run(chosen)

    command.__signature__ = signature  # type: ignore[attr-defined]
    command.__annotations__ = {name: annotation for name, annotation in parameters.items()}
    command.__doc__, command.__name__ = run.__doc__, run.__name__
    return command


def _default(value: Any) -> Any:
    return None if isinstance(value, list) and not value else value
