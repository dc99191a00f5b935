"""Backup files, offset files for --from-file, and the audit log, with plain data on a temporary disk."""

from __future__ import annotations

import json
import re

import pytest

from offctl.adapters.backup import append_audit, audit_lines, load_backup, write_backup
from offctl.adapters.offsets_file import load_offsets_file
from offctl.core.plans.kafka import plan_kafka
from offctl.core.plans.plan import Change, Plan
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.zookeeper import plan_zookeeper
from offctl.core.records.model import KAFKA, ZOOKEEPER, ConsumerKey, KafkaCommit, PartitionLog, ZkNode
from offctl.core.records.parse import commit_metadata_json
from offctl.errors import UsageError, WriteConflict

SPOUT = ConsumerKey(ZOOKEEPER, "orders", "/spouts")
CLUSTER = {"t": {0: PartitionLog(0, 100), 1: PartitionLog(0, 100)}, "u": {0: PartitionLog(0, 100)}}
ODD = b'{"offset":50, "topic":"t","partition":0,"weird":"\\u00e9\\/"}'  # bytes json.dumps would not give back


def zk_plan():
    nodes = [
        ZkNode("/spouts", "orders", "/spouts/orders/partition_0", 0, None, ODD, 4, 1),
        ZkNode(
            "/spouts", "orders", "/spouts/orders/u/partition_0", 0, "u", b'{"offset":7,"topic":"u","partition":0}', 9, 1
        ),
    ]
    return plan_zookeeper(SPOUT, nodes, CLUSTER, Target("offset", offset=20))


def test_zookeeper_backup_round_trips_exact_bytes_and_versions(tmp_path):
    path = write_backup(zk_plan(), tmp_path / "b", 1_700_000_000_123)
    assert path.name == "20231114T221320123Z-reset-zookeeper-orders.json"
    backup = load_backup(path)
    assert backup.key == SPOUT and backup.operation == "reset"
    assert [(n.path, n.data, n.version, n.folder_topic) for n in backup.nodes] == [
        ("/spouts/orders/partition_0", ODD, 4, None),
        ("/spouts/orders/u/partition_0", b'{"offset":7,"topic":"u","partition":0}', 9, "u"),
    ]
    assert not list(tmp_path.glob("b/*.tmp"))


def test_backups_never_overwrite_each_other(tmp_path):
    first = write_backup(zk_plan(), tmp_path, 5)
    second = write_backup(zk_plan(), tmp_path, 5)
    assert first != second and first.exists() and second.exists()


def test_kafka_backup_keeps_offset_metadata_and_partitions_without_commit(tmp_path):
    meta = commit_metadata_json("orders-1-1700000000")
    plan = plan_kafka("g", [KafkaCommit("g", "t", 0, 50, meta)], CLUSTER, Target("earliest"), scope=Scope({"t": None}))
    backup = load_backup(write_backup(plan, tmp_path, 1))
    assert backup.key == ConsumerKey(KAFKA, "g")
    assert backup.commits == (KafkaCommit("g", "t", 0, 50, meta), ("t", 1))


def test_the_before_image_by_entry_says_none_where_there_was_nothing(tmp_path):
    """What a restore compares the store with first (issue 34): each node or commit as it was, None where the write
    created it."""
    backup = load_backup(write_backup(zk_plan(), tmp_path, 1))
    assert {p: n.data for p, n in backup.before.items()} == {n.path: n.data for n in backup.nodes}
    created = Plan(
        "reset",
        SPOUT,
        "x",
        (Change("t", 1, None, 5, path="/spouts/orders/partition_1", version=-1, after_data=b'{"offset":5}'),),
        0,
    )
    assert load_backup(write_backup(created, tmp_path, 2)).before == {"/spouts/orders/partition_1": None}
    meta = commit_metadata_json("orders-1-1700000000")
    plan = plan_kafka("g", [KafkaCommit("g", "t", 0, 50, meta)], CLUSTER, Target("earliest"), scope=Scope({"t": None}))
    assert load_backup(write_backup(plan, tmp_path, 3)).commits_before == {
        ("t", 0): KafkaCommit("g", "t", 0, 50, meta),
        ("t", 1): None,
    }


