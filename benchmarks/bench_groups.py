"""Benchmark (issue 43): what reading a group's commits through kafka-python costs (offctl/adapters/groups.py).

On one Apache Kafka 4.4 broker, groups committed with Storm's metadata as storm-kafka-client writes it:
  one group of 1,000 partitions (10 topics of 100), and 100 groups of 10 partitions each.
For each, the median and best of --repeat:
  - `KafkaStore.group_commits` in process (the client made once; each read one OffsetFetch a group);
  - `offctl inspect --group ... -o json` as a new process, start-up, the log offsets and the analysis included.
And the import of kafka-python, which offctl pays only in a run that reads a group.

    .venv/bin/python benchmarks/bench_groups.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offctl.adapters import servers  # noqa: E402
from offctl.adapters.kafka import KafkaStore  # noqa: E402

META = json.dumps(
    {"topologyId": "orders-1-1700000000", "taskId": 1, "threadName": "Thread-5-kafka-spout"}, separators=(",", ":")
)
TOPICS, PARTITIONS = 10, 100


def seed(bootstrap: str) -> tuple[list[str], list[str]]:
    """The topics and their commits: (the big group, the 100 small groups)."""
    from tests.conftest import KafkaHelper

    helper = KafkaHelper(bootstrap)
    try:
        topics = [f"bench-{t}" for t in range(TOPICS)]
        for topic in topics:
            helper.create_topic(topic, PARTITIONS)
        from offctl.adapters.groups import GroupClient

        client = GroupClient(bootstrap, {}, 60)
        try:
            client.commit("big", [(t, p, 5, META) for t in topics for p in range(PARTITIONS)])
            small = [f"small-{g}" for g in range(100)]
            for g, group in enumerate(small):
                client.commit(group, [(topics[g % TOPICS], p, 3, META) for p in range(10)])
        finally:
            client.close()
    finally:
        helper.close()
    return ["big"], small


def in_process(bootstrap: str, groups: list[str], repeat: int) -> list[float]:
    store = KafkaStore(bootstrap, timeout=30)
    try:
        store.group_commits(groups[:1])  # the client made and the coordinator found, as a run's first read does
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            commits = store.group_commits(groups)
            times.append(time.perf_counter() - start)
        assert len(commits) == 1000 and not store.notes, store.notes  # both sets: 1,000 commits
    finally:
        store.close()
    return times


def whole_process(bootstrap: str, groups: list[str], repeat: int) -> list[float]:
    argv = [
        sys.executable,
        "-m",
        "offctl",
        "inspect",
        "--bootstrap-servers",
        bootstrap,
        "--fail-on",
        "never",
        "-o",
        "json",
        *[a for g in groups for a in ("--group", g)],
    ]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def import_time() -> float:
    out = (
        subprocess.run([sys.executable, "-X", "importtime", "-c", "import kafka.admin"], capture_output=True, text=True)
        .stderr.strip()
        .splitlines()[-1]
    )
    return int(out.split("|")[1]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-groups-") as tmp:
        broker = servers.start_broker(Path(tmp))
        try:
            big, small = seed(broker.address)
            print(f"import kafka.admin: {import_time():.3f} s")
            for name, groups in (("1 group x 1,000 partitions", big), ("100 groups x 10 partitions", small)):
                for how, measure in (
                    ("group_commits in process", in_process),
                    ("inspect -o json, a new process", whole_process),
                ):
                    times = measure(broker.address, groups, args.repeat)
                    print(f"{name}: {how}: median {statistics.median(times):.3f} s, best {min(times):.3f} s")
        finally:
            servers.stop(broker.pid)


if __name__ == "__main__":
    main()
