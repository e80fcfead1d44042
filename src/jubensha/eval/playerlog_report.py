"""Internal.

Reports over the PLAYER* authors' logs: every method and script next to the paper's
tables A3/A4, and how the three correctness rules disagree with the authors' grading.

Both are ``MetricResult``s, so ``jubensha eval player-logs`` and ``jubensha eval
grading-rules`` print them as terminal tables, Markdown (docs/evaluation.md) or JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from jubensha.eval.playerlog_titles import find_title
from jubensha.eval.playerlogs import (
    Comparison,
    Grading,
    LogEntry,
    LogLanguage,
    PaperCell,
    compare,
    discover,
    graded,
    paper_tables,
    read_evaluation,
    score_entry,
)
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.stats import MeanStd
from jubensha.eval.wellplay import (
    CATEGORIES,
    RULES,
    ScriptScore,
    aggregate,
    score_pass,
    score_script,
)
from jubensha.scripts.importers.wellplay import discover_wellplay, import_wellplay
from jubensha.scripts.model import Script

Kinds = dict[tuple[str, str], bool]


class EntryResult(BaseModel):
    """One method on one script: exact values, values as the authors rounded, the paper."""

    language: LogLanguage
    method: str
    title: str
    exact: list[Comparison]
    rounded: list[Comparison]

    def cell(self, metric: str, rounded: bool = False) -> Comparison | None:
        rows = self.rounded if rounded else self.exact
        return next((c for c in rows if c.metric == metric), None)

    @property
    def verdict(self) -> str:
        """``=`` agrees at 3 decimals; ``≈`` only once passes are rounded as the authors
        did; ``≠`` differs; ``–`` not in the paper."""
        exact, rounded = self.cell("overall"), self.cell("overall", rounded=True)
        if exact is None or exact.paper is None or rounded is None:
            return "–"
        if exact.difference == 0:
            return "="
        return "≈" if rounded.difference == 0 else "≠"


class PaperRow(BaseModel):
    """One (method, script) of the paper's tables, every metric it prints."""

    language: LogLanguage
    method: str
    script: str
    questions: int
    cells: dict[str, PaperCell]


