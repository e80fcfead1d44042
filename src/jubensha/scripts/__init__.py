"""Mystery scripts: the data model, validation, the native format, importers, bundled mysteries."""

from typing import TYPE_CHECKING

from jubensha.lazy import lazy_names

if TYPE_CHECKING:  # imported on first use: `jubensha scripts list` reads the bundled index only
    from jubensha.scripts.bundled import DEFAULT_SCRIPT, bundled_scripts, find_script
    from jubensha.scripts.io import ScriptError, check_script, dump_script, load_script, save_script
    from jubensha.scripts.model import (
        CATEGORY_POINTS,
        PUBLIC,
        Act,
        ActSheet,
        Character,
        ChoiceQuestion,
        Clue,
        FactualQuestion,
        Kill,
        Metadata,
        OpenQuestion,
        QuestionSets,
        Relationship,
        Script,
        TimelineEntry,
        Truth,
        Victim,
    )
    from jubensha.scripts.validation import Problem, Report, validate

__all__ = [
    "CATEGORY_POINTS", "DEFAULT_SCRIPT", "PUBLIC", "Act", "ActSheet", "Character",
    "ChoiceQuestion", "Clue", "FactualQuestion", "Kill", "Metadata", "OpenQuestion", "Problem",
    "QuestionSets", "Relationship", "Report", "Script", "ScriptError", "TimelineEntry", "Truth",
    "Victim", "bundled_scripts", "check_script", "dump_script", "find_script", "load_script",
    "save_script", "validate",
]

__getattr__, __dir__ = lazy_names(__name__, __file__)
