"""The cost bench (``bench/bench_agent_cost.py``) under a paper preset: every architecture
plays with the paper's settings, each phase gets its prompt and completion tokens and its
dollars at the paper's prices, and an architecture given with options keeps the paper's
column (it is PLAYER* whatever its options)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_cost_bench_runs_under_the_player_preset(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "JUBENSHA_CACHE": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_agent_cost.py"), "--preset",
         "paper:player", "--seeds", "1", "--samples", "1", "--games", "1",
         "--architectures", "player:dialogue_tokens=3000,werewolf"],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "preset paper:player" in lines[0] and "$0.003/$0.004" in lines[0]
    rows = {tuple(line.split()[:2]): line.split() for line in lines
            if line.split()[:2] and line.split()[1] in ("gameplay", "evaluation")}
    assert set(rows) == {("player", "gameplay"), ("player", "evaluation"),
                         ("werewolf", "gameplay"), ("werewolf", "evaluation")}
    player = rows[("player", "gameplay")]
    assert player[-2:] == ["33.702", "1.00"]  # the paper's column, options or not
    werewolf = rows[("werewolf", "gameplay")]
    assert werewolf[-2:] == ["38.329", "1.14"]
    calls, prompt, completion, dollars = map(float, werewolf[2:6])
    assert calls > 0 and prompt > completion > 0
    assert dollars == round((prompt * 0.003 + completion * 0.004) / 1000, 4)
    assert "not registered" not in done.stdout
