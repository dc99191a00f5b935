"""What Storm writes, parsed defensively: storm-kafka node JSON, storm-kafka-client commit metadata (a Trident
state: offctl.core.records.trident; the JSON reading and storm ids: offctl.core.records.stormjson). Nothing here
raises on bad input; bad input becomes a `malformed` reason."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from offctl.core.records.frozen import builder
from offctl.core.records.jstorm import parse_jstorm_node
from offctl.core.records.model import KAFKA, ZOOKEEPER, ConsumerKey, KafkaCommit, OffsetRecord, ZkNode
from offctl.core.records.stormjson import (
    MAX_NODE_BYTES,
    _inconsistencies,
    _why_unusable,
    load_json_simple,
    named_broker,
    named_topic,
    parse_storm_id,
    unusable_record,
)
from offctl.core.records.trident import parse_trident_node
from offctl.core.storm import jackson
from offctl.core.storm.jsonsimple import dumps_string
from offctl.core.storm.releases import LEGACY_METADATA
from offctl.inputs import printable


@lru_cache(maxsize=4096)
def _zk_key(spout_id: str, zk_root: str) -> ConsumerKey:
    """One key object per spout, shared by its records (a spout has many partitions)."""
    return ConsumerKey(ZOOKEEPER, spout_id, zk_root)


_record = builder(OffsetRecord)  # OffsetRecord(...), at a quarter of the cost (offctl.core.records.frozen)


# A record as PartitionManager.commit writes it (storm_kafka_record), with names of printable ASCII without
# escapes and numbers of at most 18 digits (always a Java long): nearly every node of a fleet. Read straight
# from the bytes, it gives the record the general path gives (tests/faults/test_hostile_input.py holds the two
# to each other on canonical and near-canonical bytes); any other bytes take the general path.
_ASCII = r"[ !#-\[\]-~]"  # printable ASCII but " and \


_NUMBER = r"(0|-?[1-9][0-9]{0,17})"


_CANONICAL = re.compile(
    rf'\{{"topology":\{{"id":"({_ASCII}*)","name":"({_ASCII}*)"\}},"offset":{_NUMBER},'
    rf'"partition":{_NUMBER},"broker":\{{"host":"({_ASCII}*)","port":{_NUMBER}\}},'
    rf'"topic":"({_ASCII}+)"\}}'
)


def parse_zk_node(node: ZkNode) -> OffsetRecord:
    """Turn a storm-kafka partition node into an OffsetRecord, as PartitionManager reads it.

    `malformed` says why the spout cannot use the record (it then starts as with no record);
    `inconsistent` lists what it tolerates."""
    if node.trident:
        return parse_trident_node(node)
    if node.jstorm:
        return parse_jstorm_node(node)
    # latin-1 maps each byte to one character: only bytes of the pattern's ASCII can match it
    m = _CANONICAL.fullmatch(node.data.decode("latin-1")) if len(node.data) <= MAX_NODE_BYTES else None
    if m is not None and int(m[4]) == node.node_partition:
        topology_id, name, offset, _, host, port, topic = m.groups()
        return _record(
            _zk_key(node.spout_id, node.zk_root),
            node.node_partition,
            topic,
            int(offset),
            topology_id,
            name or parse_storm_id(topology_id),
            node.path,
            node.mtime_ms,
            node.version,
            f"{host}:{port}" if host else None,
            node.folder_topic,
        )  # port as Long.toString wrote it
    return parse_any_zk_node(node)


def parse_any_zk_node(node: ZkNode) -> OffsetRecord:
    """parse_zk_node of a storm-kafka node without its fast path for canonical records."""
    key = _zk_key(node.spout_id, node.zk_root)
    doc, reason, utf8 = load_json_simple(node.data)
    if reason is None:
        reason = _why_unusable(doc)
    topic = named_topic(doc)
    if reason is not None:
        return unusable_record(key, node, doc, topic, reason)
    topology = doc["topology"]
    topology_id = printable(topology["id"])
    name = topology.get("name")
    return _record(
        key,
        node.node_partition,
        topic,
        doc["offset"],
        topology_id=topology_id,
        topology_name=printable(name) if isinstance(name, str) and name else parse_storm_id(topology_id),
        path=node.path,
        modified_ms=node.mtime_ms,
        version=node.version,
        broker=named_broker(doc),
        folder_topic=node.folder_topic,
        inconsistent=_inconsistencies(doc, node, utf8),
    )


def record_topology(node: ZkNode) -> tuple[str, object] | None:
    """The topology (id, name) a storm-kafka record names, exactly as its JSON holds them (not made printable),
    or None when the spout cannot use the record."""
    doc, reason, _ = load_json_simple(node.data)
    if reason is not None or _why_unusable(doc) is not None:
        return None
    return doc["topology"]["id"], doc["topology"].get("name")


def storm_kafka_record(
    topology_id: str, topology_name: str, offset: int, partition: int, host: str, port: int, topic: str
) -> bytes:
    """A partition record byte for byte as storm-kafka writes it: PartitionManager.commit() (v0.9.6, v0.10.2,
    v1.0.6, v1.1.3, v1.2.4) builds an ImmutableMap {topology {id, name}, offset, partition, broker {host,
    port}, topic} (in that order; offset a long, partition and port ints) and ZkState.writeJSON writes
    JSONValue.toJSONString of it (json-simple 1.1: no spaces, JSONValue.escape) as UTF-8."""
    text = (
        f'{{"topology":{{"id":{dumps_string(topology_id)},"name":{dumps_string(topology_name)}}},'
        f'"offset":{offset},"partition":{partition},'
        f'"broker":{{"host":{dumps_string(host)},"port":{port}}},"topic":{dumps_string(topic)}}}'
    )
    # Java's String.getBytes("UTF-8"): a surrogate pair is one character, a lone surrogate becomes '?'
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text.encode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class CommitMetadata:
    """storm-kafka-client's commit metadata: {"topologyId":..., "taskId":..., "threadName":...}."""

    topology_id: str
    task_id: int
    thread_name: str | None


