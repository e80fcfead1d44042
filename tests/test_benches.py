"""Every bench runs: each script of bench/, in its smallest configuration, ends with its
``NAME: figure`` line, so that no bench rots unnoticed (a renamed argument, a moved
function, a server the settings do not list). The figures themselves are not checked:
they are measured on a quiet machine (bench/README.md)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
BENCH = ROOT / "bench"
DATASETS = ROOT.parent / "shared" / "datasets"
FAILURE = "tests/eval/test_no_number_from_failure.py"
"""The tests of the module the mutation bench's smallest run mutates."""

SMALLEST: dict[str, list[str]] = {
    "startup.py": ["--runs", "1"],
    "concurrency.py": ["--levels", "1,2", "--latency", "0.01"],
    "overhead.py": ["--architectures", "naive", "--scripts", "lighthouse-keeper",
                    "--embedder", "none"],
    "scaling.py": ["--architectures", "naive", "--players", "4,5", "--rounds", "1,2"],
    "resume.py": ["--seeds", "1", "--kills", "1", "--latency", "0.001", "--scripts",
                  "lighthouse-keeper"],
    "bench_agent_cost.py": ["--seeds", "1", "--games", "1", "--architectures", "naive"],
    "bench_thinkthrice.py": ["--seeds", "1"],
    "bench_batch.py": ["--seeds", "1", "--latency", "0.001"],
    "bench_llm.py": ["--rounds", "1", "--fake-calls", "10", "--skip-local"],
    "bench_memory.py": ["--records", "50", "--queries", "5"],
    "extractive_floor.py": ["--seeds", "1"],
    "web_lobby.py": ["--copies", "2"],
    "web_restore.py": ["--tables", "2"],
    "play_quality.py": ["--model", "scripted", "--games", "1", "--languages", "en",
                        "--guard", "off", "--out", "{tmp}/quality"],
    "play_speed.py": ["--model", "scripted", "--languages", "en", "--settings", "serial"],
    "prefix.py": ["--architectures", "naive", "--seeds", "1"],
    "counterfactual.py": ["--scripts", "lighthouse-keeper", "--architectures", "naive",
                          "--procedures", "demo"],
    "retrieval.py": ["--sets", "bundled", "--embedders", "", "--sizes", "100", "--queries",
                     "5", "--cache", "{tmp}/cache"],
    "truth_derivation.py": ["--part", "fit"],
    "bench_ray.py": ["--seeds", "1", "--latency", "0.001"],
    "slow_clients.py": ["--clients", "20", "--addresses", "2"],
    "fuzz_web.py": ["--per-operation", "2"],
    "stalled_streams.py": ["--clients", "20", "--addresses", "2", "--tables", "1",
                           "--idle", "1"],
    "serve_stop.py": ["--tries", "1", "--busy", "0"],
    "generated.py": ["--count", "20", "--per-level", "10", "--solver-games", "1"],
    "sensors.py": ["--model", "scripted", "--seeds", "1", "--levels", "easy", "--languages",
                   "en", "--per-kind", "1"],
    "detective_votes.py": ["--entrants", "truth,ledger:phrase=false", "--levels", "easy",
                           "--languages", "en", "--seeds", "1", "--out", "{tmp}/votes"],
    "mutation.py": ["eval/failure.py", "--mutants", "*check_max_failed*", "--no-diffs",
                    "--tests", f"{FAILURE}::test_a_threshold_must_be_a_share_below_one",
                    f"{FAILURE}::test_a_share_below_one_is_the_threshold"],
}
"""Each bench script's smallest run (none starts a real model)."""
NEEDS = {"bench_ray.py": "ray", "truth_derivation.py": "datasets"}
FIGURES = {"truth_derivation.py": "truth_derivation: ", "retrieval.py": "retrieval: ",
           "play_quality.py": "quality: ", "generated.py": "generated: "}
"""The figure line a bench's docstring promises, where its name is not the script's."""
HELPERS = {"common.py", "fake_openai.py", "shortcuts.py"}


def test_every_bench_script_has_a_smallest_run() -> None:
    scripts = {path.name for path in BENCH.glob("*.py")} - HELPERS
    assert scripts == set(SMALLEST)


@pytest.mark.parametrize("script", sorted(SMALLEST))
def test_the_bench_runs_and_ends_with_its_figure(script: str, tmp_path: Path) -> None:
    need = NEEDS.get(script)
    if need == "datasets" and not DATASETS.is_dir():
        pytest.skip(f"{script} reads ../shared/datasets")
    missing = bool(need and need != "datasets" and importlib.util.find_spec(need) is None)
    args = [arg.format(tmp=tmp_path) for arg in SMALLEST[script]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(BENCH)]),
           "JUBENSHA_CACHE": str(tmp_path / "jubensha-cache"), "COLUMNS": "160"}
    done = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    if missing:  # one clear line, no traceback
        said = (done.stdout + done.stderr).strip().splitlines()
        assert done.returncode != 0 and len(said) == 1, said
        assert f"pip install -e '.[{need}]'" in said[0]
        return
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert re.match(r"^[a-z_]+: \S", last), last
    assert not re.search(r"\bnan\b", last, re.IGNORECASE), last  # a figure, not "nan ms"
    assert last.startswith(FIGURES.get(script, "")), last
    if script == "play_quality.py":  # one game: its identification has no interval
        assert "no interval: 1 game" in done.stdout, done.stdout[-2000:]
