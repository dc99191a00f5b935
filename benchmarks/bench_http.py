"""Benchmark: offctl's HTTP stack (offctl.adapters.webserver) under hostile clients, with serve's application over a
fleet built in memory, in a process of its own (forked) so that its threads, resident memory and open files are its
own. For each attack it prints what the server holds before, at the peak and after, and the answer times of
well-formed scrapes made meanwhile (median and worst of --scrapes); tests/faults/test_http_hostile.py asserts the
outcomes on the real processes, this prints the figures.

    .venv/bin/python benchmarks/bench_http.py [--partitions 10000] [--idle 3000] [--scrapes 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_serve import fleet  # noqa: E402

from offctl.adapters.webserver import LIMITS, http_server, listen  # noqa: E402
from tests.support import hostile  # noqa: E402

SCRAPE = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def start(partitions: int) -> tuple[int, int]:
    """serve's application over `partitions` partitions, rendered once, on the stack, in a forked child."""
    from offctl.core.rules.analyze import analyze
    from offctl.faces.serve.exporter import METHODS, Rendered, make_app
    from offctl.faces.serve.monitor import Monitor

    sock = listen("127.0.0.1", 0)
    pid = os.fork()
    if pid == 0:
        monitor = Monitor()
        monitor.update(analyze(fleet(partitions, 1)), 0.1)
        rendered = Rendered(monitor, timeout_s=600.0, log=lambda line: None)
        rendered.refresh()
        rendered.wait()
        http_server(make_app(monitor, 30.0, rendered), sock, METHODS, "offctl serve").run()
        os._exit(0)
    port = sock.getsockname()[1]
    sock.close()
    while hostile.burst(port, SCRAPE, 1, 5.0)[0] != 200:  # until it serves (the fleet is built first)
        time.sleep(0.1)
    return pid, port


def answered(port: int) -> tuple[int | None, float]:
    t0 = time.perf_counter()
    status = hostile.burst(port, SCRAPE, 1, 10.0)[0]
    return status, time.perf_counter() - t0


def scrapes(port: int, count: int) -> str:
    results = [answered(port) for _ in range(count)]
    times = sorted(t for _, t in results)
    ok = sum(1 for s, _ in results if s == 200)
    return f"{ok}/{count} scrapes 200, median {times[len(times) // 2] * 1e3:.1f} ms, worst {times[-1] * 1e3:.1f} ms"


def show(name: str, pid: int, before: hostile.Held, peak: hostile.Held, port: int, count: int) -> None:
    time.sleep(LIMITS.body_s + 1)  # the deadlines have ended what was left
    after = hostile.held(pid)
    print(
        f"  {name}: threads {before.threads}/{peak.threads}/{after.threads}, RSS "
        f"{before.rss_kib / 1024:.0f}/{peak.rss_kib / 1024:.0f}/{after.rss_kib / 1024:.0f} MiB, open files "
        f"{before.fds}/{peak.fds}/{after.fds} (before/peak/after); {scrapes(port, count)} after"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--idle", type=int, default=3000, help="idle connections in the largest attack")
    ap.add_argument("--scrapes", type=int, default=20)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.idle + 1024)), hard))
    pid, port = start(args.partitions)
    try:
        print(f"offctl's HTTP stack with serve's application, {args.partitions:,} partitions; limits: {LIMITS}")
        print(f"  unattacked: {scrapes(port, args.scrapes)}")
        for name, count, first in (
            ("300 half-sent requests", 300, b"GET /metrics HTT"),
            (f"{args.idle:,} idle connections", args.idle, b"GET /metrics HTT"),
            (
                "50 stalled bodies (50 MB declared)",
                50,
                b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\nabc",
            ),
        ):
            before = hostile.held(pid)
            held = hostile.hold(port, count, first)
            peak = hostile.held(pid)
            during = scrapes(port, args.scrapes)
            hostile.release(held)
            print(f"  {name}, while held: {during}")
            show(name, pid, before, peak, port, args.scrapes)
        before = hostile.held(pid)
        t0 = time.perf_counter()
        answers = hostile.burst(port, SCRAPE, 200)
        burst_s = time.perf_counter() - t0
        peak = hostile.held(pid)
        print(f"  a burst of 200 scrapes: {answers.count(200)}/200 answered 200 in {burst_s * 1e3:.0f} ms")
        show("the burst", pid, before, peak, port, args.scrapes)
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
