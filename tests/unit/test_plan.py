"""The safe-rewrite planner with plain data: targets, offset rewriting, plans, guards, verification.

Time-based resets are planned here from a table of looked-up offsets; tests/e2e/test_reset_e2e.py and
tests/e2e/test_cost_e2e.py look them up on Apache Kafka (--to time, --by-duration).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from offctl.core.plans.guards import GuardFacts, check_guards
from offctl.core.plans.kafka import plan_kafka, plan_migrate
from offctl.core.plans.plan import CREATE, SKIP, UNCHANGED, WRITE, target_offset
from offctl.core.plans.restore import plan_restore_kafka, plan_restore_zookeeper
from offctl.core.plans.rewrite import rewrite_offset
from offctl.core.plans.targets import (
    Scope,
    Target,
    make_target,
    parse_duration,
    parse_partitions,
    parse_time,
    parse_topics,
)
from offctl.core.plans.verify import verify_kafka, verify_zookeeper
from offctl.core.plans.zookeeper import plan_zookeeper
from offctl.core.records.model import KAFKA, ZOOKEEPER, ConsumerKey, GroupState, KafkaCommit, PartitionLog, ZkNode
from offctl.core.records.parse import commit_metadata_json, storm_kafka_record
from offctl.core.storm.releases import FirstPoll, SpoutProfile
from offctl.errors import UsageError

SPOUT = ConsumerKey(ZOOKEEPER, "orders", "/spouts")
META = commit_metadata_json("orders-1-1700000000")


def node(
    partition: int, data: bytes | str, *, version: int = 3, mtime: int = 1_000, folder: str | None = None
) -> ZkNode:
    data = data.encode() if isinstance(data, str) else data
    base = "/spouts/orders" + (f"/{folder}" if folder else "")
    return ZkNode("/spouts", "orders", f"{base}/partition_{partition}", partition, folder, data, version, mtime)


def storm(partition: int, offset: int, topic: str = "t") -> str:
    # storm-kafka (json-simple) writes compactly and escapes '/' as '\/'
    return (
        '{"topology":{"id":"orders-1-1700000000","name":"orders"},"offset":%d,"partition":%d,'
        '"broker":{"host":"k1","port":9092},"topic":"%s","x-extra":"a\\/b"}' % (offset, partition, topic)
    )


CLUSTER = {
    "t": {0: PartitionLog(10, 100, "k1:9092"), 1: PartitionLog(10, 100, "k2:9092"), 2: PartitionLog(0, 5, "k1:9092")}
}


# --- rewriting only the offset ---------------------------------------------------------------------------


def test_rewrite_changes_only_the_offset_bytes():
    before = storm(0, 42)
    after = rewrite_offset(before.encode(), 7)
    assert after.decode() == before.replace('"offset":42', '"offset":7')
    assert list(json.loads(after)) == list(json.loads(before))  # key order kept


@pytest.mark.parametrize(
    "data, expected",
    [
        ('{ "offset" : 42 , "topic":"t"}', '{ "offset" : 7 , "topic":"t"}'),  # spacing kept
        ('{"offset":1,"offset":2}', '{"offset":7,"offset":7}'),  # every duplicate
        ('{"topic":"t","nested":{"offset":1},"offset":"bad"}', '{"topic":"t","nested":{"offset":1},"offset":7}'),
        ('{"topic":"t"}', '{"topic":"t","offset":7}'),  # added when missing
        ("{}", '{"offset":7}'),
        ('{"topic":"t\\u00e9","offset":1.5e3}\n', '{"topic":"t\\u00e9","offset":7}\n'),
    ],
)
def test_rewrite_cases(data, expected):
    assert rewrite_offset(data.encode(), 7) == expected.encode()


@pytest.mark.parametrize("data", [b"[1,2]", b"not json", b'{"offset":1} trailing', b"\xff\xfe", b'{"a":', b""])
def test_rewrite_refuses_what_is_not_a_json_object(data):
    assert rewrite_offset(data, 7) is None


# --- targets and flags --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ((None, None, None, None), "--to"),
        (("offset", None, None, None), "--to offset needs --offset"),
        (("time", None, None, None), "--to time needs --at"),
        (("shift", None, None, None), "--to shift needs --by"),
        (("earliest", 5, None, None), "--offset goes with --to offset"),
        (("offset", 5, None, 3), "--by goes with --to shift"),
        (("latest", None, "2026-01-01T00:00:00Z", None), "--at goes with --to time"),
        (("offset", -1, None, None), "0 or more"),
        (("time", None, "2026-01-01T00:00:00", None), "no zone"),
        (("time", None, "yesterday", None), "ISO-8601"),
        (("sideways", None, None, None), "expected one of"),
    ],
)
def test_bad_targets_are_usage_errors(args, message):
    with pytest.raises(UsageError, match=message):
        make_target(*args)


def test_parse_time_accepts_zones_and_epoch_ms():
    assert parse_time("1700000000000") == 1_700_000_000_000
    assert parse_time("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_time("2023-11-15T00:13:20+02:00") == 1_700_000_000_000


@pytest.mark.parametrize(
    "text, expected", [("0,3,5", {0, 3, 5}), ("0-3,7", {0, 1, 2, 3, 7}), (" 2 ", {2}), (None, None)]
)
def test_parse_partitions(text, expected):
    assert parse_partitions(text) == (frozenset(expected) if expected is not None else None)


@pytest.mark.parametrize("text", ["", "a", "1,,2", "3-1", "-1", "1.5"])
def test_bad_partitions(text):
    with pytest.raises(UsageError, match="--partitions"):
        parse_partitions(text)


LOG = PartitionLog(10, 100)


@pytest.mark.parametrize(
    "target, before, expected, why",
    [
        (Target("earliest"), 50, 10, None),
        (Target("latest"), 50, 100, None),
        (Target("offset", offset=40), 50, 40, None),
        (Target("offset", offset=5), 50, 10, "below the log start 10: clamped"),
        (Target("offset", offset=500), 50, 100, "past the log end 100: clamped"),
        (Target("shift", by=-5), 50, 45, None),
        (Target("shift", by=-500), 50, 10, "clamped"),
        (Target("shift", by=5), None, None, "no valid committed offset"),
        (Target("time", at_ms=1), 50, 33, None),  # found by the broker's lookup
        (Target("file", offsets={("t", 0): 60}, source="f.csv"), 50, 60, None),
    ],
)
def test_target_offset(target, before, expected, why):
    after, reasons = target_offset(target, "t", 0, before, LOG, {("t", 0): 33})
    assert after == expected
    assert (why is None and reasons == ()) or any(why in r for r in reasons)


def test_time_without_a_message_that_late_falls_back_to_log_end():
    after, reasons = target_offset(Target("time", at_ms=1), "t", 1, 50, LOG, {("t", 0): 33, ("t", 1): None})
    assert after == 100 and "log end" in reasons[0]


def test_time_reset_plans_from_the_lookup_per_partition():
    nodes = [node(0, storm(0, 50)), node(1, storm(1, 60))]
    plan = plan_zookeeper(
        SPOUT, nodes, CLUSTER, Target("time", at_ms=1_700_000_000_000), time_offsets={("t", 0): 20, ("t", 1): None}
    )
    # partition 2 has no record: created at the target (no message that late: the log end)
    assert [(c.partition, c.after) for c in plan.changes] == [(0, 20), (1, 100), (2, 5)]


def test_file_target_skips_partitions_not_in_the_file():
    after, reasons = target_offset(Target("file", offsets={}, source="x.csv"), "t", 0, 50, LOG, {})
    assert after is None and reasons == ("not in x.csv",)


# --- ZooKeeper plans ----------------------------------------------------------------------------------------


def test_zookeeper_plan_rewrites_bytes_and_flags_zero():
    nodes = [node(0, storm(0, 50)), node(1, storm(1, 10)), node(2, storm(2, 3))]
    plan = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("earliest"))
    by = {c.partition: c for c in plan.changes}
    assert by[0].action == WRITE and by[0].after == 10 and by[0].delta == -40
    assert by[0].after_data == storm(0, 10).encode() and by[0].version == 3
    assert by[1].action == UNCHANGED
    assert by[2].after == 0 and any("ignores a stored offset <= 0" in r for r in by[2].reasons)
    assert any("offset <= 0" in w for w in plan.warnings)


def test_zookeeper_plan_skips_unknown_topics_and_partitions_and_missing_records():
    gone = plan_zookeeper(SPOUT, [node(0, storm(0, 50, topic="gone"))], CLUSTER, Target("latest"))
    assert [(c.partition, c.action) for c in gone.changes] == [(0, SKIP)]
    assert "topic gone does not exist" in gone.changes[0].reasons
    nodes = [node(0, storm(0, 50)), node(7, storm(7, 5))]
    plan = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("latest"), scope=Scope(partitions=frozenset({1, 7, 9, 10})))
    assert [(c.partition, c.action) for c in plan.changes] == [(1, WRITE), (7, SKIP)]
    assert plan.changes[0].new_record and "no record: created" in plan.changes[0].reasons[0]
    assert "partition 7 does not exist in t" in plan.changes[1].reasons[0] and not plan.changes[1].left_out
    # partitions the topic does not have: one line, not a row each
    assert plan.warnings[0] == "t has no partition 9-10 (it has 3): left out"


def test_zookeeper_plan_applies_offsets_to_the_spouts_topic_and_refuses_a_tie():
    """PartitionManager applies a record to the spout's topic, whatever topic the record names."""
    nodes = [node(0, storm(0, 50)), node(1, storm(1, 50)), node(2, storm(2, 50, topic="u"))]
    plan = plan_zookeeper(SPOUT, nodes, {**CLUSTER, "t": {p: PartitionLog(0, 100) for p in range(3)}}, Target("latest"))
    assert [(c.topic, c.partition, c.after) for c in plan.changes] == [("t", 0, 100), ("t", 1, 100), ("t", 2, 100)]
    tie = plan_zookeeper(SPOUT, nodes[1:], CLUSTER, Target("latest"))
    assert [c.action for c in tie.changes] == [SKIP, SKIP] and "give --topic" in tie.changes[0].reasons[-1]