class PlayerLogScores(MetricResult):
    metric: str = "player-logs"
    grading: Grading
    entries: list[EntryResult]
    aggregates: dict[str, dict[str, MeanStd]]
    """``<lang>/<method>`` -> category or ``overall`` -> pooled over the logged scripts."""
    missing: list[str]
    """Entries without evaluation passes."""
    coverage: dict[str, list[str]] = Field(default_factory=dict)
    """``<lang>/<method>`` -> the paper's scripts (English titles) its logs cover."""
    unlogged: list[PaperRow] = Field(default_factory=list)
    """The paper's selected cells that no scored log sits beside."""

    def tables(self) -> list[ResultTable]:
        unlogged = [self._unlogged_table()] if self.unlogged else []
        return [self._overall_table(), self._category_table(), *unlogged,
                self._aggregate_table()]

    def _unlogged_table(self) -> ResultTable:
        metrics = ("voting", *CATEGORIES, "overall")
        rows = [[r.language, r.method, r.script, str(r.questions),
                 *(f"{c.mean:.3f}±{c.std:.3f}" if (c := r.cells.get(m)) else "–"
                   for m in metrics)] for r in self.unlogged]
        return ResultTable(
            title="The paper's cells this folder holds no scored log for",
            columns=["lang", "method", "script", "#QA", *metrics], rows=rows,
            notes=[("Every (method, script) cell of tables A3/A4 the selection asks for is "
                    "printed: above beside its log, here alone. 'Overall' is the paper's "
                    "Overall row, printed here when the method has no log at all.")])

    def _overall_table(self) -> ResultTable:
        rows = []
        for e in self.entries:
            exact, rounded = e.cell("overall"), e.cell("overall", rounded=True)
            assert exact is not None and rounded is not None
            paper = exact.paper
            rows.append([e.language, e.method, exact.script, str(exact.questions),
                         exact.ours.render(), rounded.ours.render(),
                         f"{paper.mean:.3f}±{paper.std:.3f}" if paper else "–",
                         "–" if exact.difference is None else f"{exact.difference:+.3f}",
                         e.verdict])
        return ResultTable(
            title=f"WellPlay score recomputed from the authors' logs ({self.grading} grading) "
                  "vs the paper (table A3 Chinese, A4 English)",
            columns=["lang", "method", "script", "#QA", "ours", "ours, passes rounded",
                     "paper", "Δ", "agree"],
            rows=rows,
            notes=[("mean±std over the 3 evaluation passes (sample std). 'passes rounded': each "
                   "pass rounded to 3 significant digits first, as the authors' summaries were. "
                   "Δ = ours (exact, rounded to 3 decimals) − paper. = agrees, ≈ agrees once "
                   "passes are rounded, ≠ differs."),
                   "Tally: " + ", ".join(f"{v} {n}" for v, n in
                                          Counter(e.verdict for e in self.entries).items()),
                   *([f"no evaluation passes: {', '.join(self.missing)}"] if self.missing else [])])

    def _category_table(self) -> ResultTable:
        rows = []
        for e in self.entries:
            row = [e.language, e.method, e.cell("overall").script]  # type: ignore[union-attr]
            for metric in CATEGORIES:
                c = e.cell(metric)
                row.append("–" if c is None else (
                    f"{number(c.ours.mean)} / {number(c.paper.mean) if c.paper else '–'}"
                    f" ({c.questions})"))
            rows.append(row)
        return ResultTable(title="Accuracy per category: ours / paper (questions)",
                           columns=["lang", "method", "script", *CATEGORIES], rows=rows)

    def _aggregate_table(self) -> ResultTable:
        rows = []
        for key, values in self.aggregates.items():
            language, method = key.split("/", 1)
            covered, total, paper = _paper_overall(language, method, self.coverage.get(key, []))
            ours = values.get("overall")
            complete = total > 0 and covered == total
            delta = (f"{round(round(ours.mean, 3) - paper.mean, 3):+.3f}"
                     if complete and ours and paper else "–")
            rows.append([key, *(v.render() if (v := values.get(m)) else "–"
                                for m in (*CATEGORIES, "overall")),
                         f"{covered}/{total}",
                         f"{paper.mean:.3f}±{paper.std:.3f}" if paper else "–",
                         delta if complete else "subset"])
        return ResultTable(
            title="Across the logged scripts: weighted mean ± weighted std (pooled passes)",
            columns=["lang/method", *CATEGORIES, "overall", "scripts", "paper Overall", "Δ"],
            rows=rows,
            notes=[("Weights: question counts (categories), total points (overall), over every "
                    "(script, pass). 'scripts': the paper's scripts the logs cover. Only a "
                    "complete folder (every script of the paper's table) is comparable with "
                    "the paper's Overall row; a subset says 'subset'.")])


def _paper_overall(language: str, method: str,
                   covered: list[str]) -> tuple[int, int, MeanStd | None]:
    """(scripts covered, scripts in the paper's table, the paper's Overall cell)."""
    table = paper_tables().tables.get("zh" if language == "cn" else "en", {})
    scripts = [name for name in table if name != "Overall"]
    cell = table["Overall"].cells["overall"].get(method) if "Overall" in table else None
    paper = MeanStd(mean=cell.mean, std=cell.std, n=len(scripts)) if cell else None
    return len(set(covered) & set(scripts)), len(scripts), paper


