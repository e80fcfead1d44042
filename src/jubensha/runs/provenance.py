"""Internal.

Whether games may be pooled: their provenance (``runlog.provenance``) compared.

Games are pooled in a report or paired in a comparison only when they were played by the
same code (package version, commit, dirty flag and the hash of a dirty checkout's changes),
with the same text for every prompt template both rendered, and, for each model spec, the
same model (the local file's sha256, the same model string on the same server, the same
answer from the server about what it ran). ``differences``
says what differs in one line per kind; ``runs report`` and ``runs compare`` refuse such
games unless told ``--allow-mixed``, and then say it above the tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from jubensha.llm.identity import ModelIdentity
from jubensha.runlog.provenance import Provenance
from jubensha.runs.index import GameRow

SHOWN = 4
"""How many differing templates or identities a line names."""


class MixedProvenance(Exception):
    """Games of different code, prompts or models asked to be pooled; one line per kind."""


def _known(rows: Iterable[GameRow]) -> list[Provenance]:
    return [row.provenance for row in rows if row.provenance is not None]


def _counted(values: Counter[str]) -> str:
    return "; ".join(f"{value} ({n} game{'s' * (n != 1)})" for value, n in values.most_common())


def _model(identity: ModelIdentity) -> str:
    parts = [identity.name or identity.kind, identity.sha256[:12],
             f"at {identity.endpoint}" if identity.endpoint else "",
             f"served {', '.join(identity.served)}" if identity.served else ""]
    return " ".join(p for p in parts if p)


def differences(rows: Iterable[GameRow]) -> list[str]:
    """What differs between the finished games' provenance; [] when they may be pooled."""
    done = [row for row in rows if row.status == "finished"]
    known = _known(done)
    lines = []
    if known and len(known) < len(done):
        lines.append(f"{len(done) - len(known)} of {len(done)} games record no provenance "
                     "(played before it was recorded)")
    codes = Counter(p.code.label() for p in known)
    if len(codes) > 1:
        lines.append(f"code: {_counted(codes)}")
    templates: dict[str, set[str]] = defaultdict(set)
    for found in known:
        for path, digest in found.prompts.templates.items():
            templates[path].add(digest)
    changed = sorted(path for path, digests in templates.items() if len(digests) > 1)
    if changed:
        more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
        lines.append(f"prompts: {len(changed)} template(s) differ between games: "
                     f"{', '.join(changed[:SHOWN])}{more}")
    lines += _model_differences(known)
    return lines


def _model_differences(known: list[Provenance]) -> list[str]:
    """Per model spec, the identities that differ (a server that said nothing about what
    it ran, e.g. every reply cached, agrees with any)."""
    lines = []
    specs = sorted({spec for found in known for spec in found.models})
    for spec in specs:
        identities = [found.models[spec] for found in known if spec in found.models]
        files = Counter(_model(i.model_copy(update={"served": []})) for i in identities)
        served = Counter(", ".join(i.served) for i in identities if i.served)
        if len(files) > 1 or len(served) > 1:
            shown = files if len(files) > 1 else Counter(
                {f"served {value}": n for value, n in served.items()})
            lines.append(f"model {spec}: {_counted(shown)}")
    return lines


def _endpoint(row: GameRow) -> str:
    identity = row.provenance.models.get(row.model) if row.provenance else None
    return identity.endpoint if identity else ""


def served_apart(rows: list[GameRow]) -> list[GameRow]:
    """``rows`` with the server named in the model of each game whose model spec was
    served by more than one server (``openai:m at http://gpu1:8000/v1``): two servers
    serving one model name are two entrants, never one mean."""
    servers: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if endpoint := _endpoint(row):
            servers[row.model].add(endpoint)
    return [row.model_copy(update={"model": f"{row.model} at {_endpoint(row)}"})
            if len(servers[row.model]) > 1 and _endpoint(row) else row for row in rows]


def summary(rows: Iterable[GameRow]) -> list[str]:
    """One line saying what the games were played with, for a report's notes."""
    known = _known(rows)
    if not known:
        return []
    codes = ", ".join(sorted({p.code.label() for p in known}))
    templates = len({path for p in known for path in p.prompts.templates})
    models = ", ".join(sorted({f"{spec} = {_model(identity)}" for p in known
                               for spec, identity in p.models.items()}))
    return [(f"Provenance: {codes}; {templates} prompt templates rendered; models: "
            f"{models or '–'}")]


def check_pooled(rows: Iterable[GameRow], allow_mixed: bool) -> list[str]:
    """The differences, as notes when ``allow_mixed``; ``MixedProvenance`` otherwise."""
    found = differences(rows)
    if found and not allow_mixed:
        raise MixedProvenance("the games differ in code, prompts or models, so they are not "
                              "pooled (pass --allow-mixed to pool them anyway):\n  "
                              + "\n  ".join(found))
    return [f"Mixed provenance: {line}" for line in found]
