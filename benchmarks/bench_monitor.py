"""Benchmark: how long `storm-kafka-monitor` takes to answer Storm UI, as the UI runs it (a new process each time).

- healthy: a storm-kafka-client group and a storm-kafka spout (broker registry in ZooKeeper), one topic of
  --partitions partitions, each partition 5 messages, the spouts 2 behind (so every partition's time lag is read);
- black hole: a broker, then a ZooKeeper, that accept connections and never answer, with --deadline D: the answer
  is the failure line, and the figure should be D (the deadline counts from the process's start).

Each figure is the best and the median of --repeat runs, wall time of the whole process.

    .venv/bin/python benchmarks/bench_monitor.py [--repeat 5] [--partitions 100] [--deadline 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from offctl.adapters import servers

PROGRAM = str(Path(sys.executable).parent / "storm-kafka-monitor")


def run(args: list[str], deadline: str) -> tuple[float, str]:
    started = time.monotonic()
    out = subprocess.run(
        [PROGRAM, *args], capture_output=True, text=True, timeout=600, env={**os.environ, "OFFCTL_DEADLINE": deadline}
    )
    return time.monotonic() - started, out.stdout


def figures(args: list[str], repeat: int, deadline: str, check) -> str:
    times = []
    for _ in range(repeat):
        took, out = run(args, deadline)
        check(out)
        times.append(took)
    return f"best {min(times):.2f}s, median {statistics.median(times):.2f}s"


def seed(zk_address: str, bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic("orders", partitions, 1)]).values():
        future.result(timeout=60)
    time.sleep(1)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for p in range(partitions):
        for i in range(5):
            producer.produce("orders", partition=p, value=b"m%d" % i)
    producer.flush(30)  # batched, as producers do
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    tps = [TopicPartition("orders", p, 3) for p in range(partitions)]
    for future in admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions("orders-client", tps)]).values():
        future.result(timeout=60)
    host, port = bootstrap.rsplit(":", 1)
    zk = KazooClient(hosts=zk_address)
    zk.start(timeout=30)
    zk.create("/brokers/ids/0", json.dumps({"host": host, "port": int(port), "version": 1}).encode(), makepath=True)
    for p in range(partitions):
        zk.create(f"/brokers/topics/orders/partitions/{p}/state", b'{"leader":0,"isr":[0]}', makepath=True)
        record = {
            "topology": {"id": "orders-1-1700000000", "name": "orders"},
            "offset": 3,
            "partition": p,
            "broker": {"host": host, "port": int(port)},
            "topic": "orders",
        }
        zk.create(f"/kafka-spouts/orders-spout/partition_{p}", json.dumps(record).encode(), makepath=True)
    zk.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--deadline", type=float, default=3.0)
    opts = parser.parse_args()
    deadline = f"{opts.deadline:g}s"
    with tempfile.TemporaryDirectory() as tmp:
        zk_server = servers.start_zookeeper(Path(tmp) / "zk")
        broker = servers.start_broker(Path(tmp) / "broker")
        try:
            seed(zk_server.address, broker.address, opts.partitions)

            def answered(out: str) -> None:
                doc = json.loads(out)
                assert len(doc["orders"]) == opts.partitions, out[:300]
                assert all(e["lag"] == 2 for e in doc["orders"].values()), out[:300]

            def failed(out: str) -> None:
                assert out.startswith("Unable to get offset lags for kafka. Reason: "), out[:300]

            print(f"storm-kafka-monitor, {opts.partitions} partitions, {opts.repeat} runs each (whole process):")
            print(
                "  new spout (-t -g -b):          ",
                figures(["-t", "orders", "-g", "orders-client", "-b", broker.address], opts.repeat, "10s", answered),
            )
            print(
                "  old spout (-o ... -r /brokers):",
                figures(
                    [
                        "-o",
                        "-t",
                        "orders",
                        "-n",
                        "/kafka-spouts/orders-spout",
                        "-z",
                        zk_server.address + ",",
                        "-r",
                        "/brokers",
                    ],
                    opts.repeat,
                    "10s",
                    answered,
                ),
            )
            sock, port = servers.black_hole()
            hole = f"127.0.0.1:{port}"
            try:
                print(
                    f"  black-holed broker, deadline {deadline}:",
                    figures(["-t", "orders", "-g", "g", "-b", hole], opts.repeat, deadline, failed),
                )
                print(
                    f"  black-holed ZooKeeper, deadline {deadline}:",
                    figures(
                        ["-o", "-t", "orders", "-n", "/a/b", "-z", hole + ",", "-r", "/brokers"],
                        opts.repeat,
                        deadline,
                        failed,
                    ),
                )
            finally:
                sock.close()
        finally:
            servers.stop(broker.pid)
            servers.stop(zk_server.pid)


if __name__ == "__main__":
    main()
