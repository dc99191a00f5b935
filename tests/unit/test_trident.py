"""Trident state, on plain data: how each emitter's state is read, which offset it resumes from, and what a
reset writes. Each case's id names the Storm source file and tag it follows."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from offctl.adapters.backup import backup_document, parse_backup
from offctl.core.plans.plan import WRITE
from offctl.core.plans.restore import plan_restore_zookeeper
from offctl.core.plans.rewrite import rewrite_node
from offctl.core.plans.targets import Target
from offctl.core.plans.zookeeper import plan_zookeeper
from offctl.core.records.model import (
    STORM_KAFKA,
    STORM_KAFKA_CLIENT,
    TRIDENT,
    ConsumerKey,
    PartitionLog,
    Thresholds,
    ZkNode,
)
from offctl.core.records.parse import parse_zk_node
from offctl.core.records.trident import newest_txid, trident_partition
from offctl.core.rules.analyze import analyze_consumer
from offctl.core.storm.releases import SpoutProfile, StormKafka
from offctl.faces.sandbox import client_trident_meta, trident_meta

ROOT, SID = "/transactional", "orders-stream"
KEY = ConsumerKey(TRIDENT, SID, ROOT)
STORM_ID = "orders-trident-4-1763700300"


def node(
    data: bytes | str, partition: int = 0, *, client: bool = False, txid: int = 42, folder: str | None = None
) -> ZkNode:
    data = data.encode() if isinstance(data, str) else data
    pid = (
        f"{folder}@{partition}"
        if client
        else (f"{folder}/partition_{partition}" if folder else f"partition_{partition}")
    )
    return ZkNode(
        ROOT,
        SID,
        f"{ROOT}/{SID}/user/{pid}/{txid}",
        partition,
        folder,
        data,
        3,
        1_000,
        trident=STORM_KAFKA_CLIENT if client else STORM_KAFKA,
        txid=txid,
        txids=2,
    )


SK = trident_meta("orders", 0, 16, 17, STORM_ID, "k1:9092")  # byte for byte as doEmitNewPartitionBatch writes it


@pytest.mark.parametrize(
    "data, client, committed, malformed, stuck",
    [
        pytest.param(SK, False, 17, None, False, id="TridentKafkaEmitter.java@v1.2.4 resumes at nextOffset"),
        pytest.param(
            b"{not json",
            False,
            None,
            "TransactionalState.getData reads it as no state",
            False,
            id="TransactionalState.java@v1.2.4 getData: parseWithException fails, the state is null",
        ),
        pytest.param(
            '{"offset":3,"topic":"orders"}',
            False,
            None,
            "no nextOffset",
            True,
            id="TridentKafkaEmitter.java@v1.2.4 (Long) lastMeta.get(nextOffset): NullPointerException",
        ),
        pytest.param(
            '{"nextOffset":3.0,"topic":"orders"}',
            False,
            None,
            "ClassCastException to Long",
            True,
            id="TridentKafkaEmitter.java@v1.2.4 (Long) of a Double: ClassCastException",
        ),
        pytest.param(
            '{"nextOffset":3,"topology":"x"}',
            False,
            None,
            "topology is not an object",
            True,
            id="TridentKafkaEmitter.java@v1.2.4 (Map) lastMeta.get(topology): ClassCastException",
        ),
        pytest.param(
            "[1,2]",
            False,
            None,
            "not a JSON object",
            True,
            id="OpaquePartitionedTridentSpoutExecutor.java@v1.2.4 the meta is cast to Map",
        ),
        pytest.param(
            client_trident_meta(20, 24, STORM_ID),
            True,
            25,
            None,
            False,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 seek(lastOffset + 1)",
        ),
        pytest.param(
            '{"lastOffset":9,"tp":{"partition":0,"topic":"orders"},"firstOffset":5}',
            True,
            10,
            None,
            False,
            id="KafkaTridentSpoutBatchMetadata.java@v1.2.4 toMap with tp",
        ),
        pytest.param(
            '{"firstOffset":5,"lastOffset":9.0}',
            True,
            10,
            None,
            False,
            id="KafkaTridentSpoutBatchMetadata.java@v2.8.8 fromMap: any Number, longValue()",
        ),
        pytest.param(
            '{"firstOffset":5,"lastOffset":-2}',
            True,
            None,
            "lastOffset + 1 is -1",
            True,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 seek(lastOffset + 1): KafkaConsumer.seek refuses a negative",
        ),
        pytest.param(
            '{"firstOffset":5,"lastOffset":9223372036854775807}',
            True,
            None,
            "is -9223372036854775808",
            True,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 lastOffset + 1 overflows the long to negative",
        ),
        pytest.param(
            '{"firstOffset":0,"lastOffset":-1}',
            True,
            0,
            None,
            False,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 lastOffset -1 resumes at 0 (what a reset to 0 writes)",
        ),
        pytest.param(
            '{"firstOffset":5}',
            True,
            None,
            "no lastOffset",
            True,
            id="KafkaTridentSpoutBatchMetadata.java@v2.8.8 fromMap: NullPointerException",
        ),
        pytest.param(
            "KafkaTridentSpoutBatchMetadata{topicPartition=orders-0, firstOffset=1, lastOffset=2}",
            True,
            None,
            "reads it as no state",
            False,
            id="KafkaTridentSpoutBatchMetadata.java@v1.1.1 no toMap: toString is stored, getData reads null",
        ),
    ],
)
def test_the_state_a_trident_spout_resumes_from(data, client, committed, malformed, stuck):
    record = parse_zk_node(node(data, client=client, folder="orders" if client else None))
    assert record.key == KEY and record.trident == (STORM_KAFKA_CLIENT if client else STORM_KAFKA)
    assert (record.committed, record.stuck) == (committed, stuck)
    assert (malformed is None and record.malformed is None) or malformed in record.malformed
    assert record.txid == 42


def test_storm_kafka_trident_state_names_its_topology_and_topic():
    record = parse_zk_node(node(SK))
    assert (record.topic, record.topology_id, record.topology_name, record.broker) == (
        "orders",
        STORM_ID,
        "orders-trident",
        "k1:9092",
    )


CLUSTER = {"orders": {p: PartitionLog(10, 100) for p in range(3)}}


def run(nodes, profile: SpoutProfile = SpoutProfile(), running=frozenset({STORM_ID})):
    rows, findings = analyze_consumer([parse_zk_node(n) for n in nodes], CLUSTER, running, Thresholds(spout=profile))
    return rows, {(f.code, f.partition): f.message for f in findings}


@pytest.mark.parametrize(
    "line, says",
    [
        pytest.param(StormKafka.V1_X, "moves to the log start (EarliestTime", id="TridentKafkaEmitter.java@v1.2.4"),
        pytest.param(StormKafka.V0_10, "moves to the log start", id="TridentKafkaEmitter.java@v0.10.0"),
        pytest.param(
            StormKafka.V0_9_3,
            "UpdateOffsetException, which the emitter does not catch",
            id="KafkaUtils.java@v0.9.3 throws UpdateOffsetException",
        ),
        pytest.param(StormKafka.V0_9_0, "refetches from startOffsetTime", id="KafkaUtils.java@v0.9.2-incubating"),
    ],
)
def test_out_of_range_trident_state_by_release(line, says):
    above = trident_meta("orders", 0, 150, 150, STORM_ID, "k1:9092")
    rows, found = run([node(above)], SpoutProfile(storm_kafka=line))
    assert says in found[("OFFSET_ABOVE_LOG_END", 0)] and rows[0].lag is None


def test_trident_lag_missing_partitions_and_what_a_stuck_state_does():
    nodes = [
        node(SK),
        node(trident_meta("orders", 1, 50, 60, STORM_ID, "k1:9092"), 1),
        node('{"offset":3,"topic":"orders"}', 2),
    ]
    rows, found = run(nodes)
    assert [r.lag for r in rows] == [83, 40, None]
    stuck = found[("MALFORMED_RECORD", 2)]
    # the whole state stops, not only partition 2 (run on storm-kafka 1.2.4 and storm-kafka-client 2.8.3:
    # tests/oracle/test_trident_oracle_e2e.py, no-next-offset and no-last-offset)
    assert "no partition of this Trident state moves, this one or any other" in stuck and "starts" not in stuck
    assert [(r.resumes.kind.value, r.resumes.at) for r in rows] == [("crashes", None)] * 3


def test_a_missing_trident_partition_starts_as_each_library_says():
    """KafkaUtils.getOffset(consumer, topic, partition, config) (v1.2.4): startOffsetTime; the client's seek
    (v2.8.8): the first-poll strategy."""
    cluster = {"orders": {p: PartitionLog(10, 100) for p in range(2)}}
    old = analyze_consumer([parse_zk_node(node(SK))], cluster, None, Thresholds())[1]
    new = analyze_consumer(
        [parse_zk_node(node(client_trident_meta(20, 24, STORM_ID), client=True, folder="orders"))],
        cluster,
        None,
        Thresholds(),
    )[1]
    assert "startOffsetTime, the log start (10)" in [f.message for f in old if f.code == "MISSING_PARTITION"][0]
    assert "UNCOMMITTED_EARLIEST" in [f.message for f in new if f.code == "MISSING_PARTITION"][0]


@pytest.mark.parametrize(
    "data, client, target, expected",
    [
        pytest.param(
            SK,
            False,
            5,
            SK.replace(b'"offset":16', b'"offset":5').replace(b'"nextOffset":17', b'"nextOffset":5'),
            id="TridentKafkaEmitter.java@v1.2.4 an empty batch at the target: offset = nextOffset",
        ),
        pytest.param(
            client_trident_meta(20, 24, STORM_ID),
            True,
            7,
            client_trident_meta(7, 6, STORM_ID),
            id="KafkaTridentSpoutEmitter.java@v2.8.8 lastOffset = target - 1, firstOffset = target",
        ),
        pytest.param(
            '{"offset":3,"topic":"orders"}',
            False,
            9,
            b'{"offset":9,"topic":"orders","nextOffset":9}',
            id="TridentKafkaEmitter.java@v1.2.4 a missing nextOffset is added",
        ),
    ],
)
def test_a_trident_reset_rewrites_only_the_fields_the_emitter_resumes_from(data, client, target, expected):
    n = node(data, client=client, folder="orders" if client else None)
    written = rewrite_node(n, target)
    assert written == expected
    assert parse_zk_node(ZkNode(**{**_fields(n), "data": written})).committed == target


def _fields(n: ZkNode) -> dict:
    return {f: getattr(n, f) for f in ZkNode.__slots__}


def test_a_trident_plan_backup_and_restore_round_trip():
    nodes = [node(SK), node(client_trident_meta(20, 24, STORM_ID), 1, client=True, folder="orders")]
    plan = plan_zookeeper(KEY, nodes, CLUSTER, Target("earliest"))
    assert [(c.before, c.after, c.action) for c in plan.writes] == [(17, 10, WRITE), (25, 10, WRITE)]
    doc = backup_document(plan, 1_700_000_000_000)
    backup = parse_backup(json.loads(json.dumps(doc)), path=__import__("pathlib").Path("b.json"))
    assert backup.key == KEY and [n.data for n in backup.nodes] == [n.data for n in nodes]
    assert [n.trident for n in backup.nodes] == [STORM_KAFKA, STORM_KAFKA_CLIENT]
    written = [ZkNode(**{**_fields(n), "data": c.after_data, "version": 4}) for n, c in zip(nodes, plan.writes)]
    back = plan_restore_zookeeper(KEY, backup.nodes, written, CLUSTER, source="b.json")
    assert [c.after_data for c in back.changes] == [n.data for n in nodes]


def test_restoring_a_trident_state_the_spout_has_moved_past_is_refused_with_the_reason():
    saved = [node(SK, txid=42)]
    newer = [node(trident_meta("orders", 0, 17, 30, STORM_ID, "k1:9092"), txid=43)]
    plan = plan_restore_zookeeper(KEY, saved, newer, CLUSTER, source="b.json")
    assert (
        plan.changes[0].action == "skip"
        and "resumes from it: reset the partition instead" in plan.changes[0].reasons[0]
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        pytest.param("partition_3", (3, None, STORM_KAFKA), id="Partition.java@v1.2.4 getId: partition_N"),
        pytest.param(
            "orders@2",
            (2, "orders", STORM_KAFKA_CLIENT),
            id="KafkaTridentSpoutTopicPartition.java@v2.8.8 getId: topic@partition",
        ),
        pytest.param(
            "my.topic-x_1@0",
            (0, "my.topic-x_1", STORM_KAFKA_CLIENT),
            id="KafkaTridentSpoutTopicPartition.java@v1.1.0 getId: any legal topic name",
        ),
        pytest.param("orders", None, id="Partition.java@v1.2.4 getId: a <topic>/ folder of the wildcard layout"),
        pytest.param("partition_03", None, id="Partition.java@v1.2.4 getId: never a leading zero"),
        pytest.param("partition_2147483648", None, id="Partition.java@v1.2.4 partition is an int"),
    ],
)
def test_which_folders_hold_a_kafka_partitions_state(name, expected):
    assert trident_partition(name) == expected


@pytest.mark.parametrize(
    "children, expected",
    [
        pytest.param(["41", "42"], (42, 2), id="RotatingTransactionalState.java@v1.2.4 getLastState: the highest txid"),
        pytest.param(["9", "10"], (10, 2), id="RotatingTransactionalState.java@v1.2.4 txids are longs, not text"),
        pytest.param(
            ["5", "6", "7", "3"], (7, 4), id="RotatingTransactionalState.java@v1.2.4 old txids stay until cleanupBefore"
        ),
        pytest.param([], None, id="RotatingTransactionalState.java@v1.2.4 mkdir only: no state yet"),
        pytest.param(["x", "12"], (12, 1), id="RotatingTransactionalState.java@v1.2.4 only txid names are state"),
    ],
)
def test_the_txid_a_partition_resumes_from(children, expected):
    assert newest_txid(children) == expected


@pytest.mark.parametrize(
    "children, currtx, expected",
    [
        pytest.param(["9", "10"], 11, (10, 2), id="acked: currtx is past the highest"),
        pytest.param(["9", "10"], 10, (9, 2), id="commit not acked: emitBatch removes txid 10 and reads 9"),
        pytest.param(["10"], 10, None, id="only the batch emitted again: no state"),
        pytest.param(["1"], 1, None, id="no currtx: INIT_TXID 1 is emitted first, and its state removed"),
        pytest.param(["3", "12"], 5, (12, 2), id="removeState takes the current txid only"),
    ],
)
def test_the_txid_after_the_coordinators_currtx(children, currtx, expected):
    """OpaquePartitionedTridentSpoutExecutor.java@v1.2.4 and @v2.8.8 emitBatch: removeState(txid), then
    getLastState; run on both executors in tests/oracle/test_trident_oracle_e2e.py ("commit-not-acked")."""
    assert newest_txid(children, currtx) == expected


@pytest.mark.parametrize(
    "data, expected",
    [
        (None, 1),
        (b"12", 12),
        (b"12.0", 12),
        (b'"12"', 1),
        (b"{not", 1),
        (b"0", 1),
        (b"-3", 1),
        (b"null", 1),
    ],
)
def test_the_coordinators_currtx_as_master_batch_coordinator_reads_it(data, expected):
    """MasterBatchCoordinator.java@v2.8.8 getStoredCurrTransaction: a Number's longValue, at least INIT_TXID 1."""
    from offctl.core.records.trident import coordinator_txid

    assert coordinator_txid(data) == expected


