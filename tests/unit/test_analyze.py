"""Every detection rule, table-driven over plain data (no servers), boundaries included."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from offctl.core.records.model import ConsumerKey, KafkaCommit, PartitionLog, ReadFinding, Snapshot, Thresholds, ZkNode
from offctl.core.rules.analyze import analyze
from offctl.core.storm.releases import LATEST_TIME, FirstPoll, SpoutProfile, StormKafka, StormKafkaClient

T = "orders"
LEADER = "kafka1:9092"
RUNNING = "orders-topo-3-1700000000"


def rec(
    partition: int,
    offset,
    *,
    topic: str = T,
    topology_id: str = RUNNING,
    broker: str = LEADER,
    name: str | None = None,
    spout: str = "s",
    folder: str | None = None,
    mtime: int = 1000,
    raw: bytes | None = None,
) -> ZkNode:
    host, port = broker.split(":")
    # Byte for byte as PartitionManager.commit writes it (every release, v0.9.2-incubating to v1.2.4):
    # ImmutableMap order, json-simple's JSONValue.toJSONString (no spaces, '/' escaped).
    data = (
        raw
        if raw is not None
        else json.dumps(
            {
                "topology": {"id": topology_id, "name": name or topology_id.rsplit("-", 2)[0]},
                "offset": offset,
                "partition": partition,
                "broker": {"host": host, "port": int(port)},
                "topic": topic,
            },
            separators=(",", ":"),
        )
        .replace("/", "\\/")
        .encode()
    )
    path = f"/r/{spout}/" + (f"{folder}/" if folder else "") + f"partition_{partition}"
    return ZkNode("/r", spout, path, partition, folder, data, 0, mtime)


LEGACY = "{topic-partition=orders-0, offset=150, numFails=0, thread='Thread-11-kafka-spout-executor[3 3]'}"


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
    (
        "PartitionManager.java@v1.2.4: healthy at log start and log end",
        [rec(0, 100), rec(1, 200)],
        [],
        cluster(),
        Thresholds(),
        [],
    ),
    (
        "KafkaSpout.doSeek@v2.8.8: healthy kafka commit at offset 0",
        [],
        [commit(0, 0), commit(1, 0)],
        cluster(start=0),
        Thresholds(),
        [],
    ),
    (
        "PartitionManager.fill@v1.2.4: one below log start",
        [rec(0, 99), rec(1, 150)],
        [],
        cluster(),
        Thresholds(),
        [("OFFSET_BELOW_LOG_START", T, 0)],
    ),
    (
        "PartitionManager.fill@v1.2.4: one above log end",
        [rec(0, 201), rec(1, 150)],
        [],
        cluster(),
        Thresholds(),
        [("OFFSET_ABOVE_LOG_END", T, 0)],
    ),
    (
        "KafkaSpoutConfig@v2.8.8 auto.offset.reset: kafka below and above",
        [],
        [commit(0, 99), commit(1, 201)],
        cluster(),
        Thresholds(),
        [("OFFSET_ABOVE_LOG_END", T, 1), ("OFFSET_BELOW_LOG_START", T, 0)],
    ),
    (
        "PartitionManager.java@v1.2.4 committed <= 0: zero is ignored, not below start",
        [rec(0, 0), rec(1, 150)],
        [],
        cluster(),
        Thresholds(),
        [("IGNORED_ZERO_OFFSET", T, 0)],
    ),
    (
        "PartitionManager.java@v1.2.4 committed <= 0: negative is ignored",
        [rec(0, -1), rec(1, 150)],
        [],
        cluster(start=0),
        Thresholds(),
        [("IGNORED_ZERO_OFFSET", T, 0)],
    ),
    (
        "PartitionManager.java@v1.2.4 committed <= 0: zero is ignored without kafka too",
        [rec(0, 0), rec(1, 150)],
        [],
        None,
        Thresholds(),
        [("IGNORED_ZERO_OFFSET", T, 0)],
    ),
    ("PartitionManager.java@v1.2.4: one is honoured", [rec(0, 1), rec(1, 1)], [], cluster(start=0), Thresholds(), []),
    (
        "lag exactly at threshold",
        [rec(0, 150), rec(1, 151)],
        [],
        cluster(),
        Thresholds(lag_threshold=50),
        [("HIGH_LAG", T, 0)],
    ),
    (
        "lag threshold zero flags lag zero",
        [rec(0, 200), rec(1, 200)],
        [],
        cluster(),
        Thresholds(lag_threshold=0),
        [("HIGH_LAG", T, 0), ("HIGH_LAG", T, 1)],
    ),
    (
        "PartitionManager.java@v0.9.6: maxOffsetBehind compares with the log end (LatestTime)",
        [rec(0, 150), rec(1, 149)],
        [],
        cluster(),
        Thresholds(spout=SpoutProfile(StormKafka.V0_9_3, max_offset_behind=50)),
        [("LAG_BEYOND_MAX_OFFSET_BEHIND", T, 1)],
    ),
    (
        "PartitionManager.java@v1.2.4: maxOffsetBehind compares with startOffsetTime (earliest): lag alone never trips "
        "it",
        [rec(0, 150), rec(1, 101)],
        [],
        cluster(),
        Thresholds(spout=SpoutProfile(max_offset_behind=50)),
        [],
    ),
    (
        "PartitionManager.java@v1.2.4: startOffsetTime latest makes maxOffsetBehind compare with the log end",
        [rec(0, 150), rec(1, 149)],
        [],
        cluster(),
        Thresholds(spout=SpoutProfile(start_offset_time=LATEST_TIME, max_offset_behind=50)),
        [("LAG_BEYOND_MAX_OFFSET_BEHIND", T, 1)],
    ),
    (
        "KafkaConfig.java@v0.9.2-incubating: maxOffsetBehind defaults to 100000",
        [rec(0, 100_000), rec(1, 99_999)],
        [],
        cluster(start=0, end=200_000),
        Thresholds(spout=SpoutProfile(StormKafka.V0_9_0)),
        [("LAG_BEYOND_MAX_OFFSET_BEHIND", T, 1)],
    ),
    (
        "KafkaConfig.java@v0.9.6: maxOffsetBehind defaults to Long.MAX_VALUE",
        [rec(0, 100_000), rec(1, 1)],
        [],
        cluster(start=0, end=200_000),
        Thresholds(spout=SpoutProfile(StormKafka.V0_9_3)),
        [],
    ),
    (
        "no lag rules for out of range",
        [rec(0, 5), rec(1, 200)],
        [],
        cluster(),
        Thresholds(lag_threshold=1),
        [("OFFSET_BELOW_LOG_START", T, 0)],
    ),
    (
        "PartitionManager.java@v1.2.4 applies to the spout topic: unknown topic",
        [rec(0, 150, topic="gone"), rec(1, 150, topic="gone")],
        [],
        cluster(),
        Thresholds(),
        [("UNKNOWN_TOPIC", "gone", 0), ("UNKNOWN_TOPIC", "gone", 1)],
    ),
    (
        "Partition.java@v1.2.4 getId: unknown partition",
        [rec(0, 150), rec(1, 150), rec(5, 150)],
        [],
        cluster(),
        Thresholds(),
        [("UNKNOWN_PARTITION", T, 5)],
    ),
    (
        "ZkCoordinator/PartitionManager@v1.2.4 no record: missing partition",
        [rec(0, 150)],
        [],
        cluster(3),
        Thresholds(),
        [("MISSING_PARTITION", T, 1), ("MISSING_PARTITION", T, 2)],
    ),
    (
        "KafkaSpout.doSeek@v2.8.8 no commit: missing partition of a group",
        [],
        [commit(1, 150)],
        cluster(2),
        Thresholds(),
        [("MISSING_PARTITION", T, 0)],
    ),
    (
        "ZkState.readJSON@v1.2.4 not JSON: malformed record still counts as present",
        [rec(0, 150), rec(1, 0, raw=b"{")],
        [],
        cluster(),
        Thresholds(),
        [("MALFORMED_RECORD", T, 1)],
    ),
    (
        "PartitionManager.java@v1.2.4: no topology object, the spout cannot use it",
        [rec(0, 150), rec(1, 0, raw=b'{"offset":150,"partition":1,"topic":"orders"}')],
        [],
        cluster(),
        Thresholds(),
        [("MALFORMED_RECORD", T, 1)],
    ),
    (
        "PartitionManager.java@v1.2.4: no topic field, still used: only topology.id and offset are read",
        [
            rec(0, 150),
            rec(1, 0, raw=b'{"topology":{"id":"orders-topo-3-1700000000","name":"orders-topo"},"offset":150}'),
        ],
        [],
        cluster(),
        Thresholds(),
        [("INCONSISTENT_RECORD", T, 1)],
    ),
    (
        "PartitionManager.java@v1.2.4: partition field is not read, the node name decides",
        [rec(0, 150), rec(1, 150, raw=rec(3, 150).data)],
        [],
        cluster(),
        Thresholds(),
        [("INCONSISTENT_RECORD", T, 1)],
    ),
    ("no kafka: no range, unknown or missing checks", [rec(0, 5), rec(7, 1)], [], None, Thresholds(), []),
    (
        "log offsets unreadable: no range check",
        [rec(0, 5), rec(1, 5)],
        [],
        {T: {0: PartitionLog(None, None), 1: PartitionLog(None, None)}},
        Thresholds(),
        [],
    ),
    (
        "PartitionManager.java@v1.2.4 reads no topic: expected topic given by the user",
        [rec(0, 150), rec(1, 150, topic="payments")],
        [],
        {**cluster(), **cluster(topic="payments")},
        Thresholds(expected_topic="payments"),
        [("TOPIC_MISMATCH", "payments", 0)],
    ),  # applied to payments/0, where it sits: not missing
    (
        "majority topic: the stray record is applied to the majority's partition",
        [rec(0, 150), rec(1, 150), rec(2, 150, topic="payments")],
        [],
        {**cluster(3), **cluster(3, topic="payments")},
        Thresholds(),
        [("TOPIC_MISMATCH", T, 2)],
    ),
    (
        "a one-against-one tie is a tie, whatever the mtimes",
        [rec(0, 150, mtime=5), rec(1, 150, topic="payments", mtime=9)],
        [],
        {**cluster(), **cluster(topic="payments")},
        Thresholds(),
        [("TOPIC_MISMATCH", None, None)],
    ),
    (
        "Partition.java@v1.2.4 getId: folder topic",
        [rec(0, 150, folder=T), rec(1, 150, topic="payments", folder=T)],
        [],
        {**cluster(), **cluster(topic="payments")},
        Thresholds(),
        [("TOPIC_MISMATCH", T, 1)],
    ),
    (
        "PartitionManager.commit@v1.2.4 topology.name: two topologies on one spout id",
        [rec(0, 150, topology_id="a-1-1"), rec(1, 150, topology_id="b-1-1")],
        [],
        cluster(),
        Thresholds(),
        [("ID_COLLISION", None, None), ("STALE_TOPOLOGY", None, None), ("STALE_TOPOLOGY", None, None)],
    ),
    (
        "PartitionManager.commit@v1.2.4 topology.id: redeployed topology of one name is no collision",
        [rec(0, 150), rec(1, 150, topology_id="orders-topo-2-1600000000")],
        [],
        cluster(),
        Thresholds(),
        [("STALE_TOPOLOGY", None, None)],
    ),
    (
        "CommitMetadataManager@v2.8.8: two topologies on one group",
        [],
        [commit(0, 150), commit(1, 150), commit(2, 150, meta("other-1-1700000000"))],
        cluster(3),
        Thresholds(),
        [("FOREIGN_COMMIT", T, 2), ("ID_COLLISION", None, None), ("STALE_TOPOLOGY", None, None)],
    ),
    (
        "CommitMetadataManager@v2.8.8: a tie between topology ids goes to the latest deployment",
        [],
        [commit(0, 150, meta("orders-topo-2-1600000000")), commit(1, 150)],
        cluster(),
        Thresholds(),
        [("FOREIGN_COMMIT", T, 0), ("STALE_TOPOLOGY", None, None)],
    ),
    (
        "CommitMetadataManager@v2.8.8: commit without storm metadata",
        [],
        [commit(0, 150, None), commit(1, 150)],
        cluster(),
        Thresholds(),
        [("FOREIGN_COMMIT", T, 0)],
    ),
    (
        "KafkaSpoutMessageId.java@v1.1.1: legacy metadata is Storm's own",
        [],
        [commit(0, 150, LEGACY), commit(1, 150)],
        cluster(),
        Thresholds(),
        [("LEGACY_COMMIT_METADATA", T, 0)],
    ),
    (
        "CommitMetadataManager@v2.8.8: commit with unparsable metadata",
        [],
        [commit(0, 150, "{oops"), commit(1, 150)],
        cluster(),
        Thresholds(),
        [("FOREIGN_COMMIT", T, 0)],
    ),
    (
        "CommitMetadataManager@v2.8.8: commit of an older deployment of the same topology",
        [],
        [commit(0, 150), commit(1, 150), commit(2, 150, meta("orders-topo-2-1600000000"))],
        cluster(3),
        Thresholds(),
        [("FOREIGN_COMMIT", T, 2), ("STALE_TOPOLOGY", None, None)],
    ),
    (
        "PartitionManager.commit@v1.2.4 broker: stale broker",
        [rec(0, 150, broker="old:9092"), rec(1, 150, broker="KAFKA1:9092")],
        [],
        cluster(),
        Thresholds(),
        [("STALE_BROKER", T, 0)],
    ),
]


@pytest.mark.parametrize("name, zk, commits, cl, th, expected", CASES, ids=[c[0] for c in CASES])
def test_rules(name, zk, commits, cl, th, expected):
    assert codes(run(zk, commits, cl=cl, th=th)) == sorted(expected)


@pytest.mark.parametrize("committed, lag", [(100, 100), (150, 50), (200, 0), (99, None), (201, None)])
def test_lag_only_for_positions_in_range(committed, lag):
    report = run([rec(0, committed), rec(1, 150)], cl=cluster())
    row = report.rows[0]
    assert (row.log_start, row.log_end, row.lag) == (100, 200, lag)


# Lag counts from where the spout resumes: where it does not use the stored offset, from where its start-up rule
# puts it (PartitionManager's constructor, storm-kafka v1.2.4 and v0.9.6; KafkaSpout.doSeek, v2.8.8), never 0 or
# null when that is known and inside the log. Each case: records, commits, log (start, end), profile, running,
# the lag of partition 0, the code that says why, and whether the stored offset is the lag's base.
STOPPED = "orders-topo-2-1600000000"
IGNORED_CASES = [
    pytest.param(
        [rec(0, 0)],
        [],
        (0, 200),
        SpoutProfile(),
        RUNNING,
        200,
        "IGNORED_ZERO_OFFSET",
        False,
        id="PartitionManager.java@v1.2.4 committed <= 0: offset 0 on a log from 0 replays it all",
    ),
    pytest.param(
        [rec(0, -1)],
        [],
        (100, 200),
        SpoutProfile(),
        RUNNING,
        100,
        "IGNORED_ZERO_OFFSET",
        False,
        id="PartitionManager.java@v1.2.4 committed <= 0: from startOffsetTime (earliest)",
    ),
    pytest.param(
        [rec(0, 0)],
        [],
        (0, 200),
        SpoutProfile(start_offset_time=LATEST_TIME),
        RUNNING,
        0,
        "IGNORED_ZERO_OFFSET",
        False,
        id="PartitionManager.java@v1.2.4 committed <= 0: startOffsetTime latest",
    ),
    pytest.param(
        [rec(0, 0)],
        [],
        (0, 200),
        SpoutProfile(start_offset_time=1_700_000_000_000),
        RUNNING,
        None,
        "IGNORED_ZERO_OFFSET",
        False,
        id="PartitionManager.java@v1.2.4 committed <= 0: a time startOffsetTime is "
        "unknown without the segment files' mtimes",
    ),
    pytest.param(
        [rec(0, 0)],
        [],
        (0, 200),
        SpoutProfile(StormKafka.V0_9_3),
        RUNNING,
        0,
        "IGNORED_ZERO_OFFSET",
        False,
        id="KafkaUtils.java@v0.9.6 getOffset: LatestTime without forceFromStart",
    ),
    pytest.param(
        [rec(0, 0, raw=b"{")],
        [],
        (100, 200),
        SpoutProfile(),
        RUNNING,
        100,
        "MALFORMED_RECORD",
        False,
        id="PartitionManager.java@v1.2.4: an unreadable record counts as none: startOffsetTime",
    ),
    pytest.param(
        [rec(0, 150, topology_id=STOPPED)],
        [],
        (100, 200),
        SpoutProfile(ignore_zk_offsets=True),
        RUNNING,
        100,
        "STALE_TOPOLOGY",
        False,
        id="PartitionManager.java@v1.2.4: ignoreZkOffsets, another topology id",
    ),
    pytest.param(
        [rec(0, 150, topology_id=STOPPED)],
        [],
        (100, 200),
        SpoutProfile(StormKafka.V0_9_3, ignore_zk_offsets=True),
        RUNNING,
        100,
        "STALE_TOPOLOGY",
        False,
        id="PartitionManager.java@v0.9.6: forceFromStart, another topology id",
    ),
    pytest.param(
        [],
        [commit(0, 150, None)],
        (100, 200),
        SpoutProfile(first_poll=FirstPoll.EARLIEST),
        RUNNING,
        100,
        "FOREIGN_COMMIT",
        False,
        id="KafkaSpout.java@v2.8.8 doSeek: EARLIEST ignores a commit without metadata",
    ),
    pytest.param(
        [],
        [commit(0, 150, meta(STOPPED))],
        (100, 200),
        SpoutProfile(first_poll=FirstPoll.LATEST),
        RUNNING,
        0,
        "STALE_TOPOLOGY",
        False,
        id="KafkaSpout.java@v2.8.8 doSeek: LATEST ignores another topology's",
    ),
    pytest.param(
        [],
        [commit(0, 150, LEGACY)],
        (100, 200),
        SpoutProfile(client=StormKafkaClient.LEGACY, first_poll=FirstPoll.EARLIEST),
        RUNNING,
        100,
        "LEGACY_COMMIT_METADATA",
        False,
        id="KafkaSpout.java@v1.1.1 doSeek: EARLIEST ignores every commit",
    ),
    # before 1.0 the spout's id is KafkaSpout._uuid, one per submission (KafkaSpout.java:54 at v0.9.7, v0.10.2): with
    # forceFromStart/ignoreZkOffsets a record naming the running storm id is another's too (run: 0.9.2-incubating,
    # 0.9.7, 0.10.2 in tests/oracle/test_storm_kafka_releases_e2e.py), and one naming a storm id though Storm's root is
    # not read; 1.0 on compares the storm id (the row above and below)
    pytest.param(
        [rec(0, 150)],
        [],
        (100, 200),
        SpoutProfile(StormKafka.V0_9_3, ignore_zk_offsets=True),
        RUNNING,
        100,
        None,
        False,
        id="KafkaSpout.java@v0.9.7: forceFromStart, a record naming the running storm id",
    ),
    pytest.param(
        [rec(0, 150)],
        [],
        (100, 200),
        SpoutProfile(StormKafka.V0_10, ignore_zk_offsets=True),
        None,
        100,
        None,
        False,
        id="KafkaSpout.java@v0.10.2: ignoreZkOffsets, a storm id, running unknown",
    ),
    pytest.param(
        [rec(0, 150)],
        [],
        (100, 200),
        SpoutProfile(StormKafka.V1_0, ignore_zk_offsets=True),
        RUNNING,
        50,
        None,
        True,
        id="KafkaSpout.java@v1.0.0: ignoreZkOffsets, the running storm id: its own",
    ),
    # the rules that keep the stored offset: it is the lag's base
    # maxOffsetBehind applies at a start only: a running spout moves on from the stored offset
    pytest.param(
        [rec(0, 150)],
        [],
        (100, 200),
        SpoutProfile(start_offset_time=LATEST_TIME, max_offset_behind=10),
        RUNNING,
        50,
        "LAG_BEYOND_MAX_OFFSET_BEHIND",
        True,
        id="PartitionManager.java@v1.2.4: more than maxOffsetBehind behind: lag from the stored offset",
    ),
    pytest.param(
        [rec(0, 1)],
        [],
        (0, 200),
        SpoutProfile(),
        RUNNING,
        199,
        None,
        True,
        id="PartitionManager.java@v1.2.4: offset 1 is used",
    ),
    pytest.param(
        [rec(0, 150, topology_id=STOPPED)],
        [],
        (100, 200),
        SpoutProfile(ignore_zk_offsets=True),
        None,
        50,
        None,
        True,
        id="ignoreZkOffsets: the running topologies unknown, the stored offset is the base",
    ),
    pytest.param(
        [],
        [commit(0, 150, None)],
        (100, 200),
        SpoutProfile(),
        RUNNING,
        50,
        "FOREIGN_COMMIT",
        True,
        id="KafkaSpout.java@v2.8.8 doSeek: UNCOMMITTED_EARLIEST resumes from a commit without metadata",
    ),
]


@pytest.mark.parametrize("zk, commits, log, profile, running, lag, code, stored", IGNORED_CASES)
def test_lag_counts_from_where_the_spout_resumes(zk, commits, log, profile, running, lag, code, stored):
    report = run(
        zk,
        commits,
        cl=cluster(1, *log),
        running=None if running is None else frozenset({running}),
        th=Thresholds(expected_topic=T, spout=profile),
    )  # --topic: an unreadable record names none
    (row,) = report.rows
    assert row.lag == lag
    assert row.resumes_stored is stored
    assert code is None or code in {f.code for f in report.findings}, [f.message for f in report.findings]
    assert report.consumers[0].total_lag == (lag or 0)


def test_messages_carry_the_numbers():
    report = run([rec(0, 90), rec(1, 150)], cl=cluster())
    (f,) = report.findings
    assert f.message == (
        "orders/0 resumes at 90 < log start 100: 10 messages (offsets 90 to 99) were deleted before the spout "
        "read them; the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v1.2.4)"
    )
    assert f.severity.label == "error" and f.hint and f.path == "/r/s/partition_0"


def test_stale_topology_names_the_running_deployment():
    report = run([rec(0, 150, topology_id="orders-topo-2-1600000000"), rec(1, 150, topology_id="x-1-1")], cl=cluster())
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
    report = run(
        [rec(0, 150, topology_id="a-1-1"), rec(1, 150, topology_id="a-1-1"), rec(2, 150, topology_id="b-1-1")],
        cl=cluster(3),
        running=None,
    )
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


# --- where an offset applies, and determinism ---------------------------------------------------------------


def test_a_mismatched_record_gets_the_lag_of_the_partition_it_is_applied_to():
    report = run(
        [rec(0, 150), rec(1, 150), rec(2, 150, topic="payments")],
        cl={**cluster(3), **cluster(3, start=0, end=1000, topic="payments")},
    )
    row = report.rows[2]
    assert (row.topic, row.record.topic, row.log_end, row.lag) == (T, "payments", 200, 50)


def test_a_tie_is_reported_as_a_tie_with_no_lag():
    report = run(
        [rec(0, 150), rec(1, 150), rec(2, 150, topic="payments"), rec(3, 150, topic="payments")],
        cl={**cluster(4), **cluster(4, topic="payments")},
    )
    (f,) = report.findings
    assert f.message.startswith(
        "records of spout id 's' name 2 topics equally often: orders (2 records), payments (2 records)"
    )
    assert [(r.topic, r.lag) for r in report.rows] == [(None, None)] * 4


def test_same_bytes_give_the_same_findings_whatever_the_mtimes_and_order():
    """A reset followed by a restore of the very same bytes changes only versions and mtimes."""
    nodes = [rec(0, 150, mtime=5), rec(1, 150, topic="payments", mtime=9), rec(2, 0, mtime=1)]
    cl = {**cluster(3), **cluster(3, topic="payments")}
    first = run(nodes, cl=cl)
    restored = [replace(n, mtime_ms=n.mtime_ms + 10_000 * (3 - i), version=n.version + 2) for i, n in enumerate(nodes)]
    for again in (restored, list(reversed(restored)), [restored[1], restored[2], restored[0]]):
        second = run(again, cl=cl)
        assert [(f.code, f.topic, f.partition, f.message) for f in second.findings] == [
            (f.code, f.topic, f.partition, f.message) for f in first.findings
        ]
        assert [(r.topic, r.record.partition, r.lag) for r in second.rows] == [
            (r.topic, r.record.partition, r.lag) for r in first.rows
        ]


# --- what each storm-kafka release does at start-up and out of range --------------------------------------

LINES = {
    "0.9.0": StormKafka.V0_9_0,
    "0.9.3": StormKafka.V0_9_3,
    "0.10": StormKafka.V0_10,
    "1.0": StormKafka.V1_0,
    "1.1": StormKafka.V1_X,
}


@pytest.mark.parametrize(
    "line, committed, says",
    [
        # below the log start (100); above the log end (200)
        (
            "0.9.0",
            90,
            "the spout refetches from startOffsetTime, the log start (100) (KafkaUtils.fetchMessages, "
            "v0.9.2-incubating)",
        ),
        ("0.9.0", 250, "emits nothing from this partition until the log end reaches 250"),
        (
            "0.9.3",
            90,
            "the spout jumps to the log end (LatestTime: forceFromStart is false) (200) (PartitionManager.fill, "
            "v0.9.6)",
        ),
        (
            "0.9.3",
            250,
            "the spout jumps to the log end (LatestTime: forceFromStart is false) (200) (PartitionManager.fill, "
            "v0.9.6)",
        ),
        ("0.10", 90, "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v0.10.2)"),
        ("0.10", 250, "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v0.10.2)"),
        ("1.0", 90, "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v1.0.7)"),
        (
            "1.0",
            250,
            "the spout emits nothing from this partition until the log end reaches 250; the 50 messages that "
            "arrive before then are never emitted (PartitionManager.fill, v1.0.7)",
        ),
        ("1.1", 90, "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v1.2.4)"),
        ("1.1", 250, "(PartitionManager.fill, v1.2.4)"),
    ],
    ids=lambda v: str(v),
)
def test_out_of_range_by_release(line, committed, says):
    report = run([rec(0, committed), rec(1, 150)], cl=cluster(), th=Thresholds(spout=SpoutProfile(LINES[line])))
    (f,) = report.findings
    assert f.code == ("OFFSET_BELOW_LOG_START" if committed < 100 else "OFFSET_ABOVE_LOG_END")
    assert says in f.message
    assert report.rows[0].lag is None


def test_out_of_range_without_use_start_offset_time():
    report = run([rec(0, 90), rec(1, 150)], cl=cluster(), th=Thresholds(spout=SpoutProfile(out_of_range_reset=False)))
    assert "FailedFetchException" in report.findings[0].message


@pytest.mark.parametrize(
    "profile, start",
    [
        (
            SpoutProfile(StormKafka.V0_9_3),
            "the log end (LatestTime: forceFromStart is false) (200)",
        ),  # KafkaUtils.java@v0.9.6
        (SpoutProfile(StormKafka.V0_9_3, ignore_zk_offsets=True), "startOffsetTime, the log start (100)"),
        (SpoutProfile(StormKafka.V0_10), "startOffsetTime, the log start (100)"),  # KafkaUtils.java@v0.10.0
        (SpoutProfile(start_offset_time=LATEST_TIME), "startOffsetTime, the log end (200)"),
        # ListOffsets v0 (UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0); run in
        # tests/oracle/test_spout_oracle_time_e2e.py
        (
            SpoutProfile(start_offset_time=1_700_000_000_000),
            "the offset Kafka answers for startOffsetTime 1700000000000 (ListOffsets v0 reads segment files, not "
            "record timestamps: UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0): the base offset, at least "
            "the log start, of the last log segment whose file was last modified at or before then, or the log end to "
            "a spout that starts before then; or, when every segment was modified later, none: the spout goes to -5 "
            "(KafkaUtils.NO_OFFSET) and its first fetch is out of range: it jumps to the log start (EarliestTime, "
            "PartitionManager.fill, v1.2.4)",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_zero_and_unusable_records_start_where_the_release_says(profile, start):
    # the records name a random id, as storm-kafka before 1.0 writes them (KafkaSpout._uuid), and the running
    # topologies are not read: with forceFromStart a record naming a storm id, or any record when they are, is
    # another topology's to those releases (StormKafka.names_a_uuid), which this test is not about
    uuid = "0b5e2f8c-7d1a-4c3e-9f60-2a8d4b7c1e95"
    report = run(
        [rec(0, 0, topology_id=uuid), rec(1, 0, raw=b"junk"), rec(2, 150, topology_id=uuid)],
        cl=cluster(3),
        running=None,
        th=Thresholds(spout=profile),
    )
    zero, junk = sorted(report.findings, key=lambda f: f.code != "IGNORED_ZERO_OFFSET")
    assert zero.code == "IGNORED_ZERO_OFFSET" and zero.message.endswith(f"starts from {start}")
    assert junk.code == "MALFORMED_RECORD" and junk.message.endswith(f"starts orders/1 from {start}")


@pytest.mark.parametrize(
    "strategy, says",
    [
        (
            FirstPoll.LATEST,
            "; with LATEST the spout ignores these commits and starts at the log end (KafkaSpout.doSeek",
        ),
        (FirstPoll.UNCOMMITTED_EARLIEST, None),
    ],
)
def test_a_stopped_topologys_commits_say_whether_the_strategy_ignores_them(strategy, says):
    """KafkaSpout.doSeek@v2.8.8: EARLIEST/LATEST ignore a commit isOffsetCommittedByThisTopology rejects; the
    partition's lag counts from the log end then, and STALE_TOPOLOGY says why."""
    report = run(
        [], [commit(0, 150, meta(STOPPED))], cl=cluster(1), th=Thresholds(spout=SpoutProfile(first_poll=strategy))
    )
    (f,) = [f for f in report.findings if f.code == "STALE_TOPOLOGY"]
    assert (says in f.message) if says else "ignores these commits" not in f.message, f.message
    assert report.rows[0].lag == (0 if says else 50)


