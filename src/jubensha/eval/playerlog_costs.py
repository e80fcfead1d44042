"""Internal.

What the PLAYER* authors' own games cost, phase by phase, read from their logs.

A transcript row of ``player-logs`` is one utterance with the prompt that produced it: a
self-introduction, a question (stage ``<asker> ask <target> for death of <victim>``, the
asker speaking) or its answer (the target speaking). So the logs count, per game, the
calls that spoke and the tokens of their prompts and replies; the calls that did not speak
(PLAYER*'s sensors and pruner, the baselines' reflections) are not rows, but PLAYER*'s
question prompts quote each sensor's reading of the character asked (``In terms of
emotions, you think X is: ...``), and the stages show whom each asker questioned about each
victim: the suspects left after the pruner. Tokens are counted with ``memory.text``'s
approximation (no tokenizer table offline: English words, Chinese characters); dollars at
the prices of the paper's model, set beside table A5's gameplay dollars.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from jubensha.eval.playerlog_titles import find_title
from jubensha.eval.playerlogs import LogEntry, discover, paper_tables, read_transcript
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.memory.text import count_tokens

ASK = re.compile(r"^(?P<asker>.+?) ask (?P<target>.+?) for death of (?P<victim>.+)$")
SENSOR = re.compile(r"In terms of [^,\n]+, you think ")
PAPER_PRICES = (0.003, 0.004)
"""US dollars per 1,000 prompt and completion tokens of the paper's model: GPT-3.5 Turbo
(16k context, its prompts of up to 4,000 + 4,000 tokens need it) on Azure in 2023."""
PAPER_GAMEPLAY_USD: dict[str, dict[str, float]] = {
    "Death Wears White": {"Werewolf": 3.797, "O-CoT": 4.643, "ThinkThrice": 3.992,
                          "PLAYER": 3.363},
    "Ghost Revenge": {"Werewolf": 6.702, "O-CoT": 8.231, "ThinkThrice": 7.056,
                      "PLAYER": 5.947},
    "Danshui Villa": {"Werewolf": 5.215, "O-CoT": 6.262, "ThinkThrice": 5.449,
                      "PLAYER": 4.603},
    "Unfinished Love": {"Werewolf": 3.945, "O-CoT": 4.754, "ThinkThrice": 4.237,
                        "PLAYER": 3.505},
    "Cruise Incident": {"Werewolf": 0.975, "O-CoT": 1.146, "ThinkThrice": 1.021,
                        "PLAYER": 0.846},
    "Sin": {"Werewolf": 0.680, "O-CoT": 0.833, "ThinkThrice": 0.730, "PLAYER": 0.603},
    "Deadly Fountain": {"Werewolf": 0.671, "O-CoT": 0.810, "ThinkThrice": 0.724,
                        "PLAYER": 0.596},
    "Unbelievable Incident": {"Werewolf": 1.304, "O-CoT": 1.567, "ThinkThrice": 1.367,
                              "PLAYER": 1.150},
    "Desperate Sunshine": {"Werewolf": 0.803, "O-CoT": 0.972, "ThinkThrice": 0.847,
                           "PLAYER": 0.701},
    "Riverside Inn": {"Werewolf": 0.633, "O-CoT": 0.762, "ThinkThrice": 0.682,
                      "PLAYER": 0.561},
    "Solitary Boat Firefly": {"Werewolf": 7.799, "O-CoT": 9.257, "ThinkThrice": 8.252,
                              "PLAYER": 6.800},
    "Manna": {"Werewolf": 5.805, "O-CoT": 6.925, "ThinkThrice": 6.108, "PLAYER": 5.028},
}
"""Table A5 of the PLAYER* paper (first version), 'Gameplay' rows: US dollars of one game of
each method on each script, as printed."""
PHASES = ("introduction", "question", "answer")


class PhaseUse(BaseModel):
    """The logged calls of one phase and their tokens (prompt, and reply as spoken)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def dollars(self) -> float:
        return (self.prompt_tokens * PAPER_PRICES[0]
                + self.completion_tokens * PAPER_PRICES[1]) / 1000