def parse_commit_metadata(metadata: str | None) -> CommitMetadata | None:
    """Storm's commit metadata as CommitMetadataManager binds it (offctl/core/storm/jackson.py: a default Jackson
    ObjectMapper into CommitMetadata; held to the real class on generated input, storm-kafka-client 1.2.4 and 2.8.3),
    or None where it names no topology: the bind fails (the spout takes the commit as another topology's), binds
    no topologyId (the spout throws at start: jackson.names_no_topology), or an empty one."""
    return _metadata(jackson.bind(metadata or ""))


def _metadata(bound: dict | None | object) -> CommitMetadata | None:
    if bound is jackson.UNBOUND or bound is None or not bound["topologyId"]:
        return None
    return CommitMetadata(topology_id=bound["topologyId"], task_id=bound["taskId"], thread_name=bound["threadName"])


def is_legacy_metadata(metadata: str | None) -> bool:
    """Metadata written by storm-kafka-client before CommitMetadataManager (KafkaSpoutMessageId.getMetadata,
    v1.0.0 to v1.0.5 and v1.1.0 to v1.1.1): {topic-partition=orders-0, offset=41, numFails=0, thread='...'}."""
    return bool(metadata) and LEGACY_METADATA.fullmatch(metadata) is not None


def commit_metadata_json(topology_id: str, task_id: int = -1, thread_name: str = "offctl") -> str:
    """Storm metadata for a commit written by offctl, in the key order storm-kafka-client uses."""
    return json.dumps({"topologyId": topology_id, "taskId": task_id, "threadName": thread_name}, separators=(",", ":"))


def parse_commit(commit: KafkaCommit) -> OffsetRecord:
    """A Kafka commit as storm-kafka-client reads it, its metadata bound as Jackson 2.9 binds it; `number_limited`
    where Jackson 2.15+ would fail that bind (analyze reads it by the spout's release)."""
    bound = jackson.bind(commit.metadata or "")
    # a number over 1,000 characters needs metadata over that long: only then ask the model with the limit
    limited = bound is not jackson.UNBOUND and len(commit.metadata or "") > 1000
    meta = _metadata(bound)
    topology_id = printable(meta.topology_id) if meta else None
    legacy = meta is None and is_legacy_metadata(commit.metadata)
    return OffsetRecord(
        key=ConsumerKey(KAFKA, commit.group),
        partition=commit.partition,
        topic=commit.topic,
        committed=commit.offset,
        topology_id=topology_id,
        topology_name=parse_storm_id(topology_id) or topology_id,
        has_storm_metadata=meta is not None or legacy,
        legacy_metadata=legacy,
        crashes=jackson.names_no_topology(bound),
        number_limited=limited and jackson.bind(commit.metadata or "", 1000) is jackson.UNBOUND,
    )


def storm_groups(commits: Iterable[KafkaCommit]) -> set[str]:
    """The groups whose commits carry Storm metadata of any release (for --all-groups)."""
    return {c.group for c in commits if parse_commit_metadata(c.metadata) or is_legacy_metadata(c.metadata)}
