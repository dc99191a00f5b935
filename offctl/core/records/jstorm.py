"""A JStorm Kafka spout's partition record, parsed as its spout reads it (offctl.core.storm.jstorm rule 3): json-simple
over the bytes as UTF-8, then `(Long) json.get("offset")`. Nothing here raises on bad input; bad input becomes a
`malformed` reason."""

from __future__ import annotations

import re
from functools import lru_cache

from offctl.core.records.model import JSTORM, ConsumerKey, OffsetRecord, ZkNode
from offctl.core.records.stormjson import (
    field_inconsistencies,
    load_json_simple,
    named_broker,
    named_topic,
    offset_problem,
    unusable_record,
)
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
    return offset_problem(doc)


def _inconsistencies(doc: dict, node: ZkNode, utf8: bool) -> tuple[str, ...]:
    """What a usable record says that commitState would not write, in fields the spout never reads."""
    topology = doc.get("topology")
    named = topology is None or isinstance(topology, str)
    wrong = None if named else "topology is not a string (JStorm writes the topology's name)"
    return field_inconsistencies(doc, utf8, f"partition {node.node_partition}", node.node_partition, wrong)


def parse_jstorm_node(node: ZkNode) -> OffsetRecord:
    """A JStorm Kafka spout's node as an OffsetRecord: its offset where the spout reads one (`committed`; the spout
    fetches it + 1), else `malformed`; the topology *name* the record gives (the spout never checks it)."""
    key = _key(node.spout_id, node.zk_root)
    doc, reason, utf8 = load_json_simple(node.data)
    if reason is None:
        reason = why_unusable(doc)
    topic = named_topic(doc)
    if reason is not None:
        return unusable_record(key, node, doc, topic, reason)
    name = doc.get("topology")
    return OffsetRecord(
        key,
        node.node_partition,
        topic,
        doc["offset"],
        topology_name=printable(name) if isinstance(name, str) and name else None,
        path=node.path,
        modified_ms=node.mtime_ms,
        version=node.version,
        broker=named_broker(doc),
        folder_topic=node.folder_topic,
        inconsistent=_inconsistencies(doc, node, utf8),
    )
