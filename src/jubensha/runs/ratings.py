"""Ratings of a batch's entrants (architecture @ model) from its index, with openskill.

Every finished game whose winner is known is one match between two teams: the distinct
entrants that played the civilian seats, and those that played the murderer seats; the
winning side ranks first. Three pools are kept (Weng–Lin's Bayesian approximation of the
Plackett–Luce model, ``openskill``): **civilian** and **murderer** ratings are one pool of
role-entities ("A as civilian" meets "B as murderer"), so a self-play game of an ordinary
batch still rates each role; the **combined** pool has one rating per entrant and only
learns from games whose two sides share no entrant (a game against oneself says nothing
about who is better). Each rating is a mean ``mu`` and an uncertainty ``sigma``; the
leaderboard ranks by the conservative ``mu - 3 sigma`` (openskill's ordinal).

The ratings are recomputed from the index on every call, the games in the spec's order
(``position``) rather than the order they finished in, so the same index always gives the
same ratings and a resumed or reindexed batch never counts a game twice.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from jubensha.eval.report import ResultTable, markdown_table, number
from jubensha.runs.arena import label
from jubensha.runs.index import GameRow
from jubensha.runs.report import fake_warning
from jubensha.terminal import plain_text

Role = Literal["civilian", "murderer"]
ROLES: tuple[Role, ...] = ("civilian", "murderer")
Pool = Literal["combined", "civilian", "murderer"]
LeaderboardFormat = Literal["table", "md", "csv", "json"]
MEANING = ("mu: estimated skill (start 25), sigma: its uncertainty (start 8.33); ranked by "
           "mu - 3 sigma. Civilian and murderer ratings share one pool (a civilian team "
           "meets a murderer team); combined ratings learn only from games whose sides share "
           "no entrant. Teams, not seats, are rated: docs/experiments.md, \"Ratings\".")


class Sides(BaseModel):
    """The distinct entrants of each side of one game."""

    civilians: list[str]
    murderers: list[str]


def sides(row: GameRow) -> Sides | None:
    """Who played which side, from the row's settings (None for an index written before
    the settings recorded the murderers: ``jubensha runs reindex`` adds them)."""
    seats = row.settings.get("seats") or {}
    guilty = set(row.settings.get("murderers") or [])
    if not isinstance(seats, dict) or not seats or not guilty:
        return None
    by_side: dict[bool, list[str]] = {True: [], False: []}
    for name, plan in seats.items():
        if not isinstance(plan, dict) or not {"architecture", "model"} <= plan.keys():
            return None
        entrant = label(str(plan["architecture"]), str(plan["model"]))
        if entrant not in by_side[name in guilty]:
            by_side[name in guilty].append(entrant)
    if not by_side[True] or not by_side[False]:
        return None
    return Sides(civilians=by_side[False], murderers=by_side[True])


class Rating(BaseModel):
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ordinal(self) -> float:
        """The conservative estimate the leaderboard ranks by."""
        return self.mu - 3 * self.sigma

    def render(self) -> str:
        return f"{self.mu:.2f} ± {self.sigma:.2f} ({self.wins}/{self.games})"


class EntrantRatings(BaseModel):
    entrant: str
    combined: Rating | None = None
    civilian: Rating | None = None
    murderer: Rating | None = None

    def pool(self, name: Pool) -> Rating | None:
        rating: Rating | None = getattr(self, name)
        return rating


class Leaderboard(BaseModel):
    batch: str = ""
    ranked_by: Pool = Field("combined", description="The pool whose mu - 3 sigma ranks the "
                            "entrants: combined, or as civilian when no game had two "
                            "entrants (self-play).")
    warning: str | None = Field(None, description="Said first: the games were played by "
                                "the scripted fake (report.fake_warning).")
    model: str = "openskill Plackett-Luce (Weng-Lin)"
    games: int = Field(0, description="Games rated.")
    not_rated: dict[str, int] = Field(default_factory=dict, description="Reason → games.")
    entrants: list[EntrantRatings] = Field(default_factory=list)


def _skip_reason(row: GameRow) -> str | None:
    if row.status != "finished":
        return "not finished"
    if getattr(row, "degraded", False):
        return "degraded"
    if row.winner not in ("civilians", "murderers"):
        return "no winner"
    return None


class _Pool:
    """Ratings of named players in one openskill model, with games and wins counted."""

    def __init__(self, model: Any) -> None:
        """``model``: an openskill model (``PlackettLuce``)."""
        self.model = model
        self.ratings: dict[str, Any] = {}
        self.games: Counter[str] = Counter()
        self.wins: Counter[str] = Counter()

    def play(self, winners: list[str], losers: list[str]) -> None:
        teams = [[self.ratings.setdefault(n, self.model.rating(name=n)) for n in side]
                 for side in (winners, losers)]
        for side, team in zip((winners, losers), self.model.rate(teams, ranks=[0, 1]),
                              strict=True):
            for name, rating in zip(side, team, strict=True):
                self.ratings[name] = rating
                self.games[name] += 1
        self.wins.update(winners)

    def get(self, name: str) -> Rating | None:
        rating = self.ratings.get(name)
        return None if rating is None else Rating(
            mu=rating.mu, sigma=rating.sigma, games=self.games[name], wins=self.wins[name])


def rate(rows: list[GameRow], batch: str = "") -> Leaderboard:
    """The leaderboard of a batch's index rows (see the module docstring)."""
    from openskill.models import PlackettLuce  # the ratings extra, only when rating

    roles, combined = _Pool(PlackettLuce()), _Pool(PlackettLuce())
    skipped: Counter[str] = Counter()
    entrants: list[str] = []
    rated = 0
    for row in sorted(rows, key=lambda r: r.position):
        reason = _skip_reason(row)
        teams = None if reason else sides(row)
        if teams is None:
            skipped[reason or "sides unknown (reindex the batch)"] += 1
            continue
        rated += 1
        entrants = list(dict.fromkeys(entrants + teams.civilians + teams.murderers))
        civilians = [f"{e}|civilian" for e in teams.civilians]
        murderers = [f"{e}|murderer" for e in teams.murderers]
        won = row.winner == "civilians"
        roles.play(*((civilians, murderers) if won else (murderers, civilians)))
        if not set(teams.civilians) & set(teams.murderers):
            pair = (teams.civilians, teams.murderers)
            combined.play(*(pair if won else pair[::-1]))
    board = [EntrantRatings(entrant=e, combined=combined.get(e),
                            civilian=roles.get(f"{e}|civilian"),
                            murderer=roles.get(f"{e}|murderer")) for e in entrants]
    ranked_by: Pool = "combined" if any(e.combined for e in board) else "civilian"

    def key(entry: EntrantRatings) -> float:
        rating = entry.pool(ranked_by)
        return rating.ordinal if rating else float("-inf")

    board.sort(key=key, reverse=True)
    return Leaderboard(batch=batch, games=rated, not_rated=dict(skipped), entrants=board,
                       ranked_by=ranked_by,
                       warning=fake_warning(rows))