def test_zookeeper_plan_narrows_by_topic_and_partitions():
    nodes = [node(0, storm(0, 50)), node(1, storm(1, 50)), node(0, storm(0, 9, topic="u"), folder="u")]
    plan = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("latest"), scope=Scope({"t": None}, frozenset({1})))
    assert [(c.topic, c.partition) for c in plan.changes] == [("t", 1)]


def test_malformed_record_gets_only_its_offset_rewritten_or_is_skipped():
    bad_offset = '{"topic":"t","partition":0,"offset":"x"}'
    plan = plan_zookeeper(SPOUT, [node(0, bad_offset), node(1, b"\x00garbage")], CLUSTER, Target("offset", offset=20))
    fixed, garbage, unrecorded = plan.changes
    assert fixed.action == WRITE and fixed.after_data == b'{"topic":"t","partition":0,"offset":20}'
    assert "the spout cannot use this record" in fixed.reasons[0]
    assert garbage.action == SKIP and garbage.left_out  # not a JSON object: nothing to rewrite
    # no usable record to take the topology from: partition 2 is left out, saying where the spout starts it
    assert unrecorded.action == SKIP and unrecorded.left_out and "every one is malformed" in unrecorded.reasons[0]


def test_shift_of_a_malformed_record_is_skipped():
    plan = plan_zookeeper(SPOUT, [node(0, '{"topic":"t","partition":0}')], CLUSTER, Target("shift", by=1))
    assert plan.changes[0].action == SKIP and "no valid committed offset" in plan.changes[0].reasons[-1]


# --- every partition in the plan: a partition without a record (issue 20) ---------------------------------------

TOPOLOGY_ID = "orders-1-1700000000"


def record(
    partition: int,
    offset: int,
    topic: str = "t",
    *,
    storm_id: str = TOPOLOGY_ID,
    name: str = "orders",
    broker: str = "k1:9092",
) -> str:
    host, port = broker.rsplit(":", 1)
    return (
        '{"topology":{"id":"%s","name":"%s"},"offset":%d,"partition":%d,"broker":{"host":"%s","port":%s},'
        '"topic":"%s"}' % (storm_id, name, offset, partition, host, port, topic)
    )


@pytest.mark.parametrize(
    "value, written",
    [
        pytest.param("orders", '"orders"', id="plain"),
        pytest.param("a/b", '"a\\/b"', id="slash escaped"),
        pytest.param('q"b\\', '"q\\"b\\\\"', id="quote and backslash"),
        pytest.param("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"', id="short escapes"),
        pytest.param(
            "\x01\x1f\x7f\x9f\u2028\u20ff",
            '"\\u0001\\u001F\\u007F\\u009F\\u2028\\u20FF"',
            id="u escapes, upper-case hex",
        ),
        pytest.param("\u00e9\u2100\U0001f600", '"\u00e9\u2100\U0001f600"', id="other characters as they are"),
    ],
)
def test_a_new_record_is_written_as_json_simple_writes_its_strings(value, written):
    """JSONValue.escape (json-simple 1.1, tag_release_1_1): ", \\, /, \\b \\f \\n \\r \\t, and \\uXXXX for
    U+0000-001F, U+007F-009F, U+2000-20FF; everything else as it is, in UTF-8 (String.getBytes)."""
    data = storm_kafka_record(value, "n", 1, 0, "h", 1, "t")
    assert data == (
        '{"topology":{"id":%s,"name":"n"},"offset":1,"partition":0,"broker":{"host":"h","port":1},'
        '"topic":"t"}' % written
    ).encode("utf-8")
    assert json.loads(data)["topology"]["id"] == value


def test_a_new_record_has_storm_kafkas_fields_order_and_types():
    """PartitionManager.commit (v0.9.6, v0.10.2, v1.0.6, v1.1.3, v1.2.4): ImmutableMap topology {id, name},
    offset (long), partition (int), broker {host, port (int)}, topic; ZkState.writeJSON: JSONValue.toJSONString."""
    data = storm_kafka_record(TOPOLOGY_ID, "orders", 2**40, 7, "k1", 9092, "t")
    assert data == record(7, 2**40).encode()
    assert list(json.loads(data)) == ["topology", "offset", "partition", "broker", "topic"]
    assert storm_kafka_record("a", "b", 0, 0, "h", 1, "\ud800").endswith(b'"topic":"?"}')  # a lone surrogate


def test_a_partition_without_a_record_is_created_with_the_spouts_topology_and_its_leader():
    nodes = [node(0, record(0, 50)), node(1, record(1, 60, broker="old:9092"))]
    plan = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("offset", offset=3))
    created = plan.changes[2]
    assert (created.partition, created.before, created.after, created.action) == (2, None, 3, WRITE)
    assert created.new_record and created.version == CREATE and created.before_data is None
    assert created.path == "/spouts/orders/partition_2"
    assert created.after_data == record(2, 3, broker="k1:9092").encode()  # the leader, not the old record's broker
    assert created.reasons[0] == (
        "no record: created as storm-kafka writes one (PartitionManager.commit), for "
        "topology orders-1-1700000000 with the leader k1:9092 as its broker"
    )
    assert not plan.left_out and plan.writes[-1] is created