@pytest.mark.parametrize(
    "release, strategy, running, ignored",
    [
        pytest.param(
            "1.2.4",
            "EARLIEST",
            frozenset({STORM_ID}),
            "every start of its executor",
            id="KafkaTridentSpoutEmitter.java@v1.2.4 seek: EARLIEST on every first poll",
        ),
        pytest.param(
            "2.8.8",
            "EARLIEST",
            frozenset({STORM_ID}),
            None,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 seek: the running topology's own state is used",
        ),
        pytest.param(
            "2.8.8",
            "LATEST",
            frozenset(),
            "next deployment",
            id="KafkaTridentSpoutEmitter.java@v2.8.8 seek: a new deployment ignores another topologyId",
        ),
        # 3.x: trident/ at master 73da988d9 (3.0.0-SNAPSHOT) is v2.8.8's; the v3 tags were not read (docs/storm.md)
        pytest.param(
            "3.0.0",
            "EARLIEST",
            frozenset({STORM_ID}),
            None,
            id="KafkaTridentSpoutEmitter.java@73da988d9 (3.0.0-SNAPSHOT) seek: as v2.8.8, own state used",
        ),
        pytest.param(
            "3.1.0",
            "LATEST",
            frozenset(),
            "next deployment",
            id="KafkaTridentSpoutEmitter.java@73da988d9 (3.0.0-SNAPSHOT) seek: as v2.8.8, new deployment",
        ),
        pytest.param(
            "1.2.4",
            "UNCOMMITTED_EARLIEST",
            frozenset(),
            None,
            id="KafkaTridentSpoutEmitter.java@v1.2.4 seek: UNCOMMITTED_* use the state",
        ),
    ],
)
def test_earliest_and_latest_ignore_trident_state(release, strategy, running, ignored):
    from offctl.core.storm.releases import FirstPoll, StormKafkaClient

    StormKafkaClient.of_version(release)  # a release offctl knows
    profile = SpoutProfile(first_poll=FirstPoll(strategy), client_major=StormKafkaClient.major_of(release))
    n = node(client_meta(release, 20, 24, STORM_ID), client=True, folder="orders")
    rows, found = run([n], profile, running)
    message = found.get(("IGNORED_TRIDENT_STATE", 0))
    assert (message is None) == (ignored is None) and (ignored is None or ignored in message)
    # ignored, the spout starts at the log start (10) or end (100), and the lag counts from there
    lag = 100 - (10 if strategy == "EARLIEST" else 100) if ignored else rows[0].log_end - rows[0].record.committed
    assert (rows[0].lag, rows[0].resumes_stored) == (lag, ignored is None)


