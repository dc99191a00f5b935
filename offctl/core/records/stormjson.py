"""JSON as Storm's readers take it, defensively: json-simple's reading of a node (load_json_simple), Java longs,
storm ids, and why a record's fields are unusable. Nothing here raises on bad input."""

from __future__ import annotations

import json
from functools import lru_cache

import orjson

from offctl.core.records.model import ConsumerKey, OffsetRecord, ZkNode
from offctl.core.storm import javautf8, jsonsimple
from offctl.inputs import printable

# Offsets are Java longs; anything outside cannot have been written by Storm.
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


# A partition node holds ~200 bytes. ZooKeeper caps nodes at ~1 MiB; refuse to parse more than this.
# ZooKeeper's default jute.maxbuffer (0xfffff): the largest node a default server stores and a default client (Storm's
# Curator, offctl's kazoo) reads; offctl reads no larger one, which only a server and clients configured for it hold
MAX_NODE_BYTES = 0xFFFFF


def _is_int(value: object) -> bool:
    # JSON true/false parse to bool, which Python counts as int.
    return isinstance(value, int) and not isinstance(value, bool)


@lru_cache(maxsize=4096)  # a fleet has a few topology ids, each on many partition records
def parse_storm_id(storm_id: str | None) -> str | None:
    """Return the topology name of a storm id `<name>-<counter>-<epoch seconds>`, or None."""
    if not storm_id:
        return None
    parts = storm_id.rsplit("-", 2)
    if len(parts) == 3 and parts[0] and parts[1].isdigit() and parts[2].isdigit():
        return parts[0]
    return None


class _Rejected(ValueError):
    pass


def _reject_constant(name: str):
    raise _Rejected(f"{name} is not JSON")  # json-simple's lexer has no NaN or Infinity


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


_NINETEEN_ZEROS = b"0" * 19


def _has_long_digits(data: bytes) -> bool:
    """Whether the bytes hold a run of 19 digits, the shortest integer that can leave the long range. Found in
    C: every digit becomes 0, then a plain substring search (a regex scan of every position cost more than
    orjson's whole parse). JSON digits are single ASCII bytes, and U+FFFD is none, so the bytes answer for
    their decoded text too."""
    return _NINETEEN_ZEROS in data.translate(_DIGITS_AS_ZERO)


def _long(text: str) -> int:
    value = int(text)
    if not _LONG_MIN <= value <= _LONG_MAX:
        # json-simple's Yylex does Long.valueOf on every integer token: NumberFormatException fails the parse.
        raise _Rejected(f"integer {text[:24]}{'...' if len(text) > 24 else ''} {jsonsimple.OVERFLOW}")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


_LONG_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_long)


def load_json_simple(data: bytes) -> tuple[object, str | None, bool]:
    """(value, why it could not be parsed, whether the bytes were valid UTF-8), as ZkState.readJSON reads
    a node: `new String(bytes, "UTF-8")` (invalid bytes become U+FFFD, as many as Java makes: javautf8) then
    JSONValue.parse."""
    if len(data) > MAX_NODE_BYTES:
        return None, f"node data is {len(data)} bytes, more than ZooKeeper's default jute.maxbuffer allows a node", True
    if not _has_long_digits(data):
        # The fast path: orjson reads strict JSON (RFC 8259) in valid UTF-8 to the value json does, and fails
        # on all else (NaN, lone surrogates, invalid bytes, a BOM, trailing data, 1e400), which then takes the
        # path below. Only integers of 19 digits or more could differ (orjson makes floats of those beyond 64
        # bits), and they never come here. tests/faults: the two paths agree on any bytes.
        try:
            return orjson.loads(data), None, True
        except orjson.JSONDecodeError:
            pass
    return load_as_storm(data)


def load_as_storm(data: bytes) -> tuple[object, str | None, bool]:
    """load_json_simple without its fast path."""
    text, utf8 = javautf8.decode(data)  # new String(bytes, "UTF-8"): invalid bytes become U+FFFD as Java counts them
    try:
        # Only an integer of 19 digits or more can leave the long range: check those (rare) one by one.
        return (_LONG_DECODER if _has_long_digits(data) else _DECODER).decode(text), None, utf8
    except _Rejected as exc:
        return None, f"node data is not JSON as Storm parses it ({exc})", utf8
    except (ValueError, RecursionError):
        pass
    # What strict JSON refuses, json-simple may still read (leading zeros, skipped commas, raw control
    # characters in strings): read it as json-simple does.
    try:
        return jsonsimple.loads(text), None, utf8
    except (ValueError, RecursionError) as exc:
        return None, f"node data is not JSON as Storm parses it ({str(exc)[:80]})", utf8


