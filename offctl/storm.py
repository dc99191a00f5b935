"""What Storm writes, parsed defensively: storm-kafka node JSON, storm-kafka-client commit metadata,
storm ids. Nothing here raises on bad input; bad input becomes a `malformed` reason."""

from __future__ import annotations

import json
from dataclasses import dataclass

from offctl.model import KAFKA, ZOOKEEPER, ConsumerKey, KafkaCommit, OffsetRecord, ZkNode

# Offsets are Java longs; anything outside cannot have been written by Storm.
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
# A partition node holds ~200 bytes. ZooKeeper caps nodes at ~1 MiB; refuse to parse more than this.
MAX_NODE_BYTES = 64 * 1024


def _is_int(value: object) -> bool:
    # JSON true/false parse to bool, which Python counts as int.
    return isinstance(value, int) and not isinstance(value, bool)


def parse_storm_id(storm_id: str | None) -> str | None:
    """Return the topology name of a storm id `<name>-<counter>-<epoch seconds>`, or None."""
    if not storm_id:
        return None
    parts = storm_id.rsplit("-", 2)
    if len(parts) == 3 and parts[0] and parts[1].isdigit() and parts[2].isdigit():
        return parts[0]
    return None


def _load_json_object(data: bytes) -> tuple[dict | None, str | None]:
    if len(data) > MAX_NODE_BYTES:
        return None, f"node data is {len(data)} bytes, more than a partition record can be"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"node data is not UTF-8 (byte {exc.start})"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and Python's limit on huge integer literals.
        return None, f"node data is not JSON ({str(exc).splitlines()[0][:80]})"
    if not isinstance(value, dict):
        return None, f"node data is JSON {type(value).__name__}, not an object"
    return value, None


def _is_str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _check_zk_fields(doc: dict, node: ZkNode) -> str | None:
    """Why a parsed record cannot be used, or None."""
    try:
        offset, topic, partition = doc["offset"], doc["topic"], doc["partition"]
    except KeyError:
        return "record lacks " + ", ".join(k for k in ("offset", "topic", "partition") if k not in doc)
    if not _is_int(offset) or not _LONG_MIN <= offset <= _LONG_MAX:
        return f"offset is {json.dumps(offset)[:40]}, not a 64-bit integer"
    if not isinstance(topic, str) or not topic:
        return f"topic is {json.dumps(topic)[:40]}, not a topic name"
    if not _is_int(partition):
        return f"partition is {json.dumps(partition)[:40]}, not an integer"
    if partition != node.node_partition:
        return f"record says partition {partition} but sits in node partition_{node.node_partition}"
    topology = doc.get("topology")
    if topology is not None and not (isinstance(topology, dict) and _is_str_or_none(topology.get("id"))
                                     and _is_str_or_none(topology.get("name"))):
        return "topology is not an object with string id and name"
    broker = doc.get("broker")
    if broker is not None and not (isinstance(broker, dict) and _is_str_or_none(broker.get("host"))
                                   and (broker.get("port") is None or _is_int(broker.get("port")))):
        return "broker is not an object with a string host and integer port"
    return None


def parse_zk_node(node: ZkNode) -> OffsetRecord:
    """Turn a storm-kafka partition node into an OffsetRecord, malformed or not."""
    key = ConsumerKey(ZOOKEEPER, node.spout_id, node.zk_root)
    doc, reason = _load_json_object(node.data)
    if reason is None:
        reason = _check_zk_fields(doc, node)
    if reason is not None:
        topic = doc.get("topic") if doc is not None else None
        return OffsetRecord(key, node.node_partition, topic if isinstance(topic, str) and topic else node.folder_topic,
                            None, path=node.path, modified_ms=node.mtime_ms, version=node.version,
                            folder_topic=node.folder_topic, malformed=reason)
    topology = doc.get("topology") or {}
    broker = doc.get("broker") or {}
    host, port = broker.get("host"), broker.get("port")
    topology_id = topology.get("id")
    return OffsetRecord(
        key, node.node_partition, doc["topic"], doc["offset"],
        topology_id=topology_id,
        topology_name=topology.get("name") or parse_storm_id(topology_id),
        path=node.path, modified_ms=node.mtime_ms, version=node.version,
        broker=(f"{host}:{port}" if port is not None else host) if host else None,
        folder_topic=node.folder_topic,
    )


@dataclass(frozen=True, slots=True)
class CommitMetadata:
    """storm-kafka-client's commit metadata: {"topologyId":..., "taskId":..., "threadName":...}."""

    topology_id: str
    task_id: int | None
    thread_name: str | None


def parse_commit_metadata(metadata: str | None) -> CommitMetadata | None:
    """Return Storm's commit metadata, or None when it is absent or not Storm's."""
    if not metadata:
        return None
    try:
        doc = json.loads(metadata)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("topologyId"), str) or not doc["topologyId"]:
        return None
    task_id = doc.get("taskId")
    thread = doc.get("threadName")
    return CommitMetadata(
        topology_id=doc["topologyId"],
        task_id=task_id if _is_int(task_id) else None,
        thread_name=thread if isinstance(thread, str) else None,
    )


def commit_metadata_json(topology_id: str, task_id: int = -1, thread_name: str = "offctl") -> str:
    """Storm metadata for a commit written by offctl, in the key order storm-kafka-client uses."""
    return json.dumps({"topologyId": topology_id, "taskId": task_id, "threadName": thread_name},
                      separators=(",", ":"))


def parse_commit(commit: KafkaCommit) -> OffsetRecord:
    meta = parse_commit_metadata(commit.metadata)
    topology_id = meta.topology_id if meta else None
    return OffsetRecord(
        key=ConsumerKey(KAFKA, commit.group),
        partition=commit.partition,
        topic=commit.topic,
        committed=commit.offset,
        topology_id=topology_id,
        topology_name=parse_storm_id(topology_id) or topology_id,
        has_storm_metadata=meta is not None,
    )
