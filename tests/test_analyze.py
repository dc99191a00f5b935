"""Every detection rule, table-driven over plain data (no servers), boundaries included."""

from __future__ import annotations

import json

import pytest

from offctl.analyze import analyze
from offctl.model import KafkaCommit, PartitionLog, Snapshot, Thresholds, ZkNode

T = "orders"
LEADER = "kafka1:9092"
RUNNING = "orders-topo-3-1700000000"


def rec(partition: int, offset, *, topic: str = T, topology_id: str = RUNNING, broker: str = LEADER,
        name: str | None = None, spout: str = "s", folder: str | None = None, mtime: int = 1000,
        raw: bytes | None = None) -> ZkNode:
    host, port = broker.split(":")
    data = raw if raw is not None else json.dumps({
        "topology": {"id": topology_id, "name": name or topology_id.rsplit("-", 2)[0]},
        "offset": offset, "partition": partition, "broker": {"host": host, "port": int(port)}, "topic": topic,
    }).encode()
    path = f"/r/{spout}/" + (f"{folder}/" if folder else "") + f"partition_{partition}"
    return ZkNode("/r", spout, path, partition, folder, data, 0, mtime)


def meta(topology_id: str) -> str:
    return json.dumps({"topologyId": topology_id, "taskId": 1, "threadName": "t"})


def commit(partition: int, offset: int, metadata: str | None = meta(RUNNING), topic: str = T) -> KafkaCommit:
    return KafkaCommit("g", topic, partition, offset, metadata)


def cluster(n: int = 2, start: int = 100, end: int = 200, leader: str = LEADER, topic: str = T):
    return {topic: {p: PartitionLog(start, end, leader) for p in range(n)}}


def run(zk=(), commits=(), *, cl=None, running=frozenset({RUNNING}), th=Thresholds()):
    return analyze(Snapshot(0, tuple(zk), tuple(commits), cluster=cl, running=running), th)


def codes(report) -> list[tuple]:
    return sorted((f.code, f.topic, f.partition) for f in report.findings)


