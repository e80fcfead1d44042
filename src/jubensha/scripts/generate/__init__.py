"""Fresh mysteries on demand: a world drawn from a seed, evidence that proves its one
answer, and native scripts written from it in English and Chinese (docs/generated.md).

``generate(Request(seed, players, acts, level), languages)`` makes one mystery's scripts;
``requests`` and ``scripts`` make many (a batch spec's ``generated`` entry);
``jubensha scripts generate`` writes them (``command``).
"""

from typing import TYPE_CHECKING

from jubensha.lazy import lazy_names

if TYPE_CHECKING:  # imported on first use: the scripts commands load only ``command``
    from jubensha.scripts.generate.batch import Languages, requests, scripts
    from jubensha.scripts.generate.build import (
        MAX_ACTS,
        MAX_PLAYERS,
        MIN_PLAYERS,
        GenerationError,
        Request,
        generate,
    )
    from jubensha.scripts.proof.model import Level

__all__ = ["MAX_ACTS", "MAX_PLAYERS", "MIN_PLAYERS", "GenerationError", "Languages", "Level",
           "Request", "generate", "requests", "scripts"]

__getattr__, __dir__ = lazy_names(__name__, __file__)
