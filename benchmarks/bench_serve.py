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

--render N measures the /metrics render alone (issue 23), without servers: a fleet of N partitions built in
memory (spouts of 100 partitions, each on its own topic, every partition lagging and moving each cycle), --cycles
cycles of the window update and the render serve does after each, then scrapes of the rendered page through
serve's WSGI app; it prints each cycle's update and render time and the RSS after it.

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

from kazoo.client import KazooClient
from prometheus_client import CollectorRegistry, generate_latest

from bench_inspect import ROOT, seed
from offctl.adapters import servers
from offctl.config import Connection
from offctl.inspect import Selection, inspect
from offctl.core.model import Snapshot, Thresholds
from offctl.core.monitor import Collector, Monitor

PARTITIONS = 100
FLOOR = Path(__file__).parent / "floor" / "Floor.java"
FLOOR_CLASSPATH = ":".join(f"/usr/share/java/{jar}.jar" for jar in ("zookeeper", "zookeeper-jute", "slf4j-api",
                                                                     "slf4j-nop"))


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def inspect_cli(zk: str, bootstrap: str | None) -> float:
    kafka = ["--bootstrap-servers", bootstrap] if bootstrap else []
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "offctl", "inspect", "--zk", zk, "--zk-root", ROOT, *kafka,
                           "--output", "json"], capture_output=True)
    assert proc.returncode == 0, proc.stderr[-500:]
    return time.perf_counter() - t0