def _is_str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _why_unusable(doc: object) -> str | None:
    """Why PartitionManager cannot take topology.id and offset from a parsed record, or None.

    PartitionManager (v0.9.2-incubating to v1.2.4): `jsonTopologyId = (String) ((Map) json.get("topology"))
    .get("id"); jsonOffset = (Long) json.get("offset");` inside a catch-all; either left null means "failed
    to parse JSON?" and the partition starts as if it had no record."""
    if doc is None:
        return "node data is JSON null"
    if not isinstance(doc, dict):
        return f"node data is JSON {type(doc).__name__}, not an object"
    topology = doc.get("topology")
    if not isinstance(topology, dict):
        return "record has no topology object" if topology is None else "topology is not an object"
    if not isinstance(topology.get("id"), str):
        return "topology.id is missing" if topology.get("id") is None else "topology.id is not a string"
    return offset_problem(doc)


def named_topic(doc: object) -> str | None:
    """The topic a parsed record names, made printable (a lone surrogate escape is written out, never printed raw);
    None where it names none."""
    named = doc.get("topic") if isinstance(doc, dict) else None
    return printable(named) if isinstance(named, str) and named else None


def named_broker(doc: dict) -> str | None:
    """The "host:port" a usable record's broker names (the host alone where its port is no integer), made printable;
    None where it names no host."""
    broker = doc.get("broker") if isinstance(doc.get("broker"), dict) else {}
    host, port = broker.get("host"), broker.get("port")
    return printable(f"{host}:{port}" if _is_int(port) else host) if isinstance(host, str) and host else None


def unusable_record(key: ConsumerKey, node: ZkNode, doc: object, topic: str | None, reason: str) -> OffsetRecord:
    """A node's record its spout cannot use (storm-kafka's, JStorm's): `malformed` says why; the stored number is
    still shown (and rewritten by reset) even though the spout does not use it."""
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


def offset_problem(doc: dict) -> str | None:
    """Why `(Long) json.get("offset")` takes no offset from a record (storm-kafka's PartitionManager, JStorm's
    PartitionConsumer), or None."""
    offset = doc.get("offset")
    if offset is None:
        return "record has no offset"
    if not _is_int(offset):
        return f"offset is {json.dumps(offset)[:40]}, not an integer"
    return None


def _inconsistencies(doc: dict, node: ZkNode, utf8: bool) -> tuple[str, ...]:
    """What a usable storm-kafka record says that is not as Storm writes it, and that Storm does not read."""
    named = None if isinstance(doc["topology"].get("name"), str) else "topology.name is not a string"
    return field_inconsistencies(doc, utf8, f"partition_{node.node_partition}", node.node_partition, named)


def field_inconsistencies(
    doc: dict, utf8: bool, node_name: str, node_partition: int, topology: str | None
) -> tuple[str, ...]:
    """What a usable record (storm-kafka's, JStorm's) says that its spout would not write, in fields it does not read:
    its partition against the node's (`node_name`, `node_partition`), its topic, `topology` (what is wrong with the
    record's topology, None: nothing), its broker, and bytes that are not UTF-8."""
    found = []
    partition, topic = doc.get("partition"), doc.get("topic")
    if "partition" not in doc:
        found.append("no partition field")
    elif not _is_int(partition):
        found.append(f"partition is {json.dumps(partition)[:40]}, not an integer")
    elif partition != node_partition:
        found.append(f"partition field says {partition}, the node is {node_name}")
    if "topic" not in doc:
        found.append("no topic field")
    elif not isinstance(topic, str) or not topic:
        found.append(f"topic is {json.dumps(topic)[:40]}, not a topic name")
    if topology is not None:
        found.append(topology)
    broker = doc.get("broker")
    if broker is not None and not (
        isinstance(broker, dict)
        and _is_str_or_none(broker.get("host"))
        and (broker.get("port") is None or _is_int(broker.get("port")))
    ):
        found.append("broker is not an object with a string host and integer port")
    if not utf8:
        found.append("node data is not valid UTF-8 (Storm reads the bad bytes as U+FFFD)")
    return tuple(found)


def _java_long(value: int | float) -> int:
    """Number.longValue(): a double is truncated toward zero and saturates at the long range."""
    if isinstance(value, int):
        return value
    if value != value:  # NaN
        return 0
    if value in (float("inf"), float("-inf")):
        return _LONG_MAX if value > 0 else _LONG_MIN
    return max(_LONG_MIN, min(_LONG_MAX, int(value)))