# --- rendering ---------------------------------------------------------------------------------

def _cell(rating: Rating | None) -> str:
    return rating.render() if rating else "–"


def leaderboard_table(board: Leaderboard) -> ResultTable:
    skipped = ", ".join(f"{n} {why}" for why, n in board.not_rated.items())
    notes = [f"{board.games} games rated" + (f"; not rated: {skipped}" if skipped else "")
             + f". {MEANING}"]
    pool = "combined" if board.ranked_by == "combined" else f"as {board.ranked_by}"
    if board.ranked_by != "combined":
        notes.insert(0, f"No game had two entrants, so no combined rating (–); ranked by "
                        f"the {board.ranked_by} rating's mu - 3 sigma.")
    return ResultTable(
        title=f"Leaderboard {board.batch}: {board.model}".strip(),
        columns=["rank", "entrant", "combined mu ± sigma (wins/games)",
                 f"mu - 3 sigma ({pool}, ranks)", "as civilian", "as murderer"],
        rows=[[str(i), e.entrant, _cell(e.combined),
               number(ranked.ordinal if (ranked := e.pool(board.ranked_by)) else None, 2),
               _cell(e.civilian), _cell(e.murderer)]
              for i, e in enumerate(board.entrants, 1)],
        notes=notes)


def flat(board: Leaderboard) -> list[dict[str, Any]]:
    """One record of raw numbers per entrant (the CSV rows)."""
    records = []
    for rank, entry in enumerate(board.entrants, 1):
        record: dict[str, Any] = {"rank": rank, "entrant": entry.entrant}
        for pool in ("combined", *ROLES):
            rating: Rating | None = getattr(entry, pool)
            record |= {f"{pool}_mu": rating.mu if rating else None,
                       f"{pool}_sigma": rating.sigma if rating else None,
                       f"{pool}_ordinal": rating.ordinal if rating else None,
                       f"{pool}_games": rating.games if rating else 0,
                       f"{pool}_wins": rating.wins if rating else 0}
        records.append(record)
    return records


def render_leaderboard(board: Leaderboard, fmt: LeaderboardFormat) -> str:
    """Markdown, CSV or JSON text (``table`` is drawn by the caller), without escape
    sequences."""
    return plain_text(_render(board, fmt))


def _render(board: Leaderboard, fmt: LeaderboardFormat) -> str:
    if fmt == "json":
        return board.model_dump_json(indent=2)
    if fmt == "csv":
        records = flat(board)
        out = io.StringIO()
        columns = list(records[0]) if records else ["rank", "entrant"]
        if board.warning:
            out.write(f"# {board.warning}\n")
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue()
    warning = f"**{board.warning}**\n\n" if board.warning else ""
    return warning + markdown_table(leaderboard_table(board))