@pytest.mark.parametrize(
    "nodes, target, cluster, why",
    [
        pytest.param(
            [node(0, record(0, 50)), node(1, record(1, 50, storm_id="audit-2-1700000500", name="audit"))],
            Target("latest"),
            CLUSTER,
            "its records name 2 topologies (audit-2-1700000500, orders-1-1700000000):"
            " offctl does not guess whose record to write",
            id="two topologies",
        ),
        pytest.param(
            [node(0, record(0, 50)), node(1, record(1, 50, name="renamed"))],
            Target("latest"),
            CLUSTER,
            "its records name topology orders-1-1700000000 under 2 names",
            id="one topology, two names",
        ),
        pytest.param(
            [node(0, '{"topic":"t","partition":0,"offset":"x"}'), node(1, b"\x00")],
            Target("latest"),
            CLUSTER,
            "none of the spout's records names a topology the spout can use",
            id="every record malformed",
        ),
        pytest.param(
            [node(0, '{"topology":{"id":"orders-1-1700000000"},"offset":5,"topic":"t"}')],
            Target("latest"),
            CLUSTER,
            "without a name, which storm-kafka always writes",
            id="no topology name",
        ),
        pytest.param(
            [node(0, record(0, 50)), node(1, record(1, 50))],
            Target("latest"),
            {"t": {**CLUSTER["t"], 2: PartitionLog(0, 5)}},
            "the broker names no leader of t/2",
            id="no leader",
        ),
        pytest.param(
            [node(0, record(0, 50)), node(1, record(1, 50))],
            Target("shift", by=-1),
            CLUSTER,
            "no valid committed offset to shift from",
            id="shift: no offset to shift",
        ),
    ],
)
def test_a_partition_without_a_record_offctl_cannot_write_is_left_out_saying_where_the_spout_starts(
    nodes, target, cluster, why
):
    """No record: PartitionManager's constructor (v0.9.6, v1.2.4) starts from KafkaUtils.getOffset(..., config):
    startOffsetTime (v0.10 on), the log end unless forceFromStart (v0.9.x)."""
    plan = plan_zookeeper(SPOUT, nodes, cluster, target)
    (left,) = [c for c in plan.changes if c.partition == 2]
    assert left.action == SKIP and left in plan.left_out and left.path == "/spouts/orders/partition_2"
    assert why in "; ".join(left.reasons)
    assert left.reasons[-1].endswith(
        "the spout starts t/2 from startOffsetTime, the log start (0) by default, or in "
        "0.9.x without forceFromStart from the log end (5) (the PartitionManager "
        "constructor, v0.9.6 and v1.2.4)"
    )
    assert any("left out" in w and "exit code 7" in w for w in plan.warnings)


def test_a_new_record_is_clamped_and_a_zero_flagged_as_the_others():
    nodes = [node(0, record(0, 50)), node(1, record(1, 50))]
    past = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("offset", offset=500)).changes[2]
    assert past.after == 5 and past.new_record and past.reasons[-1] == "target 500 is past the log end 5: clamped"
    zero = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("earliest")).changes[2]
    assert zero.after == 0 and zero.new_record and "ignores a stored offset <= 0" in zero.reasons[-1]


def test_static_partitions_and_scopes_bound_the_partitions_planned():
    nodes = [node(0, record(0, 50))]
    static = plan_zookeeper(
        SPOUT, nodes, CLUSTER, Target("latest"), static=frozenset({0, 1}), scope=Scope(partitions=frozenset({1, 2}))
    )
    assert [c.partition for c in static.changes] == [1]  # 0 is out of scope, 2 not read by the spout
    assert static.warnings[0] == "t partition 2: not one the spout reads (--static-partitions): left out"
    narrowed = plan_zookeeper(SPOUT, nodes, CLUSTER, Target("latest"), scope=Scope({"t": frozenset({0, 2})}))
    assert [(c.partition, c.new_record) for c in narrowed.changes] == [(0, False), (2, True)]


def test_the_wildcard_layout_gets_the_new_record_in_the_topics_folder():
    """Partition.getId (v1.2.4) with the topic in the path: <id>/<topic>/partition_N."""
    nodes = [
        node(0, record(0, 50), folder="t"),
        node(0, record(0, 9, topic="u"), folder="u"),
        node(1, '{"offset":9}', folder="v"),
    ]
    plan = plan_zookeeper(
        SPOUT,
        nodes,
        {**CLUSTER, "u": {0: PartitionLog(0, 9, "k1:9092")}, "v": {p: PartitionLog(0, 9, "k1:9092") for p in range(2)}},
        Target("latest"),
    )
    by = {(c.topic, c.partition): c for c in plan.changes}
    assert by[("t", 1)].path == "/spouts/orders/t/partition_1" and by[("t", 1)].new_record
    assert by[("t", 2)].after_data == record(2, 5).encode() and ("u", 1) not in by
    # v/ holds no record naming topic v: it may be part of a spout id (orders/v), so nothing is written there
    assert by[("v", 0)].left_out and "no record in v/ names topic v" in by[("v", 0)].reasons[0]


def test_a_partition_asked_for_of_a_topic_the_spout_does_not_read_is_left_out():
    plan = plan_zookeeper(
        SPOUT,
        [node(0, record(0, 50))],
        {**CLUSTER, "u": {0: PartitionLog(0, 9, "k1:9092")}},
        Target("latest"),
        scope=Scope({"t": None, "u": frozenset({0})}),
    )
    (u,) = [c for c in plan.changes if c.topic == "u"]
    assert u.left_out and u.path is None and "none of the spout's records is applied to u" in u.reasons[0]


def test_a_trident_partition_without_state_is_left_out_saying_what_the_emitter_does():
    """TridentKafkaEmitter.doEmitNewPartitionBatch (v0.9.6, v1.2.4): no lastMeta -> KafkaUtils.getOffset(config);
    KafkaTridentSpoutEmitter.seek (v2.8.8): no lastBatchMeta -> the firstPollOffsetStrategy."""
    from offctl.core.records.model import STORM_KAFKA_CLIENT, TRIDENT
    from offctl.faces.sandbox import client_trident_meta

    key = ConsumerKey(TRIDENT, "cl", "/tx")
    state = ZkNode(
        "/tx",
        "cl",
        "/tx/cl/user/t@0/6",
        0,
        "t",
        client_trident_meta(4, 6, TOPOLOGY_ID),
        0,
        0,
        trident=STORM_KAFKA_CLIENT,
        txid=6,
        txids=1,
    )
    plan = plan_zookeeper(key, [state], CLUSTER, Target("latest"))
    assert [(c.partition, c.action, c.left_out) for c in plan.changes] == [
        (0, WRITE, False),
        (1, SKIP, True),
        (2, SKIP, True),
    ]
    assert plan.changes[2].path is None and plan.changes[2].reasons[0] == (
        "no state, and offctl creates no Trident state (one per transaction): left out; with none, "
        "KafkaTridentSpoutEmitter.seek starts t/2 at its firstPollOffsetStrategy: the log start (0) with "
        "UNCOMMITTED_EARLIEST (the default) or EARLIEST, the log end (5) with UNCOMMITTED_LATEST or LATEST (v2.8.8)"
    )


