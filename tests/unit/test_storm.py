"""Parsing what Storm writes: table-driven, plain data, no servers."""

from __future__ import annotations

import json

import pytest

from offctl.core.records.model import KafkaCommit, ZkNode
from offctl.core.records.parse import commit_metadata_json, parse_commit, parse_commit_metadata, parse_zk_node
from offctl.core.records.stormjson import MAX_NODE_BYTES, parse_storm_id

GOOD = {
    "topology": {"id": "wc-3-1700000000", "name": "wc"},
    "offset": 42,
    "partition": 1,
    "broker": {"host": "kafka1", "port": 9092},
    "topic": "words",
}


def node(data: bytes, partition: int = 1, folder: str | None = None) -> ZkNode:
    return ZkNode("/root", "spout", f"/root/spout/partition_{partition}", partition, folder, data, 3, 1000)


def doc(**changes) -> bytes:
    d = {**GOOD, **changes}
    return json.dumps({k: v for k, v in d.items() if v is not ...}).encode()


def test_parses_partition_manager_record():
    r = parse_zk_node(node(doc()))
    assert r.malformed is None
    assert (r.topic, r.partition, r.committed) == ("words", 1, 42)
    assert (r.topology_id, r.topology_name, r.broker) == ("wc-3-1700000000", "wc", "kafka1:9092")
    assert (r.path, r.version, r.modified_ms, r.key.consumer, r.key.zk_root) == (
        "/root/spout/partition_1",
        3,
        1000,
        "spout",
        "/root",
    )


# What PartitionManager's constructor reads, v0.9.2-incubating to v1.2.4 (identical in every release):
#   jsonTopologyId = (String) ((Map) json.get("topology")).get("id"); jsonOffset = (Long) json.get("offset");
# inside catch (Throwable); either one null -> "failed to parse JSON?" -> start as with no record.
PM = "PartitionManager.java@v1.2.4"


def test_key_order_and_unknown_keys_do_not_matter():
    data = json.dumps(
        {"extra": [1, 2], "offset": 7, "topology": {"id": "wc-1-1", "name": "wc"}, "topic": "words", "partition": 1}
    ).encode()
    r = parse_zk_node(node(data))
    assert r.malformed is None and r.committed == 7 and r.topology_id == "wc-1-1" and r.inconsistent == ()


def test_topology_name_falls_back_to_the_storm_id():
    r = parse_zk_node(node(doc(topology={"id": "my-topo-12-1700000000"})))
    assert r.topology_name == "my-topo"
    assert r.inconsistent == ("topology.name is not a string",)


# Records the spout cannot use (malformed): it starts the partition as with no record.
@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "not JSON"),
        (b"{offset: 1}", "not JSON"),
        (b"[1, 2]", "JSON list, not an object"),  # ZkState.readJSON's (Map) cast fails
        (b"42", "JSON int, not an object"),
        (b"null", "JSON null"),  # JSONValue.parse -> null -> "No partition information found"
        (doc(offset=...), "no offset"),
        (doc(offset=None), "no offset"),
        (doc(offset="42"), 'offset is "42", not an integer'),  # (Long) cast of a String
        (doc(offset=True), "offset is true"),
        (doc(offset=4.5), "offset is 4.5"),  # json-simple parses 4.5 as Double: (Long) cast fails
        (b'{"topology":{"id":"wc-1-1","name":"wc"},"offset":9223372036854775808}', "does not fit a Java long"),
        (b'{"topology":{"id":"wc-1-1","name":"wc"},"offset":NaN}', "NaN is not JSON"),  # no NaN in json-simple
        (b'{"topology":{"id":"wc-1-1","name":"wc"},"offset":Infinity}', "Infinity is not JSON"),
        (doc(topology=...), "no topology object"),  # NPE on json.get("topology").get("id")
        (doc(topology="wc"), "topology is not an object"),
        (doc(topology={"name": "wc"}), "topology.id is missing"),
        (doc(topology={"id": 5, "name": "wc"}), "topology.id is not a string"),
        (b"[" * 30_000 + b"]" * 30_000, "JSON list, not an object"),  # json-simple reads any depth
        (b'{"offset": ' + b"9" * 5000 + b"}", "not JSON"),  # longer than Python's integer literal limit
        (b" " * (MAX_NODE_BYTES + 1), "more than ZooKeeper's default jute.maxbuffer allows a node"),
        (b'{"pad":"' + b"x" * 70_000 + b'","topology":{"id":5}}', "topology.id is not a string"),  # read past 64 KiB
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_records_the_spout_cannot_use(data, reason):
    r = parse_zk_node(node(data))
    assert r.committed in (None, 42)  # a readable number is kept for display and rewrite, never used
    assert reason in r.malformed


