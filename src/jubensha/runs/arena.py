"""The arena: a pool of (architecture, model) entrants that meet across scripts.

An arena spec replaces the batch's ``architectures × models`` cross with pairings: in
every game one entrant plays all the murderer seats and another all the civilian seats
(the sides the ratings compare, ``runs.ratings``). Who plays which side is decided by the
game's seed, so the pairing of a game is reproducible and its id stable. With ``rotate``
the games of a script cycle through the ordered pairs of distinct entrants, each script
starting one pair further, so each entrant plays each side equally often whenever a
script's games are a multiple of n(n-1), and about equally otherwise. With
``fixed-murderer`` (PLAYER* section 3) one fixed opponent plays every murderer and the
entrants take turns as the civilians.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ENTRANT_SEPARATOR = "@"


class Entrant(BaseModel):
    """One competitor: an architecture (options included) with a model spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    architecture: str
    model: str

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        if isinstance(value, str):
            arch, sep, model = value.partition(ENTRANT_SEPARATOR)
            if not sep or not arch.strip() or not model.strip():
                raise ValueError(f"write an entrant as ARCH@MODEL or {{architecture: A, "
                                 f"model: M}}, not {value!r}")
            return {"architecture": arch.strip(), "model": model.strip()}
        return value

    @property
    def label(self) -> str:
        return label(self.architecture, self.model)


def label(architecture: str, model: str) -> str:
    """How ratings and tables name an entrant: ``ARCH@MODEL``."""
    return f"{architecture}{ENTRANT_SEPARATOR}{model}"


class Arena(BaseModel):
    """``arena:`` in a batch spec (docs/experiments.md, "Arena")."""

    model_config = ConfigDict(extra="forbid")

    entrants: list[Entrant] = Field(min_length=1)
    games_per_script: int = Field(ge=1, description="Games per script and procedure.")
    first_seed: int = Field(0, description="Game k of a script has seed first_seed + k.")
    protocol: Literal["rotate", "fixed-murderer"] = "rotate"
    murderer: Entrant | None = Field(None, description="The fixed murderer (fixed-murderer).")

    @field_validator("entrants")
    @classmethod
    def _distinct(cls, value: list[Entrant]) -> list[Entrant]:
        seen = [e.label for e in value]
        twice = sorted({name for name in seen if seen.count(name) > 1})
        if twice:
            raise ValueError(f"entrant(s) listed twice: {', '.join(twice)}")
        return value

    @model_validator(mode="after")
    def _protocol(self) -> Arena:
        if self.protocol == "fixed-murderer" and self.murderer is None:
            raise ValueError("the fixed-murderer protocol needs `murderer: ARCH@MODEL`")
        if self.protocol == "rotate" and self.murderer is not None:
            raise ValueError("`murderer` belongs to protocol: fixed-murderer")
        if self.protocol == "rotate" and len(self.entrants) < 2:
            raise ValueError("the rotate protocol needs at least two entrants")
        return self


class Pairing(BaseModel):
    """One arena game's sides and seed."""

    seed: int
    civilians: Entrant
    murderers: Entrant


def pairings(arena: Arena, script_position: int) -> list[Pairing]:
    """The games of one script (its place in the spec's script list shifts the cycle, so
    that scripts with fewer games than pairs still spread the pairs)."""
    games = []
    if arena.protocol == "fixed-murderer":
        assert arena.murderer is not None
        for k in range(arena.games_per_script):
            seed = arena.first_seed + k
            entrant = arena.entrants[(seed + script_position) % len(arena.entrants)]
            games.append(Pairing(seed=seed, civilians=entrant, murderers=arena.murderer))
        return games
    pairs = list(permutations(arena.entrants, 2))
    for k in range(arena.games_per_script):
        seed = arena.first_seed + k
        murderers, civilians = pairs[(seed + script_position) % len(pairs)]
        games.append(Pairing(seed=seed, civilians=civilians, murderers=murderers))
    return games
