"""Parsing what Storm writes: table-driven, plain data, no servers."""

from __future__ import annotations

import json

import pytest

from offctl.model import ZkNode
from offctl.storm import (
    MAX_NODE_BYTES,
    commit_metadata_json,
    parse_commit_metadata,
    parse_storm_id,
    parse_zk_node,
)

GOOD = {"topology": {"id": "wc-3-1700000000", "name": "wc"}, "offset": 42, "partition": 1,
        "broker": {"host": "kafka1", "port": 9092}, "topic": "words"}


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
        "/root/spout/partition_1", 3, 1000, "spout", "/root")


def test_key_order_and_unknown_keys_do_not_matter():
    data = json.dumps({"topic": "words", "extra": [1, 2], "partition": 1, "offset": 7}).encode()
    r = parse_zk_node(node(data))
    assert r.malformed is None and r.committed == 7 and r.topology_id is None and r.broker is None


def test_topology_name_falls_back_to_the_storm_id():
    r = parse_zk_node(node(doc(topology={"id": "my-topo-12-1700000000"})))
    assert r.topology_name == "my-topo"


@pytest.mark.parametrize("data, reason", [
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"", "not JSON"),
    (b"{offset: 1}", "not JSON"),
    (b"[1, 2]", "JSON list, not an object"),
    (b"42", "JSON int, not an object"),
    (b"null", "JSON NoneType, not an object"),
    (doc(offset=...), "lacks offset"),
    (doc(topic=..., partition=...), "lacks topic, partition"),
    (doc(offset="42"), 'offset is "42"'),
    (doc(offset=True), "offset is true"),
    (doc(offset=4.5), "offset is 4.5"),
    (doc(offset=2**63), "not a 64-bit integer"),
    (doc(offset=None), "offset is null"),
    (doc(topic=""), "not a topic name"),
    (doc(topic=7), "topic is 7"),
    (doc(partition="1"), 'partition is "1"'),
    (doc(partition=2), "record says partition 2 but sits in node partition_1"),
    (doc(topology="wc"), "topology is not an object"),
    (doc(topology={"id": 5}), "topology is not an object"),
    (doc(broker={"host": "h", "port": "9092"}), "broker is not an object"),
    (b"[" * 30_000 + b"]" * 30_000, "not JSON"),  # under the size cap, deeper than the recursion limit
    (b'{"offset": ' + b"9" * 5000 + b"}", "not JSON"),  # longer than Python's integer literal limit
    (b" " * (MAX_NODE_BYTES + 1), "more than a partition record can be"),
])
def test_malformed_records_never_raise(data, reason):
    r = parse_zk_node(node(data))
    assert r.committed is None
    assert reason in r.malformed


def test_malformed_record_keeps_the_folder_topic():
    assert parse_zk_node(node(b"junk", folder="words")).topic == "words"


@pytest.mark.parametrize("storm_id, name", [
    ("wordcount-1-1400000000", "wordcount"),
    ("my-topo-with-dashes-12-1700000000", "my-topo-with-dashes"),
    ("wordcount", None),
    ("wordcount-x-1400000000", None),
    ("-1-1400000000", None),
    ("", None),
    (None, None),
])
def test_parse_storm_id(storm_id, name):
    assert parse_storm_id(storm_id) == name


@pytest.mark.parametrize("metadata, topology_id, task_id", [
    ('{"topologyId":"wc-1-1700000000","taskId":4,"threadName":"Thread-7"}', "wc-1-1700000000", 4),
    ('{"topologyId":"wc-1-1700000000"}', "wc-1-1700000000", None),
    ('{"topologyId":"wc-1-1700000000","taskId":"4"}', "wc-1-1700000000", None),
    ("", None, None),
    (None, None, None),
    ("not json", None, None),
    ('{"taskId":4}', None, None),
    ('{"topologyId":""}', None, None),
    ('["wc"]', None, None),
])
def test_parse_commit_metadata(metadata, topology_id, task_id):
    meta = parse_commit_metadata(metadata)
    assert (meta.topology_id if meta else None) == topology_id
    assert (meta.task_id if meta else None) == task_id


def test_commit_metadata_round_trips():
    meta = parse_commit_metadata(commit_metadata_json("wc-1-1700000000", 3, "t"))
    assert (meta.topology_id, meta.task_id, meta.thread_name) == ("wc-1-1700000000", 3, "t")
