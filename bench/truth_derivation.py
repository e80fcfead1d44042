"""How often the importers derive the right murderers and victims of a script whose truth
is prose, on the fit part and the held-out part of the shared scripts (the fixed split of
``bench/truth_derivation.yaml``).

For each release: murderers right / scripts and victims right / scripts, a script's
answer right when the derived set is exactly the expected one (an empty set included).
Conan narratives (victims only: they name no murderer) are counted right, wrong, or left
undecided for a truth.yaml (the importer derived none).
WhodunitBench and WellPlay state the murderer (and WellPlay the victims) in fields; they
are measured twice, as imported and with those fields withheld ("text only", a copy in a
temporary folder), which is what a script without them gets.

    PYTHONPATH=src python bench/truth_derivation.py [--datasets ../shared/datasets]
        [--split bench/truth_derivation.yaml] [--part fit|held_out] [-v]

Ends with one line, ``truth_derivation: fit M/N, held-out M/N; Conan victims: fit right R
wrong W undecided U; held-out ...`` (M/N: every answer of every release but Conan's).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

from jubensha.scripts.importers import import_script
from jubensha.scripts.importers.common import name_key
from jubensha.scripts.model import Script

ROOT = Path(__file__).resolve().parents[1]


def _same(found: list[str], expected: list[str]) -> bool:
    """The same persons, spelling aside: an expected ``Bao Liu(Yu Shi)`` (WellPlay names a
    victim with its other name in brackets) is found as ``Bao Liu`` or as ``Yu Shi``."""
    wanted = [{name_key(s) for s in re.split(r"[()（）]", name) if s.strip()}
              for name in expected]
    got = {name_key(n) for n in found}
    return len(got) == len(wanted) and all(spellings & got for spellings in wanted)


def _victims(script: Script) -> list[str]:
    return [v.name for v in script.victims]


def _mirage(root: Path, entries: list[dict], _: Path) -> Iterator[tuple[str, Script, list, list]]:
    for entry in entries:
        for i, lang in enumerate(("en", "zh")):
            folder = root / "mirage" / lang.capitalize() / entry[lang]
            yield (entry[lang], import_script("mirage", folder), entry["murderers"][i],
                   entry["victims"][i])


def _whodunitbench(root: Path, entries: list[dict], tmp: Path,
                   withhold: bool) -> Iterator[tuple[str, Script, list, list]]:
    for entry in entries:
        folder = root / "whodunitbench" / entry["folder"]
        if withhold:
            copy = tmp / "whodunitbench" / entry["folder"]
            copy.mkdir(parents=True, exist_ok=True)
            data = json.loads((folder / "env_p_all.json").read_text(encoding="utf-8"))
            data.pop("murder", None)
            for role in data.get("role", []):
                role["m"] = 0
            (copy / "env_p_all.json").write_text(json.dumps(data, ensure_ascii=False),
                                                 encoding="utf-8")
            folder = copy
        yield (entry["folder"], import_script("whodunitbench", folder), entry["murderers"],
               entry["victims"])


_WELLPLAY_FIELDS = ("victims", "kill_by_me", "is_murderer")


def _wellplay(root: Path, entries: list[dict], tmp: Path,
              withhold: bool) -> Iterator[tuple[str, Script, list, list]]:
    for entry in entries:
        for lang, language in (("en", "english"), ("zh", "chinese")):
            folder = root / "wellplay" / language / entry[lang]
            truth = import_script("wellplay", folder)
            if withhold:
                folder = _withheld_wellplay(folder, tmp / "wellplay" / language)
            script = import_script("wellplay", folder) if withhold else truth
            yield entry[lang], script, truth.murderers, _victims(truth)


def _withheld_wellplay(folder: Path, tmp: Path) -> Path:
    copy = tmp / folder.name
    shutil.copytree(folder, copy, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.xlsx", "*.docx", "*.png", "*.jpg"))
    for path in (copy / "json").glob("*.json"):
        if path.name == "script_info.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in _WELLPLAY_FIELDS:
            data.pop(key, None)
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return copy


def _conan(root: Path, entries: list[dict]) -> Iterator[tuple[str, Script, list]]:
    for entry in entries:
        for i, (lang, language) in enumerate((k, v) for k, v in (("en", "english"),
                                                                  ("zh", "chinese"))
                                             if k in entry):
            folder = root / "conan" / language / "data_final" / entry[lang]
            yield entry[lang], import_script("conan", folder), entry["victims"][i]


def _measure_victims(rows: Iterator[tuple[str, Script, list]], verbose: bool
                     ) -> tuple[int, int, int]:
    """Victims right, wrong (a set derived that is not the answer) and left undecided
    (none derived where the answer names some: left to a truth.yaml)."""
    right = wrong = undecided = 0
    for title, script, want in rows:
        found = _victims(script)
        if _same(found, want):
            right += 1
            mark = "ok "
        elif not found:
            undecided += 1
            mark = "und"
        else:
            wrong += 1
            mark = "BAD"
        if verbose or mark != "ok ":
            print(f"    {mark} {title}: victims {found} (want {want})")
    return right, wrong, undecided


def _measure(rows: Iterator[tuple[str, Script, list, list]], verbose: bool) -> tuple[int, int, int]:
    murderers = victims = total = 0
    for title, script, want_m, want_v in rows:
        ok_m, ok_v = _same(script.murderers, want_m), _same(_victims(script), want_v)
        murderers, victims, total = murderers + ok_m, victims + ok_v, total + 1
        if verbose or not (ok_m and ok_v):
            print(f"    {'ok ' if ok_m and ok_v else 'BAD'} {title}: murderers "
                  f"{script.murderers} (want {want_m}), victims {_victims(script)} "
                  f"(want {want_v})")
    return murderers, victims, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--split", type=Path, default=ROOT / "bench" / "truth_derivation.yaml")
    parser.add_argument("--part", choices=("fit", "held_out", "upstream"), action="append",
                        help="Which part of the split (default: fit and held_out).")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    split = yaml.safe_load(args.split.read_text(encoding="utf-8"))
    parts = args.part or ["fit", "held_out"]
    right = {part: [0, 0] for part in parts}
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("mirage", "MIRAGE", lambda e, t: _mirage(args.datasets, e, t)),
                ("whodunitbench", "WhodunitBench",
                 lambda e, t: _whodunitbench(args.datasets, e, t, False)),
                ("whodunitbench", "WhodunitBench, text only",
                 lambda e, t: _whodunitbench(args.datasets, e, t, True)),
                ("wellplay", "WellPlay, text only",
                 lambda e, t: _wellplay(args.datasets, e, t, True))]
        for key, label, rows in runs:
            for part in parts:
                entries = split.get(key, {}).get(part, [])
                if not entries:
                    continue
                print(f"{label}, {part}:")
                m, v, n = _measure(rows(entries, Path(tmp) / part), args.verbose)
                print(f"  {label}, {part}: murderers {m}/{n}, victims {v}/{n}")
                right[part][0] += m + v
                right[part][1] += 2 * n
        conan = {}
        for part in parts:
            entries = split.get("conan", {}).get(part, [])
            if entries:
                print(f"Conan victims, {part}:")
                conan[part] = _measure_victims(_conan(args.datasets, entries), args.verbose)
                good, bad, open_ = conan[part]
                print(f"  Conan victims, {part}: right {good}, wrong {bad}, left to "
                      f"truth.yaml {open_} of {good + bad + open_}")
    victims = "; ".join(f"{p.replace('_', '-')} right {c[0]} wrong {c[1]} undecided {c[2]}"
                        for p, c in conan.items())
    print("truth_derivation: " + ", ".join(f"{p.replace('_', '-')} {r[0]}/{r[1]}"
                                            for p, r in right.items())
          + (f"; Conan victims: {victims}" if victims else ""))


if __name__ == "__main__":
    main()