def test_migrate_still_lists_only_the_partitions_asked_for():
    plan = plan_migrate(SPOUT, [node(0, record(0, 50))], "g", [], CLUSTER, TOPOLOGY_ID)
    assert [c.partition for c in plan.changes] == [0]


# --- Kafka plans --------------------------------------------------------------------------------------------


def commit(p: int, offset: int, meta: str | None = META, topic: str = "t") -> KafkaCommit:
    return KafkaCommit("g", topic, p, offset, meta)


def test_kafka_plan_keeps_storm_metadata():
    plan = plan_kafka("g", [commit(0, 50), commit(1, 50)], CLUSTER, Target("earliest"))
    assert [(c.after, c.after_metadata) for c in plan.changes] == [(10, META), (10, META)]


def test_kafka_plan_writes_metadata_for_topology_id():
    plan = plan_kafka("g", [commit(0, 50, None)], CLUSTER, Target("latest"), topology_id="orders-2-1700000001")
    (c,) = plan.changes
    assert json.loads(c.after_metadata)["topologyId"] == "orders-2-1700000001" and c.action == WRITE


def test_kafka_plan_uses_the_groups_topology_for_commits_without_metadata():
    plan = plan_kafka("g", [commit(0, 50), commit(1, 50, None)], CLUSTER, Target("latest"))
    assert plan.changes[1].after_metadata == META


def test_kafka_plan_without_any_storm_metadata_needs_topology_id():
    plan = plan_kafka("g", [commit(0, 50, None)], CLUSTER, Target("latest"))
    assert plan.changes[0].action == SKIP and "--topology-id" in plan.changes[0].reasons[-1]


@pytest.mark.parametrize(
    "commits, target, kw, left, says",
    [
        # issue 27: a commit without Storm metadata to keep is skipped; asked for, it is left out (exit 7), never 0
        (
            [commit(0, 50, None)],
            Target("shift", by=1),
            {},
            [0],
            ["--topology-id STORM_ID", "--no-storm-metadata", "from the commit as it is (50)", "log start (10)"],
        ),
        ([commit(0, 50, None)], Target("latest"), {"scope": Scope({"t": frozenset({0})})}, [0], ["left out"]),
        # no commit to shift from, on a partition the scope names: left out, saying where the spout starts it
        (
            [commit(0, 50)],
            Target("shift", by=1),
            {"scope": Scope({"t": None})},
            [1, 2],
            ["no valid committed offset to shift from", "with no commit, the spout starts t/1", "log end (100)"],
        ),
        # already at the target (--to current, --by 0): kept as it is, nothing to write and nothing left out
        ([commit(0, 50, None)], Target("current"), {}, [], []),
        ([commit(0, 50, None)], Target("shift", by=0), {}, [], []),
        # writable with either flag: nothing left out
        ([commit(0, 50, None)], Target("shift", by=1), {"topology_id": "orders-2-1700000001"}, [], []),
        ([commit(0, 50, None)], Target("shift", by=1), {"plain": True}, [], []),
        # a repair leaves a partition alone on purpose: not left out
        ([commit(0, 50, None), commit(1, 50)], Target("repair", repair=frozenset({("t", 0)})), {"plain": True}, [], []),
    ],
)
def test_kafka_plan_leaves_out_asked_for_partitions_it_skips(commits, target, kw, left, says):
    plan = plan_kafka("g", commits, CLUSTER, target, **kw)
    assert [c.partition for c in plan.left_out] == left
    reasons = " ".join(r for c in plan.left_out for r in c.reasons)
    assert all(s in reasons for s in says), reasons
    assert any("exit code 7" in w for w in plan.warnings) == bool(left)


def test_kafka_plan_with_topic_covers_every_partition_of_it():
    plan = plan_kafka("g", [commit(0, 50)], CLUSTER, Target("earliest"), scope=Scope({"t": None}))
    assert [(c.partition, c.before, c.after, c.action) for c in plan.changes] == [
        (0, 50, 10, WRITE),
        (1, None, 10, WRITE),
        (2, None, 0, WRITE),
    ]
    assert not plan.changes[1].had_commit and "no commit before: a new commit is written" in plan.changes[1].reasons


def test_kafka_unchanged_needs_same_offset_and_metadata():
    same = plan_kafka("g", [commit(0, 10)], CLUSTER, Target("earliest"))
    new_meta = plan_kafka("g", [commit(0, 10)], CLUSTER, Target("earliest"), topology_id="orders-3-1700000002")
    assert same.changes[0].action == UNCHANGED and new_meta.changes[0].action == WRITE


# --- migrate ---------------------------------------------------------------------------------------------------


def test_migrate_copies_positions_with_metadata_and_skips_what_has_none():
    nodes = [node(0, storm(0, 50)), node(1, storm(1, 0)), node(2, storm(2, 9)), node(3, "nope")]
    plan = plan_migrate(SPOUT, nodes, "g2", [KafkaCommit("g2", "t", 0, 70, None)], CLUSTER, "orders-5-1700000005")
    by = {c.partition: c for c in plan.changes}
    assert (by[0].before, by[0].after, by[0].action) == (70, 50, WRITE)
    assert json.loads(by[0].after_metadata)["topologyId"] == "orders-5-1700000005"
    assert by[1].action == SKIP and "startOffsetTime" in by[1].reasons[0]
    assert by[2].after == 5 and any("clamped" in r for r in by[2].reasons)
    assert by[3].action == SKIP and "malformed" in by[3].reasons[0]
    assert plan.key == ConsumerKey(KAFKA, "g2") and plan.source == SPOUT


# --- restore ---------------------------------------------------------------------------------------------------


def test_restore_zookeeper_puts_exact_bytes_back_against_the_current_version():
    saved = [node(0, storm(0, 50), version=3), node(1, storm(1, 60), version=3)]
    current = [node(0, storm(0, 10), version=4)]
    plan = plan_restore_zookeeper(SPOUT, saved, current, CLUSTER, source="b.json")
    again, gone = plan.changes
    assert again.action == WRITE and again.after_data == storm(0, 50).encode() and again.version == 4
    # a node deleted since (offctl delete, or by hand) is created again, and the multi-op fails if it exists
    assert gone.action == WRITE and gone.version == CREATE and gone.after_data == storm(1, 60).encode()
    assert "no longer exists: created again" in gone.reasons[0]