def client_meta(release: str, first: int, last: int, storm_id: str) -> bytes:
    """A storm-kafka-client Trident meta as `release` writes it: 2.x's (sandbox.client_trident_meta), or 1.x's with
    its tp map and no topologyId (KafkaTridentSpoutBatchMetadata.toMap, v1.2.4)."""
    if release.startswith("1."):
        return json.dumps(
            {"tp": {"topic": "orders", "partition": 0}, "firstOffset": first, "lastOffset": last}
        ).encode()
    return client_trident_meta(first, last, storm_id)


def _resumes(rows) -> list[tuple]:
    return [(r.resumes.kind.value, r.resumes.at) if r.resumes else None for r in rows]


@pytest.mark.parametrize(
    "line, whole",
    [
        pytest.param(StormKafka.V0_9_3, True, id="KafkaUtils.java@v0.9.6 UpdateOffsetException stops every partition"),
        pytest.param(StormKafka.V1_X, False, id="TridentKafkaEmitter.java@v1.2.4 moves to the log start"),
    ],
)
def test_a_throw_out_of_range_stops_every_partition_of_the_state(line, whole):
    """OpaquePartitionedTridentSpoutExecutor.emitBatch (v1.2.4): one throw fails the batch of every partition."""
    above = trident_meta("orders", 0, 150, 150, STORM_ID, "k1:9092")
    inside = trident_meta("orders", 1, 40, 50, STORM_ID, "k1:9092")
    rows, _ = run([node(above), node(inside, 1)], SpoutProfile(storm_kafka=line))
    assert (_resumes(rows)[1] == ("crashes", None)) is whole, _resumes(rows)