# Records the spout uses although they are not as Storm writes them (INCONSISTENT_RECORD, not malformed).
@pytest.mark.parametrize(
    "data, said",
    [
        (doc(topic=..., partition=...), ("no partition field", "no topic field")),
        (doc(topic=""), ('topic is "", not a topic name',)),
        (doc(topic=7), ("topic is 7, not a topic name",)),
        (doc(partition="1"), ('partition is "1", not an integer',)),
        (doc(partition=2), ("partition field says 2, the node is partition_1",)),
        (doc(broker={"host": "h", "port": "9092"}), ("broker is not an object with a string host and integer port",)),
        (
            doc(topology={"id": "wc-3-1700000000", "name": "w\udc80c"}).replace(b"\\udc80", b"\xff"),
            ("node data is not valid UTF-8 (Storm reads the bad bytes as U+FFFD)",),
        ),
    ],
    ids=lambda v: v[0] if isinstance(v, tuple) else None,
)
def test_records_storm_uses_but_does_not_write(data, said):
    r = parse_zk_node(node(data))
    assert r.malformed is None and r.committed == 42
    assert r.inconsistent == said


def test_unusable_record_keeps_the_folder_and_its_topic():
    r = parse_zk_node(node(b"junk", folder="words"))
    assert (r.topic, r.folder_topic, r.malformed is not None) == (None, "words", True)


def test_json_simple_bytes_of_every_release_parse_alike():
    """json-simple writes '/' as '\\/' (JSONValue.escape) and no spaces; PartitionManager.commit's
    ImmutableMap order is topology, offset, partition, broker, topic in every release."""
    data = (
        b'{"topology":{"id":"a\\/b-1-1700000000","name":"a\\/b"},"offset":5,"partition":1,'
        b'"broker":{"host":"k1","port":9092},"topic":"t.v1"}'
    )
    r = parse_zk_node(node(data))
    assert (r.topology_id, r.topology_name, r.committed, r.topic, r.inconsistent) == (
        "a/b-1-1700000000",
        "a/b",
        5,
        "t.v1",
        (),
    )