def test_zookeeper_backup_keeps_the_after_image(tmp_path):
    """Format 3: the bytes the write leaves and the version it gives each node (issue 27, item 3)."""
    plan = zk_plan()
    doc = json.loads(write_backup(plan, tmp_path, 1).read_text())
    assert doc["offctl_backup"] == 3
    assert [(e["written_version"], e["version"]) for e in doc["zookeeper"]] == [(5, 4), (10, 9)]
    backup = load_backup(tmp_path / next(p.name for p in tmp_path.iterdir()))
    assert {p: (n.data, n.version) for p, n in backup.after.items()} == {
        c.path: (c.after_data, c.version + 1) for c in plan.writes
    }


@pytest.mark.parametrize(
    "entry, kafka, message",
    [
        ({"written_base64": "", "written_version": -1}, None, "written_version '-1' is not a node version"),
        ({"written_base64": ""}, None, "KeyError: 'written_version'"),
        (None, {"group_had_commits": "no"}, "group_had_commits is not true or false"),
        (
            None,
            {"group_had_commits": True, "kafka": [{"topic": "t", "partition": 0, "offset": 1, "written": {}}]},
            "damaged",
        ),
    ],
    ids=["version", "no version", "group_had_commits", "written without offset"],
)
def test_a_damaged_after_image_of_a_signed_backup_is_refused(tmp_path, entry, kafka, message):
    """A hand-made file's after-image is ignored; offctl's own must be whole."""
    if entry is not None:
        doc = {
            "offctl_backup": 3,
            "store": "zookeeper",
            "consumer": "orders",
            "zk_root": "/spouts",
            "zookeeper": [
                {"path": "/spouts/orders/partition_0", "partition": 0, "version": 1, "data_base64": "", **entry}
            ],
        }
    else:
        doc = {"offctl_backup": 3, "store": "kafka", "consumer": "g", "kafka": [], **kafka}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(_signed(doc)))
    with pytest.raises(UsageError, match=message):
        load_backup(path)
    load_backup(path, hand_made=True)


def test_a_delete_leaves_an_absent_after_image(tmp_path):
    from offctl.core.plans.zookeeper import plan_delete

    node = ZkNode("/spouts", "orders", "/spouts/orders/partition_0", 0, None, ODD, 4, 1)
    doc = json.loads(write_backup(plan_delete(SPOUT, [node]), tmp_path, 1).read_text())
    assert [(e["written_base64"], e["written_version"]) for e in doc["zookeeper"]] == [(None, None)]
    assert load_backup(next(tmp_path.iterdir())).after == {node.path: None}


def test_a_format_2_backup_is_read_with_the_after_image_it_implies(tmp_path):
    """Format 2 kept the written bytes of a ZooKeeper write (null for a delete) but no version (the saved one + 1,
    0 for a node it created), and nothing of a Kafka write."""
    from offctl.adapters.backup import digest

    doc = json.loads(write_backup(zk_plan(), tmp_path, 1).read_text())
    for e in doc["zookeeper"]:
        del e["written_version"]
    doc = {**doc, "offctl_backup": 2}
    doc["sha256"] = digest(doc)
    (tmp_path / "two.json").write_text(json.dumps(doc))
    backup = load_backup(tmp_path / "two.json")
    assert backup.format == 2 and [n.version for n in backup.after.values()] == [5, 10]
    plan = plan_kafka(
        "g", [KafkaCommit("g", "t", 0, 50, None)], CLUSTER, Target("earliest"), scope=Scope({"t": None}), plain=True
    )
    kdoc = json.loads(write_backup(plan, tmp_path / "k", 1).read_text())
    kdoc = {k: v for k, v in kdoc.items() if k not in ("group_had_commits", "sha256")}
    kdoc["offctl_backup"] = 2
    kdoc["kafka"] = [{k: v for k, v in e.items() if k != "written"} for e in kdoc["kafka"]]
    kdoc["sha256"] = digest(kdoc)
    (tmp_path / "k2.json").write_text(json.dumps(kdoc))
    kafka = load_backup(tmp_path / "k2.json")
    assert (kafka.commits_after, kafka.group_had_commits) == (None, None)


@pytest.mark.parametrize("commits, had", [([KafkaCommit("g", "t", 0, 50, None)], True), ([], False)])
def test_kafka_backup_keeps_the_after_image_and_whether_the_group_had_commits(tmp_path, commits, had):
    plan = plan_kafka("g", commits, CLUSTER, Target("offset", offset=7), scope=Scope({"t": None}), plain=True)
    doc = json.loads(write_backup(plan, tmp_path, 1).read_text())
    assert doc["group_had_commits"] is had
    assert [e["written"] for e in doc["kafka"]] == [{"offset": 7, "metadata": None}] * 2
    backup = load_backup(next(tmp_path.iterdir()))
    assert backup.commits_after == {
        ("t", 0): KafkaCommit("g", "t", 0, 7, None),
        ("t", 1): KafkaCommit("g", "t", 1, 7, None),
    }
    assert backup.group_had_commits is had
    assert load_backup(next(tmp_path.iterdir()), hand_made=True).commits_after is None  # not trusted


