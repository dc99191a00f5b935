"""Benchmark: one `offctl serve` cycle (read, analysis, window update) and its /metrics render, at 10,000 and
100,000 partitions (spouts of 100 partitions, each on its own topic), beside `offctl inspect --output json`
and the JVM floor on the same data; the scrape size with and without per-partition series; the exporter's
RSS over 100 cycles (the window must not grow it).

The floor is benchmarks/floor/Floor.java: ZooKeeper's own Java client lists the spouts and multiReads their
nodes, then two bare ListOffsets requests ask the broker for every partition's log start and end. It runs
as a new JVM each time, as inspect runs as a new Python process. Every figure is the best of --repeat runs.

Targets (issue 15): inspect and a serve cycle within 4x of the floor; a cycle at 100,000 partitions within
1.2x of inspect on the same data; RSS flat over 100 cycles.

    .venv/bin/python benchmarks/bench_serve.py [--sizes 10000,100000] [--cycles 100] [--repeat 3]

--render N measures the /metrics render alone (issue 23), without servers: a fleet of N partitions built in memory
(spouts of 100 partitions, each on its own topic, every partition lagging and moving each cycle), --cycles cycles of the
window update and the render serve does after each, in a forked child (offctl.faces.serve.exporter.Rendered), with
scrapes through serve's answer while the child renders and after. It prints per cycle the exporter's own CPU for the
render (the fork and the pipe read), the child's wall time, the child's peak RSS (pages it shares with the exporter
included) and private memory (sampled from /proc every 50 ms), and the exporter's RSS after.

    .venv/bin/python benchmarks/bench_serve.py --render 100000 [--cycles 20]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_inspect import ROOT, bench_servers, seed
from prometheus_client import CollectorRegistry, generate_latest

from offctl.core.records.model import Snapshot, Thresholds
from offctl.core.rules.profiles import Profiles
from offctl.faces.serve.monitor import Collector, Monitor
from offctl.pipeline.inspect import inspect
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection

PARTITIONS = 100
FLOOR = Path(__file__).parent / "floor" / "Floor.java"
FLOOR_CLASSPATH = ":".join(
    f"/usr/share/java/{jar}.jar" for jar in ("zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-nop")
)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def inspect_cli(zk: str, bootstrap: str | None) -> float:
    kafka = ["--bootstrap-servers", bootstrap] if bootstrap else []
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", "inspect", "--zk", zk, "--zk-root", ROOT, *kafka, "--output", "json"],
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    return time.perf_counter() - t0


def floor(zk: str, bootstrap: str, size: int) -> dict:
    """One run of the JVM floor; its own timings, and the whole run's (JVM start included) as `process_s`."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["java", "-cp", FLOOR_CLASSPATH, str(FLOOR), zk, ROOT, bootstrap], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-1000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["nodes"] == size and found["partitions_answered"] == [size, size], found
    return {**found, "process_s": elapsed}


def cycle(conn: Connection, monitor: Monitor) -> tuple[float, int]:
    t0 = time.perf_counter()
    report = inspect(Reading(conn, Selection(), Profiles(Thresholds())))
    monitor.update(report, time.perf_counter() - t0)
    return time.perf_counter() - t0, len(report.rows)


def render(monitor: Monitor) -> tuple[float, int]:
    registry = CollectorRegistry()
    registry.register(Collector(monitor))
    t0 = time.perf_counter()
    body = generate_latest(registry)
    return time.perf_counter() - t0, len(body)