@pytest.mark.parametrize(
    "storm_id, name",
    [
        ("wordcount-1-1400000000", "wordcount"),
        ("my-topo-with-dashes-12-1700000000", "my-topo-with-dashes"),
        ("wordcount", None),
        ("wordcount-x-1400000000", None),
        ("-1-1400000000", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_storm_id(storm_id, name):
    assert parse_storm_id(storm_id) == name


# CommitMetadataManager.isOffsetCommittedByThisTopology (v1.1.2 to v2.8.8): Jackson into CommitMetadata,
# an unknown property fails the read; taskId is a primitive int: 0 when missing, a numeric string coerced (as the
# real class binds them: tests/oracle/test_metadata_differential.py).
@pytest.mark.parametrize(
    "metadata, topology_id, task_id",
    [
        ('{"topologyId":"wc-1-1700000000","taskId":4,"threadName":"Thread-7"}', "wc-1-1700000000", 4),
        ('{"topologyId":"wc-1-1700000000"}', "wc-1-1700000000", 0),
        ('{"topologyId":"wc-1-1700000000","taskId":"4"}', "wc-1-1700000000", 4),
        ('{"topologyId":"wc-1-1700000000","taskId":"four"}', None, None),
        ('{"topologyId":5,"taskId":4.9}', "5", 4),
        ('{"topologyId":"wc-1-1700000000","taskId":4,"threadName":"t","extra":1}', None, None),
        ("{topic-partition=orders-0, offset=41, numFails=0, thread='Thread-11-spout-executor[3 3]'}", None, None),
        ("", None, None),
        (None, None, None),
        ("not json", None, None),
        ('{"taskId":4}', None, None),
        ('{"topologyId":""}', None, None),
        ('["wc"]', None, None),
    ],
)
def test_parse_commit_metadata(metadata, topology_id, task_id):
    meta = parse_commit_metadata(metadata)
    assert (meta.topology_id if meta else None) == topology_id
    assert (meta.task_id if meta else None) == task_id


def test_commit_metadata_round_trips():
    meta = parse_commit_metadata(commit_metadata_json("wc-1-1700000000", 3, "t"))
    assert (meta.topology_id, meta.task_id, meta.thread_name) == ("wc-1-1700000000", 3, "t")


@pytest.mark.parametrize(
    "metadata, legacy",
    [
        # KafkaSpoutMessageId.getMetadata, v1.0.0 to v1.0.5 and v1.1.0 to v1.1.1 (TopicPartition.toString is
        # topic-partition)
        ("{topic-partition=orders-0, offset=41, numFails=0, thread='Thread-11-kafka-spout-executor[3 3]'}", True),
        ("{topic-partition=my-topic-12, offset=0, numFails=2, thread='main'}", True),
        ('{"topologyId":"wc-1-1700000000","taskId":4,"threadName":"Thread-7"}', False),
        ("{topic-partition=orders-0, offset=41}", False),
        ("", False),
        (None, False),
    ],
)
def test_legacy_commit_metadata(metadata, legacy):
    r = parse_commit(KafkaCommit("g", "orders", 0, 41, metadata))
    assert (r.legacy_metadata, r.has_storm_metadata) == (legacy, legacy or parse_commit_metadata(metadata) is not None)


# json-simple 1.1 (doc/json.lex and JSONParser.parse, the version storm's pom pins) reads more than strict JSON:
# PartitionManager uses such records, so offctl must too (offctl/core/storm/jsonsimple.py).
T = b'"topology":{"id":"wc-1-1","name":"wc"}'


@pytest.mark.parametrize(
    "data, committed",
    [
        (b"{" + T + b',"offset":0042,"partition":1,"topic":"t"}', 42),  # INT is -?[0-9]+: leading zeros
        (b"{" + T + b',,"offset":7,,"partition":1,"topic":"t",}', 7),  # commas are skipped in objects
        (b"{" + T + b' "offset" 7 "partition":1 "topic":"t"}', 7),  # no commas or colons needed
        (b"{" + T + b',"offset"::7,"partition":1,"topic":"t\nx"}', 7),  # repeated colons; a raw newline in a string
        (b"{" + T + b',"offset":7,"partition":[1,,2],"topic":"t"}', 7),  # commas skipped in arrays
        (b"[" * 3000 + b"]" * 3000, None),  # deep nesting: json-simple's parser has no recursion limit
        (b"{" + T + b',"offset":7.}', None),  # "7." is INT then an unreadable "."
        (b"{" + T + b',"offset":7}x', None),  # nothing may follow the value
        (b"{" + T + b',"offset":7,:}', None),  # a colon where a key belongs
        (b"{" + T + b',"offset":"\\x"}', None),  # an escape json-simple does not know
    ],
    ids=lambda v: v.decode("utf-8", "replace")[40:80] if isinstance(v, bytes) else None,
)
def test_json_simple_reads_what_strict_json_refuses(data, committed):
    r = parse_zk_node(node(data))
    assert r.committed == committed if committed is not None else r.malformed is not None
    if committed is not None:
        assert r.malformed is None


def test_a_valid_record_past_64_kib_is_read_as_storm_reads_it():
    """ZkState.readJSON parses whatever the node holds (v1.2.4); ZooKeeper's default jute.maxbuffer bounds a node,
    and offctl reads up to it."""
    from offctl.core.records.model import ZkNode
    from offctl.core.records.parse import parse_zk_node

    data = json.dumps(
        {"topology": {"id": "wc-1-1", "name": "wc"}, "offset": 42, "partition": 0, "topic": "t", "note": "x" * 200_000}
    ).encode()
    record = parse_zk_node(ZkNode("/r", "s", "/r/s/partition_0", 0, None, data, 0, 0))
    assert (record.malformed, record.committed, record.topology_id) == (None, 42, "wc-1-1")
