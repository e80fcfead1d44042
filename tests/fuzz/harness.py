"""The watchdog around the fuzzing worker: it feeds the worker one example at a time, under
a memory limit (``RLIMIT_AS``, which the worker sets on itself before importing anything)
and a time limit per example, and turns a worker that died (a segfault is exit -11),
stalled or ran out of memory into a failed outcome, starting a fresh worker for the next
example."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
WORKER = Path(__file__).with_name("worker.py")
MEMORY_BYTES = 1_500_000_000
TIMEOUT_S = 20.0
"""Per example; loaders take milliseconds on these small inputs, so this only catches hangs
(generous, as the machine is shared)."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    """loaded, refused, crashed (an exception), died (killed by a signal or exited), hung"""
    message: str


class Worker:
    """One worker process at a time; ``ask`` runs a loader on a folder in it."""

    def __init__(self, timeout_s: float = TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  (the worker's stderr; close())
        self.started = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
                   "FUZZ_MEMORY_BYTES": str(MEMORY_BYTES)}
            self.log.seek(0)
            self.log.truncate()
            self.process = subprocess.Popen(
                [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.log, env=env)
            self.started += 1
        return self.process

    def ask(self, loader: str, folder: Path) -> Outcome:
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write((json.dumps({"loader": loader, "folder": str(folder)}) + "\n")
                                .encode())
            process.stdin.flush()
        except BrokenPipeError:
            return self._died(process)
        ready, _, _ = select.select([process.stdout], [], [], self.timeout_s)
        if not ready:
            self._stop()
            return Outcome("hung", f"no answer in {self.timeout_s:.0f} s")
        line = process.stdout.readline()
        if not line:
            return self._died(process)
        reply = json.loads(line)
        return Outcome(reply["outcome"], reply["message"])

    def _died(self, process: subprocess.Popen[bytes]) -> Outcome:
        code = process.wait(timeout=10)
        self.log.seek(0)
        tail = self.log.read()[-2000:].decode("utf-8", "replace")
        why = (f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited {code}")
        self.process = None
        return Outcome("died", f"worker {why}: {tail}")

    def _stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def close(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._stop()
        self.process = None
        self.log.close()
