"""Concurrency: N games at once against a model that answers in 200 ms, as a share of
ideal linear scaling, measured in one run.

A batch of N games (``naive`` on one bundled mystery, ``demo`` procedure, seeds 0..N-1,
run folders and the batch's SQLite index written as in any experiment) runs at
concurrency N, for N = 1, 8, 32, 64, three ways: with the scripted fake waiting
``--latency`` in this process; through a loopback OpenAI-compatible server
(``fake_openai.py``, its own process) so the HTTP client is included, every game in this
process (the ``local`` executor); and through the same server with the games spread over
this machine's processes (the ``processes`` executor, Ray in local mode; skipped without
Ray). Throughput is model calls per second from the first game's start to the last
game's end (a local Ray cluster's start is not counted); the share of linear is
``throughput(N) / (N x throughput(1))``, throughput(1) being one game alone in this
process (for the processes executor too: a fresh pool's first game is slower). Target: >= 0.9 at 64. The last
line is the share of loopback HTTP at the largest N, over processes when Ray is
installed, with the machine's load (``uptime``) beside it: on a shared machine the figure
falls with the neighbours' load.

    python bench/concurrency.py [--levels 1,8,32,64] [--latency 0.2] [--script ID]
        [--processes N] [--profile N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import figure, machine, table

from jubensha.runs.batch import Batch, Update
from jubensha.runs.spec import load_spec

HERE = Path(__file__).resolve().parent


def write_spec(folder: Path, name: str, script: str, games: int, model: str,
               options: str, executor: str = "") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"scripts: [{script}]\narchitectures: [naive]\nmodels: [\"{model}\"]\n"
        f"seeds: {{start: 0, count: {games}}}\nembedder: none\n"
        f"model_options: {{{options}}}\n{executor}", encoding="utf-8")
    return path


def run_batch(spec: Path, out: Path, concurrency: int) -> tuple[int, float, float]:
    """(model calls, seconds from the first game's start, CPU seconds of this process) of
    the whole batch."""
    batch = Batch.open(load_spec(spec), out)
    first: list[float] = []

    def on_update(update: Update) -> None:
        if not first:
            first.append(time.perf_counter())

    try:
        cpu = time.process_time()
        summary = asyncio.run(batch.run(concurrency=concurrency, on_update=on_update))
        seconds, cpu = time.perf_counter() - first[0], time.process_time() - cpu
    finally:
        batch.close()
    if summary.finished != summary.games:
        raise SystemExit(f"{summary.games - summary.finished} game(s) did not finish in {out}")
    return summary.spent.calls, seconds, cpu


def server_cpu(server: subprocess.Popen[str]) -> float:
    """CPU seconds the server process has used so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([sys.executable, str(HERE / "fake_openai.py"), "--latency",
                               str(latency)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def trust(url: str, folder: Path) -> None:
    """Settings of this run's own (``$JUBENSHA_CONFIG``) that list the loopback server as
    one needing no key: a batch sends calls only to servers the user's settings list, and
    the bench must neither need nor change the user's own settings."""
    (folder / "settings.yaml").write_text(f'endpoints:\n  "{url}": {{}}\n', encoding="utf-8")
    os.environ["JUBENSHA_CONFIG"] = str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,8,32,64")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--script", default="lighthouse-keeper")
    parser.add_argument("--processes", type=int, default=0,
                        help="Processes of the processes executor (default: the CPU count).")
    parser.add_argument("--profile", type=int, default=0,
                        help="cProfile a run of this N games instead (see --profile-mode).")
    parser.add_argument("--profile-mode", default="in-process",
                        choices=["in-process", "loopback HTTP"])
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    server, url = start_server(args.latency)
    http = f"base_url: \"{url}\", max_retries: 0"
    processes = args.processes or os.cpu_count() or 1
    modes = {"in-process": ("scripted", f"latency_s: {args.latency}", ""),
             "loopback HTTP": ("openai:fake", http, "")}
    if start_ray(processes):
        modes[f"loopback HTTP, {processes} processes"] = (
            "openai:fake", http, f"executor: {{kind: processes, processes: {processes}}}\n")
    print(f"{machine()} · naive on {args.script}, demo procedure · model latency "
          f"{1000 * args.latency:.0f} ms")
    rows, shares, bases = [], {}, {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            trust(url, root)
            for number, (mode, (model, options, executor)) in enumerate(modes.items()):
                warm = write_spec(root, f"warm{number}", args.script, 2, model, options,
                                  executor)
                run_batch(warm, root / f"warm{number}", 2)
                if args.profile and mode == args.profile_mode:
                    profile(root, args.script, args.profile, model, options)
                    return
                # one game alone in this process is the reference of every way (a fresh
                # process pool is slower on its first game, which is no scaling)
                base = bases.get("loopback HTTP", 0.0) if executor else 0.0
                for n in [] if args.profile else levels:
                    spec = write_spec(root, f"m{number}-{n}", args.script, n, model, options,
                                      executor)
                    served = server_cpu(server)
                    calls, seconds, cpu = run_batch(spec, root / f"m{number}-{n}", n)
                    served = server_cpu(server) - served if mode != "in-process" else 0.0
                    rate = calls / seconds
                    base = base or rate / n
                    bases.setdefault(mode, base)
                    shares[mode, n] = rate / (n * base)
                    rows.append([mode, n, calls, f"{seconds:.1f}", f"{rate:.1f}",
                                 f"{n * base:.1f}", f"{shares[mode, n]:.2f}",
                                 f"{1000 * cpu / calls:.2f}", f"{cpu / seconds:.2f}",
                                 f"{served / seconds:.2f}" if served else "-"])
    finally:
        server.terminate()
        server.wait()
    if args.profile:
        return
    table("Throughput against linear scaling (one batch per row, concurrency = games)",
          ["model", "games", "calls", "seconds", "calls/s", "linear calls/s",
           "share of linear", "CPU ms/call", "CPU/wall", "server CPU/wall"], rows)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU is this "
          "process's (engine, agents, logs, client; the in-process fake too, not the server; "
          "not the processes executor's workers)")
    top = max(levels)
    chosen = list(modes)[-1]
    uptime = subprocess.run(["uptime"], check=False, capture_output=True, text=True)
    load = uptime.stdout.strip().rpartition("load average")[2].strip(": ") or "unknown"
    spread = chosen.removeprefix("loopback HTTP").strip(", ") or "one process"
    figure("concurrency", f"{shares[chosen, top]:.2f} of linear at {top} games (loopback HTTP)"
           f" · {spread} · load average {load} on {os.cpu_count()} cores")


def start_ray(processes: int) -> bool:
    """A local Ray cluster for the processes executor, started before any timing."""
    try:
        import ray
    except ImportError:
        print("Ray is not installed: the processes executor is skipped "
              "(pip install -e '.[ray]')")
        return False
    ray.init(address="local", num_cpus=processes, include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    return True


def profile(root: Path, script: str, n: int, model: str, options: str) -> None:
    spec = write_spec(root, "profiled", script, n, model, options)
    profiler = cProfile.Profile()
    profiler.enable()
    run_batch(spec, root / "profiled", n)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
    print(text.getvalue())


if __name__ == "__main__":
    main()