@pytest.mark.parametrize(
    "release, side, want",
    [
        pytest.param("2.8.8", "below", ("log-end", 100), id="CommonKafkaSpoutConfig.java@v2.8.8 no auto.offset.reset"),
        pytest.param("2.8.8", "above", ("log-end", 100), id="CommonKafkaSpoutConfig.java@v2.8.8 above: latest too"),
        pytest.param(
            "1.2.4", "below", ("log-start", 10), id="KafkaSpoutConfig.java@v1.2.4 earliest under AT_LEAST_ONCE"
        ),
    ],
)
def test_a_client_trident_state_out_of_range_goes_where_its_consumer_resets(release, side, want):
    """storm-kafka-client's Trident consumer (run on 2.8.3: tests/oracle/test_trident_oracle_e2e.py, below-log-start and
    above-log-end): 2.x's KafkaTridentSpoutConfig never sets auto.offset.reset, so Kafka's 'latest' applies."""
    last = 4 if side == "below" else 200
    rows, found = run(
        [node(client_meta(release, last - 1, last, STORM_ID), client=True, folder="orders")],
        SpoutProfile(client_release=release, client_major=int(release[0])),
    )
    assert _resumes(rows)[0] == want
    code = "OFFSET_BELOW_LOG_START" if side == "below" else "OFFSET_ABOVE_LOG_END"
    assert "OffsetManager" not in found[(code, 0)], found[(code, 0)]