def wellplay_kinds(wellplay_root: Path | None) -> dict[tuple[LogLanguage, str], Kinds]:
    """Per (language, script title), which questions are multiple choice, keyed by
    ``(tester, question)``; the full-script-access set is asked by ``GM``."""
    if wellplay_root is None:
        return {}
    found: dict[tuple[LogLanguage, str], Kinds] = {}
    for folder in discover_wellplay(wellplay_root):
        script = import_wellplay(folder)
        language: LogLanguage = "cn" if script.language == "zh" else "en"
        found[(language, script.title)] = question_kinds(script)
    return found


def question_kinds(script: Script) -> Kinds:
    return {(q.asked_of or "GM", q.question.strip()): q.multiple
            for q in script.questions.choice}


def _select(entries: Iterable[LogEntry], language: str | None, method: str | None,
            script: str | None) -> list[LogEntry]:
    """Entries of the language, method and script asked for; a script is named by its
    folder, or its title in either language or the paper's."""
    scripts = paper_tables().scripts
    asked = find_title(scripts, script, script) if script else None

    def wanted(value: str, choice: str | None) -> bool:
        return choice is None or value.lower() == choice.lower()

    def same(e: LogEntry) -> bool:
        return script is None or script.lower() in (e.title.lower(), e.folder.lower()) or (
            asked is not None and find_title(scripts, e.title, e.folder) == asked)
    return [e for e in entries if wanted(e.language, language) and wanted(e.method, method)
            and same(e)]


def score_logs(root: Path, *, language: str | None = None, method: str | None = None,
               script: str | None = None, grading: Grading = "logged",
               wellplay_root: Path | None = None) -> PlayerLogScores:
    """Recompute every selected (language, method, script) of a ``player-logs`` folder."""
    kinds = wellplay_kinds(wellplay_root) if grading != "logged" else {}
    entries, missing = [], []
    by_group: dict[str, list] = {}
    coverage: dict[str, list[str]] = {}
    for entry in _select(discover(root), language, method, script):
        if not entry.passes:
            missing.append(entry.label)
            continue
        passes = [read_evaluation(p) for p in entry.passes]
        multiple = kinds.get((entry.language, entry.title))
        exact = score_entry(entry, passes, grading, multiple)
        rounded = score_entry(entry, passes, grading, multiple, digits=3)
        entries.append(EntryResult(language=entry.language, method=entry.method,
                                   title=entry.title, exact=compare(entry, exact),
                                   rounded=compare(entry, rounded)))
        group = f"{entry.language}/{entry.method}"
        by_group.setdefault(group, []).append(exact)
        found = paper_tables().lookup(entry.language, entry.title, entry.folder)
        if found:
            coverage.setdefault(group, []).append(found[0])
    return PlayerLogScores(run=str(root), grading=grading, entries=entries, missing=missing,
                           aggregates={k: aggregate(v) for k, v in by_group.items()},
                           coverage=coverage,
                           unlogged=unlogged_cells(coverage, set(by_group), language, method,
                                                   script))


def unlogged_cells(coverage: dict[str, list[str]], groups: set[str], language: str | None,
                   method: str | None, script: str | None) -> list[PaperRow]:
    """The paper's cells within the selection that ``coverage`` lacks; a method's Overall
    row too when the selection holds no log of that method (``groups``)."""
    tables = paper_tables()
    wanted = find_title(tables.scripts, script, script) if script else None
    rows = []
    languages: tuple[LogLanguage, ...] = ("cn", "en")
    for lang, table in zip(languages, (tables.tables["zh"], tables.tables["en"]), strict=True):
        if language not in (None, lang):
            continue
        for name, block in table.items():
            if script and name != (wanted.paper if wanted else script):
                continue
            for m in tables.methods:
                group = f"{lang}/{m}"
                if (method and method.lower() != m.lower()) or name in coverage.get(group, []):
                    continue
                if name == "Overall" and group in groups:
                    continue
                cells = {metric: row[m] for metric, row in block.cells.items() if m in row}
                if cells:
                    rows.append(PaperRow(language=lang, method=m, script=name,
                                         questions=block.questions.get("overall", 0),
                                         cells=cells))
    return rows