def test_restore_zookeeper_notes_offsets_now_out_of_range_without_clamping():
    plan = plan_restore_zookeeper(SPOUT, [node(0, storm(0, 5))], [node(0, storm(0, 10))], CLUSTER, source="b")
    assert plan.changes[0].after == 5 and "a restore never clamps" in plan.changes[0].reasons[0]
    # the row and the footer agree: nothing was clamped, one offset is written outside the log range
    assert not any("clamped to the log range" in w for w in plan.warnings)
    assert plan.warnings == (
        "1 partition(s) written with an offset outside today's log range, not clamped (see 'why')",
    )


def test_restore_kafka_restores_offset_and_metadata():
    plan = plan_restore_kafka(
        "g", [commit(0, 50, None)], [commit(0, 10), commit(1, 10)], CLUSTER, source="b", had_commits=True
    )
    (back,) = plan.changes
    assert (back.after, back.after_metadata, back.action, back.left_out) == (50, None, WRITE, False)
    assert plan.warnings == () and plan.undone_by(back) == "restore"


NEW = ("t", 1)  # a partition that had no commit before the write the backup undoes
REMOVE = "had no commit before: the restore deletes group g"


# Issue 27, item 2: a partition that had no commit before the write is put back only by deleting the whole group
# (DeleteGroups, KIP-229), when that is a true undo; otherwise it is left out (exit 7), never "nothing to change".
@pytest.mark.parametrize(
    "saved, now, had, members, hand_made, expect",
    [
        ([NEW], [commit(1, 7)], False, False, False, ("delete", REMOVE)),
        ([NEW, ("t", 2)], [commit(1, 7), commit(2, 3)], False, False, False, ("delete", REMOVE)),
        ([NEW], [], False, False, False, ("skip", "had no commit before, and has none now")),
        (
            [NEW],
            [commit(1, 7), commit(0, 4)],
            False,
            False,
            False,
            ("left out", "the group now has commits the write did not make (t/0)"),
        ),
        ([NEW], [commit(1, 7)], True, False, False, ("left out", "the group had commits on other partitions before")),
        (
            [NEW, commit(0, 50)],
            [commit(1, 7), commit(0, 9)],
            False,
            False,
            False,
            ("left out", "the group had commits on other partitions before"),
        ),
        ([NEW], [commit(1, 7)], None, False, False, ("left out", "the backup (format 2) does not say")),
        ([NEW], [commit(1, 7)], False, True, False, ("left out", "the group has members now")),
        ([NEW], [commit(1, 7)], False, False, True, ("left out", "a hand-made file's word")),
    ],
    ids=[
        "group had none: deleted",
        "two partitions: deleted",
        "no commit now: nothing to do",
        "commits elsewhere now",
        "group had commits before",
        "backup holds a commit",
        "format 2",
        "members",
        "hand-made",
    ],
)
def test_restore_kafka_of_a_partition_that_had_no_commit(saved, now, had, members, hand_made, expect):
    plan = plan_restore_kafka(
        "g", saved, now, CLUSTER, source="b", had_commits=had, members=members, hand_made=hand_made
    )
    row = next(c for c in plan.changes if (c.topic, c.partition) == NEW)
    action, why = expect
    assert ("left out" if row.left_out else row.action) == action
    assert why in row.reasons[0]
    if action == "left out":
        assert row.action == SKIP and "cannot be undone" in row.reasons[0] and "OffsetDelete (KIP-496" in row.reasons[0]
        assert row.reasons[0].endswith(
            "kafka-consumer-groups --bootstrap-server BROKERS --delete-offsets --group g --topic t:1"
        )
        assert any(w.startswith("cannot be undone for ") and "t/1" in w for w in plan.warnings)
        assert plan.left_out and not any(c.delete for c in plan.changes)
    if action == "delete":
        assert all(c.delete for c in plan.writes) and row.before == 7 and not plan.left_out
        assert plan.undone_by(row) == "restore"  # the restore's own undo commits them back


@pytest.mark.parametrize(
    "commits, scope, expect",
    [
        ([], Scope({"t": frozenset({0, 1})}), "undone by deleting group g, which had no commits before"),
        ([commit(0, 20)], Scope({"t": frozenset({0, 1})}), "cannot be undone for 1 partition(s): t/1: "),
        ([commit(0, 20), commit(1, 30)], Scope({"t": frozenset({0, 1})}), None),
    ],
    ids=["group without commits", "commits on some partitions only", "commits everywhere"],
)
def test_a_kafka_reset_says_before_the_write_what_its_undo_cannot_put_back(commits, scope, expect):
    plan = plan_kafka("g", commits, CLUSTER, Target("offset", offset=50), scope=scope, topology_id="x-1-1")
    said = [w for w in plan.warnings if "undone" in w]
    assert said == [] if expect is None else (len(said) == 1 and said[0].startswith(expect))
    if expect and expect.startswith("cannot"):
        assert said[0].endswith("--delete-offsets --group g --topic t:1")
        assert [plan.undone_by(c) for c in plan.changes] == ["restore", "nothing"]
    if expect and expect.startswith("undone"):
        assert [plan.undone_by(c) for c in plan.changes] == ["delete-group", "delete-group"]


def test_a_migrate_into_a_group_without_commits_is_undone_by_deleting_it():
    nodes = [node(0, storm_kafka_record("orders-1-1700000000", "orders", 40, 0, "k1", 9092, "t"))]
    plan = plan_migrate(ConsumerKey(ZOOKEEPER, "orders", "/spouts"), nodes, "g", [], CLUSTER, "new-2-1700000500")
    assert plan.group_had_commits is False
    assert [w for w in plan.warnings if w.startswith("undone by deleting group g")]
    moved = plan_migrate(
        ConsumerKey(ZOOKEEPER, "orders", "/spouts"), nodes, "g", [commit(1, 3)], CLUSTER, "new-2-1700000500"
    )
    assert [w for w in moved.warnings if w.startswith("cannot be undone for 1 partition(s): t/0")]


# --- guards ----------------------------------------------------------------------------------------------------


def facts(**kw) -> GuardFacts:
    base = dict(topology_ids=frozenset({"orders-1-1700000000"}), running=frozenset(), now_ms=100_000)
    return GuardFacts(**{**base, **kw})


def statuses(checks) -> dict[str, str]:
    return {c.guard: c.status for c in checks}


def test_guards_pass_when_nothing_runs_and_all_is_quiet():
    checks = check_guards(facts(zk_modified_ms={"/a": 50_000}, groups=(GroupState("g", "empty", 0),)), ())
    assert statuses(checks) == {
        "running-topology": "pass",
        "recent-write": "pass",
        "active-group": "pass",
        "changed-since": "not-applicable",
    }


@pytest.mark.parametrize("running", [{"orders-1-1700000000"}, {"orders-2-1700009999"}])
def test_running_topology_refuses_by_id_or_by_name_after_a_redeploy(running):
    (check, *_) = check_guards(facts(running=frozenset(running)), ())
    assert check.status == "refused" and "orders-" in check.message and "--force running-topology" in check.message


def test_running_topology_refuses_when_storm_root_cannot_be_read():
    (check, *_) = check_guards(facts(running=None, running_unknown_why="no --zk given"), ())
    assert check.status == "refused" and "no --zk given" in check.message


def test_other_topologies_running_do_not_refuse():
    (check, *_) = check_guards(facts(running=frozenset({"billing-1-1700000000"})), ())
    assert check.status == "pass"