def test_ignore_zk_offsets_and_a_stopped_topology():
    """PartitionManager.java@v1.2.4: ignoreZkOffsets and another topology id -> startOffsetTime."""
    report = run(
        [rec(0, 150, topology_id="orders-topo-2-1600000000"), rec(1, 150, topology_id="orders-topo-2-1600000000")],
        cl=cluster(),
        th=Thresholds(spout=SpoutProfile(ignore_zk_offsets=True)),
    )
    (f,) = report.findings
    assert f.code == "STALE_TOPOLOGY" and "with ignoreZkOffsets the next deployment ignores these offsets" in f.message
    assert [r.lag for r in report.rows] == [100, 100]  # from startOffsetTime (earliest): the log start, 100


# --- storm-kafka-client: metadata and first-poll strategies -------------------------------------------------


@pytest.mark.parametrize(
    "client, strategy, metadata, lag, says",
    [
        # KafkaSpout.doSeek v2.8.8: UNCOMMITTED_* resume from any commit
        (
            StormKafkaClient.CURRENT,
            FirstPoll.UNCOMMITTED_EARLIEST,
            None,
            50,
            "The spout resumes from this commit: UNCOMMITTED_EARLIEST resumes from any commit, whoever wrote it",
        ),
        # EARLIEST ignores a commit that is not this topology's: the lag counts from the log start (100), LATEST's
        # from the log end
        (StormKafkaClient.CURRENT, FirstPoll.EARLIEST, None, 100, "The spout ignores this commit: EARLIEST applies"),
        (StormKafkaClient.CURRENT, FirstPoll.LATEST, meta("other-1-1"), 0, None),
        (StormKafkaClient.CURRENT, FirstPoll.EARLIEST, meta(RUNNING), 50, None),
        (StormKafkaClient.CURRENT, FirstPoll.UNCOMMITTED_EARLIEST, LEGACY, 50, "offset 150 is processed again"),
        # KafkaSpout.doSeek v1.1.1: seek(committed + 1), EARLIEST/LATEST ignore every commit
        (StormKafkaClient.LEGACY, FirstPoll.UNCOMMITTED_EARLIEST, LEGACY, 49, "resumes at committed + 1 = 151"),
        (StormKafkaClient.LEGACY, FirstPoll.LATEST, LEGACY, 0, "LATEST ignores every commit"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_client_start(client, strategy, metadata, lag, says):
    report = run(
        [],
        [commit(0, 150, metadata)],
        cl=cluster(1),
        th=Thresholds(spout=SpoutProfile(client=client, first_poll=strategy)),
    )
    assert report.rows[0].lag == lag
    if says:
        assert any(says in f.message for f in report.findings), [f.message for f in report.findings]


# The release given (--storm-kafka-client-release) picks the rules. 3.0.x and 3.1.x: external/storm-kafka-client/
# src/main at master 73da988d9 (3.0.0-SNAPSHOT, the line 3.0.0 was cut from) equals v2.8.8 but for one comment;
# the v3.0.0/v3.1.0 tags were not in the copy read (docs/storm.md).
SNAPSHOT_3 = "73da988d9 (3.0.0-SNAPSHOT)"


@pytest.mark.parametrize(
    "release, strategy, metadata, lag, says",
    [
        pytest.param(
            "1.1.1",
            FirstPoll.UNCOMMITTED_EARLIEST,
            LEGACY,
            49,
            "resumes at committed + 1 = 151",
            id="KafkaSpout.java@v1.1.1 doSeek: seek(committed + 1)",
        ),
        pytest.param(
            "2.8.8",
            FirstPoll.EARLIEST,
            meta("other-1-1"),
            100,
            "which is not running",
            id="KafkaSpout.java@v2.8.8 doSeek: EARLIEST ignores another topology's commit",
        ),
        pytest.param(
            "3.0.0",
            FirstPoll.EARLIEST,
            meta("other-1-1"),
            100,
            "which is not running",
            id=f"KafkaSpout.java@{SNAPSHOT_3} doSeek: as v2.8.8, EARLIEST ignores another topology's commit",
        ),
        pytest.param(
            "3.1.0",
            FirstPoll.LATEST,
            meta(RUNNING),
            50,
            None,
            id=f"CommitMetadataManager.java@{SNAPSHOT_3} isOffsetCommittedByThisTopology: own commit used",
        ),
        pytest.param(
            "3.1.0",
            FirstPoll.UNCOMMITTED_EARLIEST,
            LEGACY,
            50,
            "offset 150 is processed again",
            id=f"KafkaSpout.java@{SNAPSHOT_3} doSeek: a 1.1.1 commit is the next offset, not committed + 1",
        ),
    ],
)
def test_client_start_by_release(release, strategy, metadata, lag, says):
    profile = SpoutProfile(
        client=StormKafkaClient.of_version(release),
        first_poll=strategy,
        client_major=StormKafkaClient.major_of(release),
    )
    report = run([], [commit(0, 150, metadata)], cl=cluster(1), th=Thresholds(spout=profile))
    assert report.rows[0].lag == lag
    if says:
        assert any(says in f.message for f in report.findings), [f.message for f in report.findings]


@pytest.mark.parametrize(
    "release, known",
    [
        # the line of each release (issue 28: this asserted `is not None`, which a classmethod returning a member
        # always is): CommitMetadataManager came in 1.0.6 and 1.1.2 (StormKafkaClient's docstring)
        ("1.0.0", StormKafkaClient.LEGACY),
        ("1.0.5", StormKafkaClient.LEGACY),
        ("1.0.6", StormKafkaClient.CURRENT),
        ("1.1.1", StormKafkaClient.LEGACY),
        ("1.1.2", StormKafkaClient.CURRENT),
        ("1.2.0", StormKafkaClient.CURRENT),
        ("2.8.8", StormKafkaClient.CURRENT),
        ("3.0.0", StormKafkaClient.CURRENT),
        ("3.0.1", StormKafkaClient.CURRENT),
        ("3.1.0", StormKafkaClient.CURRENT),
        ("3.2.0", None),
        ("4.0.0", None),
        ("0.10.0", None),
    ],
)
def test_client_releases_offctl_knows(release, known):
    if known:
        assert StormKafkaClient.of_version(release) is known
    else:
        with pytest.raises(ValueError, match="is not a release offctl knows: 1.0.0 to 2.x, 3.0.x and 3.1.x"):
            StormKafkaClient.of_version(release)


def test_the_default_profile_is_the_default_release():
    """SpoutProfile() and --storm-kafka-client-release's default describe the same spout."""
    from offctl.core.storm.releases import CLIENT_RELEASE_DEFAULT

    assert (SpoutProfile().client, SpoutProfile().client_major) == (
        StormKafkaClient.of_version(CLIENT_RELEASE_DEFAULT),
        StormKafkaClient.major_of(CLIENT_RELEASE_DEFAULT),
    )


# --- static partitions, missing consumers ---------------------------------------------------------------


def test_static_partitions():
    """StaticCoordinator reads only the configured partitions; storm-kafka-monitor asks about those alone."""
    report = run([rec(0, 150), rec(3, 150)], cl=cluster(4), th=Thresholds(static_partitions={"s": frozenset({0, 1})}))
    assert codes(report) == [("MISSING_PARTITION", T, 1), ("UNREAD_PARTITION", T, 3)]
    assert "partitions the spout reads (--static-partitions)" in report.findings[-1].message or any(
        "(--static-partitions)" in f.message for f in report.findings
    )
    assert report.rows[1].lag is None


def test_missing_consumers_are_error_findings():
    key = ConsumerKey("kafka", "typo")
    report = analyze(Snapshot(0, read_findings=(ReadFinding(key, "group 'typo' has no committed offsets"),)))
    (f,) = report.findings
    assert (f.code, f.severity.label, f.message) == (
        "CONSUMER_NOT_FOUND",
        "error",
        "group 'typo' has no committed offsets",
    )


# --- spout ids with '/' -------------------------------------------------------------------------------------


def slash(spout: str, folder: str, topic: str | None, partition: int = 0) -> ZkNode:
    body = {"topology": {"id": RUNNING, "name": "orders-topo"}, "offset": 150, "partition": partition}
    if topic:
        body["topic"] = topic
    return ZkNode(
        "/r", spout, f"/r/{spout}/{folder}/partition_{partition}", partition, folder, json.dumps(body).encode(), 0, 0
    )


@pytest.mark.parametrize(
    "nodes, consumers, ambiguous",
    [
        # the records name the folder: wildcard layout, id 'team' reading topic 'orders'
        ([slash("team", "orders", "orders")], ["team"], False),
        # the records name another topic: still the path (PartitionManager reads committedPath, never the topic
        # field), id 'team' reading 'ingest', and said, since id 'team/ingest' would write the same node
        ([slash("team", "ingest", "orders")], ["team"], True),
        # the records name another topic and the cluster has no topic 'ingress': no wildcard spout wrote the folder
        # (DynamicBrokersReader.java@v1.2.4 lists the cluster's topics), so id 'team/ingress'
        ([slash("team", "ingress", "orders")], ["team/ingress"], False),
        # not a legal topic name: no wildcard spout writes it, so part of the id
        ([slash("team", "in gest", None)], ["team/in gest"], False),
        # nothing to tell: shown as the wildcard reading, and said
        ([slash("team", "ingest", None)], ["team"], True),
    ],
    ids=[
        "wildcard",
        "another topic: the path decides",
        "no such topic in the cluster",
        "illegal topic name",
        "ambiguous",
    ],
)
def test_spout_ids_with_slashes(nodes, consumers, ambiguous):
    report = run(nodes, cl={**cluster(1), **cluster(1, topic="ingest")})
    assert [c.key.consumer for c in report.consumers] == consumers
    assert ("AMBIGUOUS_SPOUT_ID" in [f.code for f in report.findings]) == ambiguous


C = "clicks"
WILD = dict(spout="w", mtime=1000)


# Issue 22: a wildcard spout's record that names another topic than its folder. committedPath is zkRoot + "/" +
# id + "/" + Partition.getId(), getId() is topic + "/partition_N" for a wildcard topic, and PartitionManager
# reads only topology.id and offset from the node (PartitionManager.java, Partition.java, v1.0.0 to v1.2.4):
# the record is the offset of the partition its path names. (name, nodes, consumers, codes, lag of orders/0)
WILDCARD_CASES = [
    (
        "PartitionManager.java@v1.2.4: orders/partition_0 names clicks: orders/0's offset, orders/1-3 missing",
        [rec(0, 150, topic=C, folder=T, **WILD), *(rec(p, 150, topic=C, folder=C, **WILD) for p in range(4))],
        ["w"],
        [
            ("AMBIGUOUS_SPOUT_ID", None, None),
            ("MISSING_PARTITION", T, 1),
            ("MISSING_PARTITION", T, 2),
            ("MISSING_PARTITION", T, 3),
            ("TOPIC_MISMATCH", T, 0),
        ],
        50,
    ),
    (
        "PartitionManager.java@v1.0.0: the same without a clicks/ folder",
        [rec(0, 150, topic=C, folder=T, **WILD)],
        ["w"],
        [
            ("AMBIGUOUS_SPOUT_ID", None, None),
            ("MISSING_PARTITION", T, 1),
            ("MISSING_PARTITION", T, 2),
            ("MISSING_PARTITION", T, 3),
            ("TOPIC_MISMATCH", T, 0),
        ],
        50,
    ),
    (
        "PartitionManager.java@v1.2.4: one record of the folder names it: the layout is confirmed",
        [rec(0, 150, topic=C, folder=T, **WILD), rec(1, 150, folder=T, **WILD)],
        ["w"],
        [("MISSING_PARTITION", T, 2), ("MISSING_PARTITION", T, 3), ("TOPIC_MISMATCH", T, 0)],
        50,
    ),
    # ... and the spout starts it at startOffsetTime (the log start, 100): the lag counts from there
    (
        "PartitionManager.java@v1.2.4: an unusable record in the folder is still orders/0's",
        [rec(0, 150, folder=T, raw=b"{not json", **WILD), *(rec(p, 150, folder=T, **WILD) for p in (1, 2, 3))],
        ["w"],
        [("MALFORMED_RECORD", T, 0)],
        100,
    ),
]


@pytest.mark.parametrize(
    "nodes, consumers, expected, lag", [c[1:] for c in WILDCARD_CASES], ids=[c[0] for c in WILDCARD_CASES]
)
def test_the_path_decides_the_wildcard_layout(nodes, consumers, expected, lag):
    report = run(nodes, cl={**cluster(4), **cluster(4, topic=C)})
    assert [c.key.consumer for c in report.consumers] == consumers
    assert codes(report) == expected
    (row,) = [r for r in report.rows if r.record.folder_topic == T and r.record.partition == 0]
    assert (row.topic, row.lag) == (T, lag)
    missing = [f for f in report.findings if f.code == "MISSING_PARTITION"]
    assert all(f.path == f"/r/w/{T}/partition_{f.partition}" for f in missing)
    for f in report.findings:
        if f.code == "AMBIGUOUS_SPOUT_ID":
            assert f.path == f"/r/w/{T}" and f"its records name '{C}', not '{T}'" in f.message
        if f.code == "TOPIC_MISMATCH":
            assert f"names topic '{C}' but it sits in the folder '{T}/'" in f.message


# --- GROUP_TYPE_CONFLICT: the broker refuses or races a spout's commits to its group ----------------------------
# Plain data for every type. End to end against Apache Kafka 4.4: classic and KIP-848 consumer groups with a member
# (tests/e2e/test_inspect_e2e.py); share groups only here, as confluent-kafka 2.16's admin client cannot name one's
# type. KafkaSpout 1.0.6+/1.1.2+/2.x assigns (TopicAssigner.assignPartitions, v2.8.8) and commits with generation -1 and
# no member id; 1.0.0-1.0.5 and 1.1.0-1.1.1 subscribe (KafkaSpout.subscribeKafkaConsumer v1.0.5, NamedSubscription
# default v1.1.1). Kafka: GroupCoordinator.validateOffsetCommit (3.8.0), ConsumerGroup/ClassicGroup/ShareGroup
# .validateOffsetCommit (group-coordinator, 3.9.0-rc3).
def _group_report(state, profile=SpoutProfile()):
    from offctl.core.records.model import GroupState

    snap = Snapshot(captured_ms=0, commits=(commit(0, 100),), groups=(GroupState("g", *state),))
    return analyze(snap, Thresholds(spout=profile))


LEGACY_CLIENT = replace(SpoutProfile(), client=StormKafkaClient.LEGACY)


@pytest.mark.parametrize(
    "state, profile, says",
    [
        (
            ("stable", 2, "classic", "range"),
            SpoutProfile(),
            [
                "classic group with 2 members joined (state stable, protocol range)",
                "UNKNOWN_MEMBER_ID",
                "3.8.0",
                "CommitFailedException",
            ],
        ),
        (("preparing_rebalance", 0, "classic", None), SpoutProfile(), ["members joined (state preparing_rebalance)"]),
        (("stable", 1, "unknown", None), SpoutProfile(), ["unknown type (read as classic)"]),
        (
            ("stable", 3, "consumer", "uniform"),
            SpoutProfile(),
            ["KIP-848 consumer group with 3 members", "ConsumerGroup.validateOffsetCommit"],
        ),
        (("reconciling", 0, "consumer", None), SpoutProfile(), ["KIP-848 consumer group"]),
        (("empty", 0, "share", None), SpoutProfile(), ["share group", "refuses every consumer offset commit"]),
        (("stable", 2, "share", None), LEGACY_CLIENT, ["share group"]),
        (("stable", 2, "consumer", None), LEGACY_CLIENT, ["never use"]),
        (("stable", 2, "classic", "range"), LEGACY_CLIENT, None),  # the members are the spout's own executors
        (("empty", 0, "classic", None), SpoutProfile(), None),
        (("empty", 0, "consumer", None), SpoutProfile(), None),
        (("empty", 0, "unknown", None), SpoutProfile(), None),
        (("dead", 0, "classic", None), SpoutProfile(), None),
    ],
    ids=[
        "classic-members",
        "classic-rebalancing-unlisted",
        "unknown-members",
        "consumer-members",
        "consumer-reconciling",
        "share-empty",
        "share-legacy",
        "consumer-legacy",
        "classic-legacy",
        "classic-empty",
        "consumer-empty",
        "unknown-empty",
        "classic-dead",
    ],
)
def test_group_type_conflict(state, profile, says):
    report = _group_report(state, profile)
    found = [f for f in report.findings if f.code == "GROUP_TYPE_CONFLICT"]
    (consumer,) = report.consumers
    assert (consumer.group_state, consumer.members, consumer.group_type, consumer.group_protocol) == state
    if says is None:
        assert found == [] and "GROUP_TYPE_CONFLICT" not in consumer.finding_codes
        return
    (f,) = found
    assert f.severity.label == "error" and f.key == ConsumerKey("kafka", "g") and f.partition is None
    assert all(s in f.message for s in says), f.message
    assert consumer.worst.label == "error" and "GROUP_TYPE_CONFLICT" in consumer.finding_codes


def test_group_state_of_a_zookeeper_spout_of_the_same_name_is_not_its_own():
    from offctl.core.records.model import GroupState

    snap = Snapshot(captured_ms=0, zk_nodes=(rec(0, 5, spout="g"),), groups=(GroupState("g", "stable", 1, "classic"),))
    report = analyze(snap)
    assert not [f for f in report.findings if f.code == "GROUP_TYPE_CONFLICT"]
    assert report.consumers[0].group_type is None
