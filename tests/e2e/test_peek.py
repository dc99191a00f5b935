"""offctl peek: the pure part on plain data (previews, selection, what is at an offset), then end to end against
the real ZooKeeper and broker, with messages produced at known timestamps, keys and headers: `deleted` below a log
start that DeleteRecords moved, and `gap` where the log cleaner compacted records away and at a transaction's commit
marker."""

from __future__ import annotations

import hashlib
import json

import pytest

from offctl.core.records.messages import DELETED, GAP, MESSAGE, NOT_WRITTEN
from offctl.core.records.model import ConsumerKey, LogMessage, MessageRead, OffsetRecord, PartitionRow, iso_ms
from offctl.core.records.peeked import peeked, positions, preview, selected
from offctl.faces.sandbox import client_trident_meta
from offctl.render.peek import peeked_dict
from tests.conftest import T0, committed_transaction, compacted_at, compacted_topic, storm_record


@pytest.mark.parametrize(
    "data, shown",
    [
        (None, "null"),
        (b"", "(empty)"),
        (b"order-1042", "order-1042"),
        (b"line one\nline two\ttab", "line one\\nline two\\ttab"),
        (
            b"\x1b[31mred\x1b[0m and more plain text here to stay text",
            "\\x1b[31mred\\x1b[0m and more plain text here to stay text",
        ),
        ("caf\u00e9 \u200b zero width".encode(), "caf\u00e9 \\u200b zero width"),
        (b"\x00\x01\x02\xff\xfe", "hex:000102fffe"),
        (b"\x00\x01\x02abc", "hex:000102616263"),  # mostly control characters: hex, not a wall of escapes
        (b"a" * 100, "a" * 80 + "..."),
        (bytes(range(100)), "hex:" + bytes(range(40)).hex() + "..."),
    ],
    ids=[
        "null",
        "empty",
        "text",
        "newline-tab",
        "ansi-escape",
        "unicode-format-char",
        "binary",
        "mostly-control",
        "long-text",
        "long-binary",
    ],
)
def test_a_preview_never_lets_raw_control_characters_through(data, shown):
    assert preview(data) == shown
    assert all(ch.isprintable() for ch in preview(data))


K = ConsumerKey("zookeeper", "s", "/r")


def row(
    partition: int, committed: int | None, lag: int | None, start: int = 10, end: int = 20, malformed: str | None = None
) -> PartitionRow:
    return PartitionRow(OffsetRecord(K, partition, "t", committed, malformed=malformed), start, end, lag, None, "t")


def msg(offset: int) -> LogMessage:
    return LogMessage("t", 0, offset, 1_000, "CreateTime", b"k", b"v", (("h", b"\x00"),))


def test_by_default_the_partitions_not_caught_up_and_only_offsets_a_log_can_hold_are_read():
    rows = [row(0, 20, 0), row(1, 15, 5), row(2, 5, None), row(3, 25, None), row(4, None, None, malformed="not JSON")]
    assert [r.record.partition for r in selected(rows, None)] == [1, 2, 3, 4]
    assert [r.record.partition for r in selected(rows, frozenset({0, 3}))] == [0, 3]
    assert positions(selected(rows, None)) == [("t", 1, 15)]  # 5 is below the log start, 25 past its end


def test_what_each_partition_shows():
    rows = [row(0, 12, 8), row(0, 14, 6), row(0, 5, None), row(0, 25, None), row(0, None, None, malformed="not JSON")]
    read = MessageRead({("t", 0, 12): (msg(12),), ("t", 0, 14): (msg(17),)})
    docs = [peeked_dict(p, 61_000) for p in peeked(rows, read)]
    assert [(d["state"], d["offset"], d["next_offset"]) for d in docs] == [
        (MESSAGE, 12, None),
        (GAP, 14, 17),
        (DELETED, 5, None),
        (NOT_WRITTEN, 25, None),
        ("unread", None, None),
    ]
    assert "the next one is at 17" in docs[1]["why"] and "deleted by retention" in docs[2]["why"]
    assert "unusable (not JSON)" in docs[4]["why"]
    m = docs[0]["messages"][0]
    assert (m["timestamp"], m["age_ms"], m["key"], m["value_sha256"], m["headers"]) == (
        iso_ms(1_000),
        60_000,
        "k",
        hashlib.sha256(b"v").hexdigest(),
        [{"key": "h", "value": "hex:00", "size": 1}],
    )


# --- end to end ----------------------------------------------------------------------------------------------

