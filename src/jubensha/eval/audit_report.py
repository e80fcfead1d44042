"""Internal.

The isolation audit as a result: seat calls checked and flagged per architecture and
purpose, calls meant to see more listed apart by purpose, and the worst calls with the
leaked passage. One run is the ``audit`` metric (``jubensha eval audit``, batch
``metrics: [audit]``, a column of ``runs report``); ``jubensha audit`` merges many."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from jubensha.eval.audit import AuditOptions, CallAudit, RunAudit, audit_run
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number

PASSAGE_SHOWN = 200
"""Characters of a leaked passage shown in tables (JSON keeps it whole)."""


class PurposeRow(BaseModel):
    architecture: str
    purpose: str
    checked: int
    flagged: int

    @property
    def share(self) -> float:
        return self.flagged / self.checked if self.checked else 0.0


class PrivilegedRow(BaseModel):
    purpose: str
    access: str
    calls: int


class AuditReport(MetricResult):
    metric: str = "audit"
    options: dict[str, int] = Field(default_factory=lambda: AuditOptions().model_dump())
    """The ``AuditOptions`` used (a dict: a report column shows the figures, not these)."""
    runs: int = 0
    checked: int = 0
    flagged: int = 0
    unordered: int = 0
    """Seat calls without a recorded ``seen`` (older logs): ordered by the clock."""
    shared: int = 0
    """Boilerplate passages (several characters' private texts) in every seat's prompts."""
    rows: list[PurposeRow] = Field(default_factory=list)
    privileged: list[PrivilegedRow] = Field(default_factory=list)
    worst: list[CallAudit] = Field(default_factory=list)

    @property
    def share(self) -> float:
        return self.flagged / self.checked if self.checked else 0.0

    @classmethod
    def of(cls, audits: Sequence[RunAudit], options: AuditOptions, run: str = ""
           ) -> AuditReport:
        calls = [call for audit in audits for call in audit.calls]
        checked: Counter[tuple[str, str]] = Counter()
        flagged: Counter[tuple[str, str]] = Counter()
        for call in calls:
            checked[(call.architecture, call.purpose)] += 1
            flagged[(call.architecture, call.purpose)] += call.flagged
        privileged = Counter(p for audit in audits for p in audit.privileged)
        worst = sorted((c for c in calls if c.flagged), key=lambda c: -c.passages)
        return cls(run=run, options=options.model_dump(), runs=len(audits), checked=len(calls),
                   flagged=sum(c.flagged for c in calls),
                   unordered=sum(not c.ordered for c in calls),
                   shared=sum(a.shared for a in audits),
                   rows=[PurposeRow(architecture=a, purpose=p, checked=n,
                                    flagged=flagged[(a, p)])
                         for (a, p), n in sorted(checked.items())],
                   privileged=[PrivilegedRow(purpose=p, access=a, calls=n)
                               for (p, a), n in sorted(privileged.items())],
                   worst=worst[:options.worst])

    def tables(self) -> list[ResultTable]:
        rows = [[r.architecture, r.purpose, str(r.checked), str(r.flagged), number(r.share)]
                for r in self.rows]
        rows.append(["all", "", str(self.checked), str(self.flagged), number(self.share)])
        given = AuditOptions.model_validate(self.options)
        notes = [(f"A call is flagged when it holds {given.passages} or more passages "
                 f"of {given.words} words ({given.chars} Chinese characters) "
                  f"of private text its seat could not know; {self.runs} run(s).")]
        if self.unordered:
            notes.append(f"{self.unordered} call(s) recorded no 'seen' event: ordered by "
                         "the clock, which ties under a fast model.")
        if self.shared:
            notes.append(f"{self.shared} passage(s) that several characters' scripts hold "
                         "reached every seat's prompts: shared text, not evidence.")
        tables = [ResultTable(title="Isolation audit: seat calls", rows=rows, notes=notes,
                              columns=["architecture", "purpose", "calls", "flagged",
                                       "share"])]
        if self.privileged:
            tables.append(ResultTable(
                title="Calls meant to see more (declared access; not audited as a seat)",
                columns=["purpose", "access", "calls"],
                rows=[[p.purpose, p.access, str(p.calls)] for p in self.privileged]))
        if self.worst:
            tables.append(ResultTable(
                title="Worst calls", columns=["run", "call", "seat", "purpose", "passages",
                                              "whose text", "first at", "passage"],
                rows=[_worst_row(c) for c in self.worst]))
        return tables


def _worst_row(call: CallAudit) -> list[str]:
    leak = call.leak
    where = f"message {leak.message}, char {leak.offset}" if leak else ""
    whose = f"{leak.owner} ({leak.part})" if leak else ""
    text = leak.passage[:PASSAGE_SHOWN] if leak else ""
    return [Path(call.run).name, f"{call.log}#{call.index}", call.seat or "", call.purpose,
            str(call.passages), whose, where, text]


@metric("audit", "Seat calls holding another character's private text or the truth that "
        "the seat could not know at that moment (isolation audit)",
        "jubensha's own, in none of the papers; docs/isolation.md", options=AuditOptions)
async def audit_metric(context: MetricContext) -> AuditReport:
    options = AuditOptions.model_validate(context.options.get("audit", {}))
    found = audit_run(context.script, context.run, options)
    return AuditReport.of([found], options, run=str(context.run.path))
