"""A JStorm Kafka spout's partition record, parsed as its spout reads it (offctl.core.storm.jstorm rule 3): json-simple
over the bytes as UTF-8, then `(Long) json.get("offset")`. Nothing here raises on bad input; bad input becomes a
`malformed` reason."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from offctl.core.records.model import JSTORM, ConsumerKey, OffsetRecord, ZkNode
from offctl.core.records.stormjson import _is_int, load_json_simple
from offctl.inputs import printable

_INT_MAX = 2**31 - 1
_PARTITION = re.compile(r"0|[1-9][0-9]{0,9}")


def node_partition(name: str) -> int | None:
    """N of a node the spout names by its partition alone (PartitionConsumer.zkPath: the int as Java writes it), or
    None for any other name (the spout never reads it)."""
    return int(name) if _PARTITION.fullmatch(name) and int(name) <= _INT_MAX else None


@lru_cache(maxsize=4096)
def _key(consumer: str, zk_root: str) -> ConsumerKey:
    """One key object per spout, shared by its records."""
    return ConsumerKey(JSTORM, consumer, zk_root)


def why_unusable(doc: object) -> str | None:
    """Why the PartitionConsumer constructor takes no offset from a parsed record (it then starts the partition as
    with none), or None: `(Map) JSONValue.parse(...)` then `(Long) json.get("offset")`, in a `catch (Throwable)`."""
    if doc is None:
        return "node data is JSON null"
    if not isinstance(doc, dict):
        return f"node data is JSON {type(doc).__name__}, not an object"
    offset = doc.get("offset")
    if offset is None:
        return "record has no offset"
    if not _is_int(offset):
        return f"offset is {json.dumps(offset)[:40]}, not an integer"
    return None


def _inconsistencies(doc: dict, node: ZkNode, utf8: bool) -> tuple[str, ...]:
    """What a usable record says that commitState would not write, in fields the spout never reads."""
    found = []
    partition, topic, topology = doc.get("partition"), doc.get("topic"), doc.get("topology")
    if "partition" not in doc:
        found.append("no partition field")
    elif not _is_int(partition):
        found.append(f"partition is {json.dumps(partition)[:40]}, not an integer")
    elif partition != node.node_partition:
        found.append(f"partition field says {partition}, the node is partition {node.node_partition}")
    if "topic" not in doc:
        found.append("no topic field")
    elif not isinstance(topic, str) or not topic:
        found.append(f"topic is {json.dumps(topic)[:40]}, not a topic name")
    if topology is not None and not isinstance(topology, str):
        found.append("topology is not a string (JStorm writes the topology's name)")
    broker = doc.get("broker")
    if broker is not None and not (
        isinstance(broker, dict)
        and isinstance(broker.get("host"), str | None)
        and (broker.get("port") is None or _is_int(broker.get("port")))
    ):
        found.append("broker is not an object with a string host and integer port")
    if not utf8:
        found.append("node data is not valid UTF-8 (the spout reads the bad bytes as U+FFFD)")
    return tuple(found)


def parse_jstorm_node(node: ZkNode) -> OffsetRecord:
    """A JStorm Kafka spout's node as an OffsetRecord: its offset where the spout reads one (`committed`; the spout
    fetches it + 1), else `malformed`; the topology *name* the record gives (the spout never checks it)."""
    key = _key(node.spout_id, node.zk_root)
    doc, reason, utf8 = load_json_simple(node.data)
    if reason is None:
        reason = why_unusable(doc)
    named = doc.get("topic") if isinstance(doc, dict) else None
    topic = printable(named) if isinstance(named, str) and named else None
    if reason is not None:
        offset = doc.get("offset") if isinstance(doc, dict) else None
        return OffsetRecord(
            key,
            node.node_partition,
            topic,
            offset if _is_int(offset) else None,
            path=node.path,
            modified_ms=node.mtime_ms,
            version=node.version,
            folder_topic=node.folder_topic,
            malformed=reason,
        )
    name = doc.get("topology")
    broker = doc.get("broker") if isinstance(doc.get("broker"), dict) else {}
    host, port = broker.get("host"), broker.get("port")
    return OffsetRecord(
        key,
        node.node_partition,
        topic,
        doc["offset"],
        topology_name=printable(name) if isinstance(name, str) and name else None,
        path=node.path,
        modified_ms=node.mtime_ms,
        version=node.version,
        broker=printable(f"{host}:{port}" if _is_int(port) else host) if isinstance(host, str) and host else None,
        folder_topic=node.folder_topic,
        inconsistent=_inconsistencies(doc, node, utf8),
    )
