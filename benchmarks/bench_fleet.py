"""Benchmark (issue 23): `offctl inspect --output json` and a serve cycle against the JVM's in-process floor, on
a healthy and an all-broken fleet built in one run, at 20,000 and 100,000 partitions.

The fleets are issue 23's: spouts of 100 partitions over 10 topics of 100 partitions (so 100 spouts share each
topic at 100,000 partitions), stored as storm-kafka's PartitionManager.commit() writes them, under two roots
of one ZooKeeper, against one broker:
  healthy  /fleet-healthy  every spout 0-3 behind the log end, its topology running: no finding;
  broken   /fleet-broken   every offset 1,000,000 past the log end and every record naming a broker that
                           leads nothing: OFFSET_ABOVE_LOG_END and STALE_BROKER on every partition.
The floor is benchmarks/floor/Floor.java run on the same root: ZooKeeper's own Java client lists the spouts
and multiReads their nodes, then bare ListOffsets ask the broker for the log start and end of each
topic-partition the nodes name. The floor is its in-process time (the JVM's start-up left out, as issue 23
asks); inspect is a new Python process, start-up included. A serve cycle is what serve does each interval
before its render (offctl.faces.serve.exporter.run_cycle: inspect in process, then the window update), timed once the
windows are full (10 cycles). Every figure is the best of --repeat runs. With --against (a checkout of an earlier
commit), runs of the two alternate and are paired, and each cell gives both medians and the median change with its 90%
bootstrap interval: the runs of one checkout spread by 10-20% on this machine, so a cell is slower only when its whole
interval is above zero.

    .venv/bin/python benchmarks/bench_fleet.py [--sizes 20000,100000] [--repeat 3]

Targets (issue 23): inspect and a serve cycle within 4x of the floor, at both sizes, on both fleets.
Measured on 2 cores, in two runs (C / D), each with its own servers:

| partitions | fleet | floor (in process) | `inspect -o json` | ratio | serve cycle | ratio |
|---|---|---|---|---|---|---|
| 20,000 | healthy | 0.24 s / 0.33 s | 0.84 s / 0.85 s | 3.44x / 2.56x | 0.62 s / 0.54 s | 2.53x / 1.62x |
| 20,000 | broken | 0.24 s / 0.23 s | 0.77 s / 0.79 s | 3.24x / 3.46x | 0.40 s / 0.41 s | 1.68x / 1.80x |
| 100,000 | healthy | 0.65 s / 0.56 s | 2.00 s / 1.94 s | 3.06x / 3.45x | 1.99 s / 2.05 s | 3.05x / 3.64x |
| 100,000 | broken | 0.61 s / 0.58 s | 2.40 s / 2.23 s | 3.89x / 3.87x | 1.92 s / 1.88 s | 3.13x / 3.26x |

Issue 37 (the layout redesign), on a quiet machine, before (feaf353) / after (the redesign) / after with the Storm
citations cached (100,000 only). offctl's own times did not move by more than the runs differ; the floor did
(0.46-0.67 s at 100,000), and with it the ratios: the 100,000 cells are over 4x in some runs, before as after.

| partitions | fleet | floor | `inspect -o json` | ratio | serve cycle | ratio |
|---|---|---|---|---|---|---|
| 20,000 | healthy | 0.38/0.23 s | 0.77/0.70 s | 2.05x/3.00x | 0.57/0.50 s | 1.53x/2.16x |
| 20,000 | broken | 0.30/0.18 s | 0.71/0.69 s | 2.37x/3.85x | 0.45/0.42 s | 1.50x/2.34x |
| 100,000 | healthy | 0.46/0.50/0.67 s | 1.85/1.90/1.91 s | 4.04x/3.83x/2.84x | 2.00/2.13/1.86 s | 4.36x/4.28x/2.77x |
| 100,000 | broken | 0.46/0.52/0.54 s | 2.21/2.32/2.27 s | 4.77x/4.46x/4.18x | 1.90/2.03/1.97 s | 4.11x/3.91x/3.64x |

Issue 45 (the house renovated), in one sitting on an otherwise idle machine: 97670db (before) against bea24c9 (after),
`--against --repeat 5`, both trees compiled. Medians, and the median change with its 90% bootstrap interval; no cell's
interval lies above zero (the inspect cells rest on 5 pairs, so they rule out only a slowdown beyond their upper bound):

| partitions | fleet | inspect: before | after | change (90% interval) | serve: before | after | change (90% interval) |
|---|---|---|---|---|---|---|---|
| 20,000 | healthy | 2.04 s | 1.88 s | -8.0% (-18.8% to +2.3%) | 1.37 s | 1.39 s | +0.9% (-3.8% to +8.6%) |
| 20,000 | broken | 1.79 s | 1.85 s | -0.7% (-19.5% to +13.1%) | 1.08 s | 1.03 s | +0.6% (-19.3% to +9.2%) |
| 100,000 | healthy | 5.40 s | 5.09 s | -6.7% (-14.9% to +4.3%) | 4.94 s | 5.03 s | -2.9% (-9.5% to +1.7%) |
| 100,000 | broken | 5.77 s | 5.58 s | -5.8% (-16.2% to +4.5%) | 4.82 s | 4.51 s | -7.4% (-16.9% to -2.4%) |
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_inspect import bench_servers, create_all
from kazoo.client import KazooClient

from offctl.faces.serve.exporter import cycle_reading, run_cycle
from offctl.faces.serve.monitor import Monitor
from offctl.settings.connection import Connection
from offctl.settings.run import Reading

TOPICS = 10
PARTITIONS = 100  # per topic, and per spout
TOPOLOGY = "fleet-1-1700000000"
ROOTS = {"healthy": "/fleet-healthy", "broken": "/fleet-broken"}
FLOOR = Path(__file__).parent / "floor" / "Floor.java"
FLOOR_CLASSPATH = ":".join(
    f"/usr/share/java/{jar}.jar" for jar in ("zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-nop")
)


def make_topics(bootstrap: str) -> dict[tuple[str, int], int]:
    """TOPICS topics of PARTITIONS partitions with 4-7 messages each, produced in batches as producers do; returns
    each log end."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [f"fleet-{t}" for t in range(TOPICS)]
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]).values():
        future.result(timeout=120)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    ends = {}
    for topic in topics:
        for p in range(PARTITIONS):
            ends[topic, p] = 4 + p % 4
            for _ in range(ends[topic, p]):
                producer.produce(topic, b"m", partition=p)
                producer.poll(0)
        producer.flush(120)
    return ends


