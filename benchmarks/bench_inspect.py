"""Benchmark: `offctl inspect --output json` vs. a sequential and a bare async kazoo read of the same nodes.

Seeds SPOUTS x PARTITIONS partition nodes (default 100 x 100 = 10,000) in a local ZooKeeper, with one
topic of PARTITIONS partitions per spout in a local broker (one message per partition; every spout
committed at the log end: a healthy fleet), then times in one run, the median of --repeat runs each:
  (a) a naive sequential kazoo loop: get_children per spout, then get() per node, one at a time;
  (b) the bare kazoo async read of the same nodes (children and data pipelined);
  (c) the full `offctl inspect --output json` command: a new process, both stores, analysis, JSON;
  (d) the same with ZooKeeper only (no --bootstrap-servers): the store work of (a) and (b), plus analysis.
Targets (issue 2): (c) <= 2x (b), and (a) >= 5x (c).

    .venv/bin/python benchmarks/bench_inspect.py [--spouts 100] [--partitions 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kazoo.client import KazooClient

from offctl.adapters import servers

ROOT = "/bench"


def seed(zk: KazooClient, bootstrap: str, spouts: int, partitions: int, first: int = 0) -> None:
    """Spouts first..spouts-1 under ROOT, each on its own topic of `partitions` partitions with one message in
    each, committed at the log end: a healthy fleet."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [f"bench-topic-{s}" for s in range(first, spouts)]
    for i in range(0, len(topics), 100):
        for future in admin.create_topics([NewTopic(t, partitions, 1) for t in topics[i : i + 100]]).values():
            future.result(timeout=300)
    # One record per partition, batched per request as a producer batches them.
    # A producer per 50 topics: librdkafka's broker thread walks every partition it has produced to, which
    # at 100,000 partitions makes one long-lived producer crawl.
    for i in range(0, len(topics), 50):
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50})
        for topic in topics[i : i + 50]:
            for p in range(partitions):
                producer.produce(topic, b"m", partition=p)
            producer.poll(0)
        producer.flush(300)
    host, port = bootstrap.rsplit(":", 1)
    zk.ensure_path("/storm/storms/bench-1-1700000000")

    def nodes():
        for s in range(first, spouts):
            zk.ensure_path(f"{ROOT}/spout-{s}")
            for p in range(partitions):
                yield (
                    f"{ROOT}/spout-{s}/partition_{p}",
                    json.dumps(
                        {
                            "topology": {"id": "bench-1-1700000000", "name": "bench"},
                            "offset": 1,
                            "partition": p,
                            "broker": {"host": host, "port": int(port)},
                            "topic": f"bench-topic-{s}",
                        }
                    ).encode(),
                )

    create_all(zk, nodes())


@contextmanager
def bench_servers(tmp: str) -> Iterator[tuple[servers.LocalServer, servers.LocalServer, KazooClient]]:
    """ZooKeeper and the test broker on free loopback ports under `tmp`, with a started kazoo client; the servers
    are stopped by pid afterwards."""
    zk_server = servers.start_zookeeper(Path(tmp) / "zk")
    broker = servers.start_broker(Path(tmp))
    try:
        zk = KazooClient(hosts=zk_server.address, timeout=30)
        zk.start()
        try:
            yield zk_server, broker, zk
        finally:
            zk.stop()
            zk.close()
    finally:
        servers.stop(broker.pid)
        servers.stop(zk_server.pid)


def create_all(zk: KazooClient, nodes) -> None:
    """Create (path, data) nodes, 2,000 requests in flight at a time."""
    pending = []
    for path, data in nodes:
        pending.append(zk.create_async(path, data))
        if len(pending) >= 2000:
            for ar in pending:
                ar.get(timeout=60)
            pending.clear()
    for ar in pending:
        ar.get(timeout=60)


def sequential_read(hosts: str) -> int:
    zk = KazooClient(hosts=hosts)
    zk.start()
    n = 0
    for spout in zk.get_children(ROOT):
        for child in zk.get_children(f"{ROOT}/{spout}"):
            zk.get(f"{ROOT}/{spout}/{child}")
            n += 1
    zk.stop()
    zk.close()
    return n


def async_read(hosts: str) -> int:
    zk = KazooClient(hosts=hosts)
    zk.start()
    spouts = zk.get_children(ROOT)
    listings = [(s, zk.get_children_async(f"{ROOT}/{s}")) for s in spouts]
    paths = [f"{ROOT}/{s}/{c}" for s, ar in listings for c in ar.get()]
    reads = [zk.get_async(p) for p in paths]
    n = sum(1 for ar in reads if ar.get() is not None)
    zk.stop()
    zk.close()
    return n


def inspect_cli(hosts: str, bootstrap: str | None) -> int:
    kafka = ["--bootstrap-servers", bootstrap] if bootstrap else []
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", "inspect", "--zk", hosts, "--zk-root", ROOT, *kafka, "--output", "json"],
        capture_output=True,
        text=True,
    )
    doc = json.loads(proc.stdout)
    # A healthy fleet: anything else means the benchmark measured the wrong thing.
    assert proc.returncode == 0 and not doc["findings"], (proc.returncode, doc["summary"], proc.stderr[-500:])
    return doc["summary"]["partitions"]


def timed(fn, repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spouts", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median is printed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        zk_server = servers.start_zookeeper(Path(tmp) / "zk")
        broker = servers.start_broker(Path(tmp))
        try:
            zk = KazooClient(hosts=zk_server.address)
            zk.start()
            t0 = time.perf_counter()
            seed(zk, broker.address, args.spouts, args.partitions)
            zk.stop()
            zk.close()
            total = args.spouts * args.partitions
            print(
                f"seeded {total:,} partition nodes ({args.spouts} spouts x {args.partitions} partitions) "
                f"and {args.spouts} topics in {time.perf_counter() - t0:.1f}s"
            )
            seq, n_seq = timed(lambda: sequential_read(zk_server.address), args.repeat)
            bare, n_bare = timed(lambda: async_read(zk_server.address), args.repeat)
            cli, n_cli = timed(lambda: inspect_cli(zk_server.address, broker.address), args.repeat)
            zk_only, n_zk = timed(lambda: inspect_cli(zk_server.address, None), args.repeat)
            assert n_seq == n_bare == n_cli == n_zk == total, (n_seq, n_bare, n_cli, n_zk, total)
            print(f"(a) sequential kazoo get loop            : {seq:7.3f} s")
            print(f"(b) bare kazoo async read                : {bare:7.3f} s")
            print(f"(c) offctl inspect --output json         : {cli:7.3f} s  (new process, ZooKeeper + Kafka)")
            print(f"(d) offctl inspect, ZooKeeper only       : {zk_only:7.3f} s  (new process)")
            print(f"inspect / bare async     = {cli / bare:.2f}x  (target <= 2x)")
            print(f"sequential / inspect     = {seq / cli:.2f}x  (target >= 5x)")
            print(f"sequential / inspect(zk) = {seq / zk_only:.2f}x")
        finally:
            servers.stop(broker.pid)
            servers.stop(zk_server.pid)


if __name__ == "__main__":
    main()