def test_unwritable_backup_dir_is_a_write_failure_before_anything_is_changed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WriteConflict, match="nothing was changed"):
        write_backup(zk_plan(), blocker / "sub", 1)


def _signed(doc: dict) -> dict:
    from offctl.adapters.backup import digest

    return {**doc, "sha256": digest(doc)}


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"offctl_backup": 99}, r"unknown format \(offctl_backup 99\); offctl reads formats 1, 2 and 3"),
        # numbers offctl never writes, though Python's == takes 2.0 and true for 2 and 1
        ({"offctl_backup": 2.0}, r"unknown format \(offctl_backup 2.0\)"),
        ({"offctl_backup": 1.0}, r"unknown format \(offctl_backup 1.0\)"),
        ({"offctl_backup": True}, r"unknown format \(offctl_backup true\)"),
        ({"offctl_backup": "2"}, r'unknown format \(offctl_backup "2"\)'),
        ({"offctl_backup": None}, r"unknown format \(offctl_backup null\)"),
        ({"store": "kafka", "consumer": "g", "kafka": []}, r"unknown format \(offctl_backup missing\)"),
        (
            _signed(
                {
                    "offctl_backup": 2,
                    "store": "zookeeper",
                    "consumer": "orders",
                    "zk_root": "/spouts",
                    "zookeeper": [
                        {"path": "/spouts/orders/partition_0", "partition": 0, "version": "1", "data_base64": ""}
                    ],
                }
            ),
            "version '1' is not a node version",
        ),
        ({"offctl_backup": 1, "store": "zookeeper", "consumer": "orders"}, "no zk_root"),
        ({"offctl_backup": 1, "store": "kafka", "consumer": "g", "kafka": [{"topic": "t"}]}, "damaged"),
        (
            {
                "offctl_backup": 1,
                "store": "zookeeper",
                "consumer": "orders",
                "zk_root": "/spouts",
                "zookeeper": [{"path": "/elsewhere/partition_0", "partition": 0, "version": 1, "data_base64": ""}],
            },
            "damaged",
        ),
        (
            {
                "offctl_backup": 1,
                "store": "zookeeper",
                "consumer": "orders",
                "zk_root": "/spouts",
                "zookeeper": [
                    {"path": "/spouts/orders/partition_0", "partition": 0, "version": 1, "data_base64": "%%%"}
                ],
            },
            "damaged",
        ),
    ],
)
def test_damaged_backups_are_usage_errors(tmp_path, doc, message):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=message):
        load_backup(path, hand_made=True)
    with pytest.raises(UsageError):  # and without --hand-made, the checksum (or format) refuses it first
        load_backup(path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["zookeeper"][0].update(version=d["zookeeper"][0]["version"] + 1),
        lambda d: d["zookeeper"][0].update(data_base64="eyJvZmZzZXQiOjk5OX0="),  # {"offset":999}
        lambda d: d.update(consumer="other"),
        lambda d: d.pop("sha256"),
        lambda d: d.update(offctl_backup=1),
    ],
    ids=["version", "bytes", "consumer", "no checksum", "older format"],
)
def test_an_edited_backup_fails_its_checksum_and_names_the_file(tmp_path, edit):
    path = write_backup(zk_plan(), tmp_path, 5)
    assert load_backup(path).nodes  # as written: the checksum holds
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(UsageError, match=f"{re.escape(str(path))} is not a usable offctl backup: .*--hand-made"):
        load_backup(path)
    if doc.get("consumer") == "orders":
        load_backup(path, hand_made=True)  # a file edited on purpose is read (the planner checks it)
    else:
        with pytest.raises(UsageError, match="is not a partition node of"):  # paths of another spout
            load_backup(path, hand_made=True)