def test_recent_write_refuses_within_the_quiet_period():
    checks = check_guards(facts(zk_modified_ms={"/a": 95_000, "/b": 10_000}, quiet_period_s=10), ())
    assert statuses(checks)["recent-write"] == "refused" and "/a was written 5.0s ago" in checks[1].message
    quiet = check_guards(facts(zk_modified_ms={"/a": 95_000}, quiet_period_s=4), ())
    assert statuses(quiet)["recent-write"] == "pass"


def test_active_group_refuses_groups_with_members():
    checks = check_guards(facts(groups=(GroupState("g", "stable", 2),)), ())
    assert statuses(checks)["active-group"] == "refused" and "2 member(s)" in checks[2].message


def test_force_overrides_only_the_named_guard():
    checks = check_guards(
        facts(running=frozenset({"orders-1-1700000000"}), zk_modified_ms={"/a": 99_999}), {"recent-write"}
    )
    assert statuses(checks) == {
        "running-topology": "refused",
        "recent-write": "overridden",
        "active-group": "not-applicable",
        "changed-since": "not-applicable",
    }
    assert "overridden by --force recent-write" in checks[1].message


def test_running_topology_refusing_an_undo_says_to_stop_it_again():
    """Issue 27, item 9: the undo line carries the write's --force flags, so a refusal means the topology was
    started again since the write."""
    (check, *_) = check_guards(facts(running=frozenset({"orders-1-1700000000"}), restore=True), ())
    assert check.status == "refused" and "started again since the write this backup undoes" in check.message
    assert "storm kill NAME" in check.message and "offctl sandbox topology stop NAME" in check.message
    assert check.message.endswith("--force running-topology overrides")


CHANGED = tuple(f"t/{p}: the write left offset 5, it is now 9" for p in range(12))


@pytest.mark.parametrize(
    "kw, force, status, said",
    [
        (dict(), (), "not-applicable", "not a restore"),
        (
            dict(restore=True, changed_since=()),
            (),
            "pass",
            "every partition is as the write this backup undoes left it",
        ),
        (
            dict(restore=True, changed_since=CHANGED[:1]),
            (),
            "refused",
            "1 partition(s) changed since the write this backup undoes, which restoring would overwrite: t/0: the "
            "write left offset 5, it is now 9; --force changed-since overrides",
        ),
        (
            dict(restore=True, changed_since=CHANGED[:1]),
            ("changed-since",),
            "overridden",
            "(overridden by --force changed-since)",
        ),
        (
            dict(restore=True, changed_since=CHANGED),
            (),
            "refused",
            "t/9: the write left offset 5, it is now 9 and 2 more",
        ),
        (
            dict(restore=True, changed_since_unknown="the backup (format 2) keeps no after-image"),
            (),
            "refused",
            "offctl cannot tell whether the partitions changed since the write this backup undoes (the backup (format "
            "2)",
        ),
        (
            dict(restore=True, changed_since_na="a hand-made file: offctl trusts no after-image in it"),
            (),
            "not-applicable",
            "a hand-made file: offctl trusts no after-image in it",
        ),
    ],
    ids=["not a restore", "unchanged", "one changed", "forced", "at most 10 named", "cannot tell", "hand-made"],
)
def test_changed_since_guard(kw, force, status, said):
    check = check_guards(facts(**kw), force)[3]
    assert (check.guard, check.status) == ("changed-since", status) and said in check.message
    if kw.get("changed_since") == CHANGED:
        assert "t/10" not in check.message


def zk_at(path_partition: int, offset: int | None, version: int) -> ZkNode | None:
    if offset is None:
        return None
    return node(
        path_partition,
        storm_kafka_record("orders-1-1700000000", "orders", offset, path_partition, "k1", 9092, "t"),
        version=version,
    )


P0 = "/spouts/orders/partition_0"


def tx(txid: int, resume: int) -> ZkNode:
    """A storm-kafka Trident state of partition 0 at `txid`, resuming at `resume` (its nextOffset)."""
    return replace(
        node(0, '{"offset":%d,"nextOffset":%d,"topic":"t"}' % (resume - 2, resume)),
        path=f"{P0}/{txid}",
        trident="storm-kafka",
        txid=txid,
    )


# (before, left, now): each node as it was before the write (None: it did not exist), as the write left it (None:
# the write deleted it), and as read now (None: it does not exist). Issue 34: a node holding its before-image byte
# for byte is done (the write was cut off before it landed, or a restore put it back): no change since the write.
@pytest.mark.parametrize(
    "before, left, now, said",
    [
        (zk_at(0, 4, 3), zk_at(0, 5, 4), zk_at(0, 5, 4), None),
        (zk_at(0, 4, 3), zk_at(0, 5, 4), zk_at(0, 9, 5), "the write left offset 5, it is now 9"),
        (zk_at(0, 4, 3), zk_at(0, 5, 4), zk_at(0, 4, 3), None),
        (zk_at(0, 4, 3), zk_at(0, 5, 4), zk_at(0, 4, 7), None),
        (zk_at(0, 4, 3), zk_at(0, 5, 4), None, "the write left offset 5; it was deleted since"),
        (None, zk_at(0, 5, 0), None, None),
        (None, zk_at(0, 5, 0), zk_at(0, 9, 1), "the write left offset 5, it is now 9"),
        (zk_at(0, 4, 3), None, zk_at(0, 4, 3), None),
        (zk_at(0, 4, 3), None, zk_at(0, 9, 0), "the write deleted it; it was created again since, at offset 9"),
        (zk_at(0, 4, 3), None, None, None),
        (zk_at(0, 4, 3), zk_at(0, 5, 4), zk_at(0, 5, 6), None),  # written again with the very bytes the write left
        (
            zk_at(0, 4, 3),
            zk_at(0, 5, 4),
            node(0, '{"offset":5,"topic":"t","partition":0}', version=5),
            "the write left offset 5 (version 4); other bytes are there now (version 5), offset 5",
        ),
        (
            zk_at(0, 4, 3),
            zk_at(0, 5, 4),
            node(0, '{"offset":4,"topic":"t","partition":0}', version=5),
            "the write left offset 5, it is now 4",
        ),  # the before offset in other bytes: a third value
        (tx(7, 1), tx(7, 3), tx(8, 5), "the write left offset 3; the spout has written " + P0 + "/8 since"),
        (tx(7, 1), tx(7, 3), tx(7, 1), None),
    ],
    ids=[
        "unchanged",
        "moved",
        "cut off: as before",
        "as before, another version",
        "deleted since",
        "a creation cut off: still absent",
        "created, then moved",
        "a deletion cut off",
        "recreated since the delete",
        "still deleted",
        "same bytes again",
        "other bytes, same offset",
        "other bytes, the before offset",
        "Trident: a newer txid",
        "Trident: cut off",
    ],
)
def test_changed_zookeeper(before, left, now, said):
    from offctl.core.plans.guards import changed_zookeeper

    path = next(n.path for n in (left, before, now) if n is not None)
    found = changed_zookeeper({path: left}, [now] if now else [], {path: before})
    assert found == ({} if said is None else {path: said})