def fleet(size: int, cycle: int) -> Snapshot:
    """`size` partitions as one cycle reads them, cycle minutes apart: every spout commits and every log grows."""
    from offctl.core.records.model import PartitionLog, ZkNode

    at_ms = 1_700_000_000_000 + cycle * 60_000
    nodes, cluster = [], {}
    for s in range(size // PARTITIONS):
        topic = f"bench-topic-{s}"
        cluster[topic] = {p: PartitionLog(0, 1000 + cycle * 20 + p) for p in range(PARTITIONS)}
        for p in range(PARTITIONS):
            record = (
                f'{{"topology":{{"id":"bench-1-1700000000","name":"bench"}},"offset":{900 + cycle * 10 + p},'
                f'"partition":{p},"broker":{{"host":"127.0.0.1","port":9092}},"topic":"{topic}"}}'
            ).encode()
            nodes.append(ZkNode(ROOT, f"spout-{s}", f"{ROOT}/spout-{s}/partition_{p}", p, None, record, 1, at_ms))
    return Snapshot(at_ms, zk_nodes=tuple(nodes), cluster=cluster, running=frozenset({"bench-1-1700000000"}))


def private_kib(pid: int) -> int:
    """A process's private memory (what it does not share with another, e.g. pages copied on write), in KiB."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:  # gone meanwhile
        return 0
    return sum(
        int(line.split()[1]) for line in text.splitlines() if line.startswith(("Private_Clean:", "Private_Dirty:"))
    )


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def render_only(size: int, cycles: int) -> None:
    """The render, as serve does it after each cycle (in a forked child), and scrapes during and between renders."""
    from offctl.core.rules.analyze import analyze
    from offctl.faces.serve.exporter import Rendered, answer

    monitor = Monitor()
    rendered = Rendered(monitor, log=lambda line: None, timeout_s=600.0)

    def scrape() -> float:
        t0 = time.perf_counter()
        _, _, body = answer(monitor, 30.0, rendered, "/metrics")
        elapsed = time.perf_counter() - t0
        assert body is rendered.body
        return elapsed

    print(f"{size:,} partitions in memory, {cycles} cycles (RSS {rss_mib():.0f} MiB before the first)")
    rows, during = [], []
    for i in range(1, cycles + 1):
        report = analyze(fleet(size, i))
        t0 = time.perf_counter()
        monitor.update(report, 0.0)
        update_s = time.perf_counter() - t0
        del report
        cpu0, main0 = resource.getrusage(resource.RUSAGE_SELF), time.thread_time()
        rendered.refresh()
        fork_cpu = time.thread_time() - main0
        # While the child renders: the page served meanwhile (the last one), and the child's private memory.
        private, loop0 = 0, time.thread_time()
        while rendered.running():
            if rendered.child:
                private = max(private, private_kib(rendered.child))
            if rendered.body is not None:
                during.append(scrape())
            time.sleep(0.05)
        loop_cpu = time.thread_time() - loop0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        # the exporter's own CPU for the render: everything this process spent, less the sampling loop above
        own_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime - loop_cpu
        last = rendered.last
        assert rendered.failures == 0 and last is not None
        rows.append(
            (
                own_cpu,
                last.fork_s,
                last.read_cpu_s,
                last.child_s,
                last.child_peak_rss_kib / 1024,
                private / 1024,
                rss_mib(),
            )
        )
        print(
            f"  cycle {i}: update {update_s:.2f}s; render: exporter CPU {own_cpu:.3f}s (fork {last.fork_s:.3f}s "
            f"wall, {fork_cpu:.3f}s CPU; pipe read {last.read_cpu_s:.3f}s CPU), child {last.child_s:.2f}s wall, "
            f"{last.size / 1e6:.1f} MB; child peak RSS {last.child_peak_rss_kib / 1024:.0f} MiB of which "
            f"private {private / 1024:.0f} MiB; exporter RSS {rss_mib():.0f} MiB"
        )
    scrapes = [scrape() for _ in range(10)]
    print(
        f"  medians over cycles 2 to {cycles}: exporter CPU per render {median([r[0] for r in rows[1:]]):.3f}s "
        f"(fork {median([r[1] for r in rows[1:]]):.3f}s, pipe read {median([r[2] for r in rows[1:]]):.3f}s); "
        f"child {median([r[3] for r in rows[1:]]):.2f}s wall; child peak RSS "
        f"{median([r[4] for r in rows[1:]]):.0f} MiB, private {median([r[5] for r in rows[1:]]):.0f} MiB"
    )
    print(
        f"  a scrape during a render: {median(during) * 1e6:.0f} us median, {max(during) * 1e3:.1f} ms at most "
        f"({len(during)}); between renders {max(scrapes) * 1e6:.0f} us at most; exporter RSS peak "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )
    families = list(Collector(monitor).collect())
    for family in families:
        family.samples = list(family.samples)
    prebuilt = type("Prebuilt", (), {"collect": lambda self: iter(families)})()
    t0 = time.perf_counter()
    writer_s = len(generate_latest(prebuilt)) and time.perf_counter() - t0
    samples = sum(len(family.samples) for family in families)
    print(
        f"  prometheus-client's writer alone, over the last cycle's {samples:,} samples made beforehand: "
        f"{writer_s:.2f}s ({writer_s / samples * 1e6:.1f} us a sample): the floor of a render through it"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--render", type=int, metavar="N", help="the render alone, at N partitions built in memory")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--cycles", type=int, default=100, help="cycles at the smallest size, for the RSS figure")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each timing; the best is printed")
    args = ap.parse_args()
    if args.render:
        render_only(args.render, args.cycles)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp, bench_servers(tmp) as (zk_server, broker, zk):
        conn = Connection(zk=zk_server.address, zk_roots=(ROOT,), bootstrap_servers=broker.address)
        seeded = 0
        for n, size in enumerate(sizes):
            seed(zk, broker.address, size // PARTITIONS, PARTITIONS, first=seeded // PARTITIONS)
            seeded = size
            floors = [floor(zk_server.address, broker.address, size) for _ in range(args.repeat)]
            best_floor = min(floors, key=lambda f: f["total_s"])
            floor_s = best_floor["total_s"]
            floor_zk_s = min(f["list_s"] + f["multiread_s"] for f in floors)
            inspect_s = min(inspect_cli(zk_server.address, broker.address) for _ in range(args.repeat))
            inspect_zk_s = min(inspect_cli(zk_server.address, None) for _ in range(args.repeat))
            monitor = Monitor()
            times = [cycle(conn, monitor)[0] for _ in range(args.repeat)]
            best = min(times)
            render_s, size_bytes = render(monitor)
            monitor.partition_metrics = False
            small_s, small_bytes = render(monitor)
            monitor.partition_metrics = True
            print(f"{size:,} partitions:")
            print(
                f"  floor (JVM): {floor_s:.2f}s = list {best_floor['list_s']:.2f}s + multiRead "
                f"{best_floor['multiread_s']:.2f}s + topics from the records {best_floor['topics_s']:.2f}s + "
                f"ListOffsets {best_floor['list_offsets_s']:.2f}s (the JVM process: "
                f"{min(f['process_s'] for f in floors):.2f}s)"
            )
            print(f"  inspect --output json: {inspect_s:.2f}s = {inspect_s / floor_s:.2f}x the floor (target <= 4x)")
            print(
                f"  inspect, ZooKeeper only: {inspect_zk_s:.2f}s = {inspect_zk_s / floor_zk_s:.2f}x the "
                f"floor's list + multiRead ({floor_zk_s:.2f}s)"
            )
            print(
                f"  serve cycle (read, analysis, window): {best:.2f}s (runs: {', '.join(f'{t:.2f}' for t in times)})"
                f" = {best / floor_s:.2f}x the floor (target <= 4x), {best / inspect_s:.2f}x inspect "
                f"(target <= 1.2x)"
            )
            print(
                f"  /metrics: render {render_s:.2f}s, {size_bytes / 1e6:.1f} MB; --no-partition-metrics "
                f"{small_s:.3f}s, {small_bytes / 1e3:.0f} kB. serve renders once per cycle: cycle and render "
                f"take {best + render_s:.2f}s ({(best + render_s) / inspect_s:.2f}x inspect) with per-partition "
                f"series, {best + small_s:.2f}s ({(best + small_s) / inspect_s:.2f}x) without"
            )
            if n == 0:
                marks = {}
                for i in range(1, args.cycles + 1):
                    cycle(conn, monitor)
                    if i % 10 == 0:
                        render(monitor)
                    if i in (1, 10, args.cycles // 2, args.cycles):
                        marks[i] = rss_mib()
                print(
                    f"  RSS over {args.cycles} cycles at {size:,}: "
                    + ", ".join(f"cycle {i}: {v:.0f} MiB" for i, v in marks.items())
                    + f" (peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)"
                )


if __name__ == "__main__":
    main()