def record(topic: str, partition: int, offset: int, host: str, port: int) -> bytes:
    """A node as storm-kafka's PartitionManager.commit() writes it (json-simple escapes '/')."""
    return (
        json.dumps(
            {
                "topology": {"id": TOPOLOGY, "name": "fleet"},
                "offset": offset,
                "partition": partition,
                "broker": {"host": host, "port": port},
                "topic": topic,
            },
            separators=(",", ":"),
        )
        .replace("/", "\\/")
        .encode()
    )


def seed(zk: KazooClient, bootstrap: str, ends: dict, first: int, spouts: int) -> None:
    """Spouts first..spouts-1 under both roots; spout s reads topic fleet-(s mod TOPICS)."""
    host, port = bootstrap.rsplit(":", 1)

    def nodes():
        for s in range(first, spouts):
            topic = f"fleet-{s % TOPICS}"
            for fleet, root in ROOTS.items():
                zk.ensure_path(f"{root}/spout-{s:05d}")
                for p in range(PARTITIONS):
                    if fleet == "healthy":
                        data = record(topic, p, ends[topic, p] - s % 4, host, int(port))
                    else:
                        data = record(topic, p, ends[topic, p] + 1_000_000, "gone.example", 9092)
                    yield f"{root}/spout-{s:05d}/partition_{p}", data

    create_all(zk, nodes())


def floor(zk: str, root: str, bootstrap: str, size: int) -> dict:
    proc = subprocess.run(
        ["java", "-cp", FLOOR_CLASSPATH, str(FLOOR), zk, root, bootstrap], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-1000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["nodes"] == size and found["partitions_answered"] == [TOPICS * PARTITIONS] * 2, found
    return found


def checkout_env(checkout: str | None) -> dict | None:
    """The environment that runs offctl from another checkout (--against): its offctl/ first on the path, with
    commands/ reached as offctl.commands through a link inside it (made here, as the package-dir mapping does)."""
    if checkout is None:
        return None
    link = Path(checkout) / "offctl" / "commands"
    if not link.exists():
        link.symlink_to(Path("..") / "commands")
    return {**os.environ, "PYTHONPATH": checkout}


def inspect_cli(zk: str, root: str, bootstrap: str, fleet: str, size: int, checkout: str | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "inspect",
            "--zk",
            zk,
            "--zk-root",
            root,
            "--bootstrap-servers",
            bootstrap,
            "--output",
            "json",
        ],
        capture_output=True,
        env=checkout_env(checkout),
    )
    elapsed = time.perf_counter() - t0
    doc = json.loads(proc.stdout)
    codes = {f["code"] for f in doc["findings"]}
    # The fleet must be what it is said to be, or the figure measures something else. Since issue 46 offctl also
    # says, once per spout, that Kafka 4.4 refuses storm-kafka's requests (BROKER_INCOMPATIBLE); a checkout from
    # before it does not: both are the fleet the figures are for.
    refused = codes & {"BROKER_INCOMPATIBLE"}
    spouts = len(refused) * size // PARTITIONS
    if fleet == "healthy":
        assert proc.returncode == (1 if refused else 0) and codes == refused, (codes, proc.stderr[-500:])
    else:
        assert proc.returncode == 1 and codes - refused == {"OFFSET_ABOVE_LOG_END", "STALE_BROKER"}, codes
        assert len(doc["findings"]) == 2 * size + spouts, len(doc["findings"])
    assert doc["summary"]["partitions"] == size
    return elapsed