@pytest.mark.parametrize("release, json_smart", [("2.5.0", False), ("2.6.0", True), ("3.1.0", True)])
def test_state_json_simple_refuses_from_storm_client_2_6_is_said_unknown(release, json_smart):
    """TransactionalState.getData: json-simple to storm-client 2.5, json-smart's permissive parser from 2.6.0
    (v2.6.0, v2.8.8), which reads unquoted keys, bare words and trailing text (run on 2.8.3)."""
    rows, found = run(
        [
            node("{firstOffset:2,lastOffset:3}", client=True, folder="orders"),
            node(client_trident_meta(40, 49, STORM_ID), 1, client=True, folder="orders"),
        ],
        SpoutProfile(client_release=release, client_major=int(release[0])),
    )
    assert ("json-smart" in found[("MALFORMED_RECORD", 0)]) is json_smart
    if json_smart:
        assert _resumes(rows) == [None, None] and rows[1].lag == 50  # the lag still counts from the stored 50
    else:
        assert _resumes(rows) == [("log-start", 10), ("stored", 50)]


@pytest.mark.parametrize(
    "children, currtx, expected",
    [
        pytest.param(["9", "10"], 11, (), id="acked: nothing at or past currtx, both executors start anew"),
        pytest.param(["9", "10"], 10, (10,), id="commit not acked: the batch stored at currtx is replayed"),
        pytest.param(["3", "12"], 5, (12,), id="a later batch stored: txids up to it are skipped, then it is replayed"),
        pytest.param(["11", "10", "9"], 10, (10, 11), id="the lowest at or past currtx comes first, then the others"),
        pytest.param(["10", "x", "010"], 1, (10,), id="only what RotatingTransactionalState writes"),
        pytest.param([], 1, (), id="no state"),
    ],
)
def test_the_txids_a_transactional_spout_replays(children, currtx, expected):
    """PartitionedTridentSpoutExecutor.java@v1.2.4 emitBatch through RotatingTransactionalState.getStateOrCreate:
    a state at the txid is re-emitted, one past it makes the txid skipped; run in
    tests/oracle/test_trident_transactional_e2e.py."""
    from offctl.core.records.trident import stored_from

    assert stored_from(children, currtx) == expected


