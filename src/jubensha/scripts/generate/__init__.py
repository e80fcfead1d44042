"""Fresh mysteries on demand: a world drawn from a seed, evidence that proves its one
answer, and native scripts written from it in English and Chinese (docs/generated.md).

``generate(Request(seed, players, acts, level), languages)`` makes one mystery's scripts;
``requests`` and ``scripts`` make many (a batch spec's ``generated`` entry);
``jubensha scripts generate`` writes them (``command``).
"""

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