KEPT = {"retention.ms": "-1"}  # messages written T0_DAYS_AGO days ago: a broker deletes what is older than retention.ms
POISON = b'{"amount": 1, "note": "\x1b[2J\x00\xff"}'


@pytest.fixture
def stuck(zk, kafka, names, zk_server, broker):
    """A topic of 2 partitions of 4 messages (partition 0, offset 2: a poison message with a key and headers), an
    old spout at 2 and 4 (caught up on partition 1), a group at 1 and 4, a storm-kafka-client Trident state."""
    topic = names("pay")
    kafka.create_topic(topic, 2, KEPT)
    for p in range(2):
        kafka.produce_records(
            topic,
            p,
            [
                {
                    "key": b"order-1042",
                    "value": POISON,
                    "timestamp": T0 + o * 1000,
                    "headers": [("trace", b"\x8f\x01"), ("none", None)],
                }
                if (p, o) == (0, 2)
                else {"value": b"m%d" % o, "timestamp": T0 + o * 1000}
                for o in range(4)
            ],
        )
    root = names.root + "/spouts"
    for p, offset in ((0, 2), (1, 4)):
        zk.create(f"{root}/pay/partition_{p}", storm_record(topic, p, offset), makepath=True)
    group = names("group")
    kafka.commit(group, topic, {0: 1, 1: 4})
    troot = names.root + "/transactional"
    zk.create(f"{troot}/cl/user/{topic}@0/5", client_trident_meta(0, 2, "t-1-1700000000"), makepath=True)
    zk.create(f"{troot}/cl/coordinator/currtx", b"6", makepath=True)  # one past the last acked txid

    class Stuck:
        pass

    s = Stuck()
    s.topic, s.group = topic, group
    s.conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--trident-root",
        troot,
        "--storm-root",
        names.root + "/storm",
    ]
    return s