class LoggedGame(BaseModel):
    """One method's game on one script as its transcript tells it."""

    language: str
    method: str
    script: str = Field(description="The paper's name of the script.")
    askers: int = Field(description="Characters who asked questions.")
    victims: int = Field(description="Victims questions were asked about.")
    phases: dict[str, PhaseUse] = Field(default_factory=dict)
    targets: float = Field(description=(
        "Mean number of characters one asker questioned about one victim (all others: "
        "every suspect asked; fewer: the pruner's choice)."))
    questions_per_target: float = Field(description=(
        "Mean questions one asker put to one character about one victim (3: one a round "
        "for the three rounds)."))
    sensor_readings: int = Field(description=(
        "Sensor readings quoted in the question prompts: the outputs of sensor calls the "
        "log has no row for."))

    @property
    def calls(self) -> int:
        return sum(use.calls for use in self.phases.values())

    @property
    def tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens for u in self.phases.values())

    def dollars(self) -> float:
        return sum(use.dollars() for use in self.phases.values())


def logged_game(entry: LogEntry, paper_name: str) -> LoggedGame:
    """The phases of ``entry``'s transcript (which it must have)."""
    assert entry.transcript is not None
    phases = {phase: PhaseUse() for phase in PHASES}
    asked: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    sensors = 0
    for row in read_transcript(entry.transcript):
        found = ASK.match(row.stage.strip())
        if found is None:
            phase = "introduction"
        elif row.speaker.strip() == found["asker"].strip():
            phase = "question"
            asked[(found["asker"], found["victim"])][found["target"]] += 1
            sensors += len(SENSOR.findall(row.prompt))
        else:
            phase = "answer"
        use = phases[phase]
        use.calls += 1
        use.prompt_tokens += count_tokens(row.prompt)
        use.completion_tokens += count_tokens(row.words)
    pairs = list(asked.values())
    return LoggedGame(
        language=entry.language, method=entry.method, script=paper_name,
        askers=len({asker for asker, _ in asked}), victims=len({v for _, v in asked}),
        phases=phases, sensor_readings=sensors,
        targets=sum(len(p) for p in pairs) / len(pairs) if pairs else 0.0,
        questions_per_target=(sum(sum(p.values()) for p in pairs)
                              / max(1, sum(len(p) for p in pairs))))


class LoggedCosts(MetricResult):
    metric: str = "player-log-costs"
    games: list[LoggedGame]

    def _reference(self, game: LoggedGame) -> LoggedGame | None:
        return next((g for g in self.games if g.method == "PLAYER" and g.script == game.script
                     and g.language == game.language), None)

    def tables(self) -> list[ResultTable]:
        rows = []
        for game in self.games:
            base = self._reference(game)
            paper = PAPER_GAMEPLAY_USD.get(game.script, {})
            rows.append([
                game.language, game.script, game.method, str(game.askers), str(game.victims),
                *(str(game.phases[p].calls) for p in PHASES),
                number(game.targets, 2), number(game.questions_per_target, 2),
                str(game.sensor_readings), str(game.tokens), number(game.dollars(), 3),
                number(game.dollars() / base.dollars(), 2) if base and base.dollars() else "–",
                number(paper[game.method] / paper["PLAYER"], 2)
                if game.method in paper and "PLAYER" in paper else "–"])
        return [ResultTable(
            title="The PLAYER* authors' games, phase by phase (their transcripts)",
            columns=["language", "script", "method", "askers", "victims", "introduction",
                     "question", "answer", "targets", "questions_per_target",
                     "sensor_readings", "tokens", "logged_usd", "x_player",
                     "paper_x_player"],
            rows=rows,
            notes=[("introduction, question, answer: logged calls (one per utterance). "
                   "targets: characters one asker questioned about one victim; "
                   "questions_per_target: questions it put to each. sensor_readings: sensor "
                   "outputs quoted in the question prompts (calls without a row). tokens: "
                   "prompt and reply tokens of the logged calls (approximate count). "
                   f"logged_usd at ${PAPER_PRICES[0]}/${PAPER_PRICES[1]} per 1K prompt/"
                   "completion tokens; x_player: that over PLAYER*'s on the same script and "
                   "language; paper_x_player: table A5's gameplay dollars over PLAYER*'s.")])]


def logged_costs(root: Path, language: str | None = None) -> LoggedCosts:
    """Every transcript of a ``player-logs`` folder (of ``language`` when given)."""
    titles = paper_tables().scripts
    games = []
    for entry in discover(root):
        if entry.transcript is None or (language and entry.language != language):
            continue
        title = find_title(titles, entry.title, entry.folder)
        games.append(logged_game(entry, title.paper if title else entry.title))
    return LoggedCosts(run=str(root), games=games)
