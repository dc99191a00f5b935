"""What each release's spout does with what is stored, end to end: records seeded byte for byte as the named
Storm release writes them into the real ZooKeeper, groups on the real broker, read through the real CLI.

Case ids and comments name the Storm source file and tag each expectation follows (docs/storm.md)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import storm_record
from tests.e2e import seeds

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

RUNNING_ID = "orders-topology-7-1700000000"


def _world(zk, kafka, broker, names):
    """A topic of 4 partitions of 5 messages, a Storm root where RUNNING_ID runs, and how to seed records."""
    topic = kafka.filled_topic(names("orders"), 4, 5)  # log end 5 everywhere, log start 0 until a test deletes records
    storm_root = seeds.storm_root(zk, names.root + "-storm", RUNNING_ID)

    def put(path: str, data: bytes) -> None:
        zk.create(f"{names.root}/{path}", data, makepath=True)

    def record(partition: int, offset: int, **kw) -> bytes:
        return storm_record(
            kw.pop("topic", topic), partition, offset, topology_id=RUNNING_ID, broker=broker.address, **kw
        )

    return {
        "topic": topic,
        "root": names.root,
        "storm_root": storm_root,
        "put": put,
        "record": record,
        "broker": broker.address,
        "names": names,
    }


world, world39 = seeds.on_each_broker("world", _world)


def inspect(cli, zk_server, world, *extra):
    result = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        world["root"],
        "--bootstrap-servers",
        world["broker"],
        "--storm-root",
        world["storm_root"],
        "--output",
        "json",
        *extra,
    )
    assert result.exit_code in (0, 1), result.stderr
    return result.json()


def rows_of(doc, consumer):
    return {r["partition"]: r for r in doc["partitions"] if r["consumer"] == consumer}


def findings_of(doc, consumer):
    return sorted((f["code"], f["topic"], f["partition"]) for f in doc["findings"] if f["consumer"] == consumer)


# (case id naming the source, records under <root>/<spout>/, extra flags, expected per partition
#  (used, lag), expected findings)
CASES = [
    (
        "PartitionManager.commit@v1.2.4 as written: used",
        lambda w: {0: w["record"](0, 3), 1: w["record"](1, 5)},
        (),
        {0: (True, 2), 1: (True, 0)},
        [],
    ),
    (
        "PartitionManager.commit@v0.9.2-incubating (same bytes) under 0.9.2 defaults: maxOffsetBehind 100000",
        lambda w: {0: w["record"](0, 3), 1: w["record"](1, 5)},
        ("--storm-kafka-release", "0.9.2"),
        {0: (True, 2), 1: (True, 0)},
        [],
    ),
    (
        "PartitionManager@v1.2.4: no topology object -> unusable, starts from startOffsetTime",
        lambda w: {0: b'{"offset":3,"partition":0,"topic":"%s"}' % w["topic"].encode(), 1: w["record"](1, 5)},
        (),
        {0: (False, 5), 1: (True, 0)},
        [("MALFORMED_RECORD", 0)],
    ),  # lag from startOffsetTime: the log start, 0
    (
        "PartitionManager@v1.2.4: no topic, partition field disagrees -> used for the node's partition",
        lambda w: {
            0: b'{"topology":{"id":"%s","name":"orders-topology"},"offset":3,"partition":3}' % RUNNING_ID.encode(),
            1: w["record"](1, 5),
        },
        (),
        {0: (True, 2), 1: (True, 0)},
        [("INCONSISTENT_RECORD", 0)],
    ),
    (
        "json-simple@v1.2.4: NaN is not JSON to Storm",
        lambda w: {0: b'{"topology":{"id":"%s","name":"x"},"offset":NaN}' % RUNNING_ID.encode(), 1: w["record"](1, 5)},
        (),
        {0: (False, 5), 1: (True, 0)},
        [("MALFORMED_RECORD", 0)],
    ),
    (
        "PartitionManager.fill@v1.2.4: above the log end the spout waits",
        lambda w: {0: w["record"](0, 9), 1: w["record"](1, 5)},
        (),
        {0: (True, None), 1: (True, 0)},
        [("OFFSET_ABOVE_LOG_END", 0)],
    ),
    (
        "PartitionManager@v1.2.4: a stored 0 is replaced",
        lambda w: {0: w["record"](0, 0), 1: w["record"](1, 5)},
        (),
        {0: (True, 5), 1: (True, 0)},
        [("IGNORED_ZERO_OFFSET", 0)],
    ),  # the spout replays from startOffsetTime (the log start, 0): lag 5, not none
    (
        "StaticCoordinator@v1.2.4: only the declared partitions are read",
        lambda w: {0: w["record"](0, 3), 3: w["record"](3, 5)},
        ("--static-partitions", "{spout}=0-1"),
        {0: (True, 2), 3: (True, None)},
        [("MISSING_PARTITION", 1), ("UNREAD_PARTITION", 3)],
    ),
]


@pytest.mark.parametrize("name, records, extra, rows, findings", CASES, ids=[c[0] for c in CASES])
def test_each_release_record_is_read_as_storm_reads_it(cli, zk_server, world39, name, records, extra, rows, findings):
    spout = world39["names"]("spout")
    for partition, data in records(world39).items():
        world39["put"](f"{spout}/partition_{partition}", data)
    doc = inspect(cli, zk_server, world39, "--spout", spout, *(e.format(spout=spout) for e in extra))
    got = rows_of(doc, spout)
    assert {p: (r["used"], r["lag"]) for p, r in got.items()} == rows
    codes = [(c, p) for c, _, p in findings_of(doc, spout)]
    # partitions the spout has no record of are MISSING_PARTITION unless the case declared static partitions
    if "--static-partitions" not in extra:
        codes = [(c, p) for c, p in codes if c != "MISSING_PARTITION"]
    assert codes == sorted(findings)


def test_out_of_range_message_follows_the_release_given(cli, zk_server, world39):
    spout = world39["names"]("spout")
    world39["put"](f"{spout}/partition_0", world39["record"](0, 9))
    old = inspect(cli, zk_server, world39, "--spout", spout, "--storm-kafka-release", "0.9.6")
    new = inspect(cli, zk_server, world39, "--spout", spout)
    (old_f,) = [f for f in old["findings"] if f["code"] == "OFFSET_ABOVE_LOG_END"]
    (new_f,) = [f for f in new["findings"] if f["code"] == "OFFSET_ABOVE_LOG_END"]
    assert "the spout jumps to the log end" in old_f["message"] and "v0.9.6" in old_f["message"]
    assert "emits nothing from this partition until the log end reaches 9" in new_f["message"]
    assert "storm-kafka 0.9.3-0.9.7" in old["spout_settings"] and "storm-kafka 1.1.0-1.2.4" in new["spout_settings"]


def test_below_a_log_start_delete_records_moved_the_spout_goes_where_the_release_given_says(
    cli, zk_server, world39, kafka39
):
    """DeleteRecords up to 3 on partition 0 leaves the record at 1 below the log start: storm-kafka's fetch is out of
    range and PartitionManager.fill goes to startOffsetTime, EarliestTime from 0.10.0 on (the log start) and, in
    0.9.3-0.9.7 with forceFromStart false, LatestTime (the log end)."""
    from confluent_kafka import TopicPartition

    (deleted,) = kafka39.admin.delete_records([TopicPartition(world39["topic"], 0, 3)]).values()
    assert deleted.result(30).low_watermark == 3
    spout = world39["names"]("spout")
    world39["put"](f"{spout}/partition_0", world39["record"](0, 1))
    world39["put"](f"{spout}/partition_1", world39["record"](1, 5))
    topic = world39["topic"]
    for release, where in (
        ("1.2.4", "the spout jumps to the log start (3; EarliestTime, PartitionManager.fill, v1.2.4)"),
        (
            "0.9.6",
            "the spout jumps to the log end (LatestTime: forceFromStart is false) (5) (PartitionManager.fill, v0.9.6)",
        ),
    ):
        doc = inspect(cli, zk_server, world39, "--spout", spout, "--storm-kafka-release", release)
        rows = rows_of(doc, spout)
        assert {p: (r["used"], r["log_start"], r["log_end"]) for p, r in rows.items()} == {
            0: (True, 3, 5),
            1: (True, 0, 5),
        }
        (below,) = [f for f in doc["findings"] if f["code"] == "OFFSET_BELOW_LOG_START"]
        assert (below["partition"], below["severity"]) == (0, "error")
        assert below["message"] == (
            f"{topic}/0 resumes at 1 < log start 3: 2 messages (offsets 1 to 2) were deleted before the spout read "
            f"them; {where}"
        )


def test_a_record_of_another_topic_gets_the_lag_of_the_partition_it_is_applied_to(cli, zk_server, world39, kafka39):
    spout, other = world39["names"]("spout"), world39["names"]("payments")
    kafka39.create_topic(other, 4)
    world39["put"](f"{spout}/partition_0", world39["record"](0, 3))
    world39["put"](f"{spout}/partition_1", world39["record"](1, 4))
    world39["put"](f"{spout}/partition_2", world39["record"](2, 1, topic=other))  # payments' log end is 0
    doc = inspect(cli, zk_server, world39, "--spout", spout)
    row = rows_of(doc, spout)[2]
    assert (row["topic"], row["record_topic"], row["log_end"], row["lag"]) == (world39["topic"], other, 5, 4)
    assert ("TOPIC_MISMATCH", world39["topic"], 2) in findings_of(doc, spout)


def test_a_tie_is_the_same_report_after_rewriting_the_same_bytes(cli, zk_server, world39, zk):
    """A reset and a restore of the very same bytes change only versions and mtimes."""
    spout, other = world39["names"]("spout"), world39["names"]("payments")
    a, b = world39["record"](0, 3), world39["record"](1, 3, topic=other)
    world39["put"](f"{spout}/partition_0", a)
    world39["put"](f"{spout}/partition_1", b)
    first = inspect(cli, zk_server, world39, "--spout", spout)
    zk.set(f"{world39['root']}/{spout}/partition_0", a)  # newest write now on the other side of the tie
    second = inspect(cli, zk_server, world39, "--spout", spout)
    assert first["findings"] == second["findings"]
    (tie,) = [f for f in first["findings"] if f["code"] == "TOPIC_MISMATCH"]
    assert "2 topics equally often" in tie["message"] and tie["partition"] is None


def test_spout_ids_with_slashes_and_the_wildcard_layout(cli, zk_server, world39):
    """committedPath = zkRoot + "/" + id + "/" + Partition.getId(), and PartitionManager finds a record by that
    path alone, never by its topic field (PartitionManager, Partition.java@v1.2.4): <root>/a/b/partition_N is
    id 'a' reading topic 'b' where the cluster has topic 'b' (a wildcard spout writes folders of the topics
    DynamicBrokersReader lists), said when no record of b/ names 'b'; a folder the cluster has no topic for,
    whose records name another topic, is part of the id; --spout a/b reads id 'a/b'."""
    team = world39["names"]("team")
    topic, root = world39["topic"], world39["root"]
    world39["put"](f"{team}/ingest/partition_0", world39["record"](0, 3))  # no topic 'ingest': id '<team>/ingest'
    world39["put"](f"{team}/ingest/partition_1", world39["record"](1, 3))
    world39["put"](f"{team}/{topic}/partition_0", world39["record"](0, 4))  # wildcard: id '<team>', folder = topic
    world39["put"](f"{team}/deep/er/partition_0", world39["record"](0, 2))  # id '<team>/deep/er'
    world39["put"](f"{team}/in gest/partition_0", world39["record"](0, 1))  # no topic is named so: id '<team>/in gest'
    world39["put"](f"{team}/quiet/partition_0", b'{"topology":{"id":"%s","name":"x"},"offset":2}' % RUNNING_ID.encode())
    doc = inspect(cli, zk_server, world39)
    consumers = {c["consumer"] for c in doc["consumers"] if c["consumer"].startswith(team)}
    assert consumers == {f"{team}/ingest", team, f"{team}/deep/er", f"{team}/in gest"}
    assert rows_of(doc, f"{team}/ingest")[0]["lag"] == 2
    ambiguous = [f for f in doc["findings"] if f["code"] == "AMBIGUOUS_SPOUT_ID"]
    assert [f["path"] for f in ambiguous] == [f"{root}/{team}/quiet"]
    assert ambiguous[0]["message"].endswith("its records name no topic")
    named = inspect(cli, zk_server, world39, "--spout", f"{team}/quiet")  # the user says which
    assert [c["consumer"] for c in named["consumers"]] == [f"{team}/quiet"]
    assert not [f for f in named["findings"] if f["code"] in ("AMBIGUOUS_SPOUT_ID", "CONSUMER_NOT_FOUND")]


def test_all_groups_lists_the_cluster_and_keeps_named_and_storm_groups(cli, world, kafka):
    """--all-groups keeps the groups whose commits carry Storm metadata (the broker keeps a commit's metadata) and
    those named, and leaves out a group without it; Storm metadata of either release: on plain data,
    test_read_snapshot.py::test_all_groups_keeps_the_groups_storm_wrote_and_those_named."""
    names = world["names"]
    storm, plain, named = names("storm-group"), names("plain-group"), names("named-group")
    kafka.commit(storm, world["topic"], {0: 2}, metadata='{"topologyId":"%s","taskId":1,"threadName":"t"}' % RUNNING_ID)
    kafka.commit(plain, world["topic"], {0: 2})
    kafka.commit(named, world["topic"], {1: 2})
    result = cli(
        "inspect", "--bootstrap-servers", world["broker"], "--all-groups", "--group", named, "--output", "json"
    )
    assert result.exit_code in (0, 1), result.stderr
    doc = result.json()
    groups = {c["consumer"] for c in doc["consumers"]}
    assert named in groups and storm in groups and plain not in groups
    note = next(n for n in doc["notes"] if n.startswith("--all-groups:"))
    kept, listed = map(int, re.match(r"--all-groups: (\d+) of (\d+) other groups", note).groups())
    assert kept == len(groups - {named}) and listed >= 2  # every group the cluster has, named ones aside


def test_a_named_group_or_spout_that_does_not_exist_fails_the_run(cli, zk_server, world):
    typo = world["names"]("typo")
    result = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        world["root"],
        "--spout",
        typo,
        "--bootstrap-servers",
        world["broker"],
        "--group",
        typo,
        "--output",
        "json",
    )
    assert result.exit_code == 1
    assert sorted(f["code"] for f in result.json()["findings"]) == ["CONSUMER_NOT_FOUND"] * 2


def test_every_node_under_a_spout_is_read_or_reported(cli, zk_server, world39):
    """Partition.getId() writes "partition_" + an int (Partition.java@v1.2.4): other names are never read."""
    spout = world39["names"]("spout")
    world39["put"](f"{spout}/partition_1", world39["record"](1, 3))
    for odd in ("partition_01", "partition_2147483648", "partition_-1", "junk"):
        world39["put"](f"{spout}/{odd}", world39["record"](1, 4))
    doc = inspect(cli, zk_server, world39, "--spout", spout)
    assert [r["partition"] for r in doc["partitions"]] == [1]  # partition_01 is not read as partition 1
    unread = sorted(f["path"].rsplit("/", 1)[1] for f in doc["findings"] if f["code"] == "UNREAD_NODE")
    assert unread == ["junk", "partition_-1", "partition_01", "partition_2147483648"]