@pytest.mark.parametrize(
    "before, left, now, said",
    [
        (commit(1, 4), commit(1, 5), commit(1, 5), None),
        (commit(1, 4), commit(1, 5), commit(1, 9), "the write left offset 5, it is now 9"),
        (commit(1, 4), commit(1, 5), commit(1, 4), None),
        (commit(1, 4), commit(1, 5), commit(1, 4, None), "the write left offset 5, it is now 4"),
        (commit(1, 4), commit(1, 5), None, "the write left offset 5, it now has no commit"),
        (commit(1, 4), commit(1, 5), commit(1, 5, None), "the write left metadata '" + META[:30]),
        (None, commit(1, 5), None, None),
        (None, commit(1, 5), commit(1, 9), "the write left offset 5, it is now 9"),
        (commit(1, 4), None, commit(1, 4), None),
        (commit(1, 4), None, commit(1, 7), "the write removed its commit; it has offset 7 now"),
        (commit(1, 4), None, None, None),
    ],
    ids=[
        "unchanged",
        "moved",
        "cut off: as before",
        "the before offset, other metadata",
        "commit gone",
        "metadata dropped",
        "a first commit cut off: still none",
        "a first commit, then moved",
        "a group deletion cut off",
        "committed after the group was deleted",
        "still none",
    ],
)
def test_changed_kafka(before, left, now, said):
    from offctl.core.plans.guards import changed_kafka

    found = changed_kafka({("t", 1): left}, [now] if now else [], {("t", 1): before})
    assert (found == {}) if said is None else found[("t", 1)].startswith(said)


ALL_NA = {g: "not-applicable" for g in ("running-topology", "recent-write", "active-group", "changed-since")}


# Issue 34: a guard keeps a write from overwriting something; a plan that writes nothing overwrites nothing, so no
# guard refuses it, whatever the facts (a restore whose partitions all hold their before-image: exit 0).
@pytest.mark.parametrize(
    "saved, now, kw, expect",
    [
        (
            [node(0, storm(0, 4))],
            [node(0, storm(0, 4), version=9)],
            dict(
                running=frozenset({"orders-1-1700000000"}),
                zk_modified_ms={P0: 99_999},
                restore=True,
                changed_since=(f"{P0}: the write left offset 5, it is now 4",),
            ),
            ALL_NA,
        ),
        (
            [node(0, storm(0, 4))],
            [node(0, storm(0, 4))],
            dict(running=None, restore=True, changed_since_unknown="x"),
            ALL_NA,
        ),
        (
            [node(0, storm(0, 4))],
            [node(0, storm(0, 5))],
            dict(restore=True, changed_since=()),
            {**ALL_NA, "running-topology": "pass", "changed-since": "pass"},
        ),
        (
            [node(0, storm(0, 4))],
            [node(0, storm(0, 5))],
            dict(restore=True, changed_since=("x",)),
            {**ALL_NA, "running-topology": "pass", "changed-since": "refused"},
        ),
    ],
    ids=[
        "writes nothing: every guard n/a",
        "writes nothing: even one that cannot tell",
        "writes: guarded",
        "writes: refused",
    ],
)
def test_a_plan_that_writes_nothing_is_refused_by_no_guard(saved, now, kw, expect):
    from offctl.core.plans.guards import WRITES_NOTHING, with_guards

    plan = with_guards(plan_restore_zookeeper(SPOUT, saved, now, CLUSTER, source="b"), facts(**kw), ())
    assert statuses(plan.guards) == expect and bool(plan.refused) is ("refused" in expect.values())
    if not plan.writes:
        assert {g.message for g in plan.guards} == {WRITES_NOTHING}


def test_a_restore_puts_back_only_what_differs_from_the_before_image():
    """Partition 0 holds its before-image (the write never landed there), 1 what the write left: 1 is written."""
    saved = [node(0, storm(0, 4)), node(1, storm(1, 5))]
    plan = plan_restore_zookeeper(
        SPOUT, saved, [node(0, storm(0, 4), version=3), node(1, storm(1, 10), version=4)], CLUSTER, source="b"
    )
    assert [(c.partition, c.action) for c in plan.changes] == [(0, UNCHANGED), (1, WRITE)]
    assert [c.partition for c in plan.writes] == [1]
    assert plan.changes[0].reasons[0] == "holds its before-image already: nothing to put back"
    kafka = plan_restore_kafka(
        "g",
        [commit(0, 4), commit(1, 5), ("t", 2)],
        [commit(0, 4), commit(1, 10)],
        CLUSTER,
        source="b",
        had_commits=True,
    )
    assert [(c.partition, c.action) for c in kafka.changes] == [(0, UNCHANGED), (1, WRITE), (2, SKIP)]


# --- verification ------------------------------------------------------------------------------------------------


def test_verify_zookeeper():
    plan = plan_zookeeper(SPOUT, [node(0, storm(0, 50)), node(1, storm(1, 50))], CLUSTER, Target("earliest"))
    good = {c.path: c.after_data for c in plan.changes}
    assert verify_zookeeper(plan, good) == []
    moved = {**good, "/spouts/orders/partition_1": storm(1, 77).encode()}
    assert "partition_1 holds" in verify_zookeeper(plan, moved)[0]
    assert "node gone" in verify_zookeeper(plan, {})[0]


def test_verify_kafka_checks_offset_and_metadata():
    plan = plan_kafka("g", [commit(0, 50)], CLUSTER, Target("earliest"))
    assert verify_kafka(plan, {("t", 0): (10, META)}).problems == ()
    assert "not the planned 10" in verify_kafka(plan, {("t", 0): (11, META)}).problems[0]
    assert "no commit" in verify_kafka(plan, {}).problems[0]


@pytest.mark.parametrize(
    "strategy, fails",
    [
        # KafkaSpout.doSeek, v2.8.8: UNCOMMITTED_* resume from a commit whatever its metadata, EARLIEST/LATEST
        # ignore one that isOffsetCommittedByThisTopology does not hold for (none: its Jackson read fails)
        (FirstPoll.UNCOMMITTED_EARLIEST, False),
        (FirstPoll.UNCOMMITTED_LATEST, False),
        (FirstPoll.EARLIEST, True),
        (FirstPoll.LATEST, True),
    ],
)
def test_dropped_metadata_fails_verification_only_where_the_strategy_ignores_the_commit(strategy, fails):
    plan = plan_kafka("g", [commit(0, 50)], CLUSTER, Target("earliest"))
    found = verify_kafka(plan, {("t", 0): (10, None)}, SpoutProfile(first_poll=strategy))
    assert bool(found.problems) is fails
    if fails:
        assert found.problems[0].startswith(
            "t/0: the broker kept no metadata instead of the Storm metadata written, "
            f"and the spout will ignore this commit: {strategy.value} applies to a "
            "commit that is not the running topology's, and it starts at the log"
        )
        assert found.notes == ()
    else:
        (note,) = found.notes
        assert note.startswith(
            "The broker did not keep the Storm metadata written on t/0 (it kept no metadata). "
            f"A spout with {strategy.value} still resumes from these commits; one with EARLIEST "
            "or LATEST would ignore them"
        )


def test_active_group_refuses_a_joined_group_even_when_members_are_not_listed():
    (_, _, check, _) = check_guards(facts(groups=(GroupState("g", "completing_rebalance", 0),)), ())
    assert check.status == "refused" and "completing_rebalance" in check.message