def floor(zk: str, bootstrap: str, size: int) -> dict:
    """One run of the JVM floor; its own timings, and the whole run's (JVM start included) as `process_s`."""
    t0 = time.perf_counter()
    proc = subprocess.run(["java", "-cp", FLOOR_CLASSPATH, str(FLOOR), zk, ROOT, bootstrap], capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-1000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["nodes"] == size and found["partitions_answered"] == [size, size], found
    return {**found, "process_s": elapsed}


def cycle(conn: Connection, monitor: Monitor) -> tuple[float, int]:
    t0 = time.perf_counter()
    report = inspect(conn, Selection(), Thresholds())
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
    from offctl.core.model import PartitionLog, ZkNode

    at_ms = 1_700_000_000_000 + cycle * 60_000
    nodes, cluster = [], {}
    for s in range(size // PARTITIONS):
        topic = f"bench-topic-{s}"
        cluster[topic] = {p: PartitionLog(0, 1000 + cycle * 20 + p) for p in range(PARTITIONS)}
        for p in range(PARTITIONS):
            record = (f'{{"topology":{{"id":"bench-1-1700000000","name":"bench"}},"offset":{900 + cycle * 10 + p},'
                      f'"partition":{p},"broker":{{"host":"127.0.0.1","port":9092}},"topic":"{topic}"}}').encode()
            nodes.append(ZkNode(ROOT, f"spout-{s}", f"{ROOT}/spout-{s}/partition_{p}", p, None, record, 1, at_ms))
    return Snapshot(at_ms, zk_nodes=tuple(nodes), cluster=cluster, running=frozenset({"bench-1-1700000000"}))


def render_only(size: int, cycles: int) -> None:
    """The render alone, as serve does it after each cycle, and scrapes between cycles."""
    from offctl.core.analyze import analyze
    from offctl.exporter import Rendered, make_app, registry_of

    monitor = Monitor()
    rendered = Rendered(registry_of(monitor))
    app = make_app(monitor, 30.0, rendered)
    print(f"{size:,} partitions in memory, {cycles} cycles (RSS {rss_mib():.0f} MiB before the first)")
    renders = []
    for i in range(1, cycles + 1):
        report = analyze(fleet(size, i))
        t0 = time.perf_counter()
        monitor.update(report, 0.0)
        t1 = time.perf_counter()
        rendered.refresh()
        t2 = time.perf_counter()
        del report
        renders.append(t2 - t1)
        print(f"  cycle {i}: update {t1 - t0:.2f}s, render {t2 - t1:.2f}s, {len(rendered.body) / 1e6:.1f} MB, "
              f"RSS {rss_mib():.0f} MiB")
    families = list(Collector(monitor).collect())
    for family in families:
        family.samples = list(family.samples)
    prebuilt = type("Prebuilt", (), {"collect": lambda self: iter(families)})()
    t0 = time.perf_counter()
    writer_s = len(generate_latest(prebuilt)) and time.perf_counter() - t0
    samples = sum(len(family.samples) for family in families)
    families = prebuilt = None  # the samples go before the scrapes are timed
    scrapes = []
    for _ in range(10):
        t0 = time.perf_counter()
        chunks = app({"PATH_INFO": "/metrics", "REQUEST_METHOD": "GET"}, lambda status, headers: None)
        scrapes.append(time.perf_counter() - t0)
        assert b"".join(chunks) == rendered.body
    print(f"  render: best {min(renders):.2f}s, median {sorted(renders)[len(renders) // 2]:.2f}s; a scrape between "
          f"cycles: {max(scrapes) * 1e6:.0f} us at most; RSS peak "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"  prometheus-client's writer alone, over the last cycle's {samples:,} samples made beforehand: "
          f"{writer_s:.2f}s ({writer_s / samples * 1e6:.1f} us a sample): the floor of a render through it")


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
    with tempfile.TemporaryDirectory() as tmp:
        zk_server = servers.start_zookeeper(Path(tmp) / "zk")
        broker = servers.start_broker(Path(tmp))
        try:
            zk = KazooClient(hosts=zk_server.address, timeout=30)
            zk.start()
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
                print(f"  floor (JVM): {floor_s:.2f}s = list {best_floor['list_s']:.2f}s + multiRead "
                      f"{best_floor['multiread_s']:.2f}s + topics from the records {best_floor['topics_s']:.2f}s + "
                      f"ListOffsets {best_floor['list_offsets_s']:.2f}s (the JVM process: "
                      f"{min(f['process_s'] for f in floors):.2f}s)")
                print(f"  inspect --output json: {inspect_s:.2f}s = {inspect_s / floor_s:.2f}x the floor "
                      f"(target <= 4x)")
                print(f"  inspect, ZooKeeper only: {inspect_zk_s:.2f}s = {inspect_zk_s / floor_zk_s:.2f}x the "
                      f"floor's list + multiRead ({floor_zk_s:.2f}s)")
                print(f"  serve cycle (read, analysis, window): {best:.2f}s (runs: {', '.join(f'{t:.2f}' for t in times)})"
                      f" = {best / floor_s:.2f}x the floor (target <= 4x), {best / inspect_s:.2f}x inspect "
                      f"(target <= 1.2x)")
                print(f"  /metrics: render {render_s:.2f}s, {size_bytes / 1e6:.1f} MB; --no-partition-metrics "
                      f"{small_s:.3f}s, {small_bytes / 1e3:.0f} kB. serve renders once per cycle: cycle and render "
                      f"take {best + render_s:.2f}s ({(best + render_s) / inspect_s:.2f}x inspect) with per-partition "
                      f"series, {best + small_s:.2f}s ({(best + small_s) / inspect_s:.2f}x) without")
                if n == 0:
                    marks = {}
                    for i in range(1, args.cycles + 1):
                        cycle(conn, monitor)
                        if i % 10 == 0:
                            render(monitor)
                        if i in (1, 10, args.cycles // 2, args.cycles):
                            marks[i] = rss_mib()
                    print(f"  RSS over {args.cycles} cycles at {size:,}: "
                          + ", ".join(f"cycle {i}: {v:.0f} MiB" for i, v in marks.items())
                          + f" (peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
            zk.stop()
            zk.close()
        finally:
            servers.stop(broker.pid)
            servers.stop(zk_server.pid)


if __name__ == "__main__":
    main()