def serve_cycle(conn: Connection, monitor: Monitor) -> float:
    """serve's own cycle (offctl.faces.serve.exporter.run_cycle), with its time-lag budget at the default --interval."""
    t0 = time.perf_counter()
    run_cycle(cycle_reading(Reading(conn), 30.0), monitor)
    return time.perf_counter() - t0


CYCLES = """
import sys, time
from offctl.settings.connection import Connection
from offctl.faces.serve.monitor import Monitor
from offctl.faces.serve.exporter import run_cycle
zk, root, bootstrap, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = Connection(zk=zk, zk_roots=(root,), bootstrap_servers=bootstrap)
monitor, times = Monitor(), []
try:  # a checkout with the one Reading (issue 45)
    from offctl.faces.serve.exporter import cycle_reading
    from offctl.settings.run import Reading
    cycle = cycle_reading(Reading(conn), 30.0)
    one = lambda: run_cycle(cycle, monitor)
except ImportError:  # an earlier checkout: the reading in keyword arguments
    from offctl.core.model import Thresholds
    from offctl.faces.serve.exporter import cycle_budget
    from offctl.pipeline import TIME_LAG_BUDGET_S, Selection
    one = lambda: run_cycle(conn, Selection(), Thresholds(), monitor, cycle_budget(TIME_LAG_BUDGET_S, 30.0))
for i in range(monitor.window + repeat):
    t0 = time.perf_counter()
    one()
    times.append(time.perf_counter() - t0)
print(" ".join(f"{t:.6f}" for t in times[monitor.window:]))
"""


def cycles_in_process(zk: str, root: str, bootstrap: str, repeat: int, checkout: str | None) -> list[float]:
    """serve cycles as serve_cycle times them, in a process of their own running this or another checkout: the times
    of `repeat` cycles once the windows are full."""
    proc = subprocess.run(
        [sys.executable, "-c", CYCLES, zk, root, bootstrap, str(repeat)],
        capture_output=True,
        text=True,
        env=checkout_env(checkout),
    )
    assert proc.returncode == 0, proc.stderr[-1000:]
    return [float(t) for t in proc.stdout.split()]


ROUNDS = 3  # serve-cycle processes per checkout, in turn: each fills its windows, then times `repeat` cycles


def compare(zk: str, root: str, bootstrap: str, fleet: str, size: int, repeat: int, against: str) -> tuple:
    """(inspect pairs, serve-cycle pairs) of `against` and this checkout: runs made in turn (that, this, that,
    this...), each pair (before, after) two neighbouring runs, so that the machine's drift falls on both alike.
    Inspect: `repeat` pairs of processes; serve: ROUNDS pairs of processes, their cycles paired in order."""
    inspects, cycles = [], []
    for _ in range(repeat):
        before = inspect_cli(zk, root, bootstrap, fleet, size, against)
        inspects.append((before, inspect_cli(zk, root, bootstrap, fleet, size)))
    for _ in range(ROUNDS):
        before = cycles_in_process(zk, root, bootstrap, repeat, against)
        cycles += zip(before, cycles_in_process(zk, root, bootstrap, repeat, None), strict=True)
    return inspects, cycles


def paired(pairs: list[tuple[float, float]], draws: int = 2000) -> tuple[float, float, float, float, float]:
    """(median before, median after, median of after/before - 1, and the 5th and 95th percentiles of that median
    over `draws` bootstrap resamples of the pairs): a change whose interval holds 0 is within what the runs spread."""
    rng = random.Random(47)
    ratios = [after / before - 1 for before, after in pairs]
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(draws))
    return (
        statistics.median(b for b, _ in pairs),
        statistics.median(a for _, a in pairs),
        statistics.median(ratios),
        medians[int(draws * 0.05)],
        medians[int(draws * 0.95)],
    )