# (name, zk nodes, kafka commits, cluster, thresholds, expected (code, topic, partition))
CASES = [
    ("healthy at log start and log end", [rec(0, 100), rec(1, 200)], [], cluster(), Thresholds(), []),
    ("healthy kafka commit at offset 0", [], [commit(0, 0), commit(1, 0)], cluster(start=0), Thresholds(), []),
    ("one below log start", [rec(0, 99), rec(1, 150)], [], cluster(), Thresholds(),
     [("OFFSET_BELOW_LOG_START", T, 0)]),
    ("one above log end", [rec(0, 201), rec(1, 150)], [], cluster(), Thresholds(),
     [("OFFSET_ABOVE_LOG_END", T, 0)]),
    ("kafka below and above", [], [commit(0, 99), commit(1, 201)], cluster(), Thresholds(),
     [("OFFSET_ABOVE_LOG_END", T, 1), ("OFFSET_BELOW_LOG_START", T, 0)]),
    ("zero is ignored, not below start", [rec(0, 0), rec(1, 150)], [], cluster(), Thresholds(),
     [("IGNORED_ZERO_OFFSET", T, 0)]),
    ("negative is ignored", [rec(0, -1), rec(1, 150)], [], cluster(start=0), Thresholds(),
     [("IGNORED_ZERO_OFFSET", T, 0)]),
    ("zero is ignored without kafka too", [rec(0, 0), rec(1, 150)], [], None, Thresholds(),
     [("IGNORED_ZERO_OFFSET", T, 0)]),
    ("one is honoured", [rec(0, 1), rec(1, 1)], [], cluster(start=0), Thresholds(), []),
    ("lag exactly at threshold", [rec(0, 150), rec(1, 151)], [], cluster(), Thresholds(lag_threshold=50),
     [("HIGH_LAG", T, 0)]),
    ("lag threshold zero flags lag zero", [rec(0, 200), rec(1, 200)], [], cluster(),
     Thresholds(lag_threshold=0), [("HIGH_LAG", T, 0), ("HIGH_LAG", T, 1)]),
    ("lag equal to maxOffsetBehind is fine, one more is not", [rec(0, 150), rec(1, 149)], [], cluster(),
     Thresholds(max_offset_behind=50), [("LAG_BEYOND_MAX_OFFSET_BEHIND", T, 1)]),
    ("no lag rules for out of range", [rec(0, 5), rec(1, 200)], [], cluster(),
     Thresholds(lag_threshold=1, max_offset_behind=1), [("OFFSET_BELOW_LOG_START", T, 0)]),
    ("unknown topic", [rec(0, 150, topic="gone"), rec(1, 150, topic="gone")], [], cluster(), Thresholds(),
     [("UNKNOWN_TOPIC", "gone", 0), ("UNKNOWN_TOPIC", "gone", 1)]),
    ("unknown partition", [rec(0, 150), rec(1, 150), rec(5, 150)], [], cluster(), Thresholds(),
     [("UNKNOWN_PARTITION", T, 5)]),
    ("missing partition", [rec(0, 150)], [], cluster(3), Thresholds(),
     [("MISSING_PARTITION", T, 1), ("MISSING_PARTITION", T, 2)]),
    ("missing partition of a group", [], [commit(1, 150)], cluster(2), Thresholds(),
     [("MISSING_PARTITION", T, 0)]),
    ("malformed record still counts as present", [rec(0, 150), rec(1, 0, raw=b"{")], [], cluster(),
     Thresholds(), [("MALFORMED_RECORD", None, 1)]),
    ("no kafka: no range, unknown or missing checks", [rec(0, 5), rec(7, 1)], [], None, Thresholds(), []),
    ("log offsets unreadable: no range check", [rec(0, 5), rec(1, 5)], [],
     {T: {0: PartitionLog(None, None), 1: PartitionLog(None, None)}}, Thresholds(), []),
    ("expected topic given by the user", [rec(0, 150), rec(1, 150, topic="payments")], [],
     {**cluster(), **cluster(topic="payments")}, Thresholds(expected_topic="payments"),
     [("TOPIC_MISMATCH", T, 0)]),  # the wrong record still sits on payments/0: not missing
    ("majority topic", [rec(0, 150), rec(1, 150), rec(2, 150, topic="payments")], [],
     {**cluster(3), **cluster(3, topic="payments")}, Thresholds(), [("TOPIC_MISMATCH", "payments", 2)]),
    ("tie goes to the most recent writer", [rec(0, 150, mtime=5), rec(1, 150, topic="payments", mtime=9)], [],
     {**cluster(), **cluster(topic="payments")}, Thresholds(), [("TOPIC_MISMATCH", T, 0)]),
    ("folder topic", [rec(0, 150, folder=T), rec(1, 150, topic="payments", folder=T)], [],
     {**cluster(), **cluster(topic="payments")}, Thresholds(), [("TOPIC_MISMATCH", "payments", 1)]),
    ("two topologies on one spout id",
     [rec(0, 150, topology_id="a-1-1"), rec(1, 150, topology_id="b-1-1")], [], cluster(), Thresholds(),
     [("ID_COLLISION", None, None), ("STALE_TOPOLOGY", None, None), ("STALE_TOPOLOGY", None, None)]),
    ("redeployed topology of one name is no collision",
     [rec(0, 150), rec(1, 150, topology_id="orders-topo-2-1600000000")], [], cluster(), Thresholds(),
     [("STALE_TOPOLOGY", None, None)]),
    ("two topologies on one group", [],
     [commit(0, 150), commit(1, 150), commit(2, 150, meta("other-1-1700000000"))], cluster(3), Thresholds(),
     [("FOREIGN_COMMIT", T, 2), ("ID_COLLISION", None, None), ("STALE_TOPOLOGY", None, None)]),
    ("a tie between topology ids goes to the latest deployment", [],
     [commit(0, 150, meta("orders-topo-2-1600000000")), commit(1, 150)], cluster(), Thresholds(),
     [("FOREIGN_COMMIT", T, 0), ("STALE_TOPOLOGY", None, None)]),
    ("commit without storm metadata", [], [commit(0, 150, None), commit(1, 150)], cluster(), Thresholds(),
     [("FOREIGN_COMMIT", T, 0)]),
    ("commit with unparsable metadata", [], [commit(0, 150, "{oops"), commit(1, 150)], cluster(), Thresholds(),
     [("FOREIGN_COMMIT", T, 0)]),
    ("commit of an older deployment of the same topology", [],
     [commit(0, 150), commit(1, 150), commit(2, 150, meta("orders-topo-2-1600000000"))], cluster(3), Thresholds(),
     [("FOREIGN_COMMIT", T, 2), ("STALE_TOPOLOGY", None, None)]),
    ("stale broker", [rec(0, 150, broker="old:9092"), rec(1, 150, broker="KAFKA1:9092")], [], cluster(),
     Thresholds(), [("STALE_BROKER", T, 0)]),
]