def replaying(
    data: bytes, replay: bytes | None, replay_txid: int | None, partition: int = 0, *, client: bool = False
) -> ZkNode:
    base = node(data, partition, client=client, folder="orders" if client else None, txid=9)
    return ZkNode(
        *[
            getattr(base, f)
            for f in (
                "zk_root",
                "spout_id",
                "path",
                "node_partition",
                "folder_topic",
                "data",
                "version",
                "mtime_ms",
                "trident",
                "txid",
                "txids",
            )
        ],
        replay_txid=replay_txid,
        replay_data=replay,
    )


def test_a_batch_stored_at_currtx_that_begins_elsewhere_than_the_opaque_resume_is_said_unknown():
    """A batch at the coordinator's currtx that begins where txid 9's ends (a worker died before the ack): both
    executors start at 17, and offctl says so. One that begins elsewhere (a reset or hand edit between them): the
    opaque spout resumes at 17, the transactional one replays from 30 (PartitionedTridentSpoutExecutor, v1.2.4),
    and offctl cannot tell which wrote the state: TRIDENT_REPLAY, no resume, no lag."""
    follows = trident_meta("orders", 0, 17, 20, STORM_ID, "k1:9092")
    elsewhere = trident_meta("orders", 1, 30, 33, STORM_ID, "k1:9092")
    rows, found = run(
        [
            replaying(SK, follows, 10, 0),
            replaying(trident_meta("orders", 1, 16, 17, STORM_ID, "k1:9092"), elsewhere, 10, 1),
        ]
    )
    by = {r.record.partition: r for r in rows}
    assert (by[0].resumes.at, by[0].lag) == (17, 83)
    assert (by[1].resumes, by[1].lag) == (None, None)
    message = found[("TRIDENT_REPLAY", 1)]
    assert (
        "an opaque spout resumes at 17, after txid 9" in message
        and "replays the batch stored at txid 10 from 30" in message
        and "offctl cannot tell" in message
    )
    assert ("TRIDENT_REPLAY", 0) not in found