def test_missing_or_non_json_backup(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_backup(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(UsageError, match="not a JSON object"):
        load_backup(tmp_path / "x.json")


# --- --from-file ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, key, offsets",
    [
        ("t,0,5\nt,1,6\n", None, {("t", 0): 5, ("t", 1): 6}),
        ("topic,partition,offset\nt,0,5\n\n", None, {("t", 0): 5}),
        ("g,t,0,5\ng,t,1,6\n", ConsumerKey(KAFKA, "g"), {("t", 0): 5, ("t", 1): 6}),
    ],
)
def test_kafka_consumer_groups_csv(tmp_path, text, key, offsets):
    path = tmp_path / "o.csv"
    path.write_text(text)
    loaded = load_offsets_file(path)
    assert (loaded.key, loaded.offsets, loaded.kind) == (key, offsets, "csv")


@pytest.mark.parametrize(
    "text, message",
    [
        ("t,0\n", "line 1"),
        ("t,x,5\n", "line 1"),
        ("t,0,-5\n", "line 1"),
        ("", "no offsets"),
        ("t,0,5\ng,t,0,5\n", "some lines have a group column"),
    ],
)
def test_bad_csv(tmp_path, text, message):
    path = tmp_path / "o.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_offsets_file(path)


def test_plan_and_backup_files_give_offsets(tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(
        json.dumps(
            {
                "store": "kafka",
                "consumer": "g",
                "changes": [
                    {"topic": "t", "partition": 0, "after": 9, "action": "write"},
                    {"topic": "t", "partition": 1, "after": None, "action": "skip"},
                ],
            }
        )
    )
    loaded = load_offsets_file(plan_file)
    assert (loaded.key, loaded.offsets, loaded.kind) == (ConsumerKey(KAFKA, "g"), {("t", 0): 9}, "plan")
    backup = load_offsets_file(write_backup(zk_plan(), tmp_path / "b", 1))
    assert (backup.key, backup.offsets) == (SPOUT, {("t", 0): 50, ("u", 0): 7})


def test_audit_log_appends_one_json_line_per_change(tmp_path):
    plan = zk_plan()
    log = tmp_path / "state" / "audit.log"
    append_audit(log, audit_lines(plan, plan.writes, tmp_path / "b.json", 0, "zookeeper z:1"))
    append_audit(log, audit_lines(plan, plan.writes[:1], tmp_path / "c.json", 0, "zookeeper z:1"))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["path"], e["before"], e["after"], e["backup"][-6:]) for e in lines] == [
        ("/spouts/orders/partition_0", 50, 20, "b.json"),
        ("/spouts/orders/u/partition_0", 7, 20, "b.json"),
        ("/spouts/orders/partition_0", 50, 20, "c.json"),
    ]
    assert {"time", "who", "host", "server", "operation", "target"} <= set(lines[0])


def test_a_multi_group_csv_keeps_each_groups_rows(tmp_path):
    """kafka-consumer-groups --export with several --group writes group,topic,partition,offset."""
    path = tmp_path / "o.csv"
    path.write_text("g,t,0,5\nh,t,0,7\nh,u,1,9\n")
    loaded = load_offsets_file(path)
    assert loaded.key is None and loaded.offsets == {}
    assert loaded.for_group("h") == {("t", 0): 7, ("u", 1): 9} and loaded.for_group("x") == {}
    path.write_text("group,topic,partition,offset\ng,t,0,5\n")
    one = load_offsets_file(path)
    assert one.key.consumer == "g" and one.offsets == {("t", 0): 5} and one.for_group("g") == {("t", 0): 5}


def test_the_after_image_is_rewritten_as_the_broker_kept_it(tmp_path):
    """A broker that drops commit metadata leaves commits other than those sent: the backup's after-image
    becomes what the write left, checksum and all, so its undo compares the group with that."""
    from offctl.adapters.backup import record_read_back

    changes = (
        Change("t", 0, 3, 5, before_metadata="m0", after_metadata='{"topologyId":"x"}'),
        Change("t", 1, 3, 6, before_metadata="m1", after_metadata='{"topologyId":"x"}'),
    )
    plan = Plan("reset", ConsumerKey(KAFKA, "g"), "to 5", changes, 0, group_had_commits=True)
    path = write_backup(plan, tmp_path, 1_700_000_000_000)
    record_read_back(path, {("t", 0): (5, "")})
    backup = load_backup(path)  # the checksum holds
    assert backup.commits_after[("t", 0)] == KafkaCommit("g", "t", 0, 5, "")
    assert backup.commits_after[("t", 1)] == KafkaCommit("g", "t", 1, 6, '{"topologyId":"x"}')
    assert [e.get("written_read_back") for e in json.loads(path.read_text())["kafka"]] == [True, None]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left beside it