def fleets(sizes_arg: str):
    """(zk server, broker, size, fleet, root) for each size (ascending) and fleet, on one set of servers: both
    fleets are seeded up to each size before its fleets are yielded."""
    with tempfile.TemporaryDirectory() as tmp, bench_servers(tmp) as (zk_server, broker, zk):
        ends = make_topics(broker.address)
        zk.ensure_path(f"/storm/storms/{TOPOLOGY}")
        seeded = 0
        for size in sorted(int(s) for s in sizes_arg.split(",")):
            t0 = time.perf_counter()
            seed(zk, broker.address, ends, seeded // PARTITIONS, size // PARTITIONS)
            seeded = size
            print(f"{size:,} partitions a fleet, both fleets seeded in {time.perf_counter() - t0:.1f}s", flush=True)
            for fleet, root in ROOTS.items():
                yield zk_server, broker, size, fleet, root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="20000,100000")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each timing (the best is printed); with --against, pairs of inspects and cycles per process",
    )
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        help="also time offctl from another checkout (a git worktree "
        "of an earlier commit), in turn with this one, and print before/after (no floor)",
    )
    args = ap.parse_args()
    if args.against:
        return main_against(args)
    rows = []
    for zk_server, broker, size, fleet, root in fleets(args.sizes):
        floors = [floor(zk_server.address, root, broker.address, size) for _ in range(args.repeat)]
        best = min(floors, key=lambda f: f["total_s"])
        cli = min(inspect_cli(zk_server.address, root, broker.address, fleet, size) for _ in range(args.repeat))
        conn = Connection(zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address)
        monitor = Monitor()
        for _ in range(monitor.window):  # the windows full, as in a serve that has run a while
            serve_cycle(conn, monitor)
        cycle = min(serve_cycle(conn, monitor) for _ in range(args.repeat))
        rows.append((size, fleet, best, cli, cycle))
        print(
            f"  {fleet:7}: floor {best['total_s']:.2f}s (list {best['list_s']:.2f}, multiRead "
            f"{best['multiread_s']:.2f}, topics {best['topics_s']:.2f}, ListOffsets "
            f"{best['list_offsets_s']:.2f}); inspect {cli:.2f}s = {cli / best['total_s']:.2f}x; "
            f"serve cycle {cycle:.2f}s = {cycle / best['total_s']:.2f}x",
            flush=True,
        )
    print("\n| partitions | fleet | floor (in process) | inspect -o json | ratio | serve cycle | ratio |")
    print("|---|---|---|---|---|---|---|")
    for size, fleet, best, cli, cycle in rows:
        print(
            f"| {size:,} | {fleet} | {best['total_s']:.2f} s | {cli:.2f} s | {cli / best['total_s']:.2f}x | "
            f"{cycle:.2f} s | {cycle / best['total_s']:.2f}x |"
        )


def main_against(args) -> None:
    """Before (`--against`) and after (this checkout), paired: the medians, and the median change with its 90%
    bootstrap interval. A cell is slower only where the whole interval is above 0."""
    rows = []
    for zk_server, broker, size, fleet, root in fleets(args.sizes):
        inspects, cycles = compare(zk_server.address, root, broker.address, fleet, size, args.repeat, args.against)
        rows.append((size, fleet, paired(inspects), paired(cycles), len(inspects), len(cycles)))
        for name, pairs in (("inspect", inspects), ("serve cycle", cycles)):
            print(f"  {size:,} {fleet} {name}: " + ", ".join(f"{b:.2f}->{a:.2f}" for b, a in pairs), flush=True)
    print(
        f"\n| partitions | fleet | inspect -o json: before ({args.against}) | after | change (90% interval) | "
        f"serve cycle: before | after | change (90% interval) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size, fleet, (ib, ia, ic, ilo, ihi), (cb, ca, cc, clo, chi), ni, nc in rows:
        print(
            f"| {size:,} | {fleet} | {ib:.2f} s | {ia:.2f} s | {ic:+.1%} ({ilo:+.1%} to {ihi:+.1%}, {ni} pairs) | "
            f"{cb:.2f} s | {ca:.2f} s | {cc:+.1%} ({clo:+.1%} to {chi:+.1%}, {nc} pairs) |"
        )


if __name__ == "__main__":
    main()