def test_storm_client_2x_replays_every_partition_of_the_task_when_one_has_a_batch_at_currtx():
    """PartitionedTridentSpoutExecutor.java@v2.8.3 emitBatch: one partition with state at the txid makes every one
    re-emitted, and one without state there throws NullPointerException (run: emit-interrupted); storm-core 1.x
    decides per partition."""
    meta = client_trident_meta(10, 16, STORM_ID)
    stored = client_trident_meta(17, 19, STORM_ID)
    nodes = [replaying(meta, stored, 10, 0, client=True), replaying(meta, None, None, 1, client=True)]
    rows, found = run(nodes, SpoutProfile(client_release="2.8.8", client_major=2))
    # partition 0's replay begins where the opaque spout resumes, but the batch fails on partition 1 all the same
    assert {r.record.partition: r.resumes for r in rows} == {0: None, 1: None}
    assert "throws NullPointerException on this one" in found[("TRIDENT_REPLAY", 1)]
    assert "another partition of its task has none there" in found[("TRIDENT_REPLAY", 0)]
    # partition 2 has no state at all: the transactional executor hands its reEmitPartitionBatch null and throws
    assert "throws NullPointerException on this one" in found[("MISSING_PARTITION", 2)]
    rows, findings = analyze_consumer(
        [parse_zk_node(n) for n in nodes],
        CLUSTER,
        frozenset({STORM_ID}),
        Thresholds(spout=SpoutProfile(client_release="2.8.8", client_major=2)),
    )
    assert [f.resumes for f in findings if f.code == "MISSING_PARTITION"] == [None]
    rows, found = run(nodes, SpoutProfile(client_release="1.2.4", client_major=1))
    assert not any(code == "TRIDENT_REPLAY" for code, _ in found)


@pytest.mark.parametrize("release, said", [("1.2.4", None), ("2.8.8", 100)])
def test_latest_on_storm_kafka_client_1x_may_hand_the_ignored_state_on(release, said):
    """KafkaTridentSpoutEmitter.java@v1.2.4 emitPartitionBatch and seek: LATEST seeks the log end on the first poll,
    but a poll that finds nothing hands the stored meta on and the next batch seeks its lastOffset + 1 (run on 1.2.4,
    a quiet partition: tests/oracle/test_trident_releases_e2e.py); whether a record arrives is timing, so offctl says it
    cannot tell. 2.x (v2.8.3) records where the first poll left the consumer: the log end."""
    from offctl.core.storm.releases import FirstPoll, StormKafkaClient

    profile = SpoutProfile(
        first_poll=FirstPoll.LATEST, client_release=release, client_major=StormKafkaClient.major_of(release)
    )
    rows, found = run(
        [node(client_meta(release, 20, 24, "orders-trident-1-1600000000"), client=True, folder="orders")],
        profile,
        frozenset({STORM_ID}),
    )
    assert (rows[0].resumes and rows[0].resumes.at) == said
    assert ("offctl cannot tell which" in found[("IGNORED_TRIDENT_STATE", 0)]) is (said is None)


def only_at_currtx(data: bytes, partition: int = 0, *, client: bool = False) -> ZkNode:
    """A partition whose only state is the batch `data` stored at the coordinator's currtx (10), as read_trident
    gives it: its node, with no txid an opaque spout resumes from."""
    return replace(
        node(data, partition, client=client, folder="orders" if client else None, txid=10),
        txid=None,
        replay_txid=10,
        replay_data=data,
        ahead=(10,),
    )