class RuleCount(BaseModel):
    rule: str
    subset: str
    rows: int
    differ: int
    """Answers (question x pass) whose verdict differs from the logged ``is_right``."""
    questions: int
    """Distinct (method, script, tester, question) with at least one differing pass."""


class GradingRules(MetricResult):
    metric: str = "grading-rules"
    counts: list[RuleCount]
    scores: dict[str, dict[str, float]]
    """``<lang>/<method>`` -> grading -> overall score pooled over the logged scripts."""
    unmatched: int
    """Rows whose question is not in the WellPlay files (graded as single choice)."""
    empty_right: int
    """Logged answers that are empty (or missing) yet marked right."""

    def tables(self) -> list[ResultTable]:
        rows = [[c.rule, c.subset, str(c.rows), str(c.differ), str(c.questions)]
                for c in self.counts]
        gradings = ("logged", *RULES)
        return [
            ResultTable(
                title="Re-grading the authors' logged answers: disagreements with their "
                      "is_right",
                columns=["rule", "logs", "answers", "differ", "questions differing"],
                rows=rows,
                notes=[(f"{self.unmatched} answers ask a question missing from the WellPlay "
                        "files and are graded as single choice."),
                       (f"{self.empty_right} logged answers are empty yet marked right "
                        "(an empty string is a substring of every truth).")]),
            ResultTable(
                title="Overall WellPlay score under each rule (logged scripts, pooled)",
                columns=["lang/method", *gradings],
                rows=[[key, *(number(values[g]) for g in gradings)]
                      for key, values in self.scores.items()])]


def compare_rules(root: Path, wellplay_root: Path) -> GradingRules:
    """Count, per rule, the logged answers whose re-graded verdict differs from the log,
    with the full-script-access logs (FSA, graded by other code) apart; and the overall
    score each rule gives every method."""
    kinds = wellplay_kinds(wellplay_root)
    totals: Counter[tuple[str, str]] = Counter()
    differ: Counter[tuple[str, str]] = Counter()
    questions: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    scripts: dict[str, dict[str, list[ScriptScore]]] = {}
    unmatched = empty_right = 0
    for entry in discover(root):
        if not entry.passes:
            continue
        multiple = kinds.get((entry.language, entry.title), {})
        subset = "FSA" if entry.method == "FSA" else "played games"
        passes = [read_evaluation(path) for path in entry.passes]
        unmatched += sum((r.tester, r.question.strip()) not in multiple
                         for p in passes for r in p.rows)
        empty_right += sum(r.is_right and not r.answer for p in passes for r in p.rows)
        group = scripts.setdefault(f"{entry.language}/{entry.method}", {})
        gradings: tuple[Grading, ...] = ("logged", *RULES)
        for grading in gradings:
            judged = [graded(p, grading, multiple) for p in passes]
            group.setdefault(grading, []).append(
                score_script(entry.title, [score_pass(j) for j in judged]))
            if grading == "logged":
                continue
            for evaluation, verdicts in zip(passes, judged, strict=True):
                for row, verdict in zip(evaluation.rows, verdicts, strict=True):
                    totals[(grading, subset)] += 1
                    if verdict.correct != row.is_right:
                        differ[(grading, subset)] += 1
                        questions.setdefault((grading, subset), set()).add(
                            (entry.label, row.tester, row.question))
    counts = [RuleCount(rule=rule, subset=subset, rows=totals[(rule, subset)],
                        differ=differ[(rule, subset)],
                        questions=len(questions.get((rule, subset), ())))
              for rule, subset in sorted(totals, key=lambda k: (k[1], RULES.index(k[0])))]
    scores = {key: {g: aggregate(s)["overall"].mean for g, s in by_grading.items()}
              for key, by_grading in scripts.items()}
    return GradingRules(run=str(root), counts=counts, scores=scores, unmatched=unmatched,
                        empty_right=empty_right)
