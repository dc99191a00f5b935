"""What a plan costs, end to end: the real CLI against the real ZooKeeper and broker, with messages produced at
known timestamps: a reset to a time (the broker's timestamp lookup), offsets below a log start DeleteRecords moved,
and ranges whose first or last offset the log cleaner compacted away. A read that fails is made up (the adapter
raises); messages without timestamps (message format v0, which Kafka 4 no longer writes) are in tests/unit/test_cost.py,
on plain data."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from offctl.core.records.model import iso_ms
from tests.conftest import T0, compacted_at, compacted_topic
from tests.e2e.seeds import on_each_broker, spout, storm_root

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

TOPOLOGY = "orders-topology-1-1700000000"  # storm_record's default


def ts(partition: int, offset: int) -> int:
    """When the test wrote message `offset` of `partition`: a minute apart per partition, a second per offset."""
    return T0 + partition * 60_000 + offset * 1000


def _timed(zk, kafka, names, zk_server, broker, tmp_path):
    """A topic of 2 partitions of 5 messages at ts(p, o), an old spout at 2 and 3, an empty Storm root."""
    topic = names("orders")
    kafka.create_topic(topic, 2, {"retention.ms": "-1"})  # written T0_DAYS_AGO days ago: kept, not deleted by retention
    for p in range(2):
        kafka.produce_records(topic, p, [{"value": b"m%d" % o, "timestamp": ts(p, o)} for o in range(5)])
    root = names.root + "/spouts"
    spout(zk, root, "orders", topic, {0: 2, 1: 3})
    storm = storm_root(zk, names.root + "/storm")
    conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        storm,
        "--backup-dir",
        str(tmp_path / "backups"),
        "--audit-log",
        str(tmp_path / "audit.log"),
        "--quiet-period",
        "0",
    ]
    return SimpleNamespace(topic=topic, group=names("group"), conn=conn)


timed, timed39 = on_each_broker("timed", _timed)


def costs(doc: dict) -> list[tuple]:
    return [
        (
            c["partition"],
            c["direction"],
            c["messages"],
            c["messages_up_to"],
            c["first_timestamp"],
            c["last_timestamp"],
            c["span"],
        )
        for c in doc["changes"]
    ]


def summed(partitions: int, messages: int, first: int | None, last: int | None) -> dict:
    return {
        "partitions": partitions,
        "messages": messages,
        "messages_up_to": False,
        "first_timestamp": iso_ms(first),
        "last_timestamp": iso_ms(last),
        "spans_unknown": 0,
    }


NOTHING = summed(0, 0, None, None)


def test_a_shift_by_one_skips_the_one_message_at_the_old_offset(cli, timed39):
    args = ["reset", *timed39.conn, "--spout", "orders", "--to", "shift", "--by", "1", "--partitions", "0"]
    table = cli(*args)
    assert table.exit_code == 0, table.stderr
    at = iso_ms(ts(0, 2))
    assert f"cost: skips 1 message written at {at}: under at-least-once it is never processed" in table.stdout
    doc = cli(*args, "-o", "json").json()
    assert costs(doc) == [(0, "skip", 1, False, at, at, "full")]
    assert doc["changes"][0]["cost"] == f"skips 1 message written at {at}"
    assert doc["cost"] == {"replay": NOTHING, "skip": summed(1, 1, ts(0, 2), ts(0, 2)), "no_previous_position": 0}
    assert doc["undo_cost"] is None  # nothing written, nothing to undo


def test_a_group_reset_to_earliest_replays_what_it_processed_with_the_span(cli, kafka, timed):
    kafka.commit(timed.group, timed.topic, {0: 4, 1: 5})
    args = [
        "reset",
        *timed.conn,
        "--group",
        timed.group,
        "--topic",
        timed.topic,
        "--to",
        "earliest",
        "--topology-id",
        TOPOLOGY,
    ]
    doc = cli(*args, "-o", "json").json()
    assert costs(doc) == [
        (0, "replay", 4, False, iso_ms(ts(0, 0)), iso_ms(ts(0, 3)), "full"),
        (1, "replay", 5, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 4)), "full"),
    ]
    assert doc["cost"] == {"replay": summed(2, 9, ts(0, 0), ts(1, 4)), "skip": NOTHING, "no_previous_position": 0}
    table = cli(*args)
    assert (
        f"cost: replays 9 messages written {iso_ms(ts(0, 0))} to {iso_ms(ts(1, 4))[11:]} on 2 partitions: "
        f"under at-least-once they are processed again (duplicates downstream)"
    ) in table.stdout


def test_a_write_states_the_cost_of_its_undo_and_the_restore_plan_states_it_too(cli, timed39):
    written = cli(
        "reset", *timed39.conn, "--spout", "orders", "--to", "latest", "--partitions", "0", "--execute", "--yes"
    )
    assert written.exit_code == 0, written.stderr
    span = f"{iso_ms(ts(0, 2))} to {iso_ms(ts(0, 4))[11:]}"
    assert f"cost: skips 3 messages written {span}: under at-least-once they are never processed" in written.stdout
    undo = re.search(r"^undo with: (.*)  # (.*)$", written.stdout, re.M)
    assert undo.group(2) == f"replays 3 messages written {span}"
    backup = re.search(r"^backup: (\S+)$", written.stdout, re.M).group(1)
    assert undo.group(1).startswith(f"offctl restore {backup} --execute")

    restore = cli("restore", backup, *timed39.conn, "-o", "json")
    assert restore.exit_code == 0, restore.stderr
    assert costs(restore.json()) == [(0, "replay", 3, False, iso_ms(ts(0, 2)), iso_ms(ts(0, 4)), "full")]
    restored = cli("restore", backup, *timed39.conn, "--execute", "--yes", "-o", "json").json()
    assert restored["verified"] and restored["cost"]["replay"] == summed(1, 3, ts(0, 2), ts(0, 4))
    # undoing the restore skips the same three messages again
    assert restored["undo_cost"] == {
        "replay": NOTHING,
        "skip": summed(1, 3, ts(0, 2), ts(0, 4)),
        "no_previous_position": 0,
    }


def test_a_migration_into_a_group_without_commits_counts_from_where_the_new_spout_would_start(cli, timed):
    doc = cli(
        "migrate", *timed.conn, "--spout", "orders", "--group", timed.group, "--topology-id", TOPOLOGY, "-o", "json"
    ).json()
    # no commit: storm-kafka-client's UNCOMMITTED_EARLIEST starts at the log start, so the old spout's offsets
    # skip what it had processed already
    assert costs(doc) == [
        (0, "skip", 2, False, iso_ms(ts(0, 0)), iso_ms(ts(0, 1)), "full"),
        (1, "skip", 3, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 2)), "full"),
    ]
    assert all("no commit before: counted from the log start" in c["cost"] for c in doc["changes"])
    assert doc["cost"]["skip"] == summed(2, 5, ts(0, 0), ts(1, 2))


def test_a_record_created_again_counts_from_where_the_spout_starts_without_one(cli, timed39):
    deleted = cli("delete", *timed39.conn, "--spout", "orders", "--partitions", "1", "--execute", "--yes", "-o", "json")
    assert deleted.exit_code == 0, deleted.stderr
    assert deleted.json()["cost"] is None  # delete reads no Kafka
    doc = cli("restore", deleted.json()["backup"], *timed39.conn, "-o", "json").json()
    assert costs(doc) == [(1, "skip", 3, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 2)), "full")]
    assert "no record before: counted from startOffsetTime, the log start" in doc["changes"][0]["cost"]


def changed(doc: dict) -> list[tuple]:
    return [(c["partition"], c["before"], c["after"], c["cost"]) for c in doc["changes"]]


def test_a_reset_to_a_time_goes_to_the_first_message_written_at_or_after_it(cli, timed39):
    """--to time asks the broker for the first offset whose timestamp is at or after --at (ListOffsets by
    timestamp), and where no message is that late the plan takes the log end, as kafka-consumer-groups does."""
    late = cli("reset", *timed39.conn, "--spout", "orders", "--to", "time", "--at", iso_ms(ts(1, 2)), "-o", "json")
    assert late.exit_code == 0, late.stderr
    doc = late.json()
    assert changed(doc) == [
        (0, 2, 5, f"skips 3 messages written {iso_ms(ts(0, 2))} to {iso_ms(ts(0, 4))[11:]}"),  # none that late
        (1, 3, 2, f"replays 1 message written at {iso_ms(ts(1, 2))}"),
    ]
    assert doc["changes"][0]["reasons"] == [
        f"no message at or after {iso_ms(ts(1, 2))}: log end, as kafka-consumer-groups does"
    ]
    between = cli(
        "reset",
        *timed39.conn,
        "--spout",
        "orders",
        "--to",
        "time",
        "--at",
        str(ts(0, 0) + 500),
        "--partitions",
        "0",
        "-o",
        "json",
    ).json()
    assert changed(between) == [(0, 2, 1, f"replays 1 message written at {iso_ms(ts(0, 1))}")]  # the next one's


def test_nothing_below_a_log_start_delete_records_moved_is_counted(cli, kafka, timed):
    """DeleteRecords up to 3 on partition 0: the spout at 2 moved to the log start skips no message, and a group's
    reset to 1 is clamped to the log start, replaying only what is left."""
    from confluent_kafka import TopicPartition

    (deleted,) = kafka.admin.delete_records([TopicPartition(timed.topic, 0, 3)]).values()
    assert deleted.result(30).low_watermark == 3
    spout = cli("reset", *timed.conn, "--spout", "orders", "--to", "earliest", "--partitions", "0", "-o", "json")
    assert spout.exit_code == 0, spout.stderr
    assert changed(spout.json()) == [
        (0, 2, 3, "skips no message (offset 2 below the log start 3: deleted, not counted)")
    ]
    kafka.commit(timed.group, timed.topic, {0: 4})
    group = cli(
        "reset",
        *timed.conn,
        "--group",
        timed.group,
        "--topic",
        timed.topic,
        "--partitions",
        "0",
        "--to",
        "offset",
        "--offset",
        "1",
        "--topology-id",
        TOPOLOGY,
        "-o",
        "json",
    ).json()
    assert changed(group) == [(0, 4, 3, f"replays 1 message written at {iso_ms(ts(0, 3))}")]
    assert "target 1 is below the log start 3: clamped" in group["changes"][0]["reasons"]


def test_a_range_the_log_cleaner_compacted_counts_up_to_its_offsets_with_the_times_it_can_read(cli, kafka, timed):
    """The compacted topic keeps offsets 1, 2, 4 and 5 of 0-5 (tests/e2e/test_peek.py). A range whose first offset was
    compacted away counts its offsets as an upper bound and its span from the next message; one whose last offset
    was has no time for its last message (a partial span)."""
    topic = compacted_topic(kafka)  # log end 6

    def reset_group(before: int, after: int) -> dict:
        group = f"{timed.group}-{before}-{after}"
        kafka.commit(group, topic, {0: before})
        done = cli(
            "reset",
            *timed.conn,
            "--group",
            group,
            "--topic",
            topic,
            "--to",
            "offset",
            "--offset",
            str(after),
            "--topology-id",
            TOPOLOGY,
            "-o",
            "json",
        )
        assert done.exit_code == 0, done.stderr
        return done.json()

    start_gone = reset_group(6, 3)  # [3, 6): 3 was compacted away, 4 and 5 are left
    four, five = iso_ms(compacted_at(4)), iso_ms(compacted_at(5))
    assert costs(start_gone) == [(0, "replay", 3, True, four, five, "full")]
    assert start_gone["changes"][0]["cost"] == f"replays up to 3 messages written {four} to {five[11:]}"
    end_gone = reset_group(4, 0)  # [0, 4): 0 and 3 were compacted away
    assert costs(end_gone) == [(0, "replay", 4, True, iso_ms(compacted_at(1)), None, "partial")]
    assert "offset 3 holds no message, so the last one's time is not known" in end_gone["changes"][0]["cost"]


def test_a_plan_whose_messages_cannot_be_read_gives_counts_and_says_why(cli, timed39, monkeypatch):
    from offctl.adapters.kafka import KafkaStore
    from offctl.errors import StoreUnavailable

    def refused(self, positions, **kw):
        raise StoreUnavailable("Kafka at test: a read of messages failed: TOPIC_AUTHORIZATION_FAILED")

    monkeypatch.setattr(KafkaStore, "read_messages", refused)
    result = cli("reset", *timed39.conn, "--spout", "orders", "--to", "earliest", "-o", "json")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert costs(doc) == [
        (0, "replay", 2, False, None, None, "unknown"),
        (1, "replay", 3, False, None, None, "unknown"),
    ]
    assert doc["changes"][0]["cost"].startswith("replays 2 messages, time span unknown (")
    assert "TOPIC_AUTHORIZATION_FAILED" in doc["changes"][0]["cost"]
    assert doc["cost"]["replay"]["spans_unknown"] == 2
