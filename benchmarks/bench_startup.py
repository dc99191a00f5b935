"""Benchmark: what a command pays before it does anything (issue 23, start-up).

For each command line, the best and median wall time of --repeat new processes (`offctl ... --help`, which
parses the command line and exits, so the figure is imports and Typer's set-up), and, from one run under
`python -X importtime`, the total import time and the offctl, Spark, exporter and store-client modules it
loaded. The audit's Spark modules, the exporter's HTTP server and prometheus_client should load only for
the commands that use them.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

OFFCTL = str(Path(sys.executable).with_name("offctl"))
COMMANDS = [
    ["--help"],
    ["inspect", "--help"],
    ["reset", "--help"],
    ["audit", "--help"],
    ["serve", "--help"],
    ["--version"],
]
HEAVY = (
    "offctl.faces.audit.job",
    "offctl.adapters.spark",
    "pyspark",
    "offctl.faces.serve.exporter",
    "prometheus_client",
    "wsgiref",
    "kazoo",
    "confluent_kafka",
    "offctl.repair.reset",
    "offctl.faces.sandbox",
)


def wall(args: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([OFFCTL, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def imports(args: list[str]) -> tuple[float, list[str]]:
    """Total import time (s) and the heavy top-level packages loaded, from one -X importtime run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "offctl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    total, loaded = 0, set()
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            total += int(m.group(1))
            loaded.add(m.group(4))
    return total / 1e6, sorted(h for h in HEAVY if h in loaded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat
    print(f"{'command':<22} {'best':>8} {'median':>8} {'imports':>8}  heavy modules loaded")
    for args in COMMANDS:
        times = wall(args, repeat)
        total, heavy = imports(args)
        print(
            f"{' '.join(args):<22} {min(times):>7.3f}s {statistics.median(times):>7.3f}s {total:>7.3f}s  "
            f"{', '.join(heavy) or '-'}"
        )


if __name__ == "__main__":
    main()
