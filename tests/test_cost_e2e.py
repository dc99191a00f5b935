"""What a plan costs, end to end: the real CLI against the real ZooKeeper and broker, with messages produced at
known timestamps (one record per request: Tansu's high watermark is wrong after a batch).

Tansu has no timestamp lookup (`--to time` plans offset 0 there), no DeleteRecords and no compaction: the
clamped, compacted and unread cases are in tests/test_cost.py, on plain data."""

from __future__ import annotations

import re

import pytest

from offctl.core.model import iso_ms
from tests.conftest import storm_record

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

T0 = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z
TOPOLOGY = "orders-topology-1-1700000000"  # storm_record's default


def ts(partition: int, offset: int) -> int:
    """When the test wrote message `offset` of `partition`: a minute apart per partition, a second per offset."""
    return T0 + partition * 60_000 + offset * 1000


@pytest.fixture
def timed(zk, kafka, names, zk_server, broker, tmp_path):
    """A topic of 2 partitions of 5 messages at ts(p, o), an old spout at 2 and 3, an empty Storm root."""
    topic = names("orders")
    kafka.create_topic(topic, 2)
    for p in range(2):
        kafka.produce_records(topic, p, [{"value": b"m%d" % o, "timestamp": ts(p, o)} for o in range(5)])
    root = names.root + "/spouts"
    for p, offset in ((0, 2), (1, 3)):
        zk.create(f"{root}/orders/partition_{p}", storm_record(topic, p, offset), makepath=True)
    zk.ensure_path(names.root + "/storm/storms")

    class Timed:
        pass

    t = Timed()
    t.topic, t.group = topic, names("group")
    t.conn = ["--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", broker.address,
              "--storm-root", names.root + "/storm", "--backup-dir", str(tmp_path / "backups"),
              "--audit-log", str(tmp_path / "audit.log"), "--quiet-period", "0"]
    return t


def costs(doc: dict) -> list[tuple]:
    return [(c["partition"], c["direction"], c["messages"], c["messages_up_to"], c["first_timestamp"],
             c["last_timestamp"], c["span"]) for c in doc["changes"]]


def summed(partitions: int, messages: int, first: int | None, last: int | None) -> dict:
    return {"partitions": partitions, "messages": messages, "messages_up_to": False, "first_timestamp": iso_ms(first),
            "last_timestamp": iso_ms(last), "spans_unknown": 0}


NOTHING = summed(0, 0, None, None)


def test_a_shift_by_one_skips_the_one_message_at_the_old_offset(cli, timed):
    args = ["reset", *timed.conn, "--spout", "orders", "--to", "shift", "--by", "1", "--partitions", "0"]
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
    args = ["reset", *timed.conn, "--group", timed.group, "--topic", timed.topic, "--to", "earliest",
            "--topology-id", TOPOLOGY]
    doc = cli(*args, "-o", "json").json()
    assert costs(doc) == [(0, "replay", 4, False, iso_ms(ts(0, 0)), iso_ms(ts(0, 3)), "full"),
                          (1, "replay", 5, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 4)), "full")]
    assert doc["cost"] == {"replay": summed(2, 9, ts(0, 0), ts(1, 4)), "skip": NOTHING, "no_previous_position": 0}
    table = cli(*args)
    assert (f"cost: replays 9 messages written {iso_ms(ts(0, 0))} to {iso_ms(ts(1, 4))[11:]} on 2 partitions: "
            f"under at-least-once they are processed again (duplicates downstream)") in table.stdout


def test_a_write_states_the_cost_of_its_undo_and_the_restore_plan_states_it_too(cli, timed):
    written = cli("reset", *timed.conn, "--spout", "orders", "--to", "latest", "--partitions", "0", "--execute",
                  "--yes")
    assert written.exit_code == 0, written.stderr
    span = f"{iso_ms(ts(0, 2))} to {iso_ms(ts(0, 4))[11:]}"
    assert f"cost: skips 3 messages written {span}: under at-least-once they are never processed" in written.stdout
    undo = re.search(r"^undo with: (.*)  # (.*)$", written.stdout, re.M)
    assert undo.group(2) == f"replays 3 messages written {span}"
    backup = re.search(r"^backup: (\S+)$", written.stdout, re.M).group(1)
    assert undo.group(1).startswith(f"offctl restore {backup} --execute")

    restore = cli("restore", backup, *timed.conn, "-o", "json")
    assert restore.exit_code == 0, restore.stderr
    assert costs(restore.json()) == [(0, "replay", 3, False, iso_ms(ts(0, 2)), iso_ms(ts(0, 4)), "full")]
    restored = cli("restore", backup, *timed.conn, "--execute", "--yes", "-o", "json").json()
    assert restored["verified"] and restored["cost"]["replay"] == summed(1, 3, ts(0, 2), ts(0, 4))
    # undoing the restore skips the same three messages again
    assert restored["undo_cost"] == {"replay": NOTHING, "skip": summed(1, 3, ts(0, 2), ts(0, 4)),
                                     "no_previous_position": 0}


def test_a_migration_into_a_group_without_commits_counts_from_where_the_new_spout_would_start(cli, timed):
    doc = cli("migrate", *timed.conn, "--spout", "orders", "--group", timed.group, "--topology-id", TOPOLOGY,
              "-o", "json").json()
    # no commit: storm-kafka-client's UNCOMMITTED_EARLIEST starts at the log start, so the old spout's offsets
    # skip what it had processed already
    assert costs(doc) == [(0, "skip", 2, False, iso_ms(ts(0, 0)), iso_ms(ts(0, 1)), "full"),
                          (1, "skip", 3, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 2)), "full")]
    assert all("no commit before: counted from the log start" in c["cost"] for c in doc["changes"])
    assert doc["cost"]["skip"] == summed(2, 5, ts(0, 0), ts(1, 2))


def test_a_record_created_again_counts_from_where_the_spout_starts_without_one(cli, timed):
    deleted = cli("delete", *timed.conn, "--spout", "orders", "--partitions", "1", "--execute", "--yes", "-o", "json")
    assert deleted.exit_code == 0, deleted.stderr
    assert deleted.json()["cost"] is None  # delete reads no Kafka
    doc = cli("restore", deleted.json()["backup"], *timed.conn, "-o", "json").json()
    assert costs(doc) == [(1, "skip", 3, False, iso_ms(ts(1, 0)), iso_ms(ts(1, 2)), "full")]
    assert "no record before: counted from startOffsetTime, the log start" in doc["changes"][0]["cost"]


def test_a_plan_whose_messages_cannot_be_read_gives_counts_and_says_why(cli, timed, monkeypatch):
    from offctl.adapters.kafka import KafkaStore
    from offctl.errors import StoreUnavailable

    def refused(self, positions, **kw):
        raise StoreUnavailable("Kafka at test: a read of messages failed: TOPIC_AUTHORIZATION_FAILED")

    monkeypatch.setattr(KafkaStore, "read_messages", refused)
    result = cli("reset", *timed.conn, "--spout", "orders", "--to", "earliest", "-o", "json")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert costs(doc) == [(0, "replay", 2, False, None, None, "unknown"), (1, "replay", 3, False, None, None, "unknown")]
    assert doc["changes"][0]["cost"].startswith("replays 2 messages, time span unknown (")
    assert "TOPIC_AUTHORIZATION_FAILED" in doc["changes"][0]["cost"]
    assert doc["cost"]["replay"]["spans_unknown"] == 2