@pytest.mark.parametrize("client", [False, True], ids=["storm-kafka", "storm-kafka-client"])
def test_a_partition_whose_only_state_is_at_currtx(client):
    """OpaquePartitionedTridentSpoutExecutor.java@v1.2.4/v2.8.3 drops the state of the txid it emits, so with
    nothing below currtx the opaque spout starts the partition as with no state (the log start, 10: startOffsetTime
    EarliestTime, UNCOMMITTED_EARLIEST); PartitionedTridentSpoutExecutor replays the batch (run: commit-not-acked's
    partition 2, handover-ack-lost, tests/oracle/test_trident_transactional_e2e.py). A batch that begins at the log
    start: both start there (10), MISSING_PARTITION with the resume (storm-kafka-client: only an empty batch, as a reset
    writes; a non-empty one is replayed by one poll, which may come back empty and leave it unemitted, run:
    handover-ack-lost); one that begins elsewhere: TRIDENT_REPLAY, no resume, no lag; without the log, where the
    opaque spout starts is not known: TRIDENT_REPLAY."""

    def meta(first: int, partition: int, size: int) -> bytes:
        return (
            client_trident_meta(first, first + size - 1, STORM_ID)
            if client
            else trident_meta("orders", partition, first, first + size, STORM_ID, "k1:9092")
        )

    profile = SpoutProfile(client_release="2.8.8", client_major=2) if client else SpoutProfile()
    nodes = [
        only_at_currtx(meta(10, 0, 0 if client else 3), 0, client=client),
        only_at_currtx(meta(30, 1, 3), 1, client=client),
    ]
    rows, found = run(nodes, profile)
    by = {r.record.partition: r for r in rows}
    assert (by[0].record.committed, by[0].resumes.at, by[0].lag, by[0].resumes_stored) == (None, 10, 90, False)
    said = found[("MISSING_PARTITION", 0)]
    assert "its only state is the batch stored at txid 10" in said and "from 10, the same offset" in said
    assert (by[1].resumes, by[1].lag) == (None, None)
    said = found[("TRIDENT_REPLAY", 1)]
    assert "starts orders/1 as with no state, from startOffsetTime, the log start (10)" in said or client
    assert "the log start (10)" in said and "replays the batch stored at txid 10 from 30" in said
    rows, found = analyze_consumer(
        [parse_zk_node(n) for n in nodes], None, frozenset({STORM_ID}), Thresholds(spout=profile)
    )
    assert {f.code for f in found} == {"TRIDENT_REPLAY"} and all(r.resumes is None for r in rows)


def test_storm_kafka_client_replays_a_batch_with_one_poll_that_may_come_back_empty():
    """KafkaTridentSpoutEmitter.java@v2.8.3 reEmitPartitionBatch polls once; a poll that comes back empty (a paused
    partition's fetch still waiting) emits nothing, and the next txid starts from the batch's lastOffset + 1 (run:
    handover-ack-lost, where partitions 0 and 2 skipped [0, 9]). So a non-empty batch at currtx leaves where the
    spout starts unknown even where it begins where the opaque spout resumes; an empty one (a reset's) does not.
    storm-kafka-client 1.x has no transactional spout (a stub), so there its batches are the opaque spout's."""
    profile = SpoutProfile(client_release="2.8.8", client_major=2)
    follows, empty = client_trident_meta(17, 19, STORM_ID), client_trident_meta(17, 16, STORM_ID)
    nodes = [
        replaying(client_trident_meta(10, 16, STORM_ID), follows, 10, 0, client=True),
        replaying(client_trident_meta(10, 16, STORM_ID), empty, 10, 1, client=True),
    ]
    rows, found = run(nodes, profile)
    assert {r.record.partition: r.resumes and r.resumes.at for r in rows} == {0: None, 1: 17}
    assert (
        "or, where the replay's single poll comes back empty, goes on from 20 without it"
        in found[("TRIDENT_REPLAY", 0)]
    )
    nodes = [
        replaying(client_meta("1.2.4", 10, 16, STORM_ID), client_meta("1.2.4", 17, 19, STORM_ID), 10, p, client=True)
        for p in (0, 1)
    ]
    rows, found = run(nodes, SpoutProfile(client_release="1.2.4", client_major=1))
    assert {r.record.partition: r.resumes and r.resumes.at for r in rows} == {0: 17, 1: 17}
    assert {code for code, _ in found} == {"MISSING_PARTITION"}  # partition 2, which has no state
