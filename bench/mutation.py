"""Mutation score of one module: of the mutants mutmut makes of it, how many the tests that
exercise it kill. A test that passes whatever the code does is no specification; a
surviving mutant points at a behaviour no test holds (or at a change that alters nothing).

    python bench/mutation.py eval/failure.py            # the tests listed in MODULES
    python bench/mutation.py engine/voting.py --mutants '*count_votes*'   # a few mutants
    python bench/mutation.py llm/wrappers.py --tests tests/llm/test_wrappers.py

mutmut works on a copy of ``src``, ``tests``, ``bench`` and ``pyproject.toml`` (with the
``[tool.mutmut]`` table for this module added) in a temporary folder, so that nothing it
writes lands in the checkout; ``--keep DIR`` keeps it for ``mutmut show NAME`` there. Ends with ``mutation: MODULE K/N killed (P%), S survived``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES: dict[str, tuple[str, ...]] = {
    "eval/failure.py": ("tests/eval/test_no_number_from_failure.py",),
    "eval/stats.py": ("tests/eval/test_paper_tables.py", "tests/eval/test_stats_votes.py"),
    "runs/statistics.py": ("tests/runs/test_statistics.py",
                           "tests/runs/test_statistics_exact.py"),
    "engine/voting.py": ("tests/engine/test_voting.py", "tests/engine/test_voting_counts.py"),
}
"""Each module measured, and the tests that exercise it (the run is as fast as they are)."""
CAUGHT = {"killed", "timeout", "caught by type check"}
"""What counts as killed: a test failed, ran out of time, or the type checker refused it."""
LINE = re.compile(r"^\s+(\S+): (.+)$")


def _mutmut() -> str:
    """The mutmut beside this interpreter (its console script), else on PATH."""
    beside = Path(sys.executable).parent / "mutmut"
    found = str(beside) if beside.is_file() else shutil.which("mutmut")
    if found is None:
        sys.exit("mutation: mutmut is not installed: pip install -e '.[test]'")
    return found


def _config(module: str, tests: list[str]) -> str:
    """The ``[tool.mutmut]`` table: mutate ``module`` alone, run ``tests`` alone, serially.
    (JSON strings and lists of them are valid TOML.)"""
    table = {"source_paths": ["src"], "only_mutate": [f"src/jubensha/{module}"],
             "pytest_add_cli_args": ["-p", "no:cacheprovider", "-n", "0", "-q"],
             "pytest_add_cli_args_test_selection": tests}
    text = "\n[tool.mutmut]\n" + "".join(f"{key} = {json.dumps(value)}\n"
                                          for key, value in table.items())
    tomllib.loads(text)  # a path that would break the table fails here, not in mutmut
    return text


def _copy(work: Path, module: str, tests: list[str]) -> None:
    """What the tests need, without caches or build leftovers."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "mutants")
    for folder in ("src", "tests", "bench"):
        shutil.copytree(ROOT / folder, work / folder, ignore=ignore)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (work / "pyproject.toml").write_text(pyproject + _config(module, tests), encoding="utf-8")


def _results(work: Path) -> dict[str, str]:
    """Every mutant's status, as ``mutmut results --all true`` prints it."""
    done = subprocess.run([_mutmut(), "results", "--all", "true"], cwd=work, text=True,
                          capture_output=True, check=True)
    return {m.group(1): m.group(2) for line in done.stdout.splitlines()
            if (m := LINE.match(line))}


def _show(work: Path, name: str) -> str:
    done = subprocess.run([_mutmut(), "show", name], cwd=work, text=True,
                          capture_output=True, check=False)
    return done.stdout.strip()


def measure(module: str, tests: list[str], mutants: list[str], children: int,
            work: Path, diffs: bool) -> dict[str, str]:
    """Run mutmut in ``work`` and print every mutant not caught (with its diff)."""
    _copy(work, module, tests)
    command = ["nice", _mutmut(), "run", "--max-children", str(children), *mutants]
    started, cpu = time.monotonic(), os.times()
    done = subprocess.run(command, cwd=work, text=True, capture_output=True, check=False)
    wall = time.monotonic() - started
    used = os.times()
    cpu_s = (used.children_user - cpu.children_user) + (used.children_system
                                                        - cpu.children_system)
    if done.returncode != 0:
        sys.exit(f"mutmut run failed ({done.returncode}):\n{done.stdout[-3000:]}"
                 f"{done.stderr[-3000:]}")
    statuses = {name: status for name, status in _results(work).items()
                if not mutants or any(fnmatch(name, glob) for glob in mutants)}
    print(f"{module}: tests {' '.join(tests)}; {wall:.0f} s wall, {cpu_s:.0f} CPU-s, "
          f"load {os.getloadavg()[0]:.1f}")
    for name, status in sorted(statuses.items()):
        if status not in CAUGHT:
            print(f"  {status}: {name}")
            if diffs:
                print("    " + _show(work, name).replace("\n", "\n    "))
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help=f"a module under src/jubensha: {', '.join(MODULES)}")
    parser.add_argument("--tests", nargs="+", help="test paths (default: MODULES' list)")
    parser.add_argument("--mutants", nargs="+", default=[], help="mutant name globs")
    parser.add_argument("--children", type=int, default=2, help="mutants run at once")
    parser.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    parser.add_argument("--no-diffs", action="store_true", help="list survivors by name only")
    args = parser.parse_args()
    if not (ROOT / "src" / "jubensha" / args.module).is_file():
        parser.error(f"module {args.module}: no such file under src/jubensha")
    tests = args.tests or list(MODULES.get(args.module, ()))
    if not tests:
        parser.error(f"module {args.module}: give --tests (MODULES lists no tests for it)")
    if args.keep:
        args.keep.mkdir(parents=True)
        statuses = measure(args.module, tests, args.mutants, args.children, args.keep.resolve(),
                           not args.no_diffs)
    else:
        with tempfile.TemporaryDirectory(prefix="jubensha-mutation-") as work:
            statuses = measure(args.module, tests, args.mutants, args.children, Path(work),
                               not args.no_diffs)
    counts = Counter(statuses.values())
    caught = sum(counts[status] for status in CAUGHT)
    total = len(statuses)
    share = f"{100 * caught / total:.0f}%" if total else "no mutants"
    print(f"mutation: {args.module} {caught}/{total} killed ({share}), "
          f"{counts['survived']} survived" + "".join(
              f", {n} {status}" for status, n in sorted(counts.items())
              if status not in CAUGHT | {"survived"}))


if __name__ == "__main__":
    main()