def _parts(doc: dict) -> dict:
    return {(p["store"], p["consumer"], p["partition"]): p for p in doc["partitions"]}


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_shows_the_message_each_consumer_resumes_at(cli, stuck):
    doc = cli("peek", *stuck.conn, "--spout", "pay", "--group", stuck.group, "--trident", "cl", "-o", "json").json()
    parts = _parts(doc)
    # by default only the partitions not caught up: the spout's partition 1 (at the log end) is left out
    assert set(parts) == {("zookeeper", "pay", 0), ("kafka", stuck.group, 0), ("trident", "cl", 0)}
    spout = parts[("zookeeper", "pay", 0)]
    assert (spout["offset"], spout["state"], spout["lag"], spout["log_end"]) == (2, "message", 2, 4)
    (m,) = spout["messages"]
    assert (m["offset"], m["timestamp"], m["timestamp_type"], m["key"], m["key_size"], m["value_size"]) == (
        2,
        iso_ms(T0 + 2000),
        "CreateTime",
        "order-1042",
        10,
        len(POISON),
    )
    assert m["value"].startswith("hex:") and m["value_sha256"] == hashlib.sha256(POISON).hexdigest()
    assert m["headers"] == [
        {"key": "trace", "value": "hex:8f01", "size": 2},
        {"key": "none", "value": "null", "size": None},
    ]
    assert [x["offset"] for x in parts[("kafka", stuck.group, 0)]["messages"]] == [1]
    trident = parts[("trident", "cl", 0)]  # storm-kafka-client Trident: resumes at lastOffset + 1
    assert (trident["offset"], trident["messages"][0]["offset"]) == (3, 3)


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_count_partitions_and_the_log_end(cli, stuck):
    doc = cli("peek", *stuck.conn, "--spout", "pay", "--count", "5", "--partitions", "0-1", "-o", "json").json()
    parts = _parts(doc)
    assert [x["offset"] for x in parts[("zookeeper", "pay", 0)]["messages"]] == [2, 3]  # the log ends at 4
    end = parts[("zookeeper", "pay", 1)]
    assert (end["state"], end["messages"]) == ("not-written", []) and "not yet written" in end["why"]
    table = cli("peek", *stuck.conn, "--spout", "pay")
    assert table.exit_code == 0, table.stderr
    assert "order-1042" in table.stdout and "\x1b" not in table.stdout and "\\x1b" not in table.stdout  # hex
    assert "CreateTime" in table.stdout


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_saves_the_exact_bytes_with_a_manifest_and_never_overwrites(cli, stuck, tmp_path):
    out = tmp_path / "poison"
    done = cli("peek", *stuck.conn, "--spout", "pay", "--save", str(out), "-o", "json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["saved"] == str(out)
    manifest = json.loads((out / "manifest.json").read_text())
    # --trident-root on the command line lists its Trident spouts too (as inspect does): the spout's entry
    (entry,) = [e for e in manifest["messages"] if e["store"] == "zookeeper"]
    assert (entry["topic"], entry["partition"], entry["offset"], entry["timestamp_ms"]) == (
        stuck.topic,
        0,
        2,
        T0 + 2000,
    )
    assert (out / entry["value"]["file"]).read_bytes() == POISON
    assert (out / entry["key"]["file"]).read_bytes() == b"order-1042"
    assert entry["value"]["sha256"] == hashlib.sha256(POISON).hexdigest()
    headers = json.loads((out / entry["headers"]["file"]).read_text())
    assert headers == [{"key": "trace", "value_base64": "jwE="}, {"key": "none", "value_base64": None}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["poison"]  # no temporary folder left behind
    again = cli("peek", *stuck.conn, "--spout", "pay", "--save", str(out))
    assert again.exit_code == 2 and "nothing is overwritten" in again.stderr
    assert (out / entry["value"]["file"]).read_bytes() == POISON
    null_key = cli("peek", *stuck.conn, "--group", stuck.group, "--save", str(tmp_path / "g"), "-o", "json")
    (g,) = [e for e in json.loads((tmp_path / "g" / "manifest.json").read_text())["messages"] if e["store"] == "kafka"]
    assert g["key"] is None and g["headers"] is None and null_key.exit_code == 0  # null key: no file, said null


@pytest.mark.zookeeper
@pytest.mark.kafka
@pytest.mark.parametrize(
    "args, code, said",
    [
        (["--count", "0"], 2, "--count must be"),
        (["--count", "1001"], 2, "--count must be"),
        (["--budget", "0"], 2, "--budget must be"),
        (["--budget", "nan"], 2, "--budget must be"),
        (["--partitions", "x"], 2, "--partitions"),
        (["-o", "csv"], 2, "table or json"),
        (["--spout", "nope"], 1, "nope"),
    ],
)
def test_peek_usage_errors_and_a_missing_consumer(cli, stuck, args, code, said):
    done = cli("peek", *stuck.conn, *([] if "--spout" in args else ["--spout", "pay"]), *args)
    assert done.exit_code == code and said in done.stderr and "Traceback" not in done.stderr


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_says_deleted_where_delete_records_moved_the_log_start_past_the_offset(cli, kafka, stuck):
    """DeleteRecords (kafka-delete-records) up to 3 on partition 0: the spout's 2 and the group's 1 are below the
    log start, and nothing is read for them; the Trident state resumes at 3, the oldest message left."""
    from confluent_kafka import TopicPartition

    (done,) = kafka.admin.delete_records([TopicPartition(stuck.topic, 0, 3)]).values()
    assert done.result(30).low_watermark == 3
    doc = cli("peek", *stuck.conn, "--spout", "pay", "--group", stuck.group, "--trident", "cl", "-o", "json").json()
    parts = _parts(doc)
    for key, offset in ((("zookeeper", "pay", 0), 2), (("kafka", stuck.group, 0), 1)):
        p = parts[key]
        assert (p["offset"], p["state"], p["log_start"], p["log_end"], p["messages"]) == (offset, "deleted", 3, 4, [])
        assert f"offset {offset} is below the log start 3: deleted by retention (or DeleteRecords)" in p["why"]
    trident = parts[("trident", "cl", 0)]
    assert (trident["state"], [m["offset"] for m in trident["messages"]]) == ("message", [3])


@pytest.fixture
def compacted(zk, kafka, names, zk_server, broker):
    """The compacted topic, a spout resuming at 3 (compacted away) and a group at 0 (compacted away)."""
    topic = compacted_topic(kafka)
    root = names.root + "/spouts"
    zk.create(f"{root}/pay/partition_0", storm_record(topic, 0, 3), makepath=True)
    group = names("group")
    kafka.commit(group, topic, {0: 0})
    return (
        topic,
        group,
        [
            "--zk",
            zk_server.address,
            "--zk-root",
            root,
            "--bootstrap-servers",
            broker.address,
            "--storm-root",
            names.root + "/storm",
            "--spout",
            "pay",
            "--group",
            group,
        ],
    )


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_shows_a_gap_where_the_log_cleaner_compacted_records_away(cli, compacted):
    topic, group, conn = compacted
    doc = cli("peek", *conn, "--count", "2", "-o", "json").json()
    parts = _parts(doc)
    spout, commit = parts[("zookeeper", "pay", 0)], parts[("kafka", group, 0)]
    assert (spout["offset"], spout["state"], spout["next_offset"], spout["log_start"], spout["log_end"]) == (
        3,
        "gap",
        4,
        0,
        6,
    )
    assert (
        f"{topic}/0 has no message at offset 3: the next one is at 4 (offset 3: removed by compaction" in spout["why"]
    )
    # the messages the spout is handed from 3 on: 4 (key c's last) and 5
    assert [(m["offset"], m["key"], m["timestamp"]) for m in spout["messages"]] == [
        (4, "c", iso_ms(compacted_at(4))),
        (5, "d", iso_ms(compacted_at(5))),
    ]
    assert (commit["offset"], commit["state"], commit["next_offset"]) == (0, "gap", 1)
    assert [m["offset"] for m in commit["messages"]] == [1, 2]


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_shows_a_gap_to_the_log_end_at_a_transaction_marker(cli, zk, kafka, names, zk_server, broker):
    """A transactional producer's commit marker takes the last offset before the log end: a spout resuming there
    has lag 1, and no message is left to hand it."""
    topic = names("tx")
    kafka.create_topic(topic, 1)
    marker = committed_transaction(kafka, topic, 0, 3)
    root = names.root + "/spouts"
    zk.create(f"{root}/pay/partition_0", storm_record(topic, 0, marker), makepath=True)
    doc = cli(
        "peek",
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        names.root + "/storm",
        "--spout",
        "pay",
        "-o",
        "json",
    ).json()
    (p,) = doc["partitions"]
    assert (p["offset"], p["lag"], p["log_end"], p["state"], p["next_offset"], p["messages"]) == (
        3,
        1,
        4,
        "gap",
        None,
        [],
    )
    assert f"{topic}/0 has no message from offset 3 to the log end 4" in p["why"] and "transaction markers" in p["why"]


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_peek_judges_as_inspect_does_with_the_same_settings(cli, zk, kafka, names, zk_server, broker):
    """peek runs the one pipeline (inspect.assess) and takes inspect's spout settings and horizon options: on the same
    stores, every partition it shows carries inspect's codes, RETENTION_* included (issue 37: peek lacked them, and
    refused --first-poll-offset-strategy)."""
    topic = names("aging")
    kafka.create_topic(topic, 1, {"retention.ms": str(370 * 86_400_000)})  # T0 is 330 days old: kept 40 days more
    kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": T0 + o * 1000} for o in range(4)])
    root = names.root + "/spouts"
    zk.create(f"{root}/aging/partition_0", storm_record(topic, 0, 1), makepath=True)
    group = names("group")
    kafka.commit(group, topic, {0: 1})  # no Storm metadata: FOREIGN_COMMIT, which LATEST ignores
    conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        names.root + "/storm",
        "--spout",
        "aging",
        "--group",
        group,
        "--topic",
        topic,
    ]
    seen = set()
    for extra in (
        [],
        ["--retention-horizon", "4800h"],
        ["--first-poll-offset-strategy", "LATEST", "--start-offset-time", "latest", "--retention-horizon", "4800h"],
    ):
        said = cli("inspect", *conn, "--per-partition", "--fail-on", "never", "-o", "json", *extra)
        shown = cli("peek", *conn, "-o", "json", *extra)
        assert said.exit_code == 0 and shown.exit_code == 0, (extra, said.stderr, shown.stderr)
        inspected: dict[tuple, list[str]] = {}
        peeked = {k: sorted(p["codes"]) for k, p in _parts(shown.json()).items()}
        for f in said.json()["findings"]:
            if f.get("partition") is not None:
                inspected.setdefault((f["store"], f["consumer"], f["partition"]), []).append(f["code"])
            elif f["code"] == "BROKER_INCOMPATIBLE":  # the consumer's: every partition of it carries the code
                for key in [k for k in peeked if k[:2] == (f["store"], f["consumer"])]:
                    inspected.setdefault(key, []).append(f["code"])
        inspected = {k: sorted(v) for k, v in inspected.items()}
        assert peeked and all(inspected.get(k, []) == codes for k, codes in peeked.items()), (extra, inspected, peeked)
        seen.update(c for codes in peeked.values() for c in codes)
    assert {"RETENTION_RISK", "FOREIGN_COMMIT"} <= seen, seen
