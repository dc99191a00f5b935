"""Benchmark: the size and render time of `inspect --output json` for an all-broken fleet, on plain data.

Builds, with no servers, the snapshot of a fleet of spouts of 100 partitions over 10 topics of 100
partitions, every partition broken: its stored offset above the log end (OFFSET_ABOVE_LOG_END) and its
record naming a broker that is not the leader (STALE_BROKER), two findings per partition. analyze() makes
the Report; the figures are render.report_document plus render.dumps (what `write_json` does), the best of
--repeat runs, and the document's size, with the bytes each top-level key takes.

    .venv/bin/python benchmarks/bench_json.py [--sizes 20000,100000] [--repeat 3]

Measured (2 shared cores, Python 3.11, orjson), document version 1 (a hint on every finding) and version 2
(each code's hint once, in `hints`; docs/contract.md "Document version"):

| partitions | findings | version 1 | version 2 |
|---|---|---|---|
| 20,000 | 40,000 | 32.5 MB (findings 23.1 MB), 0.12 s | 23.7 MB (findings 14.4 MB), 0.12 s |
| 100,000 | 200,000 | 162.3 MB (findings 115.6 MB), 0.64 s | 118.5 MB (findings 71.8 MB), 0.62 s |

Since measured with the retention and commit-expiry keys on every partition (null here): 25.8 MB at 20,000
and 128.8 MB (partitions 56.6 MB) rendered in 0.67 s at 100,000. The partitions took 46.3 MB of the 118.5 at
100,000; what is left in a finding is what it says of its partition (its message, with the numbers) and the
keys that name it.
"""

from __future__ import annotations

import argparse
import json
import time

from offctl.core.records.model import PartitionLog, Snapshot, ZkNode
from offctl.core.rules.analyze import analyze
from offctl.render.formats import dumps
from offctl.render.report import report_document

ROOT = "/kafka-spouts"
TOPICS = 10
PARTITIONS = 100  # per topic, and per spout
TOPOLOGY = "orders-topology-1-1700000000"


def record(topic: str, partition: int, offset: int) -> bytes:
    """A node as storm-kafka's PartitionManager.commit() writes it (see tests/conftest.storm_record), naming
    a broker that no partition has as leader."""
    return (
        json.dumps(
            {
                "topology": {"id": TOPOLOGY, "name": "orders-topology"},
                "offset": offset,
                "partition": partition,
                "broker": {"host": "gone.example", "port": 9092},
                "topic": topic,
            },
            separators=(",", ":"),
        )
        .replace("/", "\\/")
        .encode()
    )


def broken_fleet(size: int) -> Snapshot:
    """`size` partitions (a multiple of 100), each stored 1,000 past its log end of 500."""
    nodes = []
    for s in range(size // PARTITIONS):
        topic = f"topic-{s % TOPICS}"
        for p in range(PARTITIONS):
            path = f"{ROOT}/spout-{s:05d}/partition_{p}"
            nodes.append(ZkNode(ROOT, f"spout-{s:05d}", path, p, None, record(topic, p, 1500), 7, 1700000000000))
    cluster = {
        f"topic-{t}": {p: PartitionLog(0, 500, "broker-1:9092") for p in range(PARTITIONS)} for t in range(TOPICS)
    }
    return Snapshot(1700000600000, zk_nodes=tuple(nodes), cluster=cluster, running=frozenset({TOPOLOGY}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="20000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        report = analyze(broken_fleet(size))
        best, text = float("inf"), ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            text = dumps(report_document(report))
            best = min(best, time.perf_counter() - t0)
        doc = json.loads(text)
        parts = ", ".join(f"{k} {len(dumps(v)) / 1e6:.1f}" for k, v in doc.items() if len(dumps(v)) > 100_000)
        print(
            f"{size:,} partitions, {len(report.findings):,} findings: {len(text) / 1e6:6.1f} MB of JSON "
            f"({parts} MB), render {best:.2f} s (best of {args.repeat})"
        )


if __name__ == "__main__":
    main()