def test_shift_by_zero_with_a_topology_id_rewrites_only_the_metadata():
    plan = plan_kafka(
        "g",
        [commit(0, 50, None), commit(1, 60, None)],
        CLUSTER,
        make_target("shift", None, None, 0),
        topology_id="orders-1-1700000000",
    )
    assert [(c.before, c.after, c.after_metadata, c.action) for c in plan.changes] == [
        (50, 50, META, WRITE),
        (60, 60, META, WRITE),
    ]


# --- parity with kafka-consumer-groups (ConsumerGroupCommand / OffsetsUtils, apache/kafka trunk) ----------------


@pytest.mark.parametrize(
    "before, log, expected, why",
    [
        ("committed", PartitionLog(10, 100), 50, None),  # OffsetsUtils.resetToCurrent: the commit as it is
        ("none", PartitionLog(10, 100), 100, "the log end"),  # no commit: getLogEndOffsets
        ("below", PartitionLog(60, 100), 50, "kept as it is"),  # no range check, as Kafka
    ],
)
def test_to_current(before, log, expected, why):
    committed = {"committed": 50, "none": None, "below": 50}[before]
    after, reasons = target_offset(Target("current"), "t", 0, committed, log, {})
    assert after == expected
    assert (why is None and reasons == ()) or any(why in r for r in reasons)


def test_to_current_plans_uncommitted_partitions_of_a_named_topic_at_the_log_end():
    plan = plan_kafka("g", [commit(0, 50)], CLUSTER, Target("current"), scope=Scope({"t": None}))
    assert [(c.partition, c.after, c.action) for c in plan.changes] == [
        (0, 50, UNCHANGED),
        (1, 100, WRITE),
        (2, 5, WRITE),
    ]


@pytest.mark.parametrize(
    "text, ms",
    [
        ("PT30M", 1_800_000),
        ("pt30m", 1_800_000),
        ("P1DT12H", 129_600_000),
        ("PT0.5S", 500),
        (" PT6H ", 21_600_000),
    ],
)
def test_parse_duration_as_javas_duration_parse(text, ms):
    assert parse_duration(text) == ms


@pytest.mark.parametrize(
    "text, message",
    [
        ("30m", "ISO-8601 duration"),
        ("P", "ISO-8601 duration"),
        ("P1M", "years and months"),
        ("P1Y", "years and months"),
        ("PT0S", "more than zero"),
        ("-PT1H", "more than zero"),
        ("PT", "more than zero"),
    ],
)
def test_bad_durations(text, message):
    with pytest.raises(UsageError, match=message):
        parse_duration(text)


def test_by_duration_is_a_time_target_back_from_now():
    target = make_target(None, None, None, None, "PT30M", now_ms=1_800_000 + 5)
    assert (target.kind, target.at_ms) == ("time", 5) and target.describe().endswith("(PT30M before now)")
    with pytest.raises(UsageError, match="a target of its own"):
        make_target("earliest", None, None, None, "PT30M", now_ms=10**12)
    with pytest.raises(UsageError, match="before 1970"):
        make_target(None, None, None, None, "P20000D", now_ms=10**12)


@pytest.mark.parametrize(
    "values, expected",
    [
        (["orders"], {"orders": None}),
        (["orders:0-3,7"], {"orders": frozenset({0, 1, 2, 3, 7})}),
        (["orders:1", "orders:2", "pay.ments_x-1"], {"orders": frozenset({1, 2}), "pay.ments_x-1": None}),
        (["orders:1", "orders"], {"orders": None}),  # the whole topic wins
    ],
)
def test_parse_topics(values, expected):
    assert parse_topics(values) == expected


@pytest.mark.parametrize("value", ["", "a b", "orders:", "orders:x", "o/r", "x" * 250, ":1"])
def test_bad_topics(value):
    with pytest.raises(UsageError, match="--topic"):
        parse_topics([value])


def test_kafka_plan_over_several_topic_scopes_says_in_one_line_what_does_not_exist():
    cluster = {**CLUSTER, "u": {0: PartitionLog(0, 9)}}
    commits = [commit(0, 50), commit(0, 3, topic="u")]
    plan = plan_kafka(
        "g", commits, cluster, Target("earliest"), scope=Scope({"t": frozenset({1, 5, 6, 7}), "u": None, "gone": None})
    )
    assert [(c.topic, c.partition) for c in plan.changes] == [("t", 1), ("u", 0)]
    assert plan.warnings[:2] == (
        "t has no partition 5-7 (it has 3): left out",
        "topic gone does not exist and the group has no commits on it: left out",
    )


def test_kafka_plan_with_partitions_the_group_has_no_commit_on():
    plan = plan_kafka("g", [commit(0, 50)], CLUSTER, Target("earliest"), scope=Scope(partitions=frozenset({0, 4})))
    assert [(c.partition, c.action) for c in plan.changes] == [(0, WRITE)]
    assert "no commit on partition 4 of any topic" in plan.warnings[0]


def test_a_file_row_for_a_partition_with_no_commit_is_planned_and_every_row_appears():
    """Before: a row without a commit was dropped with no word when no --topic was given."""
    cluster = {**CLUSTER, "u": {0: PartitionLog(0, 9)}}
    offsets = {("t", 0): 20, ("t", 1): 30, ("u", 0): 4, ("t", 9): 1, ("gone", 0): 1}
    target = Target("file", offsets=offsets, source="x.csv")
    plan = plan_kafka("g", [commit(0, 50)], cluster, target)
    rows = {(c.topic, c.partition): c for c in plan.changes}
    assert set(rows) == set(offsets)
    assert rows[("t", 1)].action == WRITE and rows[("t", 1)].after == 30 and not rows[("t", 1)].had_commit
    assert rows[("t", 9)].action == SKIP and "does not exist" in rows[("t", 9)].reasons[0]
    assert rows[("gone", 0)].action == SKIP and "topic gone does not exist" in rows[("gone", 0)].reasons[0]
    narrowed = plan_kafka("g", [commit(0, 50)], cluster, target, scope=Scope({"u": None}))
    outside = [c for c in narrowed.changes if c.topic != "u"]
    assert len(outside) == 4 and all("outside the --topic/--partitions scope" in c.reasons[0] for c in outside)


def test_a_zookeeper_file_row_without_a_node_is_created_and_a_partition_not_in_the_file_is_left_alone():
    target = Target("file", offsets={("t", 0): 20, ("t", 2): 3}, source="x.csv")
    plan = plan_zookeeper(SPOUT, [node(0, storm(0, 50))], CLUSTER, target)
    assert [(c.partition, c.action, c.after) for c in plan.changes] == [(0, WRITE, 20), (1, SKIP, None), (2, WRITE, 3)]
    assert plan.changes[1].reasons == ("not in x.csv",) and not plan.changes[1].left_out  # the file's choice
    assert plan.changes[2].new_record and not plan.left_out


def test_no_storm_metadata_commits_plainly_only_where_there_is_none():
    """KafkaSpout.doSeek (storm-kafka-client v2.8.8): UNCOMMITTED_* strategies honour any commit."""
    plan = plan_kafka("g", [commit(0, 50, None), commit(1, 50)], CLUSTER, Target("earliest"), plain=True)
    plain, storm_meta = plan.changes
    assert plain.action == WRITE and plain.after_metadata is None and "UNCOMMITTED_EARLIEST" in plain.reasons[-1]
    assert storm_meta.after_metadata == META