@pytest.mark.parametrize("name, zk, commits, cl, th, expected", CASES, ids=[c[0] for c in CASES])
def test_rules(name, zk, commits, cl, th, expected):
    assert codes(run(zk, commits, cl=cl, th=th)) == sorted(expected)


@pytest.mark.parametrize("committed, lag", [(100, 100), (150, 50), (200, 0), (99, None), (201, None)])
def test_lag_only_for_positions_in_range(committed, lag):
    report = run([rec(0, committed), rec(1, 150)], cl=cluster())
    row = report.rows[0]
    assert (row.log_start, row.log_end, row.lag) == (100, 200, lag)


def test_lag_is_none_for_an_ignored_zero():
    report = run([rec(0, 0), rec(1, 0)], cl=cluster(start=0))
    assert [r.lag for r in report.rows] == [None, None]


def test_messages_carry_the_numbers():
    report = run([rec(0, 90), rec(1, 150)], cl=cluster())
    (f,) = report.findings
    assert f.message == "orders/0 committed 90 < log start 100: 10 messages were deleted before they were processed"
    assert f.severity.label == "error" and f.hint and f.path == "/r/s/partition_0"


def test_stale_topology_names_the_running_deployment():
    report = run([rec(0, 150, topology_id="orders-topo-2-1600000000"), rec(1, 150, topology_id="x-1-1")],
                 cl=cluster())
    messages = sorted(f.message for f in report.findings if f.code == "STALE_TOPOLOGY")
    assert messages == [
        "1 partition committed by topology id orders-topo-2-1600000000, which is not running; "
        f"topology 'orders-topo' is running as {RUNNING}",
        "1 partition committed by topology id x-1-1, which is not running; no topology named 'x' is running",
    ]


def test_stale_topology_skipped_without_storm_root():
    report = run([rec(0, 150, topology_id="x-1-1")], cl=cluster(1), running=None)
    assert codes(report) == []
    assert any("STALE_TOPOLOGY" in s for s in report.checks_skipped)


def test_collision_message_counts_partitions():
    report = run([rec(0, 150, topology_id="a-1-1"), rec(1, 150, topology_id="a-1-1"), rec(2, 150, topology_id="b-1-1")],
                 cl=cluster(3), running=None)
    (f,) = report.findings
    assert f.message == "spout id 's' holds offsets of 2 topologies: a (2 partitions), b (1 partition)"
    assert f.path == "/r/s"


def test_consumers_are_kept_apart_by_root_and_store():
    a = rec(0, 150)
    b = ZkNode("/other", "s", "/other/s/partition_0", 0, None, a.data, 0, 0)
    report = run([a, b], [commit(0, 150)], cl=cluster(1))
    assert sorted(str(c.key) for c in report.consumers) == ["/other/s", "/r/s", "group g"]
    assert all(c.partitions == 1 and c.total_lag == 50 for c in report.consumers)


def test_summary_and_worst():
    report = run([rec(0, 90), rec(1, 150)], cl=cluster(), th=Thresholds(lag_threshold=10))
    (consumer,) = report.consumers
    assert (consumer.partitions, consumer.total_lag, consumer.max_lag) == (2, 50, 50)
    assert consumer.finding_codes == ("HIGH_LAG", "OFFSET_BELOW_LOG_START")
    assert report.worst().label == "error"
    assert [r.status.label if r.status else None for r in report.rows] == ["error", "warning"]
