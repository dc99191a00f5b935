"""A JStorm spout's reset, restore and delete planned with plain data (offctl.core.plans.jstorm): the target is where
the spout fetches first, the record stores it - 1, its bytes as commitState writes them; the cost counts from where it
fetches; the read-back, the backup, the offsets file and the guards take JStorm's spouts as they are."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import pytest

from offctl.adapters.backup import backup_document, digest, parse_backup
from offctl.adapters.offsets_file import load_offsets_file
from offctl.core.plans.cost import plan_cost
from offctl.core.plans.guards import GuardFacts, check_guards
from offctl.core.plans.jstorm import delete_words, plan_jstorm
from offctl.core.plans.plan import CREATE, SKIP, UNCHANGED, WRITE, Plan
from offctl.core.plans.restore import plan_restore_zookeeper
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.verify import verify_jstorm
from offctl.core.plans.zookeeper import plan_delete
from offctl.core.records.jstorm import parse_jstorm_node
from offctl.core.records.model import JSTORM, ConsumerKey, MessageRead, PartitionLog, ZkNode
from offctl.core.storm import jstorm
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import UsageError

ROOT = "/jstorm"
SPOUT = ConsumerKey(JSTORM, "clicks/jstorm", ROOT)
CLUSTER = {"clicks": {p: PartitionLog(2 * p, 10, f"k{p}:9092") for p in range(3)}}  # log starts 0, 2, 4; ends 10


def record(partition: int, offset: int, topology: str | None = "clicks-topology", topic: str = "clicks") -> bytes:
    return jstorm.record_bytes(topology, offset, partition, "k0", 9092, topic)


def node(partition: int, data: bytes, *, version: int = 2, mtime: int = 1_000) -> ZkNode:
    path = jstorm.node_path(ROOT, SPOUT.consumer, partition)
    return ZkNode(ROOT, SPOUT.consumer, path, partition, "clicks", data, version, mtime, jstorm=True)


NODES = [node(0, record(0, 3)), node(1, record(1, 5))]  # partition 2 has no record


def rows(plan: Plan) -> list[tuple]:
    return [(c.partition, c.before, c.after, c.action, c.new_record, c.left_out) for c in plan.changes]


@pytest.mark.parametrize(
    "target, want",
    [
        pytest.param(Target("latest"), {0: 9, 1: 9, 2: 9}, id="latest: the log end - 1, fetched from the log end"),
        pytest.param(Target("earliest"), {0: -1, 1: 1, 2: 3}, id="earliest: the log start - 1, -1 on a log from 0"),
        pytest.param(Target("offset", offset=4), {0: 3, 1: 3, 2: 3}, id="offset 4: stores 3, fetches 4"),
        pytest.param(Target("offset", offset=1), {0: 0, 1: 1, 2: 3}, id="offset below a log start: clamped to it"),
        pytest.param(Target("offset", offset=99), {0: 9, 1: 9, 2: 9}, id="offset past the log end: clamped to it"),
        pytest.param(Target("current"), {0: 3, 1: 5, 2: 9}, id="current: kept; no record: fetches the log end"),
    ],
)
def test_a_reset_stores_the_target_minus_one_and_says_what_the_spout_fetches(target, want):
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, target)
    assert {c.partition: c.after for c in plan.changes} == want
    for c in plan.changes:
        assert c.path == jstorm.node_path(ROOT, SPOUT.consumer, c.partition)
        assert any(f"writes offset {c.after}, so JStorm's spout fetches {c.after + 1} first" in r for r in c.reasons)
        assert parse_jstorm_node(node(c.partition, c.after_data)).committed == c.after  # as the spout reads it


def test_the_bytes_written_are_commitstates_and_a_new_record_names_the_spouts_topology():
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest"))
    assert rows(plan) == [
        (0, 3, 9, WRITE, False, False),
        (1, 5, 9, WRITE, False, False),
        (2, None, 9, WRITE, True, False),
    ]
    assert [c.after_data for c in plan.changes[:2]] == [record(0, 9), record(1, 9)]
    new = plan.changes[2]
    assert new.version == CREATE and new.after_data == jstorm.record_bytes(
        "clicks-topology", 9, 2, "k2", 9092, "clicks"
    )
    assert "created as JStorm's spout writes one" in new.reasons[0] and "'clicks-topology'" in new.reasons[0]


@pytest.mark.parametrize(
    "names, why",
    [
        pytest.param(("a", "b"), "its records name 2 topologies", id="two-names"),
        pytest.param((None, None), "none of its records names a topology", id="none"),
    ],
)
def test_a_new_record_names_no_topology_where_the_records_do_not_agree(names, why):
    nodes = [node(p, record(p, 3, topology=n)) for p, n in enumerate(names)]
    new = plan_jstorm(SPOUT, nodes, CLUSTER, Target("offset", offset=6)).changes[2]
    assert new.after_data == jstorm.record_bytes(None, 5, 2, "k2", 9092, "clicks")
    assert b'"topology":null' in new.after_data and why in new.reasons[0]


def test_shift_and_time_move_from_where_the_spout_fetches():
    shifted = plan_jstorm(SPOUT, NODES, CLUSTER, Target("shift", by=-2), scope=Scope(partitions=frozenset({0, 1})))
    assert [(c.partition, c.before, c.after) for c in shifted.changes] == [(0, 3, 1), (1, 5, 3)]
    at = {("clicks", 0): 6, ("clicks", 1): None, ("clicks", 2): 7}
    timed = plan_jstorm(SPOUT, NODES, CLUSTER, Target("time", at_ms=1), time_offsets=at)
    assert [c.after for c in timed.changes] == [5, 9, 6]  # no message at or after the time: the log end


def test_a_record_offctl_did_not_write_keeps_every_byte_but_its_offset():
    spaced = b'{ "offset" : 3, "topic":"clicks", "extra":[1,2], "partition":0 }'
    change = plan_jstorm(SPOUT, [node(0, spaced)], CLUSTER, Target("offset", offset=8)).changes[0]
    assert change.after_data == b'{ "offset" : 7, "topic":"clicks", "extra":[1,2], "partition":0 }'


def test_a_record_the_spout_cannot_use_is_given_an_offset_it_reads():
    unusable = node(0, b'{"offset":"3","partition":0,"topic":"clicks"}')
    change = plan_jstorm(SPOUT, [unusable], CLUSTER, Target("latest")).changes[0]
    assert change.before is None and change.after == 9 and change.action == WRITE
    assert change.after_data == b'{"offset":9,"partition":0,"topic":"clicks"}'
    assert change.reasons[0].startswith("the spout cannot use this record (offset is")
    shift = plan_jstorm(SPOUT, [unusable], CLUSTER, Target("shift", by=1)).changes[0]
    assert shift.action == SKIP and shift.left_out and "no valid committed offset to shift from" in shift.reasons


def test_node_data_that_is_no_json_object_is_left_out():
    change = plan_jstorm(SPOUT, [node(0, b"[3]")], CLUSTER, Target("latest")).changes[0]
    assert change.left_out and change.action == SKIP and "not a JSON object" in change.reasons[-1]


def test_a_partition_without_a_leader_or_outside_the_static_ones_is_left_out_saying_where_it_starts():
    cluster = {"clicks": {**CLUSTER["clicks"], 2: PartitionLog(4, 10, None)}}
    left = plan_jstorm(SPOUT, NODES, cluster, Target("latest")).changes[2]
    assert left.left_out and left.after_data is None
    assert "names no leader" in left.reasons[0] and "the log end + 1 (LatestTime" in left.reasons[1]
    static = plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest"), static=frozenset({0, 1}))
    assert [c.partition for c in static.changes] == [0, 1]


def test_from_beginning_says_the_write_moves_nothing_the_spout_fetches():
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest"), profile=SpoutProfile(jstorm_from_beginning=True))
    assert any("kafka.fetch.from.beginning" in w and "moves nothing it fetches" in w for w in plan.warnings)
    cost = plan_cost(plan, CLUSTER, MessageRead(), spout=_spout(SpoutProfile(jstorm_from_beginning=True)))
    assert {c.direction for c in cost.changes} == {"none"}


def _spout(profile: SpoutProfile):
    from offctl.core.plans.cost import Spout

    return Spout(profile)


def test_the_cost_counts_from_where_the_spout_fetches():
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest"))
    cost = plan_cost(plan, CLUSTER, MessageRead())
    # partition 0 fetched 4, now 10: skips 4-9; 1 fetched 6: skips 6-9; 2 without a record fetched 11 (log end + 1)
    assert [(c.direction, c.messages) for c in cost.changes] == [("skip", 6), ("skip", 4), ("replay", 0)]
    assert "counted from the stored offset + 1" in cost.changes[0].notes[0]
    assert not cost.changes[2].past_end  # the log end + 1 is where a spout without a record starts, no truncation
    back = plan_cost(plan_jstorm(SPOUT, NODES, CLUSTER, Target("earliest")), CLUSTER, MessageRead())
    assert [(c.direction, c.messages) for c in back.changes] == [("replay", 4), ("replay", 4), ("replay", 6)]


def test_the_read_back_is_the_spouts_own_reading():
    plan = plan_jstorm(SPOUT, NODES[:1], CLUSTER, Target("offset", offset=6), scope=Scope(partitions=frozenset({0})))
    change = plan.changes[0]
    assert verify_jstorm(plan, {change.path: change.after_data}) == []
    assert "holds" in verify_jstorm(plan, {change.path: record(0, 3)})[0]
    odd = replace(change, after_data=b'{"offset":5.0}', after=5)  # bytes that match, but no Long for the spout
    problems = verify_jstorm(replace(plan, changes=(odd,)), {change.path: b'{"offset":5.0}'})
    assert problems == [f"{change.path}: JStorm's spout would not fetch 6 first: offset is 5.0, not an integer"]


def test_a_delete_says_where_the_spout_starts_instead():
    plan = delete_words(plan_delete(SPOUT, NODES, record_topic="clicks", written_by="clicks-topology"))
    assert [(c.partition, c.action) for c in plan.changes] == [(0, "delete"), (1, "delete")]
    assert all("starts it at the log end + 1" in c.reasons[0] for c in plan.changes)


def test_a_backup_keeps_jstorm_nodes_and_the_restore_puts_their_bytes_back(tmp_path):
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest"))
    doc = backup_document(plan, 5)
    assert doc["store"] == JSTORM and doc["zk_root"] == ROOT and doc["consumer"] == "clicks/jstorm"
    backup = parse_backup(json.loads(json.dumps(doc)), tmp_path / "b.json")
    assert [(n.path, n.data, n.jstorm, n.folder_topic) for n in backup.nodes] == [
        (n.path, n.data, True, "clicks") for n in NODES
    ]
    assert backup.absent == (jstorm.node_path(ROOT, SPOUT.consumer, 2),)
    written = [replace(n, data=c.after_data, version=n.version + 1) for n, c in zip(NODES, plan.changes, strict=False)]
    now = [*written, node(2, plan.changes[2].after_data, version=0)]
    restore = plan_restore_zookeeper(SPOUT, backup.nodes, now, CLUSTER, source="b.json", absent=backup.absent)
    assert [(c.partition, c.before, c.after, c.action) for c in restore.changes] == [
        (2, 9, None, "delete"),
        (0, 9, 3, WRITE),
        (1, 9, 5, WRITE),
    ]
    assert [c.after_data for c in restore.changes[1:]] == [n.data for n in NODES]
    assert restore.changes[1].topic == "clicks"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/jstorm/kafka/offset/topic/clicks/other/0", id="another-client-id"),
        pytest.param("/jstorm/kafka/offset/topic/clicks/jstorm/partition_0", id="storm-kafka-name"),
        pytest.param("/jstorm/kafka/offset/topic/clicks/jstorm/0/x", id="below-the-node"),
        pytest.param("/zookeeper/quota", id="elsewhere"),
    ],
)
def test_a_backup_entry_outside_the_spouts_partition_nodes_is_refused(tmp_path, path):
    doc = backup_document(plan_jstorm(SPOUT, NODES[:1], CLUSTER, Target("latest")), 5)
    doc["zookeeper"][0]["path"] = path
    doc["sha256"] = digest(doc)  # a checksum made for the hostile file: the path is refused all the same
    for hand_made in (False, True):
        with pytest.raises(UsageError, match="not a partition node of jstorm /jstorm/kafka/offset/topic/clicks/jstorm"):
            parse_backup(doc, tmp_path / "b.json", hand_made=hand_made)


def test_a_backup_whose_consumer_is_no_topic_and_client_id_is_refused(tmp_path):
    doc = backup_document(plan_jstorm(SPOUT, NODES[:1], CLUSTER, Target("latest")), 5)
    doc["consumer"] = "clicks"
    doc["sha256"] = digest(doc)
    with pytest.raises(UsageError, match="not a JStorm spout's TOPIC/CLIENT_ID"):
        parse_backup(doc, tmp_path / "b.json")


def test_a_hand_made_restore_checks_where_the_spout_would_fetch(tmp_path):
    saved = [node(0, record(0, -1)), node(1, record(1, 10))]  # fetches 0 (log start 0); 11, past the log end
    now = [node(0, record(0, 5)), node(1, record(1, 5))]
    plan = plan_restore_zookeeper(SPOUT, saved, now, CLUSTER, source="f.json", hand_made=True)
    assert [(c.partition, c.after, c.left_out) for c in plan.changes] == [(0, -1, False), (1, None, True)]
    assert plan.changes[1].reasons == (
        "a hand-made file's offset 10 (the spout fetches 11 first) is outside today's log range [2, 10]: not written",
    )


def test_an_offsets_file_gives_where_the_spout_fetches(tmp_path):
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("earliest"))
    doc = {
        **SPOUT.fields(),
        "changes": [
            {"topic": c.topic, "partition": c.partition, "after": c.after, "action": c.action} for c in plan.changes
        ],
    }
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    loaded = load_offsets_file(tmp_path / "plan.json")
    assert loaded.key == SPOUT and loaded.offsets == {("clicks", 0): 0, ("clicks", 1): 2, ("clicks", 2): 4}
    again = plan_jstorm(SPOUT, NODES, CLUSTER, Target("file", offsets=loaded.offsets, source="plan.json"))
    assert [c.after for c in again.changes] == [c.after for c in plan.changes]  # the plan's stored offsets, again
    backup = tmp_path / "backup.json"
    backup.write_text(json.dumps(backup_document(plan, 5)))
    assert load_offsets_file(backup).offsets == {("clicks", 0): 4, ("clicks", 1): 6}  # stored 3 and 5, + 1


def test_the_running_topology_guard_knows_a_jstorm_topology_by_its_name():
    facts = GuardFacts(
        topology_ids=frozenset(),
        running=frozenset({"clicks-topology-3-1700000000", "other-1-1700000000"}),
        topology_names=frozenset({"clicks-topology"}),
        listed_under="/jstorm/topology or /storm/storms",
        kill="jstorm kill NAME, or storm kill NAME",
    )
    running = check_guards(facts, ())[0]
    assert running.status == "refused" and "clicks-topology-3-1700000000 is running" in running.message
    assert "listed under /jstorm/topology" in running.message and "jstorm kill NAME" in running.message
    idle = check_guards(replace(facts, running=frozenset({"other-1-1700000000"})), ())[0]
    assert idle.status == "pass" and "no running topology named clicks-topology" in idle.message


def test_an_unchanged_record_is_not_written():
    plan = plan_jstorm(SPOUT, NODES, CLUSTER, Target("offset", offset=4), scope=Scope(partitions=frozenset({0})))
    assert [(c.partition, c.action) for c in plan.changes] == [(0, UNCHANGED)]


def test_the_backup_entry_keeps_the_exact_bytes():
    doc = backup_document(plan_jstorm(SPOUT, NODES, CLUSTER, Target("latest")), 5)
    assert [base64.b64decode(e["data_base64"]) for e in doc["zookeeper"][:2]] == [n.data for n in NODES]
    assert doc["zookeeper"][2]["absent"] is True and Path(doc["zookeeper"][2]["path"]).name == "2"
