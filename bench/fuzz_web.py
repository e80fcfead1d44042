"""Fuzzing `jubensha serve`'s web API with schemathesis (requests drawn from the app's own
OpenAPI schema, each sent as drawn and with a real token) and hypothesis (the forms the
pages post): how many requests, how many answers of 500 or more, how many tracebacks in
the server's log. The real server (uvicorn with `serve`'s limits) on a loopback port; the
driver is ``tests/web/web_fuzz.py``. Prints a table and ``fuzz_web: ...``.

    python bench/fuzz_web.py [--per-operation 150] [--seed 0]
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.web.web_fuzz import fuzz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-operation", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0,
                        help="0: the same requests every run; others: fresh ones.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.monotonic()
    with tempfile.TemporaryDirectory() as runs:
        tally = fuzz(Path(runs), args.per_operation, args.seed)
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    statuses = ", ".join(f"{status // 100}xx {count:,}"
                         for status, count in sorted(tally.statuses.items()))
    rows = [("requests answered", f"{tally.cases:,} ({statuses})"),
            ("answers of 500 or more", str(len(tally.server_errors))),
            ("tracebacks logged", str(len(tally.tracebacks))),
            ("requests with no answer", str(sum(tally.transport_errors.values()))),
            ("time", (f"{time.monotonic() - wall:.0f} s wall, {cpu_s:.0f} CPU-s, load "
                      f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"))]
    for name, value in rows:
        print(f"{name:<26} {value}")
    for line in (tally.server_errors + tally.tracebacks)[:10]:
        print(f"  {line}")
    print(f"fuzz_web: {tally.cases:,} requests, {len(tally.server_errors)} answers >= 500, "
          f"{len(tally.tracebacks)} tracebacks")


if __name__ == "__main__":
    main()
