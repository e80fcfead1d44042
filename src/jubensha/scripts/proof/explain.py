"""A proof as lines a person reads (``scripts show --truth``): the answer, the difficulty's
measures, why each other answer fails with the sentences that show it, and the deciding
source."""

from __future__ import annotations

from jubensha.scripts.proof.model import FactSource, Proof


def where(source: FactSource) -> str:
    if source.where == "clue":
        return f"clue {source.clue}"
    if source.where == "timeline":
        return f"{source.character}'s timeline, entry {(source.index or 0) + 1}"
    if source.where == "act_sheet":
        return f"{source.character}'s sheet for act {source.index}"
    if source.where == "act":
        return f"act {source.index}"
    return "the background"


def proof_lines(proof: Proof) -> list[str]:
    knobs = proof.knobs
    facts = {fact.id: fact for fact in proof.facts}
    lines = [(f"proof: {', '.join(proof.answer)} with the {proof.weapon} is the only answer "
              f"the {len(proof.facts)} facts leave ({knobs.level}: combine {knobs.combine}, "
              f"suspects {knobs.suspects}, misleading {knobs.misleading}, pointers "
              f"{knobs.pointers}, deciding source: {knobs.decider})")]
    for verdict in proof.verdicts:
        who = ", ".join(verdict.candidate)
        if verdict.consistent:
            lines.append(f"  {who}: consistent, with the {verdict.weapon}")
            continue
        for exclusion in verdict.exclusions:
            shown = "; ".join(f"{facts[f].text} ({where(facts[f].source)})"
                              for f in exclusion.facts if f in facts)
            lines.append(f"  {who}: no {exclusion.reason}"
                         + (f": {shown}" if shown else ": nothing the game reveals shows one"))
    rivals = "; ".join(", ".join(r) for r in proof.deciding.rivals) or "none"
    lines.append(f"  deciding: {where(proof.deciding.source)}; without it {rivals} would also "
                 "be consistent")
    return lines
